"""A combo box built from a list of choices, each with its own tooltip.

The training panel and its sequence-tagger box offer many fixed choices (tags, feature sets,
gazetteers, learners), each an item whose tooltip says what it does; one function builds them
so that every such box is made the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox


def choice_combo(
    name: str, choices: Iterable[tuple[str, object, str | None]], tip: str
) -> QComboBox:
    """A combo box with object name ``name``, one item per ``(text, data, item tip)`` choice
    (no tooltip on an item whose tip is None) and ``tip`` over the whole box."""
    combo = QComboBox()
    combo.setObjectName(name)
    for text, data, item_tip in choices:
        combo.addItem(text, data)
        if item_tip is not None:
            combo.setItemData(combo.count() - 1, item_tip, Qt.ItemDataRole.ToolTipRole)
    combo.setToolTip(tip)
    return combo
