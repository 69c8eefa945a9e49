"""The perceptron family for ranking (Collins 2002 §4.3, Figures 3–4; Collins 2002a; Freund &
Schapire 1999; Kazama & Torisawa 2007 §3–4; SPEC §5).

A candidate is represented by Φ(x) = ⟨β·L(x), h_1(x), …, h_m(x)⟩ and scored by ᾱ·Φ(x); ᾱ starts
at zero (or at the BPM initialisation). For each training sentence in turn (shuffled per epoch
with a seed, or in file order) the top-scoring candidate is found; when it is worse than the
oracle x_i1 (fewer correct tags) ᾱ += Φ(x_i1) − Φ(x_top). A candidate as good as the oracle
is not a mistake.

Variants (``algo``):

``perceptron``
    Figure 3; the final ᾱ scores test candidates.
``averaged``
    the average of ᾱ after every example of every epoch (Collins 2002a), kept with lazy
    time-stamped accumulators: a weight's running sum is brought up to date only when the weight
    changes, never by adding dense vectors per example.
``voted``
    Figure 4: every intermediate ᾱ votes for its top candidate on a test sentence, the candidate
    with most votes wins. Only the distinct vectors are kept — the sequence of updates with the
    number of examples each vector survived — and test scores are updated incrementally, one
    sparse difference per update (footnote 5). Ties in votes go to the better-ranked candidate.
``margin``
    Kazama & Torisawa's Algorithm 3.1 applied to ranking: besides the usual update, when the
    oracle is on top but the best wrong candidate scores within ``C`` of it, update with that
    candidate. Optionally averaged (``average=True``); K&T use it instead of averaging.

``bpm`` > 0 turns on BPM initialisation (K&T §4.3): ``bpm`` single passes over differently
shuffled examples, from zero, are averaged and training starts from that average.

``beta=None`` searches β on the development set over ``beta_grid`` (a full run per value; the
model keeps the best; the voted perceptron searches with averaged scoring, which its votes
approximate, because voting is the slow part). Each epoch records dev P/R/F; with ``keep_best`` the model keeps the
state of the best epoch.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import DataError, Msg

# the numba-compiled kernels (_compiled) are imported where they are used: importing this
# module (to list the learners, to read a model file) stays cheap
from .base import Callback, CancelCheck, Reranker
from .data import RankingData

BETA_GRID = (0.01, 0.03, 0.1, 0.3, 1.0)


class _Run:
    """Mutable training state of one run (weights, averaging accumulators, update log)."""

    def __init__(self, m: int, w0: np.ndarray | None = None, wL0: float = 0.0):
        self.w = np.zeros(m) if w0 is None else w0.astype(np.float64).copy()
        self.wL = np.array([wL0], dtype=np.float64)
        self.acc = np.zeros(m)
        self.accL = np.zeros(1)
        self.last = np.zeros(m, dtype=np.int64)
        self.lastL = np.zeros(1, dtype=np.int64)
        self.t = 0
        cap = 1024
        self.log_sent = np.zeros(cap, dtype=np.int64)
        self.log_wrong = np.zeros(cap, dtype=np.int64)
        self.log_time = np.zeros(cap, dtype=np.int64)
        self.n_log = 0

    def reserve(self, extra: int) -> None:
        need = self.n_log + extra
        if need > len(self.log_sent):
            size = max(need, 2 * len(self.log_sent))
            for name in ("log_sent", "log_wrong", "log_time"):
                a = getattr(self, name)
                setattr(self, name, np.concatenate([a, np.zeros(size - len(a), dtype=np.int64)]))

    def averaged(self) -> tuple[float, np.ndarray]:
        T = max(self.t, 1)
        w = (self.acc + (self.t - self.last) * self.w) / T
        wL = float((self.accL[0] + (self.t - self.lastL[0]) * self.wL[0]) / T)
        return wL, w


class PerceptronRanker(Reranker):
    """Ranking perceptron; the ``algo`` attribute selects the variant (see module docstring)."""

    algo = "perceptron"
    unit = "epoch"
    _mode = 0  # 0 plain update, 1 margin
    _average = False
    _voted = False

    def __init__(
        self,
        epochs: int = 10,
        beta: float | None = None,
        shuffle: bool = True,
        seed: int = 0,
        bpm: int = 0,
        keep_best: bool = True,
        beta_grid: tuple = BETA_GRID,
    ):
        self.epochs = epochs
        self.beta = beta
        self.shuffle = shuffle
        self.seed = seed
        self.bpm = bpm
        self.keep_best = keep_best
        self.beta_grid = tuple(beta_grid)

    # -- training ------------------------------------------------------------------------------
    def fit(
        self,
        train: RankingData,
        dev: RankingData | None = None,
        callback: Callback = None,
        should_cancel: CancelCheck = None,
        init: tuple[float, np.ndarray] | None = None,
    ) -> PerceptronRanker:
        """Train on ``train``. ``init``: the starting vector ``(w_L, w)`` instead of zero (a warm
        start; no BPM initialisation and no β search then: β is ``beta``, 1 when unset)."""
        if train.oracle is None or train.quality is None:
            raise DataError(Msg.TRAINING_NEEDS_GOLD.format())
        t0 = time.perf_counter()
        if init is not None:
            wL0, w0 = float(init[0]), np.asarray(init[1], dtype=np.float64)
            if w0.shape != (train.n_features,):
                raise ValueError(
                    f"starting weights have shape {w0.shape}, expected ({train.n_features},)"
                )
            self.beta_search_ = []
            beta = 1.0 if self.beta is None else float(self.beta)
            self._fit_one(train, dev, beta, callback, should_cancel, (w0, wL0))
        elif self.beta is None and dev is not None and dev.has_gold and len(self.beta_grid) > 1:
            results = []
            for b in self.beta_grid:
                # the voted perceptron searches β with averaged scoring: voting is the slow part
                # and the average of the vectors is what the votes approximate
                probe = self
                if self._voted:
                    probe = AveragedPerceptron(
                        epochs=self.epochs,
                        beta=float(b),
                        shuffle=self.shuffle,
                        seed=self.seed,
                        bpm=self.bpm,
                        keep_best=self.keep_best,
                    )
                probe._fit_one(train, dev, float(b), None, should_cancel)
                best = max((h.dev_f1 for h in probe.history_ if h.dev_f1 is not None), default=-1.0)
                results.append((best, -abs(np.log(b)), b))
            self.beta_search_ = [(b, f) for f, _, b in results]
            beta = max(results)[2]
        else:
            beta = 1.0 if self.beta is None else float(self.beta)
            self.beta_search_ = []
        if init is None:
            self._fit_one(train, dev, beta, callback, should_cancel)
        self.seconds_ = time.perf_counter() - t0
        return self

    def warm_start(
        self, train: RankingData, callback: Callback = None, should_cancel: CancelCheck = None
    ) -> PerceptronRanker:
        """A new learner with this one's settings and β, trained on ``train`` from this one's
        weights (its final vector; the average for the averaged perceptrons): what the
        annotation loop does with newly reviewed sentences. This learner is not changed."""
        params = self.get_params()
        params["beta"] = self.beta_
        new = type(self)(**params)
        return new.fit(train, None, callback, should_cancel, init=(self.wL_, self.w_))

    def _order(self, rng: np.random.Generator, sentences: np.ndarray) -> np.ndarray:
        return rng.permutation(sentences) if self.shuffle else sentences

    def _epoch(
        self, run: _Run, train: RankingData, order: np.ndarray, beta: float, C: float
    ) -> int:
        from . import _compiled

        run.reserve(len(order))
        X, oracle = train.X, train.oracle
        if oracle is None:
            raise DataError(Msg.TRAINING_NEEDS_GOLD.format())
        mistakes, _updates, n_log, t = _compiled.perceptron_epoch(
            order,
            train.offsets,
            X.indptr,
            X.indices,
            train.L,
            train.quality,
            oracle.astype(np.int64),
            beta,
            run.w,
            run.wL,
            self._mode,
            C,
            run.t,
            run.acc,
            run.accL,
            run.last,
            run.lastL,
            run.log_sent,
            run.log_wrong,
            run.log_time,
            run.n_log,
        )
        run.n_log = n_log
        run.t = t
        return int(mistakes)

    def _fit_one(
        self,
        train: RankingData,
        dev: RankingData | None,
        beta: float,
        callback: Callback,
        should_cancel: CancelCheck,
        init: tuple[np.ndarray, float] | None = None,
    ) -> None:
        self._start()
        self.beta_ = beta
        C = float(getattr(self, "C", 0.0))
        sentences = np.flatnonzero(train.informative()).astype(np.int64)
        rng = np.random.default_rng(self.seed)
        m = train.n_features
        w0, wL0 = (None, 0.0) if init is None else init
        if init is None and self.bpm and self.bpm > 0:
            ws, wLs = [], []
            for _ in range(int(self.bpm)):
                r = _Run(m)
                self._epoch(r, train, rng.permutation(sentences), beta, C)
                ws.append(r.w)
                wLs.append(r.wL[0])
                self._check_cancel(should_cancel)
            w0, wL0 = np.mean(ws, axis=0), float(np.mean(wLs))
        self.init_w_, self.init_wL_ = (np.zeros(m) if w0 is None else w0.copy()), wL0
        run = _Run(m, w0, wL0)
        self._run = run
        self._vote_cache = {}
        best_state = None
        self._train_for_votes = train
        epoch_ends: list[tuple[int, int]] = []
        for ep in range(1, int(self.epochs) + 1):
            self._check_cancel(should_cancel)
            mistakes = self._epoch(run, train, self._order(rng, sentences), beta, C)
            epoch_ends.append((run.n_log, run.t))
            self._snapshot(run, train)
            st = self._record(ep, dev, callback, mistakes=mistakes)
            if st.best or best_state is None:
                best_state = self._state_dict()
            if mistakes == 0 and self._mode == 0:
                break
        self.epochs_run_ = len(epoch_ends)
        if self.keep_best and dev is not None and dev.has_gold and best_state is not None:
            self._set_from(best_state)
        self._run = None
        self._vote_cache = {}
        self._train_for_votes = None

    # -- the model after an epoch -----------------------------------------------------------
    def _snapshot(self, run: _Run, train: RankingData) -> None:
        """Set the model's weights (and vote log) from the current run."""
        if self._average:
            self.wL_, self.w_ = run.averaged()
        else:
            self.wL_, self.w_ = float(run.wL[0]), run.w.copy()
        if self._voted:
            self._make_votes(run, train)

    def _make_votes(self, run: _Run, train: RankingData) -> None:
        n = run.n_log
        X = train.X
        starts = train.offsets[run.log_sent[:n]] + train.oracle[run.log_sent[:n]]
        wrong = run.log_wrong[:n]
        if X.has_sorted_indices:  # every update's features at once, in compiled code
            from . import _compiled

            ptr, code = _compiled.pair_differences(X.indptr, X.indices, starts, wrong)
            plus = (code & 1) == 0
            row = np.repeat(np.arange(n), np.diff(ptr))
            for name, keep in (("plus", plus), ("minus", ~plus)):
                counts = np.bincount(row[keep], minlength=n)
                setattr(self, f"upd_{name}_ptr_", np.concatenate([[0], np.cumsum(counts)]))
                setattr(self, f"upd_{name}_", (code[keep] >> 1).astype(np.int64))
        else:  # the same, one update at a time, each row's features in its own order
            plus_l, minus_l = [], []
            for o, r in zip(starts.tolist(), wrong.tolist()):
                a = X.indices[X.indptr[o] : X.indptr[o + 1]]
                b = X.indices[X.indptr[r] : X.indptr[r + 1]]
                plus_l.append(np.setdiff1d(a, b, assume_unique=True))
                minus_l.append(np.setdiff1d(b, a, assume_unique=True))
            self.upd_plus_ptr_ = np.cumsum([0] + [len(p) for p in plus_l]).astype(np.int64)
            self.upd_minus_ptr_ = np.cumsum([0] + [len(p) for p in minus_l]).astype(np.int64)
            self.upd_plus_ = (
                np.concatenate(plus_l).astype(np.int64) if plus_l else np.zeros(0, np.int64)
            )
            self.upd_minus_ = (
                np.concatenate(minus_l).astype(np.int64) if minus_l else np.zeros(0, np.int64)
            )
        self.upd_dL_ = self.beta_ * (train.L[starts] - train.L[run.log_wrong[:n]])
        times = run.log_time[:n]
        # vector k (after k updates) survives from update k to update k+1
        bounds = np.concatenate([[0], times, [run.t]])
        self.counts_ = np.diff(bounds).astype(np.float64)

    def _state_dict(self) -> dict:
        d = {"w": self.w_.copy(), "wL": self.wL_}
        if self._voted:
            for k in (
                "upd_plus_ptr_",
                "upd_plus_",
                "upd_minus_ptr_",
                "upd_minus_",
                "upd_dL_",
                "counts_",
            ):
                d[k] = getattr(self, k).copy()
        return d

    def _set_from(self, d: dict) -> None:
        self.w_, self.wL_ = d["w"], d["wL"]
        for k, v in d.items():
            if k.endswith("_"):
                setattr(self, k, v)

    # -- scoring -------------------------------------------------------------------------------
    def linear_weights(self) -> tuple[float, np.ndarray]:
        """(β·w_L, w): the linear score. For the voted perceptron these are the *final* weights;
        its decisions come from the votes (see :meth:`decision_function`)."""
        return self.beta_ * self.wL_, self.w_

    def decision_function(self, data: RankingData) -> np.ndarray:
        if not self._voted:
            return super().decision_function(data)
        votes = self.votes(data)
        # ties in votes go to the better-ranked candidate: argmax takes the first maximum
        return votes

    def votes(self, data: RankingData) -> np.ndarray:
        """Figure 4 votes of every candidate (sum of the survival counts of the vectors that
        rank it first)."""
        tally = _VoteTally(data, self.init_S(data), self.init_wL_)
        return tally.votes(self)

    def init_S(self, data: RankingData) -> np.ndarray:
        """Feature part of every candidate's score under the starting vector."""
        w0 = getattr(self, "init_w_", None)
        if w0 is None or not np.any(w0):
            return np.zeros(data.n_candidates)
        return data.X @ w0

    def _record(self, step, dev, callback, score_fn=None, **kw):
        if self._voted and dev is not None and dev.has_gold:
            tally = self._vote_cache.get(id(dev))
            if tally is None:
                tally = self._vote_cache[id(dev)] = _VoteTally(dev, self.init_S(dev), self.init_wL_)
            v = tally.votes(self)
            return super()._record(step, dev, callback, score_fn=lambda d: v, **kw)
        return super()._record(step, dev, callback, score_fn=score_fn, **kw)

    # -- persistence ---------------------------------------------------------------------------
    def state(self) -> dict[str, np.ndarray]:
        d = {"w": self.w_, "wL": np.array([self.wL_]), "beta": np.array([self.beta_])}
        if self._voted:
            for k in (
                "upd_plus_ptr_",
                "upd_plus_",
                "upd_minus_ptr_",
                "upd_minus_",
                "upd_dL_",
                "counts_",
                "init_w_",
            ):
                d[k.rstrip("_")] = getattr(self, k)
            d["init_wL"] = np.array([self.init_wL_])
        return d

    def set_state(self, arrays, n_features: int) -> None:
        from ..persist import Corrupt, scalar, vector

        self.w_ = vector(arrays, "w", n_features)
        self.wL_ = scalar(arrays, "wL")
        self.beta_ = scalar(arrays, "beta")
        if self._voted:
            for k, dtype in (
                ("upd_plus_ptr_", np.int64),
                ("upd_plus_", np.int64),
                ("upd_minus_ptr_", np.int64),
                ("upd_minus_", np.int64),
                ("upd_dL_", np.float64),
                ("counts_", np.float64),
            ):
                setattr(self, k, vector(arrays, k.rstrip("_"), dtype=dtype))
            self.init_w_ = vector(arrays, "init_w", n_features)
            self.init_wL_ = scalar(arrays, "init_wL")
            n = len(self.counts_) - 1
            if (
                n < 0
                or len(self.upd_plus_ptr_) != n + 1
                or len(self.upd_minus_ptr_) != n + 1
                or len(self.upd_dL_) != n
                or self.upd_plus_ptr_[-1] != len(self.upd_plus_)
                or self.upd_minus_ptr_[-1] != len(self.upd_minus_)
                or any(p[0] != 0 or np.any(np.diff(p) < 0) for p in self._vote_ptrs())
            ):
                raise Corrupt("the vote log is inconsistent")
            for arr in (self.upd_plus_, self.upd_minus_):
                if len(arr) and (arr.min() < 0 or arr.max() >= n_features):
                    raise Corrupt("feature ids in the vote log are out of range")

    def _vote_ptrs(self) -> tuple[np.ndarray, np.ndarray]:
        return self.upd_plus_ptr_, self.upd_minus_ptr_


class _VoteTally:
    """Incremental Figure 4 voting on one data set; resumable as training adds vectors.

    The votes of every vector but the last are final once a later vector exists; the last
    vector's survival count grows until the next update, so its votes are added to a copy.
    """

    def __init__(self, data: RankingData, S0: np.ndarray, wL0: float):
        self.data = data
        X = data.X.tocsc()
        self.col_ptr = X.indptr
        self.col_idx = X.indices
        self.S = S0.astype(np.float64).copy()
        self.state = np.array([0.0, wL0])
        self.final = np.zeros(data.n_candidates)
        self.n_final = 0

    def _run(self, model, k_from, k_to, votes):
        from . import _compiled

        d = self.data
        _compiled.vote_range(
            k_from,
            k_to,
            self.state,
            self.S,
            d.L,
            d.offsets,
            self.col_ptr,
            self.col_idx,
            model.upd_plus_ptr_,
            model.upd_plus_,
            model.upd_minus_ptr_,
            model.upd_minus_,
            model.upd_dL_,
            model.counts_,
            model.beta_,
            votes,
        )

    def votes(self, model) -> np.ndarray:
        K = len(model.counts_)
        if self.n_final < K - 1:
            self._run(model, self.n_final, K - 1, self.final)
            self.n_final = K - 1
        out = self.final.copy()
        self._run(model, K - 1, K, out)
        return out


class Perceptron(PerceptronRanker):
    algo = "perceptron"


class AveragedPerceptron(PerceptronRanker):
    algo = "averaged"
    _average = True


class VotedPerceptron(PerceptronRanker):
    algo = "voted"
    _voted = True


class MarginPerceptron(PerceptronRanker):
    """K&T's margin perceptron for ranking; ``C`` is the margin, ``average`` averages it too."""

    algo = "margin"
    _mode = 1

    def __init__(
        self,
        epochs: int = 10,
        C: float = 1.0,
        beta: float | None = None,
        shuffle: bool = True,
        seed: int = 0,
        bpm: int = 0,
        average: bool = False,
        keep_best: bool = True,
        beta_grid: tuple = BETA_GRID,
    ):
        super().__init__(
            epochs=epochs,
            beta=beta,
            shuffle=shuffle,
            seed=seed,
            bpm=bpm,
            keep_best=keep_best,
            beta_grid=beta_grid,
        )
        self.C = C
        self.average = average

    @property
    def _average(self) -> bool:  # type: ignore[override]
        return bool(self.average)
