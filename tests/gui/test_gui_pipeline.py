"""The full pipeline from the training panel: tagger, jackknife (the core's fold driver), reranker —
and the gold it learns from is the corpus's, edits made while it runs included."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nerstudio.app.attachments import CorpusGold
from nerstudio.corpus.model import Span
from nerstudio.runs.spec import RunSettings

pytestmark = pytest.mark.slow  # full pipelines trained in the window

#: a full pipeline small enough for a test: a few iterations, two folds, five candidates
SMALL_RUN = {
    "start": "tagger",
    "tagger_iter": 5,
    "folds": 2,
    "n": 5,
    "algo": "averaged",
    "params": {"epochs": 1},
    "feature_params": {"min_sentences": 2},
}


def test_full_pipeline_jackknifes_with_the_fold_driver(window, qtbot):
    window.train_in_child = False  # the reranker stage in this process: quicker to start
    doc = window.document
    settings = RunSettings(**SMALL_RUN)
    k = next(k for k, s in enumerate(doc.corpus.sentences) if not s.spans and len(s) >= 2)
    assert window.start_training(settings)
    doc.set_spans(k, [Span(0, 1, "ORG")], "an edit while the run starts")
    assert window.jobs.wait(180000)
    assert window.last_error == ""
    nb = doc.nbest
    assert nb.meta["jackknife_folds"] == 2 and sorted(set(nb.meta["fold"])) == [0, 1]
    assert all(nb.n_candidates(i) <= 5 for i in range(len(nb)))
    assert isinstance(nb.gold, CorpusGold) and nb.gold[doc.nbest_row(k)] == [Span(0, 1, "ORG")]
    assert doc.model is not None and doc.scored is not None and len(doc.runs) == 1
    # the candidates are counted against the edited gold: exact only if they propose that ORG
    i = doc.nbest_row(k)
    exact = doc.exact()[doc.candidate_rows(i)]
    assert list(exact) == [nb.spans(i, j) == [Span(0, 1, "ORG")] for j in range(nb.n_candidates(i))]


def test_the_full_pipeline_trains_a_bilou_tagger_when_asked(window, qtbot, monkeypatch):
    """The Tags choice reaches the tagger on the whole corpus and every fold's; the lists stay
    Collins' start/continue segmentations."""
    from nerstudio.tagging.maxent import MaxEntTagger

    window.train_in_child = False
    fitted = []
    fit = MaxEntTagger.fit

    def spy(self, *args, **kwargs):
        fitted.append(self.alphabet)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(MaxEntTagger, "fit", spy)
    p = window.training_panel
    p.set_start("tagger")
    p.alphabet.setCurrentIndex(p.alphabet.findData("bilou"))
    s = p.snapshot()
    assert s.alphabet == "bilou" and s.label().endswith("· bilou")
    settings = RunSettings(**SMALL_RUN, alphabet=s.alphabet)
    assert window.start_training(settings)
    assert window.jobs.wait(180000)
    assert window.last_error == ""
    assert fitted == ["bilou"] * 3  # the whole corpus, then two folds
    doc = window.document
    assert doc.tagger.alphabet == "bilou"
    assert {t.split("-")[0] for t in doc.nbest.tagset} <= {"N", "S", "C"}


def test_the_panel_can_run_the_typed_experiments_features(window, qtbot):
    """The tagger's feature set with the bundled resources and the rerankers' resource families
    (gazetteers, document context, clusters) go from the panel through a real run, the reranker
    in its child process: the lists carry each sentence's document for the context features."""
    from nerstudio.demo import DEMO_DIR

    doc = window.document
    p = window.training_panel
    p.set_start("tagger")
    p.tagger_feats.setCurrentText("conll+rich+gaz+clusters")
    for box in p.resources.values():
        box.setChecked(True)
    s = p.snapshot()
    assert s.tagger_features == "conll+rich+gaz+clusters"
    settings = RunSettings(
        **{
            **SMALL_RUN,
            "tagger_iter": 40,  # a tagger that finds entities: the context is its best candidates
            "feature_params": {**s.feature_params, "min_sentences": 2},
        },
        tagger_features=s.tagger_features,
        tagger_cutoff=2,
        dev_path=str(DEMO_DIR / "dev.conll"),
    )
    assert window.start_training(settings)
    assert window.jobs.wait(300000)
    assert window.last_error == ""
    assert (doc.tagger.features, doc.tagger.cutoff) == ("conll+rich+gaz+clusters", 2)
    assert doc.nbest.meta["documents"] == doc.corpus.sentence_document()
    assert len(set(doc.nbest.meta["documents"])) > 1  # the demo has several documents
    assert doc.dev_nbest is not None and "documents" in doc.dev_nbest.meta
    gf = doc.model.features
    assert gf.gazetteers and gf.context is True and gf.clusters
    assert {"GZ", "DC", "BC4"} <= set(gf.templates_)


def test_a_reranker_only_run_with_context_takes_the_documents_from_the_corpus(window, qtbot):
    """The demo's lists name no documents; the training list is attached to the open corpus,
    so a run with the context features takes each sentence's document from it, and says that
    the dev list (a file of its own) has none."""
    doc = window.document
    assert doc.nbest is not None and "documents" not in doc.nbest.meta
    p = window.training_panel
    p.set_start("reranker")
    p.resources["context"].setChecked(True)
    s = p.snapshot()
    settings = RunSettings(
        start="reranker",
        algo="averaged",
        params={"epochs": 1},
        feature_params={**s.feature_params, "min_sentences": 2},
    )
    assert window.start_training(settings)  # the reranker in its child process
    assert window.jobs.wait(180000)
    assert window.last_error == ""
    gf = doc.model.features
    assert gf.context is True and {"DC", "CC"} <= set(gf.templates_)
    message = p.message.text()
    assert "Done in" in message and "the dev list names no documents" in message
    assert "training list" not in message
