"""The comparison tab's error analysis: the tagger's top candidates and the reranker's picks side
by side — F by entity length, by sentence length, over entities seen / unseen in training, and the
entities by kind of error (:mod:`nerstudio.experiments.error_analysis`). Clicking a cell asks for
the browser to show only the sentences where that system errs there (``sentencesWanted``).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from ...experiments.error_analysis import ENTITY_LENGTHS, KINDS, SENTENCE_LENGTHS

SECTIONS = (
    ("entity_length", "entity of", [n for _a, _b, n in ENTITY_LENGTHS]),
    ("sentence_length", "sentence of", [n for _a, _b, n in SENTENCE_LENGTHS]),
    ("seen", "entity", ["seen", "unseen"]),
    ("errors", "", [k for k in KINDS if k != "correct"]),
)


class ErrorTable(QTableWidget):
    sentencesWanted = Signal(object, str)  # list-sentence indices, why

    def __init__(self, parent=None):
        super().__init__(0, 3, parent)
        self.setObjectName("errorTable")
        self.setHorizontalHeaderLabels(["Where", "Baseline", "Reranked"])
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        h = self.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in (1, 2):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.setToolTip(
            "F of the tagger's top candidates (baseline) and of the reranker's picks by where the "
            "entities are, and the entities by kind of error. Click a cell: the browser shows only the "
            "sentences where that system errs there."
        )
        self._cells: dict[tuple[int, int], tuple[list[int], str]] = {}
        self.cellClicked.connect(self._on_cell)

    def set_analysis(
        self, systems: dict[str, dict], cells: dict[str, dict[str, list[int]]]
    ) -> None:
        """``systems``: name → :func:`~nerstudio.experiments.error_analysis.analysis` (+ ``seen``/
        ``unseen`` when known); ``cells``: name → :func:`~nerstudio.experiments.error_analysis.error_sentences`."""
        names = list(systems)[:2]
        self._cells = {}
        rows = []
        for key, what, buckets in SECTIONS:
            for b in buckets:
                first = systems[names[0]]
                if key == "seen":
                    if "seen" not in first:
                        continue
                    d = [systems[n][b] for n in names]
                elif key == "errors":
                    d = [systems[n]["errors"][b] for n in names]
                else:
                    d = [systems[n][key][b] for n in names]
                label = f"{what} {b}".strip() if key != "errors" else f"error: {b}"
                rows.append((label, d, f"{key}:{b}"))
        self.setRowCount(len(rows))
        for r, (label, d, cell_key) in enumerate(rows):
            self.setItem(r, 0, QTableWidgetItem(label))
            for c, (name, v) in enumerate(zip(names, d), 1):
                if isinstance(v, dict):
                    text = f"{v['f1']:.1f}" if v["gold"] or v["proposed"] else "–"
                    tip = f"P {v['precision']:.1f} R {v['recall']:.1f} F {v['f1']:.1f} · {v['gold']} gold entities"
                else:
                    text, tip = str(v), f"{v} entities"
                it = QTableWidgetItem(text)
                it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                ks = cells.get(name, {}).get(cell_key, [])
                it.setToolTip(
                    f"{tip}; click: the {len(ks)} sentence(s) where the {name.lower()} errs here"
                )
                self.setItem(r, c, it)
                self._cells[(r, c)] = (ks, f"{len(ks)} where the {name.lower()} errs: {label}")

    def cell_sentences(self, row: int, column: int) -> tuple[list[int], str] | None:
        return self._cells.get((row, column))

    def _on_cell(self, row: int, column: int) -> None:
        hit = self._cells.get((row, column))
        if hit is not None:
            self.sentencesWanted.emit(list(hit[0]), hit[1])
