"""The N-best panel: a header line and a table of the current sentence's candidates.

Selecting one candidate emits ``candidateSelected(j)``; selecting two emits
``pairSelected(a, b)`` (a = the first one clicked). Columns that need gold or a reranker are
hidden when those are missing.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..models.nbest_model import NBestTableModel
from .fitting import keep_rows


class NBestPanel(QWidget):
    candidateSelected = Signal(int)
    pairSelected = Signal(int, int)
    selectionCleared = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("nbestPanel")
        self.model = NBestTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(NBestTableModel.SortRole)
        self.header = QLabel("N-best candidates")
        self.header.setObjectName("nbestHeader")
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.view = QTableView()
        self.view.setObjectName("nbestView")
        self.view.setModel(self.proxy)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(22)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setToolTip(
            "Candidates of the sentence. Click one to draw it; Ctrl+click a second one to see "
            "why the reranker prefers one over the other."
        )
        h = self.view.horizontalHeader()
        fm = self.view.fontMetrics()
        for c, sample in enumerate(("Rank", "-00.000", "-00.000", "Rerank", "100.0")):
            # fixed, tight widths (ResizeToContents would read every row on each sentence switch):
            # the "differs from top" column, the one to read, gets the rest
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
            h.resizeSection(c, fm.horizontalAdvance(sample) + 12)
        h.setSectionResizeMode(NBestTableModel.DIFF, QHeaderView.ResizeMode.Stretch)
        self._fit_width()
        self.view.selectionModel().selectionChanged.connect(self._on_selection)
        self._order: list[int] = []  # selected source rows, in the order they were selected
        self._quiet = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.header)
        lay.addWidget(self.view, 1)
        self.kept = keep_rows(self.view, 4)  # at scale 2 the candidates kept two rows and a half

    # -- content --------------------------------------------------------------------------
    def set_candidates(
        self, words, spans, logprobs, scores=None, f=None, chosen=None, exact=None, header: str = ""
    ) -> None:
        self._quiet = True
        try:
            self.view.selectionModel().clearSelection()
            self._order = []
            self.model.set_candidates(words, spans, logprobs, scores, f, chosen, exact)
            self.view.setColumnHidden(NBestTableModel.SCORE, scores is None)
            self.view.setColumnHidden(NBestTableModel.RERANK, scores is None)
            self.view.setColumnHidden(NBestTableModel.F, f is None)
        finally:
            self._quiet = False
        self._fit_width()
        self.header.setText(header or "N-best candidates")

    def _fit_width(self) -> None:
        """Never narrower than the shown number columns and the "Differs" title: the candidates'
        differences are what the table is read for (a narrow window stacks the panels instead)."""
        h = self.view.horizontalHeader()
        fixed = sum(
            h.sectionSize(c)
            for c in range(self.model.columnCount())
            if c != NBestTableModel.DIFF and not self.view.isColumnHidden(c)
        )
        diff = h.fontMetrics().horizontalAdvance(
            str(self.model.headerData(NBestTableModel.DIFF, Qt.Orientation.Horizontal))
        )
        self.view.setMinimumWidth(
            fixed
            + diff
            + 24
            + self.view.verticalScrollBar().sizeHint().width()
            + 2 * self.view.frameWidth()
        )

    def after_zoom(self) -> None:  # the zoom changed the font and scaled the columns
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 8)
        self._fit_width()

    def set_score_label(self, label: str) -> None:
        """Title of the tagger-score column: "L(x)" (log-probability) or "score" (a perceptron or
        joint tagger's total score Φ·w)."""
        self.model.set_score_label(label)

    def clear(self, header: str = "No N-best list for this sentence") -> None:
        self.set_candidates((), [], [], header=header)

    def select(self, *rows: int) -> None:
        """Select candidates by their tagger rank index (0-based); the first becomes 'A'."""
        sm = self.view.selectionModel()
        self._quiet = True
        try:
            sm.clearSelection()
            self._order = []
        finally:
            self._quiet = False
        for k, j in enumerate(rows):
            idx = self.proxy.mapFromSource(self.model.index(j, 0))
            flag = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
            if k == 0:
                self.view.setCurrentIndex(idx)
                sm.select(
                    idx,
                    QItemSelectionModel.SelectionFlag.ClearAndSelect
                    | QItemSelectionModel.SelectionFlag.Rows,
                )
            else:
                sm.select(idx, flag)

    def selected(self) -> list[int]:
        return list(self._order)

    @Slot(object, object)
    def _on_selection(self, _sel, _desel) -> None:
        rows = {self.proxy.mapToSource(i).row() for i in self.view.selectionModel().selectedRows()}
        self._order = [r for r in self._order if r in rows] + sorted(
            r for r in rows if r not in self._order
        )
        if self._quiet:
            return
        if len(self._order) == 1:
            self.candidateSelected.emit(self._order[0])
        elif len(self._order) >= 2:
            self.pairSelected.emit(self._order[0], self._order[1])
        else:
            self.selectionCleared.emit()
