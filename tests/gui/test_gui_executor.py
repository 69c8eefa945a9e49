"""The application's "Folds run on" setting: the full pipeline's jackknife goes to the executor it
names (here a local Dask cluster), with the same lists as in the window's own worker."""

from __future__ import annotations

import numpy as np
import pytest

from nerstudio.demo import DEMO_DIR


def _pipeline_settings(w):
    s = w.training_panel.snapshot()
    return type(s)(
        **{
            **s.__dict__,
            "start": "tagger",
            "folds": 2,
            "n": 3,
            "tagger_iter": 5,
            "algo": "averaged",
            "params": {"epochs": 1},
            "dev_path": "",
        }
    )


def test_a_bad_setting_is_refused_and_a_good_one_kept(window):
    w = window
    w.dialogs.ask_text = lambda *a: "dask://nowhere"
    msgs = []
    w.dialogs.warning = lambda title, text: msgs.append(text)
    assert not w.training.choose_executor()
    assert msgs and "unknown executor" in msgs[0]
    w.dialogs.ask_text = lambda *a: "local:2"
    assert w.training.choose_executor()
    assert w.training.executor_setting() == "local:2"
    ex = w.training.fold_executor()
    assert ex is w.training.fold_executor()  # one object per setting, reused
    assert ex.context.get_start_method() == "spawn"  # never fork a process running Qt threads


@pytest.mark.slow
def test_the_pipeline_jackknife_runs_on_a_dask_cluster_with_the_same_lists(window, qtbot):
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    from nerstudio.corpus.formats import read_corpus
    from nerstudio.runtime.pipeline import jackknife

    w = window
    w.dialogs.ask_text = lambda *a: "dask-local:2"
    assert w.training.choose_executor()
    settings = _pipeline_settings(w)
    ex = w.training.fold_executor()
    assert type(ex).__name__ == "DaskExecutor"
    calls = []
    run = ex.run
    ex.run = lambda *a, **k: (calls.append(1), run(*a, **k))[1]
    try:
        assert w.start_training(settings)
        assert w.runner.wait(240000), "training did not finish"
        assert not w.last_error, w.last_error
        assert calls, "the folds did not go to the cluster"
        got = w.document.nbest
        corpus = read_corpus(str(DEMO_DIR / "train.conll"))
        tparams = {
            "task": settings.task,
            "features": settings.tagger_features,
            "max_iter": settings.tagger_iter,
            "optimizer": settings.tagger_optimizer,
            "epochs": settings.tagger_epochs,
            "labels": corpus.labels,
        }
        ref = jackknife(corpus, 2, 3, tparams, workers=1).nbest
        assert [list(x) for x in got.words] == [list(x) for x in ref.words]
        assert len(got) == len(ref)
        for i in range(len(ref)):
            assert got.candidate_spans(i) == ref.candidate_spans(i)
            np.testing.assert_allclose(got.logprobs[i], ref.logprobs[i], rtol=1e-5)
    finally:
        w.training.close_executor()
