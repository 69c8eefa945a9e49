"""Explanations in words and honest numbers in the widgets: the feature panel's descriptions and
why sentence, the model-feature view, the curves (one plot per unit), no "-0.000" on screen."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PySide6.QtCore import QModelIndex

from nerstudio.demo import DEMO_MODEL_DIR as DEMO
from nerstudio.gui.controllers.model_features import importance_job
from nerstudio.gui.models.feature_model import TermRow, rows_from_terms
from nerstudio.gui.models.importance_model import ImportanceTreeModel
from nerstudio.gui.models.nbest_model import NBestTableModel
from nerstudio.gui.models.roles import DISPLAY, TOOLTIP
from nerstudio.gui.views.curve_plot import CurvePlot, Run, draw_runs
from nerstudio.gui.views.feature_view import FeaturePanel
from nerstudio.gui.views.model_features import ModelFeaturesView
from nerstudio.nbest import NBestList
from nerstudio.rerank.glossary import describe, describe_template
from nerstudio.rerank.importance import model_importance
from nerstudio.rerank.model import RerankerModel

# "-0", "-0.000"; not "-0.0004" nor a shape "0-0-00"
NEG_ZERO = re.compile(r"(?<![\w.-])[-−]0(\.0+)?(?![\w.])")
needs_demo = pytest.mark.skipif(not (DEMO / "reranker.npz").exists(), reason="demo model not built")


@pytest.fixture(scope="module")
def demo():
    model = RerankerModel.load(DEMO / "reranker.npz")
    nb = NBestList.load(DEMO / "dev.nbest.npz")
    data = model.data(nb)
    return model, nb, data, model.predict(data)


def _all_text(model, role=DISPLAY, parent=QModelIndex()):
    out = []
    for r in range(model.rowCount(parent)):
        for c in range(model.columnCount(parent)):
            v = model.data(model.index(r, c, parent), role)
            if v is not None:
                out.append(str(v))
        out += _all_text(model, role, model.index(r, 0, parent))
    return out


def _pair(demo):
    model, _nb, data, pick = demo
    i = int(np.flatnonzero(pick != 0)[0])
    ra, rb = int(data.offsets[i] + pick[i]), int(data.offsets[i])
    cmp_ = model.compare(data, ra, rb)
    return cmp_, f"candidate {pick[i] + 1}", "candidate 1"


@needs_demo
@pytest.mark.ux
def test_feature_rows_and_group_headers_carry_the_template_descriptions(qtbot, demo):
    model, _nb, data, pick = demo
    panel = FeaturePanel()
    qtbot.addWidget(panel)
    exs = [
        model.explain(data, int(data.offsets[i] + pick[i])) for i in np.flatnonzero(pick != 0)[:10]
    ]
    ex = max(exs, key=lambda e: sum(t.contribution != 0 for t in e.terms))  # the richest of a few
    panel.show_explanation(rows_from_terms(ex.terms), "Candidate 1", ex.score)
    fm = panel.model
    assert fm.rowCount() > 3
    for g in range(fm.rowCount()):
        head = fm.index(g, 0)
        code = fm._groups[g][0]
        assert describe_template(code) in fm.data(head, DISPLAY)
        assert describe_template(code) in fm.data(head, TOOLTIP)
        for r in range(fm.rowCount(head)):
            row = fm.term_at(fm.index(r, 0, head))
            assert fm.data(fm.index(r, 0, head), TOOLTIP).startswith(
                describe(row.name, row.template)
            )
    assert "score " in panel.header.text() and "L(x) term" in panel.header.text()


@needs_demo
@pytest.mark.ux
def test_why_sentence_names_the_tables_top_rows_in_its_order(qtbot, demo):
    cmp_, a, b = _pair(demo)
    panel = FeaturePanel()
    qtbot.addWidget(panel)
    panel.show_comparison(
        rows_from_terms(cmp_.terms, compare=True), a, b, cmp_.delta, scores=(1.0, 0.5)
    )
    fm = panel.model

    def top_groups(k):
        return [fm._groups[g][0] for g in range(min(k, fm.rowCount()))]

    text = panel.why_text()
    assert f"prefers {a} to {b}" in text
    codes = [("L(x)" if c == "L" else c) for c in top_groups(2)]
    where = [text.index(f"({c})") for c in codes]
    assert where == sorted(where), (codes, text)
    assert describe_template(top_groups(1)[0]) in text  # in words, not only the code
    assert text in panel.header.text().replace("<b>", "").replace("</b>", "").replace("&#x27;", "'")
    # flat list: the sentence follows the table again
    panel.group.setChecked(False)
    flat = panel.why_text()
    first = fm.term_at(fm.index(0, 0))
    assert flat != text and (first.name.partition("=")[2] in flat or first.name == "L(x)")
    # hiding zero weights changes neither the order nor the sentence's top rows (they weigh nothing)
    panel.hide_zero.setChecked(False)
    assert panel.why_text() == flat
    assert "zero-weight" not in panel.header.text()


@pytest.mark.ux
def test_no_negative_zero_in_the_feature_and_nbest_tables(qtbot):
    panel = FeaturePanel()
    qtbot.addWidget(panel)
    rows = [
        TermRow("L(x)", "L", -0.0001, -0.0002, 0.5, -0.00005),
        TermRow("BO01=in Aa0", "BO01", 1.0, 0.0, -0.0004, -0.0004),
        TermRow("WE=Acme", "WE", -0.0, 1.0, 0.3, -0.0),
    ]
    panel.show_comparison(rows, "candidate 2", "candidate 1", -0.0004, scores=(-0.0001, 0.0003))
    shown = (
        _all_text(panel.model)
        + _all_text(panel.model, TOOLTIP)
        + [panel.header.text(), panel.why_text()]
    )
    assert not any(NEG_ZERO.search(s) for s in shown), shown
    assert "0.000" in panel.header.text()  # the values are there, shown as zero
    panel.show_explanation(rows, "Candidate 2", -0.0002)
    assert not NEG_ZERO.search(panel.header.text())
    nm = NBestTableModel()
    nm.set_candidates(("a", "b"), [[], []], [-0.0001, -1.0], scores=[-0.0004, -0.5])
    texts = _all_text(nm)
    assert "0.000" in texts and not any(NEG_ZERO.search(s) for s in texts)


@needs_demo
def test_model_features_view_lists_templates_and_requests_their_sentences(qtbot, demo):
    model, nb, data, _pick = demo
    view = ModelFeaturesView()
    qtbot.addWidget(view)
    res = model_importance(model, data)
    view.set_result(res, "dev")
    m = view.model
    assert m.rowCount() == len(res.templates)
    assert sum(m.rowCount(m.index(g, 0)) for g in range(m.rowCount())) == len(res.features)
    assert describe_template(res.templates[0].template) in m.data(
        m.index(0, ImportanceTreeModel.MEANING)
    )
    got = []
    view.sentencesRequested.connect(got.append)
    view.tree.clicked.emit(view.proxy.index(0, ImportanceTreeModel.MOVES))
    view.tree.clicked.emit(view.proxy.index(0, ImportanceTreeModel.RESISTS))
    assert got == [res.templates[0].sentences_for, res.templates[0].sentences_against]
    child = view.proxy.index(0, ImportanceTreeModel.NAME, view.proxy.index(0, 0))
    view.tree.clicked.emit(child)
    feat = next(f for f in res.features if f.template == res.templates[0].template)
    assert got[-1] == feat.sentences_for
    assert all(0 <= s < len(nb) for s in got[-1])
    # a search keeps the templates whose name or meaning matches
    view.search.setText("word after the entity")
    kept = {view.proxy.index(r, 0).data() for r in range(view.proxy.rowCount())}
    assert kept and len(kept) < len(res.templates)
    assert all("word after the entity" in describe_template(k) for k in kept)
    # switching what the pick is compared with asks for a recomputation; the job computes it
    asked = []
    view.refreshRequested.connect(lambda: asked.append(view.against()))
    view.set_against("runner-up")
    assert asked == ["runner-up"]

    class Ctx:
        def should_cancel(self):
            return False

    again = importance_job(model, data, view.against())(Ctx())
    assert again.against == "runner-up" and len(again.decisions) >= len(res.decisions)
    assert not any(NEG_ZERO.search(s) for s in _all_text(m))


def _run(label, unit, corpus=""):
    return Run(
        label, unit, 80.0, [1, 2, 3], [None] * 3, [None] * 3, [81.0, 82.0, 81.5], [], "done", corpus
    )


@pytest.mark.ux
def test_boosting_rounds_and_perceptron_epochs_never_share_an_axes():
    fig = Figure(figsize=(8, 3))
    FigureCanvasAgg(fig)
    runs = [
        _run("boosting", "round", "eng.train"),
        _run("averaged perceptron", "epoch", "demo train.conll"),
        _run("voted perceptron", "epoch", "demo train.conll"),
    ]
    axes = draw_runs(fig, runs, True, True, True)
    assert set(axes) == {"round", "epoch"} and len(fig.axes) == 2  # two plots, no twin axis
    ra, ea = axes["round"], axes["epoch"]
    assert ra is not ea
    assert ra.get_shared_x_axes().get_siblings(ra) == [ra] and ea.get_shared_x_axes().get_siblings(
        ea
    ) == [ea]
    assert ra.get_xlabel() == "boosting round" and ea.get_xlabel() == "epoch"
    labels = {ax: [t.get_text() for t in ax.get_legend().get_texts()] for ax in (ra, ea)}
    assert labels[ra] == ["boosting · on eng.train"]
    assert labels[ea] == [
        "averaged perceptron · on demo train.conll",
        "voted perceptron · on demo train.conll",
    ]
    # a tall area stacks the two plots; they still have their own x axes
    tall = Figure(figsize=(3, 4))
    FigureCanvasAgg(tall)
    stacked = draw_runs(tall, runs, False, False, False)
    assert [ax.get_subplotspec().get_geometry()[:2] for ax in stacked.values()] == [(2, 1), (2, 1)]
    assert all(ax.get_shared_x_axes().get_siblings(ax) == [ax] for ax in stacked.values())
    assert [ax.get_xlabel() for ax in stacked.values()] == ["boosting round", "epoch"]
    # one unit alone: one plot
    fig2 = Figure()
    FigureCanvasAgg(fig2)
    assert list(draw_runs(fig2, runs[1:], False, False, False)) == ["epoch"] and len(fig2.axes) == 1


@pytest.mark.ux
def test_a_curve_of_one_point_counts_in_whole_numbers():
    """A run's first epoch alone: the x axis shows epochs 1 and 2, not 0.945 … 1.065."""
    fig = Figure()
    FigureCanvasAgg(fig)
    run = Run("averaged", "epoch", None, [1], [None], [None], [80.5], [], "running", "train")
    ax = draw_runs(fig, [run], False, False, False)["epoch"]
    lo, hi = ax.get_xlim()
    assert [t for t in ax.get_xticks() if lo <= t <= hi] == [1, 2]


@pytest.mark.ux
def test_curve_widget_keeps_its_old_calls_and_names_the_corpus(qtbot, tmp_path):
    plot = CurvePlot()
    qtbot.addWidget(plot)
    a = plot.start_run("boosting", "round", 80.0)  # the old signature
    b = plot.start_run("averaged", "epoch", None, corpus="train.conll")
    plot.add_points(a, [{"step": 100, "dev_f1": 81.0}, {"step": 200, "dev_f1": 82.0}])
    plot.add_points(b, [{"step": 1, "dev_f1": 80.5}])
    plot.finish_run(a)
    plot.finish_run(b)
    plot.export_image(str(tmp_path / "c.png"))
    plot.export_csv(str(tmp_path / "c.csv"))
    assert (tmp_path / "c.png").stat().st_size > 0
    lines = (tmp_path / "c.csv").read_text().splitlines()
    assert lines[0].endswith(",corpus") and lines[-1].endswith(",train.conll")


@pytest.mark.ux
def test_model_features_tab_ranks_the_demo_reranker_and_filters_the_browser(window, qtbot):
    """The Model features tab computes the corpus-wide ranking when shown; a click on a row shows
    in the browser only the sentences where that template moves the decision, and 'show all'
    brings the rest back."""
    w = window
    view = w.model_features_view
    w.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.result is not None, timeout=60000)
    res = view.result
    assert res.decisions and res.templates
    top = view.proxy.index(0, 0)
    wanted = view.sentences_at(top)
    assert wanted, "the top template moves at least one decision"
    with qtbot.waitSignal(view.sentencesRequested):
        view.tree.clicked.emit(top)
    n = len(w.corpus)
    rows_shown = {
        int(w.document.nbest_index.row_of[k]) for k in range(n) if w.views.proxy.accepts(k)
    }
    assert rows_shown == set(wanted)
    assert "show all" in w.filter_count.text()
    assert w.document.nbest_row(w.sentence_cursor.k) in set(wanted)
    w.filter_count.linkActivated.emit("all")
    assert all(w.views.proxy.accepts(k) for k in range(n))
