"""A tree model over a Corpus: documents at the top level, their sentences below.

Rows are computed from the corpus on demand (no item per cell), so eng.train-sized corpora
(15k sentences) stay fast. A filter proxy searches sentence text.
"""

from __future__ import annotations

import bisect

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QSortFilterProxyModel, Qt

from ...corpus.model import Corpus

_DOC = 0xFFFFFFFF  # internalId of document rows; sentence rows store their document index


class CorpusTreeModel(QAbstractItemModel):
    COLUMNS = ("Sentence", "Tokens", "Entities")
    SentenceRole = Qt.UserRole + 1  # global sentence index (or -1 for documents)

    def __init__(self, corpus: Corpus | None = None, parent=None):
        super().__init__(parent)
        self._corpus: Corpus | None = None
        self._offsets: list[int] = []
        self.set_corpus(corpus)

    def set_corpus(self, corpus: Corpus | None) -> None:
        self.beginResetModel()
        self._corpus = corpus
        self._offsets = []
        if corpus is not None:
            k = 0
            for d in corpus.documents:
                self._offsets.append(k)
                k += len(d.sentences)
        self.endResetModel()

    @property
    def corpus(self) -> Corpus | None:
        return self._corpus

    # -- structure ------------------------------------------------------------------------
    def index(self, row, column, parent=QModelIndex()):
        if self._corpus is None or not self.hasIndex(row, column, parent):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, _DOC)
        return self.createIndex(row, column, parent.row())

    def parent(self, index):
        if not index.isValid() or index.internalId() == _DOC:
            return QModelIndex()
        return self.createIndex(index.internalId(), 0, _DOC)

    def rowCount(self, parent=QModelIndex()):
        if self._corpus is None:
            return 0
        if not parent.isValid():
            return len(self._corpus.documents)
        if parent.internalId() == _DOC and parent.column() == 0:
            return len(self._corpus.documents[parent.row()].sentences)
        return 0

    def columnCount(self, parent=QModelIndex()):
        return len(self.COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return self.COLUMNS[section]
        return None

    # -- data -----------------------------------------------------------------------------
    def sentence_index(self, index) -> int:
        """Global sentence index of a sentence row, -1 for a document row."""
        if not index.isValid() or index.internalId() == _DOC:
            return -1
        return self._offsets[index.internalId()] + index.row()

    def document_of(self, k: int) -> int:
        """Index of the document holding global sentence ``k``."""
        return bisect.bisect_right(self._offsets, k) - 1

    def index_of_sentence(self, k: int) -> QModelIndex:
        d = self.document_of(k)
        return self.index(k - self._offsets[d], 0, self.index(d, 0))

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or self._corpus is None:
            return None
        col = index.column()
        if index.internalId() == _DOC:
            doc = self._corpus.documents[index.row()]
            if role == Qt.DisplayRole:
                if col == 0:
                    first = doc.sentences[0].text() if doc.sentences else ""
                    return f"Document {doc.id} — {first[:60]}"
                if col == 1:
                    return sum(len(s) for s in doc.sentences)
                if col == 2:
                    return sum(len(s.spans) for s in doc.sentences)
            if role == self.SentenceRole:
                return -1
            return None
        k = self._offsets[index.internalId()] + index.row()
        s = self._corpus.sentences[k]
        if role == Qt.DisplayRole:
            if col == 0:
                return s.text()
            if col == 1:
                return len(s)
            if col == 2:
                return len(s.spans)
        elif role == Qt.ToolTipRole and col == 0:
            ents = "; ".join(f"{lab}: {txt}" for lab, txt in s.entity_texts()) or "no entities"
            where = f"{self._corpus.path}:{s.line}" if s.line else ""
            return f"{where}\n{ents}".strip()
        elif role == self.SentenceRole:
            return k
        return None


class SentenceFilterProxy(QSortFilterProxyModel):
    """Keeps documents that contain a matching sentence, and matching sentences."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setFilterCaseSensitivity(Qt.CaseInsensitive)
        self.setFilterKeyColumn(0)
