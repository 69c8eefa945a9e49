"""Reranker training in a child process: same results as in the GUI process, cancellation,
errors and crashes of the child (nerstudio.runtime.rerank_process and the window's training job)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from nerstudio.demo import DEMO_DIR
from nerstudio.errors import Cancelled

DEMO_MODEL_DIR = DEMO_DIR / "model"
pytestmark = [
    pytest.mark.slow,  # training in a child process: most tests take over 5 s
    pytest.mark.skipif(
        not (DEMO_MODEL_DIR / "dev.nbest.npz").exists(),
        reason="demo N-best lists not built (tools/demo/build_model.py)",
    ),
]


@pytest.fixture(scope="module")
def lists():
    from nerstudio.nbest import NBestList

    return NBestList.load(DEMO_MODEL_DIR / "train.nbest.npz"), NBestList.load(
        DEMO_MODEL_DIR / "dev.nbest.npz"
    )


# --------------------------------------------------------------------------------------------
# the Qt-free core


@pytest.mark.parametrize(
    "algo,params", [("perceptron", {"epochs": 2}), ("boost", {"rounds": 20, "eval_every": 5})]
)
def test_child_training_equals_training_in_this_process(lists, algo, params):
    from nerstudio.rerank.model import train_reranker
    from nerstudio.runtime.rerank_process import live_children, train_in_child

    train, dev = lists
    points, messages = [], []
    out = train_in_child(
        train,
        dev,
        algo,
        params,
        {"min_sentences": 2},
        callback=points.append,
        progress=lambda *a: messages.append(a),
    )
    ref = train_reranker(train, dev, algo, params, {"min_sentences": 2})
    assert out.model.features.names_ == ref.features.names_
    a0, w = out.model.learner.linear_weights()
    b0, v = ref.learner.linear_weights()
    assert a0 == b0 and np.array_equal(w, v)
    ref_data = ref.data(train)
    ref_scores = ref.scores(ref_data)
    assert np.array_equal(out.scores, ref_scores)
    assert np.array_equal(out.choice, ref_data.argmax(ref_scores))
    # the ranking data came back whole: same rows, same gold counts, the caller's N-best list
    assert (out.data.X != ref_data.X).nnz == 0 and np.array_equal(out.data.L, ref_data.L)
    for name in ("offsets", "correct", "proposed", "n_gold", "oracle", "quality"):
        assert np.array_equal(getattr(out.data, name), getattr(ref_data, name)), name
    assert out.data.nbest is train and out.data.feature_names == ref.features.names_
    # the curve points crossed the process boundary as RerankStats, in order
    assert [p.step for p in points] == [h.step for h in ref.learner.history_]
    assert [p.dev_f1 for p in points] == [h.dev_f1 for h in ref.learner.history_]
    assert messages and sorted(out.model.meta) == sorted(ref.meta)
    assert not live_children()


def test_cancelling_stops_the_child_within_a_second(lists):
    from nerstudio.runtime.rerank_process import live_children, train_in_child

    train, dev = lists
    state = {"cancel_at": None}

    def callback(st):
        if state["cancel_at"] is None and st.step >= 20:
            state["cancel_at"] = time.monotonic()

    with pytest.raises(Cancelled):
        train_in_child(
            train,
            dev,
            "boost",
            {"rounds": 10_000_000, "eval_every": 10},
            {"min_sentences": 2},
            callback=callback,
            should_cancel=lambda: state["cancel_at"] is not None,
        )
    assert state["cancel_at"] is not None
    assert time.monotonic() - state["cancel_at"] < 1.0
    assert not live_children()


def test_a_child_that_ignores_cancellation_is_killed_after_the_grace_period(lists, monkeypatch):
    """The last resort: a child stuck where the core does not look at the cancel flag."""
    from nerstudio.runtime import rerank_process as rp

    train, dev = lists
    t = {}

    def freeze(pid):
        os.kill(pid, signal.SIGSTOP)  # frozen: it cannot answer
        t["at"] = time.monotonic()  # and the user cancels

    with pytest.raises(Cancelled, match="stopped"):
        rp.train_in_child(
            train,
            dev,
            "perceptron",
            {"epochs": 2},
            {"min_sentences": 2},
            grace=0.3,
            should_cancel=lambda: "at" in t,
            on_start=freeze,
        )
    assert time.monotonic() - t["at"] < 2.0
    assert not rp.live_children()


def test_a_killed_child_is_reported_not_waited_for(lists):
    from nerstudio.runtime.rerank_process import (
        ChildProcessFailed,
        live_children,
        train_in_child,
    )

    train, dev = lists
    pid = {}

    def progress(message, done, total):
        if "features" in message and "p" in pid:
            os.kill(pid.pop("p"), signal.SIGKILL)

    t0 = time.monotonic()
    with pytest.raises(ChildProcessFailed, match="killed by SIGKILL") as info:
        train_in_child(
            train,
            dev,
            "boost",
            {"rounds": 10_000_000},
            {"min_sentences": 2},
            progress=progress,
            on_start=lambda p: pid.setdefault("p", p),
        )
    assert "out of memory" in str(info.value)
    assert time.monotonic() - t0 < 30
    assert not live_children()


def test_an_error_in_the_child_comes_back_as_one_clear_line(lists):
    from nerstudio.runtime.rerank_process import ChildProcessFailed, train_in_child

    train, dev = lists
    with pytest.raises(ChildProcessFailed) as info:
        train_in_child(train, dev, "perceptron", {"no_such_setting": 3}, {"min_sentences": 2})
    # a user error (SettingsError) comes back as its message alone; a bug would keep its type
    assert str(info.value).startswith("perceptron has no parameter no_such_setting")
    assert "\n" not in str(info.value)
    assert "Traceback" in info.value.details  # the child's traceback, for logs


def test_ranking_files_refuse_other_files(tmp_path, lists):
    from nerstudio.errors import FormatError
    from nerstudio.runtime.rerank_process import load_ranking

    train, _dev = lists
    train.save(tmp_path / "list.npz")
    with pytest.raises(FormatError, match="list.npz.*not a ranking-data file"):
        load_ranking(tmp_path / "list.npz")


# --------------------------------------------------------------------------------------------
# the window

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")


def _train(window, qtbot, algo, **params):
    panel = window.training_panel
    panel.set_start("reranker")
    panel.set_algorithm(algo)
    panel.min_sent.setValue(2)
    for k, v in params.items():
        panel.set_param(k, v)
    assert window.start_training(panel.snapshot())


def test_the_window_trains_in_a_child_and_gets_the_same_scores(window, qtbot):
    assert window.train_in_child
    _train(window, qtbot, "averaged", epochs=3)
    qtbot.waitUntil(lambda: window.child_pid is not None, timeout=30000)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60000)
    child = window.document.scored
    assert window.curve_plot.runs[-1].state == "done" and len(window.curve_plot.runs[-1].steps) == 3
    assert window.last_run_timings["start_up"] > 0
    window.train_in_child = False
    window.child_pid = None
    _train(window, qtbot, "averaged", epochs=3)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60000)
    here = window.document.scored
    assert window.child_pid is None and here is not child
    assert np.array_equal(child.scores, here.scores) and np.array_equal(child.choice, here.choice)
    assert child.model.features.names_ == here.model.features.names_
    # explanations work on the data that came back from the child
    i = int(np.flatnonzero(child.choice > 0)[0])
    row = child.data.offsets[i] + child.choice[i]
    assert child.model.explain(child.data, row).score == pytest.approx(child.scores[row])


def test_a_killed_child_shows_an_error_and_enables_training_again(window, qtbot):
    from PySide6.QtWidgets import QApplication, QMessageBox

    _train(window, qtbot, "boost", rounds=10_000_000)
    qtbot.waitUntil(lambda: window.child_pid is not None, timeout=30000)
    assert not window.train_button.isEnabled()
    os.kill(window.child_pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=10000)
    msg = window.statusBar().currentMessage()
    assert "Training failed" in msg and "killed by SIGKILL" in msg
    assert "killed by SIGKILL" in window.training_panel.message.text()
    assert window.train_button.isEnabled() and window.training_panel.rerank_box.isEnabled()
    assert window.curve_plot.runs[-1].state == "failed"
    assert not [
        w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()
    ]
    # and the next run works
    _train(window, qtbot, "perceptron", epochs=1)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60000)
    assert window.curve_plot.runs[-1].state == "done"


def test_an_unchanged_list_is_read_from_its_file_an_edited_one_is_handed_over(
    window, qtbot, monkeypatch
):
    from nerstudio.runtime import rerank_process as rp

    ses = window.document
    copy = Path(os.environ["NERSTUDIO_DEMO_DIR"]) / "model"  # the window's demo: the tests' copy
    assert ses.nbest_source() == str((copy / "train.nbest.npz").resolve())
    assert ses.dev_nbest_source() == str((copy / "dev.nbest.npz").resolve())
    seen = []
    orig = rp.train_in_child

    def spy(*a, **k):
        seen.append((k.get("train_file"), k.get("dev_file"), a[0]))
        return orig(*a, **k)

    monkeypatch.setattr(rp, "train_in_child", spy)
    _train(window, qtbot, "perceptron", epochs=2)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60000)
    assert seen[-1][:2] == (ses.nbest_source(), ses.dev_nbest_source())
    # a gold edit: the file no longer holds the list, the child gets the edited copy
    k = next(
        k
        for k in range(len(window.corpus))
        if ses.nbest_row(k) >= 0
        and ses.nbest.n_candidates(ses.nbest_row(k)) > 1
        and ses.nbest.spans(ses.nbest_row(k), 1) != window.corpus.sentences[k].spans
    )
    window.select_sentence(k)
    assert window.accept_candidate(1)
    assert ses.nbest_source() is None and ses.dev_nbest_source() is not None
    _train(window, qtbot, "perceptron", epochs=2)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60000)
    assert seen[-1][:2] == (None, ses.dev_nbest_source())
    i = ses.nbest_row(k)
    assert seen[-1][2].gold[i] == window.corpus.sentences[k].spans
    # the child counted with the new gold: candidate 2 is now exactly right
    d = window.document.scored.data
    row = int(d.offsets[i]) + 1
    assert d.correct[row] == d.proposed[row] == d.n_gold[i]
