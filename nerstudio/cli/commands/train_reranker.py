"""``nerstudio train-reranker``: train a reranker (boosting or a perceptron) on N-best lists."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from ...errors import FormatError
from ...evaluation import relative_error_reduction
from ...learners import RERANKERS
from ..common import Progress
from ..options import check_learner_options, learner_params


def add_parser(sub, parents) -> argparse.ArgumentParser:
    learn = parents.learn
    p = sub.add_parser(
        "train-reranker",
        parents=[learn],
        help="train a reranker on N-best lists",
        description="Global features from TRAIN's candidates, then boosting or a perceptron; "
        "the dev list picks the best round/epoch and (perceptrons) beta.",
    )
    p.add_argument(
        "--train", required=True, metavar="NBEST", help="(jackknifed) training N-best file"
    )
    p.add_argument("--dev", metavar="NBEST", help="development N-best file")
    p.add_argument(
        "--algo",
        required=True,
        choices=tuple(RERANKERS),
        help="; ".join(f"{name}: {row.title}" for name, row in RERANKERS.items()),
    )
    p.add_argument("--out", required=True, metavar="MODEL", help="reranker model to write (.npz)")
    return p


def _stats_printer(label: str):
    bar = Progress(label)

    def cb(st):
        parts = [f"{st.unit} {st.step}"]
        if st.loss is not None:
            parts.append(f"loss {st.loss:.1f}")
        if st.mistakes is not None:
            parts.append(f"{st.mistakes} mistakes")
        if st.dev_f1 is not None:
            parts.append(
                f"dev P/R/F {st.dev_precision:.2f}/{st.dev_recall:.2f}/{st.dev_f1:.2f}"
                + (" *" if st.best else "")
            )
        parts.append(f"{st.seconds:.1f}s")
        bar.message(", ".join(parts))

    return cb


def run(args) -> int:
    import time as _t

    from ...nbest import NBestList
    from ...rerank.model import train_reranker

    check_learner_options(args, [args.algo])
    t0 = _t.perf_counter()
    train = NBestList.load(args.train)
    dev = NBestList.load(args.dev) if args.dev else None
    if train.gold is None:
        raise FormatError(args.train, None, "the training N-best list has no gold entities")
    if dev is not None and dev.gold is None:
        raise FormatError(args.dev, None, "the development N-best list has no gold entities")
    bar = Progress("features")
    model = train_reranker(
        train,
        dev,
        args.algo,
        learner_params(args, args.algo),
        {"min_sentences": args.min_sentences},
        callback=_stats_printer(args.algo),
        progress=lambda stage, d, n: bar.update(d, n, stage),
    )
    model.save(args.out)
    lr = model.learner
    best = (
        f", best {lr.unit} {lr.best_step_}" if getattr(lr, "best_step_", None) is not None else ""
    )
    print(
        f"wrote {args.out}: {args.algo}, {model.features.n_features} features{best}, "
        f"{_t.perf_counter() - t0:.1f}s",
        file=sys.stderr,
    )
    if dev is not None:
        d = model.data(dev)
        base = d.prf(np.zeros(len(d), dtype=np.int64))
        new = d.prf(model.predict(d))
        print(
            f"dev {args.dev}: baseline F {base[2]:.2f}, reranked F {new[2]:.2f} "
            f"(P {new[0]:.2f}, R {new[1]:.2f}; relative error reduction "
            f"{relative_error_reduction(base[2], new[2]):.1f}%)"
        )
    return 0
