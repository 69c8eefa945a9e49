"""Trained models in one line (nerstudio.runs.describe): what the window's status line and curve
legend say of a reranker and a tagger. No Qt."""

from __future__ import annotations

from nerstudio.demo import DEMO_DIR
from nerstudio.rerank.model import RerankerModel
from nerstudio.runs.describe import describe_model


def test_the_state_line_names_a_bilou_tagger_whatever_its_kind():
    from types import SimpleNamespace

    from nerstudio.runs.describe import tags_note
    from nerstudio.tagging.maxent import MaxEntTagger
    from nerstudio.tagging.perceptron import PerceptronTagger

    assert tags_note(MaxEntTagger()) == "" and tags_note(PerceptronTagger()) == ""
    assert tags_note(MaxEntTagger(alphabet="bilou")) == ", BILOU tags"
    bilou = PerceptronTagger(alphabet="bilou")
    assert tags_note(bilou) == ", BILOU tags"
    assert (
        tags_note(SimpleNamespace(tagger_=bilou)) == ", BILOU tags"
    )  # a joint tagger's local model


def test_a_reranker_reads_as_its_learner_and_settings():
    model = RerankerModel.load(str(DEMO_DIR / "model" / "reranker.npz"))
    # its feature threshold is said because it is not the default (5)
    assert describe_model(model) == "boost(rounds=3000, eval_every=100) feats(min_sentences=2)"
    model.features.min_sentences = 5
    assert describe_model(model) == "boost(rounds=3000, eval_every=100)"
