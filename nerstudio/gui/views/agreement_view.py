"""The annotator-agreement panel: two annotation files of the same text compared (issue 16).

The figures come from :func:`nerstudio.agreement.agreement` (the same as ``nerstudio agreement
A B``): exact-span P/R/F of B against A, Cohen's kappa on the tokens' IOB2 tags, overall and per
type, and the sentences that differ. Clicking a differing sentence shows both annotations of it,
one row each, entities coloured by type and those only one file has underlined in red, and
emits ``sentenceActivated(k)`` (the sentence's 0-based index) so the browser can follow when A
is the open corpus. :class:`PairDialog` asks for the two files. No behaviour beyond display: the
agreement controller computes and installs the result.
"""

from __future__ import annotations

import html
import os

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...app.types import TypeScheme
from ...numfmt import num
from .palette import text_color_on, type_color
from .row_list import sentence_rows


def kappa_text(k: float | None) -> str:
    """Kappa as the CLI prints it: three decimals, ``n/a`` when undefined."""
    return "n/a" if k is None else num(k, 3)


def _entities(d) -> tuple[str, str]:
    def one(spans):
        return ", ".join(f"[{' '.join(d.words[s.start : s.end])}]{s.label}" for s in spans)

    return one(d.only_a), one(d.only_b)


class DifferenceModel(QAbstractTableModel):
    """The differing sentences of an :class:`~nerstudio.agreement.Agreement` (any number)."""

    HEAD = ("#", "Line A", "Line B", "Only in A", "Only in B", "Sentence")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows = []

    def set_rows(self, rows) -> None:
        self.beginResetModel()
        self.rows = list(rows)
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
        if not index.isValid() or role not in (
            Qt.ItemDataRole.DisplayRole,
            Qt.ItemDataRole.ToolTipRole,
        ):
            return None
        d = self.rows[index.row()]
        col = index.column()
        if col == 0:
            return str(d.index)
        if col in (1, 2):
            line = d.line_a if col == 1 else d.line_b
            return str(line) if line else ""
        if col in (3, 4):
            return _entities(d)[col - 3]
        text = " ".join(d.words)
        return text if role == Qt.ItemDataRole.DisplayRole or len(text) < 600 else text[:600] + " …"


def annotated_html(words, spans, others, scheme: TypeScheme | None) -> str:
    """``words`` with ``spans`` as coloured boxes labelled by type; a span not in ``others`` is
    underlined in red (only this annotator has it)."""
    starts = {s.start: s for s in spans}
    out, k = [], 0
    other = set(others)
    while k < len(words):
        s = starts.get(k)
        if s is None:
            out.append(html.escape(words[k]))
            k += 1
            continue
        bg = type_color(s.label, scheme)
        fg = text_color_on(bg)
        mark = (
            "text-decoration: underline; text-decoration-color: #c62828;" if s not in other else ""
        )
        text = html.escape(" ".join(words[s.start : s.end]))
        out.append(
            f"<span style='background:{bg.name()}; color:{fg.name()}; {mark}'>&nbsp;{text}&nbsp;"
            f"<sub>{html.escape(s.label or 'entity')}</sub></span>"
            + ("<b style='color:#c62828'>*</b>" if s not in other else "")
        )
        k = s.end
    return " ".join(out)


class AgreementView(QWidget):
    sentenceActivated = Signal(int)  # 0-based index of the sentence in both files
    compareRequested = Signal()
    cancelRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("agreementView")
        self.result = None
        self.details: dict = {}
        self.scheme: TypeScheme | None = None
        self.busy = False
        self.header = QLabel(
            "Compare two annotation files of the same text: File ▸ Compare annotations…"
        )
        self.header.setObjectName("agreementHeader")
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar()
        self.progress.setObjectName("agreementProgress")
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("agreementCancel")
        self.cancel_button.setToolTip("Stop comparing")
        self.cancel_button.clicked.connect(self.cancelRequested)
        self.cancel_button.hide()
        self.compare_button = QPushButton("Compare annotations…")
        self.compare_button.setObjectName("agreementCompare")
        self.compare_button.setToolTip(
            "Choose two annotation files of the same text (A: the open corpus by default)"
        )
        self.compare_button.clicked.connect(self.compareRequested)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.progress)
        top.addWidget(self.cancel_button)
        top.addWidget(self.compare_button)
        self.table = QTableWidget(0, 7)  # one row per type: a handful
        self.table.setObjectName("agreementTable")
        self.table.setHorizontalHeaderLabels(["Type", "P", "R", "F", "κ", "A", "B"])
        for c, tip in enumerate(
            (
                "Entity type",
                "Precision of B against A: share of B's entities also in A",
                "Recall of B against A: share of A's entities also in B",
                "Span F",
                "Cohen's kappa on the tokens' tags",
                "Entities in A",
                "Entities in B",
            )
        ):
            if (item := self.table.horizontalHeaderItem(c)) is not None:
                item.setToolTip(tip)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.setToolTip(
            "Exact-span precision and recall of B against A, their F, and Cohen's kappa on the "
            "tokens' tags (per type: other types' tags count as O; n/a when undefined)"
        )
        self.model = DifferenceModel(self)
        self.list = sentence_rows(self.model, "agreementList")
        h = self.list.horizontalHeader()
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for c, w in enumerate((50, 60, 60, 140, 140)):
            h.resizeSection(c, w)
        h.setStretchLastSection(True)
        self.list.selectionModel().currentRowChanged.connect(self._on_row)
        self.detail = QLabel("Click a sentence that differs to see both annotations of it.")
        self.detail.setObjectName("agreementDetail")
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.RichText)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.list)
        right.addWidget(self.detail)
        right.setSizes([300, 120])
        split = self.split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.table)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([330, 570])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(split, 1)

    # -- states ---------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        """A message instead of a result (an error: one line)."""
        self.set_busy(None)
        self.result, self.details = None, {}
        self.header.setText(html.escape(text))
        self.table.setRowCount(0)
        self.model.set_rows([])
        self.detail.setText("")

    def set_busy(self, text: str | None) -> None:
        busy = text is not None
        self.busy = busy
        self.progress.setVisible(busy)
        self.progress.setRange(0, 0)
        self.cancel_button.setVisible(busy)
        self.compare_button.setEnabled(not busy)
        for w in (self.table, self.list):
            w.setEnabled(not busy)
        if text is not None:
            self.header.setText(f"<i>{html.escape(text)}</i>")

    def show_progress(self, done: int, total: int) -> None:
        if self.busy and total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))

    def mark_stale(self, note: str) -> None:
        if note not in self.header.text():
            self.header.setText(self.header.text() + f" · <i>{html.escape(note)}</i>")

    # -- the result -----------------------------------------------------------------------
    def set_result(
        self, result, details: dict, name_a: str, name_b: str, scheme: TypeScheme | None = None
    ) -> None:
        """Show an :class:`~nerstudio.agreement.Agreement` of files A and B; ``details`` maps a
        differing sentence's 1-based index to (A's spans, B's spans)."""
        self.set_busy(None)
        self.result, self.details, self.scheme = result, details, scheme
        ev = result.spans
        o = ev.overall
        n = len(result.differences)
        self.header.setText(
            f"<b>A</b> {html.escape(name_a)} · <b>B</b> {html.escape(name_b)}<br>{ev.sentences:,} sentences, "
            f"{ev.tokens:,} tokens · entities in A {o.gold:,}, in B {o.proposed:,}, matching {o.correct:,} · span "
            f"P <b>{o.precision:.2f}</b> R <b>{o.recall:.2f}</b> F <b>{o.f1:.2f}</b> · Cohen's κ "
            f"<b>{kappa_text(result.kappa)}</b> · same tag on {ev.token_accuracy:.2f}% of the tokens · "
            f"<b>{n:,}</b> sentence{'s' if n != 1 else ''} differ"
        )
        per_kappa = result.kappa_per_type()
        rows = [(t or "(untyped)", m, per_kappa.get(t)) for t, m in sorted(ev.per_type.items())]
        rows.append(("overall", o, result.kappa))
        self.table.setRowCount(len(rows))
        for i, (name, m, k) in enumerate(rows):
            vals = [
                name,
                f"{m.precision:.2f}",
                f"{m.recall:.2f}",
                f"{m.f1:.2f}",
                kappa_text(k),
                str(m.gold),
                str(m.proposed),
            ]
            for j, v in enumerate(vals):
                it = QTableWidgetItem(v)
                if j:
                    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                elif name != "overall":
                    it.setForeground(type_color(name, scheme))
                self.table.setItem(i, j, it)
        self.table.resizeColumnsToContents()
        hdr = self.table.horizontalHeader()
        want = sum(hdr.sectionSize(c) for c in range(hdr.count())) + 2 * self.table.frameWidth() + 4
        total = sum(self.split.sizes())
        if total > 0:
            self.split.setSizes([min(want, total // 2), total - min(want, total // 2)])
        self.model.set_rows(result.differences)
        self.detail.setText(
            "Click a sentence that differs to see both annotations of it."
            if n
            else "The two files agree on every entity."
        )

    def activate(self, row: int) -> None:
        """Select row ``row`` of the differing sentences (as a click does)."""
        self.list.setCurrentIndex(self.model.index(row, 0))

    def shown_sentence(self) -> int:
        """The 1-based index of the differing sentence shown in the detail (0: none)."""
        idx = self.list.currentIndex()
        return self.model.rows[idx.row()].index if idx.isValid() else 0

    @Slot(QModelIndex, QModelIndex)
    def _on_row(self, current, _previous) -> None:
        if not current.isValid():
            return
        d = self.model.rows[current.row()]
        a, b = self.details.get(d.index, (None, None))
        if a is None:  # not recorded: what only one file has is all that is known
            a, b = d.only_a, d.only_b
        where = " · ".join(
            x
            for x in (
                f"A line {d.line_a}" if d.line_a else "",
                f"B line {d.line_b}" if d.line_b else "",
            )
            if x
        )
        self.detail.setText(
            f"<p><b>Sentence {d.index:,}</b> {where}</p>"
            f"<p><b>A</b>&nbsp; {annotated_html(d.words, a, b, self.scheme)}</p>"
            f"<p><b>B</b>&nbsp; {annotated_html(d.words, b, a, self.scheme)}</p>"
            "<p><small><b style='color:#c62828'>*</b> only this file has the entity</small></p>"
        )
        self.sentenceActivated.emit(d.index - 1)


class PairDialog(QDialog):
    """Asks for files A and B (A defaults to the open corpus's file)."""

    def __init__(self, parent=None, path_a: str = "", start_dir: str = "", file_filter: str = ""):
        super().__init__(parent)
        self.setWindowTitle("Compare annotations")
        self.setObjectName("agreementDialog")
        self._dir, self._filter = start_dir, file_filter or "All files (*)"
        form = QFormLayout(self)
        form.addRow(
            QLabel(
                "Two annotation files of the same text, in any format nerstudio reads. B is scored "
                "against A (precision: share of B's entities also in A)."
            )
        )
        self.edit_a, self.edit_b = QLineEdit(path_a), QLineEdit()
        for label, edit in (("A (reference)", self.edit_a), ("B", self.edit_b)):
            row = QHBoxLayout()
            row.addWidget(edit, 1)
            browse = QToolButton()
            browse.setText("…")
            browse.setToolTip("Choose the file")
            browse.clicked.connect(lambda _=False, e=edit: self._browse(e))
            row.addWidget(browse)
            form.addRow(label, row)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Compare")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.resize(560, self.sizeHint().height())

    def _browse(self, edit: QLineEdit) -> None:
        start = os.path.dirname(edit.text()) if edit.text() else self._dir
        path, _ = QFileDialog.getOpenFileName(self, "Annotation file", start, self._filter)
        if path:
            edit.setText(path)

    def paths(self) -> tuple[str, str]:
        return self.edit_a.text().strip(), self.edit_b.text().strip()
