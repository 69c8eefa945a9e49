"""Keep a list's current row at its place on the screen while the list changes under it.

The application reorders and filters the corpus browser on its own: a model's round in the
annotation loop attaches new N-best lists, so "most uncertain first" sorts again and the "not
reviewed" filter is applied again. The annotator's sentence stays listed and current; this keeps
its row at the same height in the viewport too, so only the other rows move — as a round must
leave the view where the annotator left it. (Without it the view scrolls the row just back into
sight, at an edge, which reads as a jump.)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtWidgets import QAbstractItemView


def row_top(view: QAbstractItemView) -> int | None:
    """The current row's top in the viewport, or None when there is none or it is not shown."""
    idx = view.currentIndex()
    if not idx.isValid():
        return None
    rect = view.visualRect(idx)
    if rect.isEmpty() or rect.bottom() < 0 or rect.top() >= view.viewport().height():
        return None
    return rect.top()


def place_row(view: QAbstractItemView, y: int) -> None:
    """Scroll ``view`` so that its current row's top is at ``y`` (as near as the scroll range
    and whole rows allow)."""
    idx = view.currentIndex()
    if not idx.isValid():
        return
    bar = view.verticalScrollBar()
    view.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtTop)
    if view.verticalScrollMode() == QAbstractItemView.ScrollMode.ScrollPerPixel:
        bar.setValue(bar.value() - (y - view.visualRect(idx).top()))
        return
    # one row at a time: rows above may differ in height (a tree's document rows)
    while bar.value() > bar.minimum() and view.visualRect(idx).top() < y:
        bar.setValue(bar.value() - 1)
        if view.visualRect(idx).top() > y:
            bar.setValue(bar.value() + 1)
            break


@contextmanager
def row_kept(view: QAbstractItemView) -> Iterator[None]:
    """Within the block the list may be reordered or filtered; after it the current row (the
    same item, made current again by the block) is where it was on the screen."""
    y = row_top(view)
    try:
        yield
    finally:
        if y is not None and row_top(view) != y:
            place_row(view, y)
