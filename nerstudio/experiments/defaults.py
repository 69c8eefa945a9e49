"""Name lists of the core read from its source without importing it.

The command line's choices (tasks, tag alphabets, scopes, presets, the K&T suite's systems) are
tuples in modules that pull in numpy, scipy and numba. Building the parser, which every command
and ``--help`` does, should not import them: :func:`registered` reads such a tuple from the
module's source with :mod:`ast` (importing the module only when its source cannot be read, as
in a frozen build). The learners and their defaults are data of their own,
:mod:`nerstudio.learners`.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re

_MISSING = object()


_CONSTANT = re.compile(r"[A-Z_][A-Z0-9_]*\s*=[^=]")


def _statement(lines: list[str], i: int) -> tuple[str | None, int]:
    """The shortest run of lines from ``i`` that parses, and the line after it; (None, i + 1)
    if none of up to 40 lines does."""
    for j in range(i + 1, min(i + 40, len(lines)) + 1):
        text = "\n".join(lines[i:j])
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        return text, j
    return None, i + 1


def _skeleton(source: str) -> str:
    """A module's top-level constant assignments only: parsing the whole source of the core's
    modules takes longer than importing some of them."""
    lines = source.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if _CONSTANT.match(lines[i]):
            text, i = _statement(lines, i)
            if text is not None:
                out.append(text)
        else:
            i += 1
    return "\n".join(out) + "\n"


@functools.cache
def _tree(module: str) -> ast.Module | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        with open(spec.origin, encoding="utf-8") as f:
            return ast.parse(_skeleton(f.read()), spec.origin)
    except (OSError, SyntaxError, ValueError):
        return None


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return _MISSING


def registered(module: str, name: str) -> tuple[str, ...]:
    """The names ``module.name`` registers, read from its source (importing the module, which
    loads numpy and the learners, only when the source cannot be read)."""
    tree = _tree(module)
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            value = _literal(node.value)
            if value is not _MISSING:
                return tuple(value)
    return tuple(getattr(importlib.import_module(module), name))


def kazama_systems() -> tuple[str, ...]:
    """The systems of the Kazama & Torisawa suite: ``nerstudio.experiments.kazama.SYSTEMS``."""
    return registered("nerstudio.experiments.kazama", "SYSTEMS")
