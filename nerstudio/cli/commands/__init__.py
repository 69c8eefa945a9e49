"""The commands, one module each: its options (``add_parser``) beside what it does (``run``).

:data:`NAMES` is the registry: the commands in the order ``nerstudio --help`` lists them. A
command ``foo-bar`` lives in ``foo_bar.py`` with ``add_parser(sub, parents)``, which adds its
subparser (taking shared options from :class:`nerstudio.cli.options.Parents`), and
``run(args) -> int``. Adding a command is its module plus one name here. The modules import
only what building the parser needs; what a command runs is imported when it runs.
"""

from __future__ import annotations

import importlib
from types import ModuleType

NAMES = (
    "convert",
    "evaluate",
    "stats",
    "train-tagger",
    "nbest",
    "tag",
    "jackknife",
    "train-reranker",
    "rerank",
    "experiment",
    "explain-model",
    "sweep",
    "rank-uncertain",
    "suspects",
    "agreement",
    "errors",
    "adjudicate",
    "preannotate",
    "gui",
    "install-desktop",
)


def module(name: str) -> ModuleType:
    """The module of the command ``name`` (one of :data:`NAMES`)."""
    return importlib.import_module(f"{__name__}.{name.replace('-', '_')}")
