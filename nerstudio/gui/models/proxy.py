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
