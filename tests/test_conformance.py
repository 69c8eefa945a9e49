"""Every learner of the registry (nerstudio.learners) keeps its interface's promises.

One suite, parametrized over the registry's rows, so that a learner added to the registry is
checked without a test of its own: the shapes of what it predicts, a file round trip that
predicts the same, its settings equal to the registry's defaults, two trainings that give the
same arrays, and a cancel check that stops training. Tiny inputs (a few documents of the bundled
demo corpus, a handful of rounds or epochs), one thread.
"""

from __future__ import annotations

import numpy as np
import pytest

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import Cancelled
from nerstudio.learners import RERANKERS, TAGGERS
from nerstudio.rerank.protocol import Reranker
from nerstudio.tagging.protocol import Tagger

# ------------------------------------------------------------------------------------------------
# tiny data


def _documents(path: str, k: int) -> Corpus:
    corpus = read_corpus(path)
    return Corpus(corpus.documents[:k], format=corpus.format, scheme=corpus.scheme)


@pytest.fixture(scope="module")
def corpora() -> tuple[Corpus, Corpus]:
    return _documents(f"{DEMO_DIR}/train.conll", 4), _documents(f"{DEMO_DIR}/dev.conll", 2)


@pytest.fixture(scope="module")
def ranking(corpora):
    """Ranking data of 5-best lists of a small max-ent tagger: (train, dev)."""
    from nerstudio.rerank.features import GlobalFeatures
    from nerstudio.tagging.maxent import MaxEntTagger

    train, dev = corpora
    tagger = MaxEntTagger(max_iter=8, cutoff=1, threads=1).fit(train.sentences)
    gf = GlobalFeatures(min_sentences=1)
    d_train = gf.fit_transform(tagger.nbest(train.sentences, n=5))
    return d_train, gf.transform(tagger.nbest(dev.sentences, n=5))


# small settings for each learner: a few rounds or epochs
RERANKER_QUICK = {
    "boost": {"rounds": 30, "eval_every": 10},
    "kernel": {"max_sentences": 40},
}
PERCEPTRON_QUICK = {"epochs": 2, "beta": 0.5}
TAGGER_QUICK = {
    "maxent": {"max_iter": 5, "cutoff": 1, "threads": 1},
    "perceptron": {"epochs": 2, "C": 10.0, "cutoff": 1},
    "averaged": {"epochs": 2, "C": 10.0, "cutoff": 1},
    "margin": {"epochs": 2, "C": 10.0, "cutoff": 1},
    "candidate": {"epochs": 1, "n": 3, "n_test": 4, "C": 5.0},
    "proposed": {"epochs": 1, "n": 3, "n_test": 4, "C": 5.0},
}


def _reranker(name: str, **extra):
    row = RERANKERS[name]
    quick = RERANKER_QUICK.get(name, PERCEPTRON_QUICK if row.unit == "epoch" else {})
    return row.cls()(**{**row.fixed, **quick, **extra})


def _tagger(name: str):
    row = TAGGERS[name]
    return row.cls()(**{**row.fixed, **TAGGER_QUICK[name]})


# ------------------------------------------------------------------------------------------------
# rerankers


@pytest.mark.parametrize("name", list(RERANKERS))
def test_a_reranker_predicts_one_candidate_per_sentence(name, ranking):
    train, dev = ranking
    learner = _reranker(name)
    assert isinstance(learner, Reranker)
    assert learner.get_params() == {**RERANKERS[name].defaults, **_quick_of(name)}
    assert learner.fit(train, dev) is learner
    scores = learner.decision_function(dev)
    assert scores.shape == (dev.n_candidates,) and np.all(np.isfinite(scores))
    choice = learner.predict(dev)
    assert choice.shape == (len(dev),)
    sizes = np.diff(dev.offsets)
    assert np.all((choice >= 0) & (choice < sizes))
    assert learner.history_ and all(h.unit == RERANKERS[name].unit for h in learner.history_)


def _quick_of(name: str) -> dict:
    row = RERANKERS[name]
    return RERANKER_QUICK.get(name, PERCEPTRON_QUICK if row.unit == "epoch" else {})


@pytest.mark.parametrize("name", list(RERANKERS))
def test_a_reranker_file_predicts_the_same(name, ranking, corpora, tmp_path):
    from nerstudio.rerank.model import RerankerModel, train_reranker
    from nerstudio.tagging.maxent import MaxEntTagger

    train, dev = corpora
    tagger = MaxEntTagger(max_iter=5, cutoff=1, threads=1).fit(train.sentences)
    nb_train, nb_dev = tagger.nbest(train.sentences, n=4), tagger.nbest(dev.sentences, n=4)
    model = train_reranker(nb_train, nb_dev, name, _quick_of(name), {"min_sentences": 1})
    model.save(tmp_path / "m.npz")
    back = RerankerModel.load(tmp_path / "m.npz")
    assert back.learner.get_params() == model.learner.get_params()
    d1, d2 = model.data(nb_dev), back.data(nb_dev)
    assert np.array_equal(model.scores(d1), back.scores(d2))
    assert np.array_equal(model.predict(d1), back.predict(d2))


@pytest.mark.parametrize("name", list(RERANKERS))
def test_a_reranker_trains_the_same_twice(name, ranking):
    train, dev = ranking
    a, b = _reranker(name).fit(train, dev), _reranker(name).fit(train, dev)
    sa, sb = a.state(), b.state()
    assert sorted(sa) == sorted(sb)
    for key in sa:
        assert np.array_equal(np.asarray(sa[key]), np.asarray(sb[key])), key
    assert np.array_equal(a.decision_function(dev), b.decision_function(dev))


@pytest.mark.parametrize("name", list(RERANKERS))
def test_a_reranker_stops_when_cancelled(name, ranking):
    train, dev = ranking
    asked = []

    def cancel() -> bool:
        asked.append(1)
        return True

    with pytest.raises(Cancelled):
        _reranker(name).fit(train, dev, should_cancel=cancel)
    assert asked


# ------------------------------------------------------------------------------------------------
# taggers


@pytest.fixture(scope="module")
def fitted(corpora):
    """Each registry tagger trained once on the tiny corpus."""
    train, _ = corpora
    return {name: _tagger(name).fit_corpus(train) for name in TAGGERS}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TAGGERS))
def test_a_tagger_lists_candidates_of_every_sentence(name, fitted, corpora):
    _, dev = corpora
    tagger = fitted[name]
    assert isinstance(tagger, Tagger)
    params = tagger.get_params()
    row = TAGGERS[name]
    for key, value in {**row.defaults, **row.fixed, **TAGGER_QUICK[name]}.items():
        if key in params and key not in ("n_test",):
            assert params[key] == value, key
    nb = tagger.candidate_lists(dev, n=4)
    assert len(nb) == len(dev.sentences)
    assert [len(w) for w in nb.words] == [len(s.words) for s in dev.sentences]
    assert all(1 <= len(c) <= 4 for c in nb.candidates)
    assert nb.gold is not None and tagger.candidate_lists(dev, n=4, with_gold=False).gold is None


@pytest.mark.parametrize("name", list(TAGGERS))
def test_a_tagger_file_predicts_the_same(name, fitted, corpora, tmp_path):
    from nerstudio.tagging import load_tagger

    _, dev = corpora
    tagger = fitted[name]
    tagger.save(tmp_path / "t.npz")
    back = load_tagger(tmp_path / "t.npz")
    assert type(back) is type(tagger)
    a, b = tagger.candidate_lists(dev, n=4), back.candidate_lists(dev, n=4)
    # the same candidates; the max-ent tagger stores its weights as float32, so its
    # log-probabilities agree to float32 precision
    assert _same_lists(a, b, exact_scores=False)


def _same_lists(a, b, exact_scores: bool = True) -> bool:
    same = np.array_equal if exact_scores else lambda x, y: np.allclose(x, y, rtol=0, atol=1e-5)
    return all(
        np.array_equal(x, y) for x, y in zip(a.candidates, b.candidates, strict=True)
    ) and all(same(x, y) for x, y in zip(a.logprobs, b.logprobs, strict=True))


@pytest.mark.parametrize("name", list(TAGGERS))
def test_a_tagger_trains_the_same_twice(name, fitted, corpora):
    train, dev = corpora
    again = _tagger(name).fit_corpus(train)
    assert _same_lists(fitted[name].candidate_lists(dev, n=4), again.candidate_lists(dev, n=4))


@pytest.mark.parametrize("name", list(TAGGERS))
def test_a_tagger_stops_when_cancelled(name, corpora):
    train, _ = corpora
    asked = []

    def cancel() -> bool:
        asked.append(1)
        return True

    try:
        model = _tagger(name).fit_corpus(train, should_cancel=cancel)
    except Cancelled:
        model = None
    assert asked
    # the perceptron taggers stop and keep what they have, marked as cancelled
    assert model is None or model.cancelled_
