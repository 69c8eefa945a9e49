"""The sentence view with annotation: token-snapped selection and the span edits it offers.

Mouse: click a token to put the caret on it, drag (or Shift+click) to select a run of tokens,
double-click to select the whole entity under the pointer, right-click for the annotation menu
(``contextMenuWanted``). Keyboard (handled here): Left/Right move the caret, Shift+Left/Right
extend the selection, Home/End jump, Esc collapses the selection; the caret is kept in view.
:meth:`step_token` and :meth:`step_entity` (the annotation controller's next / previous token and
entity, which also work with the focus in the corpus browser) move it.

The annotation commands themselves (type, clear, extend / shrink, split, merge, and which of
them apply now) are Qt-free (:mod:`nerstudio.app.span_edits`): the annotation controller runs
them on :meth:`selection_state` and hands the outcome to :meth:`apply`, which moves the caret and
asks for the change with ``editRequested(new_spans, description)`` (one undoable step). Moving
the caret to the next entity when there is none says why with ``editRefused(message)``.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QAbstractScrollArea, QScrollArea

from ...app import span_edits
from ...corpus.model import Span
from .sentence_view import SentenceView

# moving, with the focus in the sentence view or the corpus browser (the annotation controller
# makes one action of each): name, text, keys, the view's method
NAV_COMMANDS = (
    ("next_entity", "Next entity (selects it)", ("Tab",), lambda v: v.step_entity(1)),
    (
        "previous_entity",
        "Previous entity (selects it)",
        ("Shift+Tab",),
        lambda v: v.step_entity(-1),
    ),
    ("next_token", "Caret to the next token", ("Right",), lambda v: v.step_token(1)),
    ("previous_token", "Caret to the previous token", ("Left",), lambda v: v.step_token(-1)),
    (
        "extend_selection_right",
        "Extend the token selection right",
        ("Shift+Right",),
        lambda v: v.step_token(1, True),
    ),
    (
        "extend_selection_left",
        "Extend the token selection left",
        ("Shift+Left",),
        lambda v: v.step_token(-1, True),
    ),
)

# keys the view handles itself (the edit keys are the annotation actions' shortcuts)
CARET_KEYS = (
    ("Home / End", "Caret to the first / last token"),
    ("Esc", "Collapse the selection to the caret"),
    ("Double-click", "Select the whole entity"),
)


class AnnotationView(SentenceView):
    editRequested = Signal(list, str)
    editRefused = Signal(str)
    selectionChanged = Signal(int, int)
    contextMenuWanted = Signal(QPoint)  # global position

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.editable = True
        self.anchor = -1
        self.caret = -1
        self._dragging = False

    @property
    def types(self) -> list[str]:
        return list(self.scheme.labels)

    @property
    def keys(self) -> dict[str, str]:
        return dict(self.scheme.keys)

    # -- content --------------------------------------------------------------------------
    def set_sentence(
        self,
        words,
        gold=(),
        candidate=None,
        candidate_name: str = "candidate",
        second=None,
        second_name: str = "B",
    ) -> None:
        same = tuple(words) == self._words
        super().set_sentence(words, gold, candidate, candidate_name, second, second_name)
        if not same:
            self.anchor = self.caret = 0 if self._words else -1
            self.selectionChanged.emit(*self.selection())
            self._scroll_to(0)

    def gold(self) -> list[Span]:
        return list(self._gold)

    def selection(self) -> tuple[int, int]:
        """Selected tokens as ``[start, end)``; (-1, -1) when nothing is selected."""
        if self.caret < 0:
            return -1, -1
        return min(self.anchor, self.caret), max(self.anchor, self.caret) + 1

    def _select(self, anchor: int, caret: int, scroll: bool = False) -> None:
        old = self.selection()
        self.anchor, self.caret = anchor, caret
        new = self.selection()
        if new != old:
            self.update_tokens(*old)
        self.update_tokens(*new)
        if scroll:
            self._scroll_to(caret)
        self.selectionChanged.emit(*new)

    def select_tokens(self, start: int, end: int) -> None:
        n = len(self._words)
        if not n:
            return
        self._select(max(0, min(start, n - 1)), max(0, min(end - 1, n - 1)), scroll=True)

    def token_at(self, pos) -> int:
        """The token under ``pos`` (a little slack around it), or -1; looks in that row only."""
        lo, hi = self._visible_tokens(QRectF(pos.x(), pos.y(), 1, 1))
        for i in range(lo, hi):
            if self._boxes[i].adjusted(-_HALF_GAP, -8, _HALF_GAP, 8).contains(pos):
                return i
        return -1

    def _scroll_to(self, i: int) -> None:
        """Keep token ``i`` visible when the view sits in a scroll area."""
        if not 0 <= i < len(self._boxes):
            return
        w = self.parentWidget()
        while w is not None and not isinstance(w, QAbstractScrollArea):
            w = w.parentWidget()
        if isinstance(w, QScrollArea):
            c = self._boxes[i].center()
            w.ensureVisible(int(c.x()), int(c.y()), 20, int(self._row_height()))

    # -- mouse ----------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:
        i = self.token_at(event.position())
        if i >= 0 and event.button() == Qt.MouseButton.LeftButton:
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier and self.caret >= 0:
                self._select(self.anchor, i)
            else:
                self._select(i, i)
            self._dragging = True
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._dragging:
            i = self.token_at(event.position())
            if i >= 0 and i != self.caret:
                self._select(self.anchor, i)
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        self._dragging = False
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:
        i = self.token_at(event.position())
        sp = span_edits.span_at(self._gold, i) if i >= 0 else None
        if sp is not None:
            self.select_tokens(sp.start, sp.end)
        super().mouseDoubleClickEvent(event)

    def contextMenuEvent(self, event) -> None:
        """Right-click: a token outside the selection becomes the caret, then the menu opens."""
        i = self.token_at(QPointF(event.pos()))
        a, b = self.selection()
        if i >= 0 and not a <= i < b:
            self._select(i, i)
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        self.contextMenuWanted.emit(event.globalPos())
        event.accept()

    # -- keys -----------------------------------------------------------------------------
    def keyPressEvent(self, event) -> None:
        if not self._words:
            return super().keyPressEvent(event)
        key, mods = event.key(), event.modifiers()
        n = len(self._words)
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        plain = not (
            mods
            & (
                Qt.KeyboardModifier.ControlModifier
                | Qt.KeyboardModifier.AltModifier
                | Qt.KeyboardModifier.MetaModifier
            )
        )
        if key in (Qt.Key.Key_Left, Qt.Key.Key_Right) and plain:
            self.step_token(-1 if key == Qt.Key.Key_Left else 1, extend=shift)
            return
        if key in (Qt.Key.Key_Home, Qt.Key.Key_End) and plain:
            c = 0 if key == Qt.Key.Key_Home else n - 1
            self._select(self.anchor if shift else c, c, scroll=True)
            return
        if key == Qt.Key.Key_Escape and plain:
            self._select(self.caret, self.caret)
            return
        super().keyPressEvent(event)

    # -- moving (the annotation controller's navigation actions call these) ---------------
    def step_token(self, step: int, extend: bool = False) -> None:
        """Caret to the next (+1) / previous (-1) token; ``extend`` keeps the anchor (as with Shift held)."""
        n = len(self._words)
        if not n:
            return
        c = max(0, min(n - 1, max(self.caret, 0) + step))
        self._select(self.anchor if extend and self.anchor >= 0 else c, c, scroll=True)

    def step_entity(self, step: int) -> None:
        """Select the next (+1) / previous (-1) gold entity after / before the selection."""
        a, b = self.selection()
        spans = sorted(self._gold)
        if step > 0:
            nxt = [
                s for s in spans if s.start > a or (s.start == a and s.end > b)
            ]  # not the one selected
            target = nxt[0] if nxt else None
        else:
            prev = [s for s in spans if s.start < a]
            target = prev[-1] if prev else None
        if target is None:
            self.editRefused.emit(
                ("No entity after the selection" if step > 0 else "No entity before the selection")
                + " in this sentence (Ctrl+Down / Ctrl+Up: next / previous sentence)"
            )
            return
        self.select_tokens(target.start, target.end)

    # -- the annotation commands' selection and their outcome ----------------------------
    def selection_state(self) -> span_edits.Selection:
        """The selection as the annotation commands take it (:mod:`nerstudio.app.span_edits`);
        empty when the view is read-only."""
        a, b = self.selection()
        if not self.editable:
            a = b = -1
        return span_edits.Selection(a, b, self.caret, len(self._words))

    def apply(self, edit: span_edits.Edit) -> None:
        """Show a command's outcome: the caret moves where the edit puts it, and a change of
        the spans is asked for (``editRequested``: the document makes it one undoable step)."""
        if edit.caret is not None:
            self._select(edit.caret, edit.caret)
        if edit.changes(self._gold):
            self.editRequested.emit(list(edit.spans), edit.text)

    # -- painting -------------------------------------------------------------------------
    def focusInEvent(self, event) -> None:
        self.update_tokens(*self.selection())  # the selection's outline shows the focus
        super().focusInEvent(event)

    def focusOutEvent(self, event) -> None:
        self.update_tokens(*self.selection())
        super().focusOutEvent(event)

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        a, b = self.selection()
        if a < 0 or not self._boxes or b > len(self._boxes):
            return
        p = QPainter(self)
        sel = QColor(self.palette().color(self.palette().ColorRole.Highlight))
        fill = QColor(sel)
        fill.setAlpha(45)
        p.setBrush(fill)
        focus = self.hasFocus()
        p.setPen(
            QPen(
                sel, 1.5 if focus else 1.0, Qt.PenStyle.SolidLine if focus else Qt.PenStyle.DotLine
            )
        )
        for r in self._span_rects(Span(a, b, "")):
            p.drawRect(r.adjusted(-3, -3, 3, 3))
        c = QRectF(self._boxes[self.caret])
        p.setPen(QPen(sel, 2))
        p.drawLine(c.bottomLeft() + QPointF(2, 2), c.bottomRight() + QPointF(-2, 2))
        p.end()


_HALF_GAP = 3
