"""Sweeps (nerstudio.experiments.sweep) on the local executors, the `sweep` command, and the
executor settings (nerstudio.runtime.dask_executor.executor_from_setting) — none needs Dask."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nerstudio.cli import main
from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import NerstudioError
from nerstudio.evaluation import evaluate_spans
from nerstudio.experiments.sweep import grid_points, parse_settings, run_sweep
from nerstudio.nbest import NBestList
from nerstudio.rerank.model import train_reranker
from nerstudio.runtime import dask_executor
from nerstudio.runtime.dask_executor import executor_from_setting
from nerstudio.runtime.folds import InlineExecutor, ProcessExecutor
from nerstudio.tagging.maxent import MaxEntTagger

TRAIN_NB, DEV_NB = DEMO_DIR / "model" / "train.nbest.npz", DEMO_DIR / "model" / "dev.nbest.npz"


def test_settings_are_typed_by_their_defaults():
    assert parse_settings("boost", "rounds=1e4,1e5 epsilon=0.001,0.0025") == {
        "rounds": [10000, 100000],
        "epsilon": [0.001, 0.0025],
    }
    assert parse_settings("boost", "rounds=1e4")["rounds"][0].__class__ is int
    assert parse_settings("averaged", "beta=none,0.5 shuffle=false,true min_sentences=3") == {
        "beta": [None, 0.5],
        "shuffle": [False, True],
        "min_sentences": [3],
    }
    assert parse_settings("maxent", "features=paper,conll cutoff_on=pair") == {
        "features": ["paper", "conll"],
        "cutoff_on": ["pair"],
    }
    assert parse_settings("perceptron-tagger", "average=true gazetteer=none,train")["average"] == [
        True
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("rounds=1.5", r"rounds='1.5': expected int"),
        ("epsilon=x", r"epsilon='x': expected float"),
        ("speed=1", r"boost has no setting 'speed' \(it has .*epsilon.*rounds"),
        ("rounds", r"write NAME=VALUE"),
        ("rounds=1,,2", r"an empty value"),
        ("rounds=1 rounds=2", r"given twice"),
        ("rounds=10,1e1", r"a value given twice"),
    ],
)
def test_a_bad_grid_is_one_clear_error(text, message):
    with pytest.raises(ValueError, match=message):
        parse_settings("boost", text)


def test_grid_points_are_every_combination_first_setting_slowest():
    assert grid_points({"a": [1, 2], "b": ["x", "y", "z"]}) == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 1, "b": "z"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
        {"a": 2, "b": "z"},
    ]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2], ids=["inline", "processes"])
def test_a_reranker_sweep_scores_each_point_as_train_reranker_does(tmp_path, workers):
    grid = parse_settings("averaged", "epochs=1,3")
    rep = run_sweep("averaged", TRAIN_NB, DEV_NB, grid, tmp_path, {"seed": 1}, workers=workers)
    train, dev = NBestList.load(TRAIN_NB), NBestList.load(DEV_NB)
    for point in rep["points"]:  # the same figure as training that reranker on its own
        model = train_reranker(
            train, dev, "averaged", {"epochs": point["settings"]["epochs"], "seed": 1}
        )
        d = model.data(dev)
        assert point["dev"]["f1"] == pytest.approx(d.prf(model.predict(d))[2], abs=1e-9)
        assert point["best_step"] == model.learner.best_step_ and point["unit"] == "epoch"
        assert [s for s, _ in point["curve"]] == [
            h.step for h in model.learner.history_ if h.dev_f1 is not None
        ]
    assert rep["best"] == int(np.argmax([p["dev"]["f1"] for p in rep["points"]]))
    assert json.loads((tmp_path / "sweep.json").read_text()) == rep
    assert (tmp_path / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_tagger_sweep_scores_the_1best_on_dev(tmp_path):
    grid = parse_settings("maxent", "l2=0.5,4")
    rep = run_sweep(
        "maxent",
        DEMO_DIR / "train.conll",
        DEMO_DIR / "dev.conll",
        grid,
        tmp_path,
        {"cutoff": 1, "max_iter": 10},
        executor=InlineExecutor(),
    )
    train, dev = read_corpus(DEMO_DIR / "train.conll"), read_corpus(DEMO_DIR / "dev.conll")
    for point in rep["points"]:
        tagger = MaxEntTagger(
            cutoff=1, max_iter=10, l2=point["settings"]["l2"], labels=train.labels
        ).fit(train.sentences)
        f = evaluate_spans(
            [s.spans for s in dev.sentences], tagger.nbest(dev.sentences, n=1).top()
        ).overall.f1
        assert point["dev"]["f1"] == pytest.approx(f, abs=1e-9)
    table = (tmp_path / "sweep.md").read_text()
    assert "| l2 | dev P | dev R | dev F |" in table and "| 0.5 |" in table and "| 4.0 |" in table


def test_sweep_refuses_a_setting_both_swept_and_fixed(tmp_path):
    with pytest.raises(ValueError, match="rounds: both swept and fixed"):
        run_sweep("boost", TRAIN_NB, DEV_NB, {"rounds": [10, 20]}, tmp_path, {"rounds": 5})


def test_sweep_command(tmp_path, capsys):
    code = main(
        [
            "sweep",
            "--algo",
            "boost",
            "--train",
            str(TRAIN_NB),
            "--dev",
            str(DEV_NB),
            "--grid",
            "rounds=50,100",
            "--set",
            "eval_every=50",
            "--out",
            str(tmp_path),
            "--executor",
            "local:1",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "| rounds | dev P |" in out and "wrote" in err
    rep = json.loads((tmp_path / "sweep.json").read_text())
    assert [p["settings"] for p in rep["points"]] == [{"rounds": 50}, {"rounds": 100}]
    assert rep["fixed"] == {"eval_every": 50}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--grid", "rounds=1.5"], "rounds='1.5': expected int"),
        (["--grid", "rounds=10", "--executor", "cloud"], "unknown executor 'cloud'"),
        (["--grid", "rounds=10", "--algo", "crf"], "unknown learner 'crf'"),
    ],
)
def test_sweep_command_errors_are_one_line(tmp_path, capsys, argv, message):
    base = [
        "sweep",
        "--algo",
        "boost",
        "--train",
        str(TRAIN_NB),
        "--dev",
        str(DEV_NB),
        "--out",
        str(tmp_path),
    ]
    code = main(base + argv)
    err = capsys.readouterr().err
    # a user error: exit status 1
    assert code == 1 and message in err and len(err.strip().splitlines()) == 1


def test_executor_settings():
    assert executor_from_setting("local") is None and executor_from_setting(None) is None
    assert isinstance(executor_from_setting("local:1"), InlineExecutor)
    pool = executor_from_setting(" local:3 ")
    assert isinstance(pool, ProcessExecutor) and pool.workers == 3
    for bad in ("local:0", "dask-local:x", "dask://host", "http://host:8786", "remote"):
        with pytest.raises(ValueError, match="executor"):
            executor_from_setting(bad)


def test_dask_settings_without_the_extra_say_how_to_install_it(monkeypatch):
    monkeypatch.setattr(dask_executor, "dask_available", lambda: False)
    for setting in ("dask-local:2", "dask://scheduler.example:8786"):
        with pytest.raises(NerstudioError, match=r"pip install 'nerstudio\[dask\]'"):
            executor_from_setting(setting)


def test_dask_settings_name_their_cluster():
    pytest.importorskip(
        "distributed", reason="the dask extra is not installed (pip install -e '.[dask]')"
    )
    ex = executor_from_setting("dask://10.0.0.5:8786")  # nothing connects before the first run
    assert (
        ex.address == "tcp://10.0.0.5:8786" and ex.setting == "dask://10.0.0.5:8786" and ex.remote
    )
    assert executor_from_setting("dask-local:2").local_workers == 2
