"""Hints name keys that work (issue 24, point 5): every key the application's texts name in
parentheses — "(Ctrl+M)", "(F5)", "(Shift+F5)" — is the shortcut of one of the window's actions
(the Train hint named Ctrl+T, which did nothing)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QAction, QKeySequence

import nerstudio.gui

KEY = re.compile(
    r"\(((?:Ctrl|Shift|Alt|F\d{1,2})[A-Za-z0-9+=\-]*)(?:[,)]| then| or| to| goes| undoes)"
)


def named_keys() -> dict[str, list[str]]:
    """Key -> the files whose text names it in parentheses."""
    out: dict[str, list[str]] = {}
    for f in Path(nerstudio.gui.__file__).parent.rglob("*.py"):
        for m in KEY.finditer(f.read_text(encoding="utf-8")):
            key = m.group(1).rstrip("+")
            if "…" in key or "arrow" in key:  # a range of keys, the caret keys
                continue
            out.setdefault(key, []).append(f.name)
    return out


def test_the_keys_hints_name_exist(empty_window):
    keys = {
        QKeySequence(s.toString()).toString(QKeySequence.SequenceFormat.PortableText)
        for a in empty_window.findChildren(QAction)
        for s in a.shortcuts()
    }
    named = named_keys()
    assert {"F5", "F10", "Ctrl+M", "Shift+F5"} <= set(named)  # the scan finds the hints
    missing = {
        k: v
        for k, v in named.items()
        if QKeySequence(k).toString(QKeySequence.SequenceFormat.PortableText) not in keys
    }
    assert not missing, f"hints name keys no action has: {missing}"


@pytest.mark.parametrize("size", [(1280, 800), (1024, 768)])
def test_the_no_nbest_hint_is_shown_whole(qtbot, tmp_path, size):
    # at 1280x800 the hint was seen cut after "…or train one in": a corpus with no N-best list,
    # Inspect shown, the header's text must have the height its width needs
    from PySide6.QtCore import QSettings

    from nerstudio.demo import DEMO_DIR
    from nerstudio.gui.main_window import MainWindow

    corpus = tmp_path / "dev.conll"
    corpus.write_bytes((DEMO_DIR / "dev.conll").read_bytes())  # no list beside it
    st = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    st.setValue("annotation/recoveryDir", str(tmp_path / "recovery"))
    w = MainWindow(st)
    qtbot.addWidget(w)
    w.dialogs.ask_unsaved = lambda: "discard"
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    assert w.load_corpus(str(corpus), attach=False)
    assert w.runner.wait(30000)
    w.workspaces.activate("inspect")
    qtbot.wait(50)
    header = w.nbest_panel.header
    assert header.isVisible() and "train one in the Train workspace" in header.text()
    assert header.heightForWidth(header.width()) <= header.height()
