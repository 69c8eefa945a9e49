"""Sweeps: one learner trained at every point of a grid of settings, with a table and a plot of dev F.

``nerstudio sweep --algo boost --train train.npz --dev dev.npz --grid 'rounds=1e4,1e5
epsilon=0.001,0.0025' --out DIR`` trains the learner once per point of the grid (the Cartesian
product of the values) and scores each on the development data:

* a reranker (``boost``, ``perceptron``, ``voted``, ``averaged``, ``margin``, ``kernel``) on N-best
  files, its settings those of :func:`nerstudio.rerank.model.make_learner` plus the feature
  cut-off ``min_sentences``; global features are built once per process and cut-off, not per
  point; dev F is that of the round or epoch the development set chose (optimistic, as in
  ``train-reranker``);
* a tagger (``maxent``, ``perceptron-tagger``) on corpora, its settings those of
  :class:`~nerstudio.tagging.maxent.MaxEntTagger` or
  :class:`~nerstudio.tagging.perceptron.PerceptronTagger`; dev F of its 1-best output.

The points are jobs of the fold driver (:func:`.folds.run_jobs`): the local process pool by
default, or any executor (Dask: :mod:`.dask_executor`), each point's result coming back as a
JSON file. Values are typed by the setting's default (``1e4`` is the integer 10000 for
``rounds``); ``none`` is ``None`` where the default is. DIR receives ``sweep.json`` (every point's
settings, dev P/R/F, chosen step, seconds and dev curve), ``sweep.md`` (the table) and
``sweep.png`` (dev F against each swept setting, one line per combination of the others).
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..corpus.formats import atomic_open, read_corpus
from ..corpus.model import Corpus, Span
from ..errors import DataError, Msg, SettingsError
from ..evaluation import evaluate_spans
from ..persist import jsonable
from ..rerank.fitting import Fitted, System, build_features, make_learners, train_systems
from ..rerank.model import ALGORITHMS, learner_class
from ..runtime.folds import FoldProgress, Job, TaskContext, is_remote, run_jobs
from ..runtime.work_files import CorpusFile, NBestFile, ResultFiles, load_input
from ..tagging.maxent import MaxEntTagger
from ..tagging.perceptron import PerceptronTagger

TAGGERS = {"maxent": MaxEntTagger, "perceptron-tagger": PerceptronTagger}
SWEEPABLE = ALGORITHMS + tuple(TAGGERS)
NOT_SETTINGS = {
    "labels",
    "dtype",
    "threads",
    "dev_every",
}  # set by the sweep, or not a learning choice
MAX_LINES = 8  # more combinations of the other settings than this: plot the best of them per value


# ------------------------------------------------------------------------------------------------
# the grid


def setting_defaults(algo: str) -> dict[str, Any]:
    """The settings a sweep of ``algo`` may vary, with their defaults."""
    if algo in TAGGERS:
        cls = TAGGERS[algo]
    elif algo in ALGORITHMS:
        cls = learner_class(algo)
    else:
        raise SettingsError(Msg.UNKNOWN.format(what="learner", name=algo, choices=SWEEPABLE))
    out = {
        k: p.default
        for k, p in inspect.signature(cls).parameters.items()
        if k != "self" and k not in NOT_SETTINGS and p.kind is p.POSITIONAL_OR_KEYWORD
    }
    if algo in ALGORITHMS:
        out["min_sentences"] = 5  # the global features' cut-off
    return out


def _typed(name: str, text: str, default):
    t = text.strip()
    try:
        if isinstance(default, bool):
            if t.lower() in ("true", "yes", "1", "on"):
                return True
            if t.lower() in ("false", "no", "0", "off"):
                return False
            raise ValueError
        if isinstance(default, int):
            x = float(t)
            if not x.is_integer():
                raise ValueError
            return int(x)
        if isinstance(default, float):
            return float(t)
    except ValueError:
        kind = "true or false" if isinstance(default, bool) else type(default).__name__
        raise SettingsError(f"{name}={t!r}: expected {kind}") from None
    if t.lower() == "none" and default is None:
        return None
    if default is None:  # an optional flag, number or name
        if t.lower() in ("true", "false"):
            return t.lower() == "true"
        for conv in (int, float):
            try:
                return conv(t)
            except ValueError:
                pass
    return t


def parse_settings(algo: str, text: str, single: bool = False) -> dict[str, list]:
    """``'rounds=1e4,1e5 epsilon=0.001'`` → ``{"rounds": [10000, 100000], "epsilon": [0.001]}``,
    typed by each setting's default; ``single``: one value each (fixed settings)."""
    defaults = setting_defaults(algo)
    out: dict[str, list] = {}
    for item in text.split():
        name, sep, values = item.partition("=")
        if not sep or not name or not values:
            raise SettingsError(f"{item!r}: write NAME=VALUE{'' if single else ',VALUE,...'}")
        if name not in defaults:
            raise SettingsError(
                f"{algo} has no setting {name!r} (it has {', '.join(sorted(defaults))})"
            )
        if name in out:
            raise SettingsError(f"setting {name!r} given twice")
        parts = [values] if single else values.split(",")
        if any(not p.strip() for p in parts):
            raise SettingsError(f"{item!r}: an empty value")
        out[name] = [_typed(name, p, defaults[name]) for p in parts]
        if len(set(map(repr, out[name]))) != len(out[name]):
            raise SettingsError(f"{item!r}: a value given twice")
    return out


def grid_points(grid: dict[str, list]) -> list[dict]:
    """Every combination of the grid's values, the first setting varying slowest."""
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def point_name(point: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in point.items())


# ------------------------------------------------------------------------------------------------
# the data a point trains on (loaded once per process)


class RerankLists:
    """Training and development N-best lists, with their global features per cut-off (cached)."""

    def __init__(self, train, dev):
        self.train, self.dev = train, dev
        self._features: dict = {}
        self._lock = threading.Lock()

    def __getstate__(self):  # a spawned local worker gets the lists, not the lock
        return {"train": self.train, "dev": self.dev, "_features": self._features}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def features(self, min_sentences: int, should_cancel=None) -> Fitted:
        """The reranker stage's features at this cut-off (built once, shared by the points)."""
        with self._lock:
            if min_sentences not in self._features:
                self._features[min_sentences] = build_features(
                    self.train,
                    self.dev,
                    {"min_sentences": min_sentences},
                    should_cancel=should_cancel,
                )
            return self._features[min_sentences]


@dataclass(frozen=True)
class RerankInputs:
    """Where a worker reads a reranker sweep's lists (:mod:`.work_files`)."""

    train: NBestFile
    dev: NBestFile

    def paths(self) -> tuple[str, ...]:
        return self.train.paths() + self.dev.paths()

    def load(self, resolve) -> RerankLists:
        return RerankLists(self.train.load(resolve), self.dev.load(resolve))


@dataclass(frozen=True)
class CorpusPair:
    """Where a worker reads a tagger sweep's training and development corpora."""

    train: CorpusFile
    dev: CorpusFile

    def paths(self) -> tuple[str, ...]:
        return self.train.paths() + self.dev.paths()

    def load(self, resolve):
        return load_input(self.train, resolve), load_input(self.dev, resolve)


# ------------------------------------------------------------------------------------------------
# one point


def _prf(ev) -> dict:
    o = ev.overall
    return {"precision": o.precision, "recall": o.recall, "f1": o.f1}


def reranker_point(data: RerankLists, job: Job, ctx: TaskContext) -> dict:
    """A grid point's task: train the reranker with the point's settings, score it on dev."""
    s = job.settings
    params = {**s["fixed"], **s["point"]}
    min_sentences = params.pop("min_sentences", 5)
    t0 = time.perf_counter()
    system = System(point_name(s["point"]) or s["algo"], s["algo"], params)
    learners = make_learners([system])
    ctx.progress(f"global features (min_sentences={min_sentences})")
    built = data.features(min_sentences, ctx.should_cancel)

    def said(_name, st):
        if st.dev_f1 is not None:
            ctx.progress(f"{st.unit} {st.step}: dev F {st.dev_f1:.2f}")

    # the reranker stage of every run, its features shared by the points at this cut-off
    fitted = train_systems(
        built, learners, [system], callback=said, should_cancel=ctx.should_cancel
    )
    learner = learners[system.name]
    d_dev = built.data["dev"]
    p, r, f = d_dev.prf(fitted.models[system.name].predict(d_dev))
    return {
        "dev": {"precision": p, "recall": r, "f1": f},
        "unit": learner.unit,
        "best_step": learner.best_step_,
        "curve": [[h.step, h.dev_f1] for h in learner.history_ if h.dev_f1 is not None],
        "seconds": time.perf_counter() - t0,
    }


def tagger_point(data, job: Job, ctx: TaskContext) -> dict:
    """A grid point's task: train the tagger with the point's settings, score its 1-best on dev."""
    train, dev = data
    s = job.settings
    params = {**s["fixed"], **s["point"], "labels": train.labels}
    t0 = time.perf_counter()
    curve: list = []
    tagger: MaxEntTagger | PerceptronTagger
    if s["algo"] == "maxent":

        def said(st):
            ctx.progress(f"iteration {st.iteration}")

        tagger = MaxEntTagger(**params).fit(
            train.sentences, callback=said, should_cancel=ctx.should_cancel
        )
        ctx.check()
        spans, unit, best = (
            tagger.nbest(dev.sentences, n=1, should_cancel=ctx.should_cancel).top(),
            "iteration",
            None,
        )
    else:

        def said(st):
            if getattr(st, "dev_f1", None) is not None:
                curve.append([st.epoch, st.dev_f1])
                ctx.progress(f"epoch {st.epoch}: dev F {st.dev_f1:.2f}")

        perceptron = PerceptronTagger(**params).fit(
            train, dev, callback=said, should_cancel=ctx.should_cancel
        )
        ctx.check()
        spans, unit, best = perceptron.predict_spans(dev), "epoch", perceptron.best_epoch_
        tagger = perceptron
    gold = [
        sn.spans if tagger.typed else [Span(a, b, "") for a, b, _ in sn.spans]
        for sn in dev.sentences
    ]
    return {
        "dev": _prf(evaluate_spans(gold, spans)),
        "unit": unit,
        "best_step": best,
        "curve": curve,
        "seconds": time.perf_counter() - t0,
    }


def _save_point(result: dict, folder: str) -> None:
    with open(os.path.join(folder, "point.json"), "w", encoding="utf-8") as f:
        json.dump(jsonable(result), f)


def _load_point(folder: str) -> dict:
    with open(os.path.join(folder, "point.json"), encoding="utf-8") as f:
        return json.load(f)


POINT_FILES = ResultFiles(_save_point, _load_point)


# ------------------------------------------------------------------------------------------------
# the sweep


def run_sweep(
    algo: str,
    train_path,
    dev_path,
    grid: dict[str, list],
    out_dir,
    fixed: dict | None = None,
    executor=None,
    workers: int | None = None,
    encoding: str | None = None,
    progress: Callable[[FoldProgress], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> dict:
    """Train ``algo`` at every point of ``grid`` (name → values, typed: :func:`parse_settings`)
    with the ``fixed`` settings (name → value), on ``executor`` (default: local processes);
    write sweep.json, sweep.md and sweep.png to ``out_dir``; return sweep.json's dict."""
    defaults = setting_defaults(algo)
    fixed = dict(fixed or {})
    for name in list(grid) + list(fixed):
        if name not in defaults:
            raise SettingsError(
                f"{algo} has no setting {name!r} (it has {', '.join(sorted(defaults))})"
            )
    both = sorted(set(grid) & set(fixed))
    if both:
        raise SettingsError(f"{', '.join(both)}: both swept and fixed")
    if not grid or any(not v for v in grid.values()):
        raise SettingsError("the grid is empty")
    t_all = time.perf_counter()
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    remote = is_remote(executor)
    if algo in TAGGERS:
        train, dev = (
            read_corpus(train_path, encoding=encoding),
            read_corpus(dev_path, encoding=encoding),
        )
        data: tuple[Corpus, Corpus] | RerankLists = (train, dev)
        task = tagger_point
        source: CorpusPair | RerankInputs | None = (
            CorpusPair(CorpusFile.of(train, "corpus"), CorpusFile.of(dev, "corpus"))
            if remote
            else None
        )
    else:
        from ..nbest import NBestList

        lists = data = RerankLists(NBestList.load(train_path), NBestList.load(dev_path))
        for what, nb in (("training", lists.train), ("development", lists.dev)):
            if nb.gold is None:
                raise DataError(
                    f"{train_path if what == 'training' else dev_path}: the {what} list has no gold entities"
                )
        task = reranker_point
        source = RerankInputs(NBestFile.of(train_path), NBestFile.of(dev_path)) if remote else None
        if (
            not remote and "min_sentences" not in grid
        ):  # built once here, shared by the local workers
            lists.features(fixed.get("min_sentences", 5), should_cancel)
    points = grid_points(grid)
    jobs = [
        Job(
            point_name(p),
            task,
            None,
            {"algo": algo, "point": p, "fixed": fixed},
            "trained",
            POINT_FILES,
        )
        for p in points
    ]
    run = run_jobs(
        jobs,
        data,
        executor=executor,
        workers=workers,
        progress=progress,
        should_cancel=should_cancel,
        source=source,
    )
    rows = [{"settings": p, **r} for p, r in zip(points, run.results)]
    best = max(range(len(rows)), key=lambda k: rows[k]["dev"]["f1"])
    report = {
        "algo": algo,
        "train": os.path.abspath(train_path),
        "dev": os.path.abspath(dev_path),
        "grid": grid,
        "fixed": fixed,
        "points": rows,
        "best": best,
        "executor": getattr(executor, "setting", None) or "local",
        "seconds_total": time.perf_counter() - t_all,
    }
    report = jsonable(report)
    with atomic_open(os.path.join(out_dir, "sweep.json"), mode="w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    with atomic_open(os.path.join(out_dir, "sweep.md"), mode="w", encoding="utf-8") as f:
        f.write(sweep_markdown(report))
    plot_sweep(report, os.path.join(out_dir, "sweep.png"))
    return report


def sweep_markdown(report: dict) -> str:
    names = list(report["grid"])
    fixed = ", ".join(f"{k}={v}" for k, v in report["fixed"].items()) or "defaults"
    lines = [
        f"# Sweep of {report['algo']}",
        "",
        f"Train {report['train']}, dev {report['dev']}; other settings: {fixed}. "
        f"{len(report['points'])} points on {report['executor']} in {report['seconds_total']:.1f}s. "
        "Dev F of the step the development set chose, where the learner chooses one.",
        "",
        "| " + " | ".join(names) + " | dev P | dev R | dev F | chosen step | seconds |",
        "|" + "---|" * (len(names) + 5),
    ]
    for k, row in enumerate(report["points"]):
        d = row["dev"]
        step = f"{row['unit']} {row['best_step']}" if row.get("best_step") is not None else "last"
        mark = " **best**" if k == report["best"] else ""
        lines.append(
            "| "
            + " | ".join(str(row["settings"][n]) for n in names)
            + f" | {d['precision']:.2f} | {d['recall']:.2f} | {d['f1']:.2f}{mark} | {step} | {row['seconds']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def _numeric(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def plot_sweep(report: dict, path: str) -> None:
    """Dev F against each swept setting (a panel each): one line per combination of the other
    settings, or the best over them when there are more than :data:`MAX_LINES`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    grid, rows = report["grid"], report["points"]
    names = list(grid)
    fig = Figure(figsize=(4.6 * len(names), 3.8), dpi=110)
    FigureCanvasAgg(fig)
    best_f = rows[report["best"]]["dev"]["f1"]
    for k, name in enumerate(names):
        ax = fig.add_subplot(1, len(names), k + 1)
        values = grid[name]
        numeric = _numeric(values)
        order = (
            sorted(range(len(values)), key=lambda j: values[j])
            if numeric
            else list(range(len(values)))
        )
        xs = [values[j] for j in order] if numeric else list(range(len(values)))
        others = [n for n in names if n != name]
        groups: dict = {}
        for row in rows:
            key = tuple(row["settings"][n] for n in others)
            groups.setdefault(key, {})[repr(row["settings"][name])] = row["dev"]["f1"]
        series = list(groups.items())
        if len(series) > MAX_LINES:
            merged: dict = {}
            for _, by in series:
                for v, f in by.items():
                    merged[v] = max(f, merged.get(v, -math.inf))
            series = [(("best of the others",), merged)]
        for key, by in series:
            ys = [by.get(repr(values[j]), math.nan) for j in order]
            label = (
                key[0]
                if key == ("best of the others",)
                else (", ".join(f"{n}={v}" for n, v in zip(others, key)) or name)
            )
            ax.plot(xs, ys, marker="o", ms=4, label=label)
        if numeric and all(v > 0 for v in values) and max(values) / min(values) >= 10:
            ax.set_xscale("log")
            ax.minorticks_off()
        if not numeric or len(values) <= MAX_LINES:  # the grid's own values as ticks
            ax.set_xticks(xs, [str(values[j]) for j in order])
        ax.axhline(best_f, color="grey", ls=":", lw=1)
        ax.set_xlabel(name)
        ax.set_ylabel("dev F (%)")
        ax.grid(alpha=0.3)
        if len(series) > 1 or others:
            ax.legend(fontsize=7)
    fig.suptitle(f"{report['algo']}: dev F at each setting (best {best_f:.2f})", fontsize=10)
    fig.tight_layout()
    with atomic_open(path, mode="wb") as f:
        fig.savefig(f, format="png")
