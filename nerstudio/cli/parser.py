"""The command line's grammar: the top-level options and one subparser per command.

Each command declares its own options in its module (:mod:`nerstudio.cli.commands`); the
options several commands share are in :mod:`nerstudio.cli.options`. The generated CLI reference
(docs/reference/cli.md) and ``--help`` read this parser.
"""

from __future__ import annotations

import argparse

from .. import __version__
from . import commands
from .options import INTERNAL_ERROR, USER_ERROR, ArgumentParser, parents  # noqa: F401


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="nerstudio",
        description="Named-entity annotation and N-best reranking workbench (Collins 2002).",
    )
    parser.add_argument("--version", action="version", version=f"nerstudio {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    shared = parents()
    for name in commands.NAMES:
        commands.module(name).add_parser(sub, shared)
    return parser
