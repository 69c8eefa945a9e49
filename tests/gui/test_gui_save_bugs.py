"""A save that fails is always said to have failed, and *why* it failed decides the words: a user
error (a file nerstudio cannot write, a full disk) is its one-line message; anything else is a bug,
reported as an internal error with its traceback, never dressed up as a problem with the file."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from helpers.changed_on_disk import CONLL

from nerstudio.corpus.model import Span
from nerstudio.errors import FormatError


@pytest.fixture
def window(make_window, tmp_path):
    p = tmp_path / "eng.testb"
    p.write_text(CONLL, encoding="utf-8")
    w = make_window()
    assert w.load_corpus(str(p), attach=False)
    assert w.jobs.wait(30000)
    w.document.set_spans(1, [Span(0, 2, "ORG")])
    said: dict[str, list] = {"critical": [], "bug": []}
    w.dialogs.critical = lambda title, text: said["critical"].append(text)
    w.dialogs.failure = lambda title, text, details: said["bug"].append((title, text, details))
    return w, p, said


def _break_writing(monkeypatch, w, exc):
    def write_corpus(*a, **k):
        raise exc

    for name in ("write_corpus", "save_with_review"):  # without and with review states
        monkeypatch.setattr(f"nerstudio.app.saving.{name}", write_corpus)


def test_a_bug_while_saving_is_an_internal_error_with_its_traceback(window, monkeypatch):
    w, p, said = window
    before = p.read_bytes()
    _break_writing(monkeypatch, w, ValueError("an index the writer got wrong"))
    assert not w.save_corpus()
    assert said["critical"] == []
    [(title, text, details)] = said["bug"]
    assert title == "Internal error" and "Saving the corpus failed" in text and "bug" in text
    assert "an index the writer got wrong" in text and "Traceback" in details
    assert p.read_bytes() == before and w.document.is_dirty()


@pytest.mark.parametrize(
    "exc", [FormatError("eng.testb", 3, "cannot be written"), OSError(28, "No space left")]
)
def test_a_user_error_while_saving_is_its_message(window, monkeypatch, exc):
    w, _p, said = window
    _break_writing(monkeypatch, w, exc)
    assert not w.save_corpus()
    assert said["bug"] == [] and said["critical"] == [str(exc)]
