"""One way to make a window action: text, slot, shortcut, and a tooltip that names the shortcut.

The main window's menus and the annotation controller's commands both build their QActions here,
so every tooltip and status tip reads the same way.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence


def make_action(parent, text: str, slot, shortcut=None, tip: str = "", menu=None) -> QAction:
    """A QAction of ``parent`` calling ``slot``; ``tip`` goes to the status bar and, with the
    shortcut, to the tooltip; added to ``menu`` when one is given."""
    a = QAction(text, parent)
    if shortcut is not None:
        a.setShortcut(QKeySequence(shortcut))
    if tip:
        a.setStatusTip(tip)
        a.setToolTip(f"{tip} ({a.shortcut().toString()})" if shortcut is not None else tip)
    a.triggered.connect(slot)
    if menu is not None:
        menu.addAction(a)
    return a
