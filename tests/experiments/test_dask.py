"""Folds, cross-validated lists and sweeps on a Dask ``LocalCluster`` (nerstudio.runtime.dask_executor).

The same lists as the local pool, bit for bit; a sweep's table and plot; cancellation that
reaches the tasks running on the workers; a worker killed mid-task retried once, a second death
reported as one line naming the job; inputs shipped as bytes when a worker cannot see a path;
a corpus whose file no longer holds it refused. One cluster of two worker processes serves the
module (a few seconds to start).
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import tempfile
import time

import numpy as np
import pytest

pytest.importorskip(
    "distributed", reason="the dask extra is not installed (pip install -e '.[dask]')"
)

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import Cancelled, NerstudioError
from nerstudio.experiments.kazama_fits import cross_validated_lists
from nerstudio.experiments.sweep import POINT_FILES, parse_settings, run_sweep
from nerstudio.runtime.child_process import ChildProcessFailed
from nerstudio.runtime.dask_executor import DaskExecutor, executor_from_setting
from nerstudio.runtime.folds import Job, run_jobs
from nerstudio.runtime.pipeline import jackknife
from nerstudio.runtime.work_files import CorpusFile, clear_cache

DEMO_NBEST = DEMO_DIR / "model"
WORKER_PROCESS = "Dask Worker process"
pytestmark = pytest.mark.slow  # a local Dask cluster and the demo's folds on it


@pytest.fixture(scope="module")
def cluster():
    """``dask-local:2``: two single-threaded worker processes, for the whole module."""
    ex = executor_from_setting("dask-local:2")
    assert isinstance(ex, DaskExecutor) and ex.setting == "dask-local:2"
    ex.client().wait_for_workers(2, timeout=60)
    yield ex
    ex.close()
    assert not [p for p in multiprocessing.active_children() if p.is_alive()]


@pytest.fixture
def dask_local(cluster):
    cluster.client().wait_for_workers(2, timeout=60)  # a worker killed by a test is back
    return cluster


@pytest.fixture(autouse=True)
def no_child_process_left_running():
    """The cluster's worker processes live for the module; nothing else may be left behind."""
    yield
    left = [
        p
        for p in multiprocessing.active_children()
        if p.is_alive() and not p.name.startswith(WORKER_PROCESS)
    ]
    for p in left:
        p.kill()
        p.join(5)
    assert not left, f"child process(es) still running: {[p.name for p in left]}"


@pytest.fixture(scope="module")
def demo():
    return read_corpus(DEMO_DIR / "train.conll")


def _busy_threads(executor) -> int:
    """Tasks still running in the workers' threads (cancelled ones included)."""
    return sum(executor.client().run(lambda dask_worker: len(dask_worker.active_threads)).values())


def _same_lists(a, b):
    assert a.tagset == b.tagset and a.words == b.words and a.ids == b.ids and a.meta == b.meta
    assert [list(g) for g in a.gold] == [list(g) for g in b.gold]
    assert all(np.array_equal(x, y) for x, y in zip(a.candidates, b.candidates))
    assert all(np.array_equal(x, y) for x, y in zip(a.logprobs, b.logprobs))


# -- the acceptance: same lists, a sweep, cancellation -------------------------------------------


def test_jackknife_lists_are_identical_with_local_and_dask_local(demo, dask_local):
    dev = read_corpus(DEMO_DIR / "dev.conll")
    kw = {
        "folds": 3,
        "n": 5,
        "tagger_params": {"cutoff": 1, "max_iter": 15},
        "full": True,
        "decode": {"dev": dev},
    }
    local = jackknife(demo, workers=2, **kw)
    events = []
    remote = jackknife(demo, executor=dask_local, progress=events.append, **kw)
    _same_lists(local.nbest, remote.nbest)
    _same_lists(local.decoded["dev"], remote.decoded["dev"])
    assert np.array_equal(local.folds, remote.folds)
    # the model comes back as its .npz, which stores float32 weights: the same file either way
    assert np.array_equal(local.model.W_.astype(np.float32), remote.model.W_.astype(np.float32))
    assert local.model.tagset_ == remote.model.tagset_
    finals = [e.job for e in events if e.final]
    assert sorted(finals) == [
        "fold 1/3",
        "fold 2/3",
        "fold 3/3",
        f"model on all {len(demo)} sentences",
    ]
    # progress from the workers
    # (the tagger's epochs, or how it chooses them: a child sends only its latest message)
    assert any(not e.final and "epoch" in e.message for e in events)


def test_the_kazama_suite_on_dask_has_its_folds_and_rerankers_as_stages(dask_local, tmp_path):
    """With a remote executor the re-rankers' folds cannot follow the margin perceptron in the
    same run: the suite plans them as stages of their own, enters them in order, hears each fold,
    and reports what the suite on local processes reports, predictions byte for byte."""
    from helpers.recorder import Recorder

    from nerstudio.experiments.kazama import KazamaConfig
    from nerstudio.runs import stages as st
    from nerstudio.runs.kazama_suite import STAGE_SCORING, STAGE_TRAINING, kazama_stages, run_kazama

    cfg = KazamaConfig(
        epochs=2,
        joint_epochs=2,
        n=3,
        n_test=3,
        n_primes=(),
        folds=2,
        workers=1,
        systems=("margin", "reranking2"),
    )
    paths = [DEMO_DIR / f"{name}.conll" for name in ("train", "dev", "test")]
    ctx = Recorder()
    remote = run_kazama(*paths, tmp_path / "dask", cfg, ctx, executor=dask_local)
    stages = [STAGE_TRAINING, STAGE_SCORING, st.STAGE_JACKKNIFE, st.STAGE_RERANKER]
    assert (
        ctx.entered == kazama_stages(cfg, remote=True) == [st.STAGE_READ, *stages, st.STAGE_OUTPUTS]
    )
    folds = [(d, t) for s, m, d, t in ctx.reports if s == st.STAGE_JACKKNIFE and "listed" in m]
    assert sorted(folds) == [(1, 2), (2, 2)]
    local = run_kazama(*paths, tmp_path / "local", cfg)

    def figures(report):
        return [(s["name"], s["dev"], s["test"], s["settings"]) for s in report["systems"]]

    assert figures(remote) == figures(local)
    for s in local["systems"]:
        pred = f"pred-{s['name']}-test.conll"
        assert (tmp_path / "dask" / pred).read_bytes() == (tmp_path / "local" / pred).read_bytes()


def test_cross_validated_lists_are_identical_on_dask(demo, dask_local):
    params = {"variant": "margin", "C": 50.0, "epochs": 2, "keep_best": False}
    want = cross_validated_lists(demo, params, 5, 2, workers=1)
    got = cross_validated_lists(demo, params, 5, 2, executor=dask_local)
    assert all(np.array_equal(x, y) and x.dtype == y.dtype for x, y in zip(got[0], want[0]))
    assert all(np.array_equal(x, y) for x, y in zip(got[1], want[1]))
    assert got[2] == want[2]


def test_a_sweep_of_four_points_writes_its_table_and_plot(dask_local, tmp_path):
    import matplotlib.image

    grid = parse_settings("boost", "rounds=200,1000 epsilon=0.001,0.0025")
    args = ("boost", DEMO_NBEST / "train.nbest.npz", DEMO_NBEST / "dev.nbest.npz", grid)
    remote = run_sweep(*args, tmp_path / "dask", {"eval_every": 100}, executor=dask_local)
    local = run_sweep(*args, tmp_path / "local", {"eval_every": 100}, workers=1)
    assert [p["settings"] for p in remote["points"]] == [
        {"rounds": 200, "epsilon": 0.001},
        {"rounds": 200, "epsilon": 0.0025},
        {"rounds": 1000, "epsilon": 0.001},
        {"rounds": 1000, "epsilon": 0.0025},
    ]
    for a, b in zip(remote["points"], local["points"]):
        assert (
            a["dev"] == b["dev"] and a["curve"] == b["curve"] and a["best_step"] == b["best_step"]
        )
    assert remote["executor"] == "dask-local:2"
    table = (tmp_path / "dask" / "sweep.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith(("| 200 ", "| 1000 "))]
    assert len(rows) == 4 and sum("**best**" in r for r in rows) == 1
    best = remote["points"][remote["best"]]["dev"]["f1"]
    assert best == max(p["dev"]["f1"] for p in remote["points"]) and f"{best:.2f} **best**" in table
    img = matplotlib.image.imread(tmp_path / "dask" / "sweep.png")
    assert img.shape[0] > 300 and img.shape[1] > 600  # two panels: rounds and epsilon


def test_cancelling_a_sweep_stops_its_tasks(dask_local, tmp_path):
    grid = parse_settings("maxent", "l2=0.5,1,2,4")
    fixed = {
        "optimizer": "gis",
        "max_iter": 10**8,
        "cutoff": 1,
    }  # GIS never stops early: days, unless stopped
    events = []
    cancelled_at: list[float] = []

    def should_cancel():
        running = {e.job for e in events if "iteration" in e.message}
        if len(running) >= 2 and not cancelled_at:  # both workers are training a point
            cancelled_at.append(time.monotonic())
        return bool(cancelled_at)

    with pytest.raises(Cancelled):
        run_sweep(
            "maxent",
            DEMO_DIR / "train.conll",
            DEMO_DIR / "dev.conll",
            grid,
            tmp_path,
            fixed,
            executor=dask_local,
            progress=events.append,
            should_cancel=should_cancel,
        )
    # returned without waiting for the running points
    assert time.monotonic() - cancelled_at[0] < 1.0
    deadline = time.monotonic() + 10
    while _busy_threads(dask_local) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _busy_threads(dask_local) == 0, "the points kept running on the workers"
    assert not any(dask_local.client().processing().values())  # the queued points never start
    assert not (tmp_path / "sweep.json").exists()


# -- workers that die, errors, inputs ----------------------------------------------------------


def _dies(data, job, ctx):
    """Kills its worker process on its first ``deaths`` attempts (counted in files)."""
    folder = job.settings["dir"]
    attempt = len(os.listdir(folder))
    with open(os.path.join(folder, f"attempt-{attempt}-{os.getpid()}"), "w"):
        pass
    if attempt < job.settings["deaths"]:
        time.sleep(0.5)  # the start reaches the caller before the death
        os.kill(os.getpid(), signal.SIGKILL)
    return {"attempts": attempt + 1, "sentences": len(data)}


def _fails(data, job, ctx):
    raise ValueError(f"no entity of type MISC in {job.name}")


def _jobs(task, tmp_path, deaths=0):
    (tmp_path / "a").mkdir()
    return [
        Job(
            "point a=1",
            task,
            None,
            {"dir": str(tmp_path / "a"), "deaths": deaths},
            "done",
            POINT_FILES,
        )
    ]


def test_a_worker_killed_mid_task_is_retried_once(demo, dask_local, tmp_path):
    events = []
    run = run_jobs(
        _jobs(_dies, tmp_path, deaths=1),
        demo.sentences,
        executor=dask_local,
        progress=events.append,
        source=CorpusFile.of(demo, "sentences"),
    )
    assert run.results == [{"attempts": 2, "sentences": len(demo)}]
    assert len(os.listdir(tmp_path / "a")) == 2
    assert [e.notice for e in events if "died: retrying on" in e.message] == [
        True
    ]  # shown where only ends are


def test_a_second_death_is_one_line_naming_the_job(demo, dask_local, tmp_path):
    with pytest.raises(ChildProcessFailed) as err:
        run_jobs(
            _jobs(_dies, tmp_path, deaths=2),
            demo.sentences,
            executor=dask_local,
            source=CorpusFile.of(demo, "sentences"),
        )
    msg = str(err.value)
    assert msg.startswith("point a=1: its Dask worker died twice") and "\n" not in msg
    assert len(os.listdir(tmp_path / "a")) == 2  # retried once, not more


def test_a_task_error_reaches_the_caller_with_its_type(demo, dask_local, tmp_path):
    with pytest.raises(ValueError, match="no entity of type MISC in point a=1"):
        run_jobs(
            _jobs(_fails, tmp_path),
            demo.sentences,
            executor=dask_local,
            source=CorpusFile.of(demo, "sentences"),
        )


def test_inputs_go_as_paths_when_every_worker_sees_them_else_as_bytes(demo, dask_local, tmp_path):
    from nerstudio.runtime.dask_executor import _worker_sees
    from nerstudio.runtime.file_hash import sha256_file

    train = str(DEMO_DIR / "train.conll")
    digest = sha256_file(train)
    # what a worker answers: the paths it reads with the caller's content
    assert _worker_sees(
        {train: digest, str(tmp_path / "nowhere"): digest, str(DEMO_DIR / "dev.conll"): digest}
    )[1] == [train]
    address = dask_local.client().scheduler.address
    with executor_from_setting(
        "dask://" + address.split("://")[1]
    ) as by_path:  # a running scheduler
        # the workers see it: only its path goes
        assert by_path._ship(by_path.client(), {train: digest}) == {}
    params = {"variant": "margin", "C": 50.0, "epochs": 1, "keep_best": False}
    want = cross_validated_lists(demo, params, 3, 2, workers=1)
    with DaskExecutor(
        address, ship="bytes"
    ) as by_bytes:  # as for workers without the shared folder
        shipped = by_bytes._ship(by_bytes.client(), {train: digest})
        assert list(shipped) == [train] and shipped[train][0] == digest
        del shipped
        # the workers must read the corpus again, from the shipped copy
        by_bytes.client().run(clear_cache)
        got = cross_validated_lists(demo, params, 3, 2, executor=by_bytes)
    assert all(np.array_equal(x, y) for x, y in zip(got[0], want[0])) and got[2] == want[2]
    # the workers read the shipped copy, kept by content in their temporary folder
    assert any(
        f.startswith(digest)
        for f in os.listdir(os.path.join(tempfile.gettempdir(), "nerstudio-inputs"))
    )


def test_a_corpus_its_file_no_longer_holds_is_refused(dask_local, tmp_path):
    path = tmp_path / "train.conll"
    shutil.copy(DEMO_DIR / "train.conll", path)
    corpus = read_corpus(path)
    corpus.sentences[0].spans = [Span(0, 1, "PER")]  # an edit not saved
    with pytest.raises(
        NerstudioError, match="the file differs from the corpus the work was asked for"
    ) as err:
        jackknife(
            corpus, folds=2, n=3, tagger_params={"cutoff": 1, "max_iter": 3}, executor=dask_local
        )
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_an_unreachable_scheduler_is_one_line(monkeypatch):
    import nerstudio.runtime.dask_executor as de

    monkeypatch.setattr(de, "CONNECT_TIMEOUT", 1.0)
    ex = executor_from_setting("dask://127.0.0.1:9")  # discard port: nothing listens
    with pytest.raises(
        NerstudioError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"
    ):
        ex.client()
