"""K&T sequence taggers in the application (issue 7, item 5): the training panel's second family,
training in a child process with a per-epoch curve, the N-best panel filled with the new model's
candidates and the feature panel showing the non-local features of their document candidates."""

from __future__ import annotations

import time

import numpy as np
import pytest

from nerstudio.demo import DEMO_DIR
from nerstudio.errors import SettingsError

DEMO = DEMO_DIR
pytestmark = [
    pytest.mark.slow,  # the sequence taggers trained in the window: most tests take over 5 s
    pytest.mark.skipif(not (DEMO / "dev.conll").exists(), reason="demo corpus missing"),
]


def _choose(w, kind, **params):
    p = w.training_panel
    p.set_start("kt")
    p.set_kt_algorithm(kind)
    for k, v in params.items():
        p.set_kt_param(k, v)
    p.dev_path.setText(str(DEMO / "dev.conll"))


def _first_sentence_with_choices(w):
    ses = w.document
    for k in range(len(w.corpus)):
        i = ses.nbest_row(k)
        if i >= 0 and ses.nbest.n_candidates(i) >= 2 and len(set(ses.kt.origin[i])) >= 2:
            return k
    return None


def test_core_lists_and_origin_agree_with_the_model(tmp_path):
    """In this process (no Qt): the shown candidates are the joint model's, their origin points to
    document candidates whose restriction they are, and the explanation adds up."""
    from nerstudio.app.attachments import KTCandidates
    from nerstudio.corpus.formats import read_corpus
    from nerstudio.runtime.tagger_process import (
        display_lists,
        load_origin,
        save_origin,
        train_tagger,
    )

    tr, dv = read_corpus(DEMO / "train.conll"), read_corpus(DEMO / "dev.conll")
    pts = []
    m = train_tagger(
        "proposed",
        {"C": 100.0, "epochs": 2, "bpm": 0, "n": 3, "n_test": 4},
        tr,
        dv,
        callback=pts.append,
    )
    assert [p["step"] for p in pts] == [1, 2] and all(p["dev_f1"] is not None for p in pts)
    doc, sent, origin = display_lists(m, tr)
    assert len(sent) == len(tr) and sent.words[0] == tr.sentences[0].words
    kt = KTCandidates.build(m, doc, origin)
    for i in range(0, len(sent), 37):
        for j in range(sent.n_candidates(i)):
            d, jj = kt.document_candidate(i, j)
            a = int(kt.start_of[i])
            assert np.array_equal(
                doc.candidates[d][jj, a : a + len(sent.words[i])], sent.candidates[i][j]
            )
            _terms, total, nl, _, _ = kt.explain(i, j)
            assert total == pytest.approx(float(sent.logprobs[i][j]))
            # brute force: Σ count·weight over the model's own term list
            ref = sum(c * w for _, c, w in m.nonlocal_terms(doc.words[d], doc.spans(d, jj)))
            assert nl == pytest.approx(ref)
    path = tmp_path / "origin.npz"
    save_origin(path, origin)
    assert load_origin(path) == origin


def test_proposed_trained_through_the_gui(window, qtbot):
    w = window
    _choose(w, "proposed", C=100.0, epochs=2, n=3, n_test=4, bpm=0)
    s = w.training_panel.snapshot()
    assert s.start == "kt" and s.kt_algo == "proposed" and s.kt_params["n"] == 3
    assert "proposed(" in s.label() and "n'=4" in s.label()
    points = []
    w.curve_plot.pointsChanged.connect(points.append)
    assert w.start_training(s)
    assert not w.training_panel.kt_box.isEnabled()  # frozen during the run
    assert w.runner.wait(60000), "training did not finish"
    assert not w.last_error, w.last_error
    run = w.curve_plot.runs[-1]
    assert run.steps == [1.0, 2.0] and run.unit == "epoch" and all(f is not None for f in run.f)
    assert run.state == "done" and points
    ses = w.document
    assert ses.kt is not None and ses.kt.joint and ses.kt_model is not None
    assert ses.nbest is not None and len(ses.nbest) == len(w.corpus)
    assert w.training_panel.kt_box.isEnabled()
    k = _first_sentence_with_choices(w)
    assert k is not None
    w.select_sentence(k)
    qtbot.wait(10)
    w.show_sentence(k)
    m = w.nbest_panel.model
    from PySide6.QtCore import Qt

    assert m.headerData(m.LOGP, Qt.Orientation.Horizontal) == "score"
    assert m.rowCount() == ses.nbest.n_candidates(ses.nbest_row(k))
    w.nbest_panel.select(0)
    fm = w.feature_panel.model
    terms = fm.terms()
    assert terms and {t.template for t in terms} <= {"PC", "SP", "MJ", "MJS", "MJT", "CJ"}
    assert any(t.weight != 0 for t in terms)
    assert all(t.contribution == pytest.approx(t.a * t.weight) for t in terms)
    head = w.feature_panel.header.text()
    assert "local" in head and "non-local" in head
    # two candidates from different document candidates: the separating non-local features
    i = ses.nbest_row(k)
    a, b = (
        0,
        next(
            j
            for j in range(1, ses.nbest.n_candidates(i))
            if ses.kt.origin[i][j] != ses.kt.origin[i][0]
        ),
    )
    w.nbest_panel.select(a, b)
    assert fm.compare_mode
    rows = fm.terms()
    assert all(r.a != r.b for r in rows)
    ta = {t[0]: t[2] for t in ses.kt.explain(i, a)[0]}
    tb = {t[0]: t[2] for t in ses.kt.explain(i, b)[0]}
    assert {r.name for r in rows} == {n for n in set(ta) | set(tb) if ta.get(n, 0) != tb.get(n, 0)}
    assert "A − B" in w.feature_panel.header.text()
    # a search narrows the list to one family
    fam = rows[0].template if rows else terms[0].template
    w.nbest_panel.select(0)
    w.feature_panel.search.setText(fam)
    assert w.feature_panel.visible_feature_names()
    w.feature_panel.search.setText("")


def test_margin_run_cancelled(window):
    w = window
    _choose(w, "margin", C=300.0, epochs=100000, bpm=0, n_test=3)
    before = w.document.nbest
    assert w.start_training(w.training_panel.snapshot())
    t_end = time.monotonic() + 60
    from PySide6.QtCore import QCoreApplication

    while (
        w.curve_plot.n_points(w.training.run_curve) < 2
        and time.monotonic() < t_end
        and w.runner.busy
    ):
        QCoreApplication.processEvents()
        time.sleep(0.01)
    assert w.curve_plot.n_points(w.training.run_curve) >= 2
    t0 = time.monotonic()
    w.cancel_job()
    assert w.runner.wait(10000)
    assert time.monotonic() - t0 < 1.5
    assert w.curve_plot.runs[-1].state == "cancelled"
    assert w.document.nbest is before and w.document.kt is None  # nothing installed
    assert w.training_panel.kt_box.isEnabled()


# ------------------------------------------------------------------------------------------------
# saved models: File > Open sequence tagger, the session folder, a corrupt file


@pytest.fixture(scope="module")
def saved_models(tmp_path_factory):
    """A tiny joint (proposed) and a tiny averaged perceptron tagger trained on the demo, saved."""
    from nerstudio.corpus.formats import read_corpus
    from nerstudio.runtime.tagger_process import train_tagger

    folder = tmp_path_factory.mktemp("kt-models")
    tr = read_corpus(DEMO / "train.conll")
    joint = train_tagger("proposed", {"C": 100.0, "epochs": 1, "bpm": 0, "n": 3, "n_test": 4}, tr)
    joint.save(folder / "joint.npz")
    perc = train_tagger("averaged", {"C": 0.0, "epochs": 1, "bpm": 0, "n_test": 3}, tr)
    perc.save(folder / "perceptron.npz")
    return {
        "joint": (folder / "joint.npz", joint),
        "perceptron": (folder / "perceptron.npz", perc),
        "corpus": tr,
    }


def test_decoding_in_batches_of_documents_gives_the_same_lists(saved_models):
    from nerstudio.runtime.tagger_process import display_lists, document_chunks

    tr = saved_models["corpus"]
    chunks = document_chunks(tr, 500)
    assert len(chunks) > 2 and sum(len(c.documents) for c in chunks) == len(tr.documents)
    for key in ("joint", "perceptron"):
        m = saved_models[key][1]
        seen = []
        one = display_lists(m, tr, 4, chunk_tokens=10**9)
        many = display_lists(
            m, tr, 4, progress=lambda msg, d, n: seen.append((d, n)), chunk_tokens=500
        )
        assert seen[-1] == (tr.n_tokens, tr.n_tokens) and len(seen) == len(chunks)
        assert [d for d, _ in seen] == sorted(d for d, _ in seen)
        for a, b in zip(one[:2], many[:2]):
            assert a.ids == b.ids and a.words == b.words and a.gold == b.gold
            assert a.meta == b.meta
            assert all(np.array_equal(x, y) for x, y in zip(a.candidates, b.candidates))
            assert all(np.array_equal(x, y) for x, y in zip(a.logprobs, b.logprobs))
        assert one[2] == many[2]
    from nerstudio.errors import Cancelled

    with pytest.raises(Cancelled):
        display_lists(saved_models["joint"][1], tr, 4, should_cancel=lambda: True)


def _open_kt(w, path, n=None):
    assert w.load_kt_model(str(path), n)
    assert w.runner.wait(60000), "opening did not finish"
    assert not w.last_error, w.last_error


@pytest.mark.parametrize("key", ["joint", "perceptron"])
def test_file_open_sequence_tagger(window, qtbot, saved_models, key):
    """File > Open sequence tagger: the model is read and the corpus decoded in a child process;
    the N-best panel shows the model's own candidates (as decoded in this process)."""
    from nerstudio.runtime.tagger_process import display_lists

    w = window
    path, model = saved_models[key]
    _open_kt(w, path)
    ses = w.document
    assert (
        ses.kt is not None and ses.kt.joint == (key == "joint") and ses.kt_model_path == str(path)
    )
    assert type(ses.kt_model) is type(model)
    doc, sent, origin = display_lists(model, w.corpus)
    assert len(ses.nbest) == len(w.corpus) == len(sent)
    assert ses.nbest.ids == sent.ids and ses.kt.origin == origin
    for i in range(0, len(sent), 17):
        assert np.array_equal(ses.nbest.candidates[i], sent.candidates[i])
        assert np.allclose(ses.nbest.logprobs[i], sent.logprobs[i])
    kd = ses.kt.doc_nbest
    # the model's n'
    assert max(kd.n_candidates(d) for d in range(len(kd))) == (4 if key == "joint" else 20)
    assert max(doc.n_candidates(d) for d in range(len(doc))) == (4 if key == "joint" else 20)
    assert "opened" in w.status.currentMessage()
    w.select_sentence(1)
    w.show_sentence(1)
    w.nbest_panel.select(0)
    if key == "joint":
        assert "non-local" in w.feature_panel.header.text()


def test_session_folder_restores_the_sequence_tagger_and_its_candidates(
    window, qtbot, tmp_path, saved_models
):
    from PySide6.QtCore import QSettings

    from nerstudio.gui.main_window import MainWindow

    w = window
    path, model = saved_models["joint"]
    _open_kt(w, path, 3)  # not the model's n' = 4: the folder keeps the size of the shown lists
    shown = w.document.nbest
    out = tmp_path / "results"
    written = w.save_results(str(out))
    assert "kt_model" in written and (out / "sequence-tagger.npz").is_file()
    w2 = MainWindow(QSettings(str(tmp_path / "s2.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w2)
    w2.ask_unsaved = lambda: "discard"
    assert w2.load_results(str(out))
    assert w2.runner.wait(60000)
    assert not w2.last_error, w2.last_error
    ses = w2.session
    assert ses.kt is not None and ses.kt.joint and ses.kt_model is not None
    assert ses.kt_model_path == str(out / "sequence-tagger.npz")
    assert len(ses.nbest) == len(shown) and ses.nbest.ids == shown.ids
    assert all(np.array_equal(a, b) for a, b in zip(ses.nbest.candidates, shown.candidates))
    assert ses.kt.origin == w.document.kt.origin
    assert np.array_equal(ses.kt_model.wg_, model.wg_)
    assert ses.tagger is not None and ses.model is not None  # the rest of the session too


def test_a_corrupt_model_file_is_one_line_in_the_status_bar(window, qtbot, tmp_path, saved_models):
    from PySide6.QtWidgets import QApplication, QMessageBox

    w = window
    path, _ = saved_models["joint"]
    _open_kt(w, path)
    before_nbest, before_kt, before_model = w.document.nbest, w.document.kt, w.document.kt_model
    bad = tmp_path / "broken.npz"
    bad.write_bytes(path.read_bytes()[:5000])  # a truncated copy
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a model at all\n" * 10)
    from nerstudio.demo import DEMO_DIR

    for f in (bad, junk, DEMO_DIR / "model" / "reranker.npz"):
        assert w.load_kt_model(str(f))
        assert w.runner.wait(60000)
        msg = w.status.currentMessage()
        assert msg.startswith("Opening the sequence tagger failed:") and "\n" not in msg
        assert "not a sequence tagger model" in msg, msg
        assert "Traceback" not in msg and f.name in msg, msg
        assert w.last_error and "\n" not in w.last_error
        assert not [
            b
            for b in QApplication.topLevelWidgets()
            if isinstance(b, QMessageBox) and b.isVisible()
        ]
        # nothing lost
        assert (
            w.document.nbest is before_nbest
            and w.document.kt is before_kt
            and w.document.kt_model is before_model
        )
    assert w.act_open_kt.isEnabled() and not w.runner.busy


# ------------------------------------------------------------------------------------------------
# the panel in K&T mode, the status bar


def test_panel_in_kt_mode_task_and_advanced_local_settings(window):
    from nerstudio.runtime.tagger_process import make_model

    p = window.training_panel
    window.training_dock.show()
    p.set_start("tagger")
    assert p.tagger_box.isVisibleTo(p) and p.task.isEnabled()
    p.set_start("reranker")
    assert not p.task.isEnabled()  # a reranker-only run follows its N-best lists
    p.set_start("kt")
    assert (
        not p.tagger_box.isVisibleTo(p)
        and not p.rerank_box.isVisibleTo(p)
        and p.kt_box.isVisibleTo(p)
    )
    assert p.task.isVisibleTo(p) and p.task.isEnabled()
    p.task.setCurrentText("scn")
    # advanced: hidden until asked for, the constructors' defaults
    assert not p.kt_cutoff.isVisibleTo(p)
    p.kt_advanced.setChecked(True)
    assert p.kt_cutoff.isVisibleTo(p) and p.kt_edges.isVisibleTo(p)
    p.set_kt_algorithm("proposed")
    s = p.snapshot()
    assert s.kt_params["cutoff"] == 2 and s.kt_params["edge_templates"] == "current"
    assert "cut-off" not in s.label() and "edges" not in s.label() and s.label().endswith("· scn")
    p.set_kt_param("cutoff", 3)
    p.set_kt_param("edge_templates", "all")
    s = p.snapshot()
    assert "cut-off=3" in s.label() and "edges=all" in s.label()
    m = make_model(s.kt_algo, s.kt_params, s.task)
    assert m.local == {
        "cutoff": 3,
        "edge_templates": "all",
        "features": "kt",
        "gazetteer": None,
        "task": "scn",
    }
    # the local features and gazetteer: the constructor's by default, the suite's on request
    assert p.kt_features.isVisibleTo(p) and p.kt_gazetteer.isVisibleTo(p)
    assert "features" not in s.label() and "gazetteer" not in s.label()
    p.set_kt_param("features", "kt+rich+clusters")
    p.set_kt_param("gazetteer", "lists")
    s = p.snapshot()
    assert "features=kt+rich+clusters" in s.label() and "gazetteer=lists" in s.label()
    m = make_model(s.kt_algo, s.kt_params, s.task)
    assert (m.local["features"], m.local["gazetteer"]) == ("kt+rich+clusters", "lists")
    with pytest.raises(SettingsError):
        p.set_kt_param("features", "kt+nonsense")
    p.set_kt_algorithm("margin")
    p.set_kt_param("cutoff", 4)
    p.set_kt_param("gazetteer", None)
    s = p.snapshot()
    m = make_model(s.kt_algo, s.kt_params, s.task)
    assert (m.cutoff, m.task, m.features, m.gazetteer) == (4, "scn", "kt", None)
    # the tags: one choice for both kinds of tagger, given to the local model of a joint one
    p.alphabet.setCurrentIndex(p.alphabet.findData("bilou"))
    s = p.snapshot()
    assert s.alphabet == "bilou" and s.label().endswith("· scn · bilou")
    assert make_model(s.kt_algo, s.kt_model_params(), s.task).alphabet == "bilou"
    p.set_kt_algorithm("proposed")
    m = make_model(p.snapshot().kt_algo, p.snapshot().kt_model_params(), s.task)
    assert m.local["alphabet"] == "bilou"
    p.set_running(True)
    assert not p.task.isEnabled() and not p.kt_box.isEnabled() and not p.alphabet.isEnabled()
    p.set_running(False)
    assert p.task.isEnabled() and p.alphabet.isEnabled()
    p.set_start("reranker")
    assert not p.alphabet.isEnabled()  # a reranker-only run follows its N-best lists


def test_status_bar_message_and_permanent_text_do_not_overlap(window, qtbot):
    w = window
    w.resize(1000, 700)
    w.show()
    qtbot.waitExposed(w)
    long_state = "N-best: from this session (337/337) · " + "reranker: boost(rounds=3000) " * 8
    w.state_label.setText(long_state)
    msg = "a very long message about the tagger " * 10 + "END"
    w.status.showMessage(msg, 10000)
    qtbot.wait(20)
    bar, lab = w.status, w.state_label
    assert bar.currentMessage() == msg  # the whole message for code and tests
    assert lab.width() <= bar.width() * 0.5 + 1 and lab.toolTip() == long_state
    assert lab.elided_text().endswith("…") and len(lab.elided_text()) < len(long_state)
    r = bar.message_rect()
    assert r.right() < lab.x()
    shown = bar.elided_message()
    assert shown.endswith("…") and bar.fontMetrics().horizontalAdvance(shown) <= r.width()
    bar.grab()  # paints without error
