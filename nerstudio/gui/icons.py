"""The window's icons: Qt's standard ones where a fitting one exists, else drawn here.

The toolbar shows icons only (the text is in the tooltip and the menus), so it stays one short
row at 1280 px whatever the actions are named. Icons drawn here are a few lines of QPainter on a
transparent pixmap — no image files to ship, and they follow the palette's text colour.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import QApplication, QStyle

_SIZE = 64  # drawn at this size, scaled down by Qt

STANDARD = {
    "open": QStyle.StandardPixmap.SP_DialogOpenButton,
    "save": QStyle.StandardPixmap.SP_DialogSaveButton,
    "accept": QStyle.StandardPixmap.SP_DialogApplyButton,
    "previous": QStyle.StandardPixmap.SP_ArrowUp,
    "next": QStyle.StandardPixmap.SP_ArrowDown,
    "train": QStyle.StandardPixmap.SP_MediaPlay,
    "cancel": QStyle.StandardPixmap.SP_MediaStop,
    "nbest": QStyle.StandardPixmap.SP_FileDialogDetailedView,
    "folder": QStyle.StandardPixmap.SP_DirOpenIcon,
}


def icon(name: str, color: QColor | None = None) -> QIcon:
    """The icon called ``name`` (see :data:`STANDARD` and the ``_draw_*`` functions)."""
    if name in STANDARD:
        return QApplication.style().standardIcon(STANDARD[name])
    pix = QPixmap(_SIZE, _SIZE)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    c = color or QApplication.palette().windowText().color()
    p.setPen(QPen(c, 5, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap, Qt.PenJoinStyle.RoundJoin))
    _DRAW[name](p, c)
    p.end()
    return QIcon(pix)


def _arrow_head(p: QPainter, tip: QPointF, angle: float, c: QColor) -> None:
    path = QPainterPath(tip)
    for da in (2.6, -2.6):
        path.lineTo(tip + QPointF(16 * math.cos(angle + da), 16 * math.sin(angle + da)))
    path.closeSubpath()
    p.fillPath(path, c)


def _undo(p: QPainter, c: QColor, mirror: bool = False) -> None:
    if mirror:
        p.translate(_SIZE, 0)
        p.scale(-1, 1)
    path = QPainterPath(QPointF(18, 26))
    path.lineTo(40, 26)
    path.arcTo(QRectF(28, 26, 24, 24), 90, -180)
    path.lineTo(24, 50)
    p.drawPath(path)
    _arrow_head(p, QPointF(10, 26), 0.0, c)


def _next_error(p: QPainter, c: QColor) -> None:
    red = QColor("#c0392b")
    p.setPen(QPen(red, 6, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
    p.drawLine(10, 10, 30, 30)
    p.drawLine(30, 10, 10, 30)
    p.setPen(QPen(c, 5, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
    p.drawLine(46, 14, 46, 48)
    _arrow_head(p, QPointF(46, 58), math.pi / 2, c)


def _annotate(p: QPainter, c: QColor) -> None:  # a pencil over a marked word
    p.drawRoundedRect(QRectF(6, 40, 34, 16), 4, 4)
    p.drawLine(30, 34, 54, 10)
    p.drawLine(54, 10, 58, 14)
    p.drawLine(58, 14, 34, 38)
    p.drawLine(34, 38, 28, 40)
    p.drawLine(28, 40, 30, 34)


def _inspect(p: QPainter, c: QColor) -> None:  # a magnifier over table rows
    for y in (12, 24, 36):
        p.drawLine(6, y, 26, y)
    p.drawEllipse(QRectF(24, 14, 26, 26))
    p.drawLine(46, 37, 58, 50)


def _curve(p: QPainter, c: QColor) -> None:  # a learning curve on axes
    p.drawLine(8, 6, 8, 56)
    p.drawLine(8, 56, 58, 56)
    path = QPainterPath(QPointF(12, 50))
    path.cubicTo(QPointF(20, 18), QPointF(32, 16), QPointF(56, 14))
    p.drawPath(path)


def _step(p: QPainter, c: QColor) -> None:  # stairs with a step marker
    path = QPainterPath(QPointF(6, 56))
    for x, y in ((6, 44), (22, 44), (22, 30), (38, 30), (38, 16), (58, 16)):
        path.lineTo(x, y)
    p.drawPath(path)
    p.setBrush(c)
    p.drawEllipse(QPointF(46, 8), 4, 4)


_DRAW = {
    "undo": _undo,
    "redo": lambda p, c: _undo(p, c, mirror=True),
    "next_error": _next_error,
    "annotate": _annotate,
    "inspect": _inspect,
    "curve": _curve,
    "step": _step,
}
