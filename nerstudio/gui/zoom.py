"""Zoom for projectors: the whole interface larger or smaller, and a presentation mode.

Ctrl+= (or Ctrl++) and Ctrl+- step the zoom through :data:`STEPS`, Ctrl+0 goes back to 100 %;
the factor is kept in the settings (``view/zoom``) and applied at the next start. Zooming sets
the application's font to the start-up font × the factor — the text of every panel, the sentence
view (which measures its words again), the tables' rows — then scales what was sized in pixels
from the old font (table columns, row heights, the toolbar's and the mode bar's icons) by the
same ratio, and draws the plots at the factor (:func:`~nerstudio.gui.views.figure_image.set_zoom`).
A widget that sizes itself from its font defines ``after_zoom()``; it is called once the font
changed. Presentation mode (F11) is full screen at :data:`PRESENT` × the zoom — less on a small
screen: the largest step at which every workspace's page fits the screen — and back.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton, QApplication, QHeaderView, QToolBar, QWidget

from .actions import build_action
from .views import figure_image
from .workspaces import LazyPart

STEPS = (0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)
PRESENT = 1.5  # presentation mode's type, relative to the zoom before it
KEY = "view/zoom"


def saved_factor(settings) -> float:
    """The zoom the settings keep (1.0: none, or not a number)."""
    try:
        saved = float(settings.value(KEY, 1.0))
    except (TypeError, ValueError):
        return 1.0
    return saved if abs(saved - 1.0) > 1e-6 else 1.0


class Zoom(QObject):
    changed = Signal(float)

    def __init__(self, window, settings, parent=None):
        super().__init__(parent or window)
        self.window, self.settings = window, settings
        self.base = QApplication.font()  # the start-up font: factor 1
        self.factor = 1.0
        self._before_present: float | None = None
        self._icon_sizes: dict[int, QSize] = {}
        self.act_in = build_action(window, "zoom.act_in", self)
        self.act_out = build_action(window, "zoom.act_out", self)
        self.act_reset = build_action(window, "zoom.act_reset", self)
        self.act_present = build_action(window, "zoom.act_present", self)
        saved = saved_factor(settings)
        if saved != 1.0:
            self.set_factor(saved, remember=False)

    def actions(self) -> list[QAction]:
        return [self.act_in, self.act_out, self.act_reset, self.act_present]

    # -- stepping -------------------------------------------------------------------------
    def zoom_in(self) -> None:
        self.set_factor(next((s for s in STEPS if s > self.factor + 1e-6), STEPS[-1]))

    def zoom_out(self) -> None:
        self.set_factor(next((s for s in reversed(STEPS) if s < self.factor - 1e-6), STEPS[0]))

    def reset(self) -> None:
        self.set_factor(1.0)

    def toggle_presentation(self) -> None:
        w = self.window
        if self._before_present is None:
            # the views built on first use count too: a page measured without them (the Train
            # page without its settings) would seem to fit at a step too large for it
            for part in w.findChildren(LazyPart):
                part.get()
            self._before_present = before = self.factor
            self.set_factor(min(STEPS[-1], self.factor * PRESENT), remember=False)
            # a small screen (a 1024×768 projector, 1920×1080 at scale 2): the largest step
            # at which every page fits it, so that nothing of a page is out of sight
            while self.factor > before + 1e-6 and not self._fits_screen():
                self.set_factor(
                    max(before, next(s for s in reversed(STEPS) if s < self.factor - 1e-6)),
                    remember=False,
                )
            w.showFullScreen()
            self.act_present.setChecked(True)
        else:
            back, self._before_present = self._before_present, None
            w.showNormal()
            self.set_factor(back, remember=False)
            self.act_present.setChecked(False)

    def _fits_screen(self) -> bool:
        """Every workspace's page fits the full screen at the present factor, below the menus and
        the tool bar and above the status bar."""
        w = self.window
        host = getattr(w, "workspaces", None)
        if host is None:
            return True
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        need = host.room_needed()
        chrome = w.menuBar().sizeHint().height() + w.statusBar().sizeHint().height()
        chrome += sum(
            tb.sizeHint().height()
            for tb in w.findChildren(QToolBar)
            if not tb.isHidden() and w.toolBarArea(tb) == Qt.ToolBarArea.TopToolBarArea
        )
        screen = w.screen().geometry()
        return need.width() <= screen.width() and need.height() + chrome <= screen.height()

    @property
    def presenting(self) -> bool:
        return self._before_present is not None

    # -- applying -------------------------------------------------------------------------
    def set_factor(self, factor: float, remember: bool = True) -> None:
        factor = min(max(float(factor), STEPS[0]), STEPS[-1])
        ratio = factor / self.factor
        if abs(ratio - 1.0) < 1e-6:
            return
        self.factor = factor
        f = self.base.__class__(self.base)
        if self.base.pointSizeF() > 0:
            f.setPointSizeF(self.base.pointSizeF() * factor)
        else:
            f.setPixelSize(max(6, round(self.base.pixelSize() * factor)))
        QApplication.setFont(f)
        if (
            self.window.font() != f
        ):  # Qt tells the widgets only while the event loop "runs" (not in tests)
            ev = QEvent(QEvent.Type.ApplicationFontChange)
            for widget in QApplication.allWidgets():
                QApplication.sendEvent(widget, ev)
        self._scale_pixels(ratio)
        figure_image.set_zoom(factor)
        if remember:
            self.settings.setValue(KEY, factor)
        self.window.statusBar().showMessage(f"Zoom {round(factor * 100)} %", 2000)
        self.changed.emit(factor)

    def _scale_pixels(self, ratio: float) -> None:
        """What was sized in pixels from the old font: columns, row heights, icons."""
        w = self.window
        for hdr in w.findChildren(QHeaderView):
            hdr.setDefaultSectionSize(max(8, round(hdr.defaultSectionSize() * ratio)))
            if hdr.orientation() == Qt.Orientation.Vertical:
                # rows follow the default size (sized one by one, they grew apart), at least the
                # font's (a fixed minimum, scaled step by step, kept them tall after zooming out)
                continue
            hdr.setMinimumSectionSize(max(8, round(hdr.minimumSectionSize() * ratio)))
            for c in range(hdr.count()):
                if hdr.sectionResizeMode(c) in (
                    QHeaderView.ResizeMode.Fixed,
                    QHeaderView.ResizeMode.Interactive,
                ) and not hdr.isSectionHidden(c):
                    hdr.resizeSection(c, max(8, round(hdr.sectionSize(c) * ratio)))
        for tb in w.findChildren(QToolBar):
            tb.setIconSize(self._scaled(tb, tb.iconSize(), ratio))
        for b in w.findChildren(QAbstractButton):
            if not b.icon().isNull() and not isinstance(b.parentWidget(), QToolBar):
                b.setIconSize(self._scaled(b, b.iconSize(), ratio))
        for widget in w.findChildren(QWidget):
            fn = getattr(type(widget), "after_zoom", None)
            if fn is not None:
                fn(widget)
        views = getattr(w, "views", None)
        if views is not None and hasattr(views, "after_zoom"):
            views.after_zoom()

    def _scaled(self, obj, size: QSize, ratio: float) -> QSize:
        """``size`` at this zoom, from the size ``obj`` had at 100 % (kept on the object: no
        rounding drift after many steps)."""
        base = obj.property("zoomBaseSize")
        if not isinstance(base, QSize):
            prev = self.factor / ratio
            base = QSize(round(size.width() / prev), round(size.height() / prev))
            obj.setProperty("zoomBaseSize", base)
        return QSize(
            max(8, round(base.width() * self.factor)), max(8, round(base.height() * self.factor))
        )
