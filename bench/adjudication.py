#!/usr/bin/env python3
"""Adjudication on a large corpus: is every key of the walk quick?

    python bench/adjudication.py [--corpus ../shared/data/conll2003/eng.train]

A second annotator's copy of the corpus is made in memory (every 9th entity dropped, every 7th
retyped), then timed: aligning the two into regions (the application does it in a worker),
the agreement before (``nerstudio agreement``'s pass: the baseline, in the same run), the
summary the adjudication window redraws after each key, and the full report written with the
merged file. Without a corpus (or when it is absent) the bundled demo train set is used.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from nerstudio.adjudication import Adjudication
from nerstudio.agreement import agreement
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.demo import DEMO_DIR

DEFAULT = os.path.join(
    os.path.dirname(__file__), "..", "..", "shared", "data", "conll2003", "eng.train"
)


def second_annotator(sentences):
    other = {"PER": "ORG", "ORG": "LOC", "LOC": "MISC", "MISC": "PER"}
    out, k = [], 0
    for s in sentences:
        keep = []
        for sp in s.spans:
            k += 1
            if k % 9:
                keep.append(
                    Span(sp.start, sp.end, other.get(sp.label, sp.label)) if k % 7 == 0 else sp
                )
        out.append(s.copy(spans=keep))
    return out


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--corpus", default=DEFAULT if os.path.exists(DEFAULT) else str(DEMO_DIR / "train.conll")
    )
    args = ap.parse_args()
    a = read_corpus(args.corpus).sentences
    b = second_annotator(a)
    print(f"{args.corpus}: {len(a):,} sentences, {sum(len(s) for s in a):,} tokens")
    _, base = timed(lambda: agreement(a, b))
    print(f"baseline: agreement of the two (nerstudio agreement's pass)  {base:7.3f} s")
    adj, t = timed(lambda: Adjudication([a, b], ["A", "B"]))
    print(
        f"regions: {len(adj.regions):,} ({len(adj.disagreements):,} disagreements)        {t:7.3f} s"
    )
    _, t = timed(adj.agreement_before)
    print(f"agreement before (once, in the worker)                   {t:7.3f} s")
    for i in adj.disagreements[:100]:
        adj.take(i, 0)
    keys = []
    for i in adj.disagreements[100:150]:  # one decision and the redraw's summary, as a key does
        _, t = timed(lambda i=i: (adj.take(i, 1), adj.summary()))
        keys.append(t)
    keys.sort()
    print(
        f"one key of the walk (decide + summary), median of 50     {keys[len(keys) // 2] * 1000:7.1f} ms"
        f" (max {keys[-1] * 1000:.1f} ms)"
    )
    _, t = timed(adj.report)
    print(f"full report (written with the merged file)               {t:7.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
