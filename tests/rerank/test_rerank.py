"""Global features, ranking data, boosting and the perceptron family against direct,
literal re-implementations on tiny inputs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from nerstudio.corpus.model import Span
from nerstudio.errors import Cancelled, FormatError
from nerstudio.evaluation import evaluate_spans
from nerstudio.nbest import NBestList, scn_spans
from nerstudio.rerank.boosting import Boosting, BoostingSession, line_search_alpha0, ranking_pairs
from nerstudio.rerank.data import RankingData, group_argmax
from nerstudio.rerank.features import TEMPLATES, GlobalFeatures, template_of
from nerstudio.rerank.model import ALGORITHMS, RerankerModel, make_learner, train_reranker
from nerstudio.rerank.perceptron import (
    AveragedPerceptron,
    MarginPerceptron,
    Perceptron,
    VotedPerceptron,
)

RUNNING = [
    "Whether",
    "you",
    "'re",
    "an",
    "aging",
    "flower",
    "child",
    "or",
    "a",
    "clueless",
    "Gen",
    "Xer",
    ",",
    "“",
    "The",
    "Day",
    "They",
    "Shot",
    "John",
    "Lennon",
    ",",
    "”",
    "playing",
    "at",
    "the",
    "Dougherty",
    "Arts",
    "Center",
    ",",
    "entertains",
    "the",
    "imagination",
    ".",
]
RUNNING_TAGS = [
    "N",
    "N",
    "N",
    "N",
    "N",
    "N",
    "N",
    "N",
    "N",
    "N",
    "S",
    "C",
    "N",
    "N",
    "S",
    "C",
    "C",
    "C",
    "C",
    "C",
    "N",
    "N",
    "N",
    "N",
    "N",
    "S",
    "C",
    "C",
    "N",
    "N",
    "N",
    "N",
    "N",
]


# ---------------------------------------------------------------------------------------------
# global features


def test_running_example_has_the_papers_features():
    gf = GlobalFeatures()
    feats = set(
        gf.candidate_strings(RUNNING, RUNNING_TAGS, lexicon={"the", "whether", "you", "playing"})
    )
    for f in (
        "WE=Gen Xer",
        "WE=The Day They Shot John Lennon",
        "WE=Dougherty Arts Center",
        "LW=Center",
        "LWLC=0",
        "FF=Aa Aa Aa",
        "GF=Aa0 Aa0 Aa0",
        "BO00=the Dougherty",
        "BO11=a1 Aa0",
        "BE00=Center ,",
        "TO000=at the Dougherty",
        "TO2111=a1 Aa0 Aa0",
        "TE2000=Dougherty Arts Center",
        "PF=Aa",
        "PF=Aa Aa Aa",
        "SF2=Aa0 Aa0",
        "QF=1 6 0 Aa1 Aa0",
        "QF2=1 1 Aa1 Aa0",
    ):
        assert f in feats, f
    # quote features: Q spans the quotes themselves, Q2 one word more on each side
    q = [f for f in feats if f.startswith("Q=")]
    assert q == ["Q=“0 N Aa1 S Aa0 C Aa0 C Aa0 C Aa0 C Aa0 C ,0 N ”0 N"]
    assert {template_of(f) for f in feats} == set(TEMPLATES)
    # untyped tags: no typed copies
    assert not any(":" in f.split("=")[0] for f in feats)


def test_typed_features_come_in_addition_to_untyped():
    tags = [t if t == "N" else f"{t}-ORG" for t in RUNNING_TAGS]
    feats = set(GlobalFeatures().candidate_strings(RUNNING, tags, lexicon=set()))
    assert "WE=Dougherty Arts Center" in feats and "WE:ORG=Dougherty Arts Center" in feats
    assert "BO01:ORG=the Aa0" in feats
    assert not any(f.startswith("QF:") for f in feats)  # quote features are not entity-anchored
    assert len(GlobalFeatures(typed=False).candidate_strings(RUNNING, tags, lexicon=set())) < len(
        feats
    )


def test_quotes_not_all_one_entity_and_long_quotes():
    words = ["He", "said", '"', "the", "Big", "Apple", "is", "nice", '"', "today"]
    tags = ["N", "N", "N", "N", "S", "C", "N", "N", "N", "N"]
    feats = GlobalFeatures(quote_max=3).candidate_strings(
        words, tags, lexicon={"the", "is", "nice"}
    )
    assert "QF=0 2 3 a1 a1" in feats and "QF2=0 0 a1 a1" in feats
    assert not any(f.startswith(("Q=", "Q2=")) for f in feats)  # e − s = 6 > quote_max


def _random_nbest(rng, n_sent=30, typed=True, n_cand=6, gold=True):
    vocab = [
        "the",
        "The",
        "Bank",
        "of",
        "England",
        '"',
        "said",
        "U.S.",
        "1996",
        "Mr.",
        "Smith",
        ",",
        "and",
        "EU",
    ]
    types = ["LOC", "ORG", "PER"] if typed else []
    tagset = ["N"] + [f"{p}-{t}" for t in types for p in ("S", "C")] if typed else ["N", "S", "C"]
    index = {t: i for i, t in enumerate(tagset)}

    def rand_tags(n):
        out, prev = [], "N"
        for _ in range(n):
            r = rng.random()
            if prev != "N" and r < 0.35:
                t = "C" + prev[1:]
            elif r < 0.65:
                t = "N"
            else:
                t = "S" + (f"-{rng.choice(types)}" if typed else "")
            out.append(t)
            prev = t
        return out

    words, cands, lps, golds = [], [], [], []
    for _ in range(n_sent):
        n = int(rng.integers(1, 12))
        words.append(tuple(rng.choice(vocab) for _ in range(n)))
        seqs = []
        seen = set()
        for _ in range(n_cand * 3):
            t = tuple(rand_tags(n))
            if t not in seen:
                seen.add(t)
                seqs.append([index[x] for x in t])
            if len(seqs) == n_cand:
                break
        cands.append(np.array(seqs, dtype=np.int16).reshape(len(seqs), n))
        lps.append(np.sort(rng.normal(-3, 2, len(seqs)))[::-1].copy())
        from nerstudio.corpus.schemes import decode

        g = decode(rand_tags(n), "scn")[0]
        golds.append(g)
    return NBestList(tagset, words, cands, lps, golds if gold else None)


@pytest.mark.parametrize("typed", [True, False])
def test_integer_path_equals_readable_strings(typed):
    rng = np.random.default_rng(3)
    nb = _random_nbest(rng, typed=typed)
    gf = GlobalFeatures(min_sentences=1)
    data = gf.fit_transform(nb)
    for i in range(len(nb)):
        for j in range(nb.n_candidates(i)):
            got = sorted(gf.names_[k] for k in data.features_of(data.offsets[i] + j))
            want = gf.candidate_strings(nb.words[i], [nb.tagset[t] for t in nb.candidates[i][j]])
            assert got == want
    # a second transform of the same list gives the same matrix
    again = gf.transform(nb)
    assert (again.X != data.X).nnz == 0


def test_rows_data_is_its_rows_and_makes_the_matrix_when_read():
    """Ranking data from feature rows (a list scored now, or saved scores) answers from the
    rows — features, sizes — and its matrix, made when read, holds exactly those rows."""
    from nerstudio.rerank.data import RowsData

    rng = np.random.default_rng(5)
    nb = _random_nbest(rng)
    gf = GlobalFeatures(min_sentences=1)
    data = gf.fit_transform(nb)
    assert isinstance(data, RowsData)
    indices, indptr, n_columns = data._rows
    assert data._X is None  # not made yet
    assert data.n_features == n_columns == len(gf.names_) and data.n_candidates == len(indptr) - 1
    rows = [data.features_of(r).tolist() for r in range(data.n_candidates)]
    X = data.X
    assert isinstance(X, sp.csr_matrix) and X.shape == (data.n_candidates, n_columns)
    assert X.dtype == np.int8 and set(X.data.tolist()) <= {1}
    assert [X.indices[X.indptr[r] : X.indptr[r + 1]].tolist() for r in range(len(rows))] == rows
    assert data.X is X  # made once
    with pytest.raises(AttributeError):
        data.X = X  # the rows are its only source
    # as the matrix it makes: a subset, and a learner's scores
    part = data.subset(np.array([2, 0]))
    want = sp.vstack([X[data.rows(2)], X[data.rows(0)]])
    assert (want != part.X).nnz == 0
    with pytest.raises(ValueError):
        RowsData(indices, indptr[:-1], n_columns, data.L, data.offsets)


@pytest.mark.parametrize("typed", [True, False])
def test_gazetteer_features_integer_path_equals_readable_strings(typed):
    """GZ / GZF / GZL: the integer path gives exactly the readable strings, on sentences whose
    words are partly gazetteer entries (so every kind fires)."""
    from nerstudio.resources import Gazetteers

    rng = np.random.default_rng(4)
    nb = _random_nbest(rng, typed=typed)
    pool = [
        "New",
        "York",
        "City",
        "Smith",
        "John",
        "Germany",
        "German",
        "Inc.",
        "Ltd",
        "Paris",
        "said",
    ]
    words = [
        tuple(
            pool[k] if rng.random() < 0.6 else w
            for k, w in zip(rng.integers(0, len(pool), len(ws)), ws)
        )
        for ws in nb.words
    ]
    nb = NBestList(nb.tagset, words, nb.candidates, nb.logprobs, nb.gold)
    gf = GlobalFeatures(min_sentences=1, gazetteers=True)
    data = gf.fit_transform(nb)
    kinds = set()
    for i in range(len(nb)):
        for j in range(nb.n_candidates(i)):
            got = sorted(gf.names_[k] for k in data.features_of(data.offsets[i] + j))
            want = gf.candidate_strings(nb.words[i], [nb.tagset[t] for t in nb.candidates[i][j]])
            assert got == want
            kinds.update(x.split("=")[0].split(":")[0] for x in got if x.startswith("GZ"))
    assert kinds == {"GZ", "GZF", "GZL"}
    g = Gazetteers()
    strings = gf._gazetteer_strings(["New", "York", "Inc."], 0, 3)
    assert "GZF=per_last_2k" not in strings or "per_last_2k" in g.lists_of(["New"])
    assert "GZL=org_suffix" in strings and "GZ=loc_city_1m" not in strings
    assert "GZ=loc_city_1m" in gf._gazetteer_strings(["New", "York"], 0, 2)
    gf2 = GlobalFeatures.from_state(*gf.state())
    assert (gf2.transform(nb).X != data.X).nnz == 0


@pytest.mark.parametrize("typed", [True, False])
def test_context_features_integer_path_equals_readable_strings(typed):
    from nerstudio.rerank.context import DocumentContext

    rng = np.random.default_rng(8)
    nb = _random_nbest(rng, typed=typed, n_sent=30)
    words = [
        tuple(["Smith", "Acme", "Paris", "x"][k] for k in rng.integers(0, 4, len(ws)))
        for ws in nb.words
    ]
    docs = sorted(rng.integers(0, 4, len(nb)).tolist())
    nb = NBestList(nb.tagset, words, nb.candidates, nb.logprobs, nb.gold, meta={"documents": docs})
    gf = GlobalFeatures(min_sentences=1, context=True)
    data = gf.fit_transform(nb)
    ctx = DocumentContext(nb, docs)
    kinds = set()
    for i in range(len(nb)):
        for j in range(nb.n_candidates(i)):
            got = sorted(gf.names_[k] for k in data.features_of(data.offsets[i] + j))
            want = gf.candidate_strings(
                nb.words[i], [nb.tagset[t] for t in nb.candidates[i][j]], context=ctx, sentence=i
            )
            assert got == want
            kinds.update(x.split("=")[0].split(":")[0] for x in got if x[:2] in ("DC", "CC"))
    assert kinds == {"DC", "CC"}
    # one scope only: exactly the DC (or CC) features of the full context, the rest unchanged
    for scope, kind in (("document", "DC"), ("corpus", "CC")):
        one = GlobalFeatures(min_sentences=1, context=scope)
        d1 = one.fit_transform(nb)
        for i in range(len(nb)):
            for j in range(nb.n_candidates(i)):
                both = {gf.names_[k] for k in data.features_of(data.offsets[i] + j)}
                got = {one.names_[k] for k in d1.features_of(d1.offsets[i] + j)}
                assert got == {x for x in both if x[:2] not in ("DC", "CC") or x[:2] == kind}
    with pytest.raises(ValueError, match="unknown context scope"):
        GlobalFeatures(context="sentence")
    with pytest.raises(ValueError, match="documents"):
        GlobalFeatures(context=True).fit_transform(
            NBestList(nb.tagset, words, nb.candidates, nb.logprobs, nb.gold)
        )


def test_a_spans_features_are_built_once_whatever_types_the_candidates_give_it(monkeypatch):
    """The candidates of an N-best list often give the same words different types, and the
    same words come back in other sentences. Apart from EP/ES a span's features do not depend
    on its type: its boundary and context features are built once per span of a sentence, and
    those of its words alone (the words, forms and shapes within, gazetteers, clusters) once
    per words of the list; the integer path stays equal to the readable strings, EP/ES
    included, whatever words, sentences and types share."""
    rng = np.random.default_rng(11)
    nb = _random_nbest(rng, typed=True, n_sent=30)
    nb.meta["documents"] = sorted(rng.integers(0, 3, len(nb)).tolist())
    at: list[tuple[int, int, int]] = []
    by_words: list[tuple[str, ...]] = []
    gf = GlobalFeatures(min_sentences=1, gazetteers=True, context=True, posterior=True)
    context, gazetteer = gf._context_strings, gf._gazetteer_strings

    def counted_context(words, s, e1):
        at.append((gf._ctx_i, s, e1))
        return context(words, s, e1)

    def counted_gazetteer(words, s, e1, single=None):
        by_words.append(tuple(words[s:e1]))
        return gazetteer(words, s, e1, single)

    monkeypatch.setattr(gf, "_context_strings", counted_context)
    monkeypatch.setattr(gf, "_gazetteer_strings", counted_gazetteer)
    data = gf.fit_transform(nb)
    spans = {
        (i, s, e)
        for i in range(len(nb))
        for _, s, e, _ in zip(*scn_spans(nb.candidates[i], nb.tagset))
    }
    typed = {
        (i, s, e, t)
        for i in range(len(nb))
        for _, s, e, t in zip(*scn_spans(nb.candidates[i], nb.tagset))
    }
    words = {tuple(nb.words[i][s:e]) for i, s, e in spans}
    assert len(typed) > len(spans) > len(words)  # types and words shared
    assert sorted(at) == sorted(spans)
    assert sorted(by_words) == sorted(words)
    from nerstudio.rerank.context import DocumentContext, entity_posteriors

    ctx = DocumentContext(nb, nb.meta["documents"])
    for i in range(len(nb)):
        post = entity_posteriors(nb.logprobs[i], nb.candidates[i], nb.tagset)
        for j in range(nb.n_candidates(i)):
            got = sorted(gf.names_[k] for k in data.features_of(data.offsets[i] + j))
            tags = [nb.tagset[t] for t in nb.candidates[i][j]]
            want = gf.candidate_strings(nb.words[i], tags, context=ctx, sentence=i, posteriors=post)
            assert got == want


def test_feature_rows_are_the_same_by_index_or_search_in_any_chunks(monkeypatch):
    """A (candidate, key) code's column comes from a table indexed by key when the keys are
    small enough, else from a binary search, and the codes are looked up some hundred thousand
    at a time: the same matrices either way, and the same columns as the sorted table says."""
    from nerstudio.rerank import features

    rng = np.random.default_rng(12)
    table = np.unique(rng.integers(0, 5000, 700))
    keys = rng.integers(0, 6000, 3000)
    want = np.array([int(np.searchsorted(table, k)) if k in set(table) else -1 for k in keys])
    assert np.array_equal(features._Columns(table)(keys), want)
    monkeypatch.setattr(features, "_DIRECT_KEYS", 100)
    assert features._Columns(table).direct is None
    assert np.array_equal(features._Columns(table)(keys), want)
    monkeypatch.undo()

    train, dev = _random_nbest(rng, n_sent=40), _random_nbest(rng, n_sent=25)
    gf = GlobalFeatures(min_sentences=2)
    a_train, a_dev = gf.fit_transform(train), gf.transform(dev)
    monkeypatch.setattr(features, "_DIRECT_KEYS", 0)
    monkeypatch.setattr(features, "_CHUNK_CODES", 50)
    gf2 = GlobalFeatures(min_sentences=2)
    b_train, b_dev = gf2.fit_transform(train), gf2.transform(dev)
    for a, b in ((a_train, b_train), (a_dev, b_dev)):
        assert a.X.shape == b.X.shape and (a.X != b.X).nnz == 0
        assert np.array_equal(a.X.indptr, b.X.indptr) and np.array_equal(a.X.indices, b.X.indices)
    assert gf2.names_ == gf.names_


def test_document_context_by_hand():
    from nerstudio.rerank.context import DocumentContext

    tagset = ["N", "S-PER", "C-PER", "S-ORG", "C-ORG"]
    words = [("Smith", "said"), ("Smith", "won"), ("Smith", "left"), ("Smith", "came")]
    one = lambda t: np.array([[t, 0]], dtype=np.int16)
    cands = [one(1), one(3), one(1), one(3)]  # PER, ORG in document 0; PER, ORG in document 1
    nb = NBestList(tagset, words, cands, [np.zeros(1)] * 4)
    ctx = DocumentContext(nb, [0, 0, 0, 1])
    # sentence 0: elsewhere in its document ORG once and PER once (a tie: alphabetically first),
    # other documents: ORG once
    assert ctx.strings(0, ["Smith"]) == ["DC=ORG", "CC=ORG"]
    assert ctx.strings(1, ["Smith"]) == ["DC=PER", "CC=ORG"]
    assert ctx.strings(3, ["Smith"]) == [
        "CC=PER"
    ]  # alone in its document; PER twice, ORG once elsewhere
    assert ctx.strings(3, ["Jones"]) == []


def test_feature_selection_counts_distinct_sentences():
    rng = np.random.default_rng(5)
    nb = _random_nbest(rng, n_sent=40)
    gf1 = GlobalFeatures(min_sentences=1)
    d1 = gf1.fit_transform(nb)
    per_sentence = {}
    for i in range(len(nb)):
        feats = set()
        for j in range(nb.n_candidates(i)):
            feats |= {gf1.names_[k] for k in d1.features_of(d1.offsets[i] + j)}
        for f in feats:
            per_sentence[f] = per_sentence.get(f, 0) + 1
    gf5 = GlobalFeatures(min_sentences=5).fit(nb)
    assert set(gf5.names_) == {f for f, c in per_sentence.items() if c >= 5}
    assert 0 < gf5.n_features < gf1.n_features


def test_spans_counts_and_prf_match_evaluation():
    rng = np.random.default_rng(7)
    nb = _random_nbest(rng, n_sent=50)
    data = GlobalFeatures(min_sentences=1).fit_transform(nb)
    for i in range(len(nb)):
        cc, ss, ee, ll = scn_spans(nb.candidates[i], nb.tagset)
        for j in range(nb.n_candidates(i)):
            types = sorted({t.split("-")[1] for t in nb.tagset if "-" in t})
            got = [Span(s, e, types[l]) for c, s, e, l in zip(cc, ss, ee, ll) if c == j]
            assert got == nb.spans(i, j)
    choice = rng.integers(0, [nb.n_candidates(i) for i in range(len(nb))])
    p, r, f = data.prf(choice)
    ev = evaluate_spans(nb.gold, nb.top(choice))
    assert (p, r, f) == pytest.approx((ev.precision, ev.recall, ev.f1))


def test_group_argmax_first_maximum():
    rng = np.random.default_rng(0)
    sizes = rng.integers(0, 5, 200)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    scores = rng.integers(0, 3, offsets[-1]).astype(float)
    got = group_argmax(scores, offsets)
    for i in range(len(sizes)):
        seg = scores[offsets[i] : offsets[i + 1]]
        assert got[i] == (int(np.argmax(seg)) if len(seg) else -1)


# ---------------------------------------------------------------------------------------------
# tiny ranking problems


def tiny_data(seed=0, n_sent=25, m=12, density=0.3, max_cand=6):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, max_cand + 1, n_sent)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(offsets[-1])
    X = sp.csr_matrix((rng.random((n, m)) < density).astype(np.int8))
    L = -rng.random(n) * 5
    quality = rng.integers(0, 4, n).astype(float)
    oracle = np.array([int(np.argmax(quality[offsets[i] : offsets[i + 1]])) for i in range(n_sent)])
    correct = quality.astype(np.int32)
    proposed = np.full(n, 3, dtype=np.int32)
    n_gold = np.full(n_sent, 3, dtype=np.int32)
    return RankingData(X, L, offsets, oracle, correct, proposed, n_gold, quality)


def test_line_search_alpha0_minimises():
    rng = np.random.default_rng(1)
    dL = rng.normal(0.5, 2, 300)
    a = line_search_alpha0(dL)
    loss = lambda x: np.exp(-x * dL).sum()
    assert loss(a) <= loss(a * 1.01) and loss(a) <= loss(a * 0.99)


def test_boosting_loss_is_the_exact_expLoss_and_never_increases():
    data = tiny_data(0)
    sess = BoostingSession(data, epsilon=0.0)
    prev = sess.exact_loss()
    assert sess.loss() == pytest.approx(prev, rel=1e-10)
    for _ in range(40):
        info = sess.step(detail=True)
        if info is None:
            break
        exact = sess.exact_loss()
        assert info.loss_after == pytest.approx(exact, rel=1e-8)
        assert exact <= prev * (1 + 1e-12)
        prev = exact
    assert sess.rounds > 10


def test_boosting_bookkeeping_equals_naive_recomputation():
    data = tiny_data(2, n_sent=40, m=20)
    sess = BoostingSession(data, epsilon=0.01, refresh=0)
    for _ in range(300):
        if sess.step() is None:
            break
    # naive: margins from α, then W± by direct sums over pairs
    F = sess.alpha0 * data.L + data.X @ sess.alpha
    M = F[sess.pair_oracle] - F[sess.pair_other]
    D = data.X[sess.pair_oracle].toarray().astype(int) - data.X[sess.pair_other].toarray().astype(
        int
    )
    e = np.exp(-M)
    Wp = ((D == 1) * e[:, None]).sum(axis=0)
    Wm = ((D == -1) * e[:, None]).sum(axis=0)
    scale = np.exp(-sess.c)
    assert np.allclose(sess.Wp * scale, Wp, rtol=1e-9, atol=1e-12)
    assert np.allclose(sess.Wm * scale, Wm, rtol=1e-9, atol=1e-12)
    assert np.allclose(sess.M, M)
    assert sess.loss() == pytest.approx(e.sum(), rel=1e-9)


def test_boosting_compiled_rounds_equal_the_reference_step():
    data = tiny_data(4, n_sent=60, m=30)
    a = BoostingSession(data, epsilon=0.002)
    b = BoostingSession(data, epsilon=0.002)
    for _ in range(200):
        if a.step() is None:
            break
    b.run(a.rounds)
    assert b.rounds == a.rounds
    assert np.array_equal(a.chosen, b.chosen)
    assert np.allclose(a.deltas, b.deltas)
    assert np.allclose(a.alpha, b.alpha)


def test_boosting_rounds_are_the_same_whether_touched_features_are_kept_or_not():
    """The compiled rounds keep, per chosen feature, the features its rounds touch (up to
    ``max_kept`` of them) and skip looking them up when it is chosen again; and they rescan a
    block of BestLoss only when its maximum fell. Neither may change a single bit: the same
    rounds with nothing kept, with room for some lists and with room for all, and the block
    maxima those rounds leave equal to maxima computed afresh (several blocks, ties kept to
    the first feature)."""
    from nerstudio.rerank import _compiled

    data = tiny_data(8, n_sent=120, m=3 * _compiled.BLOCK + 17, density=0.05)
    runs = []
    for kept in (0, 3000, 1 << 20):
        sess = BoostingSession(data, epsilon=0.002, max_kept=kept)
        sess.run(1000)
        bmax = sess._scratch[0]
        fresh = np.empty_like(bmax)
        _compiled.block_max(sess.BL, fresh, _compiled.BLOCK)
        assert np.array_equal(bmax, fresh)
        runs.append(sess)
    first, *others = runs
    assert first.rounds == 1000 and len(np.unique(first.chosen)) < 500  # features chosen again
    stored = [int(s._scratch[-1][0]) for s in runs]
    assert stored[0] == 0 and 0 < stored[1] <= 3000 < stored[2]
    for sess in others:
        assert np.array_equal(sess.chosen, first.chosen)
        for name in ("deltas", "alpha", "M", "e", "W", "BL"):
            assert np.array_equal(getattr(sess, name), getattr(first, name)), name


def test_boosting_delta_formula_and_first_choice():
    data = tiny_data(6)
    sess = BoostingSession(data, epsilon=0.05)
    BL = np.abs(np.sqrt(sess.Wp) - np.sqrt(sess.Wm))
    k = int(np.argmax(BL))
    Z = sess.Z
    want = 0.5 * np.log((sess.Wp[k] + 0.05 * Z) / (sess.Wm[k] + 0.05 * Z))
    info = sess.step()
    assert info.feature == k and info.delta == pytest.approx(want)


def test_boosting_estimator_keeps_best_round_and_scores_linearly():
    train, dev = tiny_data(8, n_sent=80), tiny_data(9, n_sent=40)
    seen = []
    b = Boosting(rounds=200, epsilon=0.01, eval_every=10).fit(train, dev, callback=seen.append)
    assert [s.step for s in seen][:3] == [0, 10, 20]
    best = max(seen, key=lambda s: (s.dev_f1, -s.step))
    assert b.kept_rounds_ == best.step
    assert np.allclose(
        b.alpha_, BoostingSession(train, epsilon=0.01).alpha_at(0) + _replay(train, b.kept_rounds_)
    )
    assert dev.prf(b.predict(dev))[2] == pytest.approx(best.dev_f1)


def _replay(train, rounds):
    s = BoostingSession(train, epsilon=0.01)
    s.run(rounds)
    return s.alpha


def test_boosting_pairs_skip_candidates_as_good_as_the_oracle():
    data = tiny_data(10)
    _sent, orow, other = ranking_pairs(data)
    assert np.all(data.quality[other] < data.quality[orow])
    n_worse = sum(
        int((data.quality[data.rows(i)] < data.quality[data.offsets[i] + data.oracle[i]]).sum())
        for i in range(len(data))
    )
    assert len(other) == n_worse


# ---------------------------------------------------------------------------------------------
# perceptrons against literal loops


def _reference_history(data, orders, beta, mode=0, C=0.0):
    """α^i after every example (Figure 3 / K&T 3.1 applied to ranking), as dense vectors."""
    Xd = data.X.toarray().astype(float)
    w = np.zeros(data.n_features)
    wL = 0.0
    hist = []
    for order in orders:
        for i in order:
            a, b = data.offsets[i], data.offsets[i + 1]
            o = a + data.oracle[i]
            scores = beta * wL * data.L[a:b] + Xd[a:b] @ w
            top = a + int(np.argmax(scores))
            target = None
            if data.quality[top] < data.quality[o]:
                target = top
            elif mode == 1:
                wrong = [r for r in range(a, b) if data.quality[r] < data.quality[o]]
                if wrong:
                    r = max(wrong, key=lambda r: (scores[r - a], -r))
                    if scores[o - a] - scores[r - a] <= C:
                        target = r
            if target is not None:
                w = w + Xd[o] - Xd[target]
                wL += beta * (data.L[o] - data.L[target])
            hist.append((w.copy(), wL))
    return hist


def _orders(data, seed, epochs):
    rng = np.random.default_rng(seed)
    sentences = np.flatnonzero(data.informative())
    return [rng.permutation(sentences) for _ in range(epochs)]


@pytest.mark.parametrize("cls,mode,C", [(Perceptron, 0, 0.0), (MarginPerceptron, 1, 2.0)])
def test_perceptron_final_weights_equal_literal_loop(cls, mode, C):
    data = tiny_data(11, n_sent=40)
    kw = {"C": C} if mode else {}
    model = cls(epochs=3, beta=0.5, seed=4, keep_best=False, **kw).fit(data)
    w, wL = _reference_history(data, _orders(data, 4, 3), 0.5, mode, C)[-1]
    a0, got = model.linear_weights()
    assert np.allclose(got, w) and a0 == pytest.approx(0.5 * wL)


def test_averaged_weights_equal_the_explicit_average():
    data = tiny_data(12, n_sent=40)
    model = AveragedPerceptron(epochs=4, beta=0.3, seed=1, keep_best=False).fit(data)
    hist = _reference_history(data, _orders(data, 1, 4), 0.3)
    w = np.mean([h[0] for h in hist], axis=0)
    wL = np.mean([h[1] for h in hist])
    a0, got = model.linear_weights()
    assert np.allclose(got, w) and a0 == pytest.approx(0.3 * wL)


def test_voted_update_log_is_the_same_from_sorted_and_unsorted_rows():
    """The voted perceptron's updates (the features of the oracle and not of the wrong
    candidate, and the other way round) come from compiled code when the rows' features are
    sorted, one update at a time otherwise: the same features, and from sorted rows the same
    arrays as the literal set differences."""
    from nerstudio.rerank.perceptron import _Run

    data = tiny_data(3, n_sent=40, m=25)
    rng = np.random.default_rng(5)
    run = _Run(data.n_features)
    n = 150
    run.reserve(n)
    run.log_sent[:n] = rng.integers(0, len(data.offsets) - 1, n)
    run.log_wrong[:n] = data.offsets[run.log_sent[:n]] + rng.integers(0, 2, n)
    run.log_time[:n] = np.arange(n)
    run.n_log, run.t = n, n + 3
    X = data.X.tocsr()
    assert X.has_sorted_indices
    rows = [X.indices[X.indptr[i] : X.indptr[i + 1]][::-1] for i in range(X.shape[0])]
    unsorted = sp.csr_matrix(
        (np.ones(X.nnz, dtype=np.int8), np.concatenate(rows), X.indptr), shape=X.shape
    )
    assert not unsorted.has_sorted_indices
    a, b = VotedPerceptron(), VotedPerceptron()
    a.beta_ = b.beta_ = 0.5
    a._make_votes(run, data)
    b._make_votes(run, RankingData(unsorted, data.L, data.offsets, data.oracle))
    starts = data.offsets[run.log_sent[:n]] + data.oracle[run.log_sent[:n]]
    for side in ("plus", "minus"):
        ptr, feats = getattr(a, f"upd_{side}_ptr_"), getattr(a, f"upd_{side}_")
        ptr_b, feats_b = getattr(b, f"upd_{side}_ptr_"), getattr(b, f"upd_{side}_")
        assert np.array_equal(ptr, ptr_b) and feats.dtype == ptr.dtype == np.int64
        for k, (o, r) in enumerate(zip(starts, run.log_wrong[:n])):
            one, other = (o, r) if side == "plus" else (r, o)
            want = np.setdiff1d(X.indices[X.indptr[one] : X.indptr[one + 1]], X[other].indices)
            assert np.array_equal(feats[ptr[k] : ptr[k + 1]], want)
            assert sorted(feats_b[ptr[k] : ptr[k + 1]]) == want.tolist()
    assert np.array_equal(a.upd_dL_, b.upd_dL_) and np.array_equal(a.counts_, b.counts_)


def test_voted_decoding_equals_the_literal_figure4_loop():
    train, test = tiny_data(13, n_sent=40), tiny_data(14, n_sent=30)
    model = VotedPerceptron(epochs=3, beta=0.7, seed=2, keep_best=False).fit(train)
    hist = _reference_history(train, _orders(train, 2, 3), 0.7)
    Xd = test.X.toarray().astype(float)
    votes = np.zeros(test.n_candidates)
    for w, wL in hist:
        s = 0.7 * wL * test.L + Xd @ w
        for i in range(len(test)):
            a = test.offsets[i]
            votes[a + int(np.argmax(s[a : test.offsets[i + 1]]))] += 1
    assert np.allclose(model.votes(test), votes)
    assert np.array_equal(model.predict(test), test.argmax(votes))


def test_voted_dev_curve_equals_fresh_voting_each_epoch():
    train, dev = tiny_data(15, n_sent=50), tiny_data(16, n_sent=30)
    seen = []
    VotedPerceptron(epochs=3, beta=0.5, seed=0, keep_best=False).fit(
        train, dev, callback=seen.append
    )
    for ep in (1, 2, 3):
        m = VotedPerceptron(epochs=ep, beta=0.5, seed=0, keep_best=False).fit(train)
        assert dev.prf(m.predict(dev))[2] == pytest.approx(seen[ep - 1].dev_f1)


def test_beta_search_and_bpm_run():
    train, dev = tiny_data(17, n_sent=60), tiny_data(18, n_sent=30)
    m = AveragedPerceptron(epochs=2, beta=None, beta_grid=(0.1, 1.0), bpm=3).fit(train, dev)
    assert [b for b, _ in m.beta_search_] == [0.1, 1.0] and m.beta_ in (0.1, 1.0)
    assert np.any(m.init_w_ != 0)


def test_training_honours_cancellation():
    data = tiny_data(19, n_sent=50)
    with pytest.raises(Cancelled):
        Boosting(rounds=1000, eval_every=10).fit(data, should_cancel=lambda: True)
    with pytest.raises(Cancelled):
        AveragedPerceptron(epochs=5, beta=1.0).fit(data, should_cancel=lambda: True)


# ---------------------------------------------------------------------------------------------
# the model: explanations and files


@pytest.fixture(scope="module")
def lists():
    rng = np.random.default_rng(21)
    return _random_nbest(rng, n_sent=60), _random_nbest(rng, n_sent=30)


@pytest.mark.parametrize("algo", [a for a in ALGORITHMS if a != "kernel"])
def test_model_file_round_trip_gives_identical_scores(tmp_path, lists, algo):
    train, dev = lists
    params = {"boost": {"rounds": 50, "eval_every": 10}}.get(algo, {"epochs": 2, "beta": 0.5})
    model = train_reranker(train, dev, algo, params, {"min_sentences": 1})
    model.save(tmp_path / "m.npz")
    back = RerankerModel.load(tmp_path / "m.npz")
    d1, d2 = model.data(dev), back.data(dev)
    assert np.array_equal(model.scores(d1), back.scores(d2))
    assert back.features.names_ == model.features.names_
    assert [h.dev_f1 for h in back.learner.history_] == [h.dev_f1 for h in model.learner.history_]


def test_explanations_add_up(lists):
    train, dev = lists
    model = train_reranker(train, dev, "averaged", {"epochs": 2, "beta": 0.5}, {"min_sentences": 1})
    d = model.data(dev)
    s = model.scores(d)
    for row in range(0, d.n_candidates, 7):
        ex = model.explain(d, row)
        assert ex.score == pytest.approx(s[row])
        assert sum(t.contribution for t in ex.terms) == pytest.approx(s[row])
        assert ex.terms[0].contribution ** 2 >= ex.terms[-1].contribution ** 2
    a, b = d.offsets[3], d.offsets[3] + 1
    cmp = model.compare(d, a, b)
    assert cmp.delta == pytest.approx(s[a] - s[b])
    fa, fb = set(d.features_of(a)), set(d.features_of(b))
    assert len(cmp.terms) == 1 + len(fa ^ fb)


def test_corrupt_and_foreign_model_files(tmp_path, lists):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(FormatError, match="bad.npz"):
        RerankerModel.load(bad)
    train, _dev = lists
    model = train_reranker(
        train, None, "perceptron", {"epochs": 1, "beta": 1.0}, {"min_sentences": 1}
    )
    path = tmp_path / "m.npz"
    model.save(path)
    z = dict(np.load(path))
    z["learner_w"] = z["learner_w"][:-1]
    np.savez(tmp_path / "cut.npz", **z)
    with pytest.raises(FormatError, match="corrupt reranker model"):
        RerankerModel.load(tmp_path / "cut.npz")


def test_unknown_algorithm_and_parameter():
    with pytest.raises(ValueError, match="unknown reranking algorithm"):
        make_learner("svm")
    with pytest.raises(ValueError, match="has no parameter"):
        make_learner("boost", epochs=3)


def test_oracle_by_span_f_prefers_the_best_sentence_f():
    from nerstudio.rerank.features import set_oracle

    rng = np.random.default_rng(23)
    nb = _random_nbest(rng, n_sent=40)
    d = GlobalFeatures(min_sentences=1).fit_transform(nb)
    tags_oracle = d.oracle.copy()
    set_oracle(d, "f")
    for i in range(len(nb)):
        gold = set(nb.gold[i])
        fs = []
        for j in range(nb.n_candidates(i)):
            p = set(nb.spans(i, j))
            fs.append(2 * len(gold & p) / (len(gold) + len(p)) if gold or p else 1.0)
        assert fs[d.oracle[i]] == pytest.approx(max(fs))
    assert not np.array_equal(tags_oracle, d.oracle)  # the criteria do differ on this data
    with pytest.raises(ValueError, match="unknown oracle criterion"):
        set_oracle(d, "bleu")


@pytest.mark.parametrize("typed", [True, False])
def test_posterior_features_integer_path_equals_readable_strings(typed):
    """EP / ES: the integer path gives exactly the readable strings given the sentence's
    posteriors, and every entity of every candidate has its EP (and, typed, its ES)."""
    from nerstudio.rerank.context import entity_posteriors

    rng = np.random.default_rng(5)
    nb = _random_nbest(rng, typed=typed)
    gf = GlobalFeatures(min_sentences=1, posterior=True)
    data = gf.fit_transform(nb)
    for i in range(len(nb)):
        post = entity_posteriors(nb.logprobs[i], nb.candidates[i], nb.tagset)
        for j in range(nb.n_candidates(i)):
            got = sorted(gf.names_[k] for k in data.features_of(data.offsets[i] + j))
            tags = [nb.tagset[t] for t in nb.candidates[i][j]]
            assert got == gf.candidate_strings(nb.words[i], tags, posteriors=post)
            spans = nb.spans(i, j)
            assert bool(spans) == any(x.startswith("EP=") for x in got)
            assert any(x.startswith("ES=") for x in got) == (typed and bool(spans))


def test_entity_posteriors_sum_the_candidates_probabilities():
    from nerstudio.rerank.context import entity_posteriors, posterior_bucket, posterior_strings

    tagset = ["N", "S-LOC", "C-LOC", "S-PER", "C-PER"]
    ix = {t: k for k, t in enumerate(tagset)}
    cands = np.array(
        [
            [ix["S-PER"], ix["C-PER"], ix["N"]],  # "A B" PER
            [ix["S-LOC"], ix["C-LOC"], ix["N"]],  # "A B" LOC
            [ix["S-PER"], ix["N"], ix["S-LOC"]],  # "A" PER, "C" LOC
        ]
    )
    lps = np.log([0.5, 0.3, 0.2]) + 7.0  # any shift: the list is renormalised
    post = entity_posteriors(lps, cands, tagset)
    assert post[(0, 2, "PER")] == pytest.approx(0.5)
    assert post[(0, 2, "LOC")] == pytest.approx(0.3)
    assert post[(0, 2)] == pytest.approx(0.8)
    assert post[(0, 1, "PER")] == pytest.approx(0.2) and post[(2, 3)] == pytest.approx(0.2)
    assert (0, 1, "LOC") not in post
    assert [posterior_bucket(p) for p in (0.0, 0.09, 0.1, 0.55, 0.994, 0.995, 1.0)] == [
        "0.0",
        "0.0",
        "0.1",
        "0.5",
        "0.9",
        "1.0",
        "1.0",
    ]
    assert posterior_strings(post, 0, 2, "LOC") == ["EP=0.3", "ES=0.8"]
    assert entity_posteriors(np.zeros(0), cands[:0], tagset) == {}
