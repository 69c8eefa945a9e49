"""A wrapped label in a box of whole lines: a long text (the feature panel's "why" sentence) shows
up to a few lines and scrolls for the rest, so it never takes the room the table below needs and
never shows a line cut in half (on a small screen or at scale 2 the layout used to squeeze it)."""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy


class LineScroll(QScrollArea):
    """Holds ``label`` (word-wrapped); as tall as its text up to ``max_lines`` lines, or more
    when its parent has height to spare beyond the minimum of everything in it."""

    def __init__(self, label: QLabel, max_lines: int = 4, parent=None):
        super().__init__(parent)
        self.label = label
        self.max_lines = max_lines
        label.setWordWrap(True)
        self.setWidget(label)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._want = 0
        label.installEventFilter(self)
        if parent is not None:
            parent.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if (obj is self.label and kind in (QEvent.Type.LayoutRequest, QEvent.Type.FontChange)) or (
            obj is self.parentWidget() and kind == QEvent.Type.Resize
        ):
            self.fit()
        return super().eventFilter(obj, event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.fit()

    def fit(self) -> None:
        width = self.width()
        if width <= 0:
            return
        line = max(1, self.label.fontMetrics().lineSpacing())
        need = max(line, self.label.heightForWidth(width))
        if need > self.max_lines * line:  # it scrolls: the bar takes some of the width
            need = self.label.heightForWidth(width - self.verticalScrollBar().sizeHint().width())
        lines = max(1, round(need / line))
        per_line = need / lines  # a rich text's line is not always the font's line spacing
        room = self.max_lines
        parent = self.parentWidget()
        if parent is not None:  # the height the parent has beyond everything's minimum
            others = parent.minimumSizeHint().height() - self.height()
            room = max(room, math.floor((parent.height() - others) / per_line))
        h = need if lines <= room else math.floor(room * per_line)
        if h != self._want:
            self._want = h
            self.setFixedHeight(h)

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self._want or self.label.sizeHint().height())
