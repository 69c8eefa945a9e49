"""The window opens the demo from the user's copy: saving never writes the installed package's
files nor leaves a lock file beside them, and a second window on the demo is read-only."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nerstudio.corpus.model import Span
from nerstudio.demo import DEMO_DIR


def _package_state() -> dict[str, str]:
    """Every file of the package's demo folder (hidden ones included) and its SHA-256."""
    return {
        p.relative_to(DEMO_DIR).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(DEMO_DIR.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.slow
@pytest.mark.data_integrity
def test_the_window_opens_and_saves_the_copy_never_the_package(make_window, tmp_path):
    before = _package_state()
    w = make_window()
    assert w.load_demo() and w.runner.wait(60000)
    w.document.set_spans(0, [Span(0, 1, "ORG")])
    assert w.save_corpus()
    assert _package_state() == before  # byte-identical, and no lock file beside them
    copy = Path(os.environ["NERSTUDIO_DEMO_DIR"])  # the tests' own copy (conftest)
    path = w.document.corpus.path
    assert path == str(copy / "train.conll")
    assert w.document.nbest_path == str(copy / "model" / "train.nbest.npz")
    assert w.document.dev_nbest_path == str(copy / "model" / "dev.nbest.npz")
    assert (copy / "train.conll").read_bytes() != (DEMO_DIR / "train.conll").read_bytes()
    # a second window on the demo is read-only, as on any file open twice
    w2 = make_window()
    w2.dialogs.ask_recover = lambda *a, **k: None
    assert w2.load_demo() and w2.runner.wait(60000)
    assert w2.document.corpus.path == path
    assert "(read-only)" in w2.windowTitle() and "(read-only)" not in w.windowTitle()
    assert w2.document.corpus.sentences[0].spans == [Span(0, 1, "ORG")]  # the saved edit
    w2.close()
    w.close()
    assert _package_state() == before
