"""The model in the annotation loop (nerstudio.app.loop): corrections counted by hand, rounds that
never touch the annotator's work, training when due, models saved for nerstudio.load."""

import copy

import numpy as np
import pytest
from helpers import ROOT

import nerstudio
from nerstudio.app import loop
from nerstudio.app.document import Document
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR
from nerstudio.runtime.predictor import load_model_folder
from nerstudio.tagging.perceptron import PerceptronTagger


def test_corrections_and_batch_scores_by_hand():
    sug = [Span(0, 1, "PER"), Span(2, 4, "ORG"), Span(5, 6, "LOC")]
    kept = [Span(0, 1, "ORG"), Span(2, 3, "ORG"), Span(5, 6, "LOC"), Span(7, 8, "MISC")]
    # (0,1) relabelled; (2,4) removed and (2,3) added (a boundary fix: two); (7,8) added
    assert loop.corrections(sug, kept) == (2, 1, 1)
    assert loop.corrections(kept, kept) == (0, 0, 0)
    b = loop.score_batch([sug, []], [kept, [Span(0, 2, "PER")]])
    # 1 correct of 3 suggested, 5 kept: P 1/3, R 1/5, F = 2PR/(P+R) = 25
    assert b.sentences == 2 and b.edits == 5 and (b.added, b.removed, b.relabelled) == (3, 1, 1)
    assert b.f1 == pytest.approx(25.0)


def _open_demo():
    corpus = read_corpus(str(DEMO_DIR / "test.conll"))
    gold = [list(s.spans) for s in corpus.sentences]
    for s in corpus.sentences:
        s.spans = []
    doc = Document()
    doc.open(corpus)
    return doc, gold


def test_batch_scores_follow_the_review_log():
    doc, gold = _open_demo()
    doc.set_spans(
        3,
        gold[3] + [Span(0, 1, "MISC")]
        if gold[3] and gold[3][0].start > 0
        else [Span(0, 1, "MISC")],
    )
    doc.set_reviewed([3, 5])  # 3 edited, then accepted: its suggestion is what it held before
    (b,) = loop.batch_scores(doc, 50)
    assert b.sentences == 2  # suggestions were empty: every kept entity is an addition
    assert b.edits == len(doc.spans(3)) + len(doc.spans(5)) == b.added


@pytest.mark.slow
def test_a_round_never_touches_reviewed_or_edited_sentences():
    doc, gold = _open_demo()
    tagger, _ = load_model_folder(DEMO_MODEL_DIR)
    learner = loop.OnlineLearner(tagger, every=1000)
    first = learner.run(loop.snapshot(doc), train=False)
    loop.apply(doc, first, "pre-annotation")
    learner.adopt(first)
    assert any(doc.spans(k) for k in range(len(doc.corpus)))
    for k in range(10):  # reviewed: set to gold
        doc.set_spans(k, gold[k])
        doc.set_reviewed([k])
    rnd = loop.snapshot(doc)
    assert not learner.due(rnd)  # 10 of every 1000: no training
    res = learner.run(rnd, train=True)  # train anyway: a different model
    assert res.trained and res.tagger is not tagger and set(res.suggestions).isdisjoint(range(10))
    doc.set_spans(20, [Span(0, 1, "PER")])  # edited while the round ran (not reviewed yet)
    doc.set_many({21: [Span(0, 1, "LOC")]}, "another edit")  # not reviewed, but changed meanwhile
    before = {k: doc.spans(k) for k in range(len(doc.corpus))}
    steps = doc.history.count()
    applied = loop.apply(doc, res)
    changed = list(applied.changed)
    assert doc.history.count() == steps + (1 if changed else 0)  # one undoable edit
    # predicted: every sentence of the round's suggestions neither reviewed nor edited since
    assert set(applied.predicted) == set(res.suggestions) - {20, 21}
    assert set(changed) <= set(applied.predicted) and len(changed) < len(applied.predicted)
    assert all(doc.spans(k) == before[k] for k in list(range(10)) + [20, 21])
    assert not set(changed) & (set(range(10)) | {20, 21})
    assert all(doc.spans(k) == res.suggestions[k] for k in changed)
    # the N-best list covers every non-empty sentence; its top candidates are the suggestions
    ix = doc.nbest_index
    assert (ix.row_of >= 0).sum() == sum(1 for s in doc.corpus.sentences if len(s))
    k = changed[0]
    assert sorted(doc.nbest.spans(int(ix.row_of[k]), 0)) == doc.spans(k)
    doc.undo()
    assert all(doc.spans(k) == before[k] for k in range(len(doc.corpus)))


def test_maxent_trains_every_n_sentences_warm_and_saves_a_loadable_model(tmp_path):
    doc, gold = _open_demo()
    tagger, _ = load_model_folder(DEMO_MODEL_DIR)
    seed = read_corpus(str(DEMO_DIR / "train.conll")).sentences[:100]
    learner = loop.OnlineLearner(tagger, seed, every=20)
    for k in range(19):
        doc.set_spans(k, gold[k])
        doc.set_reviewed([k])
    assert not learner.due(loop.snapshot(doc))
    doc.set_spans(19, gold[19])
    doc.set_reviewed([19])
    rnd = loop.snapshot(doc)
    assert learner.due(rnd) and len(rnd.train) == 20
    res = learner.run(rnd)
    assert res.trained and "100 seed + 20 reviewed" in res.note
    learner.adopt(res)
    assert not learner.due(loop.snapshot(doc))  # learned: nothing new
    doc.set_spans(0, [])  # a reviewed sentence changed again: new to the model
    assert learner.new(loop.snapshot(doc)) == [0]
    folder = tmp_path / "model"
    learner.save(folder)
    pipe = nerstudio.load(folder)
    words = list(doc.corpus.sentences[30].words)
    assert [(e.token_start, e.token_end, e.label) for e in pipe.predict(words)] == [
        tuple(s) for s in learner.tagger.predict_spans([doc.corpus.sentences[30]])[0]
    ]


def test_a_bilou_tagger_is_retrained_with_its_alphabet():
    """The loop retrains a model with its own settings: a BILOU tagger stays BILOU (warm-started
    from its weights) and its suggestions are whole entities."""
    from nerstudio.tagging.maxent import MaxEntTagger

    doc, gold = _open_demo()
    seed = read_corpus(str(DEMO_DIR / "train.conll")).sentences[:150]
    tagger = MaxEntTagger(features="paper", cutoff=1, max_iter=30, alphabet="bilou").fit(seed)
    learner = loop.OnlineLearner(tagger, seed, every=5)
    for k in range(5):
        doc.set_spans(k, gold[k])
        doc.set_reviewed([k])
    res = learner.run(loop.snapshot(doc))
    assert res.trained
    learner.adopt(res)
    assert learner.tagger.alphabet == "bilou" and learner.tagger is not tagger
    nb = loop.decode(learner.tagger, doc.corpus.sentences[:20], 5)
    assert all(t[0] in "NSC" for t in nb.tagset)


def test_cancelled_round_changes_nothing():
    doc, _ = _open_demo()
    tagger, _ = load_model_folder(DEMO_MODEL_DIR)
    learner = loop.OnlineLearner(tagger)
    with pytest.raises(nerstudio.errors.Cancelled):
        learner.run(loop.snapshot(doc), should_cancel=lambda: True, train=False)
    assert learner.tagger is tagger and doc.nbest is None and doc.history.count() == 0


def test_perceptron_learner_updates_per_sentence():
    train = read_corpus(str(DEMO_DIR / "train.conll"))
    tagger = PerceptronTagger(epochs=2, documents=False, variant="perceptron").fit(
        train.sentences[:100]
    )
    doc, gold = _open_demo()
    learner = loop.OnlineLearner(tagger, passes=3)
    assert learner.online
    k = next(k for k in range(len(gold)) if gold[k])
    doc.set_spans(k, gold[k])
    assert not learner.due(loop.snapshot(doc))  # still being corrected: not reviewed yet
    doc.set_reviewed([k])
    rnd = loop.snapshot(doc)
    assert learner.due(rnd)  # one sentence is enough
    before = copy.deepcopy(tagger.weights_)
    res = learner.run(rnd)
    assert res.trained and np.array_equal(tagger.weights_, before)  # the current model is untouched
    learner.adopt(res)
    assert learner.tagger is res.tagger and list(learner.learned) == [k]


@pytest.mark.slow
def test_bench_prints_the_last_line(tmp_path):
    import re
    import subprocess
    import sys

    root = ROOT
    out = subprocess.run(
        [
            sys.executable,
            str(root / "bench" / "annotation_loop.py"),
            "--corpus",
            str(DEMO_DIR / "test.conll"),
            "--batches",
            "2",
            "--batch-size",
            "10",
            "--seed",
            str(DEMO_DIR / "dev.conll"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert re.fullmatch(r"loop F \d+\.\d\d vs static F \d+\.\d\d; edits \d+ vs \d+", lines[-1])
    assert len([ln for ln in lines if re.match(r"\s+[12]\s", ln)]) == 2
    bad = subprocess.run(
        [sys.executable, str(root / "bench" / "annotation_loop.py"), "--corpus", "nope.conll"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert bad.returncode == 1 and "nope.conll: no such file" in bad.stderr
