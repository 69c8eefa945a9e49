"""A status bar whose two texts never run into each other.

QStatusBar clips a long temporary message at the first permanent widget, so the end of the
message and the start of the permanent text read as one line. Here the message is elided
("…") to the room left of the permanent widgets, with a gap, and the permanent text is an
:class:`ElidedLabel` that takes at most half of the bar and elides itself (full text in its
tooltip). ``currentMessage()`` still returns the whole message.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy, QStatusBar

GAP = 12  # pixels between the message and the permanent text
MAX_SHARE = 0.5  # the permanent text's widest share of the bar


class ElidedLabel(QLabel):
    """One line of plain text, elided at the right to the label's width (full text as tooltip)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setTextFormat(Qt.TextFormat.PlainText)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        h = super().sizeHint()
        w = self.fontMetrics().horizontalAdvance(self.text()) + 4
        bar = self.parentWidget()
        if bar is not None and bar.width() > 0:
            w = min(w, int(bar.width() * MAX_SHARE))
        return QSize(w, h.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(min(60, self.sizeHint().width()), super().minimumSizeHint().height())

    def elided_text(self) -> str:
        return self.fontMetrics().elidedText(
            self.text(), Qt.TextElideMode.ElideRight, max(0, self.contentsRect().width())
        )

    def paintEvent(self, _ev) -> None:
        p = QPainter(self)
        p.setPen(self.palette().windowText().color())
        p.drawText(
            self.contentsRect(),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextSingleLine,
            self.elided_text(),
        )


class ElidingStatusBar(QStatusBar):
    """A status bar that elides its temporary message to the room left of its widgets."""

    def message_rect(self) -> QRect:
        right = self.width() - 6
        for w in self.findChildren(QLabel):
            if w.parentWidget() is self and w.isVisible():
                right = min(right, w.x() - GAP)
        return QRect(6, 0, max(0, right - 6), self.height())

    def elided_message(self) -> str:
        return self.fontMetrics().elidedText(
            self.currentMessage(), Qt.TextElideMode.ElideRight, self.message_rect().width()
        )

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        for w in self.findChildren(ElidedLabel):
            w.updateGeometry()

    def paintEvent(self, ev) -> None:
        if not self.currentMessage():
            super().paintEvent(ev)
            return
        p = QPainter(self)
        p.setPen(self.palette().windowText().color())
        p.drawText(
            self.message_rect(),
            Qt.AlignmentFlag.AlignLeading
            | Qt.AlignmentFlag.AlignVCenter
            | Qt.TextFlag.TextSingleLine,
            self.elided_message(),
        )
