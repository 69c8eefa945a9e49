"""The tagger commands: ``train-tagger``, ``nbest``, ``tag`` and ``jackknife``."""

from __future__ import annotations

import os
import sys

from ..errors import SettingsError
from .common import Progress, _executor, _read, _summary


def _tagger_params(args) -> dict:
    features = args.features or "paper"
    if features == "kt":
        raise SettingsError("--features kt belongs to the perceptron tagger (--model perceptron)")
    if args.epochs is not None and args.optimizer != "adagrad":
        raise SettingsError(
            "--epochs counts the passes of --optimizer adagrad (lbfgs and gis: --max-iter)"
        )
    params = {
        "task": args.task,
        "features": features,
        "cutoff": 5 if args.cutoff is None else args.cutoff,
        "cutoff_on": args.cutoff_on,
        "l2": args.l2,
        "optimizer": args.optimizer,
        "max_iter": args.max_iter,
        "alphabet": args.alphabet,
    }
    if args.epochs is not None:
        params["epochs"] = args.epochs
    return params


def _load_tagger(path):
    from ..tagging import load_tagger

    return load_tagger(path)


def _train_perceptron_tagger(args) -> int:
    import time as _t

    from ..tagging.perceptron import PerceptronTagger

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


def cmd_train_tagger(args) -> int:
    if args.model == "perceptron":
        return _train_perceptron_tagger(args)
    import time as _t

    from ..tagging.maxent import MaxEntTagger

    if args.C is not None:
        raise SettingsError("--C belongs to the perceptron tagger (--model perceptron)")
    params = _tagger_params(args)
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


def cmd_nbest(args) -> int:
    from ..experiments.pipeline import sentence_ids

    tagger = _load_tagger(args.model)
    corpus = _read(args.input, args)
    if not hasattr(tagger, "static_scores"):  # the perceptron and joint taggers: exact k-best
        nb = tagger.candidate_lists(corpus, n=args.n, documents=args.documents)
        if not args.documents and not nb.ids:  # the joint tagger's split names no sentences
            nb.ids = sentence_ids(corpus)
        nb.meta["source"] = os.path.abspath(args.input)
        nb.save(args.out)
        print(f"wrote {args.out}", file=sys.stderr)
        if not args.documents:
            print(_summary(corpus.sentences, nb, args.input))
        return 0
    if args.documents:
        raise SettingsError("--documents needs a perceptron or joint tagger model")
    bar = Progress("nbest", len(corpus))
    nb = tagger.nbest(
        corpus.sentences,
        n=args.n,
        beam=args.beam,
        ids=sentence_ids(corpus),
        progress=lambda d, t: bar.update(d, t),
    )
    nb.meta["source"] = os.path.abspath(args.input)
    nb.save(args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    print(_summary(corpus.sentences, nb, args.input))
    return 0


def cmd_tag(args) -> int:
    from ..corpus.formats import write_corpus

    tagger = _load_tagger(args.model)
    corpus = _read(args.input, args)
    bar = Progress("tag", len(corpus))
    if not hasattr(tagger, "static_scores"):  # the perceptron tagger decodes its own sequences
        pred = corpus.with_spans(_typed_for(tagger.predict_spans(corpus)))
        write_corpus(pred, args.out)
        print(f"wrote {args.out} ({corpus.format}, {corpus.scheme})", file=sys.stderr)
        if any(s.spans for s in corpus.sentences):
            from ..evaluation import evaluate_sentences

            ev = evaluate_sentences(corpus.sentences, pred.sentences).overall
            print(
                f"{args.input}: {len(corpus)} sentences, F {ev.f1:.2f} (P {ev.precision:.2f}, "
                f"R {ev.recall:.2f})"
            )
        return 0
    nb = tagger.nbest(corpus.sentences, n=1, beam=args.beam, progress=lambda d, t: bar.update(d, t))
    pred = corpus.with_spans(nb.top())
    write_corpus(pred, args.out)
    print(f"wrote {args.out} ({corpus.format}, {corpus.scheme})", file=sys.stderr)
    print(_summary(corpus.sentences, nb, args.input))
    return 0


def _typed_for(spans):
    """Untyped (boundary-only) predictions get the placeholder type ENT so the file stays valid."""
    from ..experiments.collins import with_placeholder_type

    if any(sp.label for ss in spans for sp in ss):
        return spans
    return [with_placeholder_type(ss) for ss in spans]


def cmd_jackknife(args) -> int:
    from ..experiments.pipeline import jackknife

    train = _read(args.train, args)
    decode = [
        (src, dst, _read(src, args)) for src, dst in args.decode
    ]  # bad input fails before the work
    bar = Progress("jackknife")
    full = bool(args.model_out or decode)  # the model on all of TRAIN trains alongside the folds
    res = jackknife(
        train,
        folds=args.folds,
        n=args.n,
        tagger_params=_tagger_params(args),
        workers=args.workers,
        progress=lambda p: bar.message(p.message) if p.final or p.notice else None,
        full=full,
        decode={str(k): c for k, (_, _, c) in enumerate(decode)},
        executor=_executor(args),
    )
    res.nbest.meta["source"] = os.path.abspath(args.train)
    res.nbest.save(args.out)
    print(f"wrote {args.out} ({args.folds} folds, {res.seconds:.1f}s)", file=sys.stderr)
    print(_summary(train.sentences, res.nbest, f"{args.train} (jackknifed)"))
    if args.model_out:
        res.model.save(args.model_out)
        print(f"wrote {args.model_out}", file=sys.stderr)
    for k, (src, dst, corpus) in enumerate(decode):
        nb = res.decoded[str(k)]
        nb.meta["source"] = os.path.abspath(src)
        nb.save(dst)
        print(f"wrote {dst}", file=sys.stderr)
        print(_summary(corpus.sentences, nb, src))
    return 0
