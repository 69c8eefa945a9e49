#!/usr/bin/env python3
"""Benchmark: how fast does "What if" answer an edit on the demo model? (issue 24: ≤ 200 ms)

    python bench/what_if.py [--reps 20]

For a few dev sentences of the bundled demo and a few edits of each (a word's case, a word
changed, a token inserted, a token deleted, the whole sentence retyped in capitals), times
:func:`nerstudio.experiments.what_if.analyse` (beam search with the demo tagger, 20 candidates,
global features, the reranker's scores) and :func:`~nerstudio.experiments.what_if.compare` (each
candidate's score change explained). The baseline printed first is the same work on the
unedited sentence, measured in the same run. Prints median / p95 / max in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

EDITS = {
    "case of a word": lambda ws: [ws[0].lower()] + ws[1:],
    "a word changed": lambda ws: ws[:-2] + ["Estovia"] + ws[-1:],
    "a token inserted": lambda ws: ws[:1] + ["Northern"] + ws[1:],
    "a token deleted": lambda ws: ws[:-1],
    "all capitals": lambda ws: [w.upper() for w in ws],
}


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
    return f"median {statistics.median(xs):6.1f}  p95 {p95:6.1f}  max {xs[-1]:6.1f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    from nerstudio.demo import DEMO_MODEL_DIR
    from nerstudio.experiments.what_if import analyse, compare
    from nerstudio.nbest import NBestList
    from nerstudio.rerank.model import RerankerModel
    from nerstudio.tagging.maxent import MaxEntTagger

    tagger = MaxEntTagger.load(str(DEMO_MODEL_DIR / "tagger.npz"))
    model = RerankerModel.load(str(DEMO_MODEL_DIR / "reranker.npz"))
    dev = NBestList.load(str(DEMO_MODEL_DIR / "dev.nbest.npz"))
    sentences = [list(w) for w in dev.words if 8 <= len(w) <= 30][:5]
    analyse(tagger, model, sentences[0])  # first call: caches, compiled code
    times: dict[str, list[float]] = {"unedited (baseline)": []}
    for _ in range(args.reps):
        for ws in sentences:
            t0 = time.perf_counter()
            old = analyse(tagger, model, ws)
            times["unedited (baseline)"].append(1000 * (time.perf_counter() - t0))
            for name, edit in EDITS.items():
                t0 = time.perf_counter()
                new = analyse(tagger, model, edit(ws))
                compare(model, old, new)
                times.setdefault(name, []).append(1000 * (time.perf_counter() - t0))
    print(
        f"What if on the demo model: {len(sentences)} dev sentences of {min(map(len, sentences))}–"
        f"{max(map(len, sentences))} tokens, {args.reps} repetitions, 20 candidates"
    )
    for name, xs in times.items():
        print(f"  {name:22s} {stats(xs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
