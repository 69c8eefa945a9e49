"""A feature tree's template rows across the row: the description over the empty number columns.

A template row ("TO101 · shape of the word 2 before the entity + …  (1)") has only its total in
the last column; the Value / Weight columns between are empty. In a narrow panel (1280×800 with
the candidates beside it, 1024×768, scale 2) the description was cut after a word or two. The
row spans the whole width (``setFirstColumnSpanned``) and :class:`GroupRowDelegate` draws the
description up to the last column and the total in it, where the column's title is.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QRect, Qt
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTreeView


def is_group(index: QModelIndex) -> bool:
    """A top-level row with rows under it: a template."""
    return index.isValid() and not index.parent().isValid() and index.model().hasChildren(index)


class GroupRowDelegate(QStyledItemDelegate):
    def __init__(self, view: QTreeView):
        super().__init__(view)
        self.view = view

    def paint(self, painter, option, index) -> None:
        if index.column() != 0 or not is_group(index):
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text, opt.text = opt.text, ""
        widget = opt.widget
        style = widget.style() if widget is not None else self.view.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        model, last = index.model(), index.model().columnCount(index.parent()) - 1
        header = self.view.header()
        x_last = header.sectionViewportPosition(last)
        pad = 4
        painter.save()
        painter.setFont(opt.font)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = opt.palette.ColorRole.HighlightedText if selected else opt.palette.ColorRole.Text
        painter.setPen(opt.palette.color(role))
        room = QRect(
            opt.rect.left() + pad,
            opt.rect.top(),
            x_last - opt.rect.left() - 2 * pad,
            opt.rect.height(),
        )
        shown = opt.fontMetrics.elidedText(text, Qt.TextElideMode.ElideRight, max(0, room.width()))
        painter.drawText(
            room, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), shown
        )
        total = model.index(index.row(), last, index.parent())
        colour = total.data(Qt.ItemDataRole.ForegroundRole)  # a QColor, as the models give it
        if colour is not None and not selected:
            painter.setPen(colour)
        cell = QRect(x_last, opt.rect.top(), header.sectionSize(last) - pad, opt.rect.height())
        painter.drawText(
            cell,
            int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight),
            str(total.data() or ""),
        )
        painter.restore()

    def room(self, index: QModelIndex) -> int:
        """The width the description of the template row ``index`` has."""
        rect = self.view.visualRect(index)
        last = index.model().columnCount(index.parent()) - 1
        return self.view.header().sectionViewportPosition(last) - rect.left() - 8


def span_groups(view: QTreeView) -> None:
    """Every template row of ``view`` across the row (again after each change of its rows)."""
    model = view.model()

    def apply(*_a) -> None:
        for r in range(model.rowCount()):
            idx = model.index(r, 0)
            view.setFirstColumnSpanned(r, QModelIndex(), is_group(idx))

    for signal in (model.modelReset, model.layoutChanged, model.rowsInserted, model.rowsRemoved):
        signal.connect(apply)
    apply()
