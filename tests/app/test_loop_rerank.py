"""The reranker in the annotation loop: a warm start is exactly a run from the old weights
(checked against a plain-Python perceptron), the reranker's choice is the suggestion, reviewed
sentences are never changed, the model folder saved holds the reranker, cancel changes nothing."""

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import ROOT

import nerstudio
from nerstudio.app import loop, loop_rerank
from nerstudio.app.document import Document
from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR
from nerstudio.errors import Cancelled
from nerstudio.nbest import NBestList
from nerstudio.rerank.data import RankingData
from nerstudio.rerank.model import train_reranker
from nerstudio.rerank.perceptron import AveragedPerceptron, Perceptron, VotedPerceptron
from nerstudio.runtime.predictor import load_model_folder


def _tiny_data(seed: int = 3) -> RankingData:
    """Four sentences of three candidates, six binary features, random qualities."""
    rng = np.random.default_rng(seed)
    n, m = 12, 6
    X = sp.csr_matrix((rng.random((n, m)) < 0.45).astype(np.int8))
    L = -rng.random(n) * 3
    offsets = np.arange(0, n + 1, 3)
    quality = rng.integers(0, 4, n).astype(np.float64)
    quality[9:12] = 2.0  # the last sentence: every candidate as good (not informative)
    d = RankingData(X, L, offsets, quality=quality)
    d.oracle = d.argmax(quality)
    return d


def _brute(d: RankingData, w0, wL0, beta, epochs, average):
    """Collins's ranking perceptron in plain Python from (w0, wL0); the average is over the
    vector after every example of every epoch; an epoch without a mistake ends training."""
    X = d.X.toarray().astype(float)
    w, wL = np.array(w0, dtype=float), float(wL0)
    seen = []
    informative = [i for i in range(len(d)) if len(set(d.quality[d.rows(i)])) > 1]
    for _ in range(epochs):
        mistakes = 0
        for i in informative:
            rows = range(d.offsets[i], d.offsets[i + 1])
            o = d.offsets[i] + d.oracle[i]
            scores = [beta * wL * d.L[r] + X[r] @ w for r in rows]
            top = list(rows)[int(np.argmax(scores))]
            if d.quality[top] < d.quality[o]:
                mistakes += 1
                w = w + X[o] - X[top]
                wL += beta * (d.L[o] - d.L[top])
            seen.append((w.copy(), wL))
        if not mistakes:
            break
    if average:
        return np.mean([s[0] for s in seen], axis=0), float(np.mean([s[1] for s in seen]))
    return w, wL


@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron, VotedPerceptron])
def test_warm_start_equals_a_cold_start_at_the_same_weights(cls):
    d = _tiny_data()
    old = cls(epochs=2, beta=0.5, shuffle=False).fit(d)
    old.w_ = old.w_ + np.linspace(-1, 1, d.n_features)  # any weights: not only a fixed point
    old.wL_ = 0.7
    kept = old.w_.copy()
    warm = old.warm_start(d)
    cold = cls(epochs=2, beta=0.5, shuffle=False).fit(d, init=(0.7, old.w_))
    assert np.array_equal(warm.w_, cold.w_) and warm.wL_ == cold.wL_
    w, wL = _brute(d, old.w_, 0.7, 0.5, 2, average=cls is AveragedPerceptron)
    assert np.allclose(warm.w_, w) and warm.wL_ == pytest.approx(wL)
    assert warm is not old and np.array_equal(old.w_, kept)  # the old learner is unchanged
    if cls is VotedPerceptron:  # votes start from the old vector
        assert np.array_equal(warm.init_w_, old.w_)


def test_warm_start_from_zero_is_the_ordinary_training():
    d = _tiny_data(5)
    a = Perceptron(epochs=3, beta=1.0, shuffle=True, seed=2).fit(d)
    b = Perceptron(epochs=3, beta=1.0, shuffle=True, seed=2).fit(d, init=(0.0, np.zeros(6)))
    assert np.array_equal(a.w_, b.w_) and a.wL_ == b.wL_
    with pytest.raises(ValueError, match="shape"):
        Perceptron().fit(d, init=(0.0, np.zeros(4)))


@pytest.fixture(scope="module")
def reranker():
    nb = NBestList.load(str(DEMO_MODEL_DIR / "train.nbest.npz"))
    return train_reranker(nb, None, "averaged", {"epochs": 2, "beta": 0.1})


def _open_demo():
    corpus = read_corpus(str(DEMO_DIR / "test.conll"))
    gold = [list(s.spans) for s in corpus.sentences]
    for s in corpus.sentences:
        s.spans = []
    doc = Document()
    doc.open(corpus)
    return doc, gold


def test_other_rerankers_are_not_used():
    tagger, boost = load_model_folder(DEMO_MODEL_DIR)
    learner = loop.OnlineLearner(tagger, reranker=boost)
    assert learner.reranker is None and "boost" in learner.reranker_note


@pytest.mark.slow
def test_reranker_in_the_loop_on_a_tiny_corpus(reranker, tmp_path):
    doc, gold = _open_demo()
    tagger, _ = load_model_folder(DEMO_MODEL_DIR)
    learner = loop.OnlineLearner(tagger, every=10, reranker=reranker)
    first = learner.run(loop.snapshot(doc), train=False)
    assert not first.trained and first.reranker is reranker
    # the suggestions are the reranker's choice, which is not always the tagger's best
    choice = loop_rerank.choose(reranker, first.nbest)
    assert choice.any()
    for i, k in enumerate(first.rows):
        assert first.suggestions[k] == sorted(first.nbest.spans(i, int(choice[i])))
    loop.apply(doc, first, "pre-annotation")
    learner.adopt(first)
    suggested = {k: doc.spans(k) for k in range(12)}
    for k in range(12):
        doc.set_spans(k, gold[k])
        doc.set_reviewed([k])
    # the panel's figures are measured on what was suggested: the reranker's choice
    assert [list(s) for _, s in doc.review_log] == [suggested[k] for k in range(12)]
    rnd = loop.snapshot(doc)
    assert learner.tagger_due(rnd) and learner.reranker_due(rnd)  # both learn every 10
    res = learner.run(rnd)
    assert res.trained and "reranker trained on 12 reviewed" in res.note
    assert res.reranker is not reranker and res.tagger is not tagger
    assert not np.array_equal(res.reranker.learner.w_, reranker.learner.w_)
    # exactly a warm start on the reviewed sentences' lists of this round's tagger
    at = {k: i for i, k in enumerate(res.rows)}
    ks = [k for k in range(12) if k in at]
    sub, _ = loop_rerank.training_list(res.nbest, [at[k] for k in ks], [gold[k] for k in ks])
    expect = reranker.learner.warm_start(reranker.features.transform(sub))
    assert np.array_equal(expect.w_, res.reranker.learner.w_)
    before = {k: doc.spans(k) for k in range(len(doc.corpus))}
    changed = loop.apply(doc, res).changed
    learner.adopt(res)
    assert learner.reranker is res.reranker and set(learner.reranked) == set(range(12))
    assert not set(changed) & set(range(12))  # reviewed sentences never changed
    assert all(doc.spans(k) == before[k] for k in range(12))
    new_choice = loop_rerank.choose(res.reranker, res.nbest)
    for k in changed:
        assert doc.spans(k) == sorted(res.nbest.spans(at[k], int(new_choice[at[k]])))
    assert not learner.due(loop.snapshot(doc))
    # saved: a model folder nerstudio.load reads, with the reranker that learned
    learner.save(tmp_path / "m")
    pipe = nerstudio.load(tmp_path / "m")
    assert np.array_equal(pipe.reranker.learner.w_, res.reranker.learner.w_)


def test_reranker_round_honours_cancel(reranker, monkeypatch):
    doc, gold = _open_demo()
    tagger, _ = load_model_folder(DEMO_MODEL_DIR)
    learner = loop.OnlineLearner(tagger, every=5, reranker=reranker)
    for k in range(5):
        doc.set_spans(k, gold[k])
        doc.set_reviewed([k])
    rnd = loop.snapshot(doc)
    training = []
    real = loop_rerank.warm_start

    def warm_start(*args):
        training.append(1)
        return real(*args)

    monkeypatch.setattr(loop_rerank, "warm_start", warm_start)

    def cancel_in_training():  # decoding passes; the reranker's training is cancelled
        return bool(training)

    steps = doc.history.count()
    with pytest.raises(Cancelled):
        learner.run(rnd, should_cancel=cancel_in_training)
    assert training and learner.reranker is reranker
    assert not learner.reranked and not learner.learned and learner.rounds == 0
    assert doc.history.count() == steps and doc.nbest is None


@pytest.mark.slow
def test_bench_prints_the_reranker_loop_beside_the_tagger_loop(tmp_path):
    import re
    import subprocess
    import sys

    bench = ROOT / "bench" / "annotation_loop.py"
    args = [sys.executable, str(bench), "--corpus", str(DEMO_DIR / "test.conll")]
    args += ["--batches", "2", "--batch-size", "10", "--reranker", "averaged"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert re.fullmatch(r"loop F \d+\.\d\d vs static F \d+\.\d\d; edits \d+ vs \d+", lines[-1])
    assert re.fullmatch(r"rerank loop F \d+\.\d\d; edits \d+", lines[-2])
    assert "rerank F" in out.stdout
    rows = [ln.split() for ln in lines if re.match(r"\s+[12]\s", ln)]
    assert len(rows) == 2 and all(len(r) == 10 for r in rows)  # batch + three runs of three
    boost = subprocess.run(
        args[:-1] + [str(DEMO_MODEL_DIR / "reranker.npz")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert boost.returncode == 1 and "boost reranker does not learn" in boost.stderr
