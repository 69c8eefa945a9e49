"""``nerstudio adjudicate``: two or more annotators' files of one text merged into one, for
scripts — agreements accepted, disagreements decided by a policy (``--majority``, ``--prefer``),
the merged corpus written in any writable format and the report printed (see
:mod:`nerstudio.adjudication`; the application walks the disagreements one by one instead).
"""

from __future__ import annotations

import argparse
import os
import sys
from string import ascii_uppercase

from ...errors import SettingsError
from ..common import _read
from ..options import add_read_options


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
    p = sub.add_parser(
        "adjudicate",
        parents=[common],
        help="merge two or more annotations of the same text",
        description="Merge annotators' files of the same tokens (INCEpTION's curation): entities "
        "all annotators agree on are kept; each disagreement (overlapping entities that "
        "differ) is decided by the policy; what no policy decides gets no entity and is "
        "listed. Prints the agreement before and the decisions. The files must hold the "
        "same tokens: the first that differs is an error naming both lines.",
    )
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="two or more annotations (A, B, C … in this order)"
    )
    p.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="OUTPUT",
        help="merged corpus to write; its extension names the format as for convert, else A's",
    )
    p.add_argument(
        "--majority",
        action="store_true",
        help="take the version more than half the annotators hold",
    )
    p.add_argument(
        "--prefer",
        metavar="WHO",
        help="take this annotator's version (A, B, … or 1, 2, … or a file name); after --majority "
        "when both are given",
    )
    p.add_argument("--report", metavar="JSON", help="also write the report as JSON")
    p.add_argument(
        "--list",
        type=int,
        default=20,
        metavar="K",
        help="disagreements listed (default 20; 0: all)",
    )
    add_read_options(p)
    return p


def annotator(which: str, paths: list[str]) -> int:
    """The annotator ``--prefer`` names: a letter (A, B, …), a position (1, 2, …) or a file."""
    w = which.strip()
    if len(w) == 1 and w.upper() in ascii_uppercase[: len(paths)]:
        return ascii_uppercase.index(w.upper())
    if w.isdigit() and 1 <= int(w) <= len(paths):
        return int(w) - 1
    for i, p in enumerate(paths):
        if w in (p, os.path.basename(p), os.path.splitext(os.path.basename(p))[0]):
            return i
    raise SettingsError(
        f"--prefer: no annotator {which} (give A–{ascii_uppercase[len(paths) - 1]}, "
        f"1–{len(paths)} or a file name)"
    )


def run(args) -> int:
    from ...adjudication import Adjudication, write_report
    from ...corpus.detect import format_for_output
    from ...corpus.foreign import writable
    from ...corpus.writing import Losses, write_corpus

    if len(args.files) > len(ascii_uppercase):
        raise SettingsError(f"at most {len(ascii_uppercase)} files")
    prefer = annotator(args.prefer, args.files) if args.prefer else None
    if prefer is None and not args.majority:
        raise SettingsError(
            "give a policy for the disagreements: --majority, --prefer A (or both: the majority, "
            "else A); `nerstudio gui` walks them one by one"
        )
    corpora = [_read(p, args) for p in args.files]
    names = list(ascii_uppercase[: len(corpora)])
    adj = Adjudication([c.sentences for c in corpora], names, args.files)
    adj.resolve(majority=args.majority, prefer=prefer)
    base = corpora[0]
    for s, spans in zip(base.sentences, adj.merged()):
        s.spans = spans
    fmt = format_for_output(args.out, base.format) or base.format
    if not writable(fmt):
        raise SettingsError(
            f"{args.out}: nerstudio does not write {fmt}; give a name ending in .jsonl, .conll, .tsv …"
        )
    losses = Losses()
    write_corpus(base, args.out, fmt, losses=losses)
    rep = adj.report()
    print("\n".join(f"{n} = {p}" for n, p in zip(names, args.files)))
    print(rep.text(args.list))
    if args.report:
        write_report(args.report, rep, names, args.files, args.out)
    print(
        f"wrote {args.out} ({losses.target or fmt}): {rep.entities} entities, "
        f"{rep.counts['undecided']} disagreement(s) undecided",
        file=sys.stderr,
    )
    for line in losses.messages():
        print(f"note: {args.out}: {line}", file=sys.stderr)
    return 0
