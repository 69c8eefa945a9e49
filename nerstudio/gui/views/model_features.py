"""The "what has this reranker learned?" view: its templates and features ranked over a corpus.

It shows a :class:`~nerstudio.rerank.importance.ModelImportance` (computed off the main thread by
its controller, :mod:`nerstudio.gui.controllers.model_features`): templates
with the decisions they move and resist and the contributions summed over them, each template's
features under it, every name explained in words. Clicking a row emits ``sentencesRequested``
with the sentences (indices into the N-best list) where that template or feature moves the
decision, or resists it when the click is on the Resists or Against column; the window filters
its browser to them. Choosing what the pick is compared with (the tagger's top candidate or the
runner-up) emits ``refreshRequested``.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ..models.importance_model import ImportanceFilterProxy, ImportanceTreeModel
from .fitting import narrow_combo

if TYPE_CHECKING:  # the ranking (scipy) is imported where its job runs, not at start-up
    from ...rerank.importance import ModelImportance

AGAINST_CHOICES = (
    ("changes from the tagger's top candidate", "baseline"),
    ("the pick against its runner-up", "runner-up"),
)


class ModelFeaturesView(QWidget):
    sentencesRequested = Signal(list)  # N-best sentence indices, increasing
    refreshRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("modelFeaturesView")
        self.result: ModelImportance | None = None
        self.header = QLabel()
        self.header.setObjectName("modelFeaturesHeader")
        self.header.setWordWrap(True)
        self.against_box = QComboBox()
        self.against_box.setObjectName("modelFeaturesAgainst")
        for label, key in AGAINST_CHOICES:
            self.against_box.addItem(label, key)
        self.against_box.setToolTip(
            "Which decisions to rank by: the sentences where the reranker changed the "
            "tagger's top candidate, or every sentence, its pick against the candidate it "
            "scores second"
        )
        self.against_box.currentIndexChanged.connect(lambda _i: self.refreshRequested.emit())
        self.search = QLineEdit()
        self.search.setObjectName("modelFeaturesSearch")
        self.search.setPlaceholderText("Filter templates and features…")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(
            "Show only templates and features whose name or meaning contains this text"
        )
        self.search.textChanged.connect(self._on_search)
        self.refresh_button = QPushButton("Recompute")
        self.refresh_button.setObjectName("modelFeaturesRefresh")
        self.refresh_button.setToolTip("Rank again (after training or rescoring)")
        self.refresh_button.clicked.connect(self.refreshRequested)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(120)
        self.progress.setTextVisible(False)
        self.progress.setRange(0, 0)
        self.progress.hide()
        self.busy = False
        self.model = ImportanceTreeModel(self)
        self.proxy = ImportanceFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.tree = QTreeView()
        self.tree.setObjectName("modelFeaturesTree")
        self.tree.setModel(self.proxy)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSortingEnabled(True)
        # the core's ranking until a header is clicked
        self.tree.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.clicked.connect(self._on_clicked)
        h = self.tree.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(ImportanceTreeModel.MEANING, QHeaderView.ResizeMode.Stretch)
        # no column narrower than the "Meaning" title: on a narrow window the tree scrolls sideways
        h.setMinimumSectionSize(h.fontMetrics().horizontalAdvance("Meaning") + 20)
        fm = self.tree.fontMetrics()
        h.resizeSection(
            ImportanceTreeModel.NAME, fm.horizontalAdvance("TE2011:ORG=NULL Aa0 Aa0") + 30
        )
        for c in range(ImportanceTreeModel.MOVES, len(ImportanceTreeModel.COLUMNS)):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
            h.resizeSection(c, fm.horizontalAdvance("+000.000") + 14)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        narrow_combo(self.against_box, 10)
        self.search.setMinimumWidth(self.fontMetrics().horizontalAdvance("Filter templates") + 30)
        top.addWidget(QLabel("Decisions:"))
        top.addWidget(self.against_box)
        top.addWidget(self.search, 1)
        top.addWidget(self.progress)
        top.addWidget(self.refresh_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.header)
        lay.addLayout(top)
        lay.addWidget(self.tree, 1)
        self.show_message(
            "Load a reranker and an N-best list to see which features move its decisions."
        )

    # -- content --------------------------------------------------------------------------
    def against(self) -> str:
        """What the pick is compared with: ``baseline`` or ``runner-up``."""
        return self.against_box.currentData()

    def set_against(self, key: str) -> None:
        self.against_box.setCurrentIndex(
            next(i for i, (_l, k) in enumerate(AGAINST_CHOICES) if k == key)
        )

    def show_message(self, text: str) -> None:
        self.set_busy(None)
        self.result = None
        self.model.set_result(None)
        self.header.setText(text)

    def set_busy(self, text: str | None) -> None:
        """A ranking is being computed (``text``), or it is over (None)."""
        self.busy = text is not None
        self.progress.setVisible(self.busy)
        self.refresh_button.setEnabled(not self.busy)
        self.tree.setEnabled(not self.busy)
        if text is not None:
            self.header.setText(f"<i>{html.escape(text)}</i>")

    def set_result(self, result: ModelImportance, name: str = "") -> None:
        self.set_busy(None)
        self.result = result
        self.model.set_result(result)
        n = len(result.decisions)
        what = (
            "sentences where the reranker changed the tagger's top candidate"
            if result.against == "baseline"
            else "sentences, the reranker's pick against its runner-up"
        )
        self.header.setText(
            f"<b>{html.escape(name or 'N-best list')}</b>: {n:,} decisions ({what}) of {result.n_sentences:,} "
            f"sentences · {len(result.templates)} templates and {len(result.features):,} features move or "
            "resist them. Click a row to list the sentences it moves (on Resists/Against: those it resists)."
        )
        for r in range(min(3, self.proxy.rowCount())):
            self.tree.setExpanded(self.proxy.index(r, 0), True)

    def sentences_at(self, proxy_index) -> list[int]:
        """The sentences a click on ``proxy_index`` asks for."""
        x = self.model.impact_at(self.proxy.mapToSource(proxy_index))
        if x is None:
            return []
        against = proxy_index.column() in (ImportanceTreeModel.RESISTS, ImportanceTreeModel.AGAINST)
        return list(x.sentences_against if against else x.sentences_for)

    @Slot(QModelIndex)
    def _on_clicked(self, index) -> None:
        if index.isValid():
            self.sentencesRequested.emit(self.sentences_at(index))

    @Slot(str)
    def _on_search(self, text: str) -> None:
        self.proxy.set_needle(text)
        if text:
            self.tree.expandAll()
