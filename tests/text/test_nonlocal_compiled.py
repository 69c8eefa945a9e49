"""The compiled non-local counts (integer ids, numba) against the string form they replace.

``NonLocalFeatures.strings`` / ``vector`` — the implementation the K&T suite used until issue 26,
kept as the readable definition — is the reference: on random documents, on real candidates
(the k-best of a perceptron tagger on the demo corpus and, when present, on CoNLL-2003
documents), and through whole joint trainings, the compiled path must give the same counts, the
same vocabulary ids in the same order, the same weights and the same outputs.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from helpers.shared_data import SHARED_DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Corpus, Span
from nerstudio.demo import DEMO_DIR
from nerstudio.nbest import entity_types, scn_spans
from nerstudio.tagging.joint import JointTagger
from nerstudio.tagging.joint_documents import Documents
from nerstudio.tagging.joint_local import first_model_lists
from nerstudio.tagging.perceptron import PerceptronTagger
from nerstudio.text.nonlocal_features import TEMPLATES, DocumentIndex, NonLocalFeatures

# the repository's ../shared
CONLL = SHARED_DATA / "conll2003"


def compiled_counters(nl, words, candidates, labels):
    """Per candidate (a list of spans), the compiled counts as {string: count}."""
    doc = DocumentIndex(words)
    cptr = np.cumsum([0] + [len(c) for c in candidates])
    flat = [s for c in candidates for s in sorted(c, key=lambda s: (s.start, s.end, s.label))]
    start = np.array([s.start for s in flat], dtype=np.int64)
    end = np.array([s.end for s in flat], dtype=np.int64)
    lab = np.array([labels.index(s.label) for s in flat], dtype=np.int64)
    names = nl._table(tuple(labels))["names"]
    out = []
    for codes, counts in nl.code_vectors(doc, cptr, start, end, lab, labels):
        c = Counter()
        for code, n in zip(codes, counts):
            c[names[code]] += int(n)
        out.append(c)
    return out


words_st = st.lists(
    st.sampled_from(["A", "B", "C", ",", "and", "or", "And", "x"]), min_size=1, max_size=30
)


@st.composite
def doc_and_candidates(draw):
    words = draw(words_st)
    labels = draw(st.sampled_from([["PER", "ORG", "LOC"], [""], ["B", "a", "Z"]]))
    cands = []
    for _ in range(draw(st.integers(1, 4))):
        spans, i = [], 0
        while i < len(words):
            if draw(st.booleans()):
                n = draw(st.integers(1, min(14, len(words) - i)))
                spans.append(Span(i, i + n, draw(st.sampled_from(labels))))
                i += n
            else:
                i += 1
        cands.append(spans)
    templates = draw(st.sets(st.sampled_from(TEMPLATES), min_size=1))
    return words, cands, labels, templates


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(doc_and_candidates())
def test_compiled_counts_equal_the_string_form_on_random_documents(d):
    words, cands, labels, templates = d
    nl = NonLocalFeatures(templates)
    assert compiled_counters(nl, words, cands, labels) == [nl.strings(words, c) for c in cands]


def kbest_candidates(corpus, tagger, k):
    """Per document of ``corpus``: words and the spans of the tagger's k best labellings."""
    seqs = tagger.prepare(corpus)
    lists = first_model_lists(tagger, seqs, k)[0]
    types = entity_types(tagger.tagset_)
    out = []
    for words, Y in zip(seqs.words, lists):
        c, a, b, lab = scn_spans(np.asarray(Y), tagger.tagset_)
        cands = [[] for _ in range(len(Y))]
        for ci, ai, bi, li in zip(c.tolist(), a.tolist(), b.tolist(), lab.tolist()):
            cands[ci].append(Span(ai, bi, types[li]))
        out.append((list(words), cands, np.asarray(Y)))
    return out


@pytest.fixture(scope="module")
def demo_tagger():
    return PerceptronTagger(variant="margin", C=50, epochs=3).fit(
        read_corpus(f"{DEMO_DIR}/train.conll")
    )


def same_vectors_as_the_string_form(tagger, documents):
    """Grow two vocabularies over the same candidates, one by the string form, one compiled."""
    ref, new = NonLocalFeatures(), NonLocalFeatures()
    types = entity_types(tagger.tagset_)
    n = 0
    for words, cands, Y in documents:
        doc = DocumentIndex(words)
        c, a, b, lab = scn_spans(Y, tagger.tagset_)
        cptr = np.searchsorted(c, np.arange(len(Y) + 1))
        for k, (codes, counts) in enumerate(new.code_vectors(doc, cptr, a, b, lab, types)):
            want = ref.vector(doc, cands[k], grow=True)
            got = new.ids_of(codes, counts, types, grow=True, doc=doc, spans=lambda k=k: cands[k])
            assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
            assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
            n += 1
    assert new.vocabulary == ref.vocabulary and list(new.vocabulary) == list(ref.vocabulary)
    return n


def test_real_candidates_demo_corpus(demo_tagger):
    docs = kbest_candidates(read_corpus(f"{DEMO_DIR}/dev.conll"), demo_tagger, 20)
    assert same_vectors_as_the_string_form(demo_tagger, docs) > 100


@pytest.mark.skipif(
    not CONLL.exists(), reason="CoNLL-2003 not present in shared/data (tests on real data skipped)"
)
def test_real_candidates_conll2003_documents(demo_tagger):
    corpus = read_corpus(str(CONLL / "eng.testa"))
    corpus = Corpus(corpus.documents[:25])
    docs = kbest_candidates(corpus, demo_tagger, 20)
    assert max(len(w) for w, _, _ in docs) > 300  # long real documents
    assert same_vectors_as_the_string_form(demo_tagger, docs) > 400


def train_both(monkeypatch, algo, **kw):
    """The same joint training with the compiled counts and with the string form."""
    train = read_corpus(f"{DEMO_DIR}/train.conll")
    dev = read_corpus(f"{DEMO_DIR}/dev.conll")
    out = []
    for compiled in (True, False):
        monkeypatch.setattr(Documents, "compiled", compiled)
        extra = {}
        if algo.startswith("reranking"):
            first = PerceptronTagger(variant="margin", C=50, epochs=3).fit(train)
            extra = {
                "first": first,
                "train_lists": first_model_lists(first, first.prepare(train), 5),
            }
        jt = JointTagger(algo, n=5, n_test=8, C=5.0, epochs=3, **kw).fit(train, dev, **extra)
        out.append((jt, jt.predict_spans(dev), jt.nbest(dev, n=6)))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["proposed", "candidate", "reranking2"])
def test_joint_training_is_identical_to_the_string_form(monkeypatch, algo):
    (a, pa, na), (b, pb, nb) = train_both(monkeypatch, algo, average=algo == "proposed")
    assert list(a.nl_.vocabulary) == list(b.nl_.vocabulary)
    assert np.array_equal(a.wl_, b.wl_) and np.array_equal(a.wg_, b.wg_)
    assert [h.dev_f1 for h in a.history_] == [h.dev_f1 for h in b.history_]
    assert [(h.updates_total, h.updates_local, h.word_error) for h in a.history_] == [
        (h.updates_total, h.updates_local, h.word_error) for h in b.history_
    ]
    assert pa == pb
    assert all(np.array_equal(x, y) for x, y in zip(na.logprobs, nb.logprobs))
    assert all(np.array_equal(x, y) for x, y in zip(na.candidates, nb.candidates))


@pytest.mark.slow
def test_predictions_from_reused_documents_equal_fresh_ones():
    """The K&T suite decodes dev and test at every n' from one set of documents."""
    train = read_corpus(f"{DEMO_DIR}/train.conll")
    dev = read_corpus(f"{DEMO_DIR}/dev.conll")
    jt = JointTagger("proposed", n=5, n_test=8, C=5.0, epochs=2).fit(train, dev)
    docs = jt.documents(dev)
    for k in (8, 3, 20, 8):
        assert jt.predict_spans(dev, n_test=k, docs=docs) == jt.predict_spans(dev, n_test=k)


@pytest.mark.parametrize("edges", ["current", "all"])
def test_score_many_equals_score_bit_for_bit(edges):
    """Fixed candidate lists (re-ranking 2) are scored in one call: the very numbers of
    ``score`` one tagging at a time, with few rows (one by one) and many (from token scores)."""
    train = read_corpus(f"{DEMO_DIR}/train.conll")
    tagger = PerceptronTagger(variant="margin", C=50, epochs=2, edge_templates=edges).fit(train)
    seqs = tagger.prepare(read_corpus(f"{DEMO_DIR}/dev.conll"))
    rng = np.random.default_rng(0)
    w = tagger.weights_ + rng.normal(size=len(tagger.weights_)) * 0.1
    for i in range(min(len(seqs), 12)):
        for k in (1, 40):
            Y, _ = tagger.kbest(seqs, i, k)
            Y = np.concatenate(
                [Y, rng.integers(0, len(tagger.tagset_), size=(2, Y.shape[1])).astype(np.int16)]
            )
            want = [tagger.score(seqs, i, y, weights=w) for y in Y]
            assert tagger.score_many(seqs, i, Y, weights=w).tolist() == want
