"""A training run without a window: nerstudio.runs.training runs a RunSettings through its stages
for any caller that gives it a context (here a plain recorder, no Qt)."""

from __future__ import annotations

import pytest
from helpers.recorder import Recorder

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import Cancelled
from nerstudio.runs.spec import RunSettings
from nerstudio.runs.stages import (
    STAGE_FEATURES,
    STAGE_INDEX,
    STAGE_JACKKNIFE,
    STAGE_RERANKER,
    STAGE_SCORE,
    STAGE_TAGGER,
)
from nerstudio.runs.training import run_training

SMALL = {
    "start": "tagger",
    "tagger_iter": 5,
    "tagger_cutoff": 1,
    "folds": 2,
    "n": 4,
    "algo": "averaged",
    "params": {"epochs": 2, "beta": 0.5},
    "feature_params": {"min_sentences": 1},
}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    full = read_corpus(f"{DEMO_DIR}/train.conll")
    return Corpus(full.documents[:4], format=full.format, scheme=full.scheme, path=full.path)


def test_a_full_run_goes_through_its_stages_in_order(corpus):
    ctx = Recorder()
    res = run_training(ctx, RunSettings(**SMALL), 1, corpus, None, None, None, in_child=False)
    want = [STAGE_TAGGER, STAGE_JACKKNIFE, STAGE_INDEX, STAGE_FEATURES, STAGE_RERANKER]
    want.append(STAGE_SCORE)
    assert ctx.pipeline.stages == want and ctx.entered == want
    # each result reached the caller as soon as it existed
    assert ctx.results["tagger"] is res.tagger and ctx.results["nbest"] is res.nbest_index
    assert res.model is not None and res.model.algo == "averaged"
    assert len(res.scored.choice) == len(corpus.sentences)
    assert [st.step for st in ctx.curve] == [1, 2]
    assert res.model.meta["train_words"]


def test_a_reranker_run_starts_from_the_given_list_and_stops_when_cancelled(corpus):
    first = Recorder()
    full = run_training(first, RunSettings(**SMALL), 1, corpus, None, None, None, in_child=False)
    nb = full.nbest_index.nbest
    settings = RunSettings(**{**SMALL, "start": "reranker"})
    again = Recorder()
    res = run_training(again, settings, 2, corpus, nb, None, None, in_child=False)
    assert again.entered == [STAGE_FEATURES, STAGE_RERANKER, STAGE_SCORE]
    # the same list and settings: the same model
    assert (res.scored.scores == full.scored.scores).all()
    stopped = Recorder(cancel_at=STAGE_RERANKER)
    with pytest.raises(Cancelled):
        run_training(stopped, settings, 3, corpus, nb, None, None, in_child=False)
    assert stopped.entered[-1] == STAGE_RERANKER and not stopped.curve


@pytest.mark.parametrize("optimizer", ["adagrad", "lbfgs"])
def test_a_run_trains_its_tagger_with_the_optimizer_of_its_settings(corpus, optimizer):
    """The window's run settings choose the max-ent tagger's optimiser (the panel gives the demo
    model's, as it does its number of iterations); the progress counts its epochs or iterations."""
    ctx = Recorder()
    settings = RunSettings(**{**SMALL, "tagger_optimizer": optimizer, "tagger_epochs": 2})
    res = run_training(ctx, settings, 1, corpus, None, None, None, in_child=False)
    assert res.tagger.optimizer == optimizer
    unit = "epoch" if optimizer == "adagrad" else "iteration"
    assert any(f"tagger {unit} 1" in m for m in ctx.messages)
    if optimizer == "adagrad":
        assert res.tagger.epochs == 2 and res.tagger.n_iter_ <= 2
