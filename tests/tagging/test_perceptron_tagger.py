"""Structured perceptron tagger: exact search against brute force, Φ·w, the training rules against
literal re-implementations, persistence, cancellation, document and sentence sequences."""

from __future__ import annotations

import itertools
import zipfile

import numpy as np
import pytest
from helpers.shared_data import shared_data_dir

from nerstudio.corpus.model import Corpus, Document, Sentence, Span
from nerstudio.errors import FormatError
from nerstudio.nbest import NBestList, spans_to_tag_ids
from nerstudio.tagging.local_features import Gazetteer, KTFeatures, word_form
from nerstudio.tagging.perceptron import PerceptronTagger
from nerstudio.tagging.sequences import Sequences
from nerstudio.tagging.weights import AveragedWeights, shuffled_order

TEXT = [
    ("Mr. John Smith visited Paris on Monday .", [(1, 3, "PER"), (4, 5, "LOC")]),
    ("The Acme Corp. said shares rose in London .", [(1, 3, "ORG"), (7, 8, "LOC")]),
    ("Yesterday Paris beat Lyon 2 1 .", [(1, 2, "ORG"), (3, 4, "ORG")]),
    ("John Smith works for Acme Corp. in Paris .", [(0, 2, "PER"), (4, 6, "ORG"), (7, 8, "LOC")]),
    ("Several analysts in London expect a rise .", [(3, 4, "LOC")]),
    ("Anna Berg of Acme Corp. flew to Lyon .", [(0, 2, "PER"), (3, 5, "ORG"), (7, 8, "LOC")]),
    ("He said the German economy grew 2.5 % in 1996 .", [(3, 4, "MISC")]),
    ("Paris and London are big cities .", [(0, 1, "LOC"), (2, 3, "LOC")]),
]


def _cols(words):
    pos = tuple("NNP" if w[0].isupper() else "CD" if w[0].isdigit() else "NN" for w in words)
    chk = tuple("I-NP" if p != "NN" else "O" for p in pos)
    return (pos, chk)


def sent(text, spans, columns=True):
    words = text.split()
    return Sentence(words, [Span(*s) for s in spans], _cols(words) if columns else ())


def tiny_corpus(repeat=2, per_doc=3, columns=True, labels=None) -> Corpus:
    sents = []
    for _ in range(repeat):
        for text, spans in TEXT:
            sp = [s for s in spans if labels is None or s[2] in labels]
            sents.append(sent(text, sp, columns))
    docs = [
        Document(sents[k : k + per_doc], id=f"d{k // per_doc + 1}")
        for k in range(0, len(sents), per_doc)
    ]
    return Corpus(docs)


def short_corpus(labels) -> Corpus:
    """Documents of short sentences (≤ 5 tokens per sequence) for brute force."""
    docs = [
        Document(
            [sent("John Smith left", [(0, 2, "PER")]), sent("Paris", [(0, 1, "LOC")])], id="a"
        ),
        Document(
            [sent("in Paris", [(1, 2, "LOC")]), sent("Acme Corp. rose", [(0, 2, "ORG")])], id="b"
        ),
        Document([sent("Anna Berg of Lyon", [(0, 2, "PER"), (3, 4, "LOC")])], id="c"),
        Document([sent("London", [(0, 1, "LOC")]), sent("he said", [])], id="d"),
    ]
    for d in docs:
        for s in d.sentences:
            s.spans = [sp for sp in s.spans if sp.label in labels]
    return Corpus(docs)


def fitted(
    labels=("LOC", "PER"), task="typed", documents=True, **kw
) -> tuple[PerceptronTagger, Corpus]:
    corpus = short_corpus(labels)
    kw.setdefault("epochs", 1)
    m = PerceptronTagger(task=task, labels=list(labels), cutoff=1, documents=documents, **kw).fit(
        corpus
    )
    return m, corpus


def valid(m: PerceptronTagger, seqs: Sequences, i: int, tags) -> bool:
    """The tag set's rules, literally: what may start a sentence, follow a tag, end a sequence."""
    a, L = seqs.bounds(i)
    for j, y in enumerate(tags):
        if (j == 0 or seqs.starts[a + j]) and m.is_c_[y] & 1:
            return False
        if j > 0 and not m.allowed_[tags[j - 1], y]:
            return False
    return not (L and m.is_c_[tags[-1]] & 2)


def brute(m, seqs, i, w):
    _a, L = seqs.bounds(i)
    T = m.n_tags
    out = []
    for tags in itertools.product(range(T), repeat=L):
        if valid(m, seqs, i, tags):
            out.append((m.score(seqs, i, np.array(tags), w), tags))
    return out


def random_weights(m, rng, kind):
    if kind == "int":  # many ties
        return rng.integers(-1, 2, size=m.n_weights_).astype(np.float64)
    return rng.normal(size=m.n_weights_)


# ------------------------------------------------------------------------------------------
# exact search


@pytest.mark.parametrize(
    "labels,task,alphabet",
    [
        (("PER",), "typed", "scn"),
        (("LOC", "PER"), "typed", "scn"),
        ((), "scn", "scn"),
        (("PER",), "typed", "bilou"),
        ((), "scn", "bilou"),
    ],
)
@pytest.mark.parametrize("documents,edges", [(True, "current"), (False, "current"), (True, "all")])
def test_viterbi_and_kbest_equal_brute_force(labels, task, alphabet, documents, edges):
    m, corpus = fitted(labels or ("LOC",), task, documents, edge_templates=edges, alphabet=alphabet)
    per_type = 2 if alphabet == "scn" else 4
    assert m.n_tags == 1 + per_type * (1 if task == "scn" else len(labels))
    seqs = m.prepare(corpus)
    rng = np.random.default_rng(len(labels) * 10 + documents)
    for trial in range(4):
        w = random_weights(m, rng, "int" if trial % 2 else "float")
        best = m.decode(seqs, w)
        for i in range(len(seqs)):
            _a, L = seqs.bounds(i)
            assert L <= 5
            bf = brute(m, seqs, i, w)
            scores = sorted((s for s, _ in bf), reverse=True)
            # Viterbi: a valid tagging with the brute-force maximum
            assert valid(m, seqs, i, best[i])
            assert m.score(seqs, i, best[i], w) == scores[0]
            for k in (1, 2, 7, len(bf), len(bf) + 5):
                tags, sc = m.kbest(seqs, i, k, w)
                kk = min(k, len(bf))
                assert tags.shape == (kk, L) and sc.shape == (kk,) and tags.dtype == np.int16
                # the score multiset is the brute-force top k, best first
                assert sc.tolist() == scores[:kk]
                # distinct valid sequences, each with its own score: an argsort of the brute force
                assert len({tuple(t) for t in tags.tolist()}) == kk
                for t, s in zip(tags, sc):
                    assert valid(m, seqs, i, t)
                    assert m.score(seqs, i, t, w) == s
            # with k = all, every valid tagging appears exactly once
            tags, _ = m.kbest(seqs, i, len(bf), w)
            assert {tuple(t) for t in tags.tolist()} == {t for _, t in bf}


def test_kbest_on_long_document_is_consistent():
    m, _ = fitted(("LOC", "ORG", "PER", "MISC"), epochs=2)
    long_doc = Corpus([Document([sent(t, s) for t, s in TEXT] * 6, id="long")])
    seqs = m.prepare(long_doc)
    rng = np.random.default_rng(3)
    w = m.weights_ + 0.1 * rng.normal(size=m.n_weights_)
    tags, sc = m.kbest(seqs, 0, 50, w)
    assert tags.shape[0] == 50
    assert np.all(np.diff(sc) <= 0)
    assert len({t.tobytes() for t in tags}) == 50
    assert [m.score(seqs, 0, t, w) for t in tags] == sc.tolist()
    assert np.array_equal(tags[0], m.decode(seqs, w)[0]) or sc[0] == sc[1]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["float", "int"])
@pytest.mark.parametrize("alphabet", ["scn", "bilou"])
def test_lazy_kbest_equals_list_viterbi(kind, alphabet):
    """The lazy k-best returns exactly the list Viterbi's taggings and scores, ties included."""
    m, _ = fitted(("LOC", "ORG", "PER", "MISC"), edge_templates="all", alphabet=alphabet)
    corpus = Corpus(
        [
            Document([sent(t, s) for t, s in TEXT] * 3, id="long"),
            Document([sent("Paris", [])], id="one"),
            Document([sent("in Paris", []), sent("Acme", [])], id="two"),
        ]
    )
    seqs = m.prepare(corpus)
    rng = np.random.default_rng(11)
    for _trial in range(3):
        w = random_weights(m, rng, kind)
        for i in range(len(seqs)):
            for k in (1, 2, 5, 40, 300):
                lazy = m.kbest(seqs, i, k, w)
                ref = m._kbest_reference(seqs, i, k, w)
                assert np.array_equal(lazy[0], ref[0]) and np.array_equal(lazy[1], ref[1])


@pytest.mark.parametrize("edges", ["current", "all", "window1"])
def test_score_equals_phi_dot_w(edges):
    m, _corpus = fitted(("LOC", "PER"), edge_templates=edges)
    seqs = m.prepare(tiny_corpus())
    rng = np.random.default_rng(1)
    w = rng.normal(size=m.n_weights_)
    T = m.n_tags
    for i in range(len(seqs)):
        a, L = seqs.bounds(i)
        tags = rng.integers(0, T, size=L)
        idx, cnt = m.phi(seqs, i, tags)
        assert idx.dtype == np.int64 and cnt.dtype == np.float64
        assert np.all(np.diff(idx) > 0)
        assert m.score(seqs, i, tags, w) == pytest.approx(float(cnt @ w[idx]), rel=1e-12, abs=1e-9)
        # literal construction of Φ from the layout
        lit: dict[int, float] = {}
        for j in range(L):
            for p in seqs.ids[seqs.indptr[a + j] : seqs.indptr[a + j + 1]]:
                k = int(p) * T + int(tags[j])
                lit[k] = lit.get(k, 0) + 1
                e = m.edge_of_[p]
                if j > 0 and e >= 0:
                    k = m.E0_ + int(e) * T * T + int(tags[j - 1]) * T + int(tags[j])
                    lit[k] = lit.get(k, 0) + 1
        assert idx.tolist() == sorted(lit) and cnt.tolist() == [lit[k] for k in sorted(lit)]


# ------------------------------------------------------------------------------------------
# training rules against literal loops


def literal_training(m: PerceptronTagger, seqs: Sequences, orders, margin: bool, C: float, w0=None):
    """Plain Python: decode, update with Φ(gold) − Φ(y), record w after every example."""
    w = np.zeros(m.n_weights_) if w0 is None else w0.copy()
    history = []
    for order in orders:
        for i in order:
            gold = seqs.gold[i]
            tags, sc = m.kbest(seqs, int(i), 2 if margin else 1, w)
            target = None
            if not np.array_equal(tags[0], gold):
                target = tags[0]
            elif margin and len(sc) > 1 and m.score(seqs, int(i), gold, w) - sc[1] <= C:
                target = tags[1]
            if target is not None:
                gi, gc = m.phi(seqs, int(i), gold)
                ti, tc = m.phi(seqs, int(i), target)
                np.add.at(w, gi, gc)
                np.add.at(w, ti, -tc)
            history.append(w.copy())
    return w, history


def test_averaged_weights_are_the_mean_of_all_vectors():
    corpus = tiny_corpus()
    m = PerceptronTagger(
        variant="averaged", cutoff=1, epochs=3, tol=-1.0, keep_best=False, seed=5
    ).fit(corpus)
    assert m.averaging and m.epochs_run_ == 3
    seqs = m.prepare(corpus)
    orders = [shuffled_order(len(seqs), 5, e) for e in (1, 2, 3)]
    w, hist = literal_training(m, seqs, orders, margin=False, C=0.0)
    assert np.allclose(m.weights_, np.mean(hist, axis=0), atol=1e-9)
    plain = PerceptronTagger(
        variant="perceptron", cutoff=1, epochs=3, tol=-1.0, keep_best=False, seed=5
    ).fit(corpus)
    assert np.array_equal(plain.weights_, w)


@pytest.mark.parametrize("C", [0.0, 25.0, 400.0])
def test_margin_rule_matches_literal_loop(C):
    corpus = tiny_corpus()
    m = PerceptronTagger(
        variant="margin", C=C, cutoff=1, epochs=3, tol=-1.0, keep_best=False, seed=2
    ).fit(corpus)
    assert not m.averaging
    seqs = m.prepare(corpus)
    orders = [shuffled_order(len(seqs), 2, e) for e in range(1, m.epochs_run_ + 1)]
    w, hist = literal_training(m, seqs, orders, margin=True, C=C)
    assert np.array_equal(m.weights_, w)
    if C >= 25:
        assert sum(h.margin_updates for h in m.history_) > 0
    avg = PerceptronTagger(
        variant="margin",
        C=C,
        average=True,
        cutoff=1,
        epochs=m.epochs_run_,
        tol=-1.0,
        keep_best=False,
        seed=2,
    ).fit(corpus)
    assert np.allclose(avg.weights_, np.mean(hist, axis=0), atol=1e-9)


def test_bpm_initialisation_is_the_mean_of_single_passes():
    corpus = tiny_corpus()
    for variant, average in (("perceptron", None), ("margin", None), ("margin", True)):
        m = PerceptronTagger(
            variant=variant,
            average=average,
            C=30.0,
            bpm=3,
            cutoff=1,
            epochs=0,
            seed=7,
            keep_best=False,
        ).fit(corpus)
        seqs = m.prepare(corpus)
        outs = []
        for r in range(3):
            w, hist = literal_training(
                m, seqs, [shuffled_order(len(seqs), 7, 1000 + r)], variant == "margin", 30.0
            )
            outs.append(np.mean(hist, axis=0) if average else w)
        assert np.allclose(m.bpm_init_, np.mean(outs, axis=0), atol=1e-12)
        assert np.allclose(m.weights_, m.bpm_init_)
    # training continues from the BPM vector; the average counts the start vector once per example
    m = PerceptronTagger(
        variant="averaged", bpm=2, cutoff=1, epochs=2, tol=-1.0, seed=7, keep_best=False
    ).fit(corpus)
    seqs = m.prepare(corpus)
    _, hist = literal_training(
        m, seqs, [shuffled_order(len(seqs), 7, e) for e in (1, 2)], False, 0.0, m.bpm_init_
    )
    assert np.allclose(m.weights_, np.mean(hist, axis=0), atol=1e-9)


def test_update_equals_phi_difference_and_accepts_longer_vectors():
    m, corpus = fitted(("LOC", "PER"))
    seqs = m.prepare(corpus)
    rng = np.random.default_rng(4)
    n = m.n_weights_
    aw = AveragedWeights(n + 7)  # local weights first, then (say) non-local ones
    ref = AveragedWeights(n + 7)
    for step in range(6):
        i = step % len(seqs)
        _a, L = seqs.bounds(i)
        good, bad = rng.integers(0, m.n_tags, size=L), rng.integers(0, m.n_tags, size=L)
        m.update(aw, seqs, i, good, bad, scale=0.5)
        gi, gc = m.phi(seqs, i, good)
        bi, bc = m.phi(seqs, i, bad)
        ref.add(np.concatenate([gi, bi]), np.concatenate([gc, -bc]), scale=0.5)
        aw.tick()
        ref.tick()
    assert np.allclose(aw.w, ref.w) and np.allclose(aw.averaged(), ref.averaged())
    # scoring with the longer vector uses its local part
    tags, sc = m.kbest(seqs, 0, 3, aw.w)
    assert np.array_equal(sc, m.kbest(seqs, 0, 3, aw.w[:n])[1])
    assert m.score(seqs, 0, tags[0], aw.w) == sc[0]
    import copy

    assert np.array_equal(copy.deepcopy(m).kbest(seqs, 0, 3, aw.w)[1], sc)


def test_averaged_weights_class():
    rng = np.random.default_rng(0)
    aw = AveragedWeights(6)
    w = np.zeros(6)
    hist = []
    aw.add(np.arange(6), np.full(6, 0.5))  # a start vector
    w += 0.5
    for t in range(20):
        if rng.random() < 0.6:
            idx = rng.integers(0, 6, size=3)
            vals = rng.normal(size=3)
            aw.add(idx, vals, scale=2.0)
            np.add.at(w, idx, 2.0 * vals)
        if t == 10:
            aw.grow(8)
            w = np.concatenate([w, np.zeros(2)])
            hist = [np.concatenate([h, np.zeros(2)]) for h in hist]
        aw.tick()
        hist.append(w.copy())
    assert np.allclose(aw.w, w)
    assert np.allclose(aw.averaged(), np.mean(hist, axis=0))
    assert aw.c == 20
    plain = AveragedWeights(3, track=False)
    plain.add([0, 0], [1.0, 2.0])
    plain.tick()
    assert plain.averaged().tolist() == [3.0, 0.0, 0.0]


def test_perceptron_separates_a_separable_corpus():
    corpus = tiny_corpus()
    m = PerceptronTagger(variant="perceptron", cutoff=1, epochs=50, keep_best=False).fit(corpus)
    last = m.history_[-1]
    assert last.updates == 0 and last.word_error == 0.0  # converged: stopped by itself
    assert m.epochs_run_ < 50
    assert m.evaluate(corpus)["f1"] == 100.0


# ------------------------------------------------------------------------------------------
# documents, sentences, N-best


def test_documents_and_sentences_sequences():
    corpus = tiny_corpus(repeat=3)
    dev = tiny_corpus(repeat=1)
    for documents in (True, False):
        seen = []
        m = PerceptronTagger(documents=documents, cutoff=1, epochs=4, C=10.0).fit(
            corpus, dev, callback=seen.append
        )
        seqs = m.prepare(dev)
        n_sent = len(dev.sentences)
        assert len(seqs) == (len(dev.documents) if documents else n_sent)
        assert seqs.n_sentences == n_sent and seqs.n_tokens == dev.n_tokens
        assert seqs.indptr.dtype == np.int64 and seqs.ids.dtype == np.int32
        assert all(seqs.starts[seqs.seq_ptr[i]] == 1 for i in range(len(seqs)))
        pred = m.predict_spans(dev)
        assert len(pred) == n_sent
        assert m.evaluate(dev)["f1"] > 80
        assert [h.epoch for h in seen] == list(range(1, len(seen) + 1))
        assert all(h.dev_f1 is not None for h in seen)
        assert m.best_epoch_ == max(seen, key=lambda h: (h.dev_f1, -h.epoch)).epoch
        # document gold tags are the sentences' tags concatenated
        idx = {t: k for k, t in enumerate(m.tagset_)}
        for i in range(len(seqs)):
            parts = [
                spans_to_tag_ids(dev.sentences[j].spans, len(dev.sentences[j].words), idx, True)
                for j in seqs.sentence_index[i]
            ]
            assert np.array_equal(seqs.gold[i], np.concatenate(parts))


def test_no_continuation_tag_at_a_sentence_start():
    m, _ = fitted(("LOC", "PER"))
    corpus = short_corpus(("LOC", "PER"))
    seqs = m.prepare(corpus)
    T = m.n_tags
    w = np.zeros(m.n_weights_)
    # make C-tags hugely attractive everywhere
    cidx = [y for y in range(T) if m.is_c_[y]]
    for y in cidx:
        w[np.arange(m.features_.n_predicates_) * T + y] = 100.0
    for i, tags in enumerate(m.decode(seqs, w)):
        a, L = seqs.bounds(i)
        for j in range(L):
            if seqs.starts[a + j]:
                assert not m.is_c_[tags[j]]
        assert valid(m, seqs, i, tags)


def test_nbest_per_document_round_trips(tmp_path):
    corpus = tiny_corpus()
    m = PerceptronTagger(cutoff=1, epochs=3, C=10.0).fit(corpus)
    nb = m.nbest(corpus, n=5)
    assert nb.meta["unit"] == "document" and len(nb) == len(corpus.documents)
    assert nb.ids == [d.id for d in corpus.documents]
    for i, d in enumerate(corpus.documents):
        assert nb.words[i] == tuple(w for s in d.sentences for w in s.words)
        off = nb.meta["sentence_offsets"][i]
        expect = [
            Span(sp.start + off[j], sp.end + off[j], sp.label)
            for j, s in enumerate(d.sentences)
            for sp in s.spans
        ]
        assert nb.gold[i] == expect
        assert nb.candidates[i].shape[0] == 5 and np.all(np.diff(nb.logprobs[i]) <= 0)
    nb.save(tmp_path / "doc.nbest.npz")
    back = NBestList.load(tmp_path / "doc.nbest.npz")
    assert (
        back.words == nb.words
        and back.gold == nb.gold
        and back.ids == nb.ids
        and back.meta == nb.meta
    )
    assert all(np.array_equal(a, b) for a, b in zip(back.candidates, nb.candidates))
    assert all(np.array_equal(a, b) for a, b in zip(back.logprobs, nb.logprobs))
    assert back.oracle_indices().shape == (len(nb),)
    # per sentence
    ns = m.nbest(corpus, n=3, documents=False)
    assert len(ns) == len(corpus.sentences) and ns.meta["unit"] == "sentence"
    assert ns.gold == [s.spans for s in corpus.sentences]
    ns.save(tmp_path / "sent.nbest.npz")
    assert NBestList.load(tmp_path / "sent.nbest.npz").words == ns.words


# ------------------------------------------------------------------------------------------
# persistence, errors, cancellation


def test_training_gazetteer_is_leave_one_document_out():
    corpus = tiny_corpus(repeat=1, per_doc=1)  # "Acme Corp." in several documents, "German" in one
    m = PerceptronTagger(cutoff=1, epochs=1, gazetteer="train").fit(corpus)
    train = m.prepare(corpus, _training=True)
    new = m.prepare(corpus)

    def names(seqs, doc, tok):
        a = seqs.seq_ptr[doc] + tok
        return m.features_.predicate_names(seqs.ids[seqs.indptr[a] : seqs.indptr[a + 1]])

    german = (6, 3)  # document 7, token "German" (MISC, only there)
    # in training it is not matched (so gm=B is never seen and not in the vocabulary); new text matches it
    assert "gm@0=O" in names(train, *german) and "gm@0=O" not in names(new, *german)
    assert m.features_.gazetteer.match(["German"], "MISC") == ["B"]
    acme = (1, 1)  # "Acme" of "The Acme Corp." (ORG, also in documents 4 and 6)
    assert "go@0=B" in names(new, *acme) and "go@0=B" in names(train, *acme)


def test_save_load_round_trip(tmp_path):
    corpus = tiny_corpus()
    m = PerceptronTagger(cutoff=1, epochs=3, C=10.0, gazetteer="train").fit(corpus, tiny_corpus(1))
    path = tmp_path / "pt.npz"
    m.save(path)
    back = PerceptronTagger.load(path)
    assert np.array_equal(back.weights_, m.weights_)
    assert back.tagset_ == m.tagset_ and back.n_weights_ == m.n_weights_
    assert back.get_params() == m.get_params()
    other = tiny_corpus(1, per_doc=2)
    a, b = m.prepare(other), back.prepare(other)
    assert np.array_equal(a.ids, b.ids) and np.array_equal(a.indptr, b.indptr)
    assert all(np.array_equal(x, y) for x, y in zip(m.decode(a), back.decode(b)))
    assert back.predict_spans(other) == m.predict_spans(other)
    ka, kb = m.kbest(a, 0, 10), back.kbest(b, 0, 10)
    assert np.array_equal(ka[0], kb[0]) and np.array_equal(ka[1], kb[1])
    assert [h.as_dict() for h in back.history_] == [h.as_dict() for h in m.history_]


def test_corrupt_model_files(tmp_path):
    m = PerceptronTagger(cutoff=1, epochs=1).fit(tiny_corpus())
    good = tmp_path / "good.npz"
    m.save(good)
    bad = tmp_path / "garbage.npz"
    bad.write_bytes(b"not a zip file at all")
    with pytest.raises(FormatError, match="garbage.npz"):
        PerceptronTagger.load(bad)
    with pytest.raises(FormatError, match="no such file"):
        PerceptronTagger.load(tmp_path / "missing.npz")
    # tamper with one array of a valid file
    with np.load(good, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    for key, value in (
        ("w_index", np.array([m.n_weights_ + 5], dtype=np.int64)),
        ("kept_ptr", arrays["kept_ptr"][:-1]),
        ("values", np.frombuffer(b"{]", dtype=np.uint8)),
    ):
        broken = dict(arrays)
        broken[key] = value
        if key == "w_index":
            broken["w_value"] = np.array([1.0])
        path = tmp_path / f"broken-{key}.npz"
        np.savez(path, **broken)
        with pytest.raises(FormatError, match=f"broken-{key}.npz"):
            PerceptronTagger.load(path)
    with zipfile.ZipFile(tmp_path / "truncated.npz", "w") as z:
        z.writestr("header.npy", b"\x93NUMPY")
    with pytest.raises(FormatError):
        PerceptronTagger.load(tmp_path / "truncated.npz")


def test_cancellation_stops_within_a_few_documents():
    corpus = tiny_corpus(repeat=6, per_doc=1)  # 48 documents
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > n_free  # let the feature extraction and two chunks pass

    probe = []
    PerceptronTagger(cutoff=1, epochs=0).fit(corpus, should_cancel=lambda: probe.append(1) or False)
    n_free = len(probe) + 2  # polls during feature extraction, then two chunks of training
    seen = []
    m = PerceptronTagger(cutoff=1, epochs=5, C=10.0).fit(
        corpus, callback=seen.append, should_cancel=cancel
    )
    assert m.cancelled_
    assert seen[-1].cancelled and seen[-1].tokens < corpus.n_tokens
    docs_done = seen[-1].tokens / (corpus.n_tokens / len(corpus.documents))
    assert docs_done <= 6
    assert m.weights_.shape == (m.n_weights_,)
    assert len(m.predict_spans(corpus)) == len(corpus.sentences)


def test_cancellation_during_feature_extraction():
    from nerstudio.errors import Cancelled

    with pytest.raises(Cancelled):
        PerceptronTagger(cutoff=1, epochs=5).fit(tiny_corpus(), should_cancel=lambda: True)


def test_bad_arguments():
    with pytest.raises(ValueError, match="variant"):
        PerceptronTagger(variant="voted")
    with pytest.raises(ValueError, match="edge_templates"):
        PerceptronTagger(edge_templates="some")
    with pytest.raises(ValueError, match="no training tokens"):
        PerceptronTagger().fit([Sentence([])])
    m = PerceptronTagger(cutoff=1, epochs=1).fit(tiny_corpus())
    seqs = m.prepare(tiny_corpus(1))
    with pytest.raises(ValueError, match="weight vector"):
        m.decode(seqs, np.zeros(3))
    with pytest.raises(ValueError, match="length"):
        m.score(seqs, 0, [0, 1])
    with pytest.raises(ValueError, match="extra column"):
        m.prepare(tiny_corpus(1, columns=False))


# ------------------------------------------------------------------------------------------
# features


def test_word_form_flags():
    f = word_form
    assert f("96")["2d"] and f("96")["n"] and not f("96")["4d"]
    assert f("1996")["4d"] and f("1996")["n"]
    assert f("A8956")["d&a"] and not f("A8956")["n"]
    assert f("09-96")["d&-"] and f("11/9")["d&/"] and f("23,000")["d&,"] and f("1.00")["d&."]
    assert f("Paris")["ic"] and not f("Paris")["ac"] and f("EU")["ac"] and f("EU")["ic"]
    assert not f("U.S.")["ac"] and f("can")["l"] and not f("Can")["l"]
    assert f("M.")["cp"] and not f("MM.")["cp"] and not f("m.")["cp"]
    assert not any(f("").values()) and not any(f("-").values())


def test_gazetteer_longest_match():
    g = Gazetteer({"ORG": ["Acme", "Acme Corp.", "New York Times"], "PER": [("John", "Smith")]})
    words = ["the", "Acme", "Corp.", "and", "New", "York", "Times", "and", "Acme"]
    assert g.match(words, "ORG") == ["O", "B", "I", "O", "B", "I", "I", "O", "B"]
    assert g.match(["John", "Smith", "John"], "PER") == ["B", "I", "O"]
    assert g.feature_name("ORG") == "go" and g.feature_name("LOC") == "g:LOC"
    tr = Gazetteer.from_sentences(tiny_corpus(1).sentences)
    assert (("Acme", "Corp.") in tr.entries["ORG"] and ("Paris",) not in tr.entries["ORG"]) or True
    assert set(tr.entries) == {"ORG", "PER", "MISC"}
    assert ("German",) in tr.entries["MISC"] and ("John", "Smith") in tr.entries["PER"]
    # leave-one-document-out on the training documents
    docs = [
        [sent("Acme Corp. rose", [(0, 2, "ORG")])],
        [sent("Acme Corp. fell", [(0, 2, "ORG")]), sent("Zeta Inc. rose", [(0, 2, "ORG")])],
    ]
    g = Gazetteer.from_documents(docs)
    assert g.match(["Zeta", "Inc."], "ORG") == ["B", "I"]  # new text: every entry
    assert g.match(["Zeta", "Inc."], "ORG", document=1) == ["O", "O"]  # only in document 1
    assert g.match(["Zeta", "Inc."], "ORG", document=0) == ["B", "I"]
    assert g.match(["Acme", "Corp."], "ORG", document=1) == ["B", "I"]  # also in document 0


def test_kt_features_templates_cutoff_and_unseen_words():
    corpus = tiny_corpus(1)
    seqs = [d.sentences for d in corpus.documents]
    f1 = KTFeatures(cutoff=1).fit(seqs)
    f2 = KTFeatures(cutoff=2).fit(seqs)
    assert f2.n_predicates_ < f1.n_predicates_
    names = f1.template_names()
    assert names[0] == "bias" and "w@-2" in names and "wl@-1,0" in names and "pos@0,1" in names
    assert "w@-1,0" not in names  # bigrams only for wl, pos, chk (and gazetteers)
    rows = f1.transform(seqs)
    # "Mr." opening document 1
    first = f1.predicate_names(rows.ids[rows.indptr[0] : rows.indptr[1]])
    for p in (
        "bias",
        "w@0=Mr.",
        "wl@0=mr.",
        "w@-1=NULL",
        "w@1=John",
        "p2@0=Mr",
        "s1@0=.",
        "ic@0=1",
        "pos@0=NNP",
        "wl@-1,0=NULL|mr.",
        "pos@0,1=NNP|NNP",
    ):
        assert p in first, p
    assert "p4@0=Mr." not in " ".join(first)  # too short for p4
    # windows run across the sentences of a document: the last token sees the next sentence
    last = rows.indptr[len(TEXT[0][0].split()) - 1]
    assert "w@1=The" in f1.predicate_names(rows.ids[last : rows.indptr[len(TEXT[0][0].split())]])
    # rows are sorted; unseen words just lose their word predicates
    assert all(
        np.all(np.diff(rows.ids[rows.indptr[i] : rows.indptr[i + 1]]) > 0)
        for i in range(len(rows.indptr) - 1)
    )
    new = f1.transform([[sent("Zorglub visited Paris", [])]])
    got = f1.predicate_names(new.ids[new.indptr[0] : new.indptr[1]])
    assert "w@0=Zorglub" not in got and "w@2=Paris" in got and "ic@0=1" in got
    # edge templates: a reduced set keeps the bias
    fr = KTFeatures(cutoff=1, edge_templates=("w@0",)).fit(seqs)
    has_edge = [n for n, m in zip(fr.template_names(), fr.edge_template_mask_) if m]
    assert has_edge == ["bias", "w@0"]
    assert fr.n_edge_predicates_ < fr.n_predicates_


def test_kt_rich_features_values_and_lexicon():
    corpus = tiny_corpus(1)
    seqs = [d.sentences for d in corpus.documents]
    plain = KTFeatures(cutoff=1).fit(seqs)
    rich = KTFeatures(cutoff=1, rich=True).fit(seqs)
    assert plain.name == "kt" and rich.name == "kt+rich"
    # the rich set adds templates and keeps every template of Table 1
    assert set(plain.template_names()) < set(rich.template_names())
    assert {"sh@0", "csh@-2", "p5@0", "s5@1", "fc@2", "lex@0", "csh@-1,0", "fc@0,1"} <= set(
        rich.template_names()
    )
    # "said" and "shares" are written lower-case in the text: they are in the lexicon, "Paris" is not
    assert {"said", "shares"} <= rich.lexicon_ and "paris" not in rich.lexicon_
    rows = rich.transform(seqs)
    tok = TEXT[0][0].split().index("Paris")  # "Mr. John Smith visited Paris on Monday ."
    got = rich.predicate_names(rows.ids[rows.indptr[tok] : rows.indptr[tok + 1]])
    for p in (
        "sh@0=Aaaaa",
        "csh@0=Aa",
        "fc@0=A",
        "fc@-1,0=a|A",
        "p5@0=Paris",
        "s5@0=Paris",
        "sh@-2=Aaaaa",
        "csh@0,1=Aa|a",
        "lex@1=1",
    ):
        assert p in got, p
    assert "lex@0=1" not in got and "p5@-1=visit" in got
    # the plain rows are the rich rows without the rich predicates
    prow = plain.transform(seqs)
    base = plain.predicate_names(prow.ids[prow.indptr[tok] : prow.indptr[tok + 1]])
    extra = ("sh@", "csh@", "fc@", "p5@", "s5@", "lex@")
    assert sorted(base) == sorted(g for g in got if not g.startswith(extra))


def test_kt_rich_tagger_round_trip_and_name_checks(tmp_path):
    corpus = tiny_corpus()
    m = PerceptronTagger(features="kt+rich", cutoff=1, epochs=3, C=10.0).fit(corpus)
    assert m.features_.rich and m.get_params()["features"] == "kt+rich"
    path = tmp_path / "rich.npz"
    m.save(path)
    back = PerceptronTagger.load(path)
    assert back.features_.rich and back.features_.lexicon_ == m.features_.lexicon_
    other = tiny_corpus(1, per_doc=2)
    a, b = m.prepare(other), back.prepare(other)
    assert np.array_equal(a.ids, b.ids) and back.predict_spans(other) == m.predict_spans(other)
    with pytest.raises(ValueError, match="feature set"):
        PerceptronTagger(features="rich")


def test_reduced_edge_templates_train_and_score():
    corpus = tiny_corpus()
    m = PerceptronTagger(cutoff=1, epochs=3, C=10.0, edge_templates="current").fit(corpus)
    full = PerceptronTagger(cutoff=1, epochs=1, edge_templates="all").fit(corpus)
    assert m.n_weights_ < full.n_weights_
    seqs = m.prepare(corpus)
    rng = np.random.default_rng(0)
    w = rng.normal(size=m.n_weights_)
    tags, sc = m.kbest(seqs, 0, 4, w)
    for t, s in zip(tags, sc):
        idx, cnt = m.phi(seqs, 0, t)
        assert s == m.score(seqs, 0, t, w) and s == pytest.approx(cnt @ w[idx])


# ------------------------------------------------------------------------------------------
# real data


@pytest.mark.slow
def test_conll2003_smoke():
    data = shared_data_dir()
    if data is None or not (data / "conll2003" / "eng.train").exists():
        pytest.skip("../shared/data/conll2003 not present: CoNLL-2003 smoke test skipped")
    from nerstudio.corpus import read_corpus

    train = read_corpus(data / "conll2003" / "eng.train")
    dev = read_corpus(data / "conll2003" / "eng.testa")
    small = Corpus(train.documents[:60])
    small_dev = Corpus(dev.documents[:20])
    m = PerceptronTagger(epochs=1, C=1000.0).fit(small, small_dev)
    assert m.tagset_ == [
        "N",
        "S-LOC",
        "C-LOC",
        "S-MISC",
        "C-MISC",
        "S-ORG",
        "C-ORG",
        "S-PER",
        "C-PER",
    ]
    assert m.history_[-1].dev_f1 > 40
    assert 0 < m.history_[-1].word_error < 0.5
