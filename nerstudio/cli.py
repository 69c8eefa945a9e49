"""The ``nerstudio`` command line.

Every command reports a user error as one line, ``nerstudio: error: FILE:LINE: message``, and
exits with status 1 (2 for bad usage); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections import Counter

from . import __version__
from .errors import NerstudioError


def _add_read_options(p: argparse.ArgumentParser, prefix: str = "", what: str = "input") -> None:
    dest = prefix.replace("-", "_")
    p.add_argument(f"--{prefix}format" if prefix else "--from", dest=f"{dest}format", metavar="FORMAT",
                   help=f"format of the {what} (conll2003, conll2002, columns, tsv, jsonl); detected if omitted")
    p.add_argument(f"--{prefix}scheme" if prefix else "--from-scheme", dest=f"{dest}in_scheme", metavar="SCHEME",
                   help=f"tag scheme of the {what} (iob1, iob2, bioes, bilou, scn); detected if omitted")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nerstudio",
        description="Named-entity annotation and N-best reranking workbench (Collins 2002).")
    parser.add_argument("--version", action="version", version=f"nerstudio {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--encoding", default=None,
                        help="text encoding of input files (default: UTF-8; e.g. latin-1)")
    common.add_argument("--strict", action="store_true",
                        help="reject invalid tag transitions instead of repairing them the conlleval way")
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    p = sub.add_parser("convert", parents=[common], help="convert a corpus between formats and tag schemes",
                       description="Convert IN to OUT. Written atomically; with the same format and scheme the "
                                   "output is byte-identical to the input.")
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    _add_read_options(p)
    p.add_argument("--to", dest="to_format", metavar="FORMAT", help="output format (default: the input's)")
    p.add_argument("--scheme", metavar="SCHEME", help="output tag scheme (default: the input's)")

    p = sub.add_parser("evaluate", parents=[common], help="score a prediction against gold (conlleval spans)",
                       description="Exact-span precision, recall and F1, overall and per type.")
    p.add_argument("gold", metavar="GOLD")
    p.add_argument("pred", metavar="PRED")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of a table")
    p.add_argument("--mode", choices=("conlleval", "strict"), default="conlleval",
                   help="conlleval: invalid transitions are repaired (= seqeval default); strict: they form "
                        "no entity (= seqeval strict mode for IOB2/BIOES)")
    p.add_argument("--gold-format", metavar="FORMAT")
    p.add_argument("--pred-format", metavar="FORMAT")
    p.add_argument("--gold-scheme", metavar="SCHEME")
    p.add_argument("--pred-scheme", metavar="SCHEME")

    p = sub.add_parser("stats", parents=[common], help="documents, sentences, tokens and entities of a corpus")
    p.add_argument("file", metavar="FILE")
    _add_read_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON object")

    p = sub.add_parser("gui", help="open the desktop application")
    p.add_argument("path", nargs="?", metavar="CORPUS", help="corpus to open (default: the bundled demo corpus)")
    p.add_argument("--screenshot", metavar="PNG", help="render the window to PNG after loading and exit")
    return parser


# --------------------------------------------------------------------------------------------


def cmd_convert(args) -> int:
    from .corpus.formats import convert_file
    reader = convert_file(args.input, args.output, from_format=args.format, to_format=args.to_format,
                          scheme=args.scheme, from_scheme=args.in_scheme, encoding=args.encoding,
                          strict=args.strict)
    to = args.to_format or reader.format
    msg = f"wrote {args.output} ({to}, {args.scheme or reader.scheme}) from {args.input} ({reader.format}, {reader.scheme})"
    print(msg, file=sys.stderr)
    _report_repairs(reader)
    return 0


def _report_repairs(reader) -> None:
    if reader.repairs:
        print(f"note: {reader.path}: {reader.repairs} invalid tag transition(s) read the conlleval way "
              f"(use --strict to reject them)", file=sys.stderr)
    if reader.mixed_newlines:
        print(f"note: {reader.path}: mixed line endings; output uses {reader.newline!r}", file=sys.stderr)


def cmd_evaluate(args) -> int:
    from .corpus.formats import Reader
    from .evaluation import evaluate_sentences
    inv = "drop" if args.mode == "strict" else "repair"
    gold = Reader(args.gold, args.gold_format, args.gold_scheme, args.encoding, args.strict, inv)
    pred = Reader(args.pred, args.pred_format, args.pred_scheme, args.encoding, args.strict, inv)
    ev = evaluate_sentences(gold.sentences(), pred.sentences(), gold.path, pred.path)
    if args.json:
        out = ev.as_dict()
        out.update({"gold_file": gold.path, "pred_file": pred.path, "mode": args.mode})
        print(json.dumps(out, indent=2))
    else:
        print(ev.table())
    return 0


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
    return {"file": reader.path, "format": reader.format, "scheme": reader.scheme, "encoding": reader.encoding,
            "documents": docs, "sentences": sents, "tokens": toks, "entities": sum(ents.values()),
            "entities_by_type": dict(sorted(ents.items())), "longest_sentence": longest,
            "repairs": reader.repairs}


def cmd_stats(args) -> int:
    from .corpus.formats import Reader
    reader = Reader(args.file, args.format, args.in_scheme, args.encoding, args.strict)
    st = corpus_stats(reader)
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


def cmd_gui(args) -> int:
    from .gui.app import run
    return run(args.path, screenshot=args.screenshot)


COMMANDS = {"convert": cmd_convert, "evaluate": cmd_evaluate, "stats": cmd_stats, "gui": cmd_gui}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    debug = bool(getattr(args, "debug", False)) or os.environ.get("NERSTUDIO_DEBUG") == "1"
    try:
        return COMMANDS[args.command](args) or 0
    except NerstudioError as exc:
        if debug:
            traceback.print_exc()
        print(f"nerstudio: error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # bad option values (unknown scheme or format names, ...)
        if debug:
            traceback.print_exc()
        print(f"nerstudio: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nerstudio: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        if debug:
            traceback.print_exc()
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"nerstudio: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a bug: say so in one line unless --debug
        if debug:
            raise
        print(f"nerstudio: internal error: {type(exc).__name__}: {exc} (run with --debug for details)",
              file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
