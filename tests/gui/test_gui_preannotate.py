"""Annotate ▸ Pre-annotate with model… in the window (offscreen), on the demo corpus with its gold
cleared: the job runs in the worker, the document gets the model's spans as one undoable edit, the
browser's counts and the dirty flag follow, and annotators' entities are kept by default."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

import nerstudio
from nerstudio.app import preannotate as pa
from nerstudio.corpus.model import Span
from nerstudio.gui.main_window import DEMO_DIR, DEMO_MODEL_DIR, MainWindow


@pytest.fixture
def cleared_file(tmp_path):
    corpus = nerstudio.read(DEMO_DIR / "train.conll")
    for s in corpus.sentences:
        s.spans = []
    path = tmp_path / "todo.conll"
    nerstudio.write(corpus, path)
    return path


@pytest.fixture
def window(qtbot, tmp_path, cleared_file):
    st = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    st.setValue("annotation/recoveryDir", str(tmp_path / "recovery"))
    st.setValue("annotation/autosaveMs", 150)
    st.sync()
    w = MainWindow(st)
    qtbot.addWidget(w)
    w.dialogs.ask_unsaved = lambda: "discard"
    assert w.load_corpus(str(cleared_file), attach=False)
    w.show()
    return w


def _expected(path, replace=False):
    corpus = nerstudio.read(path)
    return pa.preannotate(corpus, pa.load_model(DEMO_MODEL_DIR), replace=replace)


def _run_action(w, qtbot):
    w.act_preannotate.trigger()
    qtbot.waitUntil(lambda: not w.jobs.busy and bool(w.preannotate.last), timeout=60000)


@pytest.mark.slow
def test_preannotate_action_fills_the_document_as_one_undoable_edit(window, qtbot, cleared_file):
    w, doc = window, window.document
    offered = []
    w.dialogs.ask_model_folder = lambda start: offered.append(start) or str(DEMO_MODEL_DIR)
    w.dialogs.ask_preannotate_policy = lambda *a: pytest.fail(
        "no sentence has entities: nothing to ask"
    )
    stages = []
    w.jobs.progress.connect(lambda msg, d, n: stages.append(msg))
    expected = _expected(cleared_file)
    assert expected.changed > 100 and not w.isWindowModified() and doc.history.count() == 0
    tm = w.tree_model
    k = next(iter(expected.edits))
    _run_action(w, qtbot)
    assert offered == [str(DEMO_MODEL_DIR)]  # no model loaded: the bundled demo model is offered
    assert any(m.startswith("stage 2 of 2: predicting the entities") for m in stages), stages
    # the document holds the predicted spans, nothing else changed
    assert {i: s.spans for i, s in enumerate(doc.corpus.sentences) if s.spans} == expected.edits
    assert doc.history.count() == 1 and doc.is_dirty() and w.isWindowModified()
    assert (
        f"Pre-annotated {expected.changed:,} of {len(doc.corpus):,} sentence(s)"
        in w.status.currentMessage()
    )
    # the browser counts the new entities; the types in the document's masks
    assert tm.index_of_sentence(k).siblingAtColumn(2).data() == len(expected.edits[k])
    assert set(doc.type_masks) == {sp.label for v in expected.edits.values() for sp in v}
    # autosave writes the pre-annotated gold to the recovery file, like any edit
    rec = w.annotation.recovery_file()
    qtbot.waitUntil(lambda: os.path.exists(rec), timeout=10000)
    # one Ctrl+Z undoes all of them, and the document is clean again
    w.act_undo.trigger()
    assert all(not s.spans for s in doc.corpus.sentences) and not doc.is_dirty()
    assert tm.index_of_sentence(k).siblingAtColumn(2).data() == 0
    qtbot.waitUntil(lambda: not os.path.exists(rec), timeout=10000)  # clean again: no recovery file


@pytest.mark.slow
def test_annotators_entities_are_kept_unless_replace_is_chosen(window, qtbot, cleared_file):
    w, doc = window, window.document
    mine = [Span(0, 1, "MISC")]
    doc.set_spans(0, mine, "mine")
    w.dialogs.ask_model_folder = lambda start: str(DEMO_MODEL_DIR)
    asked = []
    w.dialogs.ask_preannotate_policy = lambda n_with, n_without: (
        asked.append((n_with, n_without)) or "empty"
    )
    _run_action(w, qtbot)
    assert asked == [(1, len(doc.corpus) - 1)]
    assert doc.corpus.sentences[0].spans == mine
    full = _expected(cleared_file)
    assert {i: s.spans for i, s in enumerate(doc.corpus.sentences) if s.spans and i} == {
        i: v for i, v in full.edits.items() if i
    }
    # Replace all: sentence 0 gets the model's spans too, as one more edit
    w.preannotate.last = ""
    w.dialogs.ask_preannotate_policy = lambda *a: "all"
    _run_action(w, qtbot)
    assert doc.corpus.sentences[0].spans == full.edits.get(0, []) and doc.history.count() == 3
    w.act_undo.trigger()
    assert doc.corpus.sentences[0].spans == mine


def test_a_folder_without_model_is_one_clear_message(window, qtbot, tmp_path):
    w = window
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    w.dialogs.ask_model_folder = lambda start: str(empty)
    shown = []
    w.dialogs.critical = lambda title, text: shown.append((title, text))
    w.dialogs.failure = lambda *a: pytest.fail(f"reported as a bug: {a}")
    w.act_preannotate.trigger()
    qtbot.waitUntil(lambda: not w.jobs.busy and bool(shown), timeout=30000)
    assert (
        shown[0][0] == "Cannot pre-annotate"
        and "no tagger model" in shown[0][1]
        and str(empty) in shown[0][1]
    )
    assert w.document.history.count() == 0 and not w.document.is_dirty()


def test_cancelling_changes_nothing(window, qtbot, monkeypatch):
    """The worker holds after its first batch until the cancel arrives: the cancel lands mid-run."""
    import time

    w, doc = window, window.document
    real = pa.predict

    def gated(
        model,
        sentences,
        n=pa.N_CANDIDATES,
        batch=pa.BATCH_SENTENCES,
        progress=None,
        should_cancel=None,
    ):
        def prog(done, total):
            progress(done, total)
            t0 = time.monotonic()
            while done and not should_cancel() and time.monotonic() - t0 < 20:
                time.sleep(0.01)

        return real(model, sentences, n, 10, prog, should_cancel)

    # the job takes predict from the module when it is made
    monkeypatch.setattr(pa, "predict", gated)
    w.dialogs.ask_model_folder = lambda start: str(DEMO_MODEL_DIR)
    seen = []
    w.jobs.progress.connect(lambda msg, d, n: seen.append(msg))
    w.act_preannotate.trigger()
    qtbot.waitUntil(lambda: any("10/" in m for m in seen), timeout=30000)
    w.act_cancel.trigger()
    assert w.jobs.wait(30000)
    assert "cancelled" in w.status.currentMessage() and doc.history.count() == 0
    assert all(not s.spans for s in doc.corpus.sentences) and not doc.is_dirty()
