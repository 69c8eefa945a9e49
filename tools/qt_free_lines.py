"""Lines of nerstudio/gui that import no Qt: code that belongs in the Qt-free core.

nerstudio/gui holds views and controllers; what computes, reads files or words the core's
results without Qt belongs below it (nerstudio/app, nerstudio/runs, …), where it is strictly
typed and tested without a display. This tool counts what is left:

* a **Qt-free module** is a module of nerstudio/gui whose source imports neither PySide6 nor
  shiboken6 (anywhere in it, functions included; read with ``ast``, nothing is imported);
* a **view helper** is a Qt-free module of nerstudio/gui/views: it draws into a view's
  matplotlib figure or holds the texts a view shows; they are listed, not counted;
* a module of :data:`QT_STARTUP` works for Qt without importing it (it must run before Qt is
  loaded); listed with its reason, not counted;
* the **figure** is the physical lines (blank lines and docstrings included) of the other
  Qt-free modules (an empty ``__init__.py`` has none).

``--parts N`` also lists, without counting them, the top-level functions and classes of N lines
or more in Qt modules that name nothing imported from Qt (a job's body, an HTML helper, an
application's start-up step): candidates to read, many of which are rightly where they are.

    python tools/qt_free_lines.py              # the figure and the modules behind it
    python tools/qt_free_lines.py --parts 15   # and the larger Qt-free parts of Qt modules

tests/test_qt_free.py holds the figure at zero.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUI = ROOT / "nerstudio" / "gui"
QT = ("PySide6", "shiboken6")
#: Qt-free modules that are the application's own, with the reason
QT_STARTUP = {
    "nerstudio/gui/platform_check.py": "checks that Qt's xcb plugin can load, before Qt is imported",
}


@dataclass
class Module:
    path: Path
    lines: int
    qt_names: set[str]  # names bound by its Qt imports (empty: a Qt-free module)
    tree: ast.Module
    gui: Path = GUI  # the package it is in
    root: Path = ROOT  # the repository (its name is relative to it)

    @property
    def qt_free(self) -> bool:
        return not self.qt_names

    @property
    def view_helper(self) -> bool:
        return self.qt_free and "views" in self.path.relative_to(self.gui).parts[:-1]

    @property
    def counted(self) -> bool:
        qt_free = self.qt_free and self.lines > 0  # an empty __init__.py holds no code
        return qt_free and not self.view_helper and self.rel not in QT_STARTUP

    @property
    def rel(self) -> str:
        return self.path.relative_to(self.root).as_posix()


def _qt_names(tree: ast.Module) -> set[str]:
    """The names a module's Qt imports bind (``{"QtCore"}`` for ``from PySide6 import QtCore``);
    a Qt import that binds nothing still marks the module (``"PySide6"``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in QT:
            names |= {a.asname or a.name for a in node.names} or {node.module}
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in QT:
                    names.add((a.asname or a.name).split(".")[0])
    return names


def modules(gui: Path = GUI, root: Path = ROOT) -> list[Module]:
    """Every module of the package ``gui`` (nerstudio/gui), named relative to ``root``."""
    out = []
    for p in sorted(gui.rglob("*.py")):
        text = p.read_text(encoding="utf-8")
        tree = ast.parse(text, str(p))
        out.append(Module(p, len(text.splitlines()), _qt_names(tree), tree, gui, root))
    return out


def qt_free_lines(mods: list[Module]) -> int:
    """The figure: lines of the Qt-free modules that are neither view helpers nor Qt start-up."""
    return sum(m.lines for m in mods if m.counted)


def qt_free_parts(mods: list[Module], min_lines: int) -> list[tuple[str, str, int]]:
    """(module, name, lines) of the top-level functions and classes of Qt modules that name
    nothing their module imports from Qt."""
    out = []
    for m in mods:
        if m.qt_free:
            continue
        for node in m.tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            n = (node.end_lineno or node.lineno) - node.lineno + 1
            named = {x.id for x in ast.walk(node) if isinstance(x, ast.Name)}
            if n >= min_lines and not named & m.qt_names:
                out.append((m.rel, node.name, n))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", type=int, metavar="N", help="list Qt-free parts of N lines or more")
    args = ap.parse_args(argv)
    mods = modules()
    for m in mods:
        if m.qt_free and m.lines:
            why = (
                ""
                if m.counted
                else "  (view helper, not counted)"
                if m.view_helper
                else f"  (not counted: {QT_STARTUP[m.rel]})"
            )
            print(f"{m.lines:5d}  {m.rel}{why}")
    if args.parts:
        print(f"\nQt-free parts of Qt modules, {args.parts} lines or more (not counted):")
        for rel, name, n in qt_free_parts(mods, args.parts):
            print(f"{n:5d}  {rel}: {name}")
    print(f"\nQt-free lines in nerstudio/gui (view helpers aside): {qt_free_lines(mods)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
