"""The corpus browser's uncertainty row: the order ("Corpus order" or "Most uncertain first" by
top-candidate probability, margin or reranker disagreement) and a filter keeping only the
uncertain sentences (top-candidate probability below a threshold, or the N most uncertain).

No behaviour: the browser controller reads :meth:`UncertaintyBar.measure` and
:meth:`UncertaintyBar.limit`, listens to ``changed`` and says which measures are available
(:meth:`set_available`, with the reason as the tooltip of a disabled one).
"""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QHBoxLayout, QSpinBox, QWidget

from .fitting import narrow_combo

# the measures of nerstudio.app.uncertainty in words: the order's choices, the column's tooltip
LABELS = {
    "mass": "top-candidate probability",
    "margin": "margin over the second candidate",
    "disagreement": "reranker overrules the tagger",
}
TIPS = {
    "mass": "The probability of the tagger's top candidate (softmax of L(x) over the N-best list): low when the "
    "tagger spreads its belief over several analyses",
    "margin": "The top candidate's probability minus the second's: low when the two are nearly tied",
    "disagreement": "Sentences where the reranker picks another candidate than the tagger's top one first, each "
    "group by ascending top-candidate probability",
}

ORDERS = (("Corpus order", None),) + tuple(
    (f"Most uncertain first: {LABELS[m]}", m) for m in ("mass", "margin", "disagreement")
)
LIMITS = (
    ("All sentences", None, "Every sentence, whatever the tagger's confidence"),
    (
        "p(top) below",
        "below",
        "Only the sentences whose top candidate's probability is below the threshold",
    ),
    (
        "Most uncertain",
        "top",
        "Only the N most uncertain sentences (by the measure of the order; "
        "top-candidate probability in corpus order)",
    ),
)


class UncertaintyBar(QWidget):
    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("uncertaintyBar")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.order = QComboBox()
        self.order.setObjectName("uncertaintyOrder")
        for k, (label, key) in enumerate(ORDERS):
            self.order.addItem(label, key)
            self.order.setItemData(
                k,
                TIPS.get(key or "", "The corpus's own order, document by document"),
                Qt.ItemDataRole.ToolTipRole,
            )
        self.order.setToolTip(
            "The order of the sentences: the corpus's, or the ones where the model is least "
            "sure first (F7 goes to the next most uncertain)"
        )
        self.limit = QComboBox()
        self.limit.setObjectName("uncertaintyLimit")
        for k, (label, key, tip) in enumerate(LIMITS):
            self.limit.addItem(label, key)
            self.limit.setItemData(k, tip, Qt.ItemDataRole.ToolTipRole)
        self.limit.setToolTip("Show only the sentences the tagger is unsure of")
        self.threshold = QDoubleSpinBox()
        self.threshold.setObjectName("uncertaintyThreshold")
        self.threshold.setRange(0.01, 1.0)
        self.threshold.setSingleStep(0.05)
        self.threshold.setDecimals(2)
        self.threshold.setValue(0.9)
        self.threshold.setToolTip(
            "Keep the sentences whose top candidate's probability is below this"
        )
        self.count = QSpinBox()
        self.count.setObjectName("uncertaintyCount")
        self.count.setRange(1, 10_000_000)
        self.count.setValue(50)
        self.count.setToolTip("Keep this many of the most uncertain sentences")
        narrow_combo(self.order, 8)
        narrow_combo(self.limit, 6)
        row.addWidget(self.order, 3)
        row.addWidget(self.limit, 2)
        row.addWidget(self.threshold, 1)
        row.addWidget(self.count, 1)
        self.order.currentIndexChanged.connect(self.changed)
        self.limit.currentIndexChanged.connect(self._on_limit)
        self.threshold.valueChanged.connect(lambda _v: self._changed_if("below"))
        self.count.valueChanged.connect(lambda _v: self._changed_if("top"))
        self._reasons: dict[str, str] | None = None  # what set_available was told
        self._on_limit(emit=False)

    def _changed_if(self, limit: str) -> None:
        """A spin box changed: the choice changed if it is the limit in use."""
        if self.limit.currentData() == limit:
            self.changed.emit()

    def _on_limit(self, *_args, emit: bool = True) -> None:
        key = self.limit.currentData()
        self.threshold.setVisible(key == "below")
        self.count.setVisible(key == "top")
        if emit:
            self.changed.emit()

    def measure(self) -> str | None:
        """The order's measure (None: corpus order)."""
        return self.order.currentData()

    def set_measure(self, measure: str | None) -> None:
        """Choose the order (emits ``changed`` when it changes)."""
        i = self.order.findData(measure)
        if i >= 0:
            self.order.setCurrentIndex(i)

    def limit_value(self) -> tuple[str | None, float]:
        """(``None`` | ``"below"`` | ``"top"``, the threshold or the count)."""
        key = self.limit.currentData()
        return key, (
            self.threshold.value() if key == "below" else self.count.value() if key == "top" else 0
        )

    def set_limit(self, key: str | None, value: float | None = None) -> None:
        if key == "below" and value is not None:
            self.threshold.setValue(float(value))
        elif key == "top" and value is not None:
            self.count.setValue(int(value))
        self.limit.setCurrentIndex(max(self.limit.findData(key), 0))

    def set_available(self, reasons: dict[str, str]) -> None:
        """Enable each measure whose reason is '' and disable the others, with the reason as
        their tooltip; the whole bar is disabled when no measure is available."""
        model = cast(QStandardItemModel, self.order.model())  # a combo box's own model
        for k in range(self.order.count()):
            key = self.order.itemData(k)
            if key is None:
                continue
            why = reasons.get(key, "")
            model.item(k).setEnabled(not why)
            self.order.setItemData(k, why or TIPS[key], Qt.ItemDataRole.ToolTipRole)
        self._reasons = dict(reasons)
        usable = any(not w for w in reasons.values())
        self.setEnabled(usable)
        self.setToolTip("" if usable else next(iter(reasons.values()), ""))

    def availability(self) -> dict[str, str] | None:
        """The reasons :meth:`set_available` was given (None: never told)."""
        return None if self._reasons is None else dict(self._reasons)

    def reset(self) -> None:
        """Corpus order, no limit (a new corpus), without signalling."""
        for w in (self.order, self.limit):
            w.blockSignals(True)
            w.setCurrentIndex(0)
            w.blockSignals(False)
        self._on_limit(emit=False)
