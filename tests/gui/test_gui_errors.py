"""The application routes a failed job by exception type, as the command line does: a user error
is its one-line message, anything else a bug with its traceback."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from nerstudio.errors import DataError, FileInUse, FormatError, SettingsError
from nerstudio.gui.workers import Worker


def _failure(exc: BaseException) -> tuple[str, str]:
    def job(ctx):
        raise exc

    worker = Worker(job, "train")
    got = []
    worker.error.connect(lambda message, tb: got.append((message, tb)))
    worker.run()
    assert len(got) == 1
    return got[0]


@pytest.mark.parametrize(
    "exc",
    [
        SettingsError("--top must be 0 (all) or more"),
        DataError("training data needs gold (oracle candidates)"),
        FormatError("a.conll", 3, "bad tag"),
        FileInUse("a.conll", None, "open for editing in nerstudio by bob"),
    ],
)
def test_a_user_error_is_its_message_without_traceback(qapp, exc):
    assert _failure(exc) == (str(exc), "")


@pytest.mark.parametrize("exc", [ValueError("an index the code got wrong"), KeyError("x")])
def test_any_other_exception_is_a_bug_with_its_traceback(qapp, exc):
    message, tb = _failure(exc)
    assert message.startswith(type(exc).__name__) and "Traceback (most recent call last)" in tb
