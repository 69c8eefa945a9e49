"""Max-ent tagger settings on dev and test, one model per point, one after the other.

Why beside ``nerstudio sweep``: the sweep reports dev F only (it is what chooses) and runs
points in parallel; closing the baseline's gap honestly means reporting every point's test F
too, measured once and never used for a choice, on a machine whose cores are shared. So this
tool trains each point in turn and writes dev and test P/R/F, the training seconds and the
number of parameters, marking the point the dev F picks.

    python tools/tagger_grid.py --train eng.train --dev eng.testa --test eng.testb --out DIR \
        --point 'features=conll l2=1' --point 'features=conll l2=3 cutoff=2' ...

A point is space-separated ``name=value`` settings of :class:`nerstudio.tagging.maxent.MaxEntTagger`
(``features``, ``l2``, ``cutoff``, ``max_iter``, ``cutoff_on``, ``alphabet``); the others keep their defaults
(task ``typed``). Points already in DIR/grid.json are not trained again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from nerstudio.corpus.formats import read_corpus
from nerstudio.evaluation import evaluate_spans
from nerstudio.tagging.maxent import MaxEntTagger

TYPES = {
    "features": str,
    "cutoff_on": str,
    "l2": float,
    "cutoff": int,
    "max_iter": int,
    "task": str,
    "alphabet": str,
}


def parse_point(text: str) -> dict:
    point = {}
    for item in text.split():
        name, eq, value = item.partition("=")
        if not eq or name not in TYPES:
            raise SystemExit(
                f"--point {text!r}: {item!r} is not NAME=VALUE with NAME in {', '.join(TYPES)}"
            )
        point[name] = TYPES[name](value)
    return point


def score(tagger: MaxEntTagger, corpus) -> dict:
    pred = tagger.nbest(corpus.sentences, n=1, beam=20).top()  # as the experiment: its 20-best beam
    ev = evaluate_spans([s.spans for s in corpus.sentences], pred).overall
    return {"precision": ev.precision, "recall": ev.recall, "f1": ev.f1}


def run_point(point: dict, train, dev, test) -> dict:
    t = time.perf_counter()
    tagger = MaxEntTagger(**{"task": "typed", "features": "conll", **point}).fit(train.sentences)
    seconds = time.perf_counter() - t
    return {
        "settings": point,
        "dev": score(tagger, dev),
        "test": score(tagger, test),
        "train_seconds": seconds,
        "parameters": int(tagger.mask_.sum()),
        "iterations": tagger.n_iter_,
        "stop": tagger.stop_reason_,
    }


def markdown(rows: list[dict]) -> str:
    best = max(range(len(rows)), key=lambda k: rows[k]["dev"]["f1"]) if rows else -1
    lines = [
        "| settings | dev F | test F | parameters | iterations | train s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for k, r in enumerate(rows):
        mark = " **(dev choice)**" if k == best else ""
        lines.append(
            f"| {' '.join(f'{n}={v}' for n, v in r['settings'].items())}{mark} | {r['dev']['f1']:.2f} | "
            f"{r['test']['f1']:.2f} | {r['parameters']:,} | {r['iterations']} | {r['train_seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for k in ("train", "dev", "test", "out"):
        ap.add_argument(f"--{k}", required=True)
    ap.add_argument("--point", action="append", required=True, help="NAME=VALUE ... (repeatable)")
    args = ap.parse_args(argv)
    points = [parse_point(p) for p in args.point]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "grid.json")
    rows = json.load(open(path, encoding="utf-8"))["points"] if os.path.exists(path) else []
    train, dev, test = (read_corpus(getattr(args, k)) for k in ("train", "dev", "test"))
    for point in points:
        if any(r["settings"] == point for r in rows):
            continue
        row = run_point(point, train, dev, test)
        rows.append(row)
        print(
            f"{point}: dev F {row['dev']['f1']:.2f}, test F {row['test']['f1']:.2f} "
            f"({row['train_seconds']:.0f}s)",
            file=sys.stderr,
            flush=True,
        )
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(
                {
                    "train": os.path.abspath(args.train),
                    "dev": os.path.abspath(args.dev),
                    "test": os.path.abspath(args.test),
                    "points": rows,
                },
                f,
                indent=2,
            )
        os.replace(path + ".tmp", path)
    md = markdown(rows)
    with open(os.path.join(args.out, "grid.md"), "w", encoding="utf-8") as f:
        f.write(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
