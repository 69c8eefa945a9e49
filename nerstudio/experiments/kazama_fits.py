"""The K&T suite's independent trainings side by side: one job per system and margin C.

Why this exists: every tagger of K&T's Table 2 and every C of a system's grid is trained from
the same data independently of the others; only the choice among a system's C values (by dev F)
and the re-ranking baselines (which need the chosen margin perceptron) wait for others. One
after the other, they left the second core idle for most of an hour. Here each training is a
:class:`~.folds.Job` run by :func:`~.folds.run_jobs`: child processes, at most ``workers`` at a
time, or in the caller's thread for one worker. A job saves its model as the project's
``.npz`` + JSON file and returns the path and its dev F; the file of the model each system keeps
is moved to its place in the output folder (``tagger-<system>.npz``, ``joint-<system>.npz``) and
loaded from there. A loaded model predicts exactly what the trained one did, so the report does not depend
on the number of workers (tests/test_kazama.py compares the report and the predictions made with
one worker and with two).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..tagging.joint import JointTagger
from ..tagging.perceptron import PerceptronTagger
from .folds import FoldProgress, Job, TaskContext, local_executor, run_jobs


@dataclass(frozen=True)
class Fit:
    """One training: ``system`` with margin ``C``. ``kind`` is ``"local"`` (a
    :class:`PerceptronTagger` built from ``params``) or ``"joint"`` (a :class:`JointTagger` of
    algorithm ``system`` built from ``params``); ``first`` is the path of the first model of a
    re-ranking baseline."""

    system: str
    C: float
    kind: str
    params: dict = field(default_factory=dict)
    first: str | None = None

    @property
    def name(self) -> str:
        return f"{self.system} C={self.C:g}"


#: the output file of a kept model, by kind of training
KEPT_FILE = {"local": "tagger-{}.npz", "joint": "joint-{}.npz"}


@dataclass(frozen=True)
class Trained:
    """What a job hands back: the model file and its dev F (None without dev)."""

    path: str
    dev_f1: float | None


def fit_task(data, job: Job, ctx: TaskContext) -> Trained:
    """Train ``job.settings["fit"]`` on ``data`` = (train, dev, cross-validated lists or None)
    and save it in ``job.settings["folder"]``."""
    train, dev, lists = data
    fit: Fit = job.settings["fit"]

    def said(st) -> None:
        f = getattr(st, "dev_f1", None)
        if f is not None:
            epoch = getattr(st, "epoch", getattr(st, "step", "?"))  # joint stats count steps
            ctx.progress(f"epoch {epoch}: dev F {f:.2f}")

    model: PerceptronTagger | JointTagger
    if fit.kind == "local":
        tagger = PerceptronTagger(**fit.params).fit(
            train, dev, callback=said, should_cancel=ctx.should_cancel
        )
        model, dev_f1 = tagger, tagger.best_dev_f1_
    else:
        joint = JointTagger(fit.system, **fit.params)
        kw = {}
        if fit.first is not None:
            kw = {"first": PerceptronTagger.load(fit.first), "train_lists": lists}
        joint.fit(train, dev, callback=said, should_cancel=ctx.should_cancel, **kw)
        model = joint
        dev_f1 = max((h.dev_f1 for h in joint.history_ if h.dev_f1 is not None), default=None)
    ctx.check()
    path = os.path.join(job.settings["folder"], f"{job.name.replace(' ', '_')}.npz")
    model.save(path)
    return Trained(path, dev_f1)


@dataclass
class Chosen:
    """A system's kept model (loaded from its output file), the training that made it, {C: dev
    F} over its grid, and the seconds of its trainings added up (what training them one after
    the other takes)."""

    model: PerceptronTagger | JointTagger
    fit: Fit
    tried: dict
    seconds: float


def train_all(
    fits: Sequence[Fit],
    train,
    dev,
    *,
    lists=None,
    workers: int | None = None,
    out_dir: str,
    say: Callable[[str, str], None],
    should_cancel: Callable[[], bool] | None = None,
) -> dict[str, Chosen]:
    """Train every fit (:func:`fit_task`, at most ``workers`` at a time) and keep, per system, the
    C of the best dev F (the first of equals, in the order given), its model file moved to
    ``out_dir`` (:data:`KEPT_FILE`). ``say(system, message)`` hears each epoch's dev F (with its
    C when the system has a grid) and each finished training."""
    fits = list(fits)
    per_system = Counter(f.system for f in fits)
    by_name = {f.name: f for f in fits}
    folder = tempfile.mkdtemp(prefix=".fits-", dir=out_dir)  # same file system: moves are renames
    try:

        def progress(p: FoldProgress) -> None:
            fit = by_name[p.job]
            if p.final:
                say(fit.system, f"C={fit.C:g} trained ({p.done}/{p.total} trainings)")
            else:
                grid = f"C={fit.C:g} " if per_system[fit.system] > 1 else ""
                say(fit.system, grid + p.message.removeprefix(f"{p.job}: "))

        run = run_jobs(
            [Job(f.name, fit_task, settings={"fit": f, "folder": folder}) for f in fits],
            (train, dev, lists),
            executor=local_executor(workers, len(fits)),
            progress=progress,
            should_cancel=should_cancel,
        )
        tried: dict[str, dict] = {}
        seconds: dict[str, float] = {}
        best: dict[str, tuple[Fit, Trained]] = {}
        for f, t in zip(fits, run.results):
            tried.setdefault(f.system, {})[f.C] = t.dev_f1
            seconds[f.system] = seconds.get(f.system, 0.0) + run.seconds[f.name]
            if f.system not in best or (t.dev_f1 or -1.0) > (best[f.system][1].dev_f1 or -1.0):
                best[f.system] = (f, t)
        chosen: dict[str, Chosen] = {}
        for system, (f, t) in best.items():
            path = os.path.join(out_dir, KEPT_FILE[f.kind].format(system))
            os.replace(t.path, path)
            load = PerceptronTagger.load if f.kind == "local" else JointTagger.load
            chosen[system] = Chosen(load(path), f, tried[system], seconds[system])
        return chosen
    finally:
        shutil.rmtree(folder, ignore_errors=True)
