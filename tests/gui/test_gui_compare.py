"""The comparison tab on the bundled demo: baseline vs reranked, fixed/broken lists, oracle."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nerstudio.experiments.compare import compare_outputs
from nerstudio.gui.main_window import DEMO_MODEL_DIR

pytestmark = pytest.mark.skipif(
    not (DEMO_MODEL_DIR / "dev.nbest.npz").exists(),
    reason="demo N-best lists not built (tools/demo/build_model.py)",
)


@pytest.mark.slow
def test_comparison_tab_on_the_dev_list(demo_files, window, qtbot):
    # opening dev.conll attaches model/dev.nbest.npz and scores it with the demo reranker
    assert window.load_corpus(str(demo_files / "dev.conll"))
    assert window.runner.wait(30000)
    ses = window.document
    assert ses.scored is not None and ses.nbest_index.matched == len(window.corpus)
    # not built by opening a corpus (every start would pay for it): built when its tab comes
    # forward, and computed then, in a worker thread
    assert window.findChild(object, "comparisonView") is None
    tabs = window.views.inspect_tabs
    tabs.setCurrentIndex([tabs.tabText(i) for i in range(tabs.count())].index("Comparison"))
    view = window.findChild(object, "comparisonView")
    assert view is window.comparison_view
    assert view.busy and not view.refresh_button.isEnabled()
    assert not view.findChild(object, "comparisonProgress").isHidden()
    qtbot.waitUntil(lambda: view.result is not None, timeout=30000)
    assert not view.busy and view.refresh_button.isEnabled()
    res = view.result
    expect = compare_outputs(ses.nbest, ses.scored.choice)
    assert res.baseline.f1 == pytest.approx(expect.baseline.f1)
    # the same numbers as the reranker core's own P/R/F
    d = ses.scored.data
    assert res.baseline.f1 == pytest.approx(d.prf(np.zeros(len(d), dtype=np.int64))[2])
    assert res.reranked.f1 == pytest.approx(d.prf(ses.scored.choice)[2])
    assert res.oracle.f1 >= max(res.baseline.f1, res.reranked.f1)
    assert res.reranked.f1 > res.baseline.f1  # the demo reranker helps on dev
    assert f"{res.oracle.f1:.2f}" in view.header.text()
    # per type rows + overall
    assert view.table.rowCount() == len(res.types()) + 1
    assert view.table.item(view.table.rowCount() - 1, 0).text() == "overall"
    # fixed list, one click away from the browser
    view.set_kind("fixed")
    assert view.shown() == res.fixed and res.fixed
    view.activate(0)
    i = res.fixed[0]
    k = window.current_sentence_index()
    assert ses.nbest_row(k) == i
    assert window.sentence_view.words() == ses.nbest.words[i]
    view.set_kind("broken")
    assert view.shown() == res.broken
    # oracle view: gold rank per sentence
    view.set_kind("missing")
    assert all(not s.gold_rank for s in view.model.rows)
    assert len(view.shown()) == len(res.sentences) - res.gold_in_list
    view.set_kind("all")
    model = view.model
    for r in range(min(20, model.rowCount())):
        s = model.rows[r]
        txt = model.index(r, 2).data()
        assert txt == (str(s.gold_rank) if s.gold_rank else "∉")
        if s.gold_rank:
            assert set(ses.nbest.spans(s.index, s.gold_rank - 1)) == set(ses.nbest.gold[s.index])


@pytest.mark.slow
def test_comparison_follows_gold_edits(window, qtbot):
    window.tabs.setCurrentWidget(window.comparison_view)
    qtbot.waitUntil(lambda: window.comparison_view.result is not None, timeout=30000)
    res = window.comparison_view.result
    assert res is not None
    ses = window.document
    k = next(
        k
        for k in range(len(window.corpus))
        if ses.nbest_row(k) >= 0
        and res.sentences[ses.nbest_row(k)].verdict != "fixed"
        and res.sentences[ses.nbest_row(k)].choice > 0
    )
    i = ses.nbest_row(k)
    window.select_sentence(k)
    # accepting the reranker's pick as gold makes this sentence 'fixed'
    assert window.accept_candidate(res.sentences[i].choice)
    assert "Recompute" in window.comparison_view.header.text()
    window.findChild(object, "comparisonRefresh").click()
    assert window.comparison_view.busy
    qtbot.waitUntil(lambda: not window.comparison_view.busy, timeout=30000)
    assert window.comparison_view.result.sentences[i].verdict in ("fixed", "same")
    assert window.comparison_view.result.sentences[i].reranked_exact


def test_a_newer_request_replaces_a_running_comparison(window, qtbot):
    """Recompute while a comparison runs: the old one is cancelled, only the new one is shown."""
    view = window.comparison_view
    window.tabs.setCurrentWidget(view)
    shown = []
    orig = view.set_result
    view.set_result = lambda *a, **k: (shown.append(a[0]), orig(*a, **k))
    window.refresh_comparison(force=True)
    window.refresh_comparison(force=True)
    assert window.view_jobs.wait(30000)
    assert len(shown) == 1 and view.result is shown[0] and not view.busy


@pytest.mark.slow
def test_dev_list_rows_show_their_sentence_and_a_click_says_where_it_is(window, qtbot):
    """Issue 24, point 5: on the dev list (train.conll open) every row shows its words, and a click
    either goes to the same sentence in the open corpus or says in the status bar where it is."""
    view = window.comparison_view
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.result is not None and not view.busy, timeout=30000)
    view.dev_button.click()
    qtbot.waitUntil(
        lambda: window.comparison.on_dev and view.result is not None and not view.busy,
        timeout=30000,
    )
    view.set_kind("all")
    dev = window.document.dev_nbest
    model = view.model
    hdr = view.list.horizontalHeader()
    assert hdr.visualIndex(6) == 1  # the sentence right after its number
    for r in range(model.rowCount()):
        assert model.index(r, 6).data() == " ".join(dev.words[model.rows[r].index])
    k0 = window.current_sentence_index()
    view.activate(1)
    assert window.current_sentence_index() == k0  # not in train.conll: the cursor stays …
    # … and the status bar says why
    assert "not in the open corpus" in window.statusBar().currentMessage()


def test_error_analysis_cells_filter_the_browser(window, qtbot):
    """Issue 24, point 8: the comparison tab analyses the baseline and the reranked output side by
    side (F by entity and sentence length, errors by kind, as experiments.error_analysis counts
    them); a click on a cell shows in the browser only the sentences where that system errs there."""
    from nerstudio.experiments.error_analysis import error_kinds, error_sentences

    w = window
    view = w.comparison_view
    w.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.result is not None and not view.busy, timeout=30000)
    table = view.errors
    labels = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert (
        "entity of 1 word" in labels and "sentence of 11–20" in labels and "error: missed" in labels
    )
    doc = w.document
    nb = doc.nbest
    gold = list(nb.gold)
    reranked = nb.top(doc.scored.choice)
    r = labels.index("error: boundary")
    assert table.item(r, 2).text() == str(error_kinds(gold, reranked)["boundary"])
    wanted = error_sentences(nb.words, gold, reranked)["errors:boundary"]
    assert wanted
    table.cellClicked.emit(r, 2)
    n = len(w.corpus)
    rows_shown = {int(doc.nbest_index.row_of[k]) for k in range(n) if w.views.proxy.accepts(k)}
    assert rows_shown == set(wanted)
    assert "show all" in w.filter_count.text()
    w.filter_count.linkActivated.emit("all")
