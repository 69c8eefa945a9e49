"""The typed experiment's rerankers trained side by side (threads) give exactly what they give
one after the other (issue 26, point 4)."""

import threading

import numpy as np
import pytest

from nerstudio.demo import DEMO_DIR
from nerstudio.experiments.collins import ExperimentConfig
from nerstudio.rerank.fitting import run_side_by_side
from nerstudio.runs.experiment import run_experiment


def test_run_side_by_side_keeps_order_and_raises():
    seen = set()

    def f(x):
        seen.add(threading.current_thread().name)
        if x == 3:
            raise ValueError("three")
        return x * x

    assert run_side_by_side(f, [0, 1, 2], 2) == [0, 1, 4]
    assert any(n.startswith("nerstudio-system") for n in seen)
    assert run_side_by_side(f, [0, 1, 2], 1) == [0, 1, 4]
    with pytest.raises(ValueError, match="three"):
        run_side_by_side(f, [1, 2, 3, 4], 2)


def test_the_longest_system_starts_first_and_results_keep_their_order():
    """With two threads the kernel (listed last) starts with the first core free, not after
    boosting ends; the results still come back in the order the systems are listed."""
    started = []
    lock = threading.Lock()
    gate = threading.Event()

    def f(x):
        with lock:
            started.append(x)
            if len(started) == 2:
                gate.set()
        gate.wait(5)  # the first two run together
        return x.upper()

    items = ["boost", "voted", "averaged", "kernel"]
    assert run_side_by_side(f, items, 2, first=("kernel",)) == [x.upper() for x in items]
    assert set(started[:2]) == {"kernel", "boost"}


@pytest.mark.slow
def test_systems_side_by_side_equal_one_after_the_other(tmp_path):
    reports, models = [], []
    for k, workers in enumerate((1, 4)):
        cfg = ExperimentConfig(
            task="typed",
            tagger_features="paper",
            tagger_max_iter=30,
            folds=2,
            workers=workers,
            systems=("boost", "voted", "averaged", "kernel"),
            boost_rounds=400,
            boost_eval_every=100,
            epochs=3,
            kernel_sentences=150,
            reranker_gazetteers=False,
            reranker_context=False,
        )
        out = tmp_path / f"run{k}"
        reports.append(
            run_experiment(
                DEMO_DIR / "train.conll", DEMO_DIR / "dev.conll", DEMO_DIR / "test.conll", out, cfg
            )
        )
        models.append(
            {
                s: dict(np.load(out / f"reranker-{s}.npz", allow_pickle=False))
                for s in ("boosting", "voted", "averaged", "kernel")
            }
        )
    a, b = reports
    strip = lambda r: [
        {k: v for k, v in s.items() if k not in ("seconds", "test_seconds")} for s in r["systems"]
    ]
    assert strip(a) == strip(b)
    assert [s["name"] for s in a["systems"]] == [
        "baseline",
        "boosting",
        "voted",
        "averaged",
        "kernel",
    ]
    for name in models[0]:
        xa, xb = models[0][name], models[1][name]
        assert sorted(xa) == sorted(xb)
        for key in xa:
            if "header" not in key:  # the header holds the training time
                assert np.array_equal(xa[key], xb[key]), (name, key)
