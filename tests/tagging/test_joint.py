"""Kazama & Torisawa's joint local/non-local training against a literal re-implementation."""

import itertools
from collections import Counter

import numpy as np
import pytest

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Corpus, Document, Sentence, Span
from nerstudio.demo import DEMO_DIR
from nerstudio.nbest import tags_to_spans
from nerstudio.tagging.joint import JointTagger, sentence_spans
from nerstudio.tagging.joint_local import first_model_lists
from nerstudio.tagging.perceptron import PerceptronTagger
from nerstudio.text.nonlocal_features import NonLocalFeatures

DEMO = str(DEMO_DIR)


def toy_corpus(seed=0, docs=6):
    """Short documents that repeat names, so the non-local features have something to say."""
    rng = np.random.default_rng(seed)
    names = [("Smith", "PER"), ("Paris", "LOC"), ("Acme", "ORG"), ("Jones", "PER")]
    fill = ["said", "in", "the", ",", "and", "met"]
    out = []
    for d in range(docs):
        sents = []
        for _ in range(3):
            words, spans = [], []
            for _ in range(int(rng.integers(2, 5))):
                if rng.random() < 0.45:
                    w, lab = names[int(rng.integers(len(names)))]
                    spans.append(Span(len(words), len(words) + 1, lab))
                    words.append(w)
                else:
                    words.append(fill[int(rng.integers(len(fill)))])
            sents.append(Sentence(words, spans))
        out.append(Document(sents, id=f"d{d}"))
    return Corpus(out)


def literal_train(algorithm, corpus, n, C, epochs, errors=None):
    """Algorithm 4.1 / 4.2 spelt out with dense vectors and dict-based non-local features, in
    file order, without averaging; candidates come from the tagger's exact k-best (tested
    against brute force in test_perceptron_tagger)."""
    vocab = PerceptronTagger(epochs=0).fit(corpus)
    seqs = vocab.prepare(corpus)
    nl = NonLocalFeatures()
    wl = np.zeros(vocab.n_weights_)
    wg: dict[str, float] = {}

    def phi_l(i, y):
        v = np.zeros(vocab.n_weights_)
        idx, val = vocab.phi(seqs, i, y)
        v[idx] = val
        return v

    def phi_g(i, y):
        return nl.strings(seqs.words[i], tags_to_spans(y, vocab.tagset_))

    def total(i, y):
        return float(phi_l(i, y) @ wl) + sum(c * wg.get(s, 0.0) for s, c in phi_g(i, y).items())

    def update(i, gold, y, local_only=False):
        nonlocal wl
        wl = wl + phi_l(i, gold) - phi_l(i, y)
        if not local_only:
            for s, c in (Counter(phi_g(i, gold)) - Counter()).items():
                wg[s] = wg.get(s, 0.0) + c
            for s, c in phi_g(i, y).items():
                wg[s] = wg.get(s, 0.0) - c

    for _ in range(epochs):
        wrong = tokens = 0
        for i in range(len(seqs)):
            gold = seqs.gold[i]
            Y, ls = vocab.kbest(seqs, i, n, weights=wl)
            tot = [total(i, y) for y in Y]
            order = sorted(range(len(Y)), key=lambda j: -tot[j])
            wrong += int(np.sum(np.asarray(Y[order[0]]) != np.asarray(gold)))
            tokens += len(gold)
            sg = total(i, gold)
            same = [bool(np.array_equal(y, gold)) for y in Y]
            if not same[order[0]] and sg - tot[order[0]] <= C:
                update(i, gold, Y[order[0]])
            elif len(Y) > 1 and not same[order[1]] and sg - tot[order[1]] <= C:
                update(i, gold, Y[order[1]])
            elif algorithm == "proposed":
                if not same[0]:
                    update(i, gold, Y[0], local_only=True)
                elif len(Y) > 1 and float(phi_l(i, gold) @ wl) - ls[1] <= C:
                    update(i, gold, Y[1], local_only=True)
        if errors is not None:
            errors.append(wrong / tokens)
    return wl, wg


@pytest.mark.parametrize("algorithm", ["candidate", "proposed"])
def test_updates_equal_literal_algorithm(algorithm):
    corpus = toy_corpus()
    jt = JointTagger(
        algorithm, n=4, n_test=4, C=3.0, epochs=3, average=False, shuffle=False, keep_best=False
    ).fit(corpus)
    errors = []
    wl, wg = literal_train(algorithm, corpus, n=4, C=3.0, epochs=3, errors=errors)
    np.testing.assert_allclose(jt.wl_, wl)
    # the per-word error of each pass (the stopping rule's quantity) is the literal loop's
    assert [h.word_error for h in jt.history_] == pytest.approx(errors)
    got = {s: float(jt.wg_[j]) for s, j in jt.nl_.vocabulary.items() if jt.wg_[j] != 0}
    assert got == pytest.approx({s: v for s, v in wg.items() if v != 0})
    assert any(h.updates_total for h in jt.history_)
    if algorithm == "candidate":
        assert all(h.updates_local == 0 for h in jt.history_)


def test_stops_on_per_word_error_change_not_on_update_counts(monkeypatch):
    """K&T §6.1: stop once the relative change of the per-word error is below tol for patience
    epochs in a row; a constant number of updates with a moving error does not stop training."""
    wrong = iter([300, 200, 200, 200, 200, 150, 150] + [100] * 20)

    def fake_epoch(self, docs, order, wl, wg, should_cancel):
        return 7, 3, 0, False, next(wrong), 1000  # always 10 updates

    monkeypatch.setattr(JointTagger, "_epoch", fake_epoch)
    jt = JointTagger("proposed", n=3, epochs=30).fit(toy_corpus(3, docs=3))
    # errors 0.3 0.2 0.2 0.2 0.2: three quiet epochs after the second, stop after the fifth
    assert [h.word_error for h in jt.history_] == pytest.approx([0.3, 0.2, 0.2, 0.2, 0.2])
    wrong = iter([300, 200, 201, 202, 203, 204, 205, 206])
    jt = JointTagger("proposed", n=3, epochs=8, tol=1e-4).fit(toy_corpus(3, docs=3))
    assert len(jt.history_) == 8  # the error keeps moving by ~0.5%: no stop
    wrong = iter([300, 200, 201, 202, 203, 204, 205, 206])
    jt = JointTagger("proposed", n=3, epochs=8, tol=1e-2, patience=2).fit(toy_corpus(3, docs=3))
    assert len(jt.history_) == 4  # changes 0.33, 0.005, 0.005: quiet twice after the second epoch


def test_averaged_weights_are_the_mean_over_documents(monkeypatch):
    """The lazy average equals the plain mean of the weight vectors after every document."""
    from nerstudio.tagging import weights

    snaps = {}
    real_tick = weights.AveragedWeights.tick

    def tick(self, n=1):
        real_tick(self, n)
        snaps.setdefault(id(self), []).append(self.w.copy())

    monkeypatch.setattr(weights.AveragedWeights, "tick", tick)
    jt = JointTagger("proposed", n=3, C=2.0, epochs=2, average=True, shuffle=True, keep_best=False)
    jt.fit(toy_corpus(1, docs=5))
    local, nonlocal_ = list(snaps.values())
    assert len(local) == 10
    np.testing.assert_allclose(jt.wl_, np.mean(local, axis=0), atol=1e-12)
    k = jt.nl_.n_features
    np.testing.assert_allclose(
        jt.wg_,
        np.mean([w[:k] if len(w) >= k else np.pad(w, (0, k - len(w))) for w in nonlocal_], axis=0),
        atol=1e-12,
    )


@pytest.mark.slow
def test_demo_corpus_all_algorithms(tmp_path):
    train = read_corpus(f"{DEMO}/train.conll")
    dev = read_corpus(f"{DEMO}/dev.conll")
    first = PerceptronTagger(variant="margin", C=50, epochs=3).fit(train)
    seqs = first.prepare(train)
    lists = first_model_lists(first, seqs, 5)  # not cross-validated: enough to exercise the code
    stats = []
    for algo in ("candidate", "proposed", "reranking1", "reranking2"):
        jt = JointTagger(algo, n=5, n_test=8, C=5.0, epochs=2)
        jt.fit(train, dev, callback=stats.append, first=first, train_lists=lists)
        spans = jt.predict_spans(dev)
        assert len(spans) == len(dev.sentences)
        assert jt.history_ and jt.history_[-1].dev_f1 is not None
        nb = jt.nbest(dev, n=4)
        assert len(nb) == len(dev.documents) and nb.n_candidates(0) <= 4
        terms = jt.nonlocal_terms(nb.words[0], nb.spans(0, 0))
        assert all(isinstance(t[0], str) for t in terms)
        _doc, sent, origin = jt.sentence_nbest(dev, n=4)
        assert len(sent) == len(dev.sentences) and [len(o) for o in origin] == [
            sent.n_candidates(k) for k in range(len(sent))
        ]
        assert sent.words == [tuple(s.words) for s in dev.sentences]
    with pytest.raises(ValueError, match="needs the first model"):
        JointTagger("reranking1").fit(train)


def test_sentence_spans_cut_at_boundaries():
    tagset = ["N", "S-PER", "C-PER"]
    tags = np.array([1, 2, 2, 0])  # an entity over the boundary after token 1
    assert sentence_spans(tags, [0, 2, 4], tagset) == [[Span(0, 2, "PER")], [Span(0, 1, "PER")]]


def test_cancel_stops_early():
    corpus = toy_corpus(2, docs=8)
    calls = []

    def cancel():
        calls.append(1)
        return True

    jt = JointTagger("proposed", n=3, epochs=5).fit(corpus, should_cancel=cancel)
    assert len(jt.history_) == 0 and jt.cancelled_ and jt.wl_ is not None


def test_sentence_spans_equal_per_sentence_decoding():
    rng = np.random.default_rng(3)
    tagset = ["N", "S-LOC", "C-LOC", "S-PER", "C-PER"]
    for _ in range(200):
        L = int(rng.integers(1, 12))
        tags = rng.integers(0, len(tagset), L)
        cuts = sorted(set(rng.integers(1, L, int(rng.integers(0, 3))).tolist())) if L > 1 else []
        offs = [0] + cuts + [L]
        want = [tags_to_spans(tags[a:b], tagset) for a, b in itertools.pairwise(offs)]
        assert sentence_spans(tags, offs, tagset) == want


def test_split_document_lists_keeps_best_distinct_slices():
    from nerstudio.nbest import NBestList
    from nerstudio.tagging.joint import split_document_lists

    tagset = ["N", "S-PER", "C-PER"]
    # sentences [0,2) and [2,4)
    Y = np.array([[1, 0, 0, 1], [1, 0, 1, 2], [0, 0, 0, 1]], dtype=np.int16)
    doc = NBestList(
        tagset,
        [("a", "b", "c", "d")],
        [Y],
        [np.array([3.0, 2.0, 1.0])],
        [[Span(0, 1, "PER"), Span(2, 4, "PER")]],
    )
    nb, origin = split_document_lists(doc, [[0, 2, 4]])
    assert len(nb) == 2 and origin == [[0, 2], [0, 1]]
    np.testing.assert_array_equal(nb.candidates[0], [[1, 0], [0, 0]])
    np.testing.assert_array_equal(nb.candidates[1], [[0, 1], [1, 2]])
    assert nb.logprobs[1].tolist() == [3.0, 2.0]
    assert nb.gold == [[Span(0, 1, "PER")], [Span(0, 2, "PER")]]
    assert nb.words == [("a", "b"), ("c", "d")]


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["proposed", "reranking1", "reranking2"])
def test_save_load_predicts_the_same(tmp_path, algorithm):
    from nerstudio.errors import FormatError

    train = read_corpus(f"{DEMO}/train.conll")
    dev = read_corpus(f"{DEMO}/dev.conll")
    first = lists = None
    if algorithm.startswith("reranking"):
        first = PerceptronTagger(variant="margin", C=50, epochs=2).fit(train)
        lists = first_model_lists(first, first.prepare(train), 4)
    jt = JointTagger(algorithm, n=4, n_test=6, C=5.0, epochs=2).fit(
        train, first=first, train_lists=lists
    )
    path = tmp_path / "joint.npz"
    jt.save(path)
    back = JointTagger.load(path)
    assert back.predict_spans(dev) == jt.predict_spans(dev)
    np.testing.assert_array_equal(back.wg_, jt.wg_)
    assert back.nl_.vocabulary == jt.nl_.vocabulary and back.history_ == jt.history_
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(FormatError, match="joint.npz"):
        JointTagger.load(path)


def test_bpm_starts_from_the_mean_of_single_passes(monkeypatch):
    """epochs=0 leaves the BPM starting point: the mean of three single shuffled passes, each
    from zero (every pass is an ordinary epoch, checked against the literal algorithm above)."""
    outputs, starts = [], []
    real = JointTagger._epoch

    def spy(self, docs, order, wl, wg, should_cancel):
        starts.append(not wl.w.any())
        out = real(self, docs, order, wl, wg, should_cancel)
        outputs.append(wl.w.copy())
        return out

    monkeypatch.setattr(JointTagger, "_epoch", spy)
    jt = JointTagger("proposed", n=3, C=2.0, epochs=0, bpm=3, average=False, keep_best=False)
    jt.fit(toy_corpus(4, docs=5))
    assert starts == [True, True, True] and len(outputs) == 3
    assert not np.allclose(outputs[0], outputs[1])  # the passes saw different orders
    np.testing.assert_allclose(jt.wl_, np.mean(outputs, axis=0), atol=1e-12)


def test_cached_dev_vectors_follow_the_growing_vocabulary():
    """Dev documents cache each candidate's ids; when training adds strings to the vocabulary
    the cached ids are mapped anew, so a cached vector always equals a fresh one."""
    train = toy_corpus(3)
    jt = JointTagger("proposed", n=4, n_test=5, C=1.0, epochs=1).fit(train)
    docs = jt.documents(toy_corpus(4, docs=3))
    Y, _ = docs.local.candidates(0, 5, jt.wl_)
    voc = jt.nl_.vocabulary
    strings = [jt.nl_.strings(docs.index[0], sp) for sp in docs.spans(Y)]

    def fresh():
        out = []
        for st in strings:
            pairs = sorted((voc[s], c) for s, c in st.items() if s in voc)
            out.append(([p[0] for p in pairs], [p[1] for p in pairs]))
        return out

    def cached():
        return [(list(a), list(b)) for a, b in docs.nonlocal_vectors(0, Y)]

    assert cached() == fresh()
    dropped = sorted({s for st in strings for s in st if s in voc})
    assert dropped, "the toy document should fire known non-local features"
    for s in dropped:  # a vocabulary without them, then with them again under new ids
        del voc[s]
    assert cached() == fresh()
    for s in dropped:
        voc[s] = len(voc)
    assert cached() == fresh()


@pytest.mark.parametrize("algorithm", ["candidate", "proposed"])
def test_a_model_kept_from_an_earlier_epoch_predicts_saves_and_loads(tmp_path, algorithm):
    """The non-local vocabulary grows while training; the model kept from an earlier epoch (the
    best on dev) had fewer weights than the final vocabulary has features, so predicting a
    document with a feature found later raised IndexError and its file could not be read back."""
    train, dev = toy_corpus(3, docs=4), toy_corpus(103, docs=3)
    jt = JointTagger(algorithm, n=3, C=1.0, epochs=6, tol=0).fit(train, dev)
    assert jt.best_epoch_ < len(jt.history_)  # the scenario: an earlier epoch kept …
    assert jt.nl_.n_features > int(np.flatnonzero(jt.wg_).max(initial=-1)) + 1  # … features after
    assert len(jt.wg_) == jt.nl_.n_features
    pred = jt.predict_spans(train)  # the training documents hold the later features
    path = tmp_path / "joint.npz"
    jt.save(path)
    back = JointTagger.load(path)
    assert back.predict_spans(train) == pred and back.predict_spans(dev) == jt.predict_spans(dev)
    np.testing.assert_array_equal(back.wg_, jt.wg_)


def test_a_model_file_with_fewer_non_local_weights_than_features_is_read(tmp_path):
    """Files written before the weights were padded to the vocabulary: the missing weights are
    the features found after the kept epoch, which weigh nothing; more weights than features is
    still refused."""
    from nerstudio.errors import FormatError
    from nerstudio.persist import load_npz, save_npz
    from nerstudio.tagging import joint

    jt = JointTagger("proposed", n=3, C=1.0, epochs=2).fit(toy_corpus(3, docs=4))
    path = tmp_path / "joint.npz"
    jt.save(path)
    head, arrays = load_npz(path, joint.MODEL_FORMAT, joint.MODEL_VERSION, "a joint model")
    wg = arrays["wg"]
    short = {k: arrays[k] for k in arrays}
    short["wg"] = wg[: len(wg) // 2]
    save_npz(path, head, short)
    back = JointTagger.load(path)
    assert len(back.wg_) == len(wg) and not back.wg_[len(wg) // 2 :].any()
    short["wg"] = np.concatenate([wg, [1.0]])
    save_npz(path, head, short)
    with pytest.raises(FormatError, match="non-local weights"):
        JointTagger.load(path)
