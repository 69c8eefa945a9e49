"""The base of the window's tree models: ``parent()`` in both of Qt's meanings.

A tree model answers ``parent(index)`` (the row an index hangs under), but it is a QObject too,
whose ``parent()`` without an argument is the object that owns it. Overriding only the first
breaks the second (``model.parent()`` raised TypeError); this base keeps both, and a tree model
says where a row hangs in :meth:`parent_of`.
"""

from __future__ import annotations

from typing import overload

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex


class TreeModel(QAbstractItemModel):
    @overload
    def parent(self, /) -> QObject: ...
    @overload
    def parent(self, child: QModelIndex | QPersistentModelIndex, /) -> QModelIndex: ...
    def parent(
        self, child: QModelIndex | QPersistentModelIndex | None = None, /
    ) -> QObject | QModelIndex | None:
        if child is None:
            return super().parent()
        return self.parent_of(child)

    def parent_of(self, child: QModelIndex | QPersistentModelIndex) -> QModelIndex:
        """The index of the row ``child`` hangs under (an invalid index: the top)."""
        raise NotImplementedError
