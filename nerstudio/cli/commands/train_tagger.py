"""``nerstudio train-tagger``: train the maximum-entropy tagger or the structured perceptron tagger."""

from __future__ import annotations

import argparse
import sys

from ... import choices
from ...errors import SettingsError
from ..common import Progress, _read, _summary
from ..options import tagger_params


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
    tagger = parents.tagger
    p = sub.add_parser(
        "train-tagger",
        parents=[common, tagger],
        help="train the maximum-entropy tagger or the structured perceptron tagger",
    )
    p.add_argument("train", metavar="TRAIN")
    p.add_argument(
        "--model",
        choices=("maxent", "perceptron"),
        default="maxent",
        help="maxent: Collins 2002's tagger (L-BFGS or GIS); perceptron: Collins 2002a / Kazama & "
        "Torisawa's structured perceptron on document sequences",
    )
    g = p.add_argument_group("perceptron tagger")
    g.add_argument(
        "--variant",
        choices=choices.VARIANTS,
        default="margin",
    )
    g.add_argument("--C", dest="C", type=float, default=None, help="margin of the margin variant")
    g.add_argument(
        "--bpm", type=int, default=0, help="BPM initialisation: number of shuffled single passes"
    )
    g.add_argument(
        "--gazetteer",
        choices=("none", "train", "lists", "train+lists"),
        default="none",
        help="gazetteer features: the training data's entities, the bundled lists, or both",
    )
    g.add_argument(
        "--sentences", action="store_true", help="sentences, not documents, as sequences"
    )
    p.add_argument("--out", required=True, metavar="MODEL", help="model file to write (.npz)")
    p.add_argument(
        "--dev", metavar="DEV", help="development corpus: F reported during and after training"
    )
    p.add_argument(
        "--dev-every",
        type=int,
        default=25,
        help="evaluate on DEV every K iterations of lbfgs or gis (0: only at the end; adagrad "
        "evaluates after every epoch)",
    )
    return p


def _train_perceptron_tagger(args) -> int:
    import time as _t

    from ...tagging.perceptron import PerceptronTagger

    if args.features is not None and args.features.split("+")[0] != "kt":
        raise SettingsError(
            "the perceptron tagger uses the kt feature set (K&T Table 1), with +rich, +clusters, +biglex"
        )
    t0 = _t.perf_counter()
    train = _read(args.train, args)
    dev = _read(args.dev, args) if args.dev else None
    params = {
        "task": args.task,
        "features": args.features or "kt",
        "variant": args.variant,
        "bpm": args.bpm,
        "documents": not args.sentences,
        "gazetteer": None if args.gazetteer == "none" else args.gazetteer,
        "alphabet": args.alphabet,
    }
    for k in ("C", "epochs", "cutoff"):
        if getattr(args, k) is not None:
            params[k] = getattr(args, k)
    tagger = PerceptronTagger(**params)
    bar = Progress("train-tagger", tagger.epochs)

    def cb(st):
        note = f"{st.phase} pass {st.epoch}: word error {100 * st.word_error:.2f}%"
        if st.dev_f1 is not None:
            note += f", dev F {st.dev_f1:.2f}"
        if st.phase == "bpm":
            bar.message(note)
        else:
            bar.update(st.epoch, note=note)

    tagger.fit(train, dev, callback=cb)
    tagger.save(args.out)
    line = (
        f"wrote {args.out}: {tagger.n_weights_} weights, {tagger.epochs_run_} epochs"
        + (f" (best dev epoch {tagger.best_epoch_})" if tagger.best_epoch_ else "")
        + f", {_t.perf_counter() - t0:.1f}s"
    )
    print(line, file=sys.stderr)
    if dev:
        ev = tagger.evaluate(dev)
        print(f"dev {args.dev}: F {ev['f1']:.2f} (P {ev['precision']:.2f}, R {ev['recall']:.2f})")
    return 0


def run(args) -> int:
    if args.model == "perceptron":
        return _train_perceptron_tagger(args)
    import time as _t

    from ...tagging.maxent import MaxEntTagger

    if args.C is not None:
        raise SettingsError("--C belongs to the perceptron tagger (--model perceptron)")
    params = tagger_params(args)
    t0 = _t.perf_counter()
    train = _read(args.train, args)
    dev = _read(args.dev, args) if args.dev else None
    tagger = MaxEntTagger(dev_every=args.dev_every if dev else 0, **params)
    online = tagger.optimizer == "adagrad"
    steps = tagger.epochs if online else tagger.max_iter
    bar = Progress("train-tagger", steps)

    def cb(st):
        if st.message:
            bar.message(st.message)
        else:
            note = f"objective {st.objective:.1f}" + (
                f", dev F {st.dev_f1:.2f}" if st.dev_f1 is not None else ""
            )
            bar.update(st.iteration, note=note)

    tagger.fit(train.sentences, dev=dev.sentences if dev else None, callback=cb)
    bar.update(steps, note="done")
    tagger.save(args.out)
    done = (
        f"{tagger.n_iter_} epochs ({tagger.stop_reason_})"
        if online
        else f"{tagger.n_iter_} iterations"
    )
    line = (
        f"wrote {args.out}: {tagger.n_static_} predicates, {int(tagger.mask_.sum())} parameters, "
        f"{done}, {_t.perf_counter() - t0:.1f}s"
    )
    print(line, file=sys.stderr)
    if dev:
        nb = tagger.nbest(dev.sentences, n=20)
        print(_summary(dev.sentences, nb, f"dev {args.dev}"))
    return 0
