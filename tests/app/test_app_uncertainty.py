"""The corpus browser's "most uncertain first", as the document model computes it
(nerstudio.app.uncertainty): the core's measures of the attached list mapped to corpus
sentences, following a new list and new scores. No Qt."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from nerstudio.app.attachments import index_nbest, score_nbest
from nerstudio.app.document import Document
from nerstudio.app.uncertainty import DocumentUncertainty
from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR
from nerstudio.nbest import NBestList
from nerstudio.rerank.model import RerankerModel
from nerstudio.rerank.uncertainty import uncertainty, uncertainty_order

NBEST = DEMO_MODEL_DIR / "train.nbest.npz"
pytestmark = pytest.mark.skipif(
    not NBEST.exists(), reason="demo N-best lists not built (tools/demo/build_model.py)"
)


@pytest.fixture
def doc(tmp_path) -> Document:
    dst = tmp_path / "train.conll"
    shutil.copyfile(DEMO_DIR / "train.conll", dst)
    d = Document()
    d.open(read_corpus(str(dst)))
    return d


def _attach(doc: Document) -> NBestList:
    nb = NBestList.load(str(NBEST))
    doc.attach_nbest(index_nbest(doc.corpus, nb, revision=doc.revision), str(NBEST))
    return nb


def _expected(doc: Document, measure: str, model=None) -> list[int]:
    """The core's order of the attached list, as corpus sentences."""
    u = uncertainty(doc.nbest, model)
    sentence_of = {int(i): k for k, i in enumerate(doc.nbest_index.row_of) if i >= 0}
    return [sentence_of[int(i)] for i in uncertainty_order(u, measure)]


def test_without_a_list_nothing_is_measured_and_the_reason_is_given(doc):
    du = DocumentUncertainty(doc)
    assert du.measures() is None and du.order("mass") is None and du.values("mass") is None
    assert "No N-best list" in du.why_unavailable("mass")
    assert du.why_unavailable("nonsense") == "unknown measure 'nonsense'"


def test_the_order_is_the_cores_mapped_to_the_corpus(doc):
    _attach(doc)
    du = DocumentUncertainty(doc)
    for m in ("mass", "margin"):
        assert du.why_unavailable(m) == ""
        assert du.ranked(m).tolist() == _expected(doc, m)
    u = uncertainty(doc.nbest)
    k = int(du.ranked("margin")[0])
    assert du.values("margin")[k] == pytest.approx(u.margin[doc.nbest_row(k)])
    assert du.values("mass")[k] == pytest.approx(u.mass[doc.nbest_row(k)])
    # disagreement needs a reranker's scores of the list
    assert du.why_unavailable("disagreement").startswith("Needs a reranker")
    assert du.disagrees() is None and du.order("disagreement") is None


def test_new_scores_and_a_new_list_are_followed_and_gold_edits_change_nothing(doc):
    nb = _attach(doc)
    du = DocumentUncertainty(doc)
    first = du.measures()
    k = int(du.ranked("mass")[0])
    doc.set_spans(k, [])  # a gold edit: the candidates' scores, so the measures, stay
    assert du.measures() is first
    model = RerankerModel.load(str(DEMO_MODEL_DIR / "reranker.npz"))
    doc.install_scores(score_nbest(model, nb))
    assert du.measures() is not first and du.why_unavailable("disagreement") == ""
    assert du.ranked("disagreement").tolist() == _expected(doc, "disagreement", model)
    disagrees = du.disagrees()
    choice = np.asarray(doc.scored.choice)
    assert disagrees.tolist() == [
        bool(choice[i] != 0) if i >= 0 else False for i in doc.nbest_index.row_of.tolist()
    ]
    again = du.measures()
    _attach(doc)  # a new list (the same file read again): measured anew, without the scores
    assert du.measures() is not again and du.measures().choice is None
