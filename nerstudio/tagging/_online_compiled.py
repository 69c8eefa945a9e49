"""Compiled kernels of the maximum-entropy tagger's online optimiser (numba).

One training example is one token (with its gold history); one step reads the weight rows of
its predicates (its own, and those its keys stand for: ``maxent_training.Design``), scores the
tags, and moves those rows against the token's residual p(· | token) − onehot(gold). A row's
step is η / √G, G the sum of the row's mean squared gradients so far (row-wise AdaGrad: one
accumulator per predicate row, shared by its tags).

The L2 penalty ``l2/2·‖W‖²`` of the objective is spread over the N tokens of an epoch, so every
step shrinks *every* row: row f by the factor exp(−c / √G_f), c = η·l2/N. Applying that to
every row at every step would cost the whole weight matrix per token; instead a row is shrunk
only when a token reads it, by the factor of all the steps since it was last brought up to
date, exp(−k·c / √G_f) (k steps, G_f unchanged meanwhile since the row was not touched), and
every row is brought up to date at the end of each epoch. The weights are then the same as if
every row were shrunk at every step (``tests/test_online.py`` compares both on a tiny problem).
The step that touches a row updates its G and leaves that step's own shrinking pending, to be
applied with the new G by the next catch-up, which is exactly what shrinking every row after
every step with the current G does.

Determinism: one thread walks the tokens in the order given (a seeded permutation), sums in a
fixed order and compiles without ``fastmath`` (see :mod:`._maxent_compiled`); exponentials are
the vectorisable polynomial of :func:`._maxent_compiled._exp_nonpositive`, so the weights do
not depend on the processor, nor on the number of numba threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._maxent_compiled import _exp_nonpositive


@njit(nogil=True, cache=True)
def max_row_length(indptr, indices, bptr, P):
    """The longest token row once its keys are expanded into their predicates."""
    longest = 0
    for i in range(indptr.shape[0] - 1):
        n = 0
        for k in range(indptr[i], indptr[i + 1]):
            c = indices[k]
            n += 1 if c < P else bptr[c - P + 1] - bptr[c - P]
        longest = max(longest, n)
    return longest


@njit(nogil=True, cache=True)
def adagrad_epoch(indptr, indices, bptr, bind, P, y, order, W, Q, mask, row_n, eta, c, clock):
    """One pass over the tokens ``order`` (row indices of the design). Returns (the summed
    log-loss of the tokens, each at the weights it was scored with; the step count after it).

    ``W`` (rows × tags, float32 or float64) the weights; ``Q[f, 0]`` row f's squared gradient
    sum (> 0), ``Q[f, 1]`` the step through which its shrinking is applied (side by side: one
    memory access for both);
    ``clock`` the steps taken before this pass; ``c`` = η·l2/N. Entries outside ``mask`` are
    never moved; ``row_n[f]`` is the number of row f's entries inside it (all of them or none
    for most rows: then the mask is not read).
    """
    T = W.shape[1]
    longest = max_row_length(indptr, indices, bptr, P)
    rows = np.empty(max(longest, 1), np.int64)
    fac = np.empty(max(longest, 1), np.float64)
    sc = np.empty(T, np.float64)
    ex = np.empty(T, np.float64)
    r = np.empty(T, np.float64)
    loss = 0.0
    for i in order:
        clock += 1
        nr = 0
        for k in range(indptr[i], indptr[i + 1]):
            col = indices[k]
            if col < P:
                rows[nr] = col
                nr += 1
            else:
                for kk in range(bptr[col - P], bptr[col - P + 1]):
                    rows[nr] = bind[kk]
                    nr += 1
        # catch up: the shrinking of the steps since each row was last brought up to date
        # (a row listed twice is brought up to date once: the second time it has none to do)
        for j in range(nr):
            f = rows[j]
            skipped = clock - 1 - Q[f, 1]
            Q[f, 1] = clock - 1
            fac[j] = -(skipped * c) / math.sqrt(Q[f, 0])
        _exp_nonpositive(fac, fac, nr)
        for t in range(T):
            sc[t] = 0.0
        for j in range(nr):
            f = rows[j]
            a = fac[j]
            if a != 1.0:
                for t in range(T):
                    W[f, t] = W[f, t] * a
                    sc[t] += W[f, t]
            else:
                for t in range(T):
                    sc[t] += W[f, t]
        m = sc[0]
        for t in range(1, T):
            if sc[t] > m:
                m = sc[t]
        for t in range(T):
            sc[t] -= m
        _exp_nonpositive(sc, ex, T)
        z = 0.0
        for t in range(T):
            z += ex[t]
        yi = y[i]
        loss += math.log(z) - sc[yi]
        inv = 1.0 / z
        for t in range(T):
            r[t] = ex[t] * inv - (1.0 if t == yi else 0.0)
        # the step: AdaGrad per row; this step's shrinking stays pending (Q[f, 1] unchanged)
        g2_all = 0.0
        for t in range(T):
            g2_all += r[t] * r[t]
        g2_all /= T
        for j in range(nr):
            f = rows[j]
            n_in = row_n[f]
            if n_in == T:
                Q[f, 0] += g2_all
                step = eta / math.sqrt(Q[f, 0])
                for t in range(T):
                    W[f, t] = W[f, t] - step * r[t]
            elif n_in > 0:
                g2 = 0.0
                for t in range(T):
                    if mask[f, t]:
                        g2 += r[t] * r[t]
                Q[f, 0] += g2 / n_in
                step = eta / math.sqrt(Q[f, 0])
                for t in range(T):
                    if mask[f, t]:
                        W[f, t] = W[f, t] - step * r[t]
    return loss, clock


@njit(nogil=True, cache=True)
def catch_up(W, Q, c, clock):
    """Bring every row up to date at step ``clock`` (see the module docstring)."""
    P = W.shape[0]
    fac = np.empty(P, np.float64)
    for f in range(P):
        fac[f] = -((clock - Q[f, 1]) * c) / math.sqrt(Q[f, 0])
        Q[f, 1] = clock
    _exp_nonpositive(fac, fac, P)
    T = W.shape[1]
    for f in range(P):
        a = fac[f]
        if a != 1.0:
            for t in range(T):
                W[f, t] = W[f, t] * a
