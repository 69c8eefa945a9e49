"""The application's first window comes before its heavy machinery (issue 26, point 1).

The start-up runs in a fresh interpreter: an application-wide event filter notes which modules
are loaded when a window is first exposed (on screen) and when the Inspect N-best table first
paints the demo's candidates (the window's first screen, before it is built), then waits until
the window is built and shows the demo's first sentence, then until the demo's tagger is in, and
ends the process. The first window is the main window's shell
(:class:`~nerstudio.gui.main_window.MainWindow` with ``shell=True``): numpy, the document model,
the controllers, matplotlib, scipy, numba and the learners load after it; the first screen
needs only the views. The learners and the named choices the training panel shows are light
data of their own (:mod:`nerstudio.learners`, :mod:`nerstudio.choices`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT

# loaded on first use, never before the first window
HEAVY = (
    # the window's second phase: the document model, its arrays and the controllers
    "numpy",
    "nerstudio.app.document",
    "nerstudio.gui.controllers",
    "nerstudio.gui.window_views",
    "matplotlib",
    "scipy",
    "numba",
    "llvmlite",
    "nerstudio.rerank.model",
    "nerstudio.rerank.boosting",
    "nerstudio.rerank.perceptron",
    "nerstudio.rerank.kernel",
    "nerstudio.rerank.features",
    "nerstudio.rerank.data",
    "nerstudio.rerank.importance",
    "nerstudio.tagging.maxent",
    "nerstudio.tagging.perceptron",
    "nerstudio.tagging.joint",
    "nerstudio.tagging._viterbi",
    "nerstudio.tagging._maxent_compiled",
    "nerstudio.text.nonlocal_features",
    # the views of the pages and tabs not shown first, built on first use (test_gui_lazy.py)
    "nerstudio.gui.views.training_panel",
    "nerstudio.gui.views.stepper",
    "nerstudio.gui.views.comparison",
    "nerstudio.gui.views.model_features",
    "nerstudio.gui.views.what_if_view",
    "nerstudio.gui.views.agreement_view",
    "nerstudio.gui.views.adjudication_view",
)

CHILD = r"""
import json, os, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QLabel

HEAVY = json.loads(sys.argv[1])
app = QApplication(sys.argv[:1])
result = {"window": None, "loaded": [], "ready": None, "nbest": None, "tagger": None}


def loaded():
    return sorted({h for h in HEAVY for m in list(sys.modules) if m == h or m.startswith(h + ".")})


def done():
    print("RESULT " + json.dumps(result), flush=True)
    os._exit(0)


def poll():
    win = next((w for w in app.topLevelWidgets() if w.objectName() == "mainWindow"), None)
    cursor = getattr(win, "sentence_cursor", None)
    if not getattr(win, "built", False) or cursor is None or cursor.k < 0:
        return
    if result["ready"] is not None:
        if result["nbest"] is not None and win.document.tagger is not None:
            # then the demo's tagger, read in the worker
            result["tagger"] = {"path": os.path.basename(win.document.tagger_path or "")}
            done()
        return
    corpus = win.document.corpus
    result["ready"] = {
        "title": win.windowTitle(),
        "corpus": os.path.basename(corpus.path),
        "sentence": cursor.k,
        "words_shown": win.sentence_view.words() == corpus.sentences[cursor.k].words,
        "menus": [a.text().replace("&", "") for a in win.menuBar().actions()],
        "enabled": [a.isEnabled() for a in win.menuBar().actions()],
        "notice_left": any(n.isVisible() for n in win.findChildren(QLabel, "startNotice")),
        "central": win.centralWidget().objectName(),
        "candidates": win.nbest_panel.model.candidates(),
        "loaded": loaded(),
    }


def nbest_painted(obj):
    # the N-best table's rows painted, holding candidates
    win = next((w for w in app.topLevelWidgets() if w.objectName() == "mainWindow"), None)
    views = getattr(win, "views", None)
    if views is None or obj is not views.nbest_view.viewport():
        return
    if views.nbest_panel.model.rowCount():
        result["nbest"] = {
            "built": win.built,  # the window's controllers and menus
            "words": list(views.sentence_view.words()),
            "header": views.sentence_header.text(),
            "candidates": views.nbest_panel.model.candidates(),
            "loaded": loaded(),
        }


class FirstExpose(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Paint and result["nbest"] is None:
            nbest_painted(obj)
        if event.type() == QEvent.Expose and result["window"] is None:
            top = next((w for w in app.topLevelWidgets() if w.windowHandle() is obj), None)
            result["window"] = type(top).__name__ if top is not None else type(obj).__name__
            result["notice"] = getattr(top.findChild(QLabel, "startNotice"), "text", lambda: None)()
            result["loaded"] = loaded()
            timer.start(5)
        return False


timer = QTimer()
timer.timeout.connect(poll)
QTimer.singleShot(240000, done)  # never ready: say what was seen
watch = FirstExpose()
app.installEventFilter(watch)
from nerstudio.gui.app import main
main([])
done()
"""


@pytest.fixture(scope="module")
def start_up(tmp_path_factory) -> dict:
    """``main.py`` (the demo) in a fresh interpreter: what was loaded at the first Expose
    event, and the window once it is ready."""
    tmp_path = tmp_path_factory.mktemp("startup")
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        PYTHONPATH=str(ROOT),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        NERSTUDIO_LOG_DIR=str(tmp_path / "logs"),
    )
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(HEAVY)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(tmp_path),
    )
    lines = [ln[len("RESULT ") :] for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"the start-up child said nothing (exit {out.returncode}): {out.stderr[-2000:]}"
    got = json.loads(lines[-1])
    got["stderr"] = out.stderr
    return got


@pytest.mark.slow
def test_no_heavy_module_before_the_first_window(start_up):
    assert start_up["window"] == "MainWindow", "the main window was not the first exposed"
    assert start_up["notice"] == "Starting nerstudio…"  # its shell
    assert start_up["loaded"] == [], (
        f"loaded before the first window: {', '.join(start_up['loaded'])}"
    )


@pytest.mark.slow
def test_the_first_window_then_finishes_and_shows_the_demo(start_up):
    ready = start_up["ready"]
    assert ready is not None, f"the window never showed a sentence: {start_up['stderr'][-2000:]}"
    assert ready["corpus"] == "train.conll" and ready["title"].startswith("nerstudio — train.conll")
    assert ready["sentence"] == 0 and ready["words_shown"]
    assert ready["menus"] == ["File", "Edit", "Annotate", "View", "Navigate", "Train", "Help"]
    assert all(ready["enabled"])  # the shell's titles, filled and enabled
    assert not ready["notice_left"] and ready["central"] != "startNotice"
    # the second phase did load them: the list of heavy modules can fail
    assert {"numpy", "nerstudio.app.document", "nerstudio.gui.controllers"} <= set(ready["loaded"])
    assert "Traceback" not in start_up["stderr"]


# not needed to show the demo's candidates: the window's first screen (MainWindow.first_screen)
# shows them with its views alone, from the screen shipped with the demo; the document model, the
# controllers and the rest load once it is painted, the figures' matplotlib and the demo's tagger
# once the built window has painted the demo again, the other views when first shown (the
# Comparison tab's too: nothing on the first screen needs it). Built for the first screen: the views
FIRST_SCREEN = ("nerstudio.gui.window_views",)
NOT_BEFORE_THE_NBEST = tuple(m for m in HEAVY if m not in FIRST_SCREEN)


@pytest.mark.slow
def test_the_demo_candidates_show_before_what_they_do_not_need(start_up):
    shown = start_up["nbest"]
    assert shown is not None, f"the N-best table stayed empty: {start_up['stderr'][-2000:]}"
    assert not shown["built"]  # before the window's controllers and menus
    assert shown["header"].startswith("<b>Sentence 1</b> of 337")
    early = sorted(set(shown["loaded"]) & set(NOT_BEFORE_THE_NBEST))
    assert early == [], f"loaded before the demo's candidates were shown: {', '.join(early)}"
    assert "nerstudio.gui.window_views" in shown["loaded"]  # the list can fail
    # the built window shows the same candidates, words and scores
    ready = start_up["ready"]
    assert ready is not None and ready["candidates"] == shown["candidates"]
    assert shown["words"] == shown["candidates"]["words"] and len(shown["candidates"]["spans"]) > 1
    # the tagger, which nothing on the page shows, comes after them all the same
    assert start_up["tagger"] == {"path": "tagger.npz"}, start_up["stderr"][-2000:]


@pytest.fixture
def renderer():
    from nerstudio.gui.views.figure_image import _RenderThread

    r = _RenderThread()
    yield r
    r.shutdown()


def test_held_figures_are_drawn_once_released(qtbot, renderer, monkeypatch):
    """The application holds figure drawing (and matplotlib) until its window is on screen."""
    from nerstudio.gui.views import figure_image

    monkeypatch.setattr(figure_image, "RENDERER", renderer)
    img = figure_image.FigureImage()
    qtbot.addWidget(img)
    img.resize(120, 80)
    renderer.hold()
    img.request(lambda fig: fig.add_subplot().plot([0, 1], [1, 0]))
    qtbot.wait(200)
    assert img.renders == 0 and renderer._thread is None
    renderer.release()
    qtbot.waitUntil(lambda: img.renders == 1, timeout=30000)


# -- the two phases, in this interpreter -------------------------------------------------------


@pytest.fixture
def shell(qtbot, tmp_path):
    """The main window as the application first shows it: its shell, on screen."""
    from PySide6.QtCore import QSettings

    from nerstudio.gui.main_window import MainWindow

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings, shell=True)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


def _notice(win):
    from PySide6.QtWidgets import QLabel

    shown = [n for n in win.findChildren(QLabel, "startNotice") if n.isVisible()]
    return shown[0].text() if shown else None


def _drag(win, path, drop: bool = False) -> bool:
    """Drag ``path`` onto ``win`` (and drop it): True when the window takes it."""
    from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    how = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton)
    enter = QDragEnterEvent(QPoint(20, 20), *how, Qt.KeyboardModifier.NoModifier)
    enter.ignore()
    win.dragEnterEvent(enter)
    if drop:
        win.dropEvent(QDropEvent(QPointF(20, 20), *how, Qt.KeyboardModifier.NoModifier))
    return enter.isAccepted()


def test_a_shell_closed_before_it_is_built_just_closes(shell, qtbot, tmp_path):
    from PySide6.QtCore import Qt

    assert not shell.built and _notice(shell) == "Starting nerstudio…"
    # a drag is refused until the window can open what is dropped; a drop is ignored
    assert not _drag(shell, tmp_path / "dropped.conll", drop=True)
    qtbot.keyClick(shell, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)  # no shortcut yet
    assert shell.close()  # nothing to confirm: nothing was opened
    assert not shell.isVisible()
    assert shell.finish() is False  # the second phase never comes
    assert not shell.built and not hasattr(shell, "document") and not hasattr(shell, "files")
    assert shell.settings.value("window/geometry") is not None  # where it was is kept
    assert shell.settings.value("window/state") is None  # no docks were there to save


def test_a_shell_finishes_into_the_full_window_in_place(shell, qtbot, demo_files):
    from PySide6.QtCore import Qt

    geometry = shell.geometry()
    assert shell.finish() is True and shell.built and shell.finish() is True  # once
    assert _notice(shell) is None and _drag(shell, demo_files / "train.conll")
    assert shell.geometry() == geometry  # built in place: the window neither moved nor resized
    assert shell.windowTitle() == "nerstudio — no corpus[*]"
    assert shell.load_corpus(str(demo_files / "train.conll"), attach=False)
    assert shell.sentence_view.words() == shell.corpus.sentences[0].words
    shell.activateWindow()
    qtbot.keyClick(shell, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)  # the keys work
    assert shell.views.workspaces.current == "annotate"
    assert shell.close()


def test_the_shell_makes_room_for_the_menus_and_the_tool_bar(shell, qapp, tmp_path):
    """The built window's menu bar, tool bar and status bar take no room from the centre: the
    shell holds the menus' titles (disabled until they are filled), a tool bar as tall as it will
    be, shown or hidden as the user left it, and a status bar."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QToolBar

    from nerstudio.gui.main_window import MainWindow

    titles = [a.text() for a in shell.menuBar().actions()]
    assert len(titles) == 7 and not any(a.isEnabled() for a in shell.menuBar().actions())
    qapp.processEvents()
    centre = shell.centralWidget().geometry()
    assert shell.finish()
    qapp.processEvents()
    assert [a.text() for a in shell.menuBar().actions()] == titles  # the same menus, filled
    assert all(a.isEnabled() and a.menu().actions() for a in shell.menuBar().actions())
    assert len(shell.findChildren(QToolBar)) == 1 and shell.toolbar.actions()
    assert shell.centralWidget().geometry() == centre

    shell.toolbar.hide()  # the user hid it: the next start's shell has none
    assert shell.close()
    again = MainWindow(QSettings(shell.settings.fileName(), QSettings.Format.IniFormat), shell=True)
    assert again.findChild(QToolBar, "mainToolbar").isHidden()
    again.deleteLater()


def test_a_failing_build_is_reported_as_a_bug_not_an_empty_window(shell, monkeypatch):
    from nerstudio.gui import dialogs, window_views

    reports = []
    monkeypatch.setattr(dialogs.Dialogs, "bug", lambda _self, _summary, tb: reports.append(tb))

    def broken(*_args, **_kwargs):
        raise RuntimeError("views exploded")

    monkeypatch.setattr(window_views, "Views", broken)
    assert shell.finish() is False and not shell.built
    assert shell.failed == "the window could not be built: RuntimeError: views exploded"
    assert reports and "views exploded" in reports[0] and "Traceback" in reports[0]
    assert "views exploded" in _notice(shell) and "a bug" in _notice(shell)
    assert shell.finish() is False and len(reports) == 1  # not built twice
    assert shell.close()  # the worker thread the build had started is stopped
    assert not shell.jobs.busy


def test_the_application_closed_before_its_window_is_built_exits_at_once(qapp, tmp_path):
    from PySide6.QtCore import QSettings

    from nerstudio.gui import app

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    windows = []

    def close_while_waiting(_app, win, fallback_ms=3000):
        windows.append(win)
        win.close()

    original = app.wait_until_exposed
    app.wait_until_exposed = close_while_waiting
    try:
        assert app._run_for_user(qapp, settings, None) == 0  # at once: no event loop to quit
    finally:
        app.wait_until_exposed = original
    (win,) = windows
    assert not win.built and not hasattr(win, "document")  # nothing was built
    win.deleteLater()


def test_the_application_closed_while_its_corpus_opens_stops_what_it_started(
    qapp, tmp_path, monkeypatch, demo_files
):
    """The demo goes on starting jobs after the window was closed under it (its loading waits in
    the event loop): they are refused, so the application never quits with a worker thread
    running (Qt aborts the process then)."""
    from PySide6.QtCore import QSettings

    from nerstudio.gui import app
    from nerstudio.gui.main_window import MainWindow
    from nerstudio.gui.workers import running_threads

    windows = []

    def load_demo(win, folder=None, start=None):
        windows.append(win)
        assert win.load_corpus(str(demo_files / "train.conll"), attach=False)
        assert win.close()  # the user closes the window meanwhile
        # what the demo does next: a job in a worker thread, after the window's shutdown —
        # refused: nothing starts once the window's jobs are shut down
        assert not win.load_nbest(str(demo_files / "model" / "train.nbest.npz"))
        assert running_threads(scan=False) == []
        return True

    monkeypatch.setattr(MainWindow, "load_demo", load_demo)
    monkeypatch.setattr(type(qapp), "exec", lambda _self: pytest.fail("the event loop ran"))
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    assert app._run_for_user(qapp, settings, None) == 0
    (win,) = windows
    assert running_threads(scan=False) == []
    win.deleteLater()


def test_the_application_whose_window_fails_to_build_says_so_and_exits_1(
    qapp, tmp_path, monkeypatch, capsys
):
    from PySide6.QtCore import QSettings

    from nerstudio import logs
    from nerstudio.gui import app, dialogs, window_views

    reports = []
    monkeypatch.setattr(dialogs.Dialogs, "bug", lambda _self, summary, _tb: reports.append(summary))

    def broken(*_args, **_kwargs):
        raise RuntimeError("views exploded")

    monkeypatch.setattr(window_views, "Views", broken)
    monkeypatch.setattr(type(qapp), "exec", lambda _self: 0)  # the user closes the window
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    assert app._run_for_user(qapp, settings, None) == 1
    assert reports == ["Starting nerstudio failed: RuntimeError: views exploded"]
    err = capsys.readouterr().err.splitlines()
    assert [x for x in err if x.startswith("nerstudio:")] == [
        "nerstudio: internal error: the window could not be built: RuntimeError: views exploded "
        f"(a bug; the details are in {logs.log_path()})"
    ]
    for w in qapp.topLevelWidgets():
        if w.objectName() == "mainWindow":
            w.close()
            w.deleteLater()


def test_waiting_for_the_first_expose_ends_on_expose_on_close_or_after_the_fallback(qapp, qtbot):
    import time

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QMainWindow

    from nerstudio.gui.app import wait_until_exposed

    never_shown = QMainWindow()
    qtbot.addWidget(never_shown)
    t0 = time.monotonic()
    wait_until_exposed(qapp, never_shown, fallback_ms=300)  # never exposed: the fallback
    assert 0.25 <= time.monotonic() - t0 < 5

    shown = QMainWindow()
    qtbot.addWidget(shown)
    shown.show()
    wait_until_exposed(qapp, shown, fallback_ms=60000)
    assert shown.windowHandle().isExposed()

    closed = QMainWindow()  # never exposed, closed while waiting: the wait ends then
    qtbot.addWidget(closed)
    QTimer.singleShot(50, closed.close)
    t0 = time.monotonic()
    wait_until_exposed(qapp, closed, fallback_ms=60000)
    assert time.monotonic() - t0 < 30


def test_the_window_module_still_offers_the_names_it_re_exported():
    import nerstudio.gui.main_window as mw
    from nerstudio.gui.controllers.files import companion_nbest
    from nerstudio.gui.controllers.training import sibling_dev

    assert mw.companion_nbest is companion_nbest and mw.sibling_dev is sibling_dev
    with pytest.raises(AttributeError):
        _ = mw.no_such_name


def test_a_job_started_while_the_window_closes_does_not_outlive_the_application(
    qapp, tmp_path, monkeypatch
):
    """Quitting could abort the process ("QThread: Destroyed while thread 'nerstudio-tagger
    N-best lists' is still running", seen on main under Xvfb): a controller started a job from
    the job service's idle signal after the window's close had shut the jobs down. The service
    now refuses any job once shut down."""
    import time

    from PySide6.QtCore import QSettings

    from nerstudio.gui import app
    from nerstudio.gui.main_window import MainWindow
    from nerstudio.gui.workers import running_threads

    windows = []

    def load_demo(win, folder=None, start=None):
        windows.append(win)
        return True

    def slow(ctx):
        for _ in range(600):  # a minute, unless cancelled
            if ctx.should_cancel():
                return None
            time.sleep(0.1)
        return None

    def the_user_quits(_self):
        (win,) = windows
        assert win.close()
        assert not win.jobs.run("late", slow)  # refused after the close's shutdown
        return 0

    monkeypatch.setattr(MainWindow, "load_demo", load_demo)
    monkeypatch.setattr(type(qapp), "exec", the_user_quits)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    t0 = time.monotonic()
    assert app._run_for_user(qapp, settings, None) == 0
    assert running_threads(scan=False) == [] and time.monotonic() - t0 < 30
    windows[0].deleteLater()
