"""Step-through trainers (Qt-free) equal the batch learners."""

from __future__ import annotations

import numpy as np
import pytest

from nerstudio.demo import DEMO_DIR
from nerstudio.experiments.stepthrough import (
    BoostingStepper,
    EpochEnd,
    PerceptronStepper,
    PerceptronUpdate,
)
from nerstudio.nbest import NBestList
from nerstudio.rerank.boosting import Boosting
from nerstudio.rerank.model import RerankerModel
from nerstudio.rerank.perceptron import Perceptron

MODEL = DEMO_DIR / "model"
pytestmark = pytest.mark.skipif(
    not (MODEL / "reranker.npz").exists(), reason="demo model not built"
)


@pytest.fixture(scope="module")
def data():
    model = RerankerModel.load(str(MODEL / "reranker.npz"))
    return model.data(NBestList.load(str(MODEL / "train.nbest.npz"))), model.data(
        NBestList.load(str(MODEL / "dev.nbest.npz"))
    )


def test_boosting_steps_equal_the_batch_rounds(data):
    train, dev = data
    st = BoostingStepper(train, dev, epsilon=0.0025)
    steps = [st.step() for _ in range(5)]
    batch = Boosting(rounds=5, epsilon=0.0025, eval_every=1, keep_best=False).fit(train)
    assert list(st.chosen) == list(batch.chosen_[:5])
    assert [s.info.feature for s in steps] == list(batch.chosen_[:5])
    for s in steps:
        assert s.info.loss_after < s.info.loss_before
        assert len(s.sentences) == len(s.info.pairs) and s.dev_f1 is not None
    assert len(st.history) == 6


def test_perceptron_updates_over_one_epoch_equal_the_batch_perceptron(data):
    train, dev = data
    st = PerceptronStepper(train, dev, beta=0.3, seed=7)
    n_upd = 0
    while True:
        r = st.step()
        if isinstance(r, EpochEnd):
            break
        assert isinstance(r, PerceptronUpdate)
        assert train.quality[r.top_row] < train.quality[r.oracle_row]
        # after the update the oracle gained on the wrong top candidate
        j_o, j_t = r.oracle_row - r.rows.start, r.top_row - r.rows.start
        assert (r.scores_after[j_o] - r.scores_after[j_t]) > (
            r.scores_before[j_o] - r.scores_before[j_t]
        )
        n_upd += 1
    assert n_upd == r.updates == r.mistakes > 0
    p = Perceptron(epochs=1, beta=0.3, seed=7, keep_best=False).fit(train)
    assert np.allclose(st.w, p.w_)
    assert st.wL == pytest.approx(p.wL_)
    assert p.history_[-1].mistakes == r.mistakes


def test_perceptron_steps_back_to_exactly_the_earlier_learner(data):
    train, dev = data
    st = PerceptronStepper(train, dev, beta=0.3, seed=3)
    states = []
    for _ in range(40):  # past the end of the first epoch (a few dozen updates on the demo)
        states.append(
            (st.w.copy(), st.wL, st.epoch, st.pos, st.mistakes, st.updates, list(st.history))
        )
        st.step()
    for _ in range(5):
        st.step()
    for _ in range(5):
        assert st.back()
    for _ in range(40):
        assert st.back()
        w, wL, epoch, pos, mistakes, updates, hist = states.pop()
        assert np.array_equal(st.w, w) and st.wL == wL
        assert (st.epoch, st.pos, st.mistakes, st.updates) == (epoch, pos, mistakes, updates)
        assert st.history == hist
    assert not st.back() and not st.w.any()
    # forward again: the same updates, the same shuffles
    fresh = PerceptronStepper(train, dev, beta=0.3, seed=3)
    for _ in range(45):
        a, b = st.step(), fresh.step()
        assert type(a) is type(b) and getattr(a, "sentence", None) == getattr(b, "sentence", None)
    assert np.array_equal(st.w, fresh.w) and st.history == fresh.history


def test_boosting_steps_back_and_chooses_the_same_features_again(data):
    train, dev = data
    st = BoostingStepper(train, dev, epsilon=0.0025)
    m0, a0 = st.session.M.copy(), st.session.alpha.copy()
    first = [st.step().info.feature for _ in range(6)]
    curve = list(st.history)
    for _ in range(6):
        assert st.back()
    assert not st.back()
    assert np.array_equal(st.session.M, m0) and np.array_equal(st.session.alpha, a0)
    assert st.rounds == 0 and len(st.history) == 1
    assert st.loss() == pytest.approx(st.session.exact_loss())
    again = [st.step().info.feature for _ in range(6)]
    assert again == first
    assert st.loss() == pytest.approx(st.session.exact_loss())
    assert [r for r, _f in st.history] == [r for r, _f in curve]
    assert [f for _r, f in st.history] == pytest.approx([f for _r, f in curve])


def test_a_boosting_step_records_both_candidates_of_every_pair(data):
    """Each touched pair's better (oracle) and worse candidate: the chosen feature's value on
    each, and their scores before and after the round, which make the margins."""
    train, dev = data
    st = BoostingStepper(train, dev, epsilon=0.0025)
    for _ in range(3):
        r = st.step()
        inf = r.info
        k = inf.feature
        X = train.X.tocsr()
        assert np.array_equal(r.oracle_values, X[r.oracle_rows, k].toarray().ravel())
        assert np.array_equal(r.other_values, X[r.other_rows, k].toarray().ravel())
        # the round moved the margin by δ times the difference of the feature's values
        moved = inf.margins_after - inf.margins_before
        assert moved == pytest.approx(inf.delta * (r.oracle_values - r.other_values))
        assert np.all(r.oracle_values != r.other_values)
        # the scores are the reranker's, and their difference is the margin
        alpha = st.session.alpha
        F = st.session.alpha0 * train.L + X @ alpha
        assert r.oracle_scores == pytest.approx(F[r.oracle_rows])
        assert r.oracle_scores - r.other_scores == pytest.approx(inf.margins_after)
        before = np.array([r.scores_before(p) for p in range(len(inf.pairs))])
        assert before[:, 0] - before[:, 1] == pytest.approx(inf.margins_before)
