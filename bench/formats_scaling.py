#!/usr/bin/env python3
"""Reading WebAnno TSV and writing brat back: does the cost grow linearly with the entities?

    python bench/formats_scaling.py [--small 2000] [--large 20000]

Writes (in a temporary folder, never in the repository) a WebAnno TSV 3 file and a brat pair
with ``--small`` and ``--large`` entities (one on every third word, sentences of twelve words;
the ``.ann`` lists them last first, as an annotation tool may),
then times, for each size: reading the WebAnno file, reading the brat pair, and writing the brat
pair back after one entity was removed (the write-back that matches every old ``T`` line
against the document's entities). Linear code takes about ten times as long for ten times the
entities; before this script was added, 20,000 entities took 59-156 s to read from WebAnno and
68 s to write back as brat.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

WORDS = ["Alpha", "beta", "Gamma", "delta", "Epsilon", "zeta"]
LAYER = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"


def webanno(path: str, entities: int) -> None:
    """Sentences of twelve tokens; an entity on every third token, every other one two tokens
    long (``PER[n]`` on both), the rest one token (``PER``)."""
    lines = ["#FORMAT=WebAnno TSV 3.3", f"#T_SP={LAYER}|identifier|value", "", ""]
    pos, n, sent = 0, 0, 0
    while n < entities:
        sent += 1
        toks = [WORDS[i % len(WORDS)] for i in range(12)]
        cells = ["_"] * 12
        for i in range(0, 12, 3):
            if n == entities:
                break
            n += 1
            if n % 2:
                cells[i] = cells[i + 1] = f"PER[{n}]"
            else:
                cells[i] = "PER"
        lines.append("#Text=" + " ".join(toks))
        for i, (w, cell) in enumerate(zip(toks, cells)):
            lines.append(f"{sent}-{i + 1}\t{pos}-{pos + len(w)}\t{w}\t_\t{cell}\t")
            pos += len(w) + 1
        lines.append("")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def brat(stem: str, entities: int) -> None:
    parts, ann, pos, n, i = [], [], 0, 0, 0
    while n < entities:
        w = WORDS[i % len(WORDS)]
        if i % 3 == 0:
            n += 1
            ann.append(f"T{n}\tPER {pos} {pos + len(w)}\t{w}")
        sep = ". " if i % 12 == 11 else " "
        parts.append(w + sep)
        pos += len(w) + len(sep)
        i += 1
    with open(stem + ".txt", "w", encoding="utf-8") as f:
        f.write("".join(parts))
    with open(stem + ".ann", "w", encoding="utf-8") as f:
        f.write("".join(x + "\n" for x in reversed(ann)))  # last first, as tools may list them


def timed(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", type=int, default=2000)
    ap.add_argument("--large", type=int, default=20000)
    args = ap.parse_args()
    from nerstudio.corpus import read_corpus, write_corpus

    print(f"{'entities':>10}{'webanno read':>16}{'brat read':>14}{'brat write-back':>18}")
    with tempfile.TemporaryDirectory() as d:
        for n in (args.small, args.large):
            tsv = os.path.join(d, f"w{n}.tsv")
            webanno(tsv, n)
            t_web, c = timed(lambda: read_corpus(tsv, "webanno"))
            assert sum(len(s.spans) for s in c.sentences) == n, "the file holds every entity"
            stem = os.path.join(d, f"b{n}")
            brat(stem, n)
            t_read, b = timed(lambda: read_corpus(stem + ".ann"))
            s = next(s for s in b.sentences if s.spans)
            s.spans = s.spans[1:]  # one entity removed: the old lines are matched again
            t_write, _ = timed(lambda: write_corpus(b, stem + ".ann"))
            print(f"{n:>10,}{t_web:>14.2f} s{t_read:>12.2f} s{t_write:>16.2f} s")


if __name__ == "__main__":
    main()
