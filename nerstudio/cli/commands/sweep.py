"""``nerstudio sweep``: train a learner at every point of a grid of settings: the dev F table and plot."""

from __future__ import annotations

import argparse
import json
import sys

from ...learners import RERANKERS
from ..common import Progress, _executor
from ..options import add_executor_option


def add_parser(sub, parents) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "sweep",
        help="train a learner at every point of a grid of settings: dev F table and plot",
        description="Train ALGO once per point of GRID (every combination of the values) and "
        "score it on DEV; write DIR/sweep.md (the table), sweep.json and sweep.png "
        "(dev F against each setting). A reranker sweeps N-best files (.npz), a tagger "
        "(maxent, perceptron-tagger) corpora.",
    )
    p.add_argument(
        "--algo",
        required=True,
        metavar="ALGO",
        help=f"a reranker ({', '.join(RERANKERS)}) or a tagger (maxent, perceptron-tagger)",
    )
    p.add_argument(
        "--train",
        required=True,
        metavar="TRAIN",
        help="training N-best file (rerankers) or corpus (taggers)",
    )
    p.add_argument("--dev", required=True, metavar="DEV", help="development N-best file or corpus")
    p.add_argument(
        "--grid",
        required=True,
        metavar="GRID",
        help="settings and their values, e.g. 'rounds=1e4,1e5 epsilon=0.001,0.0025' (the learner's "
        "own setting names; rerankers also min_sentences)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting kept fixed at every point (repeatable)",
    )
    p.add_argument("--out", required=True, metavar="DIR")
    add_executor_option(p)
    p.add_argument(
        "--workers", type=int, default=None, help="local processes (default: one per core)"
    )
    p.add_argument("--encoding", default=None, help="text encoding of the corpora")
    p.add_argument("--json", action="store_true", help="print sweep.json to stdout")
    return p


def run(args) -> int:
    from ...experiments.sweep import parse_settings, run_sweep, sweep_markdown

    grid = parse_settings(args.algo, args.grid)
    fixed = {k: v[0] for k, v in parse_settings(args.algo, " ".join(args.set), single=True).items()}
    bar = Progress("sweep")
    report = run_sweep(
        args.algo,
        args.train,
        args.dev,
        grid,
        args.out,
        fixed,
        executor=_executor(args),
        workers=args.workers,
        encoding=args.encoding,
        progress=lambda p: bar.message(p.message) if p.final or p.notice else None,
    )
    print(json.dumps(report, indent=2) if args.json else sweep_markdown(report))
    print(
        f"wrote {args.out}/sweep.md, sweep.json, sweep.png ({report['seconds_total']:.0f}s)",
        file=sys.stderr,
    )
    return 0
