"""Training one step at a time, for demonstrations (no Qt).

:class:`BoostingStepper` runs boosting for ranking one round at a time (the rounds are those of
:class:`~nerstudio.rerank.boosting.BoostingSession`, the same as the batch estimator's) and
:class:`PerceptronStepper` runs the ranking perceptron one *update* at a time, in plain Python:
for each training sentence (shuffled per epoch exactly like
:class:`~nerstudio.rerank.perceptron.Perceptron`) every candidate is scored
``β·wL·L(x) + w·h(x)``; when the top one (first on ties) has fewer correct tags than the oracle,
``w += h(oracle) − h(top)`` and ``wL += β (L(oracle) − L(top))``. Both report what changed and the
development F after every step, so a curve can grow point by point.

Both also step *back*: every step keeps what it changed (the touched margins and the weight
before it, or the update's feature lists, the learner's counters and its random state), up to
:data:`MAX_BACK` steps, and :meth:`back` restores the learner exactly as it was before the step
(boosting's derived sums are then recomputed from the restored margins).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import DataError, Msg
from ..rerank.boosting import BoostingSession, RoundInfo
from ..rerank.data import RankingData

MAX_BACK = (
    1000  # steps that can be taken back (each keeps the margins, scores or features it moved)
)


def _dev_f(dev: RankingData | None, scores) -> float | None:
    if dev is None or not dev.has_gold:
        return None
    return dev.prf(dev.argmax(scores))[2]


@dataclass
class BoostingStep:
    """One round, and per touched pair both candidates compared: the better one (the oracle,
    ``oracle_rows``) and the worse one (``other_rows``), the chosen feature's value on each and
    each one's score after the round (before it: the score minus δ times the value)."""

    info: RoundInfo
    feature_name: str
    sentences: np.ndarray  # sentence of every touched pair
    oracle_rows: np.ndarray
    other_rows: np.ndarray
    dev_f1: float | None
    oracle_values: np.ndarray | None = None  # h_k of the better candidate of every touched pair
    other_values: np.ndarray | None = None
    oracle_scores: np.ndarray | None = None  # α0·L + α·h after the round
    other_scores: np.ndarray | None = None

    def scores_before(self, p: int) -> tuple[float, float]:
        """The better and the worse candidate's score before the round (touched pair ``p``)."""
        assert self.oracle_scores is not None and self.oracle_values is not None
        assert self.other_scores is not None and self.other_values is not None
        d = self.info.delta
        return (
            float(self.oracle_scores[p] - d * self.oracle_values[p]),
            float(self.other_scores[p] - d * self.other_values[p]),
        )


class BoostingStepper:
    def __init__(
        self,
        train: RankingData,
        dev: RankingData | None = None,
        epsilon: float = 0.0025,
        names: list[str] | None = None,
    ):
        self.train, self.dev = train, dev
        self.epsilon = float(epsilon)
        self.names = names if names is not None else list(train.feature_names)
        self.session = BoostingSession(train, epsilon=self.epsilon)
        self.history: list[tuple[int, float]] = []  # (round, dev F)
        self._dev_scores = None if dev is None else self.session.alpha0 * dev.L
        self._dev_cols = None if dev is None else dev.X.tocsc()
        self._X = train.X.tocsr()
        self._cols = train.X.tocsc()
        f = _dev_f(dev, self._dev_scores) if dev is not None else None
        if f is not None:
            self.history.append((0, f))
        self._undo: list[tuple] = []  # per step: what :meth:`back` restores

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
        k_before = int(np.argmax(s.BL)) if len(s.BL) else -1
        alpha_before = float(s.alpha[k_before]) if k_before >= 0 else 0.0
        n_hist = len(self.history)
        info = s.step(detail=True)
        if info is None:
            return None
        dev_rows = dev_before = None
        dev_f = None
        if self._dev_cols is not None and self._dev_scores is not None:  # there is a dev set
            cols = self._dev_cols
            k = info.feature
            dev_rows = cols.indices[cols.indptr[k] : cols.indptr[k + 1]]
            dev_before = self._dev_scores[dev_rows].copy()
            self._dev_scores[dev_rows] += info.delta
            dev_f = _dev_f(self.dev, self._dev_scores)
            if dev_f is not None:
                self.history.append((s.rounds, dev_f))
        self._undo.append(
            (
                info.feature,
                alpha_before
                if info.feature == k_before
                else float(s.alpha[info.feature]) - info.delta,
                info.pairs,
                info.margins_before,
                dev_rows,
                dev_before,
                n_hist,
            )
        )
        del self._undo[:-MAX_BACK]
        name = (
            self.names[info.feature]
            if info.feature < len(self.names)
            else f"feature {info.feature}"
        )
        orows, others = s.pair_oracle[info.pairs], s.pair_other[info.pairs]
        return BoostingStep(
            info,
            name,
            s.pair_sentence[info.pairs],
            orows,
            others,
            dev_f,
            self._value(info.feature, orows),
            self._value(info.feature, others),
            self.scores(orows),
            self.scores(others),
        )

    def _value(self, k: int, rows: np.ndarray) -> np.ndarray:
        """Feature ``k``'s value on each of ``rows``."""
        cols = self._cols
        lo, hi = cols.indptr[k], cols.indptr[k + 1]
        col = np.zeros(self.train.n_candidates)
        col[cols.indices[lo:hi]] = cols.data[lo:hi]
        return col[rows]

    def scores(self, rows: np.ndarray) -> np.ndarray:
        """The reranker's score α0·L + α·h of candidates ``rows`` now."""
        s = self.session
        return s.alpha0 * self.train.L[rows] + self._X[rows] @ s.alpha

    def can_go_back(self) -> bool:
        return bool(self._undo)

    def back(self) -> bool:
        """Undo the last round: its weight, the margins it moved, the dev scores and the curve's
        point; False when there is nothing (more) to undo."""
        if not self._undo:
            return False
        k, alpha_before, pairs, m_before, dev_rows, dev_before, n_hist = self._undo.pop()
        s = self.session
        s.M[pairs] = m_before
        s.alpha[k] = alpha_before
        s.rounds -= 1
        s.exhausted = False
        s._recompute()  # e, Z, W± and BestLoss from the restored margins, exactly
        if dev_rows is not None and self._dev_scores is not None:  # there is a dev set
            self._dev_scores[dev_rows] = dev_before
        del self.history[n_hist:]
        return True


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
            raise DataError(Msg.TRAINING_NEEDS_GOLD.format())
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
        self._undo: list[tuple] = []  # per step: the state before it and the features it moved
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
        self._undo.append(
            (
                self.epoch,
                self.pos,
                self.order,
                self.mistakes,
                self.updates,
                self.wL,
                self.rng.bit_generator.state,
                self._ended,
                len(self.history),
                None,
                None,
            )
        )
        del self._undo[:-MAX_BACK]
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
                fo = X.indices[X.indptr[o] : X.indptr[o + 1]]
                ft = X.indices[X.indptr[top] : X.indptr[top + 1]]
                np.add.at(self.w, fo, 1.0)
                np.add.at(self.w, ft, -1.0)
                self._undo[-1] = self._undo[-1][:-2] + (fo, ft)
                dwl = self.beta * (d.L[o] - d.L[top])
                self.wL += dwl
                after = self.scores(rows)
                f = self.dev_f1()
                if f is not None:
                    self.history.append((self.updates, f))
                so, st = set(fo.tolist()), set(ft.tolist())
                return PerceptronUpdate(
                    self.epoch,
                    self.pos - 1,
                    i,
                    o,
                    top,
                    rows,
                    sc,
                    after,
                    np.array(sorted(so - st), dtype=np.int64),
                    np.array(sorted(st - so), dtype=np.int64),
                    float(dwl),
                    self.mistakes,
                    self.updates,
                    f,
                )
        self._ended = True
        return EpochEnd(self.epoch, self.mistakes, self.updates, self.dev_f1())

    def can_go_back(self) -> bool:
        return bool(self._undo)

    def back(self) -> bool:
        """Undo the last step (an update, or an epoch's end): weights, counters, the shuffle's
        random state and the curve's point; False when there is nothing (more) to undo."""
        if not self._undo:
            return False
        (
            self.epoch,
            self.pos,
            self.order,
            self.mistakes,
            self.updates,
            self.wL,
            rng_state,
            self._ended,
            n_hist,
            fo,
            ft,
        ) = self._undo.pop()
        self.rng.bit_generator.state = rng_state
        if fo is not None:
            np.add.at(self.w, fo, -1.0)  # the weights are whole numbers: exactly undone
            np.add.at(self.w, ft, 1.0)
        del self.history[n_hist:]
        return True

    def run_epoch(self) -> EpochEnd:
        while True:
            r = self.step()
            if isinstance(r, EpochEnd):
                return r
