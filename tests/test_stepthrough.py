"""Step-through trainers (Qt-free) equal the batch learners."""

from __future__ import annotations

import numpy as np
import pytest

from nerstudio.demo import DEMO_DIR
from nerstudio.nbest import NBestList
from nerstudio.rerank.boosting import Boosting
from nerstudio.rerank.model import RerankerModel
from nerstudio.rerank.perceptron import Perceptron
from nerstudio.experiments.stepthrough import BoostingStepper, EpochEnd, PerceptronStepper, PerceptronUpdate

MODEL = DEMO_DIR / "model"
pytestmark = pytest.mark.skipif(not (MODEL / "reranker.npz").exists(), reason="demo model not built")


@pytest.fixture(scope="module")
def data():
    model = RerankerModel.load(str(MODEL / "reranker.npz"))
    return model.data(NBestList.load(str(MODEL / "train.nbest.npz"))), \
        model.data(NBestList.load(str(MODEL / "dev.nbest.npz")))


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
        assert (r.scores_after[j_o] - r.scores_after[j_t]) > (r.scores_before[j_o] - r.scores_before[j_t])
        n_upd += 1
    assert n_upd == r.updates == r.mistakes > 0
    p = Perceptron(epochs=1, beta=0.3, seed=7, keep_best=False).fit(train)
    assert np.allclose(st.w, p.w_)
    assert st.wL == pytest.approx(p.wL_)
    assert p.history_[-1].mistakes == r.mistakes
