"""A trained reranker as one object and one file: the global-feature index plus a learner.

:class:`RerankerModel` turns any N-best list into ranking data with its own feature index,
scores and picks candidates, and explains a score as a sum of named terms (:meth:`explain`) or
the difference between two candidates (:meth:`compare`) — what the GUI's feature panel shows.
Files are ``.npz`` + JSON (:mod:`nerstudio.persist`); loading never runs code.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import DataError, FormatError, SettingsError
from ..learners import RERANKERS, reranker
from ..nbest import NBestList
from ..persist import (
    Corrupt,
    check_params,
    construct,
    header_field,
    jsonable,
    load_npz,
    records,
    save_npz,
)
from .base import Callback, CancelCheck, Reranker
from .data import RankingData
from .features import GlobalFeatures, template_of

MODEL_FORMAT = "nerstudio-reranker"
MODEL_VERSION = 1

#: the rerankers' names, titles and classes: the registry's (:mod:`nerstudio.learners`)
ALGORITHMS = tuple(RERANKERS)
ALGORITHM_NAMES = {name: row.title for name, row in RERANKERS.items()}


def learner_class(algo: str) -> type[Reranker]:
    """The class of the reranker ``algo`` (its registry row's, imported now)."""
    cls: type[Reranker] = reranker(algo).cls()
    return cls


def make_learner(algo: str, **params) -> Reranker:
    """A learner by algorithm name; unknown parameters raise a clear ValueError."""
    cls = learner_class(algo)
    import inspect

    allowed = set(inspect.signature(cls.__init__).parameters) - {"self"}
    bad = sorted(set(params) - allowed)
    if bad:
        raise SettingsError(
            f"{algo} has no parameter {', '.join(bad)} (it takes {', '.join(sorted(allowed))})"
        )
    return cls(**params)


@dataclass
class Term:
    """One named contribution to a candidate's score (or to a difference of scores)."""

    name: str  # feature string, or 'L(x)'
    template: str  # WE, BO01, …, or 'L' for the log-probability term
    value: float  # h_k(x) (0/1), L(x), or a difference of them
    weight: float  # α_k (α_0 for L)
    contribution: float  # value · weight


@dataclass
class Explanation:
    score: float
    terms: list[Term]  # sorted by |contribution|, L(x) included


@dataclass
class Comparison:
    delta: float  # score(a) − score(b)
    terms: list[Term]  # what separates a from b: value = h(a) − h(b)


class RerankerModel:
    """Global features + a trained learner (see the module docstring)."""

    def __init__(self, features: GlobalFeatures, learner: Reranker, meta: dict | None = None):
        self.features = features
        self.learner = learner
        self.meta = dict(meta or {})

    @property
    def algo(self) -> str:
        return self.learner.algo

    def data(self, nbest: NBestList, progress=None, should_cancel=None) -> RankingData:
        return self.features.transform(nbest, progress=progress, should_cancel=should_cancel)

    def scores(self, data: RankingData) -> np.ndarray:
        """The score the model ranks by, per candidate (votes for the voted perceptrons)."""
        return self.learner.decision_function(data)

    def predict(self, data: RankingData) -> np.ndarray:
        return self.learner.predict(data)

    def rerank(self, nbest: NBestList) -> tuple[RankingData, np.ndarray]:
        d = self.data(nbest)
        return d, self.predict(d)

    # -- explanations ----------------------------------------------------------------------------
    def _linear(self) -> tuple[float, np.ndarray] | None:
        try:
            return self.learner.linear_weights()
        except NotImplementedError:
            return None

    def explain(self, data: RankingData, row: int) -> Explanation:
        """Score of candidate ``row`` (a global row) as α0·L(x) plus every active feature's weight.

        For linear models the terms add up to the score exactly. The voted perceptron ranks by
        votes; its explanation shows the linear score of its final vector. The kernel perceptron
        explains with its largest stored-mistake contributions.
        """
        lin = self._linear()
        if lin is None:
            if hasattr(self.learner, "explain_row"):
                # the kernel perceptron: β·L(x) and the largest stored-mistake contributions of
                # its final (or averaged) model; they add up to that model's score, not to votes
                pairs = self.learner.explain_row(data, row)
                terms = [
                    Term(str(d), "K" if not str(d).startswith("β") else "L", 0.0, 0.0, float(c))
                    for d, c in pairs
                ]
                return Explanation(float(sum(t.contribution for t in terms)), terms)
            raise DataError(f"{self.algo} cannot explain its scores")
        a0, w = lin
        feats = data.features_of(row)
        terms = [Term("L(x)", "L", float(data.L[row]), float(a0), float(a0 * data.L[row]))]
        names = self.features.names_
        for f in feats.tolist():
            terms.append(Term(names[f], template_of(names[f]), 1.0, float(w[f]), float(w[f])))
        terms.sort(key=lambda t: -abs(t.contribution))
        return Explanation(float(sum(t.contribution for t in terms)), terms)

    def compare(self, data: RankingData, row_a: int, row_b: int) -> Comparison:
        """The features on which two candidates differ and how much each moves score(a) − score(b)."""
        lin = self._linear()
        if lin is None:
            ea, eb = self.explain(data, row_a), self.explain(data, row_b)
            return Comparison(
                ea.score - eb.score, [Term("score", "K", 0.0, 0.0, ea.score - eb.score)]
            )
        a0, w = lin
        fa = set(data.features_of(row_a).tolist())
        fb = set(data.features_of(row_b).tolist())
        names = self.features.names_
        dL = float(data.L[row_a] - data.L[row_b])
        terms = [Term("L(x)", "L", dL, float(a0), float(a0 * dL))]
        for f in sorted(fa ^ fb):
            v = 1.0 if f in fa else -1.0
            terms.append(Term(names[f], template_of(names[f]), v, float(w[f]), float(v * w[f])))
        terms.sort(key=lambda t: -abs(t.contribution))
        return Comparison(float(sum(t.contribution for t in terms)), terms)

    # -- persistence -------------------------------------------------------------------------------
    def save(self, path) -> None:
        fhead, farrays = self.features.state()
        header = {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "algo": self.algo,
            "params": jsonable(self.learner.get_params()),
            "features": fhead,
            "meta": jsonable(self.meta),
            "history": self.learner.history_dicts(),
            "best_step": getattr(self.learner, "best_step_", None),
        }
        arrays = dict(farrays)
        for k, v in self.learner.state().items():
            arrays["learner_" + k] = np.asarray(v)
        save_npz(path, header, arrays)

    @classmethod
    def load(cls, path) -> RerankerModel:
        path = os.fspath(path)
        header, arrays = load_npz(path, MODEL_FORMAT, MODEL_VERSION, "a reranker model")
        from .base import RerankStats

        try:  # the checks raise Corrupt; anything else is a bug and propagates
            features = GlobalFeatures.from_state(header_field(header, "features", dict), arrays)
            algo = header_field(header, "algo", str)
            try:
                cls_ = learner_class(algo)
            except SettingsError as exc:
                raise Corrupt(f"header field 'algo': {exc}") from None
            params = dict(check_params(cls_, header.get("params", {})))
            if "beta_grid" in params and params["beta_grid"] is not None:
                params["beta_grid"] = tuple(params["beta_grid"])
            learner = construct(cls_, params)
            learner.set_state(arrays.prefixed("learner_"), features.n_features)
            learner.history_ = records(header, "history", RerankStats)
            learner.best_step_ = header_field(header, "best_step", int | None, default=None)
            meta = header.get("meta", {})
            if not isinstance(meta, dict):
                raise Corrupt("header field 'meta' must be an object")
            return cls(features, learner, meta)
        except Corrupt as exc:
            raise FormatError(path, None, f"corrupt reranker model: {exc}") from None


def train_reranker(
    train: NBestList,
    dev: NBestList | None,
    algo: str,
    params: dict | None = None,
    feature_params: dict | None = None,
    callback: Callback = None,
    should_cancel: CancelCheck = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> RerankerModel:
    """Features from the training list, then the learner; ``progress(stage, done, total)``."""
    model, _ = fit_reranker(
        train, dev, algo, params, feature_params, callback, should_cancel, progress
    )
    return model


def fit_reranker(
    train: NBestList,
    dev: NBestList | None,
    algo: str,
    params: dict | None = None,
    feature_params: dict | None = None,
    callback: Callback = None,
    should_cancel: CancelCheck = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[RerankerModel, RankingData]:
    """:func:`train_reranker` returning the training list's ranking data too, so that scoring
    that list needs no second feature pass: the run's reranker stage
    (:func:`~nerstudio.rerank.fitting.fit_rerankers`) with one system."""
    from .fitting import System, fit_rerankers

    system = System(reranker(algo).system_name, algo, dict(params or {}))
    fitted = fit_rerankers(
        train,
        dev,
        [system],
        feature_params,
        callback=(lambda _name, st: callback(st)) if callback is not None else None,
        should_cancel=should_cancel,
        progress=progress,
    )
    return fitted.models[system.name], fitted.data["train"]
