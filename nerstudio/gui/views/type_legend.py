"""The legend under the sentence view: one clickable chip per entity type of the corpus.

Each chip shows the type in its colour between its keys (``1 PER P``: the digit, fixed for the
label set by :mod:`~nerstudio.app.label_keys`, and the letter); clicking it asks for that type to be set
on the sentence view's selection (``typeClicked(label)``), exactly as the key or the Edit menu
does. The chips come from the corpus's :class:`~nerstudio.app.types.TypeScheme`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QToolButton, QWidget

from ...app.types import TypeScheme
from .flow_layout import FlowLayout
from .palette import text_color_on, type_color

NOTE = "boxes: gold · bars: candidate · red: differs"
NOTE_TIP = (
    "Boxes are the gold entities; bars under the words are the selected candidate's (two bars, A and B, "
    "when comparing two candidates); red marks where they differ"
)


class TypeLegend(QWidget):
    typeClicked = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("typeLegend")
        self._row = FlowLayout(self)  # the chips wrap on a narrow window instead of widening it
        self._note = QLabel(f"<i>{NOTE}</i>")
        self._note.setObjectName("legendNote")
        self._note.setToolTip(NOTE_TIP)
        self._note.setMinimumWidth(40)  # cut rather than widen the window (the tooltip says it all)
        self._row.addWidget(self._note)
        self.chips: dict[str, QToolButton] = {}
        self._scheme: TypeScheme | None = None

    def set_scheme(self, scheme: TypeScheme) -> None:
        if scheme == self._scheme:
            return
        self._scheme = scheme
        for b in self.chips.values():
            self._row.removeWidget(b)
            b.hide()  # gone now, not when the event loop next deletes it
            b.deleteLater()
        self.chips = {}
        for i, lab in enumerate(scheme.labels):
            keys = " / ".join(k for k in (scheme.letter(lab), scheme.digit(lab)) if k)
            b = QToolButton()
            b.setObjectName(f"legendChip_{lab or 'entity'}")
            # the keys as the keyboard has them: the digit (fixed for the label set) and the letter
            b.setText(
                " ".join(x for x in (scheme.digit(lab), lab or "entity", scheme.letter(lab)) if x)
            )
            b.setToolTip(
                f"Set the selected tokens' type to {lab or 'entity'}"
                + (f" (key {keys})" if keys else "")
            )
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            # a click keeps the focus (and the selection) where it is
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            bg = type_color(lab, scheme)
            b.setStyleSheet(
                f"QToolButton {{ background: {bg.name()}; color: {text_color_on(bg).name()}; "
                "border: none; border-radius: 3px; padding: 1px 6px; }"
                f"QToolButton:hover {{ background: {bg.darker(115).name()}; }}"
            )
            b.clicked.connect(lambda _=False, lab=lab: self.typeClicked.emit(lab))
            self._row.insertWidget(i, b)
            self.chips[lab] = b

    def text(self) -> str:
        """The legend as plain text (types in order, then the note)."""
        return "  ".join(b.text() for b in self.chips.values()) + "   " + NOTE
