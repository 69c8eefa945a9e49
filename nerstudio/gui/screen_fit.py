"""Keep the main window on its screen.

The first window (no saved geometry) opens at 1280×800 or the screen's available area, whichever
is smaller, title bar and status bar included; a saved geometry from a larger screen is brought
back inside too. Once the window is shown — and when it moves to another screen — its frame is
checked against the screen's available geometry (the window manager's frame is only known
then) and the window shrunk and moved so that the frame fits. The workspaces' pages scroll when
they need more room (:func:`nerstudio.gui.workspaces.page_scroll`), so no page can make the
window grow past its screen afterwards.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, QSize, QTimer
from PySide6.QtWidgets import QWidget

DEFAULT = QSize(1280, 800)
TITLE_GUESS = 40  # a title bar and borders, before the window manager says how large they are


def first_size(window: QWidget, want: QSize = DEFAULT) -> QSize:
    """``want`` or the screen's available area less a title bar, whichever is smaller."""
    avail = window.screen().availableGeometry()
    return QSize(
        min(want.width(), avail.width() - 8), min(want.height(), avail.height() - TITLE_GUESS)
    )


def fit(window: QWidget) -> bool:
    """Shrink and move ``window`` so that its frame is inside its screen's available geometry;
    True when something changed."""
    if window.isMaximized() or window.isFullScreen():
        return False
    avail: QRect = window.screen().availableGeometry()
    frame, inner = window.frameGeometry(), window.geometry()
    if avail.contains(frame):
        return False
    extra_w, extra_h = frame.width() - inner.width(), frame.height() - inner.height()
    w = min(inner.width(), avail.width() - extra_w)
    h = min(inner.height(), avail.height() - extra_h)
    if (w, h) != (inner.width(), inner.height()):
        window.resize(max(w, 200), max(h, 150))
    frame = window.frameGeometry()
    x = min(max(frame.x(), avail.x()), avail.right() + 1 - frame.width())
    y = min(max(frame.y(), avail.y()), avail.bottom() + 1 - frame.height())
    if (x, y) != (frame.x(), frame.y()):
        window.move(max(x, avail.x()), max(y, avail.y()))
    return True


class ScreenFit(QObject):
    """Fits the window to its screen when it is shown, resized or moved to another screen."""

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.window = window
        self.enabled = True  # off for --screenshot: a picture of a fixed size, whatever the screen
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)  # after the window manager has placed and framed it
        self._timer.timeout.connect(lambda: self.enabled and fit(self.window))
        window.installEventFilter(self)
        self._screen_hooked = False

    def eventFilter(self, obj, event) -> bool:
        if (
            self.enabled
            and obj is self.window
            and event.type() in (QEvent.Type.Show, QEvent.Type.Resize)
        ):
            fit(self.window)
            self._timer.start()
            if not self._screen_hooked and self.window.windowHandle() is not None:
                self.window.windowHandle().screenChanged.connect(lambda _s: self._timer.start())
                self._screen_hooked = True
        return False


def install(window: QWidget) -> ScreenFit:
    return ScreenFit(window)
