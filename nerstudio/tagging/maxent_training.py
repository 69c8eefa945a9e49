"""How the maximum-entropy tagger is trained in batch: its objective, L-BFGS and GIS.

:class:`Design` is the training design matrix in factored form (a token's static predicates,
plus keys standing for groups of predicates shared by many tokens); :class:`Objective` is the
L2-penalised negative log-likelihood over it, evaluated in four passes over blocks of rows by the
compiled kernels of :mod:`nerstudio.tagging._maxent_compiled`, on one or more threads
(:class:`_Blocks`), whichever is faster at the moment. :func:`lbfgs` is our own limited-memory
BFGS: scipy's L-BFGS-B spent 40–50 ms per iteration on its bookkeeping at 600k parameters, more
than an evaluation of the objective; ours is the plain two-loop recursion with a backtracking
line search, its vector work in compiled loops, and the tests hold it to scipy's optimum.
:func:`fit_gis` is Generalized Iterative Scaling, the paper's own optimiser. The online
optimiser is :mod:`nerstudio.tagging.online`; the tagger itself (features, decoding, model
files) is :mod:`nerstudio.tagging.maxent`.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import Cancelled
from .lazy import LazyModule

_mc = LazyModule(
    __name__.rpartition(".")[0] + "._maxent_compiled"
)  # numba kernels, imported on first use


@dataclass
class LBFGSResult:
    x: np.ndarray
    f: float
    n_iter: int
    n_evals: int
    reason: str  # "max_iter", "ftol", "gtol" or "line search failed"


def lbfgs(
    fun,
    n: int,
    max_iter: int = 100,
    m: int = 10,
    ftol: float = 1e-8,
    gtol: float = 1e-5,
    callback: Callable | None = None,
    x0: np.ndarray | None = None,
    c1: float = 1e-4,
    max_ls: int = 30,
    history_dtype=np.float64,
) -> LBFGSResult:
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
    caller measures both (:meth:`Objective.__call__`) and passes ``threads`` to :meth:`run`.
    """

    def __init__(self, threads: int):
        self.threads = max(1, int(threads))
        self.pool = (
            ThreadPoolExecutor(self.threads - 1, thread_name_prefix="maxent")
            if self.threads > 1
            else None
        )

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
class Design:
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
        M = sp.csr_matrix(
            (np.ones(len(self.indices), dtype=dtype), self.indices, self.indptr),
            shape=(n, P + self.n_keys),
        )
        B = sp.csr_matrix(
            (np.ones(len(self.bind), dtype=dtype), self.bind, self.bptr), shape=(self.n_keys, P)
        )
        X = (M[:, :P] + M[:, P:] @ B).tocsr()
        X.sort_indices()
        return X


class Objective:
    """The penalised negative log-likelihood for :func:`lbfgs`, evaluated by compiled kernels.

    Parameters are the whole (parameter row × tag) weight matrix, flattened row-major; entries
    outside ``mask`` get a zero gradient, so starting from zero they stay zero. An evaluation is
    four passes over blocks (see :mod:`._maxent_compiled`), each spread over ``threads``.
    """

    def __init__(self, design: Design, y, mask, l2, dtype, should_cancel=None, threads: int = 1):
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
        self.pb = _even_blocks(self.mtptr[: P + 1] + self.btptr)  # predicates, by tokens and keys
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
        return (
            float(self.loss_b.sum()) + 0.5 * self.l2 * float(reg),
            float(gd),
            float(self.stats_b[:, 2].max()),
        )

    def _evaluate(self, x, d, step, g, threads):
        _mc.trial_point(x, d, step, self.Wflat)
        D, P, Z, R, U, y = self.D, self.P, self.Z, self.R, self.U, self.y
        mtptr, mtind, btptr, btind = self.mtptr, self.mtind, self.btptr, self.btind
        kb, rb, ub, pb, loss_b, stats_b = (
            self.kb,
            self.rb,
            self.ub,
            self.pb,
            self.loss_b,
            self.stats_b,
        )
        l2, mask, use_mask = self.l2, self.mask, self.use_mask

        def keys(b):
            _mc.group_sums(D.bptr, D.bind, Z, P, kb[b], kb[b + 1])

        def tokens(b):
            loss_b[b] = _mc.forward_block(D.indptr, D.indices, y, Z, rb[b], rb[b + 1], R)

        def key_res(b):
            _mc.key_residuals(mtptr, mtind, R, P, ub[b], ub[b + 1], U)

        def preds(b):
            stats_b[b] = _mc.backward_block(
                mtptr,
                mtind,
                R,
                btptr,
                btind,
                U,
                x,
                d,
                step,
                l2,
                mask,
                use_mask,
                pb[b],
                pb[b + 1],
                g,
            )

        run = self.blocks.run
        if D.n_keys:
            run(keys, len(kb) - 1, threads)
        run(tokens, len(rb) - 1, threads)
        if D.n_keys:
            run(key_res, len(ub) - 1, threads)
        run(preds, len(pb) - 1, threads)

    def close(self) -> None:
        self.blocks.close()


def fit_gis(tagger, X, y, mask, dev, callback, should_cancel, t0, W0=None):
    """The max-ent tagger ``tagger``'s weights by Generalized Iterative Scaling, with a slack
    predicate making every row of the design ``X`` sum to C.

    Regularisation is not applied (plain GIS, as in the paper); ``max_iter`` bounds it.
    """
    from .maxent import TrainStats

    n = X.shape[0]
    row_counts = np.asarray(X.sum(axis=1)).ravel()
    C = float(row_counts.max())
    slack = C - row_counts
    Xa = sp.hstack([X, sp.csr_matrix(slack.reshape(-1, 1))], format="csr").astype(np.float64)
    mask_a = np.vstack([mask, np.ones((1, mask.shape[1]), dtype=bool)])
    Y = sp.csr_matrix((np.ones(n), y, np.arange(n + 1)), shape=(n, mask.shape[1]))
    emp = (Xa.T @ Y).toarray()
    W = np.zeros(mask_a.shape)
    if W0 is not None:
        W[:-1] = W0
    XaT = Xa.T.tocsr()
    # the slack predicate (value C − number of active predicates) is part of the model
    tagger.gis_C_ = C
    tagger.gis_slack_ = W[-1]  # a view: follows the updates
    for it in range(1, tagger.max_iter + 1):
        if should_cancel and should_cancel():
            raise Cancelled("tagger training cancelled")
        S = np.asarray(Xa @ W)
        S -= S.max(axis=1, keepdims=True)
        P = np.exp(S)
        P /= P.sum(axis=1, keepdims=True)
        ll = float(np.log(P[np.arange(n), y]).sum())
        model = XaT @ P
        with np.errstate(divide="ignore", invalid="ignore"):
            upd = np.where(mask_a & (emp > 0) & (model > 0), np.log(emp / model) / C, 0.0)
        W += upd
        dev_f = None
        if dev is not None and tagger.dev_every and it % tagger.dev_every == 0:
            tagger._set_weights(W[:-1] * mask)
            dev_f = tagger.evaluate(dev, beam=3)
        if callback:
            callback(TrainStats(it, -ll, time.perf_counter() - t0, dev_f))
    tagger.n_iter_ = tagger.n_evals_ = tagger.max_iter
    tagger.stop_reason_ = "max_iter"
    return W[:-1] * mask
