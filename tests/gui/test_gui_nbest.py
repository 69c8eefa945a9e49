"""The N-best inspector on the bundled demo: candidates, sentence view, filters, session files."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from nerstudio.gui.main_window import DEMO_MODEL_DIR, MainWindow
from nerstudio.gui.models.nbest_model import NBestTableModel
from nerstudio.gui.workers import running_threads
from nerstudio.nbest import NBestList

pytestmark = pytest.mark.skipif(
    not (DEMO_MODEL_DIR / "train.nbest.npz").exists(),
    reason="demo N-best lists not built (tools/demo/build_model.py)",
)


def test_candidates_of_the_current_sentence_are_listed(window):
    ses = window.document
    nb = ses.nbest
    assert nb is not None and ses.nbest_index.matched == len(window.corpus)
    assert window.findChild(object, "nbestView") is window.nbest_view
    k = 3
    window.select_sentence(k)
    i = ses.nbest_row(k)
    model = window.nbest_panel.model
    assert model.rowCount() == nb.n_candidates(i) == 20
    # L(x) column shows the log-probabilities, best first
    shown = [float(model.index(j, NBestTableModel.LOGP).data()) for j in range(model.rowCount())]
    assert shown == sorted(shown, reverse=True)
    assert np.allclose(shown, nb.logprobs[i], atol=1e-3)
    # span F against gold is shown; a 100 means exactly the gold entities
    fcol = [float(model.index(j, NBestTableModel.F).data()) for j in range(model.rowCount())]
    gold = set(nb.gold[i])
    for j, f in enumerate(fcol):
        assert (f == 100.0) == (set(nb.spans(i, j)) == gold)
    assert not window.nbest_view.isColumnHidden(NBestTableModel.F)


def test_selecting_a_candidate_draws_it_in_the_sentence_view(window):
    ses = window.document
    k = 3
    window.select_sentence(k)
    i = ses.nbest_row(k)
    window.nbest_panel.select(4)
    assert window.sentence_view.candidate()[0] == ses.nbest.spans(i, 4)
    assert window.sentence_view.words() == window.corpus.sentences[k].words
    # the difference column names what candidate 5 adds and drops relative to the top one
    diff = window.nbest_panel.model.index(4, NBestTableModel.DIFF).data()
    extra = set(ses.nbest.spans(i, 4)) - set(ses.nbest.spans(i, 0))
    for sp in extra:
        assert f"+{sp.label} {sp.text(ses.nbest.words[i])}" in diff


def test_filters_use_the_nbest_status(window, qtbot):
    nb = window.document.nbest
    flags = window.flags()
    expected_err = [i for i in range(len(nb)) if set(nb.spans(i, 0)) != set(nb.gold[i])]
    assert list(np.flatnonzero(flags["error"])) == expected_err
    missing = [
        i
        for i in range(len(nb))
        if all(set(nb.spans(i, j)) != set(nb.gold[i]) for j in range(nb.n_candidates(i)))
    ]
    assert list(np.flatnonzero(flags["missing"])) == missing
    combo = window.status_filter
    combo.setCurrentIndex(combo.findData("error"))
    proxy = window.proxy
    shown = sum(proxy.rowCount(proxy.index(d, 0)) for d in range(proxy.rowCount()))
    assert shown == len(expected_err) > 0
    # with a type filter on top: sentences with an error AND a gold ORG entity
    window.type_filter.setCurrentIndex(window.type_filter.findData("ORG"))
    org = {
        k for k, s in enumerate(window.corpus.sentences) if any(sp.label == "ORG" for sp in s.spans)
    }
    shown = sum(proxy.rowCount(proxy.index(d, 0)) for d in range(proxy.rowCount()))
    assert shown == len(org & set(expected_err))
    # navigation stays inside the filter
    window.select_sentence(min(org & set(expected_err)))
    window.step_sentence(1)
    assert window.current_sentence_index() in org & set(expected_err)
    # the status column explains each sentence
    assert window.tree_model.status(expected_err[0]).startswith("✗")


def test_sentence_switch_shows_each_sentence(window):
    # how fast a switch is belongs to bench/sentence_view.py, not to a unit test under load
    for k in range(60):
        window.select_sentence(k)
        assert window.current_sentence_index() == k
        assert list(window.sentence_view.words()) == list(window.corpus.sentences[k].words)


@pytest.mark.slow
def test_results_folder_round_trip(window, tmp_path, qtbot):
    out = tmp_path / "results"
    written = window.save_results(str(out))
    assert "nbest" in written and "tagger" in written and "dev_nbest" in written
    nb = NBestList.load(out / "train.nbest.npz")
    assert len(nb) == len(window.document.nbest)
    w2 = MainWindow(QSettings(str(tmp_path / "s2.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w2)
    assert w2.load_results(str(out))
    assert w2.runner.wait(30000)
    assert w2.session.nbest is not None and w2.session.tagger is not None
    assert len(w2.corpus) == len(window.corpus)
    w2.select_sentence(2)
    assert w2.nbest_panel.model.rowCount() == 20


def test_closing_the_window_stops_a_running_job(window, qtbot):
    from nerstudio.errors import Cancelled

    def job(ctx):
        while not ctx.should_cancel():
            time.sleep(0.01)
        raise Cancelled()

    assert window.runner.start("endless", job)
    assert window.runner.busy and running_threads()
    window.close()
    assert not running_threads()


def test_the_browser_status_texts_equal_the_one_sentence_rule():
    """The table-driven texts of the whole corpus agree with status_text sentence by sentence,
    for every combination of flags, with and without a reranker."""
    import itertools

    from nerstudio.gui.models.corpus_model import status_text, status_texts

    combos = list(itertools.product((False, True), repeat=5))
    cols = list(zip(*combos))
    for with_reranker in (True, False):
        flags = {
            name: np.array(col)
            for name, col in zip(("has_nbest", "error", "changed", "missing", "rerank_error"), cols)
        }
        if not with_reranker:
            del flags["rerank_error"]
        assert status_texts(flags) == [status_text(flags, k) for k in range(len(combos))]
