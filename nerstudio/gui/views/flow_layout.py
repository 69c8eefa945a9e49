"""A layout that wraps: its widgets left to right, continued on the next line when the width runs out.

Rows of controls (the type legend's chips, the Teach panel's buttons) must never make the window
wider than the screen: on a narrow window or at a large zoom they wrap instead. The layout answers
``heightForWidth`` so the parent gives it the lines it needs.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QSizePolicy, QWidget, QWidgetItem


class FlowLayout(QLayout):
    def __init__(self, parent=None, spacing: int = 4):
        super().__init__(parent)
        self._items: list = []
        self._gap = spacing
        self.setContentsMargins(0, 0, 0, 0)

    # -- the QLayout interface ------------------------------------------------------------
    def addItem(self, item) -> None:
        self._items.append(item)

    def insertWidget(self, index: int, widget) -> None:
        self.addChildWidget(widget)
        self._items.insert(max(0, min(index, len(self._items))), QWidgetItem(widget))
        self.invalidate()

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self):
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:
        """One line holding everything."""
        w = sum(it.sizeHint().width() for it in self._visible()) + self._gap * max(
            0, len(self._visible()) - 1
        )
        h = max((it.sizeHint().height() for it in self._visible()), default=0)
        m = self.contentsMargins()
        return QSize(w + m.left() + m.right(), h + m.top() + m.bottom())

    def minimumSize(self) -> QSize:
        """As wide as the widest item: everything else wraps."""
        s = QSize()
        for it in self._visible():
            s = s.expandedTo(it.minimumSize())
        m = self.contentsMargins()
        return s + QSize(m.left() + m.right(), m.top() + m.bottom())

    # -- placing --------------------------------------------------------------------------
    def _visible(self) -> list:
        return [
            it for it in self._items if not (it.widget() is not None and it.widget().isHidden())
        ]

    def _place(self, rect: QRect, move: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, line = area.x(), area.y(), 0
        for it in self._visible():
            hint = it.sizeHint()
            w = (
                min(hint.width(), area.width())
                if it.widget() is not None
                and it.widget().sizePolicy().horizontalPolicy() != QSizePolicy.Policy.Fixed
                else hint.width()
            )
            if x > area.x() and x + w > area.right() + 1:
                x, y, line = area.x(), y + line + self._gap, 0
            if move:
                it.setGeometry(QRect(QPoint(x, y), QSize(w, hint.height())))
            x += w + self._gap
            line = max(line, hint.height())
        return y + line - rect.y() + m.bottom()


class FlowBox(QWidget):
    """A widget holding a :class:`FlowLayout` that keeps the height its lines need at its width.

    A QFormLayout row does not always ask its field for height-for-width: once the form's rows
    change (the training panel's parameters follow the algorithm), it gave the resources row one
    line and the checkboxes wrapped onto a second line were cut off. The box sets its minimum
    height from its width instead, which every layout respects."""

    def __init__(self, spacing: int = 4, parent=None):
        super().__init__(parent)
        self.flow = FlowLayout(self, spacing=spacing)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        need = self.flow.heightForWidth(self.width())
        if need != self.minimumHeight():
            self.setMinimumHeight(need)
