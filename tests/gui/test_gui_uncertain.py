"""The browser's "most uncertain first" (issue 16) on the bundled demo: the order is the core's
``uncertainty_order`` for every measure, it follows a new list and a newly loaded reranker, the
filter keeps the uncertain sentences, and F7 goes to the next most uncertain one."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from nerstudio.gui.main_window import DEMO_MODEL_DIR
from nerstudio.nbest import NBestList
from nerstudio.numfmt import num
from nerstudio.rerank.model import RerankerModel
from nerstudio.rerank.uncertainty import MEASURES, uncertainty, uncertainty_order

pytestmark = pytest.mark.skipif(
    not (DEMO_MODEL_DIR / "train.nbest.npz").exists(),
    reason="demo N-best lists not built (tools/demo/build_model.py)",
)


def shown(w) -> list[int]:
    """The corpus sentences the browser lists, top to bottom."""
    p, m = w.proxy, w.tree_model
    return [m.sentence_index(p.mapToSource(p.index(r, 0))) for r in range(p.rowCount())]


def expected(doc, measure: str, model=None) -> list[int]:
    """The core's order of the attached list, as corpus sentences."""
    u = uncertainty(doc.nbest, model)
    sentence_of = {int(i): k for k, i in enumerate(doc.nbest_index.row_of) if i >= 0}
    return [sentence_of[int(i)] for i in uncertainty_order(u, measure)]


@pytest.mark.slow
def test_order_is_the_cores_for_every_measure(window):
    w, doc = window, window.document
    assert doc.nbest_index.matched == len(w.corpus)
    assert w.browser.measure() is None and not w.tree_model.flat  # the corpus order first
    # the reranker's own pick, not the window's
    model = RerankerModel.load(str(DEMO_MODEL_DIR / "reranker.npz"))
    orders = {}
    for m in MEASURES:
        w.views.uncertainty_bar.set_measure(m)
        assert w.browser.measure() == m and w.browser.act_uncertain_first.isChecked()
        orders[m] = shown(w)
        assert orders[m] == expected(doc, m, model)
    assert len({tuple(o) for o in orders.values()}) == 3  # the three measures order differently
    # the column shows the measure, formatted like every number of the window
    u = uncertainty(doc.nbest)
    w.views.uncertainty_bar.set_measure("margin")
    k = shown(w)[0]
    assert w.tree_model.index_of_sentence(k).siblingAtColumn(4).data() == num(
        u.margin[doc.nbest_row(k)], 3
    )
    assert w.tree_model.headerData(4, Qt.Orientation.Horizontal) == "margin"
    # the header sorts: the uncertainty column reverses the order, the sentence column restores the corpus's
    hdr = w.corpus_view.header()
    hdr.sectionClicked.emit(4)
    assert shown(w) == orders["margin"][::-1]
    hdr.sectionClicked.emit(0)
    assert w.browser.measure() is None and not w.tree_model.flat
    hdr.sectionClicked.emit(4)  # from the corpus order: most uncertain first by the last measure
    assert shown(w) == orders["margin"]
    # View ▸ Most uncertain first turns it off and on again
    w.browser.act_uncertain_first.trigger()
    assert w.browser.measure() is None
    w.browser.act_uncertain_first.trigger()
    assert shown(w) == orders["margin"]


def test_filter_keeps_the_uncertain_sentences(window):
    w, doc = window, window.document
    mass = uncertainty(doc.nbest).mass
    bar = w.views.uncertainty_bar
    bar.set_limit("below", 0.5)
    below = {k for k in range(len(w.corpus)) if mass[doc.nbest_row(k)] < 0.5}
    assert 0 < len(below) < len(w.corpus)
    assert set(shown_sentences(w)) == below
    bar.set_measure("margin")
    bar.set_limit("top", 7)
    assert shown(w) == expected(doc, "margin")[:7]
    bar.set_limit(None)
    assert len(shown(w)) == len(w.corpus)


def shown_sentences(w) -> list[int]:
    """Every sentence the browser shows, in the tree or flat."""
    p, m = w.proxy, w.tree_model
    out = []
    for r in range(p.rowCount()):
        idx = p.index(r, 0)
        k = m.sentence_index(p.mapToSource(idx))
        if k >= 0:
            out.append(k)
        out += [m.sentence_index(p.mapToSource(p.index(j, 0, idx))) for j in range(p.rowCount(idx))]
    return out


@pytest.mark.slow
def test_order_follows_a_new_list(window):
    w, doc = window, window.document
    w.views.uncertainty_bar.set_measure("mass")
    before = shown(w)
    old = doc.nbest_snapshot()
    # the same candidates, other scores: each sentence's L(x) scaled by its own factor
    factors = np.linspace(0.2, 3.0, len(old))[::-1]
    nb = NBestList(
        old.tagset,
        old.words,
        old.candidates,
        [lp * f for lp, f in zip(old.logprobs, factors)],
        old.gold,
        old.ids,
        old.meta,
    )
    assert w.attach_nbest(nb)
    assert w.runner.wait(60000)
    assert doc.nbest is not old and w.browser.measure() == "mass"
    after = shown(w)
    assert after == expected(doc, "mass") and after != before


@pytest.fixture
def bare(demo_files, empty_window):
    """The demo corpus with its N-best list but no reranker."""
    w = empty_window
    assert w.load_corpus(str(demo_files / "train.conll"), attach=False)
    assert w.runner.wait(60000)
    assert w.load_nbest(str(demo_files / "model" / "train.nbest.npz"))
    assert w.runner.wait(60000)
    return w


@pytest.mark.slow
def test_disagreement_needs_a_reranker_and_follows_the_one_loaded(bare):
    w, doc = bare, bare.document
    bar = w.views.uncertainty_bar
    assert doc.model is None and bar.isEnabled()
    item = bar.order.model().item(bar.order.findData("disagreement"))
    assert not item.isEnabled() and "reranker" in item.toolTip()
    w.browser.set_uncertain_first(True, "disagreement")  # refused: by mass instead
    assert w.browser.measure() == "mass" and shown(w) == expected(doc, "mass")
    assert w.load_model(str(DEMO_MODEL_DIR / "reranker.npz"))
    assert w.runner.wait(60000)
    assert doc.scored is not None and item.isEnabled()
    bar.set_measure("disagreement")
    assert shown(w) == expected(doc, "disagreement", doc.model)
    # another list: the window scores it with the loaded reranker, and the order is the new scores'
    old = doc.nbest_snapshot()
    nb = NBestList(
        old.tagset,
        old.words,
        old.candidates,
        [lp * 0.5 for lp in old.logprobs],
        old.gold,
        old.ids,
        old.meta,
    )
    assert w.attach_nbest(nb)
    assert w.runner.wait(60000)
    assert doc.nbest is not old and doc.scored is not None and w.browser.measure() == "disagreement"
    assert shown(w) == expected(doc, "disagreement", doc.model)


@pytest.mark.slow
def test_next_uncertain_key(window, qtbot):
    w, doc = window, window.document
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)  # window shortcuts need the active window
    ranked = expected(doc, "mass")
    w.select_sentence(ranked[0])
    w.corpus_view.setFocus()
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F7)
    assert w.current_sentence_index() == ranked[1]
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F7)
    assert w.current_sentence_index() == ranked[2]
    # ordered by margin (another queue: a new walk), F7 follows the margin order from its start
    # and counts the sentence the annotator was on as seen
    w.views.uncertainty_bar.set_measure("margin")
    by_margin = expected(doc, "margin")
    w.select_sentence(by_margin[3])
    walked = []
    for _ in range(5):
        w.browser.act_next_uncertain.trigger()
        walked.append(w.current_sentence_index())
    assert walked == by_margin[:3] + by_margin[4:6]
    # with the filters, only the sentences shown; the cursor moved elsewhere skips nothing
    w.status_filter.setCurrentIndex(w.status_filter.findData("error"))  # baseline wrong only
    visible = [k for k in by_margin if w.proxy.accepts(k)]
    assert 4 <= len(visible) < len(by_margin)
    queue = [k for k in visible if k != w.current_sentence_index()]
    w.browser.act_next_uncertain.trigger()
    assert w.current_sentence_index() == queue[0]
    w.select_sentence(queue[-1])  # something moved the cursor to the end of the queue
    rest = []
    for _ in range(len(queue)):
        w.browser.act_next_uncertain.trigger()
        rest.append(w.current_sentence_index())
    assert rest == queue[1:-1] + [queue[-2]] * 2  # then no more: it stays
    assert "F7" in w.shortcuts_html() and "Next most uncertain" in w.shortcuts_html()


@pytest.mark.slow
def test_next_error_follows_the_browser_order(window, qtbot):
    """F8 goes to the next wrong sentence in the order the browser shows: most uncertain first
    when it is so ordered, corpus order otherwise (and so does the step back)."""
    w, doc = window, window.document
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    wrong = doc.flags()["error"]
    assert 3 <= wrong.sum() < len(w.corpus)
    in_corpus = [int(k) for k in np.flatnonzero(wrong)]
    w.select_sentence(in_corpus[0])
    w.corpus_view.setFocus()
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F8)
    assert w.current_sentence_index() == in_corpus[1]
    w.views.uncertainty_bar.set_measure("margin")
    order = shown(w)
    in_order = [k for k in order if wrong[k]]
    assert in_order[:3] != in_corpus[:3]  # the two orders differ, so the test can tell them apart
    w.select_sentence(in_order[0])
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F8)
    assert w.current_sentence_index() == in_order[1]
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F8)
    assert w.current_sentence_index() == in_order[2]
    # from a sentence that is not wrong, F8 goes to the first wrong one after it in the order
    right = next(
        k
        for k in order[order.index(in_order[1]) + 1 :]
        if not wrong[k] and order.index(k) < order.index(in_order[-1])
    )
    w.select_sentence(right)
    w.browser.step_matching("error", 1)
    after = next(k for k in order[order.index(right) + 1 :] if wrong[k])
    assert w.current_sentence_index() == after
    w.select_sentence(right)
    w.browser.step_matching("error", -1)
    assert w.current_sentence_index() == next(
        k for k in order[: order.index(right)][::-1] if wrong[k]
    )
