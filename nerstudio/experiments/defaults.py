"""The learners' settings and their defaults, read from their source without importing them.

The application's training panel offers every reranker and sequence tagger with its
constructor's defaults when its window opens. Importing the learners for that pulls in scipy
(and with the taggers the feature machinery): about half a second before the first window, for
settings that are literal values in the constructors' signatures. This module reads those
signatures (and the list of reranking algorithms) from the modules' source with :mod:`ast`;
the learners load when a run starts. Anything that is not a literal, or a module that cannot be
read as source (a frozen build), falls back to importing the class and asking it.
``tests/test_startup.py`` checks that both ways agree for every learner.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re

from ..errors import Msg, SettingsError

#: reranking algorithm → (module, class); :func:`nerstudio.rerank.model.learner_class` imports them
RERANKERS = {
    "boost": ("nerstudio.rerank.boosting", "Boosting"),
    "perceptron": ("nerstudio.rerank.perceptron", "Perceptron"),
    "voted": ("nerstudio.rerank.perceptron", "VotedPerceptron"),
    "averaged": ("nerstudio.rerank.perceptron", "AveragedPerceptron"),
    "margin": ("nerstudio.rerank.perceptron", "MarginPerceptron"),
    "kernel": ("nerstudio.rerank.kernel", "KernelPerceptron"),
}
PERCEPTRON_TAGGER = ("nerstudio.tagging.perceptron", "PerceptronTagger")
JOINT_TAGGER = ("nerstudio.tagging.joint", "JointTagger")

_MISSING = object()


_CONSTANT = re.compile(r"[A-Z_][A-Z0-9_]*\s*=[^=]")


def _statement(lines: list[str], i: int, dedent: int, body: str) -> tuple[str | None, int]:
    """The shortest run of lines from ``i`` that parses (with ``body`` appended), and the line
    after it; (None, i + 1) if none of up to 40 lines does."""
    for j in range(i + 1, min(i + 40, len(lines)) + 1):
        text = "\n".join(ln[dedent:] for ln in lines[i:j])
        try:
            ast.parse(text + body)
        except SyntaxError:
            continue
        return text, j
    return None, i + 1


def _skeleton(source: str) -> str:
    """A module's top-level constants and class headers with their ``__init__`` signatures only:
    parsing the whole source of the learners takes longer than importing some of them."""
    lines = source.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("class "):
            text, i = _statement(lines, i, 0, "\n    pass")
            if text is not None:
                out += [text, "    pass"]
        elif line.startswith("    def __init__(") and out:
            text, i = _statement(lines, i, 4, "\n    pass")
            if text is not None:
                out += ["    " + ln for ln in text.splitlines()] + ["        pass"]
        elif _CONSTANT.match(line):
            text, i = _statement(lines, i, 0, "")
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


def _literal(node, constants: dict | None = None):
    """A literal's value, or a module-level constant's (``BETA_GRID``) when ``constants`` has it."""
    if isinstance(node, ast.Name) and constants is not None:
        return constants.get(node.id, _MISSING)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return _MISSING


def _constants(tree: ast.Module) -> dict:
    """The module's top-level ``NAME = literal`` assignments."""
    out = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            value = _literal(node.value)
            if value is not _MISSING:
                out[node.targets[0].id] = value
    return out


def _init_defaults(tree: ast.Module, cls: str, depth: int = 0) -> dict | None:
    """{parameter: default} of ``cls.__init__`` (following same-module base classes), or None."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    node = classes.get(cls)
    if node is None or depth > 5:
        return None
    init = next(
        (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None
    )
    if init is None:
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        return _init_defaults(tree, bases[0], depth + 1) if bases else None
    a = init.args
    if a.vararg or a.kwarg or a.posonlyargs:
        return None
    out, consts = {}, _constants(tree)
    positional = a.args[1:]  # without self
    firsts = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, default in list(zip(positional, firsts)) + list(zip(a.kwonlyargs, a.kw_defaults)):
        # a required parameter or a computed default (a named constant) is left out
        out[arg.arg] = _MISSING if default is None else _literal(default, consts)
    return out


def constructor_defaults(module: str, cls: str, names=None) -> dict:
    """The defaults of ``module.cls``'s constructor, ``names`` only if given (read from
    source; the class is imported only when the source does not give one of them as a literal)."""
    tree = _tree(module)
    found = _init_defaults(tree, cls) if tree is not None else None
    if found is not None:
        wanted = found if names is None else {k: found.get(k, _MISSING) for k in names}
        if all(v is not _MISSING for v in wanted.values()):
            return dict(wanted)
    import inspect

    klass = getattr(importlib.import_module(module), cls)
    out = {
        k: p.default for k, p in inspect.signature(klass.__init__).parameters.items() if k != "self"
    }
    return {
        k: v
        for k, v in out.items()
        if (names is None or k in names) and v is not inspect.Parameter.empty
    }


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


def reranking_algorithms() -> tuple[str, ...]:
    """The reranking learners: ``nerstudio.rerank.model.ALGORITHMS``."""
    return registered("nerstudio.rerank.model", "ALGORITHMS")


def kazama_systems() -> tuple[str, ...]:
    """The systems of the Kazama & Torisawa suite: ``nerstudio.experiments.kazama.SYSTEMS``."""
    return registered("nerstudio.experiments.kazama", "SYSTEMS")


def reranker_defaults(algo: str) -> dict:
    """What ``make_learner(algo).get_params()`` gives (its constructor's defaults)."""
    if algo not in RERANKERS:
        raise SettingsError(
            Msg.UNKNOWN.format(what="reranking algorithm", name=algo, choices=RERANKERS)
        )
    return constructor_defaults(*RERANKERS[algo])
