"""The demo's first screen (MainWindow.first_screen, nerstudio.gui.views.screen): the window
shows the demo's first sentence, its candidates, scores and features before it is built, and it
looks exactly as the built window then shows the demo; it is shown only over the very files it
was computed from, at the window's usual look, and the demo then opens on the corpus it read."""

from __future__ import annotations

import pickle

import pytest
from PySide6.QtCore import QSettings

from nerstudio.corpus.formats import read_corpus


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def _shell(qtbot, settings):
    from nerstudio.gui.main_window import MainWindow

    win = MainWindow(settings, shell=True)
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    return win


def _pictures(qapp, win):
    """The window's centre and status bar as it paints them now, and where the centre is."""
    for _ in range(3):
        qapp.processEvents()
    centre, status = win.centralWidget(), win.statusBar()
    return centre.grab().toImage(), status.grab().toImage(), centre.geometry()


def _same(a, b, tmp_path, name: str) -> None:
    if a != b:
        a.save(str(tmp_path / f"{name}-first.png"))
        b.save(str(tmp_path / f"{name}-built.png"))
        pytest.fail(f"the {name} differs once the window is built (pictures in {tmp_path})")


def test_the_first_screen_is_the_built_window_showing_the_demo(qapp, qtbot, settings, tmp_path):
    win = _shell(qtbot, settings)
    start = win.first_screen()
    assert start is not None and start.corpus is not None and not win.built
    shown = win.views.nbest_panel.model
    assert shown.rowCount() == 20 and shown.has_scores and shown.chosen() == 16
    assert win.views.feature_panel.shown() is not None  # the reranker's pick, explained
    first = _pictures(qapp, win)

    assert win.finish() and win.load_demo(start=start)
    assert win.document.corpus is start.corpus  # read once, for the first screen
    qtbot.waitUntil(lambda: win.document.tagger is not None, timeout=60000)  # after the paint
    win.jobs.wait(60000)
    built = _pictures(qapp, win)
    assert built[2] == first[2]  # nothing moved: the shell made room for the menus and tools
    _same(first[0], built[0], tmp_path, "centre")
    _same(first[1], built[1], tmp_path, "status bar")


def test_the_corpus_of_the_first_screen_is_the_reader_s(qtbot, settings):
    win = _shell(qtbot, settings)
    start = win.first_screen()
    assert start is not None and start.corpus is not None
    again = read_corpus(start.corpus.path)
    assert pickle.dumps(start.corpus) == pickle.dumps(again)
    assert win.finish() and win.load_demo(start=start)
    win.jobs.wait(60000)


def _no_first_screen(qtbot, settings, demo_files=None):
    win = _shell(qtbot, settings)
    start = win.first_screen()
    assert start is not None and start.corpus is None and start.folder is not None
    assert win.views.nbest_panel.model.rowCount() == 0  # nothing shown before the build
    assert win.finish() and win.load_demo(start=start)  # the demo opens as before
    win.jobs.wait(60000)
    assert win.nbest_panel.model.rowCount() > 0
    return win


def test_a_changed_copy_of_the_demo_opens_without_the_first_screen(qtbot, settings, demo_files):
    corpus = demo_files / "train.conll"  # the user made MERIDIA an organisation
    text = corpus.read_text(encoding="utf-8")
    corpus.write_text(text.replace("MERIDIA NNP I-NP I-LOC", "MERIDIA NNP I-NP I-ORG", 1))
    win = _no_first_screen(qtbot, settings)
    assert [s.label for s in win.sentence_view.gold()] == ["ORG"]  # theirs, not the shipped
    assert win.views.sentence_header.text().startswith("<b>Sentence 1</b>")


def test_no_first_screen_over_a_review_file_a_zoom_or_another_workspace(
    qtbot, settings, demo_files
):
    side = demo_files / "train.conll.nerstudio-review.json"
    side.write_text("{}")
    _no_first_screen(qtbot, settings)
    side.unlink()
    settings.setValue("view/zoom", 1.5)
    _no_first_screen(qtbot, settings).zoom.reset()
    settings.setValue("view/zoom", 1.0)
    settings.setValue("window/workspace", "annotate")
    _no_first_screen(qtbot, settings)


def test_a_bug_in_the_first_screen_is_logged_and_the_demo_opens_as_usual(
    qtbot, settings, monkeypatch, caplog
):
    from nerstudio.gui.views import screen

    def broken(*_args):
        raise RuntimeError("screen exploded")

    monkeypatch.setattr(screen, "show", broken)
    win = _no_first_screen(qtbot, settings)
    assert "the demo's first screen failed: RuntimeError: screen exploded" in caplog.text
    assert win.built and win.windowTitle().startswith("nerstudio — train.conll")
