"""The K&T suite's trainings side by side: one job per system and margin C, and per fold.

Why this exists: every tagger of K&T's Table 2 and every C of a system's grid is trained from
the same data independently of the others; only the choice among a system's C values (by dev F)
and the re-ranking baselines wait for others. One after the other, they left the second core
idle for most of an hour. Here each training is a :class:`~.folds.Job` run by
:func:`~.folds.run_jobs`: child processes, at most ``workers`` at a time, or in the caller's
thread for one worker. A job saves its model as the project's ``.npz`` + JSON file and returns
the path and its dev F; the file of the model each system keeps is moved to its place in the
output folder (``tagger-<system>.npz``, ``joint-<system>.npz``) and loaded from there.

The re-ranking baselines (:class:`Reranking`) are follow-ups in the same run (their folds on a
remote executor are :func:`cross_validated_lists`, before the re-rankers): as soon as every
margin C has trained, dev chooses the margin perceptron, and the folds that list the training
documents with first models of that C and epoch start on the next free worker, ahead of the
trainings still waiting; when the last fold is in, the re-rankers' trainings start the same way.
The lists no longer wait for the joint trainings, which have nothing to do with them.

A loaded model predicts exactly what the trained one did and every job is deterministic, so the
report does not depend on the number of workers or on the order the jobs ran in
(tests/experiments/test_kazama.py compares one worker with two, and the follow-ups with stages one after
the other).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..corpus.model import Corpus
from ..persist import load_npz, save_npz
from ..runtime.folds import (
    Fold,
    FoldProgress,
    Job,
    TaskContext,
    is_remote,
    local_executor,
    run_folds,
    run_jobs,
    split,
)
from ..runtime.work_files import CorpusFile, ResultFiles
from ..tagging.joint import JointTagger
from ..tagging.joint_local import first_model_lists
from ..tagging.perceptron import PerceptronTagger


@dataclass(frozen=True)
class Fit:
    """One training: ``system`` with margin ``C``. ``kind`` is ``"local"`` (a
    :class:`PerceptronTagger` built from ``params``) or ``"joint"`` (a :class:`JointTagger` of
    algorithm ``system`` built from ``params``); ``first`` is the path of the first model of a
    re-ranking baseline; ``twin`` the plain perceptron that a local averaging fit trains in the
    same run (its updates are the same: :meth:`PerceptronTagger.fit` with ``plain``)."""

    system: str
    C: float
    kind: str
    params: dict = field(default_factory=dict)
    first: str | None = None
    twin: Fit | None = None

    @property
    def name(self) -> str:
        return f"{self.system} C={self.C:g}"


#: how a twin's progress messages start (then ``epoch k: dev F``), by its system
TWIN_SAYS = "{}: "

#: the output file of a kept model, by kind of training
KEPT_FILE = {"local": "tagger-{}.npz", "joint": "joint-{}.npz"}


@dataclass(frozen=True)
class Trained:
    """What a job hands back: the model file and its dev F (None without dev), and its twin's."""

    path: str
    dev_f1: float | None
    twin: Trained | None = None


def fit_task(data, job: Job, ctx: TaskContext) -> Trained:
    """Train ``job.settings["fit"]`` on ``data`` = (train, dev, cross-validated lists or None;
    a follow-up's lists come in ``job.settings["lists"]``) and save it in
    ``job.settings["folder"]``."""
    train, dev, lists = data
    lists = job.settings.get("lists", lists)
    fit: Fit = job.settings["fit"]

    def said(st, prefix: str = "") -> None:
        f = getattr(st, "dev_f1", None)
        if f is not None:
            epoch = getattr(st, "epoch", getattr(st, "step", "?"))  # joint stats count steps
            ctx.progress(f"{prefix}epoch {epoch}: dev F {f:.2f}")

    def saved(model: PerceptronTagger | JointTagger, name: str) -> str:
        path = os.path.join(job.settings["folder"], f"{name.replace(' ', '_')}.npz")
        model.save(path)
        return path

    model: PerceptronTagger | JointTagger
    twin = None
    if fit.kind == "local":
        plain, prefix = None, ""
        if fit.twin is not None:
            plain, prefix = PerceptronTagger(**fit.twin.params), TWIN_SAYS.format(fit.twin.system)
        tagger = PerceptronTagger(**fit.params).fit(
            train,
            dev,
            callback=said,
            should_cancel=ctx.should_cancel,
            plain=plain,
            plain_callback=lambda st: said(st, prefix),
        )
        model, dev_f1 = tagger, tagger.best_dev_f1_
        if plain is not None and fit.twin is not None:
            ctx.check()
            twin = Trained(saved(plain, fit.twin.name), plain.best_dev_f1_)
    else:
        joint = JointTagger(fit.system, **fit.params)
        kw = {}
        if fit.first is not None:
            kw = {"first": PerceptronTagger.load(fit.first), "train_lists": lists}
        joint.fit(train, dev, callback=said, should_cancel=ctx.should_cancel, **kw)
        model = joint
        dev_f1 = max((h.dev_f1 for h in joint.history_ if h.dev_f1 is not None), default=None)
    ctx.check()
    return Trained(saved(model, job.name), dev_f1, twin)


def first_model_fold(docs, job: Job, ctx: TaskContext):
    """A fold's task: train the first model on the other folds' documents and list the held-out
    documents' candidates."""
    s = job.settings

    def epoch(st):
        ctx.progress(f"first model epoch {st.epoch}")

    fold = job.required_fold()
    first = PerceptronTagger(**s["params"]).fit(
        Corpus([docs[i] for i in fold.train]), callback=epoch, should_cancel=ctx.should_cancel
    )
    ctx.check()
    held = Corpus([docs[i] for i in fold.test])
    return first_model_lists(first, first.prepare(held), s["n"])


def merge_lists(folds: Sequence[Fold], results: Sequence, n_docs: int):
    """The folds' lists, scores and gold scores back in document order."""
    out: list = [None] * n_docs
    for fold, (lists, scores, gold) in zip(folds, results):
        for k, i in enumerate(fold.test):
            out[int(i)] = (lists[k], scores[k], gold[k])
    return [o[0] for o in out], [o[1] for o in out], [o[2] for o in out]


LISTS_FORMAT, LISTS_VERSION = "nerstudio-candidate-lists", 1


def _save_lists(result, folder: str) -> None:
    """A fold's candidate lists as one ``.npz``: the tags of every list flattened, with shapes."""
    lists, scores, gold = result
    shapes = np.array([x.shape for x in lists], dtype=np.int64).reshape(-1, 2)
    save_npz(
        os.path.join(folder, "lists.npz"),
        {"format": LISTS_FORMAT, "version": LISTS_VERSION},
        {
            "shapes": shapes,
            "tags": np.concatenate([x.reshape(-1) for x in lists] or [np.zeros(0, np.int16)]),
            "scores": np.concatenate([np.asarray(x, np.float64) for x in scores] or [np.zeros(0)]),
            "gold": np.asarray(gold, dtype=np.float64),
        },
    )


def _load_lists(folder: str):
    _, a = load_npz(
        os.path.join(folder, "lists.npz"), LISTS_FORMAT, LISTS_VERSION, "candidate lists"
    )
    lists, scores, p, q = [], [], 0, 0
    for k, L in a["shapes"]:
        lists.append(a["tags"][p : p + k * L].reshape(k, L).astype(np.int16))
        scores.append(a["scores"][q : q + k])
        p, q = p + k * L, q + k
    return lists, scores, a["gold"].tolist()


def follow_up_fold(data, job: Job, ctx: TaskContext):
    """:func:`first_model_fold` as a follow-up, whose data is :func:`fit_task`'s (train first)."""
    return first_model_fold(data[0].documents, job, ctx)


#: how a fold's lists travel back from another machine
LIST_FILES = ResultFiles(_save_lists, _load_lists)


def cross_validated_lists(
    corpus: Corpus,
    params: dict,
    n: int,
    folds: int,
    workers: int | None = None,
    should_cancel: Callable[[], bool] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    executor=None,
):
    """Per training document (corpus order): candidates, their scores and the gold score from a
    first model trained on the other folds (folds by document, :func:`run_folds`;
    ``progress(message, done, total)`` hears every fold that finishes, ``done`` of ``total``
    folds; a remote ``executor`` reads the corpus from its file)."""
    docs = corpus.documents
    params = dict(params)
    params.setdefault("labels", corpus.labels)
    _, parts = split(corpus, folds, unit="document")

    def said(p: FoldProgress) -> None:
        if (p.final or p.notice) and progress is not None:
            progress(p.message, p.done, p.total)

    source = CorpusFile.of(corpus, "documents") if is_remote(executor) else None
    run = run_folds(
        first_model_fold,
        docs,
        parts,
        {"params": params, "n": n},
        done="listed",
        executor=executor,
        workers=workers,
        progress=said,
        should_cancel=should_cancel,
        source=source,
        files=LIST_FILES,
    )
    return merge_lists(parts, run.results, len(docs))


@dataclass
class Chosen:
    """A system's kept model (loaded from its output file), the training that made it, {C: dev
    F} over its grid, and the seconds of its trainings added up (what training them one after
    the other takes)."""

    model: PerceptronTagger | JointTagger
    fit: Fit
    tried: dict
    seconds: float


@dataclass(frozen=True)
class Reranking:
    """The re-ranking baselines as follow-ups of the margin perceptron (module docstring).

    ``folds``: the document folds; ``params(margin)``: the first models' settings from the chosen
    margin perceptron; ``n``: candidates per list; ``fits(first)``: the re-rankers' trainings,
    given the kept margin perceptron's file. :func:`train_all` says each fold that finishes as
    system :data:`LISTS_SAID_AS`."""

    folds: Sequence[Fold]
    params: Callable[[PerceptronTagger], dict]
    n: int
    fits: Callable[[str], Sequence[Fit]]


#: the system that the re-rankers' cross-validated lists are said as, fold by fold
LISTS_SAID_AS = "reranking"


@dataclass
class Trainings:
    """What :func:`train_all` hands back: the kept model of every system; the cross-validated
    lists and the folds' seconds added up, when it made them (:class:`Reranking`)."""

    chosen: dict[str, Chosen]
    lists: tuple | None = None
    fold_seconds: float = 0.0


def train_all(
    fits: Sequence[Fit],
    train,
    dev,
    *,
    lists=None,
    reranking: Reranking | None = None,
    workers: int | None = None,
    out_dir: str,
    say: Callable[[str, str, int, int], None],
    should_cancel: Callable[[], bool] | None = None,
) -> Trainings:
    """Train every fit (:func:`fit_task`, at most ``workers`` at a time) and keep, per system, the
    C of the best dev F (the first of equals, in the order given), its model file moved to
    ``out_dir`` (:data:`KEPT_FILE`). ``say(system, message, done, total)`` hears each epoch's dev
    F (with its C when the system has a grid), each finished training and each finished fold,
    with ``done`` of the ``total`` jobs (trainings, folds, follow-ups) finished. With
    ``reranking``, the folds and the re-rankers follow the margin perceptron's trainings in the
    same run (module docstring); the margin perceptron's fits must then be among ``fits``."""
    fits = list(fits)
    first = os.path.join(out_dir, KEPT_FILE["local"].format("margin"))
    follow = list(reranking.fits(first)) if reranking is not None else []
    total = len(fits) + (len(reranking.folds) + len(follow) if reranking is not None else 0)
    finished = [0]  # jobs, as run_jobs last counted them
    by_name = {f.name: f for f in fits}  # every fit, in the order given (follow-ups last)
    folder = tempfile.mkdtemp(prefix=".fits-", dir=out_dir)  # same file system: moves are renames
    done: dict[str, list[tuple[Fit, Trained, float]]] = {}
    chosen: dict[str, Chosen] = {}
    fold_results: dict[int, object] = {}
    made: dict = {}

    def count(system: str) -> int:
        return sum(f.system == system for f in by_name.values())

    def keep(system: str) -> Chosen:
        """The best dev F among the system's trainings (the first of equals in the order given),
        its file moved to its output name and loaded."""
        order = {name: k for k, name in enumerate(by_name)}
        runs = sorted(done[system], key=lambda r: order[r[0].name])
        f, t, _ = runs[0]
        for r in runs[1:]:
            if (r[1].dev_f1 or -1.0) > (t.dev_f1 or -1.0):
                f, t, _ = r
        path = os.path.join(out_dir, KEPT_FILE[f.kind].format(system))
        os.replace(t.path, path)
        load = PerceptronTagger.load if f.kind == "local" else JointTagger.load
        tried = {r[0].C: r[1].dev_f1 for r in runs}
        chosen[system] = Chosen(load(path), f, tried, sum(r[2] for r in runs))
        return chosen[system]

    def fit_jobs(more: Sequence[Fit], **settings) -> list[Job]:
        for f in more:
            by_name[f.name] = f
            if f.twin is not None:
                by_name[f.twin.name] = f.twin
        return [
            Job(f.name, fit_task, settings={"fit": f, "folder": folder, **settings}) for f in more
        ]

    def said(system: str, message: str) -> None:
        say(system, message, finished[0], total)

    def progress(p: FoldProgress) -> None:
        finished[0] = p.done
        fit = by_name.get(p.job)
        if fit is None:  # a fold of the re-rankers' lists: said when it finishes, or a notice
            if p.notice:
                said(LISTS_SAID_AS, p.message)
        elif p.final:
            for f in (fit, fit.twin) if fit.twin is not None else (fit,):
                said(f.system, f"C={f.C:g} trained")
        else:
            message, twin = p.message.removeprefix(f"{p.job}: "), fit.twin
            if twin is not None and message.startswith(TWIN_SAYS.format(twin.system)):
                fit, message = twin, message.removeprefix(TWIN_SAYS.format(twin.system))
            grid = f"C={fit.C:g} " if count(fit.system) > 1 else ""
            said(fit.system, grid + message)

    def then(job: Job, result, seconds: float) -> list[Job]:
        fit = by_name.get(job.name)
        if fit is None:  # a fold
            assert reranking is not None and job.fold is not None
            fold_results[job.fold.index] = result
            made["fold_seconds"] = made.get("fold_seconds", 0.0) + seconds
            k, n_folds = len(fold_results), len(reranking.folds)
            said(LISTS_SAID_AS, f"{job.name} listed in {seconds:.1f}s ({k}/{n_folds} done)")
            if k < n_folds:
                return []
            made["lists"] = merge_lists(
                reranking.folds, [fold_results[i] for i in range(n_folds)], len(train.documents)
            )
            return fit_jobs(follow, lists=made["lists"])
        done.setdefault(fit.system, []).append((fit, result, seconds))
        if fit.twin is not None:
            done.setdefault(fit.twin.system, []).append((fit.twin, result.twin, seconds))
        if reranking is None or fit.system != "margin" or len(done["margin"]) < count("margin"):
            return []
        margin = keep("margin").model  # the first models' C and epoch are the kept one's
        assert isinstance(margin, PerceptronTagger)
        settings = {"params": reranking.params(margin), "n": reranking.n}
        return [Job(f.name, follow_up_fold, f, settings, "listed") for f in reranking.folds]

    try:
        run_jobs(
            fit_jobs(fits),
            (train, dev, lists),
            executor=local_executor(workers, len(fits) + len(reranking.folds if reranking else ())),
            progress=progress,
            should_cancel=should_cancel,
            then=then,
        )
        for system in done:
            if system not in chosen:
                keep(system)
        return Trainings(chosen, made.get("lists"), made.get("fold_seconds", 0.0))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
