"""The reranker stage of every run: global features built once, then one learner or several
trained on them.

The window's run (one learner, in a child process so that its interpreter lock is not the
window's), ``nerstudio train-reranker`` (one learner, here) and ``nerstudio experiment`` (every
reranker of the run, side by side in threads) all call :func:`fit_rerankers`; only where it runs
differs. ``nerstudio sweep`` calls its two halves apart: :func:`build_features` once per
cut-off and :func:`train_systems` once per point of its grid.

The learners are made before the features are computed, so that bad settings fail at once; the
features are fitted on the training list and applied to the development list and any other list
the caller names (the experiment's test list); each learner is trained on the same ranking data
(threads share it: no copy of the training matrix), the development set giving its curve and
choosing its round or epoch.

A model's ``meta`` records what it learnt from (the sentences of its lists, the number of
features, the system's name), never how long it took: the same inputs give the same model file.
The seconds are in :attr:`Fitted.seconds`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import Cancelled
from ..learners import reranker
from ..nbest import NBestList
from .base import CancelCheck, Reranker
from .data import RankingData
from .features import GlobalFeatures


@dataclass(frozen=True)
class System:
    """One reranker of a run: its name in the run (``boosting``, ``voted``…), the learner's
    registry name and its settings."""

    name: str
    algo: str
    params: dict = field(default_factory=dict)


@dataclass
class Fitted:
    """What the stage made: the fitted features, the ranking data of every list (``train``,
    ``dev`` when given, then the caller's other lists by name) and a model per system."""

    features: GlobalFeatures
    data: dict[str, RankingData]
    models: dict[str, Any]  # system name -> RerankerModel
    seconds: dict[str, float] = field(default_factory=dict)  # "features", then per system
    outcomes: dict[str, Any] = field(default_factory=dict)  # what ``then`` returned, per system


def system_threads(n_systems: int, workers: int | None = None) -> int:
    """How many rerankers train side by side: one per core (``workers`` if set), at most one
    per system. Their compiled loops release the interpreter lock."""
    return max(1, min(n_systems, workers or os.cpu_count() or 1))


def run_side_by_side(fn, items, threads: int, first: tuple = ()) -> list:
    """``[fn(x) for x in items]``, in order, with up to ``threads`` running at once, the items
    in ``first`` started before the others; the first exception (a cancellation, an error) is
    raised once every started call has ended."""
    items = list(items)
    if threads <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    start = sorted(range(len(items)), key=lambda i: items[i] not in first)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="nerstudio-system") as pool:
        futures = {i: pool.submit(fn, items[i]) for i in start}
        return [futures[i].result() for i in range(len(items))]


def make_learners(systems: Sequence[System]) -> dict[str, Reranker]:
    """A new learner per system, by name: bad settings fail here, before any feature is built.
    No system: only the features are built (a report of the tagger's lists alone)."""
    from .model import make_learner

    return {s.name: make_learner(s.algo, **s.params) for s in systems}


def build_features(
    train: NBestList,
    dev: NBestList | None,
    feature_params: dict | None = None,
    *,
    others: dict[str, NBestList] | None = None,
    should_cancel: CancelCheck = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Fitted:
    """The first half of the stage: the features fitted on ``train`` and the ranking data of
    every list (no model yet)."""
    t0 = time.perf_counter()
    gf = GlobalFeatures(**(feature_params or {}))

    def prog(stage: str):
        if progress is None:
            return None
        say = progress
        return lambda d, n: say(stage, d, n)

    data = {
        "train": gf.fit_transform(
            train, progress=prog("features (train)"), should_cancel=should_cancel
        )
    }
    if dev is not None:
        data["dev"] = gf.transform(
            dev, progress=prog("features (dev)"), should_cancel=should_cancel
        )
    for name, nb in (others or {}).items():
        data[name] = gf.transform(
            nb, progress=prog(f"features ({name})"), should_cancel=should_cancel
        )
    if should_cancel is not None and should_cancel():
        raise Cancelled("cancelled")
    return Fitted(gf, data, {}, {"features": time.perf_counter() - t0})


def train_systems(
    built: Fitted,
    learners: dict[str, Reranker],
    systems: Sequence[System],
    *,
    threads: int = 1,
    first: tuple = (),
    callback: Callable[[str, Any], None] | None = None,
    should_cancel: CancelCheck = None,
    progress: Callable[[str, int, int], None] | None = None,
    then: Callable[[System, Any, dict[str, RankingData]], Any] | None = None,
) -> Fitted:
    """The second half: every system's learner (from :func:`make_learners`) trained on
    ``built``'s data, the development data (if any) giving its curve. Returns a new
    :class:`Fitted` with the models, the seconds and what ``then`` returned (see
    :func:`fit_rerankers`); ``built`` is only read, so several calls may share it."""
    from .model import RerankerModel

    data, gf = built.data, built.features
    out = Fitted(gf, data, {}, dict(built.seconds))
    meta = {
        "n_features": gf.n_features,
        "train_sentences": len(data["train"]),
        "dev_sentences": len(data["dev"]) if "dev" in data else 0,
    }

    def fit(system: System) -> None:
        learner = learners[system.name]
        t = time.perf_counter()
        if progress is not None:
            progress(f"training {reranker(system.algo).title}", 0, 1)
        hear = callback
        cb = (lambda st: hear(system.name, st)) if hear is not None else None
        learner.fit(data["train"], data.get("dev"), callback=cb, should_cancel=should_cancel)
        out.seconds[system.name] = time.perf_counter() - t
        model = RerankerModel(gf, learner, dict(meta, system=system.name))
        out.models[system.name] = model
        if then is not None:
            out.outcomes[system.name] = then(system, model, data)

    run_side_by_side(fit, systems, threads, first=tuple(s for s in systems if s.algo in first))
    out.models = {s.name: out.models[s.name] for s in systems}  # the caller's order
    out.outcomes = {s.name: out.outcomes[s.name] for s in systems if s.name in out.outcomes}
    return out


def fit_rerankers(
    train: NBestList,
    dev: NBestList | None,
    systems: Sequence[System],
    feature_params: dict | None = None,
    *,
    others: dict[str, NBestList] | None = None,
    threads: int = 1,
    first: tuple = (),
    callback: Callable[[str, Any], None] | None = None,
    should_cancel: CancelCheck = None,
    progress: Callable[[str, int, int], None] | None = None,
    then: Callable[[System, Any, dict[str, RankingData]], Any] | None = None,
) -> Fitted:
    """Features once, then every system (see the module docstring). ``callback(name, stats)``
    hears each system's curve points; ``progress(message, done, total)`` the features' sentences
    and each system's start; ``then(system, model, data)`` runs in the system's own thread once
    it is trained (the experiment scores and saves there), its value kept in
    :attr:`Fitted.outcomes`. ``first``: the systems (by algorithm) that start before the others
    when they train side by side."""
    learners = make_learners(systems)
    built = build_features(
        train, dev, feature_params, others=others, should_cancel=should_cancel, progress=progress
    )
    return train_systems(
        built,
        learners,
        systems,
        threads=threads,
        first=first,
        callback=callback,
        should_cancel=should_cancel,
        progress=progress,
        then=then,
    )
