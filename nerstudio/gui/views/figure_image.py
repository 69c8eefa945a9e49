"""matplotlib figures drawn off the main thread and shown as images.

Drawing a figure with a legend, annotations and a few hundred points takes 30–100 ms of Python
(longer while a training process keeps the other core busy): done in the main thread, every
curve update froze the window for that long. Here the window only snapshots the data and posts a
*draw function*; one shared render thread builds a fresh :class:`~matplotlib.figure.Figure`
with the Agg backend (no Qt), calls the function on it, renders it, and hands back the pixels.
The :class:`FigureImage` widget then shows them (a copy into a QImage, about a millisecond).
Only the newest request of each widget is drawn; a resize asks for a new image at the new size
and meanwhile scales the old one.

matplotlib is used by one thread at a time per figure: the render thread owns the figures it
draws; synchronous drawing (:meth:`FigureImage.render_now`, exports) uses figures of its own.
"""

from __future__ import annotations

import atexit
import itertools
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import shiboken6
from PySide6.QtCore import QObject, QRectF, QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DrawFn = Callable[["Figure"], None]
DPI = 100
_ZOOM = [1.0]  # the interface's zoom (View ▸ Zoom): figures are drawn at DPI × zoom


def set_zoom(factor: float) -> None:
    """Draw every figure at ``factor`` times its normal type and line size (a projector's zoom)."""
    _ZOOM[0] = float(factor)
    for w in list(_relay().widgets.values()):
        if shiboken6.isValid(w):
            w._rerender()


def render_rgba(
    draw: DrawFn,
    width: int,
    height: int,
    dpi: float = DPI,
    layout: Literal["constrained", "compressed", "tight"] | None = "constrained",
):
    """Draw ``draw`` on a new ``width × height`` pixel figure: ``(rgba bytes, width, height)``."""
    width, height = max(1, int(width)), max(1, int(height))
    # imported here, in the thread that draws, not when the window starts (half a second)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi, layout=layout)
    canvas = FigureCanvasAgg(fig)
    draw(fig)
    canvas.draw()
    w, h = canvas.get_width_height(physical=True)
    data = bytes(canvas.buffer_rgba())
    fig.clear()
    return data, w, h


class _RenderThread:
    """One daemon thread drawing the newest request of every widget, oldest widget first."""

    def __init__(self):
        self._cond = threading.Condition()
        self._pending: dict[
            int, tuple
        ] = {}  # widget id -> (widget weakref, token, draw, w, h, dpi)
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._held = False
        self.busy = False

    def hold(self) -> None:
        """Keep requests waiting (the thread is not started) until :meth:`release`: the
        application holds them until its window shows the corpus it opened (and the demo's
        N-best list), so that importing matplotlib (a second or more) does not compete with
        that."""
        with self._cond:
            self._held = True

    def release(self) -> None:
        with self._cond:
            self._held = False
            waiting = bool(self._pending)
        if waiting:
            self._start()

    def submit(
        self, widget: FigureImage, token: int, draw: DrawFn, w: int, h: int, dpi: float
    ) -> None:
        relay = _relay()  # made here, in the main thread, before the render thread needs it
        with self._cond:
            if self._stopping:
                return
            self._pending[widget.key] = (relay, token, draw, w, h, dpi)
            if self._held:
                return
        self._start()

    def _start(self) -> None:
        with self._cond:
            if self._stopping:
                return
            if self._thread is None or not self._thread.is_alive():
                if self._thread is None:
                    # stop it while the interpreter still runs: a daemon thread caught inside
                    # matplotlib's or Qt's C++ code by the interpreter's shutdown aborts the process
                    atexit.register(self.shutdown)
                self._thread = threading.Thread(
                    target=self._loop, name="nerstudio-figures", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def shutdown(self, timeout: float = 10.0) -> None:
        """Drop what is waiting, let the current drawing finish, end the thread."""
        with self._cond:
            self._stopping = True
            self._pending.clear()
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def idle(self) -> bool:
        with self._cond:
            return not self._pending and not self.busy

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self.busy = False
                    self._cond.wait()
                if self._stopping:
                    self.busy = False
                    return
                key = next(iter(self._pending))
                relay, token, draw, w, h, dpi = self._pending.pop(key)
                self.busy = True
            try:
                out = render_rgba(draw, w, h, dpi)
                err = ""
            except Exception as exc:
                out, err = None, f"{type(exc).__name__}: {exc}"
            # never through the widget itself: the main thread may be destroying it right now
            # (emitting on a QObject being deleted crashed the process); the relay lives as long
            # as the application and hands the image over in the main thread, if the widget is
            # still there then
            relay.rendered.emit(key, token, out, err)
            del draw, relay


RENDERER = _RenderThread()
_KEYS = itertools.count(1)


class _Relay(QObject):
    """Carries finished images from the render thread to their widgets, in the main thread."""

    rendered = Signal(int, int, object, str)  # widget key, token, (bytes, w, h) or None, error

    def __init__(self):
        super().__init__()
        self.widgets: weakref.WeakValueDictionary[int, FigureImage] = weakref.WeakValueDictionary()
        self.rendered.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    @Slot(int, int, object, str)
    def _deliver(self, key: int, token: int, out, err: str) -> None:
        widget = self.widgets.get(key)
        if widget is not None and shiboken6.isValid(widget):
            widget._on_rendered(token, out, err)


_RELAY: _Relay | None = None


def _relay() -> _Relay:
    """The application's one relay (made on first use, in the main thread; never deleted)."""
    global _RELAY
    if _RELAY is None:
        _RELAY = _Relay()
    return _RELAY


class FigureImage(QWidget):
    """Shows the image of the latest draw function (see the module docstring)."""

    imageChanged = Signal()

    def __init__(self, parent=None, dpi: float = DPI):
        super().__init__(parent)
        self.dpi = dpi
        self._draw: DrawFn | None = None
        self._image: QImage | None = None
        self._tokens = itertools.count(1)
        self._shown = 0
        self._asked = 0
        self.renders = 0  # images received (tests)
        self.last_error = ""
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self._resize_timer = QTimer(self)
        self._resize_timer.setSingleShot(True)
        self._resize_timer.setInterval(60)
        self._resize_timer.timeout.connect(self._rerender)
        self.key = next(_KEYS)
        _relay().widgets[self.key] = self

    # -- requests ---------------------------------------------------------------------------
    def _pixels(self) -> tuple[int, int, float]:
        r = self.devicePixelRatioF() or 1.0
        return max(1, round(self.width() * r)), max(1, round(self.height() * r)), r

    def request(self, draw: DrawFn) -> None:
        """Draw ``draw`` (a function of a Figure, over data it owns) in the render thread."""
        self._draw = draw
        w, h, r = self._pixels()
        self._asked = next(self._tokens)
        RENDERER.submit(self, self._asked, draw, w, h, self.dpi * _ZOOM[0] * r)

    def render_now(self, draw: DrawFn | None = None) -> None:
        """Draw in the calling thread and show the result at once (screenshots, tests)."""
        draw = draw or self._draw
        if draw is None:
            return
        self._draw = draw
        w, h, r = self._pixels()
        token = self._asked = next(self._tokens)
        self._on_rendered(token, render_rgba(draw, w, h, self.dpi * _ZOOM[0] * r), "")

    def pending(self) -> bool:
        """A requested image has not arrived yet."""
        return self._shown < self._asked

    @Slot()
    def _rerender(self) -> None:
        if self._draw is not None:
            self.request(self._draw)

    @Slot(int, object, str)
    def _on_rendered(self, token: int, out, err: str) -> None:
        if token < self._shown:
            return  # an older request overtaken by a newer one
        self._shown = token
        if out is None:
            self.last_error = err
            return
        data, w, h = out
        img = QImage(
            data, w, h, 4 * w, QImage.Format.Format_RGBA8888
        ).copy()  # copy: own the pixels
        img.setDevicePixelRatio(self.devicePixelRatioF() or 1.0)
        self._image = img
        self.renders += 1
        self.update()
        self.imageChanged.emit()

    def image(self) -> QImage | None:
        return self._image

    # -- Qt ---------------------------------------------------------------------------------
    def sizeHint(self) -> QSize:
        return QSize(480, 240)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._draw is not None:
            self._resize_timer.start()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), Qt.GlobalColor.white)
        if self._image is not None:
            target = QRectF(self.rect())
            src = QRectF(0, 0, self._image.width(), self._image.height())
            if self._image.size() != QSize(*self._pixels()[:2]):
                # the new size is on its way
                p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            p.drawImage(target, self._image, src)
        p.end()
