"""Reranker in the window: explanations, comparisons, live training curves, cancellation."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("nerstudio.rerank.model", reason="reranker core not available")

from PySide6.QtCore import Qt

from nerstudio.gui.main_window import DEMO_MODEL_DIR
from nerstudio.gui.models.nbest_model import NBestTableModel

pytestmark = pytest.mark.skipif(
    not (DEMO_MODEL_DIR / "train.nbest.npz").exists(),
    reason="demo N-best lists not built (tools/demo/build_model.py)",
)


def _set_first(panel, names, value):
    for n in names:
        if n in panel._param_widgets:
            panel.set_param(n, value)
            return n
    pytest.skip(f"the learner has none of the parameters {names}: {list(panel._param_widgets)}")


def _model(window, qtbot):
    """The demo reranker, or (when it is not built) a short perceptron trained here."""
    if window.document.scored is None:
        panel = window.training_panel
        panel.set_start("reranker")
        panel.set_algorithm("perceptron")
        _set_first(panel, ("epochs", "n_epochs", "iterations"), 3)
        assert window.start_training(panel.snapshot())
        qtbot.waitUntil(lambda: not window.runner.busy, timeout=60000)
    assert window.document.scored is not None
    return window.document.scored


def test_one_candidate_lists_its_features_and_their_contributions(window, qtbot):
    sc = _model(window, qtbot)
    k = int(np.flatnonzero(window.flags()["has_nbest"])[5])
    window.select_sentence(k)
    i = window.document.nbest_row(k)
    chosen = window.nbest_panel.model.chosen()
    assert window.nbest_panel.selected() == [chosen]
    fm = window.feature_panel.model
    assert not fm.compare_mode
    rows = fm.terms()
    assert any(r.name == "L(x)" for r in rows)
    row = window.document.data_row(i, chosen)
    assert sum(r.contribution for r in rows) == pytest.approx(sc.scores[row], abs=1e-6)
    assert not window.nbest_view.isColumnHidden(NBestTableModel.SCORE)
    # zero-weight features can be hidden (the default) ...
    fp = window.feature_panel
    zero = sum(1 for r in rows if r.weight == 0 and r.contribution == 0)
    assert fp.hidden_count() == zero
    assert len(fp.visible_feature_names()) == len(rows) - zero
    fp.hide_zero.setChecked(False)
    assert len(fp.visible_feature_names()) == len(rows)
    # ... and a search keeps only matching features
    name = next(r.name for r in rows if r.name != "L(x)")
    window.feature_panel.search.setText(name)
    assert name in window.feature_panel.visible_feature_names()
    assert all(name.lower() in n.lower() for n in window.feature_panel.visible_feature_names())


def test_two_candidates_show_the_features_that_separate_them(window, qtbot):
    sc = _model(window, qtbot)
    changed = np.flatnonzero(window.flags()["changed"])
    if not len(changed):
        pytest.skip("the demo reranker never changes the top candidate")
    k = int(changed[0])
    window.select_sentence(k)
    i = window.document.nbest_row(k)
    chosen = window.nbest_panel.model.chosen()
    assert chosen > 0
    window.nbest_panel.select(chosen, 0)  # A = the reranker's pick, B = the tagger's top candidate
    fm = window.feature_panel.model
    assert fm.compare_mode
    rows = fm.terms()
    assert rows
    ra, rb = window.document.data_row(i, chosen), window.document.data_row(i, 0)
    delta = sc.scores[ra] - sc.scores[rb]
    assert delta > 0
    assert sum(r.contribution for r in rows) == pytest.approx(delta, abs=1e-6)
    assert f"prefers candidate {chosen + 1}" in window.feature_panel.header.text()
    # only features whose value differs between A and B are listed
    assert all(r.a != r.b for r in rows)
    # and the sentence view shows candidate A
    assert window.sentence_view.candidate()[0] == window.document.nbest.spans(i, chosen)


@pytest.mark.slow
def test_perceptron_training_in_the_worker_draws_a_live_curve(window, qtbot):
    panel = window.training_panel
    window.training_dock.show()
    panel.set_start("reranker")
    panel.set_algorithm("perceptron")
    _set_first(panel, ("epochs", "n_epochs", "iterations"), 4)
    updates = []
    window.curve_plot.pointsChanged.connect(updates.append)
    n_runs = len(window.curve_plot.runs)
    qtbot.mouseClick(window.train_button, Qt.MouseButton.LeftButton)
    assert window.runner.busy
    # settings are frozen while the run is in flight
    assert not panel.rerank_box.isEnabled() and not window.train_button.isEnabled()
    assert window.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60000)
    run = window.curve_plot.runs[n_runs]
    assert run.state == "done", window.training_panel.message.text()
    assert len(run.steps) == 4 and all(f is not None for f in run.f)
    assert run.unit == "epoch" and "perceptron" in run.label
    assert updates and updates[-1] == window.curve_plot.n_points()
    assert window.curve_plot.draws >= 1
    assert window.document.model is not None and window.document.scored is not None
    assert panel.rerank_box.isEnabled() and window.train_button.isEnabled()
    window.select_sentence(3)
    assert not window.nbest_view.isColumnHidden(NBestTableModel.SCORE)


@pytest.mark.slow
def test_cancel_a_boosting_run(window, qtbot):
    panel = window.training_panel
    panel.set_start("reranker")
    panel.set_algorithm("boost")
    _set_first(panel, ("rounds", "n_rounds", "iterations"), 1_000_000)
    n_runs = len(window.curve_plot.runs)
    qtbot.mouseClick(window.train_button, Qt.MouseButton.LeftButton)
    assert window.runner.busy
    # let it get into the boosting rounds
    qtbot.waitUntil(lambda: window.curve_plot.n_points(n_runs) >= 2, timeout=60000)
    t0 = time.monotonic()
    qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=5000)
    assert time.monotonic() - t0 < 1.0
    from nerstudio.runtime.rerank_process import live_children

    assert not live_children()  # the training process is gone too
    assert window.curve_plot.runs[n_runs].state == "cancelled"
    assert window.train_button.isEnabled() and panel.rerank_box.isEnabled()
    assert "Cancelled" in panel.message.text()


def test_opening_a_reranker_reads_and_scores_it_in_the_worker(window, qtbot, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    before = window.document.scored
    assert window.load_model(str(DEMO_MODEL_DIR / "reranker.npz"))
    assert window.runner.busy and window.runner.name == "model"  # nothing read in the main thread
    qtbot.waitUntil(
        lambda: not window.runner.busy and window.document.scored is not before, timeout=30000
    )
    assert np.array_equal(window.document.scored.scores, before.scores)
    assert window.train_button.isEnabled() and window.act_train.isEnabled()
    # a file that is not a model: one clear message, the loaded model stays
    shown = []
    monkeypatch.setattr(
        QMessageBox, "critical", lambda parent, title, text: shown.append((title, text))
    )
    model = window.document.model
    assert window.load_model(str(DEMO_MODEL_DIR / "train.nbest.npz"))
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=30000)
    assert shown and shown[0][0] == "Cannot open reranker" and "train.nbest.npz" in shown[0][1]
    assert window.document.model is model
