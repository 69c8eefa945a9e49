"""Shared test configuration.

Real corpora live next to the repository, in ``../shared/data`` (never committed); point
``NERSTUDIO_SHARED_DATA`` elsewhere to use another copy. Tests that need them skip when absent.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before anything can import Qt
if os.environ["QT_QPA_PLATFORM"] == "offscreen":
    # a 1920×1200 screen (Qt's offscreen default is 800×800): the window fits its screen
    # (nerstudio.gui.screen_fit), so the tests' 1280×800 windows need a screen that large
    import json
    import tempfile

    _screen = os.path.join(tempfile.mkdtemp(prefix="nerstudio-test-screen-"), "screen.json")
    with open(_screen, "w", encoding="utf-8") as _f:
        json.dump(
            {
                "screens": [
                    {
                        "name": "test",
                        "x": 0,
                        "y": 0,
                        "width": 1920,
                        "height": 1200,
                        "logicalDpi": 96,
                        "logicalBaseDpi": 96,
                        "dpr": 1,
                    }
                ]
            },
            _f,
        )
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={_screen}"
if not os.environ.get("NERSTUDIO_LOG_DIR"):  # the log file: never the user's real folder
    import tempfile

    os.environ["NERSTUDIO_LOG_DIR"] = tempfile.mkdtemp(prefix="nerstudio-test-logs-")
if not os.environ.get("NERSTUDIO_LABEL_KEYS"):  # remembered label keys: never the user's real file
    import tempfile

    os.environ["NERSTUDIO_LABEL_KEYS"] = os.path.join(
        tempfile.mkdtemp(prefix="nerstudio-test-keys-"), "keys.json"
    )

import hashlib
import logging
import shutil
import tempfile
from pathlib import Path

import pytest
from helpers.shared_data import SKIP_REASON, shared_data_dir

_DEMO_COPIES = tempfile.mkdtemp(prefix="nerstudio-test-demo-")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ``../shared/data``; skips the test when it is absent."""
    path = shared_data_dir()
    if path is None:
        pytest.skip(SKIP_REASON)
    return path


@pytest.fixture(autouse=True)
def own_demo_copy(request, monkeypatch):
    """The window's demo opens from a per-user copy (nerstudio.app.demo_copy): each test gets a
    folder of its own (made only when a test opens the demo, removed after it), never the user's
    real one."""
    # short, as a user's folder would be: the corpus's path is shown whole in places
    name = hashlib.sha1(request.node.nodeid.encode("utf-8")).hexdigest()[:10]
    folder = os.path.join(_DEMO_COPIES, name)
    monkeypatch.setenv("NERSTUDIO_DEMO_DIR", folder)
    yield
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def demo_files(own_demo_copy) -> Path:
    """This test's copy of the bundled demo (corpora, models, N-best lists; the folder the
    window's demo opens too). A test opens these, never the package's own files: a window
    leaves its lock file beside the corpus it opens, and the package's folder must stay as
    shipped (tests/gui/test_gui_demo_copy.py checks it, in parallel with the others)."""
    from nerstudio.app.demo_copy import copy_dir, prepare

    folder = copy_dir()
    assert folder is not None
    return prepare(folder)


@pytest.fixture(autouse=True)
def no_qthread_left_running():
    """Fail a test that leaves a QThread running (checked once the GUI's workers are loaded)."""
    yield
    workers = sys.modules.get("nerstudio.gui.workers")
    if workers is None:
        return
    left = workers.running_threads()
    for t in left:
        t.quit()
        t.wait(5000)
    if left:
        pytest.fail(
            f"QThread(s) still running at the end of the test: {[t.objectName() for t in left]}"
        )


@pytest.fixture(autouse=True)
def no_child_process_left_running():
    """Fail a test that leaves a child process (a reranker training process) running."""
    yield
    import multiprocessing

    left = [p for p in multiprocessing.active_children() if p.is_alive()]
    for p in left:
        p.kill()
        p.join(5)
    if left:
        pytest.fail(
            f"child process(es) still running at the end of the test: {[p.name for p in left]}"
        )


@pytest.fixture
def make_window(qtbot, tmp_path):
    """Makes main windows with nothing open, their settings and crash-recovery files in a
    temporary folder (shared by every window it makes, as by two sessions of one user), and the
    unsaved-work questions answered "discard" so that nothing blocks."""
    from PySide6.QtCore import QSettings

    from nerstudio.gui.main_window import MainWindow

    def make():
        st = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        st.setValue("annotation/recoveryDir", str(tmp_path / "recovery"))
        st.sync()
        w = MainWindow(st)
        qtbot.addWidget(w)
        w.dialogs.ask_unsaved = lambda: "discard"
        w.dialogs.ask_unsaved_models = lambda what: "discard"
        return w

    return make


@pytest.fixture
def empty_window(make_window):
    """The main window with nothing open (see :func:`make_window`)."""
    return make_window()


@pytest.fixture
def window(empty_window):
    """The main window on the bundled demo (corpus, N-best lists, reranker); see
    :func:`empty_window`. Modules may override it."""
    w = empty_window
    assert w.load_demo()
    assert w.runner.wait(60000)
    return w


@pytest.fixture(autouse=True)
def listener_failures():
    """The document's listener failures of a test. A failing listener is only logged (the
    others and the change go on, app.document): a test fails on such a record unless it takes
    this fixture and clears the list it expected."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = records.append
    log = logging.getLogger("nerstudio.document")
    log.addHandler(handler)
    try:
        yield records
    finally:
        log.removeHandler(handler)
    if records:
        text = "\n".join(logging.Formatter().format(r) for r in records)
        pytest.fail(f"a document listener failed:\n{text}", pytrace=False)
