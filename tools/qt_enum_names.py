"""Qt enum members by their full names: ``Qt.AlignmentFlag.AlignLeft``, never ``Qt.AlignLeft``.

PySide6 still accepts the short names of Qt 5 (``Qt.AlignLeft``, ``QHeaderView.Stretch``) through
a compatibility lookup, but its type stubs do not declare them, so a type checker cannot follow
them, and a package that mixes both spellings reads as two dialects. This tool finds the short
names by asking PySide6 itself: for ``Class.Member`` where ``Class`` is imported from PySide6 and
``Member`` is not a real attribute of the class (or of a base class), it looks through the enum
types nested in the class and its bases for one that has ``Member``. Exactly one such enum:
the name is short and its full form is ``Class.Enum.Member``. More than one: ambiguous, reported
but never rewritten.

    python tools/qt_enum_names.py [PATH ...]          # list short names (exit 1 when any)
    python tools/qt_enum_names.py --fix [PATH ...]    # rewrite the unambiguous ones in place

Without paths it scans nerstudio/ and tests/. tests/test_qt_enum_names.py runs the same scan.
"""

from __future__ import annotations

import argparse
import ast
import enum
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = ("nerstudio", "tests")


@dataclass(frozen=True)
class ShortName:
    path: Path
    line: int
    col: int  # 0-based column of the member's name
    owner: str  # the class as written, e.g. "Qt" or "QHeaderView"
    member: str
    enums: tuple[str, ...]  # the nested enums that have the member (one: unambiguous)

    @property
    def full(self) -> str | None:
        return f"{self.owner}.{self.enums[0]}.{self.member}" if len(self.enums) == 1 else None

    def __str__(self) -> str:
        try:
            shown = self.path.resolve().relative_to(ROOT)
        except ValueError:
            shown = self.path
        where = f"{shown}:{self.line}:{self.col + 1}"
        if self.full:
            return f"{where}: {self.owner}.{self.member} -> {self.full}"
        return f"{where}: {self.owner}.{self.member} is ambiguous: {', '.join(self.enums)}"


def _is_qt_class(obj: object) -> bool:
    return isinstance(obj, type) and type(obj).__module__.startswith(("Shiboken", "shiboken"))


def enums_with(cls: type, member: str) -> tuple[str, ...]:
    """The names of the enums nested in ``cls`` (or a base) that have ``member``, or () when
    ``member`` is a real attribute of the class (a method, a nested type, a constant)."""
    mro = [k for k in cls.__mro__ if k is not object]
    if any(member in vars(k) for k in mro):
        return ()
    found: dict[str, type] = {}
    for k in mro:
        for name, value in vars(k).items():
            is_enum = isinstance(value, type) and issubclass(value, enum.Enum)
            if is_enum and member in value.__members__ and name not in found:
                found[name] = value
    # the same enum reached under two names (an alias) counts once
    unique: dict[int, str] = {}
    for name, value in found.items():
        unique.setdefault(id(value), name)
    return tuple(sorted(unique.values()))


def _imports(tree: ast.Module) -> dict[str, object]:
    """Names bound by the module's PySide6 imports (anywhere in the file), resolved."""
    bound: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("PySide6"):
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                if hasattr(module, alias.name):
                    bound[alias.asname or alias.name] = getattr(module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "PySide6":
                    importlib.import_module(alias.name)
                    if alias.asname:
                        bound[alias.asname] = importlib.import_module(alias.name)
                    else:
                        bound["PySide6"] = importlib.import_module("PySide6")
    return bound


def _resolve(node: ast.expr, bound: dict[str, object]) -> object | None:
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, bound)
        if base is not None and not _is_qt_class(base):  # a module: PySide6.QtCore.Qt
            return getattr(base, node.attr, None)
    return None


def scan_source(source: str, path: Path) -> list[ShortName]:
    tree = ast.parse(source, str(path))
    bound = _imports(tree)
    if not bound:
        return []
    lines = source.splitlines()
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or node.end_lineno is None:
            continue
        owner = _resolve(node.value, bound)
        if not _is_qt_class(owner):
            continue
        assert isinstance(owner, type)
        enums = enums_with(owner, node.attr)
        if not enums:
            continue
        line, end = node.end_lineno, node.end_col_offset or 0
        col = end - len(node.attr)
        if lines[line - 1][col:end] != node.attr:  # never rewrite what we did not find
            raise SystemExit(f"{path}:{line}: cannot locate {node.attr!r}")
        written = ast.get_source_segment(source, node.value) or "?"
        found.append(ShortName(path, line, col, written, node.attr, enums))
    return sorted(found, key=lambda s: (s.line, s.col))


def fix_source(source: str, names: list[ShortName]) -> str:
    """The source with each unambiguous short name's enum inserted before the member."""
    lines = source.splitlines(keepends=True)
    for s in sorted(names, key=lambda s: (s.line, s.col), reverse=True):
        if s.full is None:
            continue
        text = lines[s.line - 1]
        lines[s.line - 1] = f"{text[: s.col]}{s.enums[0]}.{text[s.col :]}"
    return "".join(lines)


def python_files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def scan(paths: list[Path]) -> list[ShortName]:
    names: list[ShortName] = []
    for f in python_files(paths):
        names.extend(scan_source(f.read_text(encoding="utf-8"), f))
    return names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fix", action="store_true", help="rewrite unambiguous short names")
    ap.add_argument("paths", nargs="*", type=Path)
    args = ap.parse_args(argv)
    paths = args.paths or [ROOT / p for p in DEFAULT_PATHS]
    left = 0
    for f in python_files(paths):
        source = f.read_text(encoding="utf-8")
        names = scan_source(source, f)
        if args.fix and any(s.full for s in names):
            f.write_text(fix_source(source, names), encoding="utf-8")
            names = [s for s in names if s.full is None]
        for s in names:
            print(s)
        left += len(names)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
