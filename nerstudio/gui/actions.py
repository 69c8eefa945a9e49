"""One way to make a window action: the QAction of a row of :mod:`~nerstudio.gui.menu_rows`.

The window's menus, the controllers and the zoom build their actions here from their rows, so
every action's keys, tooltip and status tip read the same way: the tip goes to the status bar
and, with the first key, to the tooltip.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtGui import QAction, QKeySequence

from .menu_rows import ROWS, ActionRow


def resolve(root: Any, path: str) -> Any:
    """The object at ``path`` from ``root``: attributes, or keys of a mapping, by dots
    (``"views.curve_plot"``; ``""`` is ``root`` itself)."""
    obj = root
    for name in path.split(".") if path else ():
        obj = obj[name] if isinstance(obj, Mapping) else getattr(obj, name)
    return obj


def build_action(parent, row: ActionRow | str, keeper: Any, **values: str) -> QAction:
    """The QAction of ``row`` (or of the row with that id), a child of ``parent``, calling
    ``row.call`` on ``keeper`` (the object that keeps it); ``values`` fill the tip's
    ``{names}``."""
    if isinstance(row, str):
        row = ROWS[row]
    a = QAction(row.text, parent)
    if row.keys:  # a standard key the platform has no key for is none
        seqs = [QKeySequence(k) for k in row.keys]
        a.setShortcuts([s for s in seqs if not s.isEmpty()])
    tip = row.tip.format_map(values) if "{" in row.tip else row.tip
    if tip:
        a.setStatusTip(tip)
        key = a.shortcut().toString()  # none for a standard key the platform has no key for
        a.setToolTip(f"{tip} ({key})" if key else tip)
    if row.checkable:
        a.setCheckable(True)
    if row.enabled_when == "busy":  # no job runs while the window is built
        a.setEnabled(False)
    fn = resolve(keeper, row.call)
    if row.args is None:  # the method takes Qt's `checked` if it wants it
        a.triggered.connect(fn)
    else:
        a.triggered.connect(lambda _checked=False, fn=fn, args=row.args: fn(*args))
    if row.window_wide:
        parent.addAction(a)  # the keys work whatever has the focus, with or without a menu
    return a
