"""Draws one sentence with its gold entities and (optionally) a candidate's entities.

Tokens flow left to right and wrap. Gold entities are filled boxes behind the tokens with the
type above; the selected candidate's entities are bars below the tokens. An entity present in
only one of the two is outlined in red, so differences stand out.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from ...corpus.model import Span
from .palette import type_color

_PAD_X, _GAP, _LINE_GAP, _MARGIN = 4, 6, 14, 10


class SentenceView(QWidget):
    tokenClicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("sentenceView")
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        self.setMinimumHeight(90)
        self.setAutoFillBackground(True)
        self._words: tuple[str, ...] = ()
        self._gold: list[Span] = []
        self._cand: list[Span] | None = None
        self._cand_name = "candidate"
        self._boxes: list[QRectF] = []
        f = QFont(self.font())
        f.setPointSizeF(f.pointSizeF() * 1.25)
        self._font = f
        self._small = QFont(self.font())
        self._small.setPointSizeF(max(6.0, self.font().pointSizeF() * 0.8))
        self._height = 90

    # -- content --------------------------------------------------------------------------
    def set_sentence(self, words, gold=(), candidate=None, candidate_name: str = "candidate") -> None:
        self._words = tuple(words)
        self._gold = list(gold)
        self._cand = None if candidate is None else list(candidate)
        self._cand_name = candidate_name
        self._layout()
        self.update()

    def clear(self) -> None:
        self.set_sentence(())

    def words(self):
        return self._words

    def candidate(self) -> tuple[list | None, str]:
        """The candidate drawn under the gold (None: none) and its name."""
        return (None if self._cand is None else list(self._cand)), self._cand_name

    # -- layout ---------------------------------------------------------------------------
    def _row_height(self) -> int:
        fm, sm = QFontMetrics(self._font), QFontMetrics(self._small)
        return sm.height() + fm.height() + 2 * _PAD_X + (sm.height() + 6 if self._cand is not None else 4)

    def _layout(self) -> None:
        fm = QFontMetrics(self._font)
        sm = QFontMetrics(self._small)
        width = max(200, self.width() - 2 * _MARGIN)
        x, y = _MARGIN, _MARGIN + sm.height()
        rowh = self._row_height()
        self._boxes = []
        for w in self._words:
            tw = fm.horizontalAdvance(w if w else "␣") + 2 * _PAD_X
            if x + tw > _MARGIN + width and x > _MARGIN:
                x = _MARGIN
                y += rowh + _LINE_GAP
            self._boxes.append(QRectF(x, y, tw, fm.height() + 2 * _PAD_X))
            x += tw + _GAP
        self._height = int(y + rowh + _MARGIN)
        self.setMinimumHeight(max(90, self._height))
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        return QSize(600, max(90, self._height))

    def resizeEvent(self, event) -> None:
        self._layout()
        super().resizeEvent(event)

    def mousePressEvent(self, event) -> None:
        pos = event.position()
        for i, r in enumerate(self._boxes):
            if r.contains(pos):
                self.tokenClicked.emit(i)
                break
        super().mousePressEvent(event)

    # -- painting -------------------------------------------------------------------------
    def _span_rects(self, sp: Span) -> list[QRectF]:
        """One rectangle per visual row covered by the span."""
        rects: list[QRectF] = []
        for i in range(sp.start, min(sp.end, len(self._boxes))):
            b = self._boxes[i]
            if rects and abs(rects[-1].top() - b.top()) < 1:
                rects[-1] = rects[-1].united(b)
            else:
                rects.append(QRectF(b))
        return rects

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        pal = self.palette()
        text_color = pal.color(self.foregroundRole())
        if not self._words:
            p.setPen(pal.color(pal.ColorGroup.Disabled, pal.ColorRole.WindowText))
            p.drawText(self.rect(), Qt.AlignCenter, "Select a sentence in the corpus browser")
            return
        gold = set(self._gold)
        cand = set(self._cand) if self._cand is not None else None
        sm = QFontMetrics(self._small)
        # gold entities: filled boxes, type above
        for sp in self._gold:
            c = type_color(sp.label)
            fill = QColor(c)
            fill.setAlpha(70)
            missing = cand is not None and sp not in cand
            for r in self._span_rects(sp):
                rr = r.adjusted(-2, -2, 2, 2)
                p.setBrush(fill)
                p.setPen(QPen(QColor("#d62728"), 2, Qt.DashLine) if missing else QPen(c, 1.2))
                p.drawRoundedRect(rr, 5, 5)
            first = self._span_rects(sp)[0]
            p.setFont(self._small)
            p.setPen(c.darker(130))
            p.drawText(QRectF(first.left(), first.top() - sm.height() - 2, max(first.width(), 60), sm.height()),
                       Qt.AlignLeft | Qt.AlignVCenter, sp.label or "entity")
        # candidate entities: bars below the tokens
        if cand is not None:
            for sp in self._cand:
                c = type_color(sp.label)
                wrong = sp not in gold
                for r in self._span_rects(sp):
                    bar = QRectF(r.left(), r.bottom() + 4, r.width(), 5)
                    p.setPen(QPen(QColor("#d62728"), 1.5) if wrong else Qt.NoPen)
                    p.setBrush(c)
                    p.drawRoundedRect(bar, 2, 2)
                    lbl = QRectF(r.left(), bar.bottom() + 1, max(r.width(), 60), sm.height())
                p.setFont(self._small)
                p.setPen(QColor("#d62728") if wrong else c.darker(130))
                p.drawText(lbl, Qt.AlignLeft | Qt.AlignTop, (sp.label or "entity") + (" ✗" if wrong else ""))
        # tokens
        p.setFont(self._font)
        p.setPen(text_color)
        for w, r in zip(self._words, self._boxes):
            if w:
                p.drawText(r, Qt.AlignCenter, w)
            else:
                p.setPen(pal.color(pal.ColorGroup.Disabled, pal.ColorRole.WindowText))
                p.drawText(r, Qt.AlignCenter, "␣")
                p.setPen(text_color)
        p.end()
