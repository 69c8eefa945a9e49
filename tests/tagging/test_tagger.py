"""The maximum-entropy tagger: gradient, beam search against brute force, persistence, jackknife."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from helpers.tiny_corpus import _training_parts, conll_like, tiny_corpus, tiny_sentences

from nerstudio.corpus.model import Sentence
from nerstudio.errors import Cancelled, FormatError
from nerstudio.nbest import NBestList
from nerstudio.runtime.pipeline import document_folds, jackknife
from nerstudio.tagging.maxent import MaxEntTagger
from nerstudio.text.shapes import build_lexicon, collapsed_shape, shape


@pytest.fixture(scope="module")
def tagger():
    return MaxEntTagger(task="typed", features="paper", cutoff=1, l2=0.5, max_iter=60).fit(
        tiny_sentences()
    )


def test_shapes_and_lexicon():
    assert shape("G.M.") == "A.A." and shape("Animal") == "Aaaaaa"
    assert collapsed_shape("Animal") == "Aa" and collapsed_shape("G.M.") == "A.A."
    assert collapsed_shape("1996-08-30") == "0-0-0"
    lex = build_lexicon(
        [["The", "animal", "ran"], ["An", "animal", "Animal", "animal"], ["x", "Paris", "Paris"]]
    )
    assert "animal" in lex and "paris" not in lex


def test_fast_shapes_equal_the_helpers():
    from nerstudio.text.shapes import fast_collapsed_shape, fast_shape

    words = [
        "G.M.",
        "Animal",
        "1996-08-30",
        "",
        "ÄÖü",
        "ǅungla",
        "١٢٣",
        "Ⅻ",
        "ß",
        "İstanbul",
        "...",
        "A.B.",
        "a1b2",
        "aaa",
        "\u00a0\u00a0",
        "ｶﾀｶﾅ",
        "²³",
        "x\ny",
        "AAbb--..",
        "O'Neill",
        "e-mail",
        "$%^&",
    ]
    for w in words:
        assert fast_shape(w) == shape(w) and fast_collapsed_shape(w) == collapsed_shape(w), w


@pytest.mark.slow
def test_gradient_matches_finite_differences():
    m = MaxEntTagger(task="typed", features="paper", cutoff=1, l2=0.7, max_iter=1, dtype=np.float64)
    sents = tiny_sentences(1)
    m.fit(sents)  # builds features and mask
    # rebuild the training design exactly as fit does
    Xs = m.extractor_.transform(sents)
    y = m._gold_ids(sents)
    lens = np.array([len(s.words) for s in sents])
    p1, pair = m._dynamic_ids(y, lens)
    X = m._design(Xs, p1, pair).astype(np.float64)
    XT = X.T.tocsr()
    rng = np.random.default_rng(0)
    theta = rng.normal(scale=0.3, size=int(m.mask_.sum()))
    _, grad = m._loss_grad(X, XT, y, m.mask_, theta)
    eps = 1e-6
    for k in rng.choice(len(theta), size=25, replace=False):
        e = np.zeros_like(theta)
        e[k] = eps
        fp, _ = m._loss_grad(X, XT, y, m.mask_, theta + e)
        fm, _ = m._loss_grad(X, XT, y, m.mask_, theta - e)
        assert grad[k] == pytest.approx((fp - fm) / (2 * eps), rel=1e-4, abs=1e-6)


@pytest.mark.parametrize(
    "features,cutoff",
    [
        ("paper", 1),
        ("paper", 2),
        ("conll", 1),
        ("conll", 3),
        ("conll+rich", 1),
        ("conll+gaz:persons/loc_country+rich", 2),
    ],
)
def test_factored_design_equals_plain_design(features, cutoff):
    m = MaxEntTagger(task="typed", features=features, cutoff=cutoff)
    design, _y, mask, X = _training_parts(m, conll_like())
    assert design.n_keys > 0 and design.n_params == mask.shape[0] == X.shape[1]
    Xf = design.to_csr()
    X.sort_indices()
    assert (Xf != X).nnz == 0
    assert len(design.indices) + len(design.bind) < X.nnz  # the point of factoring


@pytest.mark.parametrize("features", ["paper", "conll"])
def test_compiled_objective_matches_reference(features):
    """The kernels' loss, gradient, g·d and max |g| equal the numpy/scipy formulation (which the
    finite-difference test checks), whatever the number of threads."""
    from nerstudio.tagging.maxent_training import Objective

    m = MaxEntTagger(task="typed", features=features, cutoff=2, l2=0.7, dtype=np.float64)
    design, y, mask, X = _training_parts(m, conll_like())
    if features == "paper":
        assert not mask.all()  # pair cut-off: some rows only partly free
    rng = np.random.default_rng(1)
    x = np.where(mask.ravel(), rng.normal(scale=0.3, size=mask.size), 0.0)
    d = np.where(mask.ravel(), rng.normal(scale=0.3, size=mask.size), 0.0)
    step = 0.37
    f_ref, g_ref = m._loss_grad(X, X.T.tocsr(), y, mask, (x + step * d)[mask.ravel()])
    results = []
    for threads in (1, 3):
        obj = Objective(design, y, mask, m.l2, np.float64, threads=threads)
        try:
            g = np.empty(mask.size)
            f, gd, gmax = obj(x, d, step, g)
        finally:
            obj.close()
        assert f == pytest.approx(f_ref, rel=1e-12)
        np.testing.assert_allclose(g[mask.ravel()], g_ref, rtol=1e-10, atol=1e-10)
        assert np.all(g[~mask.ravel()] == 0)
        assert gd == pytest.approx(float(g @ d), rel=1e-10)
        assert gmax == pytest.approx(float(np.abs(g).max()), rel=1e-12)
        results.append((f, g))
    assert results[0][0] == results[1][0] and np.array_equal(results[0][1], results[1][1])


def test_rare_predicates_are_never_built():
    """``fit_ids(min_count=c)`` keeps exactly the predicates seen at least c times, in the same
    order, also when several words give one string (``lw``) or a word contains the separator."""
    from collections import Counter

    from nerstudio.tagging.features import FeatureExtractor

    sents = conll_like(2) + [
        Sentence(["The", "the", "THE", "a|b", "c", "a", "b|c"], []),
        Sentence(["a|b", "c", "a", "b|c"], []),
        Sentence(["the", "a|b", "c", "a"], []),
    ]
    full = FeatureExtractor("conll")
    m1, g1 = full.fit_ids(sents)
    names1 = np.array(full.names(), dtype=object)
    counts = Counter(names1[m1].ravel().tolist())
    for c in (2, 3):
        fe = FeatureExtractor("conll")
        m2, g2 = fe.fit_ids(sents, min_count=c)
        names2 = np.array(fe.names(), dtype=object)
        frequent = np.vectorize(lambda x: counts[x] >= c)(names1[m1])
        assert np.array_equal(m2 >= 0, frequent)
        assert np.array_equal(names2[m2[frequent]], names1[m1[frequent]])
        assert fe.names() == [x for x in full.names() if counts[x] >= c]  # same relative order
        assert [cols for cols, _ in g2] == [cols for cols, _ in g1]


def test_vectorised_exponential():
    from nerstudio.tagging import _maxent_compiled as mc

    v = np.concatenate(
        [-np.linspace(0, 40, 4001), -np.random.default_rng(0).exponential(5, 1000), [-41.0, -1e6]]
    )
    out = np.empty_like(v)
    mc._exp_nonpositive(v, out, len(v))
    ref = np.exp(np.maximum(v, -40.0))
    assert np.max(np.abs(out - ref) / ref) < 1e-13
    assert out[0] == 1.0


def test_transpose_kernel_matches_scipy():
    import scipy.sparse as sparse

    from nerstudio.tagging import _maxent_compiled as mc

    A = sparse.random(40, 23, density=0.2, format="csr", random_state=3)
    A.sort_indices()
    tptr, tind = mc.transpose(A.indptr.astype(np.int64), A.indices.astype(np.int32), 23)
    AT = A.T.tocsr()
    AT.sort_indices()
    assert np.array_equal(tptr, AT.indptr) and np.array_equal(tind, AT.indices)


def _np_fun(f_and_g):
    """Adapt f(x) -> (value, gradient) to the ``lbfgs`` interface."""

    def fun(x, d, step, g):
        f, grad = f_and_g(x + step * d)
        g[:] = grad
        return f, float(grad @ d), float(np.abs(grad).max())

    return fun


@pytest.mark.slow
def test_lbfgs_reaches_scipys_optimum():
    """Our L-BFGS against scipy's L-BFGS-B on an L2-penalised logistic regression and on the
    tagger's own objective: same minimum, same minimiser."""
    import scipy.optimize

    from nerstudio.tagging.maxent_training import Objective, lbfgs

    rng = np.random.default_rng(0)
    A = rng.normal(size=(80, 15))
    b = (rng.random(80) < 0.5).astype(float)

    def logreg(w):
        z = A @ w
        p = 1 / (1 + np.exp(-z))
        return float(np.logaddexp(0, z).sum() - b @ z + 0.05 * w @ w), A.T @ (p - b) + 0.1 * w

    ref = scipy.optimize.minimize(
        logreg,
        np.zeros(15),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 1000, "ftol": 1e-15, "gtol": 1e-10},
    )
    ours = lbfgs(_np_fun(logreg), 15, max_iter=1000, ftol=0.0, gtol=1e-8)
    # what matters is the optimum, not which stopping test fired first: with ftol=0 the run may
    # stop on "no decrease at all" once f is flat to the last bit, which is the same point
    assert ours.reason in ("gtol", "ftol")
    assert np.abs(logreg(ours.x)[1]).max() <= 1e-6
    assert ours.f == pytest.approx(ref.fun, rel=1e-12)
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-7)

    m = MaxEntTagger(task="typed", features="conll", cutoff=2, l2=0.5, dtype=np.float64)
    design, y, mask, X = _training_parts(m, conll_like(2))
    XT = X.T.tocsr()
    ref = scipy.optimize.minimize(
        lambda th: m._loss_grad(X, XT, y, mask, th),
        np.zeros(int(mask.sum())),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-8},
    )
    obj = Objective(design, y, mask, m.l2, np.float64, threads=2)
    try:
        ours = lbfgs(obj, mask.size, max_iter=2000, ftol=1e-15, gtol=1e-8)
    finally:
        obj.close()
    assert ours.f == pytest.approx(ref.fun, rel=1e-10)
    np.testing.assert_allclose(ours.x[mask.ravel()], ref.x, atol=1e-5)


def test_lbfgs_on_a_nonconvex_function():
    """Rosenbrock: curvature pairs may be skipped, the line search backtracks; still converges."""
    from nerstudio.tagging.maxent_training import lbfgs

    def rosen(v):
        x, yv = v[:-1], v[1:]
        f = float((100 * (yv - x * x) ** 2 + (1 - x) ** 2).sum())
        g = np.zeros_like(v)
        g[:-1] = -400 * x * (yv - x * x) - 2 * (1 - x)
        g[1:] += 200 * (yv - x * x)
        return f, g

    res = lbfgs(_np_fun(rosen), 6, max_iter=2000, ftol=0, gtol=1e-8, x0=np.full(6, -1.2))
    assert res.reason == "gtol"
    np.testing.assert_allclose(res.x, np.ones(6), atol=1e-6)


def test_training_does_not_depend_on_the_number_of_threads():
    sents = conll_like()
    a = MaxEntTagger(features="conll", cutoff=1, optimizer="lbfgs", max_iter=25, threads=1)
    b = MaxEntTagger(features="conll", cutoff=1, optimizer="lbfgs", max_iter=25, threads=2)
    a.fit(sents)
    b.fit(sents)
    assert a.n_iter_ == b.n_iter_ and np.array_equal(a.W_, b.W_)


def _valid(tagset, seq):
    prev = None
    for t in seq:
        tag = tagset[t]
        if tag.startswith("C"):
            lab = tag[2:]
            if prev is None or tagset[prev] not in (f"S-{lab}" if lab else "S", tag):
                return False
        prev = t
    return True


@pytest.mark.parametrize("task", ["typed", "scn"])
def test_wide_beam_equals_brute_force_ranking(task):
    sents = tiny_sentences()
    m = MaxEntTagger(task=task, features="paper", cutoff=1, max_iter=40).fit(sents)
    s = Sentence(["John", "visited", "Paris"])
    T = len(m.tagset_)
    allseq = [seq for seq in itertools.product(range(T), repeat=len(s)) if _valid(m.tagset_, seq)]
    brute = sorted(((m.log_prob(s, seq), seq) for seq in allseq), key=lambda x: -x[0])
    nb = m.nbest([s], n=len(allseq) + 10, beam=len(allseq) + 10, with_gold=False)
    got = [(lp, tuple(int(t) for t in c)) for lp, c in zip(nb.logprobs[0], nb.candidates[0])]
    assert len(got) == len(allseq)
    assert len({c for _, c in got}) == len(got)  # distinct
    for (lp_b, _seq_b), (lp_g, _seq_g) in zip(brute, got):
        assert lp_g == pytest.approx(lp_b, abs=1e-9)
    # identical sequences wherever the log-probabilities are not tied
    assert [c for _, c in got][:5] == [c for _, c in brute][:5]
    # probabilities of all valid sequences sum to at most 1 (invalid ones take the rest)
    assert math.fsum(math.exp(lp) for lp, _ in brute) <= 1 + 1e-9


def test_wide_beam_one_best_equals_viterbi_for_first_order_model(tagger):
    m = tagger
    T = len(m.tagset_)
    saved = m.Wp2_.copy()
    try:
        m.Wp2_[:] = 0.0  # drop the t-2 t-1 predicates: a first-order model
        for s in tiny_sentences(1):
            st = m.static_scores([s])
            n = len(s)

            # local log-probabilities given the previous tag (T = start)
            def local(i, prev):
                loc = st[i] + m.Wp1_[prev]
                loc = loc - (loc.max() + np.log(np.exp(loc - loc.max()).sum()))
                return loc + m.trans_pen_[prev]

            delta = local(0, T)
            back = []
            for i in range(1, n):
                cand = np.stack([delta[p] + local(i, p) for p in range(T)])  # (prev, cur)
                back.append(cand.argmax(axis=0))
                delta = cand.max(axis=0)
            best = [int(delta.argmax())]
            for bp in reversed(back):
                best.append(int(bp[best[-1]]))
            best.reverse()
            nb = m.nbest([s], n=1, beam=200, with_gold=False)
            assert list(nb.candidates[0][0]) == best
            assert nb.logprobs[0][0] == pytest.approx(float(delta.max()), abs=1e-9)
    finally:
        m.Wp2_[:] = saved


def test_learns_training_data(tagger):
    sents = tiny_sentences(1)
    assert tagger.evaluate(sents) > 90.0


def test_gis_optimizer_learns():
    sents = tiny_sentences()
    m = MaxEntTagger(task="typed", features="paper", cutoff=1, optimizer="gis", max_iter=150).fit(
        sents
    )
    assert m.evaluate(sents) > 70.0


def test_conll_feature_set_uses_columns():
    sents = [
        Sentence(s.words, s.spans, extra=[["NNP"] * len(s), ["I-NP"] * len(s)])
        for s in tiny_sentences()
    ]
    m = MaxEntTagger(features="conll", cutoff=1, max_iter=30).fit(sents)
    names = set(m.extractor_.vocab)
    assert any(n.startswith("pos+0=") for n in names) and any(n.startswith("s3=") for n in names)
    assert m.evaluate(sents) > 80.0


def test_model_save_load_roundtrip(tagger, tmp_path):
    path = tmp_path / "m.npz"
    tagger.save(path)
    m2 = MaxEntTagger.load(path)
    sents = tiny_sentences(1)
    a, b = tagger.nbest(sents, n=5), m2.nbest(sents, n=5)
    for x, y in zip(a.candidates, b.candidates):
        assert np.array_equal(x, y)
    for x, y in zip(a.logprobs, b.logprobs):
        np.testing.assert_allclose(x, y, atol=1e-4)  # weights are stored as float32


def test_corrupt_model_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"this is not a zip file")
    with pytest.raises(FormatError, match="bad.npz"):
        MaxEntTagger.load(bad)
    with pytest.raises(FormatError, match="no such file"):
        MaxEntTagger.load(tmp_path / "missing.npz")


def test_nbest_save_load_bit_identical(tagger, tmp_path):
    nb = tagger.nbest(tiny_sentences(1), n=7)
    p = tmp_path / "l.npz"
    nb.save(p)
    nb2 = NBestList.load(p)
    assert (
        nb2.tagset == nb.tagset
        and nb2.words == nb.words
        and nb2.gold == nb.gold
        and nb2.ids == nb.ids
    )
    for x, y in zip(nb.candidates, nb2.candidates):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    for x, y in zip(nb.logprobs, nb2.logprobs):
        assert x.tobytes() == y.tobytes()
    np.testing.assert_array_equal(nb.oracle_indices(), nb2.oracle_indices())


def test_oracle_index_prefers_most_correct_tags(tagger):
    nb = tagger.nbest(tiny_sentences(1), n=10)
    idx = nb.oracle_indices()
    for i, j in enumerate(idx):
        g = nb.gold_tag_ids(i)
        correct = (nb.candidates[i] == g).sum(axis=1)
        assert correct[j] == correct.max() and j == int(np.argmax(correct))


def test_cancel_stops_training():
    import threading

    with pytest.raises(Cancelled):
        MaxEntTagger(cutoff=1, max_iter=50).fit(tiny_sentences(), should_cancel=lambda: True)
    calls = []
    with pytest.raises(Cancelled):  # cancelled in the middle of the optimisation
        MaxEntTagger(cutoff=1, optimizer="lbfgs", max_iter=50, threads=2).fit(
            tiny_sentences(), should_cancel=lambda: calls.append(1) or len(calls) > 5
        )
    assert len(calls) > 5
    assert not [
        t for t in threading.enumerate() if t.name.startswith("maxent")
    ]  # worker threads ended


def test_document_folds_partition_by_document():
    c = tiny_corpus(6)
    folds = document_folds(c, 3)
    assert len(folds) == len(c)
    doc_of = c.sentence_document()
    for d in set(doc_of):
        # a document stays whole
        assert len({folds[i] for i, dd in enumerate(doc_of) if dd == d}) == 1
    assert set(folds) == {0, 1, 2}


def test_jackknife_never_decodes_a_seen_sentence(monkeypatch):
    c = tiny_corpus(6)
    seen_by_fit: list[set] = []
    decoded: list[set] = []
    orig_fit, orig_nbest = MaxEntTagger.fit, MaxEntTagger.nbest

    def fit(self, sentences, *a, **k):
        seen_by_fit.append({id(s) for s in sentences})
        self._seen = seen_by_fit[-1]
        return orig_fit(self, sentences, *a, **k)

    def nbest(self, sentences, *a, **k):
        sentences = list(sentences)
        decoded.append({id(s) for s in sentences})
        assert not (self._seen & decoded[-1]), "a fold decoded a sentence its model was trained on"
        return orig_nbest(self, sentences, *a, **k)

    monkeypatch.setattr(MaxEntTagger, "fit", fit)
    monkeypatch.setattr(MaxEntTagger, "nbest", nbest)
    res = jackknife(c, folds=3, n=5, tagger_params={"cutoff": 1, "max_iter": 20}, workers=1)
    assert len(decoded) == 3 and set().union(*decoded) == {id(s) for s in c.sentences}
    assert len(res.nbest) == len(c)
    assert [list(g) for g in res.nbest.gold] == [s.spans for s in c.sentences]
    assert res.nbest.meta["fold"] == res.folds.tolist()


def test_foreign_and_future_files_are_refused(tagger, tmp_path):
    from nerstudio.persist import save_npz

    p = tmp_path / "other.npz"
    save_npz(p, {"format": "something-else", "version": 1}, {"x": np.zeros(3)})
    with pytest.raises(FormatError, match="not a tagger model: format is 'something-else'"):
        MaxEntTagger.load(p)
    with pytest.raises(FormatError, match="not an N-best file: format is"):
        NBestList.load(p)
    nb = tagger.nbest(tiny_sentences(1), n=2)
    q = tmp_path / "future.npz"
    nb.save(q)
    with np.load(q) as z:
        arrays = {k: z[k] for k in z.files if k != "header"}
    save_npz(q, {"format": "nerstudio-nbest", "version": 99}, arrays)
    with pytest.raises(FormatError, match="version 99 is not supported"):
        NBestList.load(q)
    np.savez(tmp_path / "noheader.npz", x=np.zeros(2))
    with pytest.raises(FormatError, match="no readable header"):
        NBestList.load(tmp_path / "noheader.npz")


def test_jackknife_in_process_cancels_inside_training_and_returns_the_full_model():
    c = tiny_corpus(6)
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 3  # true only once a fold's training has begun

    with pytest.raises(Cancelled):
        jackknife(
            c,
            folds=3,
            n=5,
            tagger_params={"cutoff": 1, "max_iter": 50},
            workers=1,
            should_cancel=cancel,
        )
    assert len(calls) > 3
    res = jackknife(
        c,
        folds=3,
        n=5,
        tagger_params={"cutoff": 1, "max_iter": 20},
        workers=1,
        full=True,
        decode={"again": (c.sentences, None)},
    )
    assert isinstance(res.model, MaxEntTagger) and len(res.decoded["again"]) == len(c)


def test_feature_set_names_are_read_with_their_parts():
    from nerstudio.tagging.features import parse_feature_set

    assert parse_feature_set("conll") == ("conll", None, False)
    assert parse_feature_set("paper+rich") == ("paper", None, True)
    base, lists, rich = parse_feature_set("conll+gaz:persons/loc_country+rich")
    assert (base, rich) == ("conll", True) and lists == (
        "loc_country",
        "per_first",
        "per_last_20k",
        "per_last_2k",
    )
    assert len(parse_feature_set("conll+gaz")[1]) > len(lists)
    for bad, what in (
        ("crf", "unknown feature set"),
        ("conll+gaz+gaz", "repeated part 'gaz'"),
        ("conll+wide", "unknown or repeated part 'wide'"),
        ("conll+gaz:people", "people"),
    ):
        with pytest.raises(ValueError, match=what):
            parse_feature_set(bad)
        with pytest.raises(ValueError, match=what):
            MaxEntTagger(features=bad)


def test_rich_templates_equal_their_literal_definitions():
    """+rich: p5/s5, the neighbours' full shapes and lexicon flags, the capitalisation pattern
    of the previous, current and next word, for every token (literal definitions)."""
    from nerstudio.tagging.features import FeatureExtractor
    from nerstudio.text.shapes import first_char_type

    sents = conll_like()
    plain, rich = FeatureExtractor("conll"), FeatureExtractor("conll+rich")
    Xp, Xr = plain.fit_transform(sents), rich.fit_transform(sents)
    names_p, names_r = plain.names(), rich.names()
    lex = rich.lexicon
    row = 0
    for s in sents:
        w = s.words
        for i in range(len(w)):
            got = {names_r[j] for j in Xr[row].indices} - {names_p[j] for j in Xp[row].indices}
            at = lambda k: w[i + k] if 0 <= i + k < len(w) else None
            want = {
                "p5=" + (w[i][:5] if len(w[i]) >= 5 else "NULL"),
                "s5=" + (w[i][-5:] if len(w[i]) >= 5 else "NULL"),
            }
            for k in (-1, 1):
                x = at(k)
                want.add(f"shape{k:+d}=" + ("NULL" if x is None else shape(x)))
                want.add(
                    f"lex{k:+d}=" + ("NULL" if x is None else ("1" if x.lower() in lex else "0"))
                )
            want.add(
                "cap3="
                + "|".join("NULL" if at(k) is None else first_char_type(at(k)) for k in (-1, 0, 1))
            )
            assert got == want, (w, i)
            row += 1


def test_cluster_tables_are_built_once_per_prefix_length(monkeypatch):
    """A word type's cluster path is looked up once per prefix length, not once per template
    (offsets −2..+2 of one prefix length share its table of word types); the predicates stay
    those of the literal definition (``cluster_path`` of the word at each offset)."""
    from nerstudio.resources import clusters
    from nerstudio.tagging import features
    from nerstudio.tagging.features import CLUSTER_BITS, CLUSTER_OFFSETS, FeatureExtractor

    calls: list[str] = []

    def counted(word):
        calls.append(word)
        return clusters.cluster_path(word)

    monkeypatch.setattr(features, "cluster_path", counted)
    sents = conll_like()
    ext = FeatureExtractor("conll+rich+clusters")
    X = ext.fit_transform(sents)
    types = {w for s in sents for w in s.words}
    assert sorted(calls) == sorted(list(types) * len(CLUSTER_BITS))
    names = ext.names()
    row = 0
    for s in sents:
        w = s.words
        for i in range(len(w)):
            got = {names[j] for j in X[row].indices}
            for bits, k in itertools.product(CLUSTER_BITS, CLUSTER_OFFSETS):
                x = w[i + k] if 0 <= i + k < len(w) else None
                path = None if x is None else clusters.cluster_path(x)
                name = f"bc{bits}{k:+d}" if k else f"bc{bits}"
                assert f"{name}=" + ("NULL" if path is None else path[:bits]) in got
            row += 1
