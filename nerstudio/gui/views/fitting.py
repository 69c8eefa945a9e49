"""Small helpers that keep widgets from asking for more room than a small screen has.

A combo box asks by default for the width of its longest item, a row of controls for the sum of
its widths: on a 1024-pixel screen (or 1920 at scale 2) that is more than the window has. These
helpers let such widgets shrink (the full text stays in the drop-down list and the tooltip), and
let two panels go one above the other when they cannot both be read side by side.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QSizePolicy,
    QSplitter,
    QTableView,
    QTreeView,
)


def narrow_combo(combo: QComboBox, chars: int = 10) -> QComboBox:
    """``combo`` may shrink to about ``chars`` characters; its list shows the full items."""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(chars)
    combo.setSizePolicy(QSizePolicy.Policy.Expanding, combo.sizePolicy().verticalPolicy())
    view = combo.view()
    view.setMinimumWidth(max(view.sizeHintForColumn(0) + 24, 0))
    return combo


class AdaptiveSplitter(QSplitter):
    """A splitter that puts its two panels side by side when it is wide enough, one above the
    other when it is not (a 1024-pixel screen, scale 2, a large zoom): each panel keeps a usable
    width instead of both being squeezed. Side by side needs ``wide_chars`` average characters of
    the splitter's font and the panels' minimum widths. ``shares``: the first panel's share of
    the room, side by side and stacked (:meth:`balance` applies them)."""

    def __init__(self, wide_chars: int, shares=(0.58, 0.55), parent=None):
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.wide_chars = wide_chars
        self.shares = tuple(shares)
        self._flipping = False
        self._balanced = False

    def threshold(self) -> int:
        widgets = (self.widget(i) for i in range(self.count()))
        need = sum(w.minimumSizeHint().width() for w in widgets if w is not None)
        need += self.handleWidth() * max(0, self.count() - 1) + 8
        return max(self.fontMetrics().averageCharWidth() * self.wide_chars, need)

    def balance(self) -> None:
        """Give the first panel its share of the room, in the present orientation."""
        horizontal = self.orientation() == Qt.Orientation.Horizontal
        total = sum(self.sizes()) or (self.width() if horizontal else self.height())
        first = int(total * self.shares[0 if horizontal else 1])
        self.setSizes([first, max(1, total - first)])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._flipping or not self.isVisible():
            return
        want = (
            Qt.Orientation.Horizontal
            if self.width() >= self.threshold()
            else Qt.Orientation.Vertical
        )
        if want != self.orientation() or not self._balanced:
            self._flipping = True
            try:
                self.setOrientation(want)
                self.balance()
                self._balanced = True
            finally:
                self._flipping = False


class _RowsKept(QObject):
    """Keeps a table's minimum height at its header and ``rows`` rows as the font changes."""

    def __init__(self, view: QAbstractItemView, rows: int):
        super().__init__(view)
        self.view, self.rows = view, rows
        view.installEventFilter(self)
        model = view.model()
        if model is not None:  # the rows' real height once there are rows
            model.modelReset.connect(self.apply)
            model.rowsInserted.connect(self.apply)
        self.apply()

    def eventFilter(self, obj, event) -> bool:
        if event.type() in (QEvent.Type.Show, QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self.apply()
        return False

    def set_rows(self, rows: int) -> None:
        self.rows = rows
        self.apply()

    def apply(self) -> None:
        v = self.view
        row = v.fontMetrics().height() + 2
        if v.model() is not None and v.model().rowCount() > 0:
            row = max(row, v.sizeHintForRow(0))
        if isinstance(v, QTableView):  # a table's rows are its vertical header's sections
            row = max(row, v.verticalHeader().defaultSectionSize())
            hh = v.horizontalHeader()
        elif isinstance(v, QTreeView):
            hh = v.header()
        else:
            hh = None
        head = hh.sizeHint().height() if hh is not None and not hh.isHidden() else 0
        v.setMinimumHeight(head + self.rows * row + 2 * v.frameWidth())


def keep_rows(view: QAbstractItemView, rows: int) -> _RowsKept:
    """``view`` never gets less height than its header and ``rows`` rows: the layout takes the
    room from what can scroll or shrink (the sentence above it) instead. The returned keeper's
    :meth:`~_RowsKept.set_rows` changes the number."""
    return _RowsKept(view, rows)
