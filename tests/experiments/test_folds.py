"""The fold driver (nerstudio.runtime.folds): same lists as before, in fold order, with
progress per fold and from inside a fold, errors and dead workers reported, and cancellation
that returns without waiting for running folds."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import Cancelled
from nerstudio.experiments.kazama_fits import cross_validated_lists
from nerstudio.runtime import pipeline
from nerstudio.runtime.child_process import ChildProcessFailed
from nerstudio.runtime.folds import (
    Fold,
    InlineExecutor,
    Job,
    ProcessExecutor,
    document_folds,
    forks,
    run_folds,
    split,
)
from nerstudio.runtime.pipeline import jackknife, merge_nbest, sentence_ids
from nerstudio.tagging.joint_local import first_model_lists
from nerstudio.tagging.maxent import MaxEntTagger
from nerstudio.tagging.perceptron import PerceptronTagger


@pytest.fixture(scope="module")
def demo() -> Corpus:
    return read_corpus(DEMO_DIR / "train.conll")


def _same_lists(a, b):
    assert a.tagset == b.tagset and a.words == b.words and a.ids == b.ids
    assert [list(g) for g in a.gold] == [list(g) for g in b.gold]
    for x, y in zip(a.candidates, b.candidates):
        assert np.array_equal(x, y)
    for x, y in zip(a.logprobs, b.logprobs):
        assert np.array_equal(x, y)  # bit for bit: the same models decoded the same sentences


# -- the recipes the driver replaced, written out as they were --------------------------------------


def _reference_jackknife(corpus, folds, n, params, decode):
    params = dict(params, labels=corpus.labels)
    sentences = corpus.sentences
    fold_of = document_folds(corpus, folds)
    full = MaxEntTagger(**params).fit(sentences)
    decoded = {name: full.nbest(s, n=n, ids=ids) for name, (s, ids) in decode.items()}
    parts = []
    for f in range(folds):
        test_idx, train_idx = np.nonzero(fold_of == f)[0], np.nonzero(fold_of != f)[0]
        tagger = MaxEntTagger(**params).fit([sentences[i] for i in train_idx])
        parts.append((test_idx, tagger.nbest([sentences[i] for i in test_idx], n=n)))
    merged = merge_nbest(parts, len(sentences), ids=sentence_ids(corpus))
    merged.meta.update({"jackknife_folds": folds, "fold": fold_of.tolist()})
    return merged, full, decoded


def _reference_cross_validated_lists(corpus, params, n, folds):
    docs = corpus.documents
    fold_of_sent = document_folds(corpus, folds)
    first_sent = np.cumsum([0] + [len(d.sentences) for d in docs])[:-1]
    fold_of = fold_of_sent[first_sent]
    params = dict(params, labels=corpus.labels)
    out: list = [None] * len(docs)
    for f in range(folds):
        train_idx, test_idx = np.nonzero(fold_of != f)[0], np.nonzero(fold_of == f)[0]
        first = PerceptronTagger(**params).fit(Corpus([docs[i] for i in train_idx]))
        lists, scores, gold = first_model_lists(
            first, first.prepare(Corpus([docs[i] for i in test_idx])), n
        )
        for k, i in enumerate(test_idx):
            out[int(i)] = (lists[k], scores[k], gold[k])
    return [o[0] for o in out], [o[1] for o in out], [o[2] for o in out]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_jackknife_lists_are_those_of_the_former_recipe(demo, workers):
    dev = read_corpus(DEMO_DIR / "dev.conll")
    params = {"cutoff": 1, "max_iter": 15}
    decode = {"dev": (dev.sentences, sentence_ids(dev))}
    ref, ref_model, ref_decoded = _reference_jackknife(demo, 3, 5, params, decode)
    events = []
    res = jackknife(
        demo,
        folds=3,
        n=5,
        tagger_params=params,
        workers=workers,
        full=True,
        decode=decode,
        progress=events.append,
    )
    _same_lists(res.nbest, ref)
    # the lists carry their corpus's documents and file, whoever made them
    own = {"documents": demo.sentence_document(), "source": os.path.abspath(demo.path)}
    assert res.nbest.meta == {**ref.meta, **own}
    _same_lists(res.decoded["dev"], ref_decoded["dev"])
    assert np.array_equal(res.model.W_, ref_model.W_)
    finals = [e for e in events if e.final]
    assert [e.done for e in finals] == [1, 2, 3, 4] and {e.total for e in events} == {4}
    assert {e.job for e in finals} == {
        "fold 1/3",
        "fold 2/3",
        "fold 3/3",
        f"model on all {len(demo)} sentences",
    }
    if workers == 1:  # the tagger's progress reaches the caller from inside each fold
        # (from child processes it is sampled, the latest message only: whether one falls
        # within a fold of this size depends on the machine's load, so it is not asserted there)
        assert any(not e.final and "epoch" in e.message for e in events)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_cross_validated_lists_are_those_of_the_former_recipe(demo, workers):
    params = {"variant": "margin", "C": 50.0, "epochs": 2, "keep_best": False}
    said = []
    got = cross_validated_lists(
        demo, params, 5, 2, workers=workers, progress=lambda *a: said.append(a)
    )
    want = _reference_cross_validated_lists(demo, params, 5, 2)
    assert len(got[0]) == len(demo.documents)
    lists, scores, gold = got
    assert all(np.array_equal(x, y) for x, y in zip(lists, want[0]))
    assert all(np.array_equal(x, y) for x, y in zip(scores, want[1]))
    assert gold == want[2]
    assert sorted(m.split(" listed")[0] for m, _, _ in said) == ["fold 1/2", "fold 2/2"]
    assert [(done, total) for _, done, total in said] == [(1, 2), (2, 2)]


PRELOAD_PROBE = """
import sys
from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.resources import _shared_gazetteers
from nerstudio.resources.clusters import word_paths
from nerstudio.runtime.pipeline import preload
from nerstudio.tagging.maxent import MaxEntTagger

corpus = read_corpus(DEMO_DIR / "train.conll")
params = dict(features="conll+rich+gaz+clusters", cutoff=2, epochs=2, labels=corpus.labels)
assert "numba" not in sys.modules
preload(corpus.sentences, params)
from nerstudio.tagging import _online_compiled as oc

def loaded():
    return (
        {name: len(getattr(oc, name).overloads) for name in ("adagrad_epoch", "catch_up")},
        _shared_gazetteers.cache_info().misses,
        word_paths.cache_info().misses,
    )

before = loaded()
MaxEntTagger(**params).fit(corpus.sentences).nbest(corpus.sentences[:5])
assert loaded() == before, (before, loaded())
assert min(before[0].values()) == 1 and before[1:] == (1, 1), before
print("preloaded")
"""


def test_preload_loads_what_training_and_decoding_load():
    """After :func:`preload`, training and decoding a tagger with the same settings load
    nothing more: no compiled kernel, no gazetteer list, no word cluster (a fresh interpreter,
    where nothing was loaded before), so the fold workers forked afterwards load nothing
    either."""
    env = dict(os.environ)
    env.pop("NUMBA_DISABLE_JIT", None)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PRELOAD_PROBE)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "preloaded"


def test_jackknife_preloads_only_for_workers_it_forks(demo, monkeypatch):
    """Worker processes forked from this one share what it loaded; one thread, or workers
    started afresh (spawn, other machines), would gain nothing from a preload."""
    assert forks(ProcessExecutor(2, "fork")) and not forks(ProcessExecutor(2, "spawn"))
    assert not forks(InlineExecutor())
    calls = []
    monkeypatch.setattr(pipeline, "preload", lambda sentences, params: calls.append(params))
    small = Corpus(demo.documents[:4])
    jackknife(small, folds=2, n=2, tagger_params={"epochs": 1}, workers=1)
    assert calls == []
    jackknife(small, folds=2, n=2, tagger_params={"epochs": 1}, executor=ProcessExecutor(2))
    assert calls == [{"epochs": 1, "labels": small.labels}]


def test_split_by_document_keeps_documents_whole(demo):
    fold_of, folds = split(demo, 4, unit="document")
    assert sorted(np.concatenate([f.test for f in folds]).tolist()) == list(
        range(len(demo.documents))
    )
    for f in folds:
        assert not set(f.train) & set(f.test) and len(f.train) + len(f.test) == len(demo.documents)
    doc_of = demo.sentence_document()
    for f in folds:  # every sentence of a held-out document is in that fold
        assert {int(fold_of[i]) for i, d in enumerate(doc_of) if d in set(f.test.tolist())} == {
            f.index
        }
    _, by_sentence = split(demo, 4)
    assert [len(f.test) for f in by_sentence] == [int((fold_of == k).sum()) for k in range(4)]


# -- the driver with test tasks (module level: a child process finds them by name) --------------------


def _index_late(data, job, ctx):
    time.sleep(0.05 * (job.fold.count - job.fold.index))  # the last fold finishes first
    ctx.progress(f"working on {len(job.fold.test)} items")
    return job.fold.index, sorted(data[i] for i in job.fold.test)


def _sleeper(data, job, ctx):
    with open(os.path.join(job.settings["dir"], f"{os.getpid()}.pid"), "w") as f:
        f.write(job.name)
    for _ in range(600):  # a minute, unless cancelled (a child process is killed instead)
        ctx.check()
        time.sleep(0.1)
    return None


def _fails(data, job, ctx):
    if job.fold.index == 1:
        raise ValueError("no entity of type MISC in this fold")
    return job.fold.index


def _dies(data, job, ctx):
    if job.fold.index == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    return job.fold.index


def _folds(k: int, n: int = 10) -> list[Fold]:
    fold_of = np.arange(n) % k
    return [Fold(f, k, np.nonzero(fold_of != f)[0], np.nonzero(fold_of == f)[0]) for f in range(k)]


EXECUTORS = [InlineExecutor(), ProcessExecutor(3)]


@pytest.mark.parametrize("executor", EXECUTORS, ids=["inline", "processes"])
def test_results_come_back_in_fold_order(executor):
    events = []
    extra = [Job("whole", _index_late, Fold(-1, 3, np.arange(0), np.arange(10)))]
    run = run_folds(
        _index_late,
        list(range(100, 110)),
        _folds(3),
        extra=extra,
        executor=executor,
        progress=events.append,
    )
    assert run.results == [(0, [100, 103, 106, 109]), (1, [101, 104, 107]), (2, [102, 105, 108])]
    assert run.extra == {"whole": (-1, list(range(100, 110)))}
    assert sorted(run.seconds) == ["fold 1/3", "fold 2/3", "fold 3/3", "whole"]
    assert [e.done for e in events if e.final] == [1, 2, 3, 4]
    assert sum(not e.final for e in events) == 4 and all(e.total == 4 for e in events)


def _stamp(data, job, ctx):
    """Note when the job started (a file per job) and return its name and value."""
    with open(os.path.join(job.settings["dir"], job.name), "w") as f:
        f.write(repr(time.monotonic()))
    time.sleep(job.settings.get("sleep", 0.0))
    return job.name, job.settings["value"] * 2


@pytest.mark.parametrize(
    "executor", [InlineExecutor(), ProcessExecutor(1)], ids=["inline", "process"]
)
def test_follow_up_jobs_run_before_the_jobs_still_waiting(executor, tmp_path):
    """A job's follow-ups (``then``) run next, before the given jobs not yet started, and their
    results follow the given jobs' in the order they were added."""
    from nerstudio.runtime.folds import run_jobs

    def job(name, value):
        return Job(name, _stamp, settings={"dir": str(tmp_path), "value": value})

    def then(j, result, seconds):
        assert seconds >= 0
        if j.name == "a":
            return [job("a.1", result[1]), job("a.2", result[1] + 1)]
        if j.name == "a.2":
            return [job("a.2.1", result[1])]
        return []

    run = run_jobs([job("a", 1), job("b", 10), job("c", 20)], None, executor=executor, then=then)
    assert run.results == [("a", 2), ("b", 20), ("c", 40), ("a.1", 4), ("a.2", 6), ("a.2.1", 12)]
    started = {n: float((tmp_path / n).read_text()) for n in run.seconds}
    assert sorted(started, key=started.get) == ["a", "a.1", "a.2", "a.2.1", "b", "c"]


def test_follow_ups_need_unique_names_and_a_local_executor(tmp_path):
    from nerstudio.runtime.folds import run_jobs

    jobs = [Job("a", _stamp, settings={"dir": str(tmp_path), "value": 1})]
    with pytest.raises(ValueError, match="'a' twice"):
        run_jobs(jobs, None, executor=InlineExecutor(), then=lambda j, r, s: [j])

    class Remote(InlineExecutor):
        remote = True

    with pytest.raises(ValueError, match="local executor"):
        run_jobs(jobs, None, executor=Remote(), then=lambda j, r, s: [])


@pytest.mark.parametrize("executor", EXECUTORS, ids=["inline", "processes"])
def test_a_fold_error_reaches_the_caller(executor):
    with pytest.raises(ValueError, match="no entity of type MISC in this fold"):
        run_folds(_fails, list(range(10)), _folds(3), executor=executor)
    assert multiprocessing.active_children() == []


def test_a_killed_worker_is_reported_not_waited_for():
    with pytest.raises(ChildProcessFailed, match=r"fold 1/3: .*killed by SIGKILL"):
        run_folds(_dies, list(range(10)), _folds(3), executor=ProcessExecutor(2))
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("executor", EXECUTORS, ids=["inline", "processes"])
def test_cancel_returns_within_a_second_without_waiting_for_running_folds(executor, tmp_path):
    started = threading.Event()
    cancelled_at: list[float] = []

    def should_cancel():
        if not started.is_set() and len(os.listdir(tmp_path)) >= (
            1 if isinstance(executor, InlineExecutor) else 3
        ):
            started.set()  # every fold that can run is running
        if started.is_set() and not cancelled_at:
            cancelled_at.append(time.monotonic())
        return started.is_set()

    with pytest.raises(Cancelled):
        run_folds(
            _sleeper,
            [],
            _folds(3),
            {"dir": str(tmp_path)},
            executor=executor,
            should_cancel=should_cancel,
        )
    waited = time.monotonic() - cancelled_at[0]
    assert waited < 1.0, f"cancel took {waited:.1f}s"
    # the running folds were stopped, not left behind
    assert multiprocessing.active_children() == []
    pids = [int(p.split(".")[0]) for p in os.listdir(tmp_path)]
    for pid in pids if not isinstance(executor, InlineExecutor) else ():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_jackknife_in_process_reports_iterations_and_cancels_inside_a_fold(demo):
    """What the application's job needs: per-fold and per-epoch progress on the caller's
    thread, and cancellation inside a fold's training."""
    events = []

    def should_cancel():
        return any("fold 2/3: tagger epoch 3" in e.message for e in events)

    with pytest.raises(Cancelled):
        jackknife(
            demo,
            folds=3,
            n=5,
            tagger_params={"cutoff": 1, "max_iter": 30},
            workers=1,
            progress=events.append,
            should_cancel=should_cancel,
        )
    assert [e.job for e in events if e.final] == ["fold 1/3"]
    assert not any("fold 2/3: tagger epoch 5" in e.message for e in events)
