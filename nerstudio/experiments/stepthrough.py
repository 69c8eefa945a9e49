"""Training one step at a time, for demonstrations (no Qt).

:class:`BoostingStepper` runs boosting for ranking one round at a time (the rounds are those of
:class:`~nerstudio.rerank.boosting.BoostingSession`, the same as the batch estimator's) and
:class:`PerceptronStepper` runs the ranking perceptron one *update* at a time, in plain Python:
for each training sentence (shuffled per epoch exactly like
:class:`~nerstudio.rerank.perceptron.Perceptron`) every candidate is scored
``β·wL·L(x) + w·h(x)``; when the top one (first on ties) has fewer correct tags than the oracle,
``w += h(oracle) − h(top)`` and ``wL += β (L(oracle) − L(top))``. Both report what changed and the
development F after every step, so a curve can grow point by point.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..rerank.boosting import BoostingSession, RoundInfo
from ..rerank.data import RankingData


def _dev_f(dev: RankingData | None, scores) -> float | None:
    if dev is None or not dev.has_gold:
        return None
    return dev.prf(dev.argmax(scores))[2]


@dataclass
class BoostingStep:
    info: RoundInfo
    feature_name: str
    sentences: np.ndarray  # sentence of every touched pair
    oracle_rows: np.ndarray
    other_rows: np.ndarray
    dev_f1: float | None


class BoostingStepper:
    def __init__(self, train: RankingData, dev: RankingData | None = None, epsilon: float = 0.0025,
                 names: list[str] | None = None):
        self.train, self.dev = train, dev
        self.epsilon = float(epsilon)
        self.names = names if names is not None else list(train.feature_names)
        self.session = BoostingSession(train, epsilon=self.epsilon)
        self.history: list[tuple[int, float]] = []  # (round, dev F)
        self._dev_scores = None if dev is None else self.session.alpha0 * dev.L
        self._dev_cols = None if dev is None else dev.X.tocsc()
        f = _dev_f(dev, self._dev_scores) if dev is not None else None
        if f is not None:
            self.history.append((0, f))

    @property
    def rounds(self) -> int:
        return self.session.rounds

    @property
    def chosen(self) -> np.ndarray:
        return self.session.chosen

    def loss(self) -> float:
        return self.session.loss()

    def step(self) -> BoostingStep | None:
        s = self.session
        info = s.step(detail=True)
        if info is None:
            return None
        dev_f = None
        if self.dev is not None:
            cols = self._dev_cols
            k = info.feature
            self._dev_scores[cols.indices[cols.indptr[k]:cols.indptr[k + 1]]] += info.delta
            dev_f = _dev_f(self.dev, self._dev_scores)
            if dev_f is not None:
                self.history.append((s.rounds, dev_f))
        name = self.names[info.feature] if info.feature < len(self.names) else f"feature {info.feature}"
        return BoostingStep(info, name, s.pair_sentence[info.pairs], s.pair_oracle[info.pairs],
                            s.pair_other[info.pairs], dev_f)


@dataclass
class PerceptronUpdate:
    epoch: int
    example: int  # position in the epoch's order (0-based)
    sentence: int
    oracle_row: int  # global rows
    top_row: int
    rows: slice  # the sentence's candidates
    scores_before: np.ndarray
    scores_after: np.ndarray
    plus: np.ndarray  # features that gained 1 (in the oracle, not in the wrong top)
    minus: np.ndarray  # features that lost 1
    dwL: float
    mistakes: int  # in this epoch so far
    updates: int  # in all
    dev_f1: float | None = None


@dataclass
class EpochEnd:
    epoch: int
    mistakes: int
    updates: int
    dev_f1: float | None = None


@dataclass
class PerceptronStepper:
    train: RankingData
    dev: RankingData | None = None
    beta: float = 1.0
    seed: int = 0
    shuffle: bool = True
    names: list[str] | None = None
    history: list[tuple[int, float]] = field(default_factory=list)  # (updates, dev F)

    def __post_init__(self):
        d = self.train
        if d.oracle is None or d.quality is None:
            raise ValueError("training data needs gold (oracle candidates)")
        if self.names is None:
            self.names = list(d.feature_names)
        self.w = np.zeros(d.n_features)
        self.wL = 0.0
        self.rng = np.random.default_rng(self.seed)
        self.sentences = np.flatnonzero(d.informative()).astype(np.int64)
        self.epoch = 0
        self.pos = 0
        self.order = np.zeros(0, dtype=np.int64)
        self.mistakes = 0
        self.updates = 0
        self._X = d.X.tocsr()
        self._new_epoch()
        f = self.dev_f1()
        if f is not None:
            self.history.append((0, f))

    def _new_epoch(self) -> None:
        self._ended = False
        self.epoch += 1
        self.order = self.rng.permutation(self.sentences) if self.shuffle else self.sentences.copy()
        self.pos = 0
        self.mistakes = 0

    def scores(self, rows: slice) -> np.ndarray:
        X = self._X[rows]
        return self.beta * self.wL * self.train.L[rows] + X @ self.w

    def dev_f1(self) -> float | None:
        if self.dev is None:
            return None
        return _dev_f(self.dev, self.beta * self.wL * self.dev.L + self.dev.X @ self.w)

    def step(self) -> PerceptronUpdate | EpochEnd:
        """Go through examples until one makes an update (returned), or the epoch ends
        (:class:`EpochEnd`; the next call starts the next epoch)."""
        d = self.train
        X = self._X
        if self._ended:
            self._new_epoch()
        while self.pos < len(self.order):
            i = int(self.order[self.pos])
            self.pos += 1
            rows = d.rows(i)
            sc = self.scores(rows)
            top = rows.start + int(np.argmax(sc))  # first maximum
            o = rows.start + int(d.oracle[i])
            if d.quality[top] < d.quality[o]:
                self.mistakes += 1
                self.updates += 1
                fo = X.indices[X.indptr[o]:X.indptr[o + 1]]
                ft = X.indices[X.indptr[top]:X.indptr[top + 1]]
                np.add.at(self.w, fo, 1.0)
                np.add.at(self.w, ft, -1.0)
                dwl = self.beta * (d.L[o] - d.L[top])
                self.wL += dwl
                after = self.scores(rows)
                f = self.dev_f1()
                if f is not None:
                    self.history.append((self.updates, f))
                so, st = set(fo.tolist()), set(ft.tolist())
                return PerceptronUpdate(self.epoch, self.pos - 1, i, o, top, rows, sc, after,
                                        np.array(sorted(so - st), dtype=np.int64),
                                        np.array(sorted(st - so), dtype=np.int64), float(dwl),
                                        self.mistakes, self.updates, f)
        self._ended = True
        return EpochEnd(self.epoch, self.mistakes, self.updates, self.dev_f1())

    def run_epoch(self) -> EpochEnd:
        while True:
            r = self.step()
            if isinstance(r, EpochEnd):
                return r
