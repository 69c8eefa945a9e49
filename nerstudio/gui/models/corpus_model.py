"""A tree model over a Corpus: documents at the top level, their sentences below.

Rows are computed from the corpus on demand (no item per cell), so eng.train-sized corpora
(15k sentences) stay fast. A status column summarises the N-best list (baseline right/wrong,
reranker right/wrong, gold missing) when one is attached, an uncertainty column the tagger's
doubt about it (:mod:`nerstudio.app.uncertainty`). Given an order (``set_order``: "most uncertain first"), the
model is flat instead: one row per sentence, in that order, no document rows. The filter proxy
combines a text search with a boolean mask over sentences (has errors, reranker changed, entity
type, uncertain, ...).
"""

from __future__ import annotations

import bisect
import html
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QColor

from ...corpus.model import Corpus
from ...numfmt import num
from .proxy import refilter
from .roles import ALIGN_RIGHT, ALIGNMENT, DISPLAY, FOREGROUND, TOOLTIP, USER
from .tree import TreeModel

if TYPE_CHECKING:  # the arrays come from the document: numpy loads with it, not with the window
    import numpy as np

_DOC = 0xFFFFFFFF  # internalId of document rows; sentence rows store their document index
_FLAT = 0xFFFFFFFE  # internalId of the sentence rows of the flat (ordered) model
# data() for one role of a document or sentence row: (model, corpus, document or sentence, column)
_RowData = Callable[["CorpusTreeModel", Corpus, int, int], Any]


class CorpusTreeModel(TreeModel):
    COLUMNS = ("Sentence", "Tokens", "Entities", "N-best", "Uncertainty")
    # the counts get narrow columns (short titles, the full name in the tooltip) so that the
    # sentence column keeps most of the browser's width
    SHORT = ("Sentence", "Tok", "Ent", "N-best", "p(top)")
    HEADER_TIPS = (
        "The sentence (hover a row for all of it)",
        "Tokens in the sentence",
        "Gold entities",
        "The N-best list on this sentence (hover for what the marks mean)",
        "How sure the tagger is of this sentence (the measure of the browser's order; click to sort "
        "most uncertain first, again for the reverse)",
    )
    UNCERTAINTY = 4
    STATUS_TIPS: ClassVar[dict[str, str]] = {
        "✓": "the tagger's top candidate is exactly right",
        "✗": "the tagger's top candidate is wrong",
        "✗→✓": "the top candidate is wrong; the reranker picks a right one",
        "✓→✗": "the top candidate is right; the reranker picks a wrong one",
        "✗→✗": "the top candidate is wrong; the reranker picks another wrong one",
        "✓→✓": "the reranker picks another candidate with the same (right) entities",
    }
    SentenceRole = USER + 1  # global sentence index (or -1 for documents)
    statusChanged = Signal()  # the N-best column changed for many sentences: repaint

    def __init__(self, corpus: Corpus | None = None, parent=None):
        super().__init__(parent)
        self._corpus: Corpus | None = None
        self._offsets: list[int] = []
        self._status: list[str] | None = None
        self._order: np.ndarray | None = None  # flat mode: sentence of each row
        self._pos: np.ndarray | None = None  # flat mode: row of each sentence (-1: not listed)
        # per sentence: the uncertainty column (NaN: none)
        self._unc: np.ndarray | Sequence[float] | None = None
        self._unc_title, self._unc_tip = "p(top)", ""
        self._unc_marks: np.ndarray | Sequence[bool] | None = None
        self.set_corpus(corpus)

    def set_corpus(self, corpus: Corpus | None) -> None:
        self.beginResetModel()
        self._corpus = corpus
        self._offsets = []
        self._status = None
        self._order = self._pos = self._unc = self._unc_marks = None
        if corpus is not None:
            k = 0
            for d in corpus.documents:
                self._offsets.append(k)
                k += len(d.sentences)
        self.endResetModel()

    def set_status(self, flags: dict[str, np.ndarray] | None) -> None:
        """Per-sentence N-best status from :meth:`Session.flags` (None: no N-best list)."""
        if self._corpus is None:
            return
        self.set_status_texts(status_texts(flags) if flags and flags["has_nbest"].any() else None)

    def set_status_texts(self, texts: list[str] | None) -> None:
        """The N-best column of every sentence, as :func:`status_texts` gives it (None: no N-best
        list)."""
        if self._corpus is None:
            return
        self._status = texts
        n = self.rowCount()
        if n:
            # One signal for the document rows. The sentence rows get no per-document signal: 946
            # of them on eng.train made the filter proxy map every document (100+ ms in the main
            # thread); nothing caches this column and the proxy's filters do not read it, so a
            # repaint of the views (statusChanged) is all they need.
            self.dataChanged.emit(self.index(0, 3), self.index(n - 1, 3))
        self.statusChanged.emit()

    def set_order(self, order: np.ndarray | None) -> None:
        """Show the sentences flat, in ``order`` (corpus indices); None: the document tree."""
        if self._corpus is None:
            return
        import numpy as np  # an order is the document's array: numpy is loaded

        same = (order is None and self._order is None) or (
            order is not None and self._order is not None and np.array_equal(order, self._order)
        )
        if same:
            return
        self.beginResetModel()
        if order is None:
            self._order = self._pos = None
        else:
            self._order = np.asarray(order, dtype=np.int64)
            self._pos = np.full(len(self._corpus), -1, dtype=np.int64)
            self._pos[self._order] = np.arange(len(self._order))
        self.endResetModel()

    @property
    def flat(self) -> bool:
        return self._order is not None

    def order(self) -> np.ndarray | None:
        return self._order

    def set_uncertainty(
        self,
        values: np.ndarray | Sequence[float] | None,
        title: str = "p(top)",
        tip: str = "",
        marks: np.ndarray | Sequence[bool] | None = None,
    ) -> None:
        """The uncertainty column: one number per sentence (NaN or None: blank), its header and
        what it measures; ``marks``: sentences whose reranker overrules the tagger (a ≠)."""
        self._unc, self._unc_title, self._unc_tip, self._unc_marks = values, title, tip, marks
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, self.UNCERTAINTY, self.UNCERTAINTY)
        n = self.rowCount()
        if n:
            self.dataChanged.emit(
                self.index(0, self.UNCERTAINTY), self.index(n - 1, self.UNCERTAINTY)
            )
        self.statusChanged.emit()

    def uncertainty(self) -> tuple[Any, str, str, Any]:
        """The uncertainty column as :meth:`set_uncertainty` was given it: (values, title, tip,
        marks)."""
        return self._unc, self._unc_title, self._unc_tip, self._unc_marks

    def uncertainty_text(self, k: int) -> str:
        v = self._unc
        if v is None or k >= len(v) or math.isnan(v[k]):
            return ""
        mark = "≠ " if self._unc_marks is not None and self._unc_marks[k] else ""
        return mark + num(v[k], 3)

    def sentence_changed(self, k: int, columns: tuple[int, ...] = (1, 2, 3)) -> None:
        """Sentence ``k`` changed (its gold, hence its entity count and N-best status): signal its
        row and its document's row (whose counts add up its sentences)."""
        if self._corpus is None:
            return
        idx = self.index_of_sentence(k)
        lo, hi = min(columns), max(columns)
        self.dataChanged.emit(idx.siblingAtColumn(lo), idx.siblingAtColumn(hi))
        if self._order is not None:
            return  # no document rows
        doc = self.index(self.document_of(k), 0)
        self.dataChanged.emit(doc.siblingAtColumn(lo), doc.siblingAtColumn(hi))

    def set_sentence_status(self, k: int, text: str) -> None:
        """The N-best status of one sentence (after its gold was edited)."""
        if self._status is not None and 0 <= k < len(self._status):
            self._status[k] = text

    def has_status(self) -> bool:
        return self._status is not None

    def statuses(self) -> list[str] | None:
        """The N-best column of every sentence (None: no N-best list)."""
        return None if self._status is None else list(self._status)

    def status(self, k: int) -> str:
        return self._status[k] if self._status is not None else ""

    @property
    def offsets(self) -> list[int]:
        return self._offsets

    @property
    def corpus(self) -> Corpus | None:
        return self._corpus

    # -- structure ------------------------------------------------------------------------
    def index(self, row, column, parent=QModelIndex()):
        # bounds checked here rather than with hasIndex(): this runs thousands of times a repaint
        c = self._corpus
        if c is None or row < 0 or not 0 <= column < 5:
            return QModelIndex()
        if self._order is not None:
            if parent.isValid() or row >= len(self._order):
                return QModelIndex()
            return self.createIndex(row, column, _FLAT)
        if not parent.isValid():
            return self.createIndex(row, column, _DOC) if row < len(c.documents) else QModelIndex()
        if parent.internalId() != _DOC or parent.column() != 0:
            return QModelIndex()
        d = parent.row()
        if row >= len(c.documents[d].sentences):
            return QModelIndex()
        return self.createIndex(row, column, d)

    def parent_of(self, index):
        if not index.isValid() or index.internalId() in (_DOC, _FLAT):
            return QModelIndex()
        return self.createIndex(index.internalId(), 0, _DOC)

    def rowCount(self, parent=QModelIndex()):
        if self._corpus is None:
            return 0
        if self._order is not None:
            return 0 if parent.isValid() else len(self._order)
        if not parent.isValid():
            return len(self._corpus.documents)
        if parent.internalId() == _DOC and parent.column() == 0:
            return len(self._corpus.documents[parent.row()].sentences)
        return 0

    def columnCount(self, parent=QModelIndex()):
        return len(self.COLUMNS)

    def headerData(self, section, orientation, role=DISPLAY):
        if orientation == Qt.Orientation.Horizontal and role == DISPLAY:
            return self._unc_title if section == self.UNCERTAINTY else self.SHORT[section]
        if orientation == Qt.Orientation.Horizontal and role == TOOLTIP:
            if section == self.UNCERTAINTY and self._unc_tip:
                return (
                    f"{self._unc_tip} (click to sort most uncertain first, again for the reverse)"
                )
            return self.HEADER_TIPS[section]
        return None

    # -- data -----------------------------------------------------------------------------
    def sentence_index(self, index) -> int:
        """Global sentence index of a sentence row, -1 for a document row."""
        if not index.isValid() or index.internalId() == _DOC:
            return -1
        if index.internalId() == _FLAT and self._order is not None:  # flat rows: an order
            return int(self._order[index.row()])
        return self._offsets[index.internalId()] + index.row()

    def sentence_of_row(self, row: int, parent) -> int:
        """Global sentence index of row ``row`` under ``parent`` (-1 for a document row)."""
        if self._order is not None:
            return -1 if parent.isValid() or row >= len(self._order) else int(self._order[row])
        if not parent.isValid():
            return -1
        return self._offsets[parent.row()] + row

    def document_of(self, k: int) -> int:
        """Index of the document holding global sentence ``k``."""
        return bisect.bisect_right(self._offsets, k) - 1

    def index_of_sentence(self, k: int) -> QModelIndex:
        if self._order is not None and self._pos is not None:  # set together
            r = int(self._pos[k]) if 0 <= k < len(self._pos) else -1
            return self.createIndex(r, 0, _FLAT) if r >= 0 else QModelIndex()
        d = self.document_of(k)
        return self.index(k - self._offsets[d], 0, self.index(d, 0))

    def data(self, index, role=DISPLAY):
        if not index.isValid() or self._corpus is None:
            return None
        corpus = self._corpus
        if index.internalId() == _DOC:
            of_document = self._DOCUMENT_DATA.get(role)
            if of_document is None:
                return None
            return of_document(self, corpus, index.row(), index.column())
        of_sentence = self._SENTENCE_DATA.get(role)
        if of_sentence is None:
            return None
        return of_sentence(self, corpus, self.sentence_index(index), index.column())

    # -- data() of a document row by role: (document, column) -> value -------------------------
    def _document_display(self, corpus: Corpus, d: int, col: int):
        doc = corpus.documents[d]
        if col == 0:
            first = doc.sentences[0].text() if doc.sentences else ""
            return f"Document {doc.id} — {first[:60]}"
        if col == 1:
            return sum(len(s) for s in doc.sentences)
        if col == 2:
            return sum(len(s.spans) for s in doc.sentences)
        if col == 3 and self._status is not None:
            o = self._offsets[d]
            statuses = self._status[o : o + len(doc.sentences)]
            bad = sum(1 for x in statuses if x.startswith("✗"))
            return f"{bad} ✗" if bad else "✓"
        return None

    def _document_tooltip(self, corpus: Corpus, d: int, col: int):
        if col != 0:
            return None
        doc = corpus.documents[d]
        return f"Document {doc.id}: {len(doc.sentences):,} sentences"

    def _document_sentence(self, corpus: Corpus, d: int, col: int) -> int:
        return -1

    # -- data() of a sentence row by role: (sentence, column) -> value -------------------------
    def _sentence_display(self, corpus: Corpus, k: int, col: int):
        if col == 0:
            return corpus.sentences[k].text()
        if col == 1:
            return len(corpus.sentences[k])
        if col == 2:
            return len(corpus.sentences[k].spans)
        if col == 3:
            return self.status(k)
        if col == 4:
            return self.uncertainty_text(k)
        return None

    def _sentence_alignment(self, corpus: Corpus, k: int, col: int):
        return ALIGN_RIGHT if col == 4 else None

    def _sentence_tooltip(self, corpus: Corpus, k: int, col: int):
        if col == 4:
            return self._uncertainty_tip(k)
        if col == 3:
            return self._status_tip(k)
        if col == 0:
            return self._sentence_tip(corpus, k)
        return None

    def _uncertainty_tip(self, k: int) -> str:
        t = self.uncertainty_text(k)
        if not t:
            return "no N-best list for this sentence"
        return f"{self._unc_tip}: {t}" + (
            "\n≠: the reranker picks another candidate than the tagger's top one"
            if t.startswith("≠")
            else ""
        )

    def _status_tip(self, k: int) -> str:
        st = self.status(k)
        if not st:
            return "no N-best list for this sentence"
        tip = self.STATUS_TIPS.get(st.replace(" ∉", ""), st)
        return tip + ("\n∉: the gold entities are not among the candidates" if "∉" in st else "")

    def _sentence_tip(self, corpus: Corpus, k: int) -> str:
        s = corpus.sentences[k]
        ents = "; ".join(f"{lab}: {txt}" for lab, txt in s.entity_texts()) or "no entities"
        where = corpus.location(k, self.document_of(k))
        text = s.text()
        if len(text) > 600:  # a tooltip, not a reader: the sentence view shows all of it
            text = text[:600] + " …"
        # rich text, so that Qt wraps a long sentence instead of making one screen-wide line
        return (
            f"<p style='white-space:normal'>{html.escape(text)}</p>"
            f"<p><i>{html.escape(ents)}</i><br>{html.escape(where)}</p>"
        )

    def _sentence_foreground(self, corpus: Corpus, k: int, col: int):
        if col != 3:
            return None
        st = self.status(k)
        if st.endswith("✓"):
            return QColor("#2e7d32")
        if "✗" in st:
            return QColor("#c62828")
        return None

    def _sentence_sentence(self, corpus: Corpus, k: int, col: int) -> int:
        return k

    _DOCUMENT_DATA: ClassVar[dict[int, _RowData]] = {
        DISPLAY: _document_display,
        TOOLTIP: _document_tooltip,
        SentenceRole: _document_sentence,
    }
    _SENTENCE_DATA: ClassVar[dict[int, _RowData]] = {
        DISPLAY: _sentence_display,
        ALIGNMENT: _sentence_alignment,
        TOOLTIP: _sentence_tooltip,
        FOREGROUND: _sentence_foreground,
        SentenceRole: _sentence_sentence,
    }


def status_text(flags: dict[str, np.ndarray], k: int) -> str:
    """The N-best column of sentence ``k``: ✓/✗ for the tagger's top candidate, →✓/→✗ for the
    reranker's pick when it differs, ∉ when the gold is not among the candidates."""
    if not flags["has_nbest"][k]:
        return ""
    base = "✗" if flags["error"][k] else "✓"
    rer = flags.get("rerank_error")
    if rer is not None and flags["changed"][k]:  # the reranker picked another candidate
        base += "→" + ("✗" if rer[k] else "✓")
    if flags["missing"][k]:
        base += " ∉"
    return base


def status_texts(flags: dict[str, np.ndarray]) -> list[str]:
    """:func:`status_text` of every sentence, through a table of the 13 possible texts."""
    import numpy as np  # the flags are the document's arrays: numpy is loaded

    has = flags["has_nbest"]
    n = len(has)
    rer = flags.get("rerank_error")
    changed = flags["changed"] if rer is not None else np.zeros(n, dtype=bool)
    rer = rer if rer is not None else np.zeros(n, dtype=bool)
    code = (
        flags["error"].astype(np.int64) + 2 * changed + 4 * (changed & rer) + 8 * flags["missing"]
    )
    code = np.where(has, code, 16)
    table = []
    for c in range(17):
        fl = {
            "has_nbest": np.array([c < 16]),
            "error": np.array([bool(c & 1)]),
            "changed": np.array([bool(c & 2)]),
            "rerank_error": np.array([bool(c & 4)]),
            "missing": np.array([bool(c & 8)]),
        }
        table.append(status_text(fl, 0))
    return np.array(table, dtype=object)[code].tolist()


class SentenceFilterProxy(QSortFilterProxyModel):
    """Keeps sentences that contain the search text and pass the mask, and their documents.

    The search is a case-insensitive substring test on the sentence text (precomputed once per
    corpus); the mask is a boolean array over global sentence indices (None: all pass).
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(0)
        self._needle = ""
        self._mask: np.ndarray | None = None
        self._texts: list[str] | None = None
        self._offsets: list[int] = []

    def setSourceModel(self, model) -> None:
        super().setSourceModel(model)
        model.modelReset.connect(self._reset_cache)
        self._reset_cache()

    def _reset_cache(self) -> None:
        self._texts = None
        src = self._tree()
        self._offsets = list(src.offsets) if src is not None else []

    def _tree(self) -> CorpusTreeModel | None:
        src = self.sourceModel()
        return src if isinstance(src, CorpusTreeModel) else None

    @property
    def active(self) -> bool:
        return bool(self._needle) or self._mask is not None

    def set_filter(self, needle: str = "", mask: np.ndarray | None = None) -> None:
        """Keep the sentences containing ``needle`` that ``mask`` keeps. The same filter again
        costs nothing: filtering a large corpus's rows takes the window's thread for a while."""
        needle = needle.lower()
        fresh = needle and self._texts is None  # (a new corpus: its texts, then a filtering)
        if fresh:
            src = self._tree()
            corpus = src.corpus if src is not None else None
            self._texts = [s.text().lower() for s in corpus.sentences] if corpus is not None else []
        was = self._mask
        if mask is None:
            same_mask = was is None
        else:
            import numpy as np  # a mask is the browser's array: numpy is loaded

            mask = np.array(mask, dtype=bool)  # a copy: the caller's changes
            same_mask = was is not None and np.array_equal(mask, was)
        if same_mask and not fresh and needle == self._needle:
            return

        def change():
            self._needle = needle
            self._mask = mask

        refilter(self, change)

    def setFilterFixedString(self, text: str) -> None:  # keep the Qt spelling working
        self.set_filter(text, self._mask)

    def accepts(self, k: int) -> bool:
        if self._mask is not None and (k >= len(self._mask) or not self._mask[k]):
            return False
        return not (self._needle and (self._texts is None or self._needle not in self._texts[k]))

    def filterAcceptsRow(self, row, parent):
        if not self.active:
            return True
        src = self._tree()
        k = src.sentence_of_row(row, parent) if src is not None else -1
        return k >= 0 and self.accepts(k)  # a document stays when one of its sentences does
