"""``nerstudio jackknife``: k-fold N-best lists for a training corpus (each fold decoded by a tagger that did not see it)."""

from __future__ import annotations

import argparse
import sys

from ..common import Progress, _executor, _read, _summary
from ..options import add_executor_option, tagger_params


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
    tagger = parents.tagger
    p = sub.add_parser(
        "jackknife", parents=[common, tagger], help="K-fold N-best lists for a training corpus"
    )
    p.add_argument("train", metavar="TRAIN")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--n", type=int, default=20, help="candidates per sentence")
    p.add_argument(
        "--out", required=True, metavar="NBEST", help="jackknifed N-best file for TRAIN (.npz)"
    )
    p.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    add_executor_option(p)
    p.add_argument(
        "--model-out", metavar="MODEL", help="also train on all of TRAIN and save that model"
    )
    p.add_argument(
        "--decode",
        nargs=2,
        action="append",
        metavar=("CORPUS", "NBEST"),
        default=[],
        help="with the model trained on all of TRAIN, decode CORPUS into NBEST (repeatable)",
    )
    return p


def run(args) -> int:
    from ...runtime.pipeline import jackknife

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
        tagger_params=tagger_params(args),
        workers=args.workers,
        progress=lambda p: bar.message(p.message) if p.final or p.notice else None,
        full=full,
        decode={str(k): c for k, (_, _, c) in enumerate(decode)},
        executor=_executor(args),
    )
    res.nbest.save(args.out)
    print(f"wrote {args.out} ({args.folds} folds, {res.seconds:.1f}s)", file=sys.stderr)
    print(_summary(train.sentences, res.nbest, f"{args.train} (jackknifed)"))
    if args.model_out and res.model is not None:  # full=True trains it
        res.model.save(args.model_out)
        print(f"wrote {args.model_out}", file=sys.stderr)
    decoded = res.decoded or {}
    for k, (src, dst, corpus) in enumerate(decode):
        nb = decoded[str(k)]
        nb.save(dst)
        print(f"wrote {dst}", file=sys.stderr)
        print(_summary(corpus.sentences, nb, src))
    return 0
