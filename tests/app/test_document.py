"""The document model without Qt: one copy of gold, undo history, revisions, autosave policy."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from nerstudio.app import recovery
from nerstudio.app.attachments import index_nbest
from nerstudio.app.autosave import AutosavePolicy, Autosaver
from nerstudio.app.document import ChangeKind, Document
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR
from nerstudio.nbest import NBestList

NBEST = DEMO_MODEL_DIR / "train.nbest.npz"


class FakeClock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _doc(tmp_path) -> Document:
    dst = tmp_path / "train.conll"
    shutil.copyfile(DEMO_DIR / "train.conll", dst)
    d = Document()
    d.open(read_corpus(str(dst)))
    return d


def _empty_sentences(doc, n):
    return [k for k, s in enumerate(doc.corpus.sentences) if not s.spans and len(s) >= 2][:n]


@pytest.mark.data_integrity
def test_autosave_policy_has_a_maximum_delay():
    clock = FakeClock()
    p = AutosavePolicy(debounce=3, max_delay=5, clock=clock)
    assert p.deadline() is None and not p.due()
    p.edited()
    assert p.deadline() == clock.t + 3
    # an edit every second postpones the debounce, never the maximum delay
    written = []
    for second in range(1, 16):
        clock.t += 1
        if p.due():
            written.append(second)
            p.written()
        p.edited()
    assert written and all(b - a <= 5 for a, b in zip([0] + written, written))
    # quiet after an edit: due after the debounce
    p.written()
    p.edited()
    clock.t += 2.9
    assert not p.due()
    clock.t += 0.2
    assert p.due()


@pytest.mark.data_integrity
def test_autosaver_follows_the_document(tmp_path):
    doc = _doc(tmp_path)
    clock = FakeClock()
    saver = Autosaver(doc, str(tmp_path / "rec"), AutosavePolicy(3, 5, clock))
    deadlines = []
    saver.scheduled = deadlines.append
    k1, k2 = _empty_sentences(doc, 2)
    doc.set_spans(k1, [Span(0, 1, "ORG")], "mark")
    assert deadlines[-1] == clock.t + 3
    assert saver.poll() is None  # not due yet
    clock.t += 3
    path = saver.poll()
    assert path and recovery.read_recovery(path).edits == {k1: [Span(0, 1, "ORG")]}
    doc.set_spans(k2, [Span(0, 2, "LOC")], "mark")
    clock.t += 5
    assert recovery.read_recovery(saver.poll()).edits == {
        k1: [Span(0, 1, "ORG")],
        k2: [Span(0, 2, "LOC")],
    }
    # undo back to the saved state: the file goes at once, nothing is scheduled
    doc.undo()
    assert os.path.exists(path)
    doc.undo()
    assert not doc.is_dirty() and not os.path.exists(path) and deadlines[-1] is None
    # redo, save: clean again, no file
    doc.redo()
    clock.t += 5
    assert saver.poll() == path
    doc.mark_saved()
    assert not os.path.exists(path) and doc.unsaved() == []


@pytest.mark.data_integrity
def test_history_and_dirty_state(tmp_path):
    doc = _doc(tmp_path)
    seen = []
    doc.subscribe(seen.append)
    k = _empty_sentences(doc, 1)[0]
    assert doc.set_spans(k, [Span(0, 1, "PER")], "mark") == []
    assert doc.set_spans(k, [Span(0, 1, "PER")], "again") is None  # nothing changes: no step
    assert doc.history.count() == 1 and doc.is_dirty() and doc.unsaved() == [k]
    assert (
        seen[-1].kind is ChangeKind.GOLD
        and seen[-1].sentences == (k,)
        and seen[-1].revision == doc.revision
    )
    doc.mark_saved()
    assert not doc.is_dirty()
    doc.undo()
    assert doc.is_dirty() and doc.corpus.sentences[k].spans == []
    doc.set_spans(k, [Span(0, 2, "LOC")], "other")  # the saved state is no longer reachable
    doc.undo()
    assert doc.is_dirty()
    with pytest.raises(ValueError):
        doc.set_spans(k, [Span(0, 99, "LOC")])
    # several sentences in one step (a recovery), undone at once
    a, b = _empty_sentences(doc, 3)[1:]
    assert doc.set_many({a: [Span(0, 1, "ORG")], b: [], k: []}, "recover") == [a]
    doc.undo()
    assert doc.corpus.sentences[a].spans == []


@pytest.mark.data_integrity
def test_an_attached_list_takes_its_gold_from_the_corpus(tmp_path):
    if not NBEST.exists():
        pytest.skip("demo N-best list not built")
    doc = _doc(tmp_path)
    c = doc.corpus
    nb = NBestList.load(str(NBEST))
    # the corpus was edited and saved after the list was made: two sentences differ
    k0, k1 = 1, 5
    edited = {k0: nb.spans(k0, 2), k1: []}  # the demo list is in corpus order
    for k, sp in edited.items():
        c.sentences[k].spans = list(sp)
    ix = index_nbest(c, nb, revision=doc.revision)
    assert ix.differ == sum(
        1 for k in edited if sorted(nb.gold.own[ix.row_of[k]]) != sorted(edited[k])
    )
    doc.attach_nbest(ix, str(NBEST))
    i0 = doc.nbest_row(k0)
    assert doc.nbest.gold[i0] == edited[k0]
    assert doc.exact()[doc.candidate_rows(i0)][2]  # candidate 3 is the gold now
    assert doc.nbest_source() is None  # the file's gold is not the corpus's: a run gets a copy
    with pytest.raises(TypeError):
        doc.nbest.gold[i0] = []  # gold is edited in the corpus only
    # an edit reaches the list's counts, flags and the snapshot a training run gets
    snap_before = doc.nbest_snapshot()
    doc.set_spans(k0, nb.spans(i0, 0), "accept top")
    assert doc.exact()[doc.candidate_rows(i0)][0] and not doc.flags()["error"][k0]
    assert doc.nbest_snapshot().gold[i0] == nb.spans(i0, 0)
    assert snap_before.gold[i0] == edited[k0]  # a snapshot does not move
    # the demo list names no documents: a run's snapshot takes the corpus's
    assert "documents" not in nb.meta and "documents" not in doc.nbest.meta
    assert snap_before.meta["documents"] == [
        c.sentence_document()[k] for k in doc.nbest.gold.sentence_of.tolist()
    ]
    assert len(set(snap_before.meta["documents"])) == len(c.documents) > 1


def test_list_documents_from_the_list_the_corpus_or_neither(tmp_path):
    """Each list sentence's document: the list's own, else the attached corpus's (a sentence
    the corpus lacks a document of its own), else unknown."""
    from nerstudio.app.attachments import list_documents
    from nerstudio.corpus.model import Corpus, Sentence
    from nerstudio.corpus.model import Document as CorpusDocument

    def sent(*words):
        return Sentence(list(words), [])

    corpus = Corpus([CorpusDocument([sent("a"), sent("b")]), CorpusDocument([sent("c")])])
    cands = [np.zeros((1, 1), dtype=np.int16)] * 3
    nb = NBestList(["N"], [("c",), ("x",), ("a",)], cands, [np.zeros(1)] * 3)
    assert list_documents(nb) is None
    ix = index_nbest(corpus, nb)
    assert list(ix.row_of) == [2, -1, 0]  # "b" is not in the list, "x" not in the corpus
    assert list_documents(nb) == [1, 2 + 1, 0]
    nb.meta["documents"] = [7, 7, 8]
    assert list_documents(nb) == [7, 7, 8]


@pytest.mark.data_integrity
def test_edits_made_while_a_list_is_indexed_are_counted(tmp_path):
    if not NBEST.exists():
        pytest.skip("demo N-best list not built")
    doc = _doc(tmp_path)
    nb = NBestList.load(str(NBEST))
    rev = doc.revision  # the worker starts here ...
    ix = index_nbest(doc.corpus, nb, revision=rev)
    k = 1
    i = int(ix.row_of[k])
    doc.set_spans(k, nb.spans(i, 3), "accept 4")  # ... an edit lands before it is installed
    doc.attach_nbest(ix)
    assert doc.span_f(i)[3] == 100.0 and doc.exact()[doc.candidate_rows(i)][3]


def test_the_document_model_imports_no_qt():
    import subprocess
    import sys

    code = (
        "import sys, nerstudio.app.document, nerstudio.app.autosave, nerstudio.app.attachments; "
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'nerstudio.gui'))]; print(bad); "
        "sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_a_context_reranker_scores_an_attached_list_with_the_corpus_documents(tmp_path):
    """A reranker with document context (trained in the window or by `nerstudio experiment`)
    scores the demo's list, which names no documents, with the documents of the corpus it is
    attached to; an unattached copy gets each sentence as its own document. Neither raises."""
    if not NBEST.exists():
        pytest.skip("demo N-best list not built")
    from nerstudio.app.attachments import score_nbest
    from nerstudio.rerank.model import train_reranker

    doc = _doc(tmp_path)
    nb = NBestList.load(str(NBEST))
    doc.attach_nbest(index_nbest(doc.corpus, nb, revision=doc.revision), str(NBEST))
    snap = doc.nbest_snapshot()  # carries the corpus's documents
    model = train_reranker(snap, None, "averaged", {"epochs": 1}, {"context": True})
    assert "documents" not in doc.nbest.meta
    scored = score_nbest(model, doc.nbest)
    explicit = model.scores(model.data(snap))
    assert np.array_equal(scored.scores, explicit)
    assert "documents" not in doc.nbest.meta  # the document's list is not changed
    alone = NBestList.load(str(NBEST))  # no corpus: each sentence a document of its own
    alone.meta["documents"] = list(range(len(alone)))
    assert np.array_equal(
        score_nbest(model, NBestList.load(str(NBEST))).scores, model.scores(model.data(alone))
    )
    assert not np.array_equal(scored.scores, model.scores(model.data(alone)))
