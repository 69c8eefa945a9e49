"""Issue 14, honest numbers and the "Also" paragraph: runs belong to a corpus, the comparison
says when it is optimistic, progress covers the whole pipeline, quitting asks for unsaved
models, opening a file never freezes the window, Open Recent shows paths, the recovery folder.
"""

from __future__ import annotations

import os
import time

import pytest
from PySide6.QtCore import Qt, QTimer

pytestmark = pytest.mark.ux


@pytest.fixture
def bare(empty_window):
    """The window with nothing open; dialogs never block (conftest's ``empty_window``)."""
    return empty_window


def _train_perceptron(window, qtbot, epochs=2):
    panel = window.training_panel
    panel.set_start("reranker")
    panel.set_algorithm("perceptron")
    panel.set_param("epochs", epochs)
    n = len(window.curve_plot.runs)
    qtbot.mouseClick(window.train_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120000)
    assert window.curve_plot.runs[n].state == "done", panel.message.text()
    return window.curve_plot.runs[n]


# -- runs belong to a corpus ----------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("keep", [True, False])
def test_opening_another_corpus_asks_whether_to_keep_the_runs(demo_files, window, qtbot, keep):
    curve = _train_perceptron(window, qtbot)
    run = window.document.runs[-1]
    # the demo opens from the tests' own copy of it (conftest)
    assert run.corpus_name == "train.conll" and run.corpus_path == os.path.join(
        os.environ["NERSTUDIO_DEMO_DIR"], "train.conll"
    )
    assert "train.conll" in curve.legend()
    asked = []
    window.dialogs.ask_keep_runs = lambda n, corpora, new: asked.append((n, corpora, new)) or keep
    assert window.load_corpus(str(demo_files / "dev.conll"), attach=False)
    assert asked == [(1, "train.conll", "dev.conll")]
    if keep:
        assert window.document.runs == (run,) and run.other_corpus
        assert any(c is curve for c in window.curve_plot.runs)
        assert "train.conll (another corpus)" in curve.legend()
    else:
        assert window.document.runs == ()
        assert all(c is not curve for c in window.curve_plot.runs)


@pytest.mark.slow
def test_reopening_the_same_corpus_does_not_ask(window, qtbot):
    _train_perceptron(window, qtbot, epochs=1)
    window.dialogs.ask_keep_runs = lambda *a: pytest.fail("asked about runs of this very corpus")
    assert window.load_corpus(window.document.corpus.path, attach=False)  # the demo's copy
    assert len(window.document.runs) == 1 and not window.document.runs[0].other_corpus


# -- stale filters ----------------------------------------------------------------------------
def test_filters_and_search_are_cleared_when_another_corpus_opens(demo_files, window):
    window.search.setText("Germany")
    window.status_filter.setCurrentIndex(1)
    window.type_filter.setCurrentIndex(1)
    assert window.proxy.active
    assert window.load_corpus(str(demo_files / "dev.conll"), attach=False)
    assert window.search.text() == "" and window.status_filter.currentIndex() == 0
    assert window.type_filter.currentIndex() == 0
    assert not window.proxy.active
    n = len(window.corpus)
    assert window.filter_count.text().startswith(f"{n:,} sentences")


# -- opening a file never freezes the window -------------------------------------------------
def _one_sentence_file(path, tokens: int) -> None:
    tags = ("O", "O", "O", "B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG", "O")
    with open(path, "w", encoding="utf-8") as f:
        for i in range(tokens):
            f.write(f"w{i % 997} {tags[i % len(tags)]}\n")


@pytest.mark.slow
def test_a_large_file_is_read_in_the_worker_while_the_window_keeps_working(bare, qtbot, tmp_path):
    # a small file first: what the first opening imports (once per process) is not what is measured
    warm = tmp_path / "warm.conll"
    _one_sentence_file(warm, 50)
    first = []
    assert bare.files.open_corpus(str(warm), attach=False, then=first.append)
    qtbot.waitUntil(lambda: bool(first), timeout=60000)
    path = tmp_path / "one-sentence.conll"
    _one_sentence_file(path, 1_000_000)
    ticks = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start()
    progress = []
    bare.jobs.progress.connect(lambda m, d, n: progress.append((m, d, n)))
    opened = []
    assert bare.files.open_corpus(str(path), attach=False, then=opened.append)
    # reading in the worker: open_corpus returned at once
    assert bare.runner.busy and bare.corpus.n_tokens == 50
    qtbot.waitUntil(lambda: bool(opened), timeout=120000)
    timer.stop()
    assert opened == [True] and bare.corpus.n_tokens == 1_000_000 and len(bare.corpus) == 1
    # the event loop ran during the read: the timer ticked many times, with progress in MB
    assert len(ticks) >= 5
    assert any("MB" in m and 0 < d < n for m, d, n in progress)
    rows = bare.entity_table.rowCount()
    assert rows == 2001 and "more entities" in bare.entity_table.item(2000, 0).text()


def test_opening_a_file_can_be_cancelled(bare, qtbot, tmp_path):
    path = tmp_path / "big.conll"
    _one_sentence_file(path, 1_000_000)
    opened = []
    assert bare.files.open_corpus(str(path), attach=False, then=opened.append)
    assert bare.runner.busy  # reading in the worker
    bare.cancel_job()  # at once: how fast the file is read must not decide what this test sees
    qtbot.waitUntil(lambda: bool(opened), timeout=10000)
    assert opened == [False] and bare.corpus is None
    assert "cancelled" in bare.training_panel.progress.text().lower()


def test_a_file_that_is_not_utf8_can_be_reopened_with_another_encoding(bare, qtbot, tmp_path):
    path = tmp_path / "latin.conll"
    path.write_bytes("Müller B-PER\nin O\nKöln B-LOC\n".encode("latin-1"))
    asked = []
    bare.dialogs.ask_reopen_encoding = lambda p, msg: asked.append((p, msg)) or "latin-1"
    bare.dialogs.critical = lambda *a: pytest.fail(
        f"plain error instead of an encoding choice: {a}"
    )
    assert not bare.load_corpus(str(path), attach=False)  # the first read fails...
    assert asked and asked[0][0] == str(path)
    # ...and the second one succeeds
    qtbot.waitUntil(lambda: bare.corpus is not None, timeout=10000)
    assert bare.corpus.encoding == "latin-1"
    assert bare.corpus.sentences[0].words[0] == "Müller"


def test_a_file_in_another_format_error_is_a_plain_message(bare, tmp_path):
    path = tmp_path / "bad.conll"
    path.write_text("just-one-column\n", encoding="utf-8")
    shown = []
    bare.dialogs.critical = lambda title, text: shown.append(text)
    bare.dialogs.ask_reopen_encoding = lambda *a: pytest.fail("not an encoding problem")
    assert not bare.load_corpus(str(path))
    assert shown and "bad.conll:1" in shown[0]


# -- Open Recent ----------------------------------------------------------------------------
def test_open_recent_shows_paths(demo_files, bare, tmp_path):
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "sub" / "corpus.conll"
    deep.parent.mkdir(parents=True)
    deep.write_text("Paris B-LOC\n", encoding="utf-8")
    assert bare.load_corpus(str(demo_files / "dev.conll"), attach=False)
    assert bare.load_corpus(str(deep), attach=False)
    acts = bare.files.recent_menu.actions()
    texts = [a.text() for a in acts]
    assert os.path.abspath(demo_files / "dev.conll") in texts[1]  # short: the whole path
    assert texts[0].endswith("corpus.conll") and "…" in texts[0]  # long: elided in the middle
    assert acts[0].toolTip() == str(deep) and acts[1].toolTip() == os.path.abspath(
        demo_files / "dev.conll"
    )


# -- progress of the whole pipeline (the Pipeline's words: tests/test_app_progress.py) -------


@pytest.mark.slow
def test_training_progress_says_stage_k_of_n_and_cancelled_after_a_cancel(window, qtbot):
    panel = window.training_panel
    panel.set_start("reranker")
    panel.set_algorithm("boost")
    panel.set_param("rounds", 1_000_000)
    panel.set_param("eval_every", 100)
    lines = []
    window.jobs.progress.connect(lambda m, d, n: lines.append((m, d, n)))
    n_runs = len(window.curve_plot.runs)
    qtbot.mouseClick(window.train_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.curve_plot.n_points(n_runs) >= 2, timeout=60000)
    qtbot.waitUntil(
        lambda: any(m.startswith("stage 2 of 3: training the reranker") for m, _, _ in lines),
        timeout=10000,
    )
    assert any(m.startswith("stage 1 of 3: global features") for m, _, _ in lines)
    assert all(n == 1000 and 0 <= d <= 1000 for m, d, n in lines if m.startswith("stage"))
    assert panel.message.text().startswith("stage 2 of 3: training the reranker")
    assert "left" in panel.message.text() or "estimating…" in panel.message.text()
    qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=10000)
    assert panel.progress.text() == "cancelled" and panel.progress.value() == 0
    assert panel.message.text() == "Cancelled"


@pytest.mark.slow
def test_a_finished_run_shows_a_full_bar_and_the_next_start_is_not_stale(window, qtbot):
    _train_perceptron(window, qtbot, epochs=1)
    panel = window.training_panel
    assert panel.progress.text() == "done" and panel.progress.value() == panel.progress.maximum()
    assert panel.message.text().startswith("Done in")  # the run's own ending stays
    panel.set_running(True)
    assert panel.progress.maximum() == 0  # busy, not the last run's 100 %
    panel.set_running(False)


@pytest.mark.slow
def test_a_progress_message_does_not_outlive_its_job(window, qtbot):
    """Scoring the lists (opening the demo, a new model) says "computing …" while it runs; once it
    is done the panel does not keep saying so."""
    panel = window.training_panel
    window.files.rescore()  # the job that scores the list on display with the loaded reranker
    assert window.jobs.wait(60000)
    qtbot.wait(50)
    assert panel.progress.text() == "done"
    assert "computing" not in panel.message.text() and "…" not in panel.message.text()


# -- the comparison says when it is optimistic ------------------------------------------------
def _compare(window, qtbot):
    view = window.comparison_view
    window.tabs.setCurrentWidget(view)
    window.comparison.refresh(force=True)
    qtbot.waitUntil(lambda: view.result is not None and not view.busy, timeout=60000)
    return view


@pytest.mark.slow
def test_the_comparison_warns_on_the_training_list_and_offers_the_dev_list(window, qtbot):
    # the demo: train.conll with its jackknifed list, the reranker trained on those 337 sentences
    view = _compare(window, qtbot)
    assert view.banner.isVisibleTo(view) and "optimistic" in view.banner.text().lower()
    train_f = view.result.reranked.f1
    assert view.dev_button.isEnabled() and window.document.dev_nbest is not None
    qtbot.mouseClick(view.dev_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.result is not None and not view.busy, timeout=60000)
    assert not view.banner.isVisibleTo(view)
    # the dev list, scored by the reranker
    assert len(view.result.sentences) == len(window.document.dev_nbest)
    from nerstudio.app.attachments import score_nbest
    from nerstudio.experiments.compare import compare_outputs

    dev = window.document.dev_nbest
    expect = compare_outputs(dev, score_nbest(window.document.model, dev).choice)
    assert (
        view.result.reranked.f1 == pytest.approx(expect.reranked.f1)
        and view.result.reranked.f1 < train_f
    )
    assert "dev.nbest.npz" in view.header.text()
    qtbot.mouseClick(
        view.dev_button, Qt.MouseButton.LeftButton
    )  # back to the corpus's list: warned again
    qtbot.waitUntil(lambda: view.result is not None and not view.busy, timeout=60000)
    assert view.banner.isVisibleTo(view) and len(view.result.sentences) == len(
        window.document.nbest
    )


@pytest.mark.slow
def test_a_model_trained_in_the_window_knows_its_training_list(window, qtbot):
    _train_perceptron(window, qtbot, epochs=1)
    from nerstudio.runs.training import trained_on_list

    doc = window.document
    assert trained_on_list(doc.model, doc.nbest) == "same"
    assert trained_on_list(doc.model, doc.dev_nbest) is None
    view = _compare(window, qtbot)
    assert view.banner.isVisibleTo(view) and view.banner.text().startswith(
        "Optimistic: these are the sentences"
    )


@pytest.mark.slow
def test_no_warning_on_a_list_the_reranker_did_not_learn_from(demo_files, window, qtbot):
    assert window.load_corpus(str(demo_files / "dev.conll"))  # attaches model/dev.nbest.npz, scored
    assert window.runner.wait(30000)
    view = _compare(window, qtbot)
    assert not view.banner.isVisibleTo(view)


@pytest.mark.slow
def test_the_dev_button_opens_a_dev_list_when_none_is_loaded(window, qtbot):
    from nerstudio.gui.main_window import DEMO_MODEL_DIR

    window.document.set_dev_nbest(None)
    view = _compare(window, qtbot)
    assert view.dev_button.text() == "Open the dev list…"
    window.dialogs.ask_open = lambda *a: str(DEMO_MODEL_DIR / "dev.nbest.npz")
    qtbot.mouseClick(view.dev_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: view.result is not None and not view.busy and window.comparison.on_dev,
        timeout=60000,
    )
    assert not view.banner.isVisibleTo(view) and len(view.result.sentences) == len(
        window.document.dev_nbest
    )


# -- quitting with a model never saved --------------------------------------------------------
@pytest.mark.slow
def test_quitting_with_a_trained_model_never_saved_asks_first(window, qtbot, tmp_path):
    window.show()
    window.dialogs.ask_unsaved_models = lambda what: pytest.fail(
        "the demo's models are files: nothing to ask"
    )
    assert window.files.unsaved_models() == []
    _train_perceptron(window, qtbot, epochs=1)
    asked = []
    window.dialogs.ask_unsaved_models = lambda what: asked.append(what) or "cancel"
    assert not window.close()  # cancelled: the window stays
    assert asked == ["reranker"] and window.isVisible()
    # saving it (here through the menu's Save reranker) ends the question
    target = tmp_path / "mine.npz"
    window.dialogs.ask_save = lambda *a: str(target)
    window.files.save_model_dialog()
    assert target.is_file() and window.files.unsaved_models() == []
    window.dialogs.ask_unsaved_models = lambda what: pytest.fail("asked about a saved model")
    assert window.close()


@pytest.mark.slow
def test_quitting_can_save_the_session_first(window, qtbot, tmp_path):
    window.show()
    _train_perceptron(window, qtbot, epochs=1)
    window.dialogs.ask_unsaved_models = lambda what: "save"
    window.dialogs.ask_folder = lambda *a: str(tmp_path / "results")
    assert window.close()
    assert (tmp_path / "results" / "reranker.npz").is_file()
    assert window.document.model_path == str(tmp_path / "results" / "reranker.npz")


# -- defaults ---------------------------------------------------------------------------------
def test_training_defaults_are_the_demo_models_settings(qtbot):
    import numpy as np

    from nerstudio.gui.main_window import DEMO_MODEL_DIR
    from nerstudio.gui.views.training_panel import TrainingPanel
    from nerstudio.persist import json_value

    with np.load(DEMO_MODEL_DIR / "reranker.npz", allow_pickle=False) as z:
        rh = json_value(z["header"])
    with np.load(DEMO_MODEL_DIR / "tagger.npz", allow_pickle=False) as z:
        th = json_value(z["header"])
    panel = TrainingPanel(None)  # no saved preferences
    qtbot.addWidget(panel)
    s = panel.snapshot()
    assert (s.task, s.tagger_features, s.tagger_iter) == (
        th["task"],
        th["features"],
        th["max_iter"],
    )
    assert s.alphabet == th.get("alphabet", "scn") == "scn"  # the demo's tagger is the paper's
    assert s.tagger_cutoff == th["cutoff"] == 5
    assert (s.folds, s.n) == (5, 20)  # tools/demo/build_model.py: FOLDS, N
    assert s.algo == rh["algo"] == "boost"
    assert {k: s.params[k] for k in rh["params"]} == rh["params"]
    assert s.params["rounds"] == 3000 and s.params["eval_every"] == 100
    assert s.feature_params["min_sentences"] == rh["features"]["params"]["min_sentences"] == 2
    # the demo's reranker uses none of the resource families, so neither does the panel
    assert not any(rh["features"]["params"].get(k) for k in ("gazetteers", "context", "clusters"))
    assert {k: s.feature_params[k] for k in ("gazetteers", "context", "clusters")} == {
        "gazetteers": False,
        "context": False,
        "clusters": False,
    }
    # where they differ from the learner's own defaults, the panel says why
    assert "demo model" in panel._param_widgets["rounds"].toolTip()
    assert "demo model" in panel.defaults_note.text()


# -- the recovery folder ----------------------------------------------------------------------
def test_the_recovery_folder_is_not_nerstudio_nerstudio_and_old_files_move(
    qapp, monkeypatch, tmp_path
):
    from PySide6.QtCore import QCoreApplication

    from nerstudio.gui.controllers.annotation import default_recovery_dir
    from nerstudio.gui.paths import recovery_dir

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("NERSTUDIO_RECOVERY_DIR", raising=False)
    names = QCoreApplication.organizationName(), QCoreApplication.applicationName()
    QCoreApplication.setOrganizationName("nerstudio")  # as the application sets them
    QCoreApplication.setApplicationName("nerstudio")
    try:
        old = tmp_path / "data" / "nerstudio" / "nerstudio" / "recovery"
        old.mkdir(parents=True)
        (old / "train.conll.recovery.json").write_text("{}", encoding="utf-8")
        path = recovery_dir()
        assert path == str(tmp_path / "data" / "nerstudio" / "recovery")
        assert default_recovery_dir() == path
        assert (
            tmp_path / "data" / "nerstudio" / "recovery" / "train.conll.recovery.json"
        ).is_file()
        assert not (tmp_path / "data" / "nerstudio" / "nerstudio").exists()
    finally:
        QCoreApplication.setOrganizationName(names[0])
        QCoreApplication.setApplicationName(names[1])


def test_the_tags_choice_is_remembered_and_offers_the_cores_alphabets(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from nerstudio.gui.views.training_panel import TrainingPanel
    from nerstudio.runs.spec import ALPHABET_CHOICES
    from nerstudio.tagging.tag_alphabets import ALPHABETS

    assert tuple(name for name, _, _ in ALPHABET_CHOICES) == tuple(ALPHABETS)
    q = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    panel = TrainingPanel(q)
    qtbot.addWidget(panel)
    panel.set_start("tagger")
    panel.alphabet.setCurrentIndex(panel.alphabet.findData("bilou"))
    panel._save(panel.snapshot())  # what pressing Train does first
    again = TrainingPanel(q)
    qtbot.addWidget(again)
    assert again.snapshot().alphabet == "bilou"


def test_the_feature_choices_are_the_cores_and_are_remembered(qtbot, tmp_path):
    """Every feature set and resource the panel offers is one the core takes (the typed
    experiment's defaults among them), and the choices survive a new session."""
    import inspect

    from PySide6.QtCore import QSettings

    from nerstudio.experiments.collins import ExperimentConfig
    from nerstudio.experiments.kazama import KazamaConfig
    from nerstudio.gui.views.training_panel import TrainingPanel
    from nerstudio.rerank.features import GlobalFeatures
    from nerstudio.runs.spec import (
        KT_FEATURE_CHOICES,
        KT_GAZETTEER_CHOICES,
        RERANK_RESOURCES,
        TAGGER_FEATURE_CHOICES,
    )
    from nerstudio.tagging.features import parse_feature_set
    from nerstudio.tagging.local_features import FEATURE_SET_NAMES
    from nerstudio.tagging.perceptron import GAZETTEER_SPECS

    tagger_sets = [name for name, _ in TAGGER_FEATURE_CHOICES]
    for name in tagger_sets:
        parse_feature_set(name)  # raises on a set the tagger does not know
    assert ExperimentConfig().tagger_features in tagger_sets
    keywords = inspect.signature(GlobalFeatures).parameters
    assert all(name in keywords for name, _, _ in RERANK_RESOURCES)
    cfg = ExperimentConfig()
    assert (cfg.reranker_gazetteers, cfg.reranker_context, cfg.reranker_clusters) == (True,) * 3
    assert {name for name, _ in KT_FEATURE_CHOICES} <= set(FEATURE_SET_NAMES)
    assert {g for g, _, _ in KT_GAZETTEER_CHOICES} == {None, *GAZETTEER_SPECS}
    kt = KazamaConfig()
    assert kt.features in dict(KT_FEATURE_CHOICES)
    assert kt.gazetteer in {g for g, _, _ in KT_GAZETTEER_CHOICES}

    q = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    panel = TrainingPanel(q)
    qtbot.addWidget(panel)
    panel.set_start("tagger")
    panel.tagger_feats.setCurrentText("conll+rich+gaz+clusters")
    panel.tagger_cutoff.setValue(2)  # the typed experiment's
    panel.resources["context"].setChecked(True)
    panel.resources["clusters"].setChecked(True)
    panel.set_kt_algorithm("margin")
    panel.set_kt_param("features", "kt+rich+clusters")
    panel.set_kt_param("gazetteer", "lists")
    s = panel.snapshot()
    assert s.tagger_features == "conll+rich+gaz+clusters"
    assert "context" in s.label() and "clusters" in s.label() and "gazetteers" not in s.label()
    panel._save(s)  # what pressing Train does first
    again = TrainingPanel(q)
    qtbot.addWidget(again)
    t = again.snapshot()
    assert t.tagger_features == "conll+rich+gaz+clusters" and t.tagger_cutoff == 2
    assert "cut-off 2" in t.label()
    assert {k: t.feature_params[k] for k in ("gazetteers", "context", "clusters")} == {
        "gazetteers": False,
        "context": True,
        "clusters": True,
    }
    assert t.kt_algo == "margin"
    assert (t.kt_params["features"], t.kt_params["gazetteer"]) == ("kt+rich+clusters", "lists")
    again.set_kt_algorithm("proposed")  # another algorithm keeps its own (the constructor's)
    assert (again.kt_params()["features"], again.kt_params()["gazetteer"]) == ("kt", None)
