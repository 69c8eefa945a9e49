"""Boosting for ranking (Collins 2002 §4.2, Figure 2; SPEC §4).

The model scores a candidate ``F(x) = α0 L(x) + Σ_k α_k h_k(x)`` and is trained to reduce

    ExpLoss(α) = Σ_i Σ_{j ≠ oracle} exp(−(F(x_i1) − F(x_ij)))

one feature at a time. For binary features every pair (i, j) and feature k has a difference
d = h_k(x_i1) − h_k(x_ij) ∈ {−1, 0, +1}; the A±_k indices list the pairs where d = ±1 (stored
column-wise) and the B±_ij indices the features (stored row-wise). With pair weights
e_ij = exp(−M_ij), W±_k = Σ_{A±_k} e_ij and BestLoss(k) = |√W+_k − √W−_k|; a round picks
k* = argmax BestLoss, adds δ* = ½ log((W+ + εZ) / (W− + εZ)) to α_k*, and updates only the
pairs in A±_k* and, through their B± rows, the W± and BestLoss of the features they touch.

Which pairs take part: a sentence's oracle candidate x_i1 (most correct tags, ties to the higher
L) is compared with every candidate that is strictly worse by that criterion; candidates as good
as the oracle are neither right nor wrong and make no pair, and a sentence whose candidates are
all equally good makes none.

Numerics: pair weights are kept relative to a constant factor (the choice of k* and δ* do not
depend on it, the loss is reported in true units), clamped at zero against rounding, and every
``refresh`` rounds recomputed exactly from the margins.

Development F is tracked incrementally: the dev scores change by δ* times one column of the dev
matrix per round, and every ``eval_every`` rounds one argmax per sentence gives P/R/F. The model
keeps the weights of the best evaluated round (``keep_best``).

:class:`BoostingSession` exposes the algorithm one round at a time (for the step-through mode
and the tests); :class:`Boosting` is the estimator.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataError, Msg

if TYPE_CHECKING:  # annotations only: the matrices come with the data
    import scipy.sparse as sp

# scipy.optimize and the numba-compiled kernels (_compiled) are imported where they are used:
# importing this module (to list the learners, to read a model file) stays cheap
from .base import Callback, CancelCheck, Reranker
from .data import RankingData


def ranking_pairs(data: RankingData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sentence, oracle_row, other_row)`` of every training pair (global row numbers)."""
    if data.oracle is None or data.quality is None:
        raise DataError(Msg.TRAINING_NEEDS_GOLD.format())
    sizes = data.sizes
    group = data.group
    orow = data.offsets[:-1] + np.maximum(data.oracle, 0)
    oq = data.quality[orow[group]] if data.n_candidates else np.zeros(0)
    other = np.arange(data.n_candidates)
    keep = (data.quality < oq) & (sizes[group] > 1)
    other = other[keep]
    sent = group[keep]
    return sent, orow[sent], other


def line_search_alpha0(dL: np.ndarray) -> float:
    """argmin_α Σ exp(−α dL): one-dimensional and convex; minimised on its log (logsumexp)."""
    if len(dL) == 0:
        return 1.0
    if np.all(dL >= 0):  # the loss keeps falling: any large α; cap it
        return 1.0 if np.all(dL == 0) else 10.0

    def f(a):
        z = -a * dL
        mx = z.max()
        return mx + math.log(np.exp(z - mx).sum())

    import scipy.optimize

    res = scipy.optimize.minimize_scalar(
        f, bounds=(0.0, 100.0), method="bounded", options={"xatol": 1e-6}
    )
    return float(res.x)


@dataclass
class RoundInfo:
    """What one boosting round did (for step-through displays)."""

    round: int
    feature: int
    delta: float
    w_plus: float  # W+ and W− of the chosen feature before the round (true units)
    w_minus: float
    best_loss: float
    loss_before: float
    loss_after: float
    pairs: np.ndarray  # pair ids touched
    margins_before: np.ndarray
    margins_after: np.ndarray


class BoostingSession:
    """The efficient algorithm of Figure 2, one round at a time."""

    def __init__(
        self,
        data: RankingData,
        epsilon: float = 0.0,
        alpha0: float | None = None,
        refresh: int = 20000,
        max_work: int = 4_000_000,
        max_kept: int = 1 << 23,
    ):
        from . import _compiled

        self.data = data
        self.max_work = int(max_work)  # weight updates per compiled call (~10-30 ms of work)
        # at most this many features (4 bytes each) kept of the rounds' touched sets, which
        # saves a look-up per weight update in the rounds of a feature chosen again
        self.max_kept = int(max_kept)
        self.epsilon = float(epsilon)
        self.refresh = int(refresh)
        sent, orow, other = ranking_pairs(data)
        self.pair_sentence, self.pair_oracle, self.pair_other = sent, orow, other
        X = data.X.tocsr()
        if not X.has_sorted_indices:
            X = X.sorted_indices()
        m = data.n_features
        # D's rows (B± indices: codes 2f for +1 in feature f, 2f + 1 for −1) and columns (A±
        # indices), built in compiled code that releases the GIL, so a GUI thread stays
        # responsive while a large session is set up
        self.B_ptr, self.B_code = _compiled.pair_differences(X.indptr, X.indices, orow, other)
        self.A_ptr, self.A_idx, self.A_sgn = _compiled.transpose_signed(self.B_ptr, self.B_code, m)
        # W± live in slots numbered by first use (B's codes too, from here on): see boost_rounds
        self.slot, self.feature = _compiled.slots_by_first_use(self.B_code, m)
        self.dL = data.L[orow] - data.L[other]
        self.alpha0 = line_search_alpha0(self.dL) if alpha0 is None else float(alpha0)
        self.alpha = np.zeros(m, dtype=np.float64)
        self.M = self.alpha0 * self.dL
        self.n_pairs = len(self.dL)
        self.rounds = 0
        self.exhausted = False
        self._chosen = np.zeros(1024, dtype=np.int64)
        self._deltas = np.zeros(1024, dtype=np.float64)
        self._recompute()

    @property
    def Wp(self) -> np.ndarray:
        """W+ of every feature (a copy: ``W`` holds W+ and W− side by side, by slot)."""
        return self.W[2 * self.slot]

    @property
    def Wm(self) -> np.ndarray:
        """W− of every feature (a copy)."""
        return self.W[2 * self.slot + 1]

    @property
    def chosen(self) -> np.ndarray:
        """Feature chosen in each round so far."""
        return self._chosen[: self.rounds]

    @property
    def deltas(self) -> np.ndarray:
        return self._deltas[: self.rounds]

    def _reserve(self, extra: int) -> None:
        need = self.rounds + extra
        if need > len(self._chosen):
            size = max(need, 2 * len(self._chosen))
            self._chosen = np.concatenate(
                [self._chosen, np.zeros(size - len(self._chosen), np.int64)]
            )
            self._deltas = np.concatenate(
                [self._deltas, np.zeros(size - len(self._deltas), np.float64)]
            )

    # -- state -----------------------------------------------------------------------------
    def _recompute(self) -> None:
        """e, Z, W± and BestLoss from the margins, exactly."""
        from . import _compiled

        self.c = float(self.M.min()) if self.n_pairs else 0.0  # e = exp(−(M − c)) ≤ 1
        m = len(self.alpha)
        if not hasattr(self, "e"):
            self.e = np.empty(self.n_pairs)
            self.W, self.BL = np.empty(2 * m), np.empty(m)
        self.Z = float(
            _compiled.pair_weights(
                self.M, self.c, self.B_ptr, self.B_code, m, self.e, self.W, self.BL, self.slot
            )
        )
        self._bmax_valid = False

    def loss(self) -> float:
        """ExpLoss in true units, from the bookkeeping."""
        return self.Z * math.exp(-self.c)

    def exact_loss(self) -> float:
        """ExpLoss recomputed from scratch from α (for checks)."""
        F = self.alpha0 * self.data.L + self.data.X @ self.alpha
        return float(np.exp(-(F[self.pair_oracle] - F[self.pair_other])).sum())

    # -- one round --------------------------------------------------------------------------
    def step(self, detail: bool = False) -> RoundInfo | None:
        """Run one round; returns what it did (``None`` when no feature can reduce the loss)."""
        if len(self.BL) == 0:
            return None
        k = int(np.argmax(self.BL))
        bl = float(self.BL[k])
        if not bl > 0.0:
            self.exhausted = True
            return None
        g = self.slot[k]
        wp, wm, Z = float(self.W[2 * g]), float(self.W[2 * g + 1]), self.Z
        ez = self.epsilon * Z
        if wp + ez <= 0.0 or wm + ez <= 0.0:
            # ε = 0 and the feature separates perfectly: the optimum is infinite; take a
            # large finite step instead (what smoothing exists for)
            ez = 1e-6 * Z
        delta = 0.5 * math.log((wp + ez) / (wm + ez))
        a, b = self.A_ptr[k], self.A_ptr[k + 1]
        pairs = self.A_idx[a:b]
        sg = self.A_sgn[a:b]
        loss_before = self.loss() if detail else 0.0
        m_before = self.M[pairs].copy() if detail else None
        self.M[pairs] += sg * delta
        old = self.e[pairs]
        new = old * np.exp(-sg * delta)
        self.e[pairs] = new
        d = new - old
        self.Z += float(d.sum())
        # W± of every feature in the B rows of the touched pairs
        starts = self.B_ptr[pairs]
        lens = self.B_ptr[pairs + 1] - starts
        tot = int(lens.sum())
        if tot:
            ends = np.cumsum(lens)
            idx = np.arange(tot, dtype=np.int64) + np.repeat(starts - (ends - lens), lens)
            codes = self.B_code[idx]
            np.add.at(self.W, codes, np.repeat(d, lens))
            plus = codes - (codes & 1)  # W+ of each touched slot, then W− beside it
            wpf = np.maximum(self.W[plus], 0.0)
            wmf = np.maximum(self.W[plus + 1], 0.0)
            self.W[plus] = wpf
            self.W[plus + 1] = wmf
            self.BL[self.feature[codes >> 1]] = np.abs(np.sqrt(wpf) - np.sqrt(wmf))
        self._bmax_valid = False
        self.alpha[k] += delta
        self._reserve(1)
        self._chosen[self.rounds] = k
        self._deltas[self.rounds] = delta
        self.rounds += 1
        if self.refresh and self.rounds % self.refresh == 0:
            self._recompute()
        if not detail:
            return RoundInfo(self.rounds, k, delta, 0.0, 0.0, bl, 0.0, 0.0, pairs, None, None)
        scale = math.exp(-self.c)
        return RoundInfo(
            self.rounds,
            k,
            delta,
            wp * scale,
            wm * scale,
            bl * math.sqrt(scale),
            loss_before,
            self.loss(),
            pairs.copy(),
            m_before,
            self.M[pairs].copy(),
        )

    def run(
        self,
        n: int,
        dev_cols: sp.csc_matrix | None = None,
        dev_scores: np.ndarray | None = None,
        between: Callable[[], None] | None = None,
    ) -> int:
        """Up to ``n`` rounds in compiled code (same algorithm as :meth:`step`); returns how many
        ran (fewer only when no feature can reduce the loss: then ``exhausted`` is set).
        ``dev_scores`` get δ on the dev rows having the chosen feature (``dev_cols`` is the dev
        matrix in CSC). ``between()`` is called every ``max_work`` weight updates (tens of
        milliseconds), e.g. to raise :class:`~nerstudio.errors.Cancelled`."""
        from . import _compiled

        m = len(self.alpha)
        if m == 0 or n <= 0:
            return 0
        block = _compiled.BLOCK
        if getattr(self, "_scratch", None) is None:
            nb = (m + block - 1) // block
            self._scratch = (
                np.empty(nb, dtype=np.float64),
                np.zeros(nb, dtype=np.bool_),
                np.zeros(nb, dtype=np.int64),
                np.zeros(m, dtype=np.int32),
                np.zeros(m, dtype=np.bool_),
                # the features each chosen feature's rounds touch, kept once found
                np.full(m, -1, dtype=np.int64),
                np.zeros(m, dtype=np.int64),
                np.empty(min(len(self.B_code), self.max_kept), dtype=np.int32),
                np.zeros(1, dtype=np.int64),
            )
            self._bmax_valid = False
        bmax, dirty, dirty_list, touched, touched_mark, t_start, t_len, pool, pool_used = (
            self._scratch
        )
        if not self._bmax_valid:
            _compiled.block_max(self.BL, bmax, block)
            self._bmax_valid = True
        if dev_cols is None:
            dptr = np.zeros(0, dtype=np.int32)
            didx = np.zeros(0, dtype=np.int32)
            dsc = np.zeros(0, dtype=np.float64)
        else:
            dptr, didx, dsc = (
                dev_cols.indptr.astype(np.int32, copy=False),
                dev_cols.indices.astype(np.int32, copy=False),
                dev_scores,
            )
        total = 0
        while total < n:
            chunk = n - total
            if self.refresh:
                chunk = min(chunk, self.refresh - self.rounds % self.refresh)
            self._reserve(chunk)
            st = np.array([self.Z])
            done = _compiled.boost_rounds(
                chunk,
                self.A_ptr,
                self.A_idx,
                self.A_sgn,
                self.B_ptr,
                self.B_code,
                self.M,
                self.e,
                self.W,
                self.BL,
                bmax,
                block,
                st,
                self.epsilon,
                self.alpha,
                self._chosen,
                self._deltas,
                self.rounds,
                dptr,
                didx,
                dsc,
                dirty,
                dirty_list,
                touched,
                touched_mark,
                self.max_work,
                t_start,
                t_len,
                pool,
                pool_used,
                self.slot,
                self.feature,
            )
            self.Z = float(st[0])
            self.rounds += done
            total += done
            if self.refresh and self.rounds % self.refresh == 0 and done:
                self._recompute()
                _compiled.block_max(self.BL, bmax, block)
                self._bmax_valid = True
            if done < chunk and (self.BL.size == 0 or not float(bmax.max()) > 0.0):
                self.exhausted = True  # no feature can reduce the loss
                break
            if between is not None:
                between()
        return total

    def alpha_at(self, rounds: int) -> np.ndarray:
        """The weight vector after the first ``rounds`` rounds."""
        a = np.zeros_like(self.alpha)
        if rounds:
            np.add.at(a, self._chosen[:rounds], self._deltas[:rounds])
        return a


class Boosting(Reranker):
    """Boosting for ranking (see the module docstring).

    ``rounds`` — number of rounds; ``epsilon`` — smoothing ε (the paper's setting is small,
    e.g. 0.0025 after tuning on dev); ``eval_every`` — dev P/R/F every K rounds;
    ``keep_best`` — keep the weights of the best dev round.
    """

    algo = "boost"
    unit = "round"

    def __init__(
        self,
        rounds: int = 10000,
        epsilon: float = 0.0025,
        eval_every: int = 500,
        keep_best: bool = True,
    ):
        self.rounds = rounds
        self.epsilon = epsilon
        self.eval_every = eval_every
        self.keep_best = keep_best

    def fit(
        self,
        train: RankingData,
        dev: RankingData | None = None,
        callback: Callback = None,
        should_cancel: CancelCheck = None,
    ) -> Boosting:
        self._start()
        sess = BoostingSession(train, epsilon=self.epsilon)
        self.alpha0_ = sess.alpha0
        dev_cols = dev_scores = None
        if dev is not None and dev.has_gold:
            dev_cols = dev.X.tocsc()
            dev_scores = self.alpha0_ * dev.L
        self._record(
            0,
            dev,
            callback,
            score_fn=(lambda d: dev_scores) if dev_cols is not None else None,
            loss=sess.loss(),
        )
        eval_every = max(1, int(self.eval_every))
        # compiled rounds up to each evaluation point; cancellation is checked every few
        # tens of milliseconds of work inside run()
        total = int(self.rounds)

        def between():
            self._check_cancel(should_cancel)

        while sess.rounds < total and not sess.exhausted:
            n = min(total - sess.rounds, eval_every - sess.rounds % eval_every)
            done = sess.run(n, dev_cols, dev_scores, between)
            if sess.rounds % eval_every == 0 and done:
                self._record(
                    sess.rounds,
                    dev,
                    callback,
                    score_fn=(lambda d: dev_scores) if dev_cols is not None else None,
                    loss=sess.loss(),
                )
            self._check_cancel(should_cancel)
        done = sess.rounds
        if not self.history_ or self.history_[-1].step != done:
            self._record(
                done,
                dev,
                callback,
                score_fn=(lambda d: dev_scores) if dev_cols is not None else None,
                loss=sess.loss(),
            )
        self.rounds_run_ = done
        self.chosen_ = sess.chosen.copy()
        self.deltas_ = sess.deltas.copy()
        keep = self.best_step_ if (self.keep_best and self.best_step_ is not None) else done
        self.kept_rounds_ = int(keep)
        self.alpha_ = sess.alpha_at(keep) if keep != done else sess.alpha.copy()
        self.seconds_ = time.perf_counter() - self._t0
        return self

    def linear_weights(self) -> tuple[float, np.ndarray]:
        return self.alpha0_, self.alpha_

    def state(self) -> dict[str, np.ndarray]:
        return {
            "alpha0": np.array([self.alpha0_]),
            "alpha": self.alpha_,
            "chosen": self.chosen_,
            "deltas": self.deltas_,
            "kept_rounds": np.array([self.kept_rounds_]),
        }

    def set_state(self, arrays, n_features: int) -> None:
        from ..persist import Corrupt, scalar, vector

        self.alpha0_ = scalar(arrays, "alpha0")
        self.alpha_ = vector(arrays, "alpha", n_features)
        self.chosen_ = vector(arrays, "chosen", dtype=np.int64)
        self.deltas_ = vector(arrays, "deltas", len(self.chosen_))
        self.kept_rounds_ = scalar(arrays, "kept_rounds", int)
        if not 0 <= self.kept_rounds_ <= len(self.chosen_) or (
            len(self.chosen_) and (self.chosen_.min() < 0 or self.chosen_.max() >= n_features)
        ):
            raise Corrupt("the boosting rounds are out of range")
        self.rounds_run_ = len(self.chosen_)
