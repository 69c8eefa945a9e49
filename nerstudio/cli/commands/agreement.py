"""``nerstudio agreement``: agreement between two annotations of the same text: span F and Cohen's kappa."""

from __future__ import annotations

import argparse
import json

from ...errors import SettingsError


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
    p = sub.add_parser(
        "agreement",
        parents=[common],
        help="agreement between two annotations of the same text",
        description="Span precision, recall and F1 of B against A (exact match), Cohen's kappa on "
        "the tokens' IOB2 tags, both per type, and the sentences that differ. The files "
        "must hold the same tokens: the first that differs is an error naming both lines.",
    )
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of tables")
    p.add_argument(
        "--list",
        type=int,
        default=20,
        metavar="K",
        help="differing sentences listed (default 20; 0: all)",
    )
    return p


def run(args) -> int:
    from ...agreement import agreement
    from ...corpus.formats import Reader

    if args.list < 0:
        raise SettingsError("--list must be 0 (all) or more")
    a = Reader(args.a, None, None, args.encoding, args.strict)
    b = Reader(args.b, None, None, args.encoding, args.strict)
    result = agreement(a.sentences(), b.sentences(), a.path, b.path)
    if args.json:
        out = result.as_dict(args.list)
        out.update({"file_a": a.path, "file_b": b.path})
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(result.table(args.list))
    return 0
