"""The feature panel: why a candidate scores what it scores, and why one beats another.

One candidate selected: its global features with value, weight and contribution (plus the L(x)
term), grouped by template, sorted by |contribution|, searchable. Two selected: only the
features that differ between them and how much each moves F(A) − F(B).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QTreeView,
                               QVBoxLayout, QWidget)

from ..models.feature_model import FeatureFilterProxy, FeatureTreeModel, TermRow


class FeaturePanel(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("featurePanel")
        self.model = FeatureTreeModel(self)
        self.proxy = FeatureFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.header = QLabel()
        self.header.setObjectName("featureHeader")
        self.header.setTextFormat(Qt.RichText)
        self.header.setWordWrap(True)
        self.search = QLineEdit()
        self.search.setObjectName("featureSearch")
        self.search.setPlaceholderText("Filter features…")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip("Show only features whose name contains this text (or a template name, e.g. WE)")
        self.search.textChanged.connect(self._on_search)
        self.group = QCheckBox("Group")
        self.group.setObjectName("featureGroup")
        self.group.setChecked(True)
        self.group.setToolTip("Group features under their template (WE, BO01, Q, …) with the group's total")
        self.group.toggled.connect(self._on_group)
        self.hide_zero = QCheckBox("Hide zero weights")
        self.hide_zero.setObjectName("featureHideZero")
        self.hide_zero.setChecked(True)
        self.hide_zero.setToolTip("Hide features the reranker gave no weight (boosting leaves most at zero)")
        self.hide_zero.toggled.connect(self._on_hide_zero)
        self.model.set_hide_zero(True)
        self.view = QTreeView()
        self.view.setObjectName("featureView")
        self.view.setModel(self.proxy)
        self.view.setUniformRowHeights(True)
        self.view.setAlternatingRowColors(True)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.AscendingOrder)
        self.view.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.view.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.view.header().setStretchLastSection(False)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.search, 1)
        row.addWidget(self.hide_zero)
        row.addWidget(self.group)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.header)
        lay.addLayout(row)
        lay.addWidget(self.view, 1)
        self.show_message("Select a candidate to see its global features")

    def hidden_count(self) -> int:
        """Terms the zero-weight filter hides."""
        return self.model.hidden_count()

    # -- content --------------------------------------------------------------------------
    def show_terms(self, rows: list[TermRow], header: str, compare: bool = False) -> None:
        self.model.set_terms(rows, compare)
        hidden = self.hidden_count()
        if hidden:
            header += f" <span style='color:#777'>({hidden} zero-weight feature{'s' if hidden > 1 else ''} hidden)</span>"
        self.header.setText(header)
        self._layout_columns()
        if self.model.grouped:
            n = self.proxy.rowCount()
            # open the groups that matter most; keep long lists compact
            for r in range(n):
                self.view.setExpanded(self.proxy.index(r, 0), r < 4 or n <= 8)

    def show_message(self, html: str) -> None:
        self.model.clear()
        self.header.setText(html)

    def _layout_columns(self) -> None:
        # fixed widths for the numbers: ResizeToContents would read every row on each change
        h = self.view.header()
        h.setSectionResizeMode(0, QHeaderView.Stretch)
        fm = self.view.fontMetrics()
        wide = fm.horizontalAdvance("+00.000") + 14
        narrow = fm.horizontalAdvance("-0.000") + 12
        for c in range(1, self.model.columnCount()):
            h.setSectionResizeMode(c, QHeaderView.Interactive)
            short = self.model.compare_mode and c in (1, 2) or (not self.model.compare_mode and c == 1)
            h.resizeSection(c, narrow if short else wide)

    def visible_feature_names(self) -> list[str]:
        """Names of the features currently shown (after filtering), in display order."""
        out = []
        p = self.proxy

        def walk(parent):
            for r in range(p.rowCount(parent)):
                idx = p.index(r, 0, parent)
                term = self.model.term_at(p.mapToSource(idx))
                if term is None:
                    walk(idx)
                else:
                    out.append(term.name)
        from PySide6.QtCore import QModelIndex
        walk(QModelIndex())
        return out

    @Slot(str)
    def _on_search(self, text: str) -> None:
        self.proxy.set_needle(text)
        if text:
            self.view.expandAll()

    @Slot(bool)
    def _on_hide_zero(self, on: bool) -> None:
        self.model.set_hide_zero(on)
        self._layout_columns()

    @Slot(bool)
    def _on_group(self, on: bool) -> None:
        self.model.set_grouped(on)
        self._layout_columns()
        if on:
            for r in range(min(4, self.proxy.rowCount())):
                self.view.setExpanded(self.proxy.index(r, 0), True)
