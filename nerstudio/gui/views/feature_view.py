"""The feature panel: why a candidate scores what it scores, and why one beats another.

One candidate selected: its global features with value, weight and contribution (plus the L(x)
term), grouped by template, sorted by |contribution|, searchable. Two selected: only the
features that differ between them and how much each moves F(A) − F(B), under a sentence that
says in words why the reranker prefers one (:func:`~nerstudio.rerank.explanation.why_sentence`,
which reads the table's own order and is rebuilt when grouping or the zero-weight filter change).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ...numfmt import num
from ...rerank.explanation import why_sentence
from ..models.feature_model import FeatureFilterProxy, FeatureTreeModel, TermRow
from .fitting import keep_rows
from .group_rows import GroupRowDelegate, span_groups
from .line_scroll import LineScroll


class FeaturePanel(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("featurePanel")
        self.model = FeatureTreeModel(self)
        self.proxy = FeatureFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.header = QLabel()
        self.header.setObjectName("featureHeader")
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.search = QLineEdit()
        self.search.setObjectName("featureSearch")
        self.search.setPlaceholderText("Filter features…")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(
            "Show only features whose name contains this text (or a template name, e.g. WE)"
        )
        self.search.textChanged.connect(self._on_search)
        self.group = QCheckBox("Group")
        self.group.setObjectName("featureGroup")
        self.group.setChecked(True)
        self.group.setToolTip(
            "Group features under their template (WE, BO01, Q, …) with the group's total"
        )
        self.group.toggled.connect(self._on_group)
        self.hide_zero = QCheckBox("Hide zero weights")
        self.hide_zero.setObjectName("featureHideZero")
        self.hide_zero.setChecked(True)
        self.hide_zero.setToolTip(
            "Hide features the reranker gave no weight (boosting leaves most at zero)"
        )
        self.hide_zero.toggled.connect(self._on_hide_zero)
        self.model.set_hide_zero(True)
        self._why = None  # (lead, A, B, delta, breakdown, who) of the comparison shown, to rebuild its sentence
        self._base_header = ""
        self.view = QTreeView()
        self.view.setObjectName("featureView")
        self.view.setModel(self.proxy)
        self.view.setUniformRowHeights(True)
        self.view.setAlternatingRowColors(True)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # a template's description over the empty number columns, not cut at the first
        self.group_rows = GroupRowDelegate(self.view)
        self.view.setItemDelegateForColumn(0, self.group_rows)
        span_groups(self.view)
        self.view.header().setStretchLastSection(False)
        keep_rows(self.view, 4)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.search, 1)
        row.addWidget(self.hide_zero)
        row.addWidget(self.group)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        # the why sentence takes the lines it needs (at least three when the room is short, then
        # it scrolls): the tree keeps its rows
        self.header_box = LineScroll(self.header, max_lines=3, parent=self)
        lay.addWidget(self.header_box)
        lay.addLayout(row)
        lay.addWidget(self.view, 1)
        self.show_message("Select a candidate to see its global features")

    def hidden_count(self) -> int:
        """Terms the zero-weight filter hides."""
        return self.model.hidden_count()

    # -- content --------------------------------------------------------------------------
    def show_terms(self, rows: list[TermRow], header: str, compare: bool = False) -> None:
        """Any terms under a ready-made header (HTML)."""
        self._why = None
        self._show(rows, header, compare)

    def show_explanation(
        self,
        rows: list[TermRow],
        title: str,
        score: float,
        parts: list[tuple[str, float]] | None = None,
        note: str = "",
    ) -> None:
        """One candidate: its terms under "title · score S = part + part…". ``parts`` default to
        the L(x) term and the sum of the global features (a reranker's score); ``note`` (HTML)
        follows."""
        if parts is None:
            lx = sum(r.contribution for r in rows if r.template in ("L", "L(x)"))
            n = sum(1 for r in rows if r.template not in ("L", "L(x)"))
            parts = [
                ("L(x) term", lx),
                (f"{n} global feature{'s' if n != 1 else ''}", float(score) - lx),
            ]
        head = f"<b>{html.escape(title)}</b> · score {num(score)}"
        if parts:
            head += " = " + " + ".join(f"{html.escape(k)} {num(v, sign=True)}" for k, v in parts)
        self.show_terms(rows, head + note)

    def show_comparison(
        self,
        rows: list[TermRow],
        a: str,
        b: str,
        delta: float,
        scores: tuple[float, float] | None = None,
        breakdown: list[tuple[str, float]] | None = None,
        note: str = "",
        who: str = "the reranker",
    ) -> None:
        """Two candidates: the terms of F(A) − F(B) (``delta``; contribution > 0 favours A) under
        "A = a (score) vs B = b (score)" and the sentence saying why ``who`` prefers one, which
        names the table's top rows in words. ``a``/``b`` name the candidates ("candidate 3");
        ``breakdown`` names parts of ``delta`` (a joint tagger's local and non-local scores);
        ``note`` (HTML) follows the scores."""
        sa, sb = ("", "") if scores is None else (f" ({num(scores[0])})", f" ({num(scores[1])})")
        lead = f"<b>A = {html.escape(a)}</b>{sa} vs <b>B = {html.escape(b)}</b>{sb}{note}:"
        self._why = (lead, a, b, float(delta), breakdown, who)
        self._show(rows, "", True)

    def why_text(self) -> str:
        """The current "why" sentence (plain text; empty unless two candidates are compared)."""
        if self._why is None:
            return ""
        _, a, b, delta, breakdown, who = self._why
        return why_sentence(
            self.model.shown_terms(),
            delta,
            a,
            b,
            grouped=self.model.grouped,
            rich=False,
            breakdown=breakdown,
            who=who,
        )

    def _header_text(self, header: str) -> str:
        if self._why is not None:
            lead, a, b, delta, breakdown, who = self._why
            sentence = why_sentence(
                self.model.shown_terms(),
                delta,
                a,
                b,
                grouped=self.model.grouped,
                breakdown=breakdown,
                who=who,
            )
            header = f"{lead} {sentence}"
        hidden = self.hidden_count()
        if hidden:
            plural = "s" if hidden > 1 else ""
            header += (
                f" <span style='color:#777'>({hidden} zero-weight feature{plural} hidden)</span>"
            )
        return header

    def _show(self, rows: list[TermRow], header: str, compare: bool) -> None:
        self.model.set_terms(rows, compare)
        self._base_header = header
        self.header.setText(self._header_text(header))
        self._layout_columns()
        if self.model.grouped:
            n = self.proxy.rowCount()
            # open the groups that matter most; keep long lists compact
            for r in range(n):
                self.view.setExpanded(self.proxy.index(r, 0), r < 4 or n <= 8)

    def show_message(self, html: str) -> None:
        self._why = None
        self._base_header = ""
        self.model.clear()
        self.header.setText(html)

    def shown(self) -> tuple[list[TermRow], str, bool] | None:
        """The terms shown with :meth:`show_terms` (or :meth:`show_explanation`) and their header
        (HTML, before the hidden count), and whether they compare two candidates; None when the
        panel shows a message or a comparison's "why" sentence."""
        if self._why is not None or not self._base_header:
            return None
        return list(self.model.terms()), self._base_header, self.model.compare_mode

    def _layout_columns(self) -> None:
        # fixed widths for the numbers: ResizeToContents would read every row on each change
        h = self.view.header()
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        fm = self.view.fontMetrics()
        wide = fm.horizontalAdvance("+00.000") + 14
        narrow = fm.horizontalAdvance("-0.000") + 12
        for c in range(1, self.model.columnCount()):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
            short = (self.model.compare_mode and c in (1, 2)) or (
                not self.model.compare_mode and c == 1
            )
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
        self._refresh_header()

    def _refresh_header(self) -> None:
        """The why sentence and the hidden count follow the table (grouping, zero-weight filter)."""
        if self.model.rowCount() or self._why is not None:
            self.header.setText(self._header_text(self._base_header))

    @Slot(bool)
    def _on_group(self, on: bool) -> None:
        self.model.set_grouped(on)
        self._layout_columns()
        self._refresh_header()
        if on:
            for r in range(min(4, self.proxy.rowCount())):
                self.view.setExpanded(self.proxy.index(r, 0), True)
