"""A read-only list of sentences as table rows, one row selected at a time.

The comparison tab (sentences the reranker fixed or broke) and the agreement tab (sentences two
annotators disagree on) both list sentences this way and act on the row clicked; one function
builds that table so the two lists look and behave alike.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel
from PySide6.QtWidgets import QAbstractItemView, QTableView


def sentence_rows(model: QAbstractItemModel, name: str) -> QTableView:
    """A table over ``model``: whole rows selected one at a time, no row numbers, compact rows
    that do not wrap. ``name`` is its object name (tests and the screenshots find it by it)."""
    view = QTableView()
    view.setObjectName(name)
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(20)
    view.setWordWrap(False)
    return view
