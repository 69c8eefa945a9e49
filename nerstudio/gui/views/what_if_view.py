"""The "What if" tab: edit the sentence and see the tagger's candidates, the reranker's choice and
each candidate's score change against the sentence as it is (nothing reaches the corpus)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...numfmt import num

COLUMNS = ("Rank", "L(x)", "Score", "Δ score", "Entities", "Why")


class WhatIfView(QWidget):
    edited = Signal(str)  # the sentence as typed
    resetRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("whatIfView")
        self.edit = QLineEdit()
        self.edit.setObjectName("whatIfEdit")
        self.edit.setPlaceholderText(
            "Edit the sentence: change a word or its case, delete or insert a token, or "
            "type a new sentence (tokens are separated by spaces)"
        )
        self.edit.setToolTip("Nothing you type here changes the corpus")
        self.edit.textEdited.connect(self.edited)
        self.reset_button = QPushButton("Back to the sentence")
        self.reset_button.setObjectName("whatIfReset")
        self.reset_button.clicked.connect(self.resetRequested)
        self.header = QLabel()
        self.header.setObjectName("whatIfHeader")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("whatIfTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        for c, tip in (
            (
                5,
                "What changed the candidate's score: the features it gained "
                "(+) and lost (−) with their weights, and the L(x) term",
            ),
            (
                3,
                "The score change against the candidate of the sentence as it is with the same "
                "entities",
            ),
        ):
            if (item := self.table.horizontalHeaderItem(c)) is not None:
                item.setToolTip(tip)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        h = self.table.horizontalHeader()
        fm = h.fontMetrics()
        for c in range(4):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
            h.resizeSection(
                c, max(fm.horizontalAdvance(COLUMNS[c]), fm.horizontalAdvance("-00.000")) + 18
            )
        h.setSectionResizeMode(4, QHeaderView.ResizeMode.Interactive)
        h.resizeSection(4, fm.horizontalAdvance("MISC Northern Lakes Rail") + 18)
        h.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        h.setMinimumSectionSize(fm.horizontalAdvance("Rank") + 18)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.reset_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(row)
        lay.addWidget(self.header)
        lay.addWidget(self.table, 1)

    def set_sentence(self, text: str) -> None:
        self.edit.setText(text)

    def show_message(self, text: str) -> None:
        self.header.setText(text)
        self.table.setRowCount(0)

    def show_result(self, new, changes, ms: float, same: bool) -> None:
        """``new``: the edited sentence's :class:`~nerstudio.experiments.what_if.WhatIf`;
        ``changes``: :func:`~nerstudio.experiments.what_if.compare` against the sentence as it is."""
        pick = new.choice
        ents = _entities(new, pick)
        self.header.setText(
            ("<b>The sentence as it is</b>" if same else "<b>Edited</b> (the corpus is unchanged)")
            + f": the reranker picks candidate <b>{pick + 1}</b> — {html.escape(ents)} · tagger's top: "
            f"{html.escape(_entities(new, 0))} · {len(new.scores)} candidates decoded now by the loaded tagger in "
            f"{ms:.0f} ms <i>(a training sentence's N-best list came from a jackknife fold: its candidates may "
            "differ)</i>"
        )
        self.table.setRowCount(len(new.scores))
        for j, ch in enumerate(changes):
            why = ""
            if ch.before is None:
                delta, why = "new", "no candidate of the sentence as it is has these entities"
            else:
                delta = num(ch.delta, sign=True)
                parts = [f"+{n} ({num(v, sign=True)})" for n, v in ch.gained] + [
                    f"−{n} ({num(-v, sign=True)})" for n, v in ch.lost
                ]
                if ch.dL is not None and abs(ch.dL) > 1e-12:
                    parts.insert(0, f"L(x) term {num(ch.dL, sign=True)}")
                why = "; ".join(parts) or "nothing"
            vals = [
                f"{j + 1}" + (" ★" if j == pick else ""),
                num(float(new.nbest.logprobs[0][j])),
                num(float(new.scores[j])),
                delta,
                _entities(new, j),
                why,
            ]
            for c, v in enumerate(vals):
                it = QTableWidgetItem(v)
                it.setToolTip(v)
                if c < 4:
                    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(j, c, it)


def _entities(w, j: int) -> str:
    return (
        ", ".join(
            f"{s.label or 'ENT'} {' '.join(w.words[s.start : s.end])}" for s in w.nbest.spans(0, j)
        )
        or "(no entities)"
    )
