"""Compiled kernels of the maximum-entropy tagger's trainer (numba).

Why compiled code: one evaluation of the objective touches every (token, predicate) entry of
the design matrix twice (scores X·W, then the gradient Xᵀ·(P − Y)); with scipy's sparse
products and numpy's row-wise softmax that is five full passes and a few temporaries of the
size of the data, on one core. The trainer factors the design (see ``maxent_training.Design``): a
token's row lists its own predicates and a few *keys*, a key standing for the predicates of a
group of templates that share a source (all the templates of the current word, say); keys are
far fewer than tokens. An evaluation is then four passes: summed weights per key; per token
the scores, softmax, log-loss and residual P − Y; residuals summed per key; per predicate the
residuals of its tokens and keys plus the penalty term (through transposed copies built
once). Every entry is computed by exactly one block in a fixed order, so the result does not
depend on how blocks are shared out: the trainer hands blocks to one or two threads (every
kernel releases the GIL) as they come free. The L-BFGS vector work (two-loop recursion, trial
point, step acceptance) is one compiled call each, serial: it is memory-bound, and a second
thread would only add synchronisation, which costs dearly when other programs share the cores.

Same figures on every machine: no kernel is compiled with ``fastmath``. With it the compiler
may reorder a sum to fit the processor's vector width and fuse a product and a sum into one
instruction where the processor has one (FMA), so the trained weights depended on the machine
(a model trained with the kernels compiled for a generic x86-64 differed from one compiled for
this AVX2 machine, and after hundreds of L-BFGS iterations so did the tagger's F). A dot
product here is summed in four lanes (element j into lane j mod 4, the lanes added at the
end), a fixed order that still lets the compiler use vector instructions.

``tests/tagging/test_tagger.py`` checks the kernels against the numpy/scipy formulation, the gradient
against finite differences, and the optimiser against scipy's L-BFGS-B.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def _exp_nonpositive(v, out, n):
    """out[:n] = exp(v[:n]) for v ≤ 0, arguments below −40 taken as −40 (exp(−40) ≈ 4e−18).

    (Taylor polynomial of degree 14 at v/64)⁶⁴: relative error below 1e−13, and, unlike calls
    to the C library's exp, a loop the compiler vectorises (the softmax's exponentials were
    half of the scoring pass).
    """
    for j in range(n):
        x = v[j]
        if x < -40.0:
            x = -40.0
        u = x * 0.015625
        p = 1.0 + u * (
            1.0
            + u
            * (
                1.0 / 2
                + u
                * (
                    1.0 / 6
                    + u
                    * (
                        1.0 / 24
                        + u
                        * (
                            1.0 / 120
                            + u
                            * (
                                1.0 / 720
                                + u
                                * (
                                    1.0 / 5040
                                    + u
                                    * (
                                        1.0 / 40320
                                        + u
                                        * (
                                            1.0 / 362880
                                            + u
                                            * (
                                                1.0 / 3628800
                                                + u
                                                * (
                                                    1.0 / 39916800
                                                    + u
                                                    * (
                                                        1.0 / 479001600
                                                        + u
                                                        * (
                                                            1.0 / 6227020800
                                                            + u * (1.0 / 87178291200)
                                                        )
                                                    )
                                                )
                                            )
                                        )
                                    )
                                )
                            )
                        )
                    )
                )
            )
        )
        p = p * p
        p = p * p
        p = p * p
        p = p * p
        p = p * p
        out[j] = p * p


@njit(nogil=True, cache=True)
def forward_block(indptr, indices, y, W, lo, hi, R):
    """Rows ``lo:hi``: residuals R[i] = p(· | row i) − onehot(y[i]); returns their log-loss.

    Binary design: a row's score for tag t is the sum of ``W[f, t]`` over its predicates f.
    Scores and the softmax are computed in float64 whatever the dtype of ``W`` and ``R``, 64
    rows at a time (scores, then all their exponentials in one loop, then the residuals).
    """
    T = W.shape[1]
    C = 64
    sc = np.empty(C * T, np.float64)
    ex = np.empty(C * T, np.float64)
    loss = 0.0
    for c0 in range(lo, hi, C):
        nr = min(hi, c0 + C) - c0
        for r in range(nr):
            i = c0 + r
            base = r * T
            for t in range(T):
                sc[base + t] = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                f = indices[k]
                for t in range(T):
                    sc[base + t] += W[f, t]
            m = sc[base]
            for t in range(1, T):
                if sc[base + t] > m:
                    m = sc[base + t]
            loss -= sc[base + y[i]] - m
            for t in range(T):
                sc[base + t] -= m
        _exp_nonpositive(sc, ex, nr * T)
        for r in range(nr):
            i = c0 + r
            base = r * T
            z = 0.0
            for t in range(T):
                z += ex[base + t]
            loss += math.log(z)
            inv = 1.0 / z
            yi = y[i]
            for t in range(T):
                R[i, t] = ex[base + t] * inv - (1.0 if t == yi else 0.0)
    return loss


@njit(nogil=True, cache=True)
def group_sums(bptr, bind, Z, P, lo, hi):
    """Key rows ``lo:hi``: Z[P + r] = Σ_{f ∈ B row r} Z[f] (a key's summed predicate weights)."""
    T = Z.shape[1]
    acc = np.empty(T, np.float64)
    for r in range(lo, hi):
        for t in range(T):
            acc[t] = 0.0
        for k in range(bptr[r], bptr[r + 1]):
            f = bind[k]
            for t in range(T):
                acc[t] += Z[f, t]
        for t in range(T):
            Z[P + r, t] = acc[t]


@njit(nogil=True, cache=True)
def key_residuals(mtptr, mtind, R, P, lo, hi, U):
    """Key rows ``lo:hi``: U[r] = Σ_{i ∋ key r} R[i] (``mtptr``/``mtind``: the token matrix
    transposed, key r being its row P + r)."""
    T = R.shape[1]
    acc = np.empty(T, np.float64)
    for r in range(lo, hi):
        for t in range(T):
            acc[t] = 0.0
        for k in range(mtptr[P + r], mtptr[P + r + 1]):
            i = mtind[k]
            for t in range(T):
                acc[t] += R[i, t]
        for t in range(T):
            U[r, t] = acc[t]


@njit(nogil=True, cache=True)
def backward_block(mtptr, mtind, R, btptr, btind, U, x, d, step, l2, mask, use_mask, lo, hi, g):
    """Gradient rows ``lo:hi`` (predicates f):

    g[f, t] = Σ_{tokens i with f} R[i, t] + Σ_{keys r containing f} U[r, t] + l2·(x + step·d)[f, t],

    zero where ``mask`` is false (when ``use_mask``). ``mtptr``/``mtind``: the token matrix
    transposed; ``btptr``/``btind``: the key matrix transposed; ``x``, ``d``, ``g`` flat
    (predicate-major). Returns (Σ (x + step·d)², Σ g·d, max |g|) over the block, the sums
    taken per tag (one lane each, so the loop over tags vectorises), then over the tags.
    """
    T = R.shape[1]
    acc = np.empty(T, np.float64)
    reg_t = np.zeros(T, np.float64)
    gd_t = np.zeros(T, np.float64)
    gmax_t = np.zeros(T, np.float64)
    for f in range(lo, hi):
        for t in range(T):
            acc[t] = 0.0
        for k in range(mtptr[f], mtptr[f + 1]):
            i = mtind[k]
            for t in range(T):
                acc[t] += R[i, t]
        for k in range(btptr[f], btptr[f + 1]):
            r = btind[k]
            for t in range(T):
                acc[t] += U[r, t]
        for t in range(T):
            j = f * T + t
            xt = x[j] + step * d[j]
            v = acc[t] + l2 * xt
            if use_mask and not mask[j]:
                v = 0.0
            g[j] = v
            reg_t[t] += xt * xt
            gd_t[t] += v * d[j]
            gmax_t[t] = max(gmax_t[t], abs(v))
    reg = 0.0
    gd = 0.0
    gmax = 0.0
    for t in range(T):
        reg += reg_t[t]
        gd += gd_t[t]
        gmax = max(gmax, gmax_t[t])
    return reg, gd, gmax


@njit(nogil=True, cache=True)
def transpose(indptr, indices, n_cols):
    """CSR of the transpose of a binary CSR matrix (column entries in increasing row order)."""
    n = indptr.shape[0] - 1
    tptr = np.zeros(n_cols + 1, np.int64)
    for k in range(indptr[n]):
        tptr[indices[k] + 1] += 1
    for c in range(n_cols):
        tptr[c + 1] += tptr[c]
    fill = tptr[:-1].copy()
    tind = np.empty(indptr[n], np.int32)
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            c = indices[k]
            tind[fill[c]] = i
            fill[c] += 1
    return tptr, tind


@njit(nogil=True, cache=True)
def trial_point(x, d, step, out):
    """out = x + step·d (cast to out's dtype: the weights the objective is evaluated at)."""
    for j in range(x.shape[0]):
        out[j] = x[j] + step * d[j]


@njit(nogil=True, cache=True)
def neg_copy_dot(q, g, w):
    """q = −g, then return w·q (one pass; summed in four lanes, see the module docstring)."""
    n = q.shape[0]
    m = n - n % 4
    a0 = a1 = a2 = a3 = 0.0
    for j in range(0, m, 4):
        v0, v1, v2, v3 = -g[j], -g[j + 1], -g[j + 2], -g[j + 3]
        q[j], q[j + 1], q[j + 2], q[j + 3] = v0, v1, v2, v3
        a0 += w[j] * v0
        a1 += w[j + 1] * v1
        a2 += w[j + 2] * v2
        a3 += w[j + 3] * v3
    for j in range(m, n):
        v = -g[j]
        q[j] = v
        a0 += w[j] * v
    return (a0 + a1) + (a2 + a3)


@njit(nogil=True, cache=True)
def _axpy_dot(q, a, v, w):
    """q += a·v, then return w·q (one pass; four lanes)."""
    n = q.shape[0]
    m = n - n % 4
    a0 = a1 = a2 = a3 = 0.0
    for j in range(0, m, 4):
        x0 = q[j] + a * v[j]
        x1 = q[j + 1] + a * v[j + 1]
        x2 = q[j + 2] + a * v[j + 2]
        x3 = q[j + 3] + a * v[j + 3]
        q[j], q[j + 1], q[j + 2], q[j + 3] = x0, x1, x2, x3
        a0 += w[j] * x0
        a1 += w[j + 1] * x1
        a2 += w[j + 2] * x2
        a3 += w[j + 3] * x3
    for j in range(m, n):
        x = q[j] + a * v[j]
        q[j] = x
        a0 += w[j] * x
    return (a0 + a1) + (a2 + a3)


@njit(nogil=True, cache=True)
def _axpy_scale_dot(q, a, v, gamma, w):
    """q = gamma·(q + a·v), then return w·q (one pass; four lanes)."""
    n = q.shape[0]
    m = n - n % 4
    a0 = a1 = a2 = a3 = 0.0
    for j in range(0, m, 4):
        x0 = gamma * (q[j] + a * v[j])
        x1 = gamma * (q[j + 1] + a * v[j + 1])
        x2 = gamma * (q[j + 2] + a * v[j + 2])
        x3 = gamma * (q[j + 3] + a * v[j + 3])
        q[j], q[j + 1], q[j + 2], q[j + 3] = x0, x1, x2, x3
        a0 += w[j] * x0
        a1 += w[j + 1] * x1
        a2 += w[j + 2] * x2
        a3 += w[j + 3] * x3
    for j in range(m, n):
        x = gamma * (q[j] + a * v[j])
        q[j] = x
        a0 += w[j] * x
    return (a0 + a1) + (a2 + a3)


@njit(nogil=True, cache=True)
def two_loop(g, S, Y, rho, order, gamma, q):
    """q = −H·g, H the L-BFGS inverse-Hessian approximation (Nocedal & Wright, Alg. 7.4) of the
    pairs ``S[order[j]], Y[order[j]]`` (oldest first), initial matrix gamma·I.

    Starting from −g the recursion is linear, so it yields the direction itself; each update
    shares its pass with the next dot product. Returns g·q.
    """
    k = order.shape[0]
    alpha = np.empty(k)
    alpha[k - 1] = rho[order[k - 1]] * neg_copy_dot(q, g, S[order[k - 1]])
    for j in range(k - 2, -1, -1):
        alpha[j] = rho[order[j]] * _axpy_dot(q, -alpha[j + 1], Y[order[j + 1]], S[order[j]])
    beta = rho[order[0]] * _axpy_scale_dot(q, -alpha[0], Y[order[0]], gamma, Y[order[0]])
    for j in range(k - 1):
        beta = rho[order[j + 1]] * _axpy_dot(q, alpha[j] - beta, S[order[j]], Y[order[j + 1]])
    return _axpy_dot(q, alpha[k - 1] - beta, S[order[k - 1]], g)


@njit(nogil=True, cache=True)
def accept_step(x, d, step, g_new, g, s_out, y_out):
    """Take the step: s = step·d, x += s, y = g_new − g, g = g_new. Returns (s·y, y·y), each
    summed in four lanes."""
    n = x.shape[0]
    sy = np.zeros(4)
    yy = np.zeros(4)
    for j in range(n):
        s = step * d[j]
        x[j] += s
        yv = g_new[j] - g[j]
        g[j] = g_new[j]
        s_out[j] = s
        y_out[j] = yv
        lane = j & 3
        sy[lane] += s * yv
        yy[lane] += yv * yv
    return (sy[0] + sy[1]) + (sy[2] + sy[3]), (yy[0] + yy[1]) + (yy[2] + yy[3])
