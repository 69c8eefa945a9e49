"""Kernel (dual-form) voted perceptron and the tagging kernel (nerstudio.rerank.kernel, .tagging_kernel).

The dynamic program is checked against a direct enumeration of fragments, the batched numpy
kernel against the dynamic program, and the voted / averaged predictions against a literal
replay of the dual perceptron that keeps every intermediate model.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import nerstudio.rerank.kernel as kmod
from nerstudio.errors import Cancelled
from nerstudio.nbest import NBestList
from nerstudio.rerank.data import RankingData
from nerstudio.rerank.kernel import KernelPerceptron
from nerstudio.rerank.tagging_kernel import (
    SequenceStore,
    candidate_self_kernels,
    normalised,
    shared_features,
    tagging_kernel,
    word_feature_values,
    word_shape,
)

WORDS = ["the", "The", "UN", "U.S.", "1996", "a1", "Smith", "smith", "-", "McDonald"]


# -- brute force ------------------------------------------------------------------------------


def fragment_counts(tags, words, word_features):
    """Every fragment of a tagged sequence with its number of occurrences.

    A fragment is a contiguous run of states; each state keeps its tag and either nothing of its
    word (None) or exactly one of the word's features (slot, value)."""
    counts: Counter = Counter()
    options = []
    for t, w in zip(tags, words):
        feats = [
            (k, v) for k, v in enumerate(word_feature_values(w, word_features)) if v is not None
        ]
        options.append([(t, None)] + [(t, f) for f in feats])
    n = len(tags)
    for start in range(n):
        for end in range(start + 1, n + 1):
            for frag in itertools.product(*options[start:end]):
                counts[frag] += 1
    return counts


def brute_kernel(x, y, lam, word_features):
    fx = fragment_counts(*x, word_features)
    fy = fragment_counts(*y, word_features)
    return sum(lam ** (len(f) - 1) * c * fy[f] for f, c in fx.items())


def seq_strategy(max_len):
    return st.integers(0, max_len).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 2), min_size=n, max_size=n),
            st.lists(st.sampled_from(WORDS), min_size=n, max_size=n),
        )
    )


# -- the kernel -------------------------------------------------------------------------------


def test_word_features_documented_set():
    assert word_shape("McDonald") == "XxXx"
    assert word_shape("1996") == "d"
    assert word_shape("U.S.") == "X.X."
    assert word_feature_values("Smith") == ("Smith",)
    assert word_feature_values("Smith", True) == ("Smith", "smith", "Xx", "cap", None)
    assert word_feature_values("a1", True) == ("a1", "a1", "xd", None, "digit")
    assert shared_features("Smith", "Smith") == 1
    assert shared_features("Smith", "smith") == 0
    assert shared_features("Smith", "smith", True) == 1  # lowercase form
    assert shared_features("Smith", "Jones", True) == 2  # shape and initial capital
    assert shared_features("Smith", "Smith", True) == 4  # all four it has
    assert shared_features("the", "a", True) == 1  # shape only: no capital, no digit is not shared


def test_kernel_by_hand():
    # x = y = one state: fragments (tag) and (tag, word): 2; plain kernel
    assert tagging_kernel([0], ["a"], [0], ["a"], 0.5) == 2.0
    assert tagging_kernel([0], ["a"], [1], ["a"], 0.5) == 0.0
    # two equal states: singles 2 + 2, pair 2·2·λ
    assert tagging_kernel([0, 0], ["a", "b"], [0, 0], ["a", "b"], 0.5) == 2 + 2 + 4 * 0.5 + 1 + 1
    # ^ plus the cross singles: x0 vs y1 and x1 vs y0 share the tag only (c = 1 each)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(seq_strategy(4), seq_strategy(4), st.sampled_from([0.25, 0.5, 0.8, 1.0]), st.booleans())
def test_dp_equals_fragment_enumeration(x, y, lam, wf):
    if wf:  # keep the enumeration small: at most 6^3 patterns per run
        x = (x[0][:3], x[1][:3])
    assert tagging_kernel(*x, *y, lam, wf) == pytest.approx(
        brute_kernel(x, y, lam, wf), rel=1e-12, abs=1e-12
    )


@pytest.mark.parametrize("wf", [False, True])
def test_kernel_symmetric_and_positive_semidefinite(wf):
    rng = np.random.default_rng(3)
    seqs = [
        (rng.integers(0, 3, n).tolist(), [WORDS[i] for i in rng.integers(0, len(WORDS), n)])
        for n in rng.integers(0, 7, 12)
    ]
    G = np.array([[tagging_kernel(*a, *b, 0.7, wf) for b in seqs] for a in seqs])
    np.testing.assert_allclose(G, G.T, rtol=1e-12)
    eig = np.linalg.eigvalsh(G)
    assert eig.min() >= -1e-9 * max(1.0, eig.max())
    assert np.all(np.diag(G)[[len(s[0]) > 0 for s in seqs]] > 0)


@pytest.mark.slow
@pytest.mark.parametrize("wf", [False, True])
@pytest.mark.parametrize("chunk", [1, 16, 1 << 14])
def test_batched_kernel_equals_reference(wf, chunk):
    rng = np.random.default_rng(7 + chunk)
    store = SequenceStore(wf, chunk=chunk)
    stored = []
    for n in rng.integers(0, 8, 25):
        t = rng.integers(0, 4, n)
        w = [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
        store.add(w, t)
        stored.append((t.tolist(), w))
    for trial in range(12):
        n = int(rng.integers(0, 9))
        words = [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
        if trial % 3 == 0 and n:
            words[0] = "never-stored"  # unknown word: matches only on features, if any
        cands = rng.integers(0, 4, (5, n))
        cands[3] = cands[1]  # a repeated candidate and shared suffixes
        if n > 2:
            cands[4, 2:] = cands[0, 2:]
        first, stop = (0, None) if trial % 2 else (3, 20)
        got = store.kernel(words, cands, 0.6, first, stop)
        want = np.array(
            [
                [tagging_kernel(c.tolist(), words, t, w, 0.6, wf) for t, w in stored[first:stop]]
                for c in cands
            ]
        ).reshape(5, -1)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("wf", [False, True])
def test_threaded_kernel_identical_to_serial_and_subsets(wf):
    """Stored sequences split between numba threads give exactly the serial values, and a kernel
    over an arbitrary subset of stored sequences (``index``) equals those columns of the whole."""
    rng = np.random.default_rng(31 + wf)
    serial, threaded = SequenceStore(wf), SequenceStore(wf, chunk=40, threads=3)
    for n in rng.integers(0, 12, 60):
        t = rng.integers(0, 4, n)
        w = [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
        serial.add(w, t)
        threaded.add(w, t)
    for _ in range(6):
        n = int(rng.integers(1, 10))
        words = [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
        cands = rng.integers(0, 4, (6, n))
        whole = serial.kernel(words, cands, 0.7)
        assert np.array_equal(threaded.kernel(words, cands, 0.7), whole)
        assert np.array_equal(threaded.kernel(words, cands, 0.7, 5, 50), whole[:, 5:50])
        pick = rng.permutation(len(serial))[:17]
        assert np.array_equal(serial.kernel(words, cands, 0.7, index=pick), whole[:, pick])
        assert np.array_equal(threaded.kernel(words, cands, 0.7, index=pick), whole[:, pick])


@pytest.mark.parametrize("wf", [False, True])
def test_normalised_kernel_equals_fragment_enumeration(wf):
    """The normalised kernel (stored norms, candidates' norms, the division) against fragment
    counting by brute force: K(x, y) / sqrt(K(x, x) K(y, y)), bounded by 1, 1 on the diagonal,
    also with word features and λ = 1 where the raw counts grow fastest."""
    rng = np.random.default_rng(21 + wf)
    store = SequenceStore(wf)
    stored = []
    for n in rng.integers(0, 5, 10):
        t = rng.integers(0, 3, n)
        w = [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
        store.add(w, t)
        stored.append((t.tolist(), w))
    lam = 1.0
    for _ in range(5):
        n = int(rng.integers(1, 5))
        words = [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
        cands = rng.integers(0, 3, (4, n))
        qn = candidate_self_kernels(words, cands, lam, wf)
        np.testing.assert_allclose(
            qn,
            [brute_kernel((c.tolist(), words), (c.tolist(), words), lam, wf) for c in cands],
            rtol=1e-12,
        )
        sn = store.self_kernels(lam)
        np.testing.assert_allclose(sn, [brute_kernel(x, x, lam, wf) for x in stored], rtol=1e-12)
        got = normalised(store.kernel(words, cands, lam), qn, sn)
        want = np.zeros_like(got)
        for j, c in enumerate(cands):
            for k, y in enumerate(stored):
                d = np.sqrt(
                    brute_kernel((c.tolist(), words), (c.tolist(), words), lam, wf)
                    * brute_kernel(y, y, lam, wf)
                )
                want[j, k] = brute_kernel((c.tolist(), words), y, lam, wf) / d if d > 0 else 0.0
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
        assert got.max() <= 1 + 1e-12
    # a stored copy of a candidate is exactly 1 away from itself
    store.add(words, cands[0])
    k = normalised(
        store.kernel(words, cands[:1], lam, len(store) - 1),
        qn[:1],
        store.self_kernels(lam, len(store) - 1),
    )
    assert k[0, 0] == pytest.approx(1.0)
    store.truncate(3)
    assert len(store.self_kernels(lam)) == 3


def test_batched_kernel_long_query_and_growth():
    # a query longer than the store's initial margin, stores that grow while being queried
    rng = np.random.default_rng(11)
    store = SequenceStore(chunk=8)
    stored = []
    words = [WORDS[i] for i in rng.integers(0, len(WORDS), 90)]
    cands = rng.integers(0, 2, (3, 90))
    for _ in range(6):
        n = int(rng.integers(1, 40))
        t, w = rng.integers(0, 2, n), [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
        store.add(w, t)
        stored.append((t.tolist(), w))
        got = store.kernel(words, cands, 0.5)
        want = [
            [tagging_kernel(c.tolist(), words, tt, ww, 0.5) for tt, ww in stored] for c in cands
        ]
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_store_truncate_and_validation():
    store = SequenceStore()
    store.add(["a", "b"], [0, 1])
    store.add(["c"], [1])
    before = store.kernel(["a", "b"], np.array([[0, 1]]), 0.5)
    store.add(["a"], [0])
    store.truncate(2)
    assert len(store) == 2
    assert np.array_equal(store.kernel(["a", "b"], np.array([[0, 1]]), 0.5), before)
    with pytest.raises(ValueError):
        store.add(["a"], [0, 1])
    with pytest.raises(ValueError):
        tagging_kernel([0], ["a", "b"], [0], ["a"])


# -- ranking problems -------------------------------------------------------------------------


def make_problem(seed, n_sent=12, n_cand=4, max_len=5, separable=False):
    """Random sentences over a small vocabulary; candidate 0..n-1 are distinct tag sequences, one
    of them the gold one. L(x) values are multiples of 1/4 so that every score is exact in
    floating point (λ = 1/2, c ∈ {1, 2}), which makes ties behave identically everywhere.

    ``separable``: every word has one fixed gold tag, so single-state fragments (tag, word)
    separate gold from the rest."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(8)]
    word_tag = {w: int(rng.integers(0, 3)) for w in vocab}
    words, cands, lps, oracle, quality = [], [], [], [], []
    for _ in range(n_sent):
        n = int(rng.integers(2, max_len + 1))
        w = [vocab[i] for i in rng.integers(0, len(vocab), n)]
        gold = np.array([word_tag[x] for x in w]) if separable else rng.integers(0, 3, n)
        seen = {tuple(gold)}
        cs = [gold]
        while len(cs) < n_cand:
            c = gold.copy()
            k = rng.integers(1, n + 1)
            pos = rng.choice(n, size=k, replace=False)
            c[pos] = rng.integers(0, 3, k)
            if tuple(c) not in seen:
                seen.add(tuple(c))
                cs.append(c)
        order = rng.permutation(n_cand)
        cs = np.array([cs[j] for j in order], dtype=np.int16)
        words.append(tuple(w))
        cands.append(cs)
        lps.append(np.sort(rng.integers(-20, 0, n_cand) / 4.0)[::-1].copy())
        q = (cs == gold[None, :]).sum(axis=1)
        quality.append(q)
        oracle.append(int(np.argmax(q)))
    nb = NBestList(["N", "S-A", "C-A"], words, cands, lps)
    sizes = np.array([len(c) for c in cands])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    q = np.concatenate(quality).astype(np.int32)
    L = np.concatenate(lps)
    lengths = np.repeat([len(w) for w in words], sizes).astype(np.int32)
    return RankingData(
        sp.csr_matrix((len(L), 0), dtype=np.int8),
        L,
        offsets,
        np.array(oracle),
        q,
        lengths,
        np.array([len(w) for w in words], dtype=np.int32),
        q.astype(float),
        nb,
    )


def literal_kernel(lam, normalise=False, gamma=0.0, global_features=False):
    """K'(a, b) of two (tags, words, L, h) tuples straight from the definitions: the plain DP,
    divided by sqrt(K(a, a) K(b, b)) when normalised, plus the cosine of the global-feature
    vectors h when asked, plus γ·L(a)·L(b)."""

    def K(a, b):
        k = tagging_kernel(a[0], a[1], b[0], b[1], lam)
        if normalise:
            d = np.sqrt(
                tagging_kernel(a[0], a[1], a[0], a[1], lam)
                * tagging_kernel(b[0], b[1], b[0], b[1], lam)
            )
            k = k / d if d > 0 else 0.0
        if global_features:
            d = np.linalg.norm(a[3]) * np.linalg.norm(b[3])
            k += float(a[3] @ b[3]) / d if d > 0 else 0.0
        return k + gamma * a[2] * b[2]

    return K


def triple(data, s, j):
    """(tags, words, L, h) of candidate j of sentence s."""
    row = int(data.offsets[s]) + j
    return (
        data.nbest.candidates[s][j].tolist(),
        data.nbest.words[s],
        float(data.L[row]),
        data.X[row].toarray().ravel().astype(float),
    )


def with_features(data, seed, n_features=12):
    """The problem with random 0/1 global-feature vectors (some candidates have none)."""
    import dataclasses

    rng = np.random.default_rng(seed)
    X = (rng.random((data.n_candidates, n_features)) < 0.3).astype(np.int8)
    X[::7] = 0
    return dataclasses.replace(data, X=sp.csr_matrix(X))


def literal_dual_perceptron(train, base, K, epochs):
    """Figure 1(b) with every intermediate model kept: returns the list of mistakes (sentence,
    gold row, predicted row) and the survival count of each model."""
    nb = train.nbest
    mistakes, counts = [], [0]
    idx = np.flatnonzero(train.informative())

    def score(i, j):
        x = triple(train, i, j)
        s = base * x[2]
        for m, g, p in mistakes:
            s += K(triple(train, m, g), x) - K(triple(train, m, p), x)
        return s

    for _ in range(epochs):
        for i in idx.tolist():
            sc = [score(i, j) for j in range(nb.n_candidates(i))]
            top = int(np.argmax(sc))
            if top != int(train.oracle[i]):
                mistakes.append((i, int(train.oracle[i]), top))
                counts.append(0)
            counts[-1] += 1
    return mistakes, counts


def literal_predictions(train, test, mistakes, counts, base, K):
    """Votes (Figure 4) and survival-weighted average scores, model by model from scratch."""
    votes = np.zeros(test.n_candidates)
    avg = np.zeros(test.n_candidates)
    for t in range(len(counts)):
        scores = base * test.L.copy()
        for r in range(test.n_candidates):
            s = int(np.searchsorted(test.offsets, r, side="right") - 1)
            x = triple(test, s, r - test.offsets[s])
            for m, g, p in mistakes[:t]:
                scores[r] += K(triple(train, m, g), x) - K(triple(train, m, p), x)
        top = test.argmax(scores)
        votes[test.offsets[:-1] + top] += counts[t]
        avg += counts[t] * scores
    return votes, avg / sum(counts), scores


@pytest.mark.parametrize(
    "normalise,learn", [(False, False), (True, False), (True, True), (False, True)]
)
def test_voted_prediction_equals_literal_figure4_loop(normalise, learn):
    train, test = make_problem(1, n_sent=10), make_problem(2, n_sent=6)
    beta, lam, epochs = (0.5 if normalise else 1.0), 0.5, 2
    K = literal_kernel(lam, normalise, beta if learn else 0.0)
    base = 0.0 if learn else beta
    mistakes, counts = literal_dual_perceptron(train, base, K, epochs)
    assert 3 <= len(mistakes) < 20  # the problem is neither trivial nor hopeless
    model = KernelPerceptron(
        lam=lam, beta=beta, epochs=epochs, shuffle=False, normalise=normalise, learn_beta=learn
    ).fit(train)
    assert model.n_mistakes_ == len(mistakes)
    assert model.counts_.tolist() == counts
    for k, (m, g, p) in enumerate(mistakes):
        assert np.array_equal(model.store_.tags_of(2 * k), train.nbest.candidates[m][g])
        assert np.array_equal(model.store_.tags_of(2 * k + 1), train.nbest.candidates[m][p])
    votes, avg, last = literal_predictions(train, test, mistakes, counts, base, K)
    got = model.decision_function(test)
    if not normalise and not learn:
        assert np.array_equal(got, votes)  # every quantity is a dyadic rational: exact
    else:
        np.testing.assert_allclose(got, votes)
    assert np.array_equal(model.predict(test), test.argmax(votes))
    model.mode = "average"
    np.testing.assert_allclose(model.decision_function(test), avg, rtol=1e-12, atol=1e-12)
    model.mode = "last"
    np.testing.assert_allclose(model.decision_function(test), last, rtol=1e-12, atol=1e-12)


def test_dev_curve_uses_incremental_voting_and_keeps_best_epoch():
    train, dev = make_problem(4, n_sent=14), make_problem(5, n_sent=8)
    seen = []
    model = KernelPerceptron(beta=1.0, epochs=4, shuffle=True, seed=3).fit(
        train, dev, callback=seen.append
    )
    assert [h.step for h in seen] == [1, 2, 3, 4]
    assert all(h.mistakes is not None and h.dev_f1 is not None for h in seen)
    best = max(seen, key=lambda h: h.dev_f1)
    assert model.best_step_ == best.step
    # the kept model is the best epoch's, and its predictions give the recorded F
    assert dev.prf(model.predict(dev))[2] == pytest.approx(best.dev_f1)
    assert model.n_mistakes_ == sum(h.mistakes for h in seen[: best.step])


def test_separable_problem_reaches_zero_training_mistakes():
    train = make_problem(6, n_sent=15, separable=True)
    model = KernelPerceptron(lam=0.5, beta=0.0, epochs=25, shuffle=True, seed=1).fit(train)
    mistakes = [h.mistakes for h in model.history_]
    assert mistakes[0] > 0
    assert mistakes[-1] == 0
    assert np.array_equal(model.predict(train), train.oracle)
    model.mode = "last"
    assert np.array_equal(model.predict(train), train.oracle)


def test_cancel_raises(monkeypatch):
    train = make_problem(7, n_sent=10)
    with pytest.raises(Cancelled):
        KernelPerceptron(beta=1.0).fit(train, should_cancel=lambda: True)
    calls = []

    def later():  # turns true a little while into training
        calls.append(1)
        return len(calls) > 3

    monkeypatch.setattr(kmod, "CANCEL_EVERY", 0.0)  # look at the flag on every tick
    with pytest.raises(Cancelled):
        KernelPerceptron(beta=1.0, epochs=3).fit(
            train, make_problem(8, n_sent=4), should_cancel=later
        )
    assert len(calls) == 4


@pytest.mark.parametrize("mode", ["vote", "average"])
@pytest.mark.parametrize("wf", [False, True])
def test_state_round_trip(tmp_path, mode, wf):
    train, test = make_problem(9, n_sent=12), make_problem(10, n_sent=6)
    model = KernelPerceptron(lam=0.7, beta=0.5, epochs=2, word_features=wf, mode=mode).fit(train)
    arrays = model.state()
    assert all(isinstance(a, np.ndarray) and a.dtype != object for a in arrays.values())
    np.savez(tmp_path / "k.npz", **arrays)
    with np.load(tmp_path / "k.npz", allow_pickle=False) as z:
        loaded = {k: z[k] for k in z.files}
    fresh = KernelPerceptron(mode=mode)  # λ and word features come back from the state
    fresh.set_state(loaded, 0)
    assert fresh.lam == 0.7 and fresh.word_features == wf
    assert np.array_equal(fresh.decision_function(test), model.decision_function(test))
    assert fresh.explain_row(test, 3) == model.explain_row(test, 3)
    loaded["seq_lengths"] = loaded["seq_lengths"][:-1]
    with pytest.raises(ValueError):
        KernelPerceptron().set_state(loaded, 0)


@pytest.mark.parametrize("mode", ["average", "last"])
def test_explain_row_terms_add_up(mode):
    train, test = make_problem(11, n_sent=12), make_problem(12, n_sent=5)
    model = KernelPerceptron(beta=1.0, epochs=2, mode=mode).fit(train)
    scores = model.decision_function(test)
    for row in (0, 5, test.n_candidates - 1):
        terms = model.explain_row(test, row, top=3)
        assert terms[0][0].startswith("β·L(x)")
        assert any(d.startswith("mistake on sentence ") and "K(gold)" in d for d, _ in terms[1:])
        assert len([d for d, _ in terms if d.startswith("mistake")]) <= 3
        assert sum(v for _, v in terms) == pytest.approx(scores[row], abs=1e-9)


def test_beta_tuned_on_whole_dev_grid_not_at_its_edge(monkeypatch):
    train, dev = make_problem(13, n_sent=12), make_problem(14, n_sent=6)
    seen = []
    tuned = KernelPerceptron(epochs=2).fit(train, dev, callback=seen.append)
    grid = [b for b, _ in tuned.beta_grid_]
    assert tuned.beta_ in grid
    assert np.allclose(np.diff(np.log2(grid)), 1.0)  # a geometric grid, factor 2, no holes
    best_f = max(f for _, f in tuned.beta_grid_)
    assert tuned.beta_ == min(b for b, f in tuned.beta_grid_ if f == best_f)
    # every run is judged on the whole dev set: the kept run's best epoch gives its grid F
    assert dev.prf(tuned.predict(dev))[2] == pytest.approx(best_f)
    if tuned.beta_ in (grid[0], grid[-1]):  # only when the widening limit stopped it
        assert tuned.beta_at_edge_ and len(grid) == len(kmod.BETA_GRID) + kmod.BETA_LIMIT
    # the kept run's curve
    assert [h.step for h in seen] == [h.step for h in tuned.history_] == [1, 2]
    # a grid whose best value sits at its edge is widened until it no longer does
    calls = []
    real = KernelPerceptron._train

    def fake(self, train_, idx, dev_, beta, epochs, callback, tick):
        calls.append(beta)
        real(self, train_, idx, dev_, beta, epochs, callback, tick)
        self.history_[-1].dev_f1 = -abs(np.log2(beta / (8 * self.beta_scale_)))  # peak at 8 units

    monkeypatch.setattr(KernelPerceptron, "_train", fake)
    m = KernelPerceptron(epochs=1).fit(train, dev)
    assert m.beta_ == pytest.approx(8 * m.beta_scale_) and not m.beta_at_edge_
    assert sorted(round(b / m.beta_scale_, 6) for b in calls) == [0.125, 0.25, 0.5, 1, 2, 4, 8, 16]
    plain = KernelPerceptron(epochs=1).fit(train)
    assert plain.beta_ > 0 and plain.beta_scale_ > 0


def test_bad_settings_and_data():
    train = make_problem(15, n_sent=4)
    for bad in (
        {"lam": 0.0},
        {"lam": 1.5},
        {"epochs": 0},
        {"mode": "median"},
        {"max_sentences": 0},
    ):
        with pytest.raises(ValueError):
            KernelPerceptron(**bad).fit(train)
    no_words = RankingData(
        train.X,
        train.L,
        train.offsets,
        train.oracle,
        train.correct,
        train.proposed,
        train.n_gold,
        train.quality,
        None,
    )
    with pytest.raises(ValueError, match="N-best"):
        KernelPerceptron().fit(no_words)


def test_max_sentences_limits_training():
    train = make_problem(16, n_sent=20)
    model = KernelPerceptron(beta=1.0, max_sentences=5, epochs=1).fit(train)
    assert int(model.counts_.sum()) == 5


def test_beta_search_with_the_kernel_cache_equals_separate_runs():
    """The β search keeps kernel values across its runs (KernelCache); each run's result must be
    exactly what a run of its own β computes without the cache: the same mistakes, counts, dev F,
    and the same scores on other data."""
    train, dev, test = (
        make_problem(17, n_sent=16),
        make_problem(18, n_sent=8),
        make_problem(19, n_sent=6),
    )
    for wf in (False, True):
        tuned = KernelPerceptron(epochs=2, word_features=wf, seed=2).fit(train, dev)
        assert tuned.kernel_pairs_["reused"] > 0  # the runs did share stored sequences
        for beta, f in tuned.beta_grid_:
            alone = KernelPerceptron(epochs=2, word_features=wf, seed=2, beta=beta).fit(train, dev)
            assert max(h.dev_f1 for h in alone.history_) == f
            if beta == tuned.beta_:
                assert alone.counts_.tolist() == tuned.counts_.tolist()
                assert alone.mistake_ids_ == tuned.mistake_ids_
                assert np.array_equal(alone.decision_function(test), tuned.decision_function(test))
                assert np.array_equal(alone.predict(dev), tuned.predict(dev))


@pytest.mark.parametrize("epochs", [1, 3])
def test_dev_scores_of_fit_are_those_of_the_kept_model(epochs):
    """predict(dev) right after fit reuses the kept epoch's dev scores: they are the scores the
    model itself gives (a copy restored from its state, without that memory, agrees)."""
    train, dev = make_problem(20, n_sent=14), make_problem(21, n_sent=8)
    model = KernelPerceptron(beta=0.5, epochs=epochs, seed=1).fit(train, dev)
    fresh = KernelPerceptron()
    fresh.set_state(model.state(), 0)
    np.testing.assert_allclose(
        model.decision_function(dev), fresh.decision_function(dev), rtol=1e-12, atol=1e-12
    )
    assert np.array_equal(model.predict(dev), fresh.predict(dev))
    assert dev.prf(model.predict(dev))[2] == max(h.dev_f1 for h in model.history_)
    model.mode = "average"  # another prediction mode is computed, not taken from the memory
    fresh.mode = "average"
    np.testing.assert_allclose(
        model.decision_function(dev), fresh.decision_function(dev), rtol=1e-12, atol=1e-12
    )


@pytest.mark.slow
@pytest.mark.parametrize("learn,block", [(True, 8192), (False, 8192), (True, 5)])
def test_global_feature_kernel_equals_literal_figure4_loop(learn, block, monkeypatch):
    """With ``global_features`` the kernel is the normalised tagging kernel plus the cosine of the
    global-feature vectors: mistakes, counts, votes and averaged scores equal the literal dual
    perceptron with that kernel written out; the model survives its file."""
    # 5: the feature part in many small products
    monkeypatch.setattr(kmod._Tracker, "BLOCK_ROWS", block)
    train = with_features(make_problem(22, n_sent=10), 1)
    test = with_features(make_problem(23, n_sent=6), 2)
    beta, lam, epochs = 0.5, 0.5, 2
    K = literal_kernel(lam, True, beta if learn else 0.0, global_features=True)
    base = 0.0 if learn else beta
    mistakes, counts = literal_dual_perceptron(train, base, K, epochs)
    assert len(mistakes) >= 3
    model = KernelPerceptron(
        lam=lam, beta=beta, epochs=epochs, shuffle=False, learn_beta=learn, global_features=True
    ).fit(train)
    assert model.n_mistakes_ == len(mistakes) and model.counts_.tolist() == counts
    votes, avg, _last = literal_predictions(train, test, mistakes, counts, base, K)
    np.testing.assert_allclose(model.decision_function(test), votes)
    assert np.array_equal(model.predict(test), test.argmax(votes))
    model.mode = "average"
    np.testing.assert_allclose(model.decision_function(test), avg, rtol=1e-12, atol=1e-12)
    terms = model.explain_row(test, 2, top=2)
    assert sum(v for _, v in terms) == pytest.approx(model.decision_function(test)[2], abs=1e-9)
    # the tagging kernel alone gives other mistakes: the feature part is really used
    plain = KernelPerceptron(
        lam=lam, beta=beta, epochs=epochs, shuffle=False, learn_beta=learn
    ).fit(train)
    assert (plain.counts_.tolist(), plain.mistake_ids_) != (
        model.counts_.tolist(),
        model.mistake_ids_,
    ) or not np.allclose(plain.decision_function(test), model.decision_function(test))
    fresh = KernelPerceptron(mode="average")
    fresh.set_state(model.state(), train.n_features)
    assert fresh.global_features
    assert np.array_equal(fresh.decision_function(test), model.decision_function(test))
    bad = model.state()
    bad["seq_feat_idx"] = bad["seq_feat_idx"] + train.n_features
    with pytest.raises(ValueError, match="global-feature"):
        KernelPerceptron().set_state(bad, train.n_features)
