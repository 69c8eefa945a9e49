"""Run something once a window has painted what it shows now.

At start-up the window first shows the corpus and the demo's candidates, and only then lets
the work that nothing on screen needs begin (matplotlib for the figures, reading the demo's
tagger): begun earlier, it would compete with that first picture for the interpreter lock.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


def after_next_paint(win: QWidget, fn: Callable[[], object], fallback_ms: int = 3000) -> None:
    """Call ``fn`` in the main thread once the top-level window ``win`` has painted what it
    shows now (the event loop's turn after its next update), or after ``fallback_ms`` should it
    not paint (minimised, on another desktop); at once when it is not shown at all (a window
    built for a script or a test)."""
    if not win.isVisible():
        fn()
        return
    called = False

    def call() -> None:
        nonlocal called
        if not called:
            called = True
            win.removeEventFilter(watch)
            fn()

    class _Watch(QObject):
        def eventFilter(self, obj, event):
            if obj is win and event.type() == QEvent.Type.UpdateRequest:
                QTimer.singleShot(0, call)  # after this update is painted
            return False

    watch = _Watch(win)
    win.installEventFilter(watch)
    QTimer.singleShot(fallback_ms, call)
