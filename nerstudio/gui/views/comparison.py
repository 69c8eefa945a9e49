"""The comparison tab: the tagger's top candidate against the reranked output, with the oracle.

The numbers come from :func:`nerstudio.compare.compare_outputs`. The summary table shows overall
and per-type P/R/F of the baseline and the reranked output next to the corpus oracle F; the
sentence table lists the sentences of one kind (fixed, broken, better, worse, changed, gold not
among the candidates, all) with the rank of the gold analysis among the candidates. Clicking a
sentence emits ``sentenceActivated(nbest_row)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .error_table import ErrorTable
from .fitting import AdaptiveSplitter, narrow_combo
from .row_list import sentence_rows

if TYPE_CHECKING:  # its result only: the comparison itself (numpy) runs in the controller's job
    from ...experiments.compare import OutputComparison

KINDS = (
    ("Fixed by the reranker", "fixed"),
    ("Broken by the reranker", "broken"),
    ("Better (still wrong)", "better"),
    ("Worse (still wrong)", "worse"),
    ("Changed by the reranker", "changed"),
    ("Gold not among the candidates", "missing"),
    ("All sentences", "all"),
)
_COLOURS = {"fixed": "#2e7d32", "broken": "#c62828", "better": "#558b2f", "worse": "#d84315"}


class SentenceListModel(QAbstractTableModel):
    HEAD = ("#", "Verdict", "Gold rank", "Pick", "Baseline F", "Reranked F", "Sentence")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows = []
        self.words = []

    def set_rows(self, rows, words) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.words = words
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()):
        return len(self.HEAD)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEAD[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        s = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return str(s.index + 1)
            if col == 1:
                return s.verdict
            if col == 2:
                return str(s.gold_rank) if s.gold_rank else "∉"
            if col == 3:
                return str(s.choice + 1)
            if col == 4:
                return f"{s.baseline_f:.1f}"
            if col == 5:
                return f"{s.reranked_f:.1f}"
            if col == 6:
                return " ".join(self.words[s.index])
        elif role == Qt.ItemDataRole.ForegroundRole and col == 1 and s.verdict in _COLOURS:
            return QColor(_COLOURS[s.verdict])
        elif role == Qt.ItemDataRole.ToolTipRole and col == 2:
            return (
                "gold is not among the candidates"
                if not s.gold_rank
                else f"the gold analysis is candidate {s.gold_rank}"
            )
        return None


class ComparisonView(QWidget):
    sentenceActivated = Signal(int)  # N-best sentence
    refreshRequested = Signal()
    devRequested = Signal(bool)  # compare on the dev list (True) or on the attached list (False)
    # an error-analysis cell clicked: these list sentences, why
    sentencesWanted = Signal(object, str)

    #: what the view says until it has something to compare
    OPENING = "Load an N-best list with gold (and a reranker) to compare."

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("comparisonView")
        self.result: OutputComparison | None = None
        self.header = QLabel(self.OPENING)
        self.header.setObjectName("comparisonHeader")
        self.header.setWordWrap(True)
        self.refresh_button = QPushButton("Recompute")
        self.refresh_button.setObjectName("comparisonRefresh")
        self.refresh_button.setToolTip(
            "Compare again (after training, rescoring or editing the gold)"
        )
        self.refresh_button.clicked.connect(self.refreshRequested)
        self.busy = False
        self.progress = QProgressBar()
        self.progress.setObjectName("comparisonProgress")
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.dev_button = QPushButton("Compare on the dev list")
        self.dev_button.setObjectName("comparisonDevButton")
        self.dev_button.setCheckable(True)
        self.dev_button.setToolTip(
            "Score the development N-best list with the reranker and compare on it (it is "
            "opened first if none is loaded): sentences the reranker never saw"
        )
        self.dev_button.clicked.connect(self.devRequested)
        self.banner = QLabel()
        self.banner.setObjectName("comparisonBanner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(
            "QLabel { background: #fff3cd; color: #664d03; border: 1px solid #e0c36a; "
            "padding: 4px; }"
        )
        self.banner.hide()
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.progress)
        top.addWidget(self.dev_button)
        top.addWidget(self.refresh_button)
        self.table = QTableWidget(0, 8)  # one row per entity type: a handful
        self.table.setObjectName("comparisonTable")
        # two-line titles: "Rerank P" and the like do not fit eight columns side by side
        self.table.setHorizontalHeaderLabels(
            [
                "Type",
                "Base\nP",
                "Base\nR",
                "Base\nF",
                "Rerank\nP",
                "Rerank\nR",
                "Rerank\nF",
                "Oracle\nF",
            ]
        )
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        # every column at least as wide as its title's longer line ("Rerank"): never "6…" or "L…"
        hfm = self.table.horizontalHeader().fontMetrics()
        self.table.horizontalHeader().setMinimumSectionSize(
            max(
                hfm.horizontalAdvance(line)
                for c in range(self.table.columnCount())
                if (item := self.table.horizontalHeaderItem(c)) is not None
                for line in item.text().split("\n")
            )
            + 14
        )
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.kind = QComboBox()
        self.kind.setObjectName("comparisonKind")
        for label, key in KINDS:
            self.kind.addItem(label, key)
        self.kind.currentIndexChanged.connect(self._fill_list)
        self.model = SentenceListModel(self)
        self.list = sentence_rows(self.model, "comparisonList")
        h = self.list.horizontalHeader()
        fm = self.list.fontMetrics()
        for c, sample in enumerate(
            ("00000", "broken", "Gold rank", "Pick", "Baseline F", "Reranked F")
        ):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
            h.resizeSection(c, fm.horizontalAdvance(sample) + 16)
        h.setSectionResizeMode(6, QHeaderView.ResizeMode.Stretch)
        h.moveSection(6, 1)  # the sentence right after its number: never scrolled out of sight
        self.list.selectionModel().currentRowChanged.connect(self._on_row)
        # the per-type scores and the error analysis take turns (tabs): one above the other,
        # each showed a row or two on a 1280×800 screen
        self.errors = ErrorTable()  # F by entity and sentence length, seen / unseen, errors by kind
        self.errors.sentencesWanted.connect(self.sentencesWanted)
        left = self.left_tabs = QTabWidget()
        left.setObjectName("comparisonTabs")
        left.setDocumentMode(True)
        left.addTab(self.table, "By type")
        left.addTab(self.errors, "Error analysis")
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        narrow_combo(self.kind, 10)
        rv.addWidget(self.kind)
        rv.addWidget(self.list, 1)
        # the per-type table above the list when narrow
        split = AdaptiveSplitter(140, shares=(0.42, 0.5))
        split.setObjectName("comparisonSplitter")
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([380, 520])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.banner)
        lay.addWidget(split, 1)

    # -- content --------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.set_busy(None)
        self.set_optimistic("")
        self.result = None
        self.header.setText(text)
        self.table.setRowCount(0)
        self.model.set_rows([], [])

    def set_busy(self, text: str | None) -> None:
        """Show that a comparison is being computed (``text``), or that it is over (None). The
        previous result stays visible, greyed, meanwhile."""
        busy = text is not None
        self.busy = busy
        self.progress.setVisible(busy)
        self.progress.setRange(0, 0)
        self.refresh_button.setEnabled(not busy)
        for w in (self.table, self.list, self.kind):
            w.setEnabled(not busy)
        if busy:
            self.header.setText(f"<i>{text}</i>")

    def show_progress(self, done: int, total: int) -> None:
        if self.busy and total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))

    def set_optimistic(self, warning: str) -> None:
        """A visible warning that the figures flatter the reranker ('' hides it)."""
        self.banner.setText(warning)
        self.banner.setVisible(bool(warning))

    def set_source(self, on_dev: bool, dev_loaded: bool) -> None:
        """Which list is compared: the button offers the other one."""
        self.dev_button.setChecked(on_dev)
        self.dev_button.setText(
            "Back to the corpus's list"
            if on_dev
            else "Compare on the dev list"
            if dev_loaded
            else "Open the dev list…"
        )

    def mark_stale(self, note: str) -> None:
        self.header.setText(self.header.text() + f" · <i>{note}</i>")

    def set_errors(self, systems: dict, cells: dict) -> None:
        """The error analysis of the baseline and the reranked output (see :class:`ErrorTable`)."""
        self.errors.set_analysis(systems, cells)

    def set_result(
        self, result: OutputComparison, words, has_reranker: bool = True, name: str = ""
    ) -> None:
        self.set_busy(None)
        self.result = result
        self.words = words
        b, r, o = result.baseline, result.reranked, result.oracle
        n = len(result.sentences)
        self.header.setText(
            f"<b>{name or 'N-best list'}</b>: {n:,} sentences · baseline F <b>{b.f1:.2f}</b> → reranked F "
            f"<b>{r.f1:.2f}</b> · oracle F <b>{o.f1:.2f}</b> · the reranker changed {result.changed:,}, "
            f"fixed <span style='color:#2e7d32'>{len(result.fixed):,}</span>, broke "
            f"<span style='color:#c62828'>{len(result.broken):,}</span> · gold among the candidates in "
            f"{result.gold_in_list:,} of {n:,}"
            + ("" if has_reranker else " · <i>no reranker: baseline only</i>")
        )
        types = result.types()
        rows = [
            (t or "(untyped)", b.per_type.get(t), r.per_type.get(t), o.per_type.get(t))
            for t in types
        ]
        rows.append(("overall", b.overall, r.overall, o.overall))
        self.table.setRowCount(len(rows))
        for i, (name_, pb, pr, po) in enumerate(rows):
            vals = [name_]
            for m in (pb, pr):
                vals += [f"{m.precision:.2f}", f"{m.recall:.2f}", f"{m.f1:.2f}"] if m else ["–"] * 3
            vals.append(f"{po.f1:.2f}" if po else "–")
            for j, v in enumerate(vals):
                it = QTableWidgetItem(v)
                if j:
                    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, it)
        self._fill_list()

    def set_kind(self, key: str) -> None:
        self.kind.setCurrentIndex(next(i for i, (_l, k) in enumerate(KINDS) if k == key))

    def shown(self) -> list[int]:
        """N-best sentences listed now."""
        return [s.index for s in self.model.rows]

    @Slot()
    def _fill_list(self, *_a) -> None:
        if self.result is None:
            self.model.set_rows([], [])
            return
        key = self.kind.currentData()
        ss = self.result.sentences
        if key == "all":
            rows = ss
        elif key == "changed":
            rows = [s for s in ss if s.choice > 0]
        elif key == "missing":
            rows = [s for s in ss if not s.gold_rank]
        else:
            rows = [s for s in ss if s.verdict == key]
        self.model.set_rows(rows, self.words)

    def activate(self, row: int) -> None:
        """Select row ``row`` of the sentence list (as a click does)."""
        self.list.setCurrentIndex(self.model.index(row, 0))

    @Slot(QModelIndex, QModelIndex)
    def _on_row(self, current, _previous) -> None:
        if current.isValid():
            self.sentenceActivated.emit(self.model.rows[current.row()].index)
