"""Draws one sentence with its gold entities and one candidate's entities, or two to compare.

Tokens flow left to right and wrap. Gold entities are filled boxes behind the tokens with the
type above; each drawn candidate's entities are bars below the tokens (a second candidate, in
compare mode, gets a second row of bars; the rows are labelled A and B). With one candidate, an
entity present in only one of gold and candidate is outlined in red; in compare mode, an entity
present in only one of A and B is. Two adjacent entities of one type keep a visible gap and their
own borders, so they never read as one.

Long sentences (1,000 tokens) stay cheap: token widths are measured once per sentence, a gold
edit does not lay the tokens out again, painting skips what is outside the exposed area, and a
change of selection repaints only the tokens involved (see :mod:`.annotation_view`).
"""

from __future__ import annotations

import bisect
from array import array
from itertools import accumulate

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from ...app.types import CONLL_TYPES, TypeScheme
from ...corpus.model import Span
from .palette import type_color

_PAD_X, _GAP, _LINE_GAP, _MARGIN = 4, 6, 14, 10
_BAR_H, _BAR_GAP = 5, 3
_DIFF = QColor("#d62728")


class SentenceView(QWidget):
    tokenClicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("sentenceView")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setMinimumHeight(90)
        self.setAutoFillBackground(True)
        self._words: tuple[str, ...] = ()
        self._gold: list[Span] = []
        self._cands: list[tuple[list[Span], str]] = []  # (spans, name): none, one, or two (compare)
        self._boxes = _Boxes([], array("d"), [0], [0.0], 0)
        self._row_start: list[int] = [0]  # first token of each visual row
        self._row_top: list[float] = [0.0]  # and its top
        self._widths = array("d")
        self._laid_out = (0, 0)  # (width, number of candidate rows) of the current layout
        self.scheme = TypeScheme.of(CONLL_TYPES)
        self._set_fonts()
        self._height = 90

    def _set_fonts(self) -> None:
        """The words at 1.25 × the widget's font, the labels at 0.8 × (follows the zoom)."""
        f = QFont(self.font())
        f.setPointSizeF(f.pointSizeF() * 1.25)
        self._font = f
        self._small = QFont(self.font())
        self._small.setPointSizeF(max(6.0, self.font().pointSizeF() * 0.8))
        self._fm, self._sm = QFontMetrics(self._font), QFontMetrics(self._small)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # View ▸ Zoom: measure and lay out again
            self._set_fonts()
            self._widths = _token_widths(self._fm, self._words)
            self._laid_out = (0, 0)
            self._relayout_if_needed()
            self.update()

    # -- content --------------------------------------------------------------------------
    def set_scheme(self, scheme: TypeScheme) -> None:
        """The corpus's types (colours; the annotation view's keys)."""
        if scheme != self.scheme:
            self.scheme = scheme
            self.update()

    def set_sentence(
        self,
        words,
        gold=(),
        candidate=None,
        candidate_name: str = "candidate",
        second=None,
        second_name: str = "B",
    ) -> None:
        """Show ``words`` with ``gold`` and, optionally, a candidate (and a second one to compare)."""
        words = tuple(words)
        if words != self._words:
            self._words = words
            self._widths = _token_widths(self._fm, words)
            self._laid_out = (0, 0)
        self._gold = list(gold)
        self._cands = []
        if candidate is not None:
            self._cands.append((list(candidate), candidate_name))
            if second is not None:
                self._cands.append((list(second), second_name))
        self._relayout_if_needed()
        self.update()

    def set_gold(self, gold) -> None:
        """Only the gold changed (an edit): redraw, keep the layout and the candidates."""
        self._gold = list(gold)
        self.update()

    def clear(self) -> None:
        self.set_sentence(())

    def words(self):
        return self._words

    def candidate(self) -> tuple[list | None, str]:
        """The (first) candidate drawn under the gold (None: none) and its name."""
        if not self._cands:
            return None, "candidate"
        return list(self._cands[0][0]), self._cands[0][1]

    def candidates(self) -> list[tuple[list[Span], str]]:
        """Every candidate drawn: none, one, or two (compare mode: A then B)."""
        return [(list(s), n) for s, n in self._cands]

    def compare_mode(self) -> bool:
        return len(self._cands) == 2

    # -- layout ---------------------------------------------------------------------------
    def _row_height(self) -> int:
        fm, sm = self._fm, self._sm
        bars = len(self._cands) * (_BAR_GAP + _BAR_H + sm.height()) + 4
        return sm.height() + fm.height() + 2 * _PAD_X + bars

    def _relayout_if_needed(self) -> None:
        if self._laid_out != (self.width(), len(self._cands)):
            self._layout()

    def _layout(self) -> None:
        width = max(200, self.width() - 2 * _MARGIN)
        top = _MARGIN + self._sm.height()
        rowh = self._row_height()
        th = self._fm.height() + 2 * _PAD_X
        w = self._widths
        # a row ends where the next token would cross the right margin (a token wider than the
        # row still gets a row of its own): one search per row, not one step per token
        ends = list(accumulate(x + _GAP for x in w))  # right edge (+ gap) of token i, from 0
        starts, i, n = [], 0, len(w)
        while i < n:
            starts.append(i)
            base = ends[i - 1] if i else 0.0
            j = bisect.bisect_right(ends, base + width + _GAP)
            i = max(j, i + 1)
        row_start = starts or [0]
        row_top = [float(top + r * (rowh + _LINE_GAP)) for r in range(len(row_start))]
        self._boxes = _Boxes(ends, w, row_start, row_top, th)
        self._row_start = row_start
        self._row_top = row_top
        self._laid_out = (self.width(), len(self._cands))
        y = float(row_top[-1])
        height = int(y + rowh + _MARGIN)
        if height != self._height:
            self._height = height
            self.setMinimumHeight(height)  # exactly its rows: no empty band under a short one
            self.updateGeometry()

    def sizeHint(self) -> QSize:
        return QSize(600, self._height)

    def resizeEvent(self, event) -> None:
        if event.size().width() != event.oldSize().width():
            self._layout()
        super().resizeEvent(event)

    def token_rect(self, i: int) -> QRectF:
        """Where token ``i`` is drawn (widget coordinates)."""
        return QRectF(self._boxes[i])

    def mousePressEvent(self, event) -> None:
        pos = event.position()
        i = self._boxes.index_at(pos.x(), pos.y())
        if i >= 0:
            self.tokenClicked.emit(i)
        super().mousePressEvent(event)

    # -- geometry of what is drawn --------------------------------------------------------
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

    def bar_rects(self, row: int, sp: Span) -> list[QRectF]:
        """The bars of span ``sp`` in candidate row ``row`` (0: the candidate or A, 1: B)."""
        off = 4 + row * (_BAR_H + _BAR_GAP + self._sm.height())
        return [QRectF(r.left(), r.bottom() + off, r.width(), _BAR_H) for r in self._span_rects(sp)]

    def gold_rects(self, sp: Span) -> list[QRectF]:
        """The boxes of gold span ``sp`` (within the token gap, so neighbours stay apart)."""
        return [r.adjusted(-1, -2, 1, 2) for r in self._span_rects(sp)]

    def _visible_tokens(self, clip: QRectF) -> tuple[int, int]:
        """The tokens ``[lo, hi)`` of the visual rows (labels above, bars below) that meet ``clip``."""
        above, rowh = self._sm.height() + 4, self._row_height() + 4
        first = max(0, bisect.bisect_right(self._row_top, clip.top() - rowh + above) - 1)
        last = bisect.bisect_right(self._row_top, clip.bottom() + above)
        lo = self._row_start[first] if first < len(self._row_start) else len(self._boxes)
        hi = self._row_start[last] if last < len(self._row_start) else len(self._boxes)
        return lo, hi

    # -- painting -------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        if not self._words:
            p.setPen(pal.color(pal.ColorGroup.Disabled, pal.ColorRole.WindowText))
            p.drawText(
                self.rect(), Qt.AlignmentFlag.AlignCenter, "Select a sentence in the corpus browser"
            )
            return
        lo, hi = self._visible_tokens(QRectF(event.rect()))
        if hi <= lo:
            return
        self._paint_gold(p, lo, hi)
        for row in range(len(self._cands)):
            self._paint_candidate(p, row, lo, hi)
        text_color = pal.color(self.foregroundRole())
        dim = pal.color(pal.ColorGroup.Disabled, pal.ColorRole.WindowText)
        p.setFont(self._font)
        for i in range(lo, hi):
            w, r = self._words[i], self._boxes[i]
            p.setPen(text_color if w else dim)
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, w or "␣")
        p.end()

    def _paint_gold(self, p: QPainter, lo: int, hi: int) -> None:
        single = self._cands[0][0] if len(self._cands) == 1 else None
        in_cand = set(single) if single is not None else None
        sm = self._sm
        p.setFont(self._small)
        for sp in self._gold:
            if sp.end <= lo or sp.start >= hi:
                continue
            c = type_color(sp.label, self.scheme)
            fill = QColor(c)
            fill.setAlpha(70)
            missing = in_cand is not None and sp not in in_cand
            rects = self.gold_rects(sp)
            p.setBrush(fill)
            p.setPen(QPen(_DIFF, 2, Qt.PenStyle.DashLine) if missing else QPen(c.darker(120), 1.5))
            for rr in rects:
                p.drawRoundedRect(rr, 4, 4)
            first = rects[0]
            p.setPen(c.darker(130))
            p.drawText(
                QRectF(
                    first.left() + 1,
                    first.top() - sm.height() - 1,
                    max(first.width(), 60),
                    sm.height(),
                ),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                sp.label or "entity",
            )

    def _paint_candidate(self, p: QPainter, row: int, lo: int, hi: int) -> None:
        spans, _name = self._cands[row]
        compare = len(self._cands) == 2
        gold = set(self._gold)
        other = set(self._cands[1 - row][0]) if compare else gold
        tag = ("A", "B")[row] + " " if compare else ""
        sm = self._sm
        p.setFont(self._small)
        for sp in spans:
            if sp.end <= lo or sp.start >= hi:
                continue
            c = type_color(sp.label, self.scheme)
            differs = sp not in other
            bars = self.bar_rects(row, sp)
            for bar in bars:
                p.setPen(QPen(_DIFF, 1.5) if differs else QPen(c.darker(140), 1))
                p.setBrush(c)
                p.drawRoundedRect(bar, 2, 2)
            last = bars[-1]
            lbl = QRectF(last.left(), last.bottom() + 1, max(last.width(), 80), sm.height())
            wrong = sp not in gold
            p.setPen(_DIFF if differs else c.darker(130))
            p.drawText(
                lbl,
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                tag + (sp.label or "entity") + (" ✗" if wrong else ""),
            )

    def update_tokens(self, start: int, end: int) -> None:
        """Repaint only the area of tokens ``[start, end)`` (a selection change)."""
        if not self._boxes or start < 0:
            return
        start, end = max(0, start), min(len(self._boxes), end)
        if end <= start:
            return
        r = QRectF(self._boxes[start])
        for i in range(start + 1, end):
            r = r.united(self._boxes[i])
        if r.top() != self._boxes[start].top():  # several rows: their full width
            r = QRectF(0, r.top(), self.width(), r.height())
        self.update(r.adjusted(-6, -6, 6, 6).toAlignedRect())


def _token_widths(fm: QFontMetrics, words) -> array:
    """Box width of every token: each distinct word measured once (a 1,000,000-token sentence
    has far fewer distinct words)."""
    measured: dict[str, float] = {}
    out = array("d")
    for w in words:
        x = measured.get(w)
        if x is None:
            x = measured[w] = float(fm.horizontalAdvance(w or "␣") + 2 * _PAD_X)
        out.append(x)
    return out


class _Boxes:
    """Where each token is drawn, from the layout's running right edges and rows (a token's left
    is its row's left margin plus the widths and gaps before it in the row): a QRectF is made only
    for the token asked for, so laying out a huge sentence costs one running sum and one search
    per row."""

    def __init__(
        self, ends: list[float], w: array, row_start: list[int], row_top: list[float], h: float
    ):
        self.ends, self.w, self.h = ends, w, float(h)
        self.row_start, self.row_top = row_start, row_top

    def __len__(self) -> int:
        return len(self.w)

    def __bool__(self) -> bool:
        return len(self.w) > 0

    def _left(self, i: int, row: int) -> float:
        s = self.row_start[row]
        return _MARGIN + (self.ends[i - 1] if i else 0.0) - (self.ends[s - 1] if s else 0.0)

    def __getitem__(self, i: int) -> QRectF:
        i = int(i)
        if i < 0:
            i += len(self.w)
        if not 0 <= i < len(self.w):
            raise IndexError(i)
        row = bisect.bisect_right(self.row_start, i) - 1
        return QRectF(self._left(i, row), self.row_top[row], self.w[i], self.h)

    def index_at(self, px: float, py: float) -> int:
        """The token whose box contains the point, or -1."""
        row = bisect.bisect_right(self.row_top, py) - 1
        if not self or row < 0 or py > self.row_top[row] + self.h:
            return -1
        s = self.row_start[row]
        e = self.row_start[row + 1] if row + 1 < len(self.row_start) else len(self.w)
        # the token whose running right edge (+ gap) is the first past the point
        base = self.ends[s - 1] if s else 0.0
        i = bisect.bisect_right(self.ends, px - _MARGIN + base, s, e)
        if i >= e:
            return -1
        left = self._left(i, row)
        return i if left <= px <= left + self.w[i] else -1
