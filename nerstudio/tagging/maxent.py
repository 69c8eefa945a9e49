"""The baseline maximum-entropy tagger of Collins 2002 (§2.2) with beam-search N-best.

p(t | h) = exp(Σ_k λ_k f_k(h, t)) / Σ_t' exp(Σ_k λ_k f_k(h, t')), the history h holding the
sentence, the position and the two previous tags. Predicates come from
:mod:`nerstudio.tagging.features`; the previous tag ``t-1`` and the previous two tags
``t-2,t-1`` are *dynamic* predicates whose weights are looked up during decoding. Every
predicate is conjoined with every tag, and only the (predicate, tag) pairs seen at least
``cutoff`` times in training are parameters.

Tags are the SCN encoding of the task: ``N``, ``S``, ``C`` for the boundary-only task (the
paper's), ``N``, ``S-X``, ``C-X`` for the typed task; ``C`` may only follow ``S`` or ``C``
of the same type, which the beam enforces.

Training maximises the L2-regularised conditional log-likelihood with L-BFGS, or with
Generalized Iterative Scaling, the paper's own choice. The L-BFGS here (:func:`lbfgs`) is our
own: scipy's L-BFGS-B spent 40–50 ms per iteration on its bookkeeping at 600k parameters, more
than an evaluation of the objective; ours is the plain two-loop recursion with a backtracking
line search, its vector work in compiled loops, and the tests hold it to scipy's optimum. The
objective is evaluated on a factored design matrix (:class:`_Design`) by the kernels of
:mod:`nerstudio.tagging._maxent_compiled`.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from ..corpus.model import Sentence, Span
from ..errors import Cancelled, FormatError
from ..nbest import NBestList, spans_to_tag_ids
from ..persist import CORRUPT, json_array, json_value, load_npz, save_npz
from . import _maxent_compiled as _mc
from .features import FEATURE_SETS, FeatureExtractor, _unique_inverse

MODEL_FORMAT = "nerstudio-maxent"
MODEL_VERSION = 1
TASKS = ("typed", "scn")


@dataclass
class TrainStats:
    """Progress report of one optimiser iteration."""

    iteration: int
    objective: float
    seconds: float
    dev_f1: float | None = None
    message: str = ""



@dataclass
class LBFGSResult:
    x: np.ndarray
    f: float
    n_iter: int
    n_evals: int
    reason: str  # "max_iter", "ftol", "gtol" or "line search failed"


def lbfgs(fun, n: int, max_iter: int = 100, m: int = 10, ftol: float = 1e-8, gtol: float = 1e-5,
          callback: Callable | None = None, x0: np.ndarray | None = None, c1: float = 1e-4,
          max_ls: int = 30, history_dtype=np.float64) -> LBFGSResult:
    """Minimise a smooth function with limited-memory BFGS (Nocedal & Wright, Algorithms 7.4–7.5).

    ``fun(x, d, step, g)`` evaluates the function at ``x + step·d``, writes its gradient there
    into ``g`` and returns ``(f, g·d, max |g|)`` (the trainer fuses the trial point into the
    objective's passes). The search direction comes from the two-loop recursion over the last
    ``m`` pairs (s, y), scaled by γ = sᵀy / yᵀy; the step from a backtracking line search with
    the Armijo condition (step 1 first, 1/‖g‖ on the first iteration; quadratic interpolation
    kept within [0.1, 0.5] of the previous trial). A pair with sᵀy ≤ 0 is not stored (cannot
    happen on a strictly convex objective such as the L2-penalised log-likelihood). Stops after
    ``max_iter`` iterations, or when the relative decrease of f is ≤ ``ftol`` or max |g| ≤
    ``gtol`` (scipy's L-BFGS-B tests). ``callback(iteration, x, f)`` after each iteration.
    The pairs are stored in ``history_dtype`` (x, g and the direction stay float64).
    """
    x = np.zeros(n) if x0 is None else np.array(x0, dtype=np.float64)
    d = np.zeros(n)
    g = np.empty(n)
    g_new = np.empty(n)
    S = np.empty((m, n), dtype=history_dtype)
    Y = np.empty((m, n), dtype=history_dtype)
    rho = np.zeros(m)
    head = count = 0
    gamma = 1.0
    f, _, gmax = fun(x, d, 0.0, g)
    n_evals = 1
    reason = "max_iter"
    it = 0
    if gmax <= gtol:
        return LBFGSResult(x, float(f), 0, n_evals, "gtol")
    while it < max_iter:
        if count == 0:
            gd0 = _mc.neg_copy_dot(d, g, g)
            step = 1.0 / math.sqrt(-gd0)
        else:
            order = (head - count + np.arange(count)) % m  # oldest -> newest
            gd0 = _mc.two_loop(g, S, Y, rho, order, gamma, d)
            step = 1.0
            if not gd0 < 0:  # not a descent direction (numerical trouble): restart from -g
                count = 0
                gd0 = _mc.neg_copy_dot(d, g, g)
                step = 1.0 / math.sqrt(-gd0)
        for _ in range(max_ls):
            f_new, _, gmax_new = fun(x, d, step, g_new)
            n_evals += 1
            if f_new <= f + c1 * step * gd0:
                break
            denom = 2.0 * (f_new - f - gd0 * step)
            t = -gd0 * step * step / denom if denom > 0 else 0.5 * step
            step = min(max(t, 0.1 * step), 0.5 * step)
        else:
            reason = "line search failed"
            break
        sy, yy = _mc.accept_step(x, d, step, g_new, g, S[head], Y[head])
        if sy > 1e-12 * yy and yy > 0:
            rho[head] = 1.0 / sy
            gamma = sy / yy
            head = (head + 1) % m
            count = min(count + 1, m)
        elif count == m:  # the rejected pair overwrote the oldest one
            count -= 1
        f_old, f, gmax = f, f_new, gmax_new
        it += 1
        if callback:
            callback(it, x, f)
        if gmax <= gtol:
            reason = "gtol"
            break
        if (f_old - f) / max(abs(f_old), abs(f), 1.0) <= ftol:
            reason = "ftol"
            break
    return LBFGSResult(x, float(f), it, n_evals, reason)


class _Blocks:
    """Runs ``fn(block)`` for blocks 0..n-1 on up to ``threads`` threads (the caller's included),
    each thread taking the next block when it comes free. ``fn`` must release the GIL to gain.

    Which count pays depends on what else runs: on a busy machine a second thread mostly waits
    for its partner at the end of each pass (a preempted thread holds up the pass), so the
    caller measures both (:meth:`_Objective.__call__`) and passes ``threads`` to :meth:`run`.
    """

    def __init__(self, threads: int):
        self.threads = max(1, int(threads))
        self.pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="maxent") if self.threads > 1 else None

    def run(self, fn, n_blocks: int, threads: int | None = None) -> None:
        nxt = itertools.count().__next__  # atomic under the GIL

        def work():
            while True:
                b = nxt()
                if b >= n_blocks:
                    return
                fn(b)
        helpers = min(self.threads if threads is None else threads, self.threads, n_blocks) - 1
        futures = [self.pool.submit(work) for _ in range(helpers)] if self.pool else []
        try:
            work()
        finally:
            for f in futures:
                f.result()

    def close(self) -> None:
        if self.pool:
            self.pool.shutdown()


def _even_blocks(cum: np.ndarray, per_block: int = 100_000, max_blocks: int = 64) -> np.ndarray:
    """Boundaries cutting rows into blocks of about equal work, ``cum`` the cumulative work per
    row (a CSR indptr). The cut does not depend on the number of threads, so neither do results."""
    n = len(cum) - 1
    total = int(cum[-1] - cum[0])
    nb = int(np.clip(total // per_block, 1, max_blocks))
    b = np.searchsorted(cum, cum[0] + np.linspace(0, total, nb + 1)).astype(np.int64)
    b[0], b[-1] = 0, n
    return np.unique(np.clip(b, 0, n))


@dataclass
class _Design:
    """The training design matrix X (tokens × parameter rows), binary, in factored form.

    Parameter rows are the kept static predicates, then the ``t-1`` and ``t-2,t-1`` dynamic
    predicates (``n_params`` in all). Token i's row (``indptr``/``indices``, CSR) lists columns
    below ``n_params`` (its own predicates) and columns ``n_params + r`` for keys r; key r stands
    for the predicates of B's row r (``bptr``/``bind``, CSR). So X = M[:, :P] + M[:, P:]·B.
    """

    indptr: np.ndarray
    indices: np.ndarray
    bptr: np.ndarray
    bind: np.ndarray
    n_params: int
    n_keys: int

    def to_csr(self, dtype=np.float64) -> sp.csr_matrix:
        n, P = len(self.indptr) - 1, self.n_params
        M = sp.csr_matrix((np.ones(len(self.indices), dtype=dtype), self.indices, self.indptr),
                          shape=(n, P + self.n_keys))
        B = sp.csr_matrix((np.ones(len(self.bind), dtype=dtype), self.bind, self.bptr), shape=(self.n_keys, P))
        X = (M[:, :P] + M[:, P:] @ B).tocsr()
        X.sort_indices()
        return X


class _Objective:
    """The penalised negative log-likelihood for :func:`lbfgs`, evaluated by compiled kernels.

    Parameters are the whole (parameter row × tag) weight matrix, flattened row-major; entries
    outside ``mask`` get a zero gradient, so starting from zero they stay zero. An evaluation is
    four passes over blocks (see :mod:`._maxent_compiled`), each spread over ``threads``.
    """

    def __init__(self, design: _Design, y, mask, l2, dtype, should_cancel=None, threads: int = 1):
        D = design
        P, K = D.n_params, D.n_keys
        T = mask.shape[1]
        self.D, self.P = D, P
        self.mtptr, self.mtind = _mc.transpose(D.indptr, D.indices, P + K)
        self.btptr, self.btind = _mc.transpose(D.bptr, D.bind, P)
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        self.Z = np.zeros((P + K, T), dtype=dtype)  # weights, then summed weights per key
        self.Wflat = self.Z[:P].reshape(-1)
        self.R = np.zeros((len(y), T), dtype=dtype)  # residuals P − Y
        self.U = np.zeros((K, T))  # residuals summed per key
        self.mask = np.ascontiguousarray(mask.reshape(-1))
        self.use_mask = not bool(self.mask.all())
        self.l2 = float(l2)
        self.should_cancel = should_cancel
        self.blocks = _Blocks(threads)
        self.kb = _even_blocks(D.bptr)  # keys, by predicates summed
        self.rb = _even_blocks(D.indptr)  # tokens, by entries
        self.ub = _even_blocks(self.mtptr[P:])  # keys, by tokens
        self.pb = _even_blocks(self.mtptr[:P + 1] + self.btptr)  # predicates, by tokens and keys
        self.loss_b = np.zeros(len(self.rb) - 1)
        self.stats_b = np.zeros((len(self.pb) - 1, 3))
        self.n_evals = 0
        self.seconds: dict[int, float] = {}  # thread count -> smoothed wall seconds per evaluation
        self.thread_counts: list[int] = []

    def _threads(self) -> int:
        """All threads or one for this evaluation: each is tried, then the faster one is used,
        trying the other again every 10th evaluation (what else runs may have changed)."""
        full = self.blocks.threads
        k = self.n_evals
        if full == 1 or k == 0:
            return full
        options = (full, 1)
        for c in options:
            if c not in self.seconds:
                return c
        best = min(options, key=self.seconds.__getitem__)
        return best if k % 10 else (1 if best == full else full)

    def __call__(self, x, d, step, g):
        if self.should_cancel and self.should_cancel():
            raise Cancelled("tagger training cancelled")
        threads = self._threads()
        t0 = time.perf_counter()
        self._evaluate(x, d, step, g, threads)
        secs = time.perf_counter() - t0
        if self.n_evals:  # the first one also loads the kernels
            old = self.seconds.get(threads)
            self.seconds[threads] = secs if old is None else 0.7 * old + 0.3 * secs
        self.n_evals += 1
        self.thread_counts.append(threads)
        reg, gd = self.stats_b[:, 0].sum(), self.stats_b[:, 1].sum()
        return float(self.loss_b.sum()) + 0.5 * self.l2 * float(reg), float(gd), float(self.stats_b[:, 2].max())

    def _evaluate(self, x, d, step, g, threads):
        _mc.trial_point(x, d, step, self.Wflat)
        D, P, Z, R, U, y = self.D, self.P, self.Z, self.R, self.U, self.y
        mtptr, mtind, btptr, btind = self.mtptr, self.mtind, self.btptr, self.btind
        kb, rb, ub, pb, loss_b, stats_b = self.kb, self.rb, self.ub, self.pb, self.loss_b, self.stats_b
        l2, mask, use_mask = self.l2, self.mask, self.use_mask

        def keys(b):
            _mc.group_sums(D.bptr, D.bind, Z, P, kb[b], kb[b + 1])

        def tokens(b):
            loss_b[b] = _mc.forward_block(D.indptr, D.indices, y, Z, rb[b], rb[b + 1], R)

        def key_res(b):
            _mc.key_residuals(mtptr, mtind, R, P, ub[b], ub[b + 1], U)

        def preds(b):
            stats_b[b] = _mc.backward_block(mtptr, mtind, R, btptr, btind, U, x, d, step, l2, mask, use_mask,
                                            pb[b], pb[b + 1], g)

        run = self.blocks.run
        if D.n_keys:
            run(keys, len(kb) - 1, threads)
        run(tokens, len(rb) - 1, threads)
        if D.n_keys:
            run(key_res, len(ub) - 1, threads)
        run(preds, len(pb) - 1, threads)

    def close(self) -> None:
        self.blocks.close()


def make_tagset(labels: Sequence[str], task: str) -> list[str]:
    if task == "scn":
        return ["N", "S", "C"]
    return ["N"] + [f"{p}-{lab}" for lab in sorted(labels) for p in ("S", "C")]


class MaxEntTagger:
    """Maximum-entropy tagger. ``fit`` returns self; learned state ends in ``_``."""

    def __init__(self, task: str = "typed", features: str = "paper", cutoff: int = 5, l2: float = 1.0,
                 optimizer: str = "lbfgs", max_iter: int = 100, tol: float = 1e-5, dev_every: int = 0,
                 labels: Sequence[str] | None = None, cutoff_on: str | None = None, maxcor: int = 10,
                 dtype=np.float32, threads: int | None = None):
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r} (choose from {', '.join(TASKS)})")
        if features not in FEATURE_SETS:
            raise ValueError(f"unknown feature set {features!r} (choose from {', '.join(FEATURE_SETS)})")
        if optimizer not in ("lbfgs", "gis"):
            raise ValueError("optimizer must be 'lbfgs' or 'gis'")
        self.task, self.features, self.cutoff, self.l2 = task, features, cutoff, l2
        self.optimizer, self.max_iter, self.tol, self.dev_every = optimizer, max_iter, tol, dev_every
        self.labels = None if labels is None else list(labels)
        # the paper counts (predicate, tag) pairs; the richer CoNLL set does better counting predicates
        cutoff_on = cutoff_on or ("pair" if features == "paper" else "predicate")
        if cutoff_on not in ("pair", "predicate"):
            raise ValueError("cutoff_on must be 'pair' or 'predicate'")
        self.cutoff_on = cutoff_on
        self.maxcor = maxcor
        self.dtype = dtype  # of weights, residuals and L-BFGS history in training; float32 halves memory traffic
        self.threads = threads  # of the L-BFGS objective; None: one per available core (at most 8)

    # -- helpers --------------------------------------------------------------------------
    def _threads(self) -> int:
        if self.threads:
            return int(self.threads)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        return max(1, min(cores, 8))

    @property
    def typed(self) -> bool:
        return self.task == "typed"

    def _gold_ids(self, sentences: Sequence[Sentence]) -> np.ndarray:
        idx = {t: k for k, t in enumerate(self.tagset_)}
        parts = [spans_to_tag_ids(s.spans, len(s.words), idx, self.typed) for s in sentences]
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)

    def _dynamic_ids(self, y: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gold history: t-1 (T = start) and the (t-2, t-1) pair index, per token."""
        T = len(self.tagset_)
        starts = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        pos = np.arange(len(y)) - np.repeat(starts[:-1], lens)
        p1 = np.full(len(y), T, dtype=np.int64)
        p2 = np.full(len(y), T, dtype=np.int64)
        p1[pos >= 1] = y[np.nonzero(pos >= 1)[0] - 1]
        p2[pos >= 2] = y[np.nonzero(pos >= 2)[0] - 2]
        return p1, p2 * (T + 1) + p1

    # -- training -------------------------------------------------------------------------
    def _training_design(self, sentences: Sequence[Sentence]) -> tuple[_Design, np.ndarray, np.ndarray]:
        """Features, gold tags, count cut-off and the factored training design.

        Returns (design, y, mask); ``mask[f, t]`` says whether (parameter row f, tag t) is a
        parameter. Templates sharing a source (:meth:`FeatureExtractor.fit_ids`) become keys.
        """
        T = len(self.tagset_)
        self.extractor_ = FeatureExtractor(self.features)
        # a predicate seen fewer than ``cutoff`` times cannot pass either cut-off: never built
        mat, groups = self.extractor_.fit_ids(sentences, min_count=self.cutoff)
        n, K = mat.shape
        Fs = len(self.extractor_.vocab)
        y = self._gold_ids(sentences)
        lens = np.array([len(s.words) for s in sentences], dtype=np.int64)
        p1, pair = self._dynamic_ids(y, lens)
        nd = (T + 1) + (T + 1) ** 2
        dyn = np.stack([p1, (T + 1) + pair], axis=1)  # dynamic rows, counted from the static ones
        seen = mat >= 0
        if self.cutoff_on == "pair":  # Ratnaparkhi / Collins: the (predicate, tag) pair is the feature
            c_static = np.bincount((mat * T + y[:, None])[seen], minlength=Fs * T).reshape(Fs, T)
            c_dyn = np.bincount((dyn * T + y[:, None]).ravel(), minlength=nd * T).reshape(nd, T)
            mask = np.concatenate([c_static, c_dyn]) >= self.cutoff
        else:  # a frequent predicate gets a weight for every tag (negative evidence too)
            counts = np.concatenate([np.bincount(mat[seen], minlength=Fs), np.bincount(dyn.ravel(), minlength=nd)])
            mask = np.repeat((counts >= self.cutoff)[:, None], T, axis=1)
        keep_static = np.nonzero(mask[:Fs].any(axis=1))[0]
        self.extractor_.restrict(keep_static)
        self.n_static_ = Fs_kept = len(keep_static)
        mask = np.concatenate([mask[keep_static], mask[Fs:]])
        P = Fs_kept + nd
        remap = np.full(Fs + 1, -1, dtype=np.int64)  # the last entry maps −1 (not built) to −1
        remap[keep_static] = np.arange(Fs_kept)
        mat = remap[mat]  # −1: cut off
        grouped = np.zeros(K, dtype=bool)
        token_cols = []
        b_counts, b_ids = [], []
        n_keys = 0
        for cols, codes in groups:
            uniq, inv = _unique_inverse(codes)
            first = np.empty(len(uniq), dtype=np.int64)
            first[inv] = np.arange(n)  # a token of each source value (any will do)
            rows = mat[first][:, cols]  # the group's predicates for each source value
            ok = rows >= 0
            cnt = ok.sum(axis=1)
            used = cnt > 0
            key = np.cumsum(used) - 1
            token_cols.append(np.where(used[inv], P + n_keys + key[inv], -1))
            b_counts.append(cnt[used])
            b_ids.append(rows[used][ok[used]])
            n_keys += int(used.sum())
            grouped[cols] = True
        tok = np.concatenate([mat[:, ~grouped]] + [c[:, None] for c in token_cols] + [dyn + Fs_kept], axis=1)
        ok = tok >= 0
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(ok.sum(axis=1), out=indptr[1:])
        indices = tok[ok].astype(np.int32)
        bptr = np.zeros(n_keys + 1, dtype=np.int64)
        if b_counts:
            np.cumsum(np.concatenate(b_counts), out=bptr[1:])
        bind = np.concatenate(b_ids).astype(np.int32) if b_ids else np.zeros(0, dtype=np.int32)
        return _Design(indptr, indices, bptr, bind, P, n_keys), y, mask

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None,
            callback: Callable[[TrainStats], None] | None = None,
            should_cancel: Callable[[], bool] | None = None) -> "MaxEntTagger":
        t0 = time.perf_counter()
        self.gis_slack_ = None  # set by GIS only
        sentences = [s for s in sentences if len(s.words)]
        if not sentences:
            raise ValueError("no training sentences")
        labels = self.labels if self.labels is not None else sorted({sp.label for s in sentences for sp in s.spans})
        labels = labels if self.typed else []
        self.tagset_ = make_tagset(labels, self.task)
        design, y, mask = self._training_design(sentences)
        self.mask_ = mask
        if callback:
            callback(TrainStats(0, float("nan"), time.perf_counter() - t0,
                                message=f"{len(y)} tokens, {self.n_static_} predicates, "
                                        f"{int(mask.sum())} parameters"))
        if self.optimizer == "lbfgs":
            W = self._fit_lbfgs(design, y, mask, dev, callback, should_cancel, t0)
        else:
            W = self._fit_gis(design.to_csr(), y, mask, dev, callback, should_cancel, t0)
        self._set_weights(W)
        self.train_seconds_ = time.perf_counter() - t0
        return self

    def _design(self, Xs: sp.csr_matrix, p1: np.ndarray, pair: np.ndarray) -> sp.csr_matrix:
        """Reference (scipy) form of the design: static predicates, then t-1, then t-2 t-1."""
        T = len(self.tagset_)
        n, Fs = Xs.shape
        nd = (T + 1) + (T + 1) ** 2
        dyn = sp.csr_matrix((np.ones(2 * n, dtype=np.float32),
                             np.stack([p1, (T + 1) + pair], axis=1).reshape(-1),
                             np.arange(0, 2 * n + 1, 2)), shape=(n, nd))
        return sp.hstack([Xs, dyn], format="csr", dtype=np.float32)

    def _set_weights(self, W: np.ndarray) -> None:
        T = len(self.tagset_)
        self.W_ = np.ascontiguousarray(W, dtype=np.float64)
        Fs = self.n_static_
        self.Wp1_ = self.W_[Fs:Fs + T + 1]
        self.Wp2_ = self.W_[Fs + T + 1:]
        # allowed transitions in SCN: C-X only after S-X or C-X
        allowed = np.ones((T + 1, T), dtype=bool)
        for j, t in enumerate(self.tagset_):
            if t.startswith("C"):
                lab = t[2:]
                for i, prev in enumerate(self.tagset_ + ["<s>"]):
                    allowed[i, j] = prev in (f"S-{lab}" if lab else "S", t)
        self.allowed_ = allowed
        self.trans_pen_ = np.where(allowed, 0.0, -np.inf)

    def _loss_grad(self, X, XT, y, mask, theta):
        """Reference (numpy/scipy) objective: negative penalised log-likelihood and its gradient
        w.r.t. the free weights ``theta``. Training uses :class:`_Objective`; tests compare."""
        if mask.all():
            W = theta.reshape(mask.shape).astype(self.dtype, copy=False)
        else:
            W = np.zeros(mask.shape, dtype=self.dtype)
            W[mask] = theta
        S = X @ W
        S -= S.max(axis=1, keepdims=True)
        np.exp(S, out=S)
        S /= S.sum(axis=1, keepdims=True)
        rows = np.arange(len(y))
        ll = np.log(S[rows, y]).sum(dtype=np.float64)
        S[rows, y] -= 1.0
        G = XT @ S
        loss = -ll + 0.5 * self.l2 * float(theta @ theta)
        grad = (G.reshape(-1) if mask.all() else G[mask]).astype(np.float64) + self.l2 * theta
        return float(loss), grad

    def _fit_lbfgs(self, design, y, mask, dev, callback, should_cancel, t0):
        obj = _Objective(design, y, mask, self.l2, self.dtype, should_cancel, self._threads())

        def cb(it, x, f):
            dev_f = None
            if dev is not None and self.dev_every and it % self.dev_every == 0:
                self._set_weights(x.reshape(mask.shape))
                dev_f = self.evaluate(dev, beam=3)
            if callback:
                callback(TrainStats(it, f, time.perf_counter() - t0, dev_f))
            if should_cancel and should_cancel():
                raise Cancelled("tagger training cancelled")

        try:
            # the (s, y) history in the training dtype: float32 halves the two-loop's memory traffic
            res = lbfgs(obj, mask.size, max_iter=self.max_iter, m=self.maxcor, ftol=self.tol * 1e-3,
                        gtol=self.tol, callback=cb, history_dtype=self.dtype)
        finally:
            obj.close()
        self.n_iter_ = res.n_iter
        self.n_evals_ = res.n_evals
        self.stop_reason_ = res.reason
        return res.x.reshape(mask.shape)

    def _fit_gis(self, X, y, mask, dev, callback, should_cancel, t0):
        """Generalized Iterative Scaling with a slack predicate making every row sum to C.

        Regularisation is not applied (plain GIS, as in the paper); ``max_iter`` bounds it.
        """
        n = X.shape[0]
        row_counts = np.asarray(X.sum(axis=1)).ravel()
        C = float(row_counts.max())
        slack = C - row_counts
        Xa = sp.hstack([X, sp.csr_matrix(slack.reshape(-1, 1))], format="csr").astype(np.float64)
        mask_a = np.vstack([mask, np.ones((1, mask.shape[1]), dtype=bool)])
        Y = sp.csr_matrix((np.ones(n), y, np.arange(n + 1)), shape=(n, mask.shape[1]))
        emp = (Xa.T @ Y).toarray()
        W = np.zeros(mask_a.shape)
        XaT = Xa.T.tocsr()
        # the slack predicate (value C − number of active predicates) is part of the model
        self.gis_C_ = C
        self.gis_slack_ = W[-1]  # a view: follows the updates
        for it in range(1, self.max_iter + 1):
            if should_cancel and should_cancel():
                raise Cancelled("tagger training cancelled")
            S = Xa @ W
            S -= S.max(axis=1, keepdims=True)
            P = np.exp(S)
            P /= P.sum(axis=1, keepdims=True)
            ll = float(np.log(P[np.arange(n), y]).sum())
            model = XaT @ P
            with np.errstate(divide="ignore", invalid="ignore"):
                upd = np.where(mask_a & (emp > 0) & (model > 0), np.log(emp / model) / C, 0.0)
            W += upd
            dev_f = None
            if dev is not None and self.dev_every and it % self.dev_every == 0:
                self._set_weights(W[:-1] * mask)
                dev_f = self.evaluate(dev, beam=3)
            if callback:
                callback(TrainStats(it, -ll, time.perf_counter() - t0, dev_f))
        self.n_iter_ = self.n_evals_ = self.max_iter
        self.stop_reason_ = "max_iter"
        return W[:-1] * mask

    # -- decoding -------------------------------------------------------------------------
    def static_scores(self, sentences: Sequence[Sentence]) -> np.ndarray:
        """Score of every (token, tag) from the static predicates: (n_tokens, T)."""
        Xs = self.extractor_.transform(sentences)
        S = np.asarray(Xs @ self.W_[: self.n_static_])
        if getattr(self, "gis_slack_", None) is not None:
            slack = self.gis_C_ - np.asarray(Xs.sum(axis=1)).ravel() - 2.0
            S = S + slack[:, None] * self.gis_slack_[None, :]
        return S

    def nbest(self, sentences: Sequence[Sentence], n: int = 20, beam: int | None = None,
              batch_tokens: int = 20000, ids: Sequence[str] | None = None, with_gold: bool = True,
              progress: Callable[[int, int], None] | None = None,
              should_cancel: Callable[[], bool] | None = None) -> NBestList:
        """Beam search: the N most probable distinct valid tag sequences per sentence.

        The beam keeps ``beam`` (default ``n``) hypotheses per position. Sentences are decoded in
        batches of similar length, all sentences of a batch advancing together.
        """
        beam = max(beam or n, n)
        sentences = list(sentences)
        N = len(sentences)
        lens = np.array([len(s.words) for s in sentences], dtype=np.int64)
        cands: list = [None] * N
        logps: list = [None] * N
        order = np.argsort(-lens, kind="stable")
        done = 0
        k = 0
        while k < N:
            if should_cancel and should_cancel():
                raise Cancelled("decoding cancelled")
            tok = 0
            j = k
            while j < N and (tok == 0 or tok + lens[order[j]] <= batch_tokens):
                tok += lens[order[j]]
                j += 1
            idx = order[k:j]
            batch = [sentences[i] for i in idx]
            out = self._beam_batch(batch, lens[idx], n, beam)
            for i, (c, lp) in zip(idx, out):
                cands[i], logps[i] = c, lp
            done += len(idx)
            if progress:
                progress(done, N)
            k = j
        gold = [list(s.spans) if self.typed else [Span(a, b, "") for a, b, _ in s.spans] for s in sentences] \
            if with_gold else None
        return NBestList(list(self.tagset_), [s.words for s in sentences], cands, logps, gold,
                         list(ids) if ids else [], {"task": self.task, "features": self.features, "n": n})

    def _beam_batch(self, batch, lens, n, beam):
        T = len(self.tagset_)
        B = len(batch)
        nonempty = [s for s in batch if len(s.words)]
        static = self.static_scores(nonempty) if nonempty else np.zeros((0, T))
        starts = np.zeros(B + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        L = int(lens.max()) if B else 0
        K = beam
        score = np.full((B, K), -np.inf)
        score[:, 0] = 0.0
        t1 = np.full((B, K), T, dtype=np.int64)  # previous tag (T = start)
        t2 = np.full((B, K), T, dtype=np.int64)
        back_parent = np.zeros((L, B, K), dtype=np.int32)
        back_tag = np.zeros((L, B, K), dtype=np.int16)
        Wp1, Wp2, pen = self.Wp1_, self.Wp2_, self.trans_pen_
        for i in range(L):
            act = int((lens > i).sum())  # lens are sorted descending: active rows are a prefix
            if act == 0:
                break
            st = static[starts[:act] + i]  # (act, T)
            a1, a2 = t1[:act], t2[:act]
            local = st[:, None, :] + Wp1[a1] + Wp2[a2 * (T + 1) + a1]  # (act, K, T)
            local -= local.max(axis=2, keepdims=True)
            local -= np.log(np.exp(local).sum(axis=2, keepdims=True))
            cand = score[:act, :, None] + local + pen[a1]
            flat = cand.reshape(act, K * T)
            if K * T > K:
                part = np.argpartition(-flat, K - 1, axis=1)[:, :K]
            else:
                part = np.broadcast_to(np.arange(K * T), (act, K * T))
            vals = np.take_along_axis(flat, part, axis=1)
            o = np.argsort(-vals, axis=1, kind="stable")
            sel = np.take_along_axis(part, o, axis=1)
            newscore = np.take_along_axis(vals, o, axis=1)
            parent = sel // T
            tag = sel % T
            back_parent[i, :act] = parent
            back_tag[i, :act] = tag
            score[:act] = newscore
            t2[:act] = np.take_along_axis(a1, parent, axis=1)
            t1[:act] = tag
        out = []
        for b in range(B):
            m = int(lens[b])
            valid = np.isfinite(score[b])
            kk = min(n, int(valid.sum())) if m else 1
            seqs = np.zeros((kk, m), dtype=np.int16)
            if m:
                ptr = np.arange(kk)
                for i in range(m - 1, -1, -1):
                    seqs[:, i] = back_tag[i, b, ptr]
                    ptr = back_parent[i, b, ptr]
                out.append((seqs, score[b, :kk].copy()))
            else:
                out.append((seqs, np.zeros(1)))
        return out

    def predict_spans(self, sentences: Sequence[Sentence], beam: int = 20) -> list[list[Span]]:
        nb = self.nbest(sentences, n=1, beam=beam, with_gold=False)
        return nb.top()

    def evaluate(self, sentences: Sequence[Sentence], beam: int = 20) -> float:
        from ..evaluation import evaluate_spans
        pred = self.predict_spans(sentences, beam=beam)
        gold = [list(s.spans) if self.typed else [Span(a, b, "") for a, b, _ in s.spans] for s in sentences]
        return evaluate_spans(gold, pred).f1

    def log_prob(self, sentence: Sentence, tag_ids: Sequence[int]) -> float:
        """log p(tags | words) under the model (used by tests against the beam)."""
        T = len(self.tagset_)
        st = self.static_scores([sentence])
        lp = 0.0
        a2 = a1 = T
        for i, t in enumerate(tag_ids):
            loc = st[i] + self.Wp1_[a1] + self.Wp2_[a2 * (T + 1) + a1]
            m = loc.max()
            lp += loc[t] - (m + math.log(np.exp(loc - m).sum()))
            a2, a1 = a1, t
        return lp

    # -- persistence ----------------------------------------------------------------------
    def save(self, path) -> None:
        header = {"format": MODEL_FORMAT, "version": MODEL_VERSION, "task": self.task, "features": self.features,
                  "cutoff": self.cutoff, "cutoff_on": self.cutoff_on, "l2": self.l2, "optimizer": self.optimizer, "max_iter": self.max_iter,
                  "tagset": self.tagset_, "n_static": self.n_static_,
                  "train_seconds": getattr(self, "train_seconds_", None), "n_iter": getattr(self, "n_iter_", None),
                  "n_evals": getattr(self, "n_evals_", None), "stop_reason": getattr(self, "stop_reason_", None)}
        names = self.extractor_.names()
        payload = {"predicates": json_array(names), "lexicon": json_array(sorted(self.extractor_.lexicon)),
                   "W": self.W_.astype(np.float32)}
        if getattr(self, "gis_slack_", None) is not None:
            payload["gis_slack"] = self.gis_slack_
            payload["gis_C"] = np.array([self.gis_C_])
        save_npz(path, header, payload)

    @classmethod
    def load(cls, path) -> "MaxEntTagger":
        path = os.fspath(path)
        h, arrays = load_npz(path, MODEL_FORMAT, MODEL_VERSION, "a tagger model")
        try:
            m = cls(task=h["task"], features=h["features"], cutoff=h["cutoff"], l2=h["l2"],
                    optimizer=h["optimizer"], max_iter=h["max_iter"], cutoff_on=h.get("cutoff_on"))
            m.tagset_ = list(h["tagset"])
            m.n_static_ = int(h["n_static"])
            names = json_value(arrays["predicates"])
            if len(names) != m.n_static_:
                raise ValueError("predicate count does not match the weights")
            m.extractor_ = FeatureExtractor(h["features"], set(json_value(arrays["lexicon"])))
            m.extractor_.vocab = {k: i for i, k in enumerate(names)}
            T = len(m.tagset_)
            if arrays.shape("W") != (m.n_static_ + (T + 1) + (T + 1) ** 2, T):  # checked before it is read
                raise ValueError(f"weight matrix has shape {arrays.shape('W')}")
            W = arrays["W"].astype(np.float64)
            if "gis_slack" in arrays:
                m.gis_slack_ = arrays["gis_slack"]
                m.gis_C_ = float(arrays["gis_C"][0])
            m._set_weights(W)
            m.train_seconds_ = h.get("train_seconds")
            m.n_iter_, m.n_evals_, m.stop_reason_ = h.get("n_iter"), h.get("n_evals"), h.get("stop_reason")
            return m
        except CORRUPT as exc:
            raise FormatError(path, None, f"corrupt tagger model: {exc}") from None

