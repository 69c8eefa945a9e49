"""``nerstudio convert``: convert a corpus between formats and tag schemes."""

from __future__ import annotations

import argparse
import sys

from ..options import add_read_options, format_option, scheme_option


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
    p = sub.add_parser(
        "convert",
        parents=[common],
        help="convert a corpus between formats and tag schemes",
        description="Convert IN to OUT. Written atomically; with the same format and scheme the "
        "output is byte-identical to the input.",
    )
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    add_read_options(p)
    format_option(
        p, "--to", dest="to_format", output=True, help="output format (default: the input's)"
    )
    scheme_option(p, "--scheme", help="output tag scheme (default: the input's)")
    return p


def run(args) -> int:
    from ...corpus.convert import convert_file
    from ...corpus.formats import Losses

    losses = Losses()
    reader = convert_file(
        args.input,
        args.output,
        from_format=args.format,
        to_format=args.to_format,
        scheme=args.scheme,
        from_scheme=args.in_scheme,
        encoding=args.encoding,
        strict=args.strict,
        losses=losses,
    )
    to = losses.target or reader.format
    msg = f"wrote {args.output} ({to}, {args.scheme or reader.scheme}) from {args.input} ({reader.format}, {reader.scheme})"
    print(msg, file=sys.stderr)
    _report_repairs(reader)
    for line in losses.messages():
        print(f"note: {args.output}: {line}", file=sys.stderr)
    from ...app.review_convert import carry

    kept = carry(args.input, args.output, reader.format, to)  # review states, notes, flags
    if kept:
        print(f"note: {kept}", file=sys.stderr)
    return 0


def _report_repairs(reader) -> None:
    for line in reader.notes:  # what another tool's format held that nerstudio did not read
        print(f"note: {reader.path}: {line}", file=sys.stderr)
    if reader.repairs:
        print(
            f"note: {reader.path}: {reader.repairs} invalid tag transition(s) read the conlleval way "
            f"(use --strict to reject them)",
            file=sys.stderr,
        )
    if reader.mixed_newlines:
        print(
            f"note: {reader.path}: mixed line endings; output uses {reader.newline!r}",
            file=sys.stderr,
        )
