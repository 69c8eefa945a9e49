"""Compiled counts of the non-local features (numba, ``nogil``): the integer form of
:meth:`nerstudio.text.nonlocal_features.NonLocalFeatures.strings`.

A document is given as integer arrays (built once per document by
:class:`nerstudio.text.nonlocal_features.DocumentIndex`):

* ``sid[n, i]``: the id of the word string ``words[i:i + n]`` (equal ids exactly for equal word
  tuples; ids of different lengths differ; −1 past the document's end); ``sid[1]`` are word ids;
* ``occ_ptr`` / ``occ_pos``: for every string id, the positions where it occurs (CSR, increasing);
* ``coord1[i]``: ``lower[i]`` is one of ``,`` ``and`` ``or``; ``coord2[i]``: ``lower[i:i + 2]`` is
  ``, and`` or ``, or``.

Candidates come as entities (``start``, ``end``, ``label``) ordered by candidate, then start,
with ``cptr`` the offsets of each candidate's entities; labels are ranks in the sorted label
list, so comparing ranks compares the label strings. Each feature is a code
``(family * L + a) * L + b`` (L labels; the families below); the result is a dense count matrix,
one row per candidate. The definitions, ties and counts are those of the module docstring of
:mod:`nerstudio.text.nonlocal_features`, computed in the same order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

PC_PAIR, PC_SAME, PC_DIFF, PC_O, SP, SP_SAME, SP_DIFF, MJ, MJS, MJT, CJ_PAIR, CJ_SAME, CJ_DIFF = (
    range(13)
)
N_FAMILIES = 13
MAX_SUBPHRASE = 12


@njit(cache=True, nogil=True)
def _code(family, a, b, L):
    return (family * L + a) * L + b


@njit(cache=True, nogil=True)
def _pair(counts, c, family, a, b, L):
    if a <= b:
        counts[c, _code(family, a, b, L)] += 1
    else:
        counts[c, _code(family, b, a, L)] += 1


@njit(cache=True, nogil=True)
def _first_max(row, L):
    """The first (smallest) label with the largest positive count, or −1."""
    best, best_n = -1, 0
    for lab in range(L):
        if row[lab] > best_n:
            best, best_n = lab, row[lab]
    return best


@njit(cache=True, nogil=True)
def feature_counts(
    cptr,
    start,
    end,
    label,
    L,
    sid,
    occ_ptr,
    occ_pos,
    n_words,
    coord1,
    coord2,
    phrase,
    subphrase,
    majority,
    conjunction,
):
    n_cand = len(cptr) - 1
    N = sid.shape[1]
    counts = np.zeros((n_cand, N_FAMILIES * L * L), dtype=np.int64)
    inside = np.zeros(N, dtype=np.int64)
    covered = np.zeros(N + 1, dtype=np.int64)
    tok_lab = np.zeros((n_words, L), dtype=np.int64)
    for c in range(n_cand):
        e0, e1 = cptr[c], cptr[c + 1]
        E = e1 - e0
        if E == 0:
            continue
        a = start[e0:e1]
        b = end[e0:e1]
        lab = label[e0:e1]
        order, skey, group, gend = _groups(a, b, sid)
        if phrase:
            _phrase(counts, c, a, b, lab, L, order, skey, gend, occ_ptr, occ_pos, inside, covered)
        if subphrase or majority:
            sup = _containing(counts, c, a, b, lab, L, sid, order, skey, gend, subphrase)
            if majority:
                _majority(counts, c, a, b, lab, L, group, gend, sup)
                _token_majority(counts, c, a, b, lab, L, sid, tok_lab)
        if conjunction:
            _conjunction(counts, c, a, b, lab, L, coord1, coord2)
    return counts


@njit(cache=True, nogil=True)
def _groups(a, b, sid):
    """A candidate's entities grouped by string: the stable order by string id, the sorted
    ids, and per entity the first and one-past-last sorted positions of its group."""
    E = len(a)
    key = np.empty(E, dtype=np.int64)
    for k in range(E):
        key[k] = sid[b[k] - a[k], a[k]]
    order = np.argsort(key, kind="mergesort")  # stable: members of a group in entity order
    skey = key[order]
    group = np.empty(E, dtype=np.int64)  # entity -> first sorted position of its group
    gend = np.empty(E, dtype=np.int64)  # entity -> one past the group's last sorted position
    p = 0
    while p < E:
        q = p
        while q < E and skey[q] == skey[p]:
            q += 1
        for r in range(p, q):
            group[order[r]] = p
            gend[order[r]] = q
        p = q
    return order, skey, group, gend


@njit(cache=True, nogil=True)
def _phrase(counts, c, a, b, lab, L, order, skey, gend, occ_ptr, occ_pos, inside, covered):
    """PC: pairs with the same string, and the string's occurrences outside all entities."""
    E = len(a)
    N = len(inside)
    for i in range(N):
        inside[i] = 0
    for k in range(E):
        for i in range(a[k], b[k]):
            inside[i] = 1
    covered[0] = 0
    for i in range(N):
        covered[i + 1] = covered[i] + inside[i]
    p = 0
    while p < E:
        q = gend[order[p]]
        for x in range(p, q):
            for y in range(x + 1, q):
                lx, ly = lab[order[x]], lab[order[y]]
                _pair(counts, c, PC_PAIR, lx, ly, L)
                if lx == ly:
                    counts[c, _code(PC_SAME, 0, 0, L)] += 1
                else:
                    counts[c, _code(PC_DIFF, 0, 0, L)] += 1
        kid = skey[p]
        n = b[order[p]] - a[order[p]]
        free = 0
        for t in range(occ_ptr[kid], occ_ptr[kid + 1]):
            i = occ_pos[t]
            if covered[i + n] == covered[i]:
                free += 1
        if free:
            for x in range(p, q):
                counts[c, _code(PC_O, lab[order[x]], 0, L)] += free
        p = q


@njit(cache=True, nogil=True)
def _containing(counts, c, a, b, lab, L, sid, order, skey, gend, subphrase):
    """Entity e -> label counts of the entities whose string contains e's (other mentions);
    SP counted on the way when ``subphrase``."""
    E = len(a)
    sup = np.zeros((E, L), dtype=np.int64)
    seen = np.empty(MAX_SUBPHRASE * MAX_SUBPHRASE, dtype=np.int64)
    for f in range(E):
        n = b[f] - a[f]
        if n < 2 or n > MAX_SUBPHRASE:
            continue
        n_seen = 0
        for m in range(1, n):
            for i in range(n - m + 1):
                sub = sid[m, a[f] + i]
                if _seen(seen, n_seen, sub):
                    continue
                g = np.searchsorted(skey, sub)
                if g >= E or skey[g] != sub:
                    continue
                seen[n_seen] = sub
                n_seen += 1
                for r in range(g, gend[order[g]]):
                    e = order[r]
                    if a[f] <= a[e] and b[e] <= b[f]:
                        continue  # e lies inside f: the same mention
                    sup[e, lab[f]] += 1
                    if subphrase:
                        _subphrase(counts, c, lab[e], lab[f], L)
    return sup


@njit(cache=True, nogil=True)
def _seen(seen, n_seen, sub):
    """Whether ``sub`` is among the first ``n_seen`` entries of ``seen``."""
    for s in range(n_seen):  # noqa: SIM110 - no generators in compiled code
        if seen[s] == sub:
            return True
    return False


@njit(cache=True, nogil=True)
def _subphrase(counts, c, inner, outer, L):
    counts[c, _code(SP, inner, outer, L)] += 1
    if inner == outer:
        counts[c, _code(SP_SAME, 0, 0, L)] += 1
    else:
        counts[c, _code(SP_DIFF, 0, 0, L)] += 1


@njit(cache=True, nogil=True)
def _majority(counts, c, a, b, lab, L, group, gend, sup):
    """MJ (the other entities with the same string) and MJS (the entities containing it)."""
    E = len(a)
    gl = np.zeros((E, L), dtype=np.int64)  # group (first sorted position) -> label counts
    for k in range(E):
        gl[group[k], lab[k]] += 1
    row = np.empty(L, dtype=np.int64)
    for k in range(E):
        w0 = gend[k] - group[k]
        if w0 > 1:
            for t in range(L):
                row[t] = gl[group[k], t]
            row[lab[k]] -= 1
            counts[c, _code(MJ, lab[k], _first_max(row, L), L)] += 1
        m = _first_max(sup[k], L)
        if m >= 0:
            counts[c, _code(MJS, lab[k], m, L)] += 1


@njit(cache=True, nogil=True)
def _token_majority(counts, c, a, b, lab, L, sid, tok_lab):
    """MJT: per entity and distinct word, the majority label of the word's other entity
    tokens (``tok_lab``: zero on entry, cleared again on exit)."""
    E = len(a)
    row = np.empty(L, dtype=np.int64)
    for k in range(E):
        for i in range(a[k], b[k]):
            tok_lab[sid[1, i], lab[k]] += 1
    for k in range(E):
        for i in range(a[k], b[k]):
            w = sid[1, i]
            if _occurs(sid, w, a[k], i):
                continue  # counted at its first occurrence in the entity
            n_own = 0
            for j in range(i, b[k]):
                if sid[1, j] == w:
                    n_own += 1
            for t in range(L):
                row[t] = tok_lab[w, t]
            row[lab[k]] -= n_own
            m = _first_max(row, L)
            if m >= 0:
                counts[c, _code(MJT, lab[k], m, L)] += n_own
    for k in range(E):  # clear for the next candidate
        for i in range(a[k], b[k]):
            tok_lab[sid[1, i], lab[k]] = 0


@njit(cache=True, nogil=True)
def _occurs(sid, w, p, q):
    """Whether word id ``w`` occurs in positions [p, q)."""
    for j in range(p, q):  # noqa: SIM110 - no generators in compiled code
        if sid[1, j] == w:
            return True
    return False


@njit(cache=True, nogil=True)
def _conjunction(counts, c, a, b, lab, L, coord1, coord2):
    """CJ: consecutive entities joined by a coordination."""
    for k in range(len(a) - 1):
        gap = a[k + 1] - b[k]
        if (gap == 1 and coord1[b[k]]) or (gap == 2 and coord2[b[k]]):
            _pair(counts, c, CJ_PAIR, lab[k], lab[k + 1], L)
            if lab[k] == lab[k + 1]:
                counts[c, _code(CJ_SAME, 0, 0, L)] += 1
            else:
                counts[c, _code(CJ_DIFF, 0, 0, L)] += 1
