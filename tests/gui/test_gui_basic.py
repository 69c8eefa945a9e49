"""The application window on the bundled demo corpus (pytest-qt, offscreen)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import ROOT

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from nerstudio.gui.app import DEMO_CORPUS
from nerstudio.gui.main_window import MainWindow


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings)
    qtbot.addWidget(w)
    return w


def test_demo_corpus_is_bundled():
    assert DEMO_CORPUS.exists(), "nerstudio/demo/train.conll is missing"


def test_open_corpus_and_select_sentences(window, qtbot, demo_files):
    assert window.load_corpus(str(demo_files / "train.conll"))
    c = window.corpus
    assert len(c.documents) > 10 and len(c) > 100
    assert window.findChild(object, "corpusView") is window.corpus_view
    assert window.findChild(object, "sentenceView") is window.sentence_view
    # the first sentence is shown
    assert window.sentence_view.words() == c.sentences[0].words
    # pick the first sentence with at least two entities
    k = next(i for i, s in enumerate(c.sentences) if len(s.spans) >= 2)
    window.select_sentence(k)
    assert window.current_sentence_index() == k
    assert window.sentence_view.words() == c.sentences[k].words
    assert window.entity_table.rowCount() == len(c.sentences[k].spans)
    window.step_sentence(1)
    assert window.current_sentence_index() == k + 1


def test_search_filters_sentences(window, demo_files):
    window.load_corpus(str(demo_files / "train.conll"))
    window.search.setText("Port Albury")
    proxy = window.proxy
    shown = sum(proxy.rowCount(proxy.index(d, 0)) for d in range(proxy.rowCount()))
    expected = sum("port albury" in s.text().lower() for s in window.corpus.sentences)
    assert 0 < shown == expected


def test_bad_file_shows_an_error_not_a_traceback(window, tmp_path, monkeypatch):
    bad = tmp_path / "bad.conll"
    bad.write_text("a O\nb\n", encoding="utf-8")
    shown = []
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    assert not window.load_corpus(str(bad))
    assert shown and "bad.conll:2" in shown[0]
    assert window.corpus is None


@pytest.mark.slow
@pytest.mark.parametrize("view", ["main", "training"])
def test_screenshot_command_renders_the_demo_corpus(tmp_path, view):
    """Every view's picture is written and the process ends: the training view's runs are
    unsaved models, and their question at closing waited for an answer nobody could give."""
    out = tmp_path / "demo.png"
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    proc = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--screenshot", str(out), "--view", view],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.exists() and out.stat().st_size > 10_000
    from PySide6.QtGui import QImage

    img = QImage(str(out))
    assert img.width() >= 800 and img.height() >= 600
