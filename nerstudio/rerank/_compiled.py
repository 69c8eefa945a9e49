"""Compiled inner loops of the rerankers (numba).

Why compiled code: a boosting round touches the few hundred pairs of one feature and, through
them, tens of thousands of scattered (feature, weight) updates; a perceptron epoch visits every
sentence once. Written with numpy, each of these costs a dozen array calls of a few microseconds
each, which is the whole time budget (300,000 rounds in a minute, an epoch in a second). The
loops here are the literal algorithms, kept short; the Python modules hold the reference
(one-step) versions that tests compare them with.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

BLOCK = 256  # block size of the two-level argmax over BestLoss


@njit(cache=True, nogil=True)
def _one_block_max(BL, bmax, b, block):
    lo = b * block
    hi = min(lo + block, BL.shape[0])
    best = -1.0
    for f in range(lo, hi):
        if BL[f] > best:
            best = BL[f]
    bmax[b] = best


@njit(cache=True, nogil=True)
def block_max(BL, bmax, block):
    for b in range(bmax.shape[0]):
        _one_block_max(BL, bmax, b, block)


@njit(cache=True, nogil=True)
def _argmax_blocks(BL, bmax, block):
    bb = 0
    best = bmax[0]
    for b in range(1, bmax.shape[0]):
        if bmax[b] > best:
            best = bmax[b]
            bb = b
    lo = bb * block
    hi = min(lo + block, BL.shape[0])
    k = lo
    for f in range(lo, hi):
        if BL[f] == best:
            k = f
            break
    return k, best


@njit(cache=True, nogil=True)
def _best_loss_of(slots, feature, W, BL, bmax, block, dirty, dirty_list):
    """BestLoss of the features in W's ``slots`` (``feature[g]``: the feature of slot g) from
    their W± (clamped at zero), and the block maxima that change with it: a block's maximum is
    raised at once, and a block whose maximum fell (or became NaN) is rescanned (``dirty``;
    the same maxima as rescanning every block touched)."""
    nd = 0
    for q in range(slots.shape[0]):
        g = slots[q]
        f = feature[g]
        a = W[2 * g]
        if a < 0.0:
            a = 0.0
            W[2 * g] = 0.0
        b = W[2 * g + 1]
        if b < 0.0:
            b = 0.0
            W[2 * g + 1] = 0.0
        was = BL[f]
        now = abs(math.sqrt(a) - math.sqrt(b))
        BL[f] = now
        blk = f // block
        if now > bmax[blk]:
            bmax[blk] = now
        elif was == bmax[blk] and not now >= was and not dirty[blk]:
            dirty[blk] = True
            dirty_list[nd] = blk
            nd += 1
    for q in range(nd):
        blk = dirty_list[q]
        dirty[blk] = False
        _one_block_max(BL, bmax, blk, block)


@njit(cache=True, nogil=True)
def boost_rounds(
    n_rounds,
    A_ptr,
    A_idx,
    A_sgn,
    B_ptr,
    B_code,
    M,
    e,
    W,
    BL,
    bmax,
    block,
    state,
    eps,
    alpha,
    chosen,
    deltas,
    offset,
    dev_ptr,
    dev_idx,
    dev_scores,
    dirty,
    dirty_list,
    touched,
    touched_mark,
    max_work,
    T_start,
    T_len,
    pool,
    pool_state,
    slot,
    feature,
):
    """Run up to ``n_rounds`` rounds of Figure 2; returns how many ran.

    Feature f's W+ and W− are ``W[2g]`` and ``W[2g + 1]``, g = ``slot[f]`` (``feature[g]`` = f):
    :func:`slots_by_first_use` numbers the slots so that the features of a pair lie near each
    other. ``B_code`` holds D's rows as codes 2g (+1 in the feature of slot g) and 2g + 1 (−1):
    one array read and no branch per update (``B_code`` and ``A_idx`` are unsigned: an index
    read from them is not tested for being negative, a quarter of the rounds' time). The slots
    whose BestLoss a round changes are those of the B rows of the chosen feature's pairs, the
    same every time it is chosen: found once (``touched``, ``touched_mark``: scratch, by slot)
    and kept in ``pool[T_start[k]:][:T_len[k]]`` while ``pool`` has room (``pool_state[0]``:
    its entries in use; ``T_start[k] < 0``: not kept). ``bmax`` holds the maximum of each
    block of ``block`` BestLoss values (by feature: the first feature of the largest BestLoss
    wins). ``state[0]`` holds Z. Chosen features and steps are written to ``chosen[offset + r]``
    and ``deltas[offset + r]``. ``dev_scores`` (if ``dev_ptr`` is non-empty) gets δ added on
    the dev rows that have the chosen feature (``dev_ptr``/``dev_idx`` is the dev matrix in
    CSC).
    """
    Z = state[0]
    done = 0
    work = 0
    have_dev = dev_ptr.shape[0] > 0
    for r in range(n_rounds):
        k, bl = _argmax_blocks(BL, bmax, block)
        if not bl > 0.0:
            break
        wp = W[2 * slot[k]]
        wm = W[2 * slot[k] + 1]
        ez = eps * Z
        if wp + ez <= 0.0 or wm + ez <= 0.0:
            ez = 1e-6 * Z
        delta = 0.5 * math.log((wp + ez) / (wm + ez))
        up = math.exp(-delta)
        down = math.exp(delta)
        known = T_start[k] >= 0
        nt = 0
        for t in range(A_ptr[k], A_ptr[k + 1]):
            p = A_idx[t]
            s = A_sgn[t]
            M[p] += s * delta
            old = e[p]
            new = old * (up if s > 0 else down)
            e[p] = new
            d = new - old
            Z += d
            work += B_ptr[p + 1] - B_ptr[p]
            if known:
                for u in range(B_ptr[p], B_ptr[p + 1]):
                    W[B_code[u]] += d
            else:
                for u in range(B_ptr[p], B_ptr[p + 1]):
                    c = B_code[u]
                    W[c] += d
                    f = c >> 1
                    if not touched_mark[f]:
                        touched_mark[f] = True
                        touched[nt] = f
                        nt += 1
        if known:
            a = T_start[k]
            _best_loss_of(pool[a : a + T_len[k]], feature, W, BL, bmax, block, dirty, dirty_list)
        else:
            for q in range(nt):
                touched_mark[touched[q]] = False
            used = pool_state[0]
            if used + nt <= pool.shape[0]:
                pool[used : used + nt] = touched[:nt]
                T_start[k] = used
                T_len[k] = nt
                pool_state[0] = used + nt
            _best_loss_of(touched[:nt], feature, W, BL, bmax, block, dirty, dirty_list)
        alpha[k] += delta
        chosen[offset + r] = k
        deltas[offset + r] = delta
        if have_dev:
            for t in range(dev_ptr[k], dev_ptr[k + 1]):
                dev_scores[dev_idx[t]] += delta
        done += 1
        if work >= max_work:
            break
    state[0] = Z
    return done


@njit(cache=True, nogil=True)
def perceptron_epoch(
    order,
    offsets,
    X_ptr,
    X_idx,
    L,
    quality,
    oracle,
    beta,
    w,
    wL,
    mode,
    C,
    t0,
    acc,
    accL,
    last,
    lastL,
    log_sent,
    log_wrong,
    log_count,
    n_log,
):
    """One pass of the ranking perceptron over the sentences in ``order``.

    ``mode``: 0 plain update on the top-scoring wrong candidate; 1 margin perceptron (also update
    with the best wrong candidate when the oracle wins by at most ``C``).
    Weights: ``w`` on the features, ``wL`` (array of one) on β·L(x). Lazy averaging:
    ``acc``/``accL`` accumulate weight × time, ``last``/``lastL`` the time of each weight's last
    change; ``t0`` is the number of examples seen before this epoch. Every update is logged as
    (sentence, wrong row) with the number of examples its predecessor survived, for voting.
    Returns (mistakes, updates, n_log, t) where t is the example counter after the epoch.
    """
    t = t0
    mistakes = 0
    updates = 0
    for ii in range(order.shape[0]):
        i = order[ii]
        a = offsets[i]
        b = offsets[i + 1]
        o = a + oracle[i]
        qo = quality[o]
        best = -1
        best_s = -1e300
        wrong = -1
        wrong_s = -1e300
        so = 0.0
        for r in range(a, b):
            s = beta * wL[0] * L[r]
            for u in range(X_ptr[r], X_ptr[r + 1]):
                s += w[X_idx[u]]
            if s > best_s:
                best_s = s
                best = r
            if quality[r] < qo and s > wrong_s:
                wrong_s = s
                wrong = r
            if r == o:
                so = s
        target = -1
        if quality[best] < qo:
            target = best
            mistakes += 1
        elif mode == 1 and wrong >= 0 and so - wrong_s <= C:
            target = wrong
        t += 1
        if target >= 0:
            updates += 1
            # lazy averaging: bring the touched weights' accumulators up to time t - 1
            for u in range(X_ptr[o], X_ptr[o + 1]):
                f = X_idx[u]
                acc[f] += (t - 1 - last[f]) * w[f]
                last[f] = t - 1
            for u in range(X_ptr[target], X_ptr[target + 1]):
                f = X_idx[u]
                acc[f] += (t - 1 - last[f]) * w[f]
                last[f] = t - 1
            accL[0] += (t - 1 - lastL[0]) * wL[0]
            lastL[0] = t - 1
            for u in range(X_ptr[o], X_ptr[o + 1]):
                w[X_idx[u]] += 1.0
            for u in range(X_ptr[target], X_ptr[target + 1]):
                w[X_idx[u]] -= 1.0
            wL[0] += beta * (L[o] - L[target])
            log_sent[n_log] = i
            log_wrong[n_log] = target
            log_count[n_log] = t - 1  # time of the update; counts are derived from the times
            n_log += 1
    return mistakes, updates, n_log, t


@njit(cache=True, nogil=True)
def vote_range(
    k_from,
    k_to,
    state,
    S,
    L,
    offsets,
    col_ptr,
    col_idx,
    upd_plus_ptr,
    upd_plus,
    upd_minus_ptr,
    upd_minus,
    upd_dL,
    counts,
    beta,
    votes,
):
    """Figure 4 voting with incremental scores, for vectors ``k_from`` ≤ k < ``k_to``.

    Vector 0 is the starting vector, vector k the one after k updates. ``S`` holds the feature
    part of every candidate's score under vector ``state[0]`` and ``state[1]`` its L weight;
    moving to the next vector applies one update: column f of the data (``col_ptr``/``col_idx``,
    CSC) is added for f in ``upd_plus[k]`` and subtracted for f in ``upd_minus[k]``, and the L
    weight changes by ``upd_dL[k]``. Vector k adds ``counts[k]`` votes to each sentence's top
    candidate (first on ties) in ``votes``. The state can be resumed by a later call.
    """
    n_s = offsets.shape[0] - 1
    for k in range(k_from, k_to):
        while state[0] < k:
            u = int(state[0])
            for q in range(upd_plus_ptr[u], upd_plus_ptr[u + 1]):
                f = upd_plus[q]
                for t in range(col_ptr[f], col_ptr[f + 1]):
                    S[col_idx[t]] += 1.0
            for q in range(upd_minus_ptr[u], upd_minus_ptr[u + 1]):
                f = upd_minus[q]
                for t in range(col_ptr[f], col_ptr[f + 1]):
                    S[col_idx[t]] -= 1.0
            state[1] += upd_dL[u]
            state[0] += 1
        c = counts[k]
        if c <= 0:
            continue
        wl = beta * state[1]
        for i in range(n_s):
            a = offsets[i]
            b = offsets[i + 1]
            if b <= a:
                continue
            best = a
            bs = S[a] + wl * L[a]
            for r in range(a + 1, b):
                s = S[r] + wl * L[r]
                if s > bs:
                    bs = s
                    best = r
            votes[best] += c


@njit(cache=True, nogil=True)
def pair_differences(indptr, indices, orow, other):
    """Rows of D = h(x_i1) − h(x_ij) for every pair: the features in one row and not the other.

    ``indptr``/``indices`` is a CSR matrix with sorted indices. Returns ``(ptr, code)``: the
    CSR structure of D, each entry coded 2f for +1 in feature f (only in the oracle) and
    2f + 1 for −1, in increasing order of f within a row.
    """
    n = orow.shape[0]
    ptr = np.zeros(n + 1, dtype=np.int64)
    for p in range(n):
        a, a_end = indptr[orow[p]], indptr[orow[p] + 1]
        b, b_end = indptr[other[p]], indptr[other[p] + 1]
        c = 0
        while a < a_end and b < b_end:
            if indices[a] == indices[b]:
                a += 1
                b += 1
            elif indices[a] < indices[b]:
                a += 1
                c += 1
            else:
                b += 1
                c += 1
        c += (a_end - a) + (b_end - b)
        ptr[p + 1] = ptr[p] + c
    code = np.empty(ptr[n], dtype=np.uint32)  # unsigned: indexing with it tests no sign
    for p in range(n):
        a, a_end = indptr[orow[p]], indptr[orow[p] + 1]
        b, b_end = indptr[other[p]], indptr[other[p] + 1]
        q = ptr[p]
        while a < a_end or b < b_end:
            if b >= b_end or (a < a_end and indices[a] < indices[b]):
                code[q] = 2 * indices[a]
                a += 1
                q += 1
            elif a >= a_end or indices[b] < indices[a]:
                code[q] = 2 * indices[b] + 1
                b += 1
                q += 1
            else:
                a += 1
                b += 1
    return ptr, code


@njit(cache=True, nogil=True)
def transpose_signed(ptr, code, m):
    """Column-wise copy of D (the A± indices): pairs per feature, with the sign of the entry."""
    n = ptr.shape[0] - 1
    cptr = np.zeros(m + 1, dtype=np.int64)
    for q in range(ptr[n]):
        cptr[(code[q] >> 1) + 1] += 1
    for f in range(m):
        cptr[f + 1] += cptr[f]
    fill = cptr[:-1].copy()
    cidx = np.empty(ptr[n], dtype=np.uint32)
    csgn = np.empty(ptr[n], dtype=np.float64)
    for p in range(n):
        for q in range(ptr[p], ptr[p + 1]):
            f = code[q] >> 1
            cidx[fill[f]] = p
            csgn[fill[f]] = -1.0 if code[q] & 1 else 1.0
            fill[f] += 1
    return cptr, cidx, csgn


@njit(cache=True, nogil=True)
def slots_by_first_use(code, m):
    """Renumber D's columns in the order the rows first use them (then the unused ones), in
    place: ``code`` (as :func:`pair_differences` gives it) then codes slots instead of
    features. Returns ``(slot, feature)``: the slot of every feature and its inverse. The
    features of one pair, and of the pairs of one sentence, get neighbouring slots, so a
    boosting round's scattered weight updates fall on fewer cache lines."""
    slot = np.full(m, -1, dtype=np.int64)
    feature = np.empty(m, dtype=np.int64)
    g = 0
    for q in range(code.shape[0]):
        f = code[q] >> 1
        if slot[f] < 0:
            slot[f] = g
            feature[g] = f
            g += 1
    for f in range(m):
        if slot[f] < 0:
            slot[f] = g
            feature[g] = f
            g += 1
    for q in range(code.shape[0]):
        code[q] = 2 * slot[code[q] >> 1] + (code[q] & 1)
    return slot, feature


@njit(cache=True, nogil=True)
def pair_weights(M, c, ptr, code, m, e, W, BL, slot):
    """e = exp(−(M − c)), W± (``W``: W+ of the feature of slot g at 2g, W− at 2g + 1; ``code``
    by slot) and BestLoss (by feature, ``slot[f]`` its slot) from scratch; returns Z."""
    for q in range(2 * m):
        W[q] = 0.0
    Z = 0.0
    for p in range(M.shape[0]):
        v = math.exp(-(M[p] - c))
        e[p] = v
        Z += v
        for q in range(ptr[p], ptr[p + 1]):
            W[code[q]] += v
    for f in range(m):
        BL[f] = abs(math.sqrt(W[2 * slot[f]]) - math.sqrt(W[2 * slot[f] + 1]))
    return Z
