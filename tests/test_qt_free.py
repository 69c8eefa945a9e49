"""Everything outside nerstudio/gui works without Qt (statically and at import time).

The import graph itself is checked by import-linter (``tests/test_layers.py``, contract
``qt-only-in-gui``); these tests add what it cannot see: matplotlib's Qt backends (submodules of
an external package), other Qt bindings, imports by name (``importlib.import_module``,
``matplotlib.use("QtAgg")``) and the modules actually loaded when the core is imported and run.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import nerstudio

PACKAGE = Path(nerstudio.__file__).resolve().parent
QT_ROOTS = {"PySide6", "PyQt5", "PyQt6", "PySide2", "shiboken6", "shiboken2", "sip"}


def _is_qt(module: str) -> bool:
    root = module.split(".")[0]
    return root in QT_ROOTS or module.startswith(
        ("matplotlib.backends.backend_qt", "matplotlib.backends.qt_")
    )


def _core_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "gui" not in p.relative_to(PACKAGE).parts[:1])


def test_core_files_found():
    names = {p.relative_to(PACKAGE).as_posix() for p in _core_files()}
    assert {
        "cli/__init__.py",
        "cli/parser.py",
        "errors.py",
        "evaluation.py",
        "corpus/formats.py",
    } <= names
    assert not any(n.startswith("gui/") for n in names)


@pytest.mark.slow
def test_static_no_qt_imports():
    offenders = []
    for path in _core_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", ""))
                in ("import_module", "__import__")
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                modules = [str(node.args[0].value)]
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "use"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and "qt" in str(node.args[0].value).lower()
            ):
                modules = ["matplotlib.backends.backend_qtagg"]  # matplotlib.use("QtAgg")
            offenders += [
                f"{path.relative_to(PACKAGE)}:{node.lineno}: {m}" for m in modules if _is_qt(m)
            ]
    assert offenders == []


_DYNAMIC = r"""
import importlib, importlib.abc, pkgutil, sys

BLOCKED = ("PySide6", "shiboken6", "PyQt5", "PyQt6")

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"Qt is blocked in this test: {name}")
        return None

sys.meta_path.insert(0, Block())

import nerstudio

def walk(package):
    # like pkgutil.walk_packages, but never imports nerstudio.gui to look inside it
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if info.name == "nerstudio.gui" or info.name.startswith("nerstudio.gui.") \
                or info.name == "nerstudio.__main__":
            continue
        yield info.name
        if info.ispkg:
            yield from walk(importlib.import_module(info.name))

names = sorted(set(walk(nerstudio)))
for name in names:
    importlib.import_module(name)
assert not [m for m in sys.modules if m.split(".")[0] in BLOCKED], "Qt was imported"
assert "nerstudio.gui" not in sys.modules
print("\n".join(names))
"""


@pytest.mark.slow
def test_dynamic_core_imports_without_qt():
    proc = subprocess.run(
        [sys.executable, "-c", _DYNAMIC],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert proc.returncode == 0, proc.stderr
    imported = set(proc.stdout.split())
    assert {
        "nerstudio.cli",
        "nerstudio.errors",
        "nerstudio.evaluation",
        "nerstudio.corpus",
        "nerstudio.corpus.formats",
        "nerstudio.corpus.model",
        "nerstudio.corpus.schemes",
    } <= imported


def test_dynamic_cli_runs_without_qt(tmp_path):
    """The CLI itself (not just its imports) runs with Qt blocked."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("Jan B-PER\nPeeters I-PER\n")
    script = _DYNAMIC.split("import nerstudio")[0] + (
        "from nerstudio.cli import main\n"
        f"assert main(['stats', {str(corpus)!r}, '--json']) == 0\n"
        f"assert main(['convert', {str(corpus)!r}, {str(tmp_path / 'o.jsonl')!r}, '--to', 'jsonl']) == 0\n"
        f"assert main(['evaluate', {str(corpus)!r}, {str(tmp_path / 'o.jsonl')!r}]) == 0\n"
        "assert 'PySide6' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _qt_free_lines_tool():
    from helpers import tool

    return tool("tools/qt_free_lines.py")


def test_gui_holds_no_qt_free_module_but_view_helpers():
    """nerstudio/gui is views and controllers: a module of it that imports no Qt belongs in the
    core (tools/qt_free_lines.py counts them; view helpers aside)."""
    tool = _qt_free_lines_tool()
    mods = tool.modules()
    assert {m.rel for m in mods} >= {"nerstudio/gui/main_window.py", "nerstudio/gui/workers.py"}
    assert [m.rel for m in mods if m.counted] == [] and tool.qt_free_lines(mods) == 0
    assert all(path in {m.rel for m in mods if m.qt_free} for path in tool.QT_STARTUP)


def test_the_qt_free_count_sees_a_module_without_qt(tmp_path):
    tool = _qt_free_lines_tool()
    (tmp_path / "views").mkdir()
    (tmp_path / "logic.py").write_text("import os\n\n\ndef f():\n    return os.sep\n")
    (tmp_path / "widget.py").write_text("def f():\n    from PySide6.QtWidgets import QLabel\n")
    (tmp_path / "views" / "drawing.py").write_text("X = 1\n")
    mods = {m.path.name: m for m in tool.modules(tmp_path, root=tmp_path)}
    assert mods["logic.py"].counted and not mods["widget.py"].qt_free
    assert mods["drawing.py"].view_helper and tool.qt_free_lines(list(mods.values())) == 5
