"""Helpers shared by the filter proxies of the item models."""

from __future__ import annotations

from PySide6.QtCore import QSortFilterProxyModel


def refilter(proxy: QSortFilterProxyModel, change) -> None:
    """Re-run a proxy's filter (Qt ≥ 6.10 wants begin/endFilterChange around the change itself)."""
    if hasattr(proxy, "beginFilterChange"):
        proxy.beginFilterChange()
        change()
        proxy.endFilterChange(QSortFilterProxyModel.Direction.Rows)
    else:
        change()
        proxy.invalidateFilter()


class NeedleFilterProxy(QSortFilterProxyModel):
    """A tree's search box: rows matching the lower-cased ``needle`` stay (with their parents);
    subclasses say what matches in :meth:`matches`. An empty needle keeps every row."""

    def __init__(self, sort_role: int, parent=None):
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setSortRole(sort_role)
        self._needle = ""

    def set_needle(self, text: str) -> None:
        def change():
            self._needle = text.lower()

        refilter(self, change)

    def filterAcceptsRow(self, row, parent):
        return not self._needle or self.matches(row, parent, self._needle)

    def matches(self, row: int, parent, needle: str) -> bool:
        raise NotImplementedError
