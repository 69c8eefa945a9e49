"""Learning from corrections: the max-ent tagger's warm start (checked against a cold start, on
a tiny example where both must reach the one optimum of a convex objective) and the perceptron
tagger's per-sentence updates."""

import numpy as np
import pytest

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Sentence, Span
from nerstudio.demo import DEMO_DIR
from nerstudio.tagging.maxent import MaxEntTagger
from nerstudio.tagging.perceptron import PerceptronTagger


@pytest.fixture(scope="module")
def demo():
    return [s for s in read_corpus(str(DEMO_DIR / "train.conll")).sentences if len(s)][:80]


def _maxent(**kw):
    return MaxEntTagger(
        features="paper",
        cutoff=1,
        l2=1.0,
        optimizer="lbfgs",
        max_iter=500,
        tol=1e-9,
        threads=1,
        **kw,
    )


def test_warm_start_from_the_optimum_starts_at_the_optimum(demo):
    cold = _maxent().fit(demo)
    warm = _maxent()
    warm.max_iter = 1
    warm.fit(demo, init=cold)
    # the same data: every parameter maps onto itself, so the start is the optimum already
    assert warm.tagset_ == cold.tagset_
    assert np.allclose(warm.W_, cold.W_, atol=1e-4)


def test_warm_start_reaches_the_cold_optimum_and_is_nearer_it_early(demo):
    first = _maxent().fit(demo[:40])
    # the second part brings a tag the first model has not seen: a new column, starting at zero
    more = demo[40:] + [Sentence(["Zorblat", "visited", "."], [Span(0, 1, "GPE")])]
    cold = _maxent().fit(demo[:40] + more)
    warm = _maxent().fit(demo[:40] + more, init=first)
    assert "S-GPE" in warm.tagset_ and "S-GPE" not in first.tagset_
    assert np.allclose(warm.W_, cold.W_, atol=2e-3)
    assert warm.predict_spans(demo) == cold.predict_spans(demo)
    # after a few iterations the warm start is much nearer the optimum than the cold one
    early = {}
    for name, init in (("cold", None), ("warm", first)):
        m = _maxent()
        m.max_iter = 5
        early[name] = np.abs(m.fit(demo[:40] + more, init=init).W_ - cold.W_).sum()
    assert early["warm"] < 0.5 * early["cold"], early


def test_initial_weights_map_predicates_and_tags_by_name(demo):
    first = _maxent().fit(demo[:40])
    # a model whose tag set is ordered differently: each weight still lands on its own tag
    other = _maxent(labels=["PER", "ORG", "MISC", "LOC", "ZZZ"])
    other.max_iter = 0
    other.fit(demo[:40], init=first)
    mask = other.mask_
    W0 = other.initial_weights(first, mask)
    col = {t: j for j, t in enumerate(other.tagset_)}
    row = other.extractor_.vocab
    for name, r0 in list(first.extractor_.vocab.items())[:200]:
        for j0, t in enumerate(first.tagset_):
            if name in row and mask[row[name], col[t]]:
                assert W0[row[name], col[t]] == first.W_[r0, j0]
    assert not W0[:, col["S-ZZZ"]].any()


def test_perceptron_learns_a_corrected_sentence_and_keeps_its_weights_otherwise(demo):
    tagger = PerceptronTagger(epochs=3, documents=False, variant="perceptron").fit(demo[:60])
    wrong = [s for s in demo[60:] if tagger.predict_spans([s])[0] != s.spans]
    assert wrong, "the tagger gets every held-out sentence right: nothing to learn"
    s = wrong[0]
    before = tagger.weights_.copy()
    assert tagger.learn([s], passes=20) > 0
    assert tagger.predict_spans([s])[0] == s.spans
    assert not np.array_equal(tagger.weights_, before)
    # a sentence it already tags right (with no margin to keep) makes no update
    same = tagger.weights_.copy()
    assert tagger.learn([s]) == 0 and np.array_equal(tagger.weights_, same)
