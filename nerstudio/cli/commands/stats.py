"""``nerstudio stats``: documents, sentences, tokens and entities of a corpus."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from ..options import add_read_options


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
    p = sub.add_parser(
        "stats", parents=[common], help="documents, sentences, tokens and entities of a corpus"
    )
    p.add_argument("file", metavar="FILE")
    add_read_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON object")
    return p


def corpus_stats(reader) -> dict:
    docs = sents = toks = 0
    longest = 0
    in_doc = False
    ents: Counter = Counter()
    for kind, obj in reader.events():
        if kind == "docstart":
            in_doc = False
        elif kind == "sentence":
            if not in_doc:
                docs += 1
                in_doc = True
            sents += 1
            toks += len(obj.words)
            longest = max(longest, len(obj.words))
            ents.update(sp.label for sp in obj.spans)
    out = {
        "file": reader.path,
        "format": reader.format,
        "scheme": reader.scheme,
        "encoding": reader.encoding,
        "documents": docs,
        "sentences": sents,
        "tokens": toks,
        "entities": sum(ents.values()),
        "entities_by_type": dict(sorted(ents.items())),
        "longest_sentence": longest,
        "repairs": reader.repairs,
    }
    if reader.notes:  # what another tool's format held that was not read (see corpus.foreign)
        out["notes"] = list(reader.notes)
    return out


def run(args) -> int:
    from ...corpus.formats import Reader

    reader = Reader(args.file, args.format, args.in_scheme, args.encoding, args.strict)
    st = corpus_stats(reader)
    for line in reader.notes:
        print(f"note: {reader.path}: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    print(f"{st['file']}: {st['format']}, {st['scheme'].upper()}, {st['encoding']}")
    for key in ("documents", "sentences", "tokens", "entities"):
        print(f"  {key:<12}{st[key]:>10,d}")
    for lab, n in st["entities_by_type"].items():
        print(f"    {lab or '(untyped)':<10}{n:>10,d}")
    print(f"  longest sentence: {st['longest_sentence']} tokens")
    if st["repairs"]:
        print(f"  invalid transitions repaired: {st['repairs']}")
    return 0
