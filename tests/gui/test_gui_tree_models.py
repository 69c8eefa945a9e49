"""The window's tree models keep both meanings of ``parent()``: with an index, the row it hangs
under (what the views ask); without one, the QObject that owns the model (what any QObject
answers). Overriding only the first made ``model.parent()`` raise TypeError."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QModelIndex, QObject

from nerstudio.corpus.model import Corpus, Document, Sentence
from nerstudio.gui.models.corpus_model import CorpusTreeModel
from nerstudio.gui.models.feature_model import FeatureTreeModel, TermRow
from nerstudio.gui.models.importance_model import ImportanceTreeModel


def test_each_tree_model_answers_parent_without_an_index_with_its_owner(qapp):
    owner = QObject()
    for cls in (FeatureTreeModel, ImportanceTreeModel):
        assert cls(owner).parent() is owner
    assert CorpusTreeModel(None, owner).parent() is owner
    assert CorpusTreeModel().parent() is None


def test_a_sentence_hangs_under_its_document_and_a_document_under_the_top(qapp):
    docs = [Document([Sentence(["a"]), Sentence(["b"])], id="d0"), Document([Sentence(["c"])])]
    model = CorpusTreeModel(Corpus(docs))
    doc1 = model.index(1, 0, QModelIndex())
    assert doc1.isValid() and not model.parent(doc1).isValid()
    sentence = model.index(0, 0, doc1)
    assert sentence.isValid() and model.parent(sentence) == doc1


def test_a_feature_hangs_under_its_template_group(qapp):
    model = FeatureTreeModel()
    model.set_terms([TermRow("BO01:x", "BO01", 1.0, None, 0.5, 0.5)])
    group = model.index(0, 0, QModelIndex())
    assert group.isValid() and not model.parent(group).isValid()
    feature = model.index(0, 0, group)
    assert feature.isValid() and model.parent(feature) == group
