#!/usr/bin/env python3
"""Reading a brat document with many entities: does the cost grow with entities × sentences?

    python bench/brat_entities.py [--words 60000] [--every 3]

Writes (in /tmp, never in the repository) a ``.txt`` of ``--words`` words in sentences of twelve
and a ``.ann`` with an entity on every ``--every``-th word (20,000 entities by default), then
times, in the same run:

* ``read, no entities``: the same text with an empty ``.ann`` (segmentation only: the baseline);
* ``read, entities``: the document with its entities (nerstudio.corpus.read_corpus);
* ``choose (all pairs)`` and ``merge (all pairs)``: the two steps as they were before issue 22
  (every entity compared with every kept one; every sentence with every entity), rebuilt here,
  against the library's ``brat._choose`` and ``segment.split``.

Issue 22 measured 68 s against 4.5 s for the text alone; on this branch's machine the read was
33.7 s before and 2.6 s after (the text alone: 1.4 s).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def make(folder: str, words: int, every: int) -> tuple[str, str]:
    rng = random.Random(1)
    parts, ann, pos, n = [], [], 0, 0
    for i in range(words):
        w = rng.choice(["Alpha", "beta", "Gamma", "delta", "Epsilon", "zeta"])
        if i % every == 0:
            n += 1
            ann.append(f"T{n}\tPER {pos} {pos + len(w)}\t{w}")
        sep = ". " if i % 12 == 11 else " "
        parts.append(w + sep)
        pos += len(w) + len(sep)
    full, empty = os.path.join(folder, "many"), os.path.join(folder, "none")
    for stem, lines in ((full, ann), (empty, [])):
        with open(stem + ".txt", "w", encoding="utf-8") as f:
            f.write("".join(parts))
        with open(stem + ".ann", "w", encoding="utf-8") as f:
            f.write("".join(x + "\n" for x in lines))
    return full + ".ann", empty + ".ann"


def old_choose(ents):
    kept, aside = [], {"overlap": [], "discontinuous": []}
    for e in sorted(ents, key=lambda e: (-(e[1] - e[0]), e[0], e[3])):
        if e[5] and not e[6]:
            aside["discontinuous"].append(e)
        elif any(e[0] < k[1] and k[0] < e[1] for k in kept):
            aside["overlap"].append(e)
        else:
            kept.append(e)
    return sorted(kept), aside


def old_merge(sentences, ranges):
    joined = []
    for s in sentences:
        if joined and any(a < s[0][0] < e for a, e in ranges):
            joined[-1].extend(s)
        else:
            joined.append(list(s))
    return joined


def timed(label: str, fn):
    t = time.process_time()
    out = fn()
    print(f"{label:<28}{time.process_time() - t:8.2f} s CPU")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--words", type=int, default=60000)
    ap.add_argument("--every", type=int, default=3)
    args = ap.parse_args()
    from nerstudio.corpus import read_corpus, segment
    from nerstudio.corpus.foreign import brat

    with tempfile.TemporaryDirectory() as d:
        full, empty = make(d, args.words, args.every)
        timed("read, no entities", lambda: read_corpus(empty))
        c = timed("read, entities", lambda: read_corpus(full))
        print(
            f"  {sum(len(s.spans) for s in c.sentences):,} entities in {len(c.sentences):,} sentences"
        )
        text = open(full[:-4] + ".txt", encoding="utf-8").read()
        ents = brat._entities(open(full, encoding="utf-8").read().splitlines(), text, full)
        new = timed("choose (sorted neighbours)", lambda: brat._choose(ents))
        old = timed("choose (all pairs)", lambda: old_choose(ents))
        assert new == old
        sents = segment.split(text)
        ranges = [(a, b) for a, b, *_ in ents]
        timed("merge (all pairs)", lambda: old_merge(sents, ranges))
        timed("split with merge (sweep)", lambda: segment.split(text, merge=ranges))


if __name__ == "__main__":
    main()
