"""The log file (nerstudio.logs): where it is, what the command line, child processes and the
application record in it (errors with their tracebacks), and that --debug shows the same."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from helpers import ROOT

from nerstudio import logs
from nerstudio.cli import commands, main

DEMO = ROOT / "nerstudio" / "demo"


@pytest.fixture
def log_file(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("NERSTUDIO_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.delenv("NERSTUDIO_DEBUG", raising=False)
    logs.setup()
    yield tmp_path / "logs" / "nerstudio.log"
    logs.reset()


def _flush():
    for h in logs.logger().handlers:
        h.flush()


def test_the_log_folder_follows_the_platform_conventions(monkeypatch, tmp_path):
    monkeypatch.setenv("NERSTUDIO_LOG_DIR", str(tmp_path / "custom"))
    assert logs.log_dir() == tmp_path / "custom"
    monkeypatch.delenv("NERSTUDIO_LOG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
        assert logs.log_dir() == tmp_path / "state" / "nerstudio" / "logs"
        monkeypatch.setenv("XDG_STATE_HOME", "relative/path")  # the XDG spec: ignore relative paths
        assert logs.log_dir() == tmp_path / "home" / ".local" / "state" / "nerstudio" / "logs"
        monkeypatch.delenv("XDG_STATE_HOME")
        assert logs.log_dir() == tmp_path / "home" / ".local" / "state" / "nerstudio" / "logs"
    assert logs.log_path().name == "nerstudio.log"
    assert not logs.log_dir().exists()  # asking is not creating
    assert logs.ensure_log_dir().is_dir()


def test_the_tests_never_write_into_the_real_folder():
    assert os.environ.get("NERSTUDIO_LOG_DIR")
    assert (
        not Path(os.environ["NERSTUDIO_LOG_DIR"])
        .resolve()
        .is_relative_to(Path.home() / ".local" / "state")
    )


def test_a_user_error_is_one_line_on_stderr_and_logged_with_its_traceback(
    log_file, tmp_path, capsys
):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a b", "spans": 5}\n')
    assert main(["stats", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    _flush()
    text = log_file.read_text()
    assert (
        f'{bad}:1: "spans" must be a list of spans' in text and f"(nerstudio stats {bad})" in text
    )
    assert "Traceback (most recent call last)" in text and "nerstudio.errors.FormatError" in text


def test_an_internal_error_points_to_the_log_which_holds_the_traceback(
    log_file, tmp_path, capsys, monkeypatch
):

    def boom(args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(commands.module("stats"), "run", boom)
    assert main(["stats", str(tmp_path / "x")]) == 3
    err = capsys.readouterr().err
    assert (
        err
        == f"nerstudio: internal error: ZeroDivisionError: a bug (a bug; the details are in {log_file})\n"
    )
    _flush()
    text = log_file.read_text()
    assert "internal error: ZeroDivisionError: a bug" in text and "in boom" in text


def test_debug_shows_on_stderr_what_the_log_records(log_file, tmp_path, capsys):
    missing = tmp_path / "missing.conll"
    assert main(["--debug", "stats", str(missing)]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "FormatError" in err
    assert err.splitlines()[-1] == f"nerstudio: error: {missing}: no such file"
    _flush()
    assert "Traceback (most recent call last)" in log_file.read_text()


@pytest.mark.slow
def test_a_child_process_traceback_is_logged(log_file):
    """The child's traceback used to be dropped unless NERSTUDIO_DEBUG was set."""
    from nerstudio.nbest import NBestList
    from nerstudio.runtime.rerank_process import ChildProcessFailed, train_in_child

    train = NBestList.load(DEMO / "model" / "train.nbest.npz")
    with pytest.raises(ChildProcessFailed) as info:
        train_in_child(train, None, "perceptron", {"no_such_setting": 3}, {"min_sentences": 2})
    assert "\n" not in str(info.value)
    _flush()
    text = log_file.read_text()
    assert "child process" in text and "perceptron has no parameter no_such_setting" in text
    assert info.value.details.strip().splitlines()[-1] in text  # the child's own traceback
    assert "Traceback (most recent call last)" in text and "_child_main" in text


def test_a_killed_child_is_logged_too(log_file, monkeypatch):
    from nerstudio.runtime import child_process

    with pytest.raises(child_process.ChildProcessFailed, match="exit status 7"):
        child_process.run_in_child(_exit_7, {}, name="nerstudio-test-child")
    _flush()
    assert (
        "nerstudio-test-child" in log_file.read_text() and "exit status 7" in log_file.read_text()
    )


def _exit_7(spec, out, should_cancel):
    os._exit(7)


def test_the_log_rotates(log_file, monkeypatch):
    monkeypatch.setattr(logs, "MAX_BYTES", 5000)
    logs.setup()
    for k in range(200):
        logs.log_error(
            f"error number {k}", "Traceback (most recent call last):\n  a frame\nValueError: x"
        )
    _flush()
    names = sorted(p.name for p in log_file.parent.iterdir())
    assert names == ["nerstudio.log", "nerstudio.log.1", "nerstudio.log.2", "nerstudio.log.3"]
    assert all(p.stat().st_size <= 5000 + 200 for p in log_file.parent.iterdir())


def test_a_log_folder_that_cannot_be_made_does_not_break_anything(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("NERSTUDIO_LOG_DIR", str(blocker / "logs"))
    assert logs.setup() is None
    assert main(["stats", str(tmp_path / "missing")]) == 1
    assert capsys.readouterr().err == f"nerstudio: error: {tmp_path / 'missing'}: no such file\n"
    logs.reset()


def test_unhandled_exceptions_of_the_application_are_logged(log_file, capsys, monkeypatch):
    from nerstudio.gui import app

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    app.install_excepthooks()
    try:
        raise KeyError("in a slot")
    except KeyError:
        sys.excepthook(*sys.exc_info())
    t = threading.Thread(target=_raise_in_thread, name="worker-x")
    t.start()
    t.join()
    err = capsys.readouterr().err
    assert "nerstudio: internal error: KeyError: 'in a slot'" in err and "Traceback" not in err
    _flush()
    text = log_file.read_text()
    assert (
        "unhandled KeyError: 'in a slot'" in text
        and "unhandled RuntimeError in thread worker-x" in text
    )
    assert text.count("Traceback (most recent call last)") == 2


def _raise_in_thread():
    raise RuntimeError("from a thread")


def test_the_applications_bug_reports_are_logged(log_file, qtbot):
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QWidget

    from nerstudio.gui.dialogs import Dialogs

    parent = QWidget()
    qtbot.addWidget(parent)
    Dialogs(
        parent, QSettings(str(log_file.parent / "settings.ini"), QSettings.Format.IniFormat)
    ).failure(
        "Job failed",
        "train: ValueError: x",
        "Traceback (most recent call last):\n  in fit\nValueError: x",
    )
    _flush()
    text = log_file.read_text()
    assert "Job failed: train: ValueError: x" in text and "in fit" in text


def test_help_opens_the_log_folder(window, monkeypatch):
    """Help ▸ Open log folder shows the folder the log file is written to."""
    from PySide6.QtGui import QDesktopServices

    from nerstudio import logs

    opened = []
    monkeypatch.setattr(
        QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True
    )
    action = next(
        a for a in window.findChildren(type(window.act_undo)) if a.text() == "Open &log folder"
    )
    action.trigger()
    assert opened == [str(logs.ensure_log_dir())]
