"""The sentence view with annotation: token-snapped selection and single-key span edits.

Mouse: click a token to put the caret on it, drag (or Shift+click) to select a run of tokens,
double-click to select the whole entity under the pointer. Keyboard: Left/Right move the caret,
Shift+Left/Right extend the selection, Home/End jump, Esc collapses the selection.

Edits (each is one undoable step, emitted as ``editRequested(new_spans, description)``):

* a type key (P/O/L/M for PER/ORG/LOC/MISC, or the first free letter of the corpus's own types;
  1–9 by position) types the selection; with only the caret inside an entity, it retypes that
  entity;
* Delete / Backspace clears the entities under the selection;
* Ctrl+Left / Ctrl+Right extend the entity under the caret by one token on that side,
  Ctrl+Shift+Left / Ctrl+Shift+Right shrink it from the other side (its end or start moves in
  the direction of the arrow);
* ``/`` splits the entity under the caret before the caret token; ``+`` (or ``=``) merges it
  with the entity ending right before it when the caret is on its first token (so ``/`` then
  ``+`` gives the entity back), else with the next entity.

An edit that cannot be made (extending into a one-token neighbour, merging with nothing) changes
nothing and says why with ``editRefused(message)``.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen

from ... import annotation as ann
from ...corpus.model import Span
from .sentence_view import SentenceView

DEFAULT_TYPES = ("PER", "ORG", "LOC", "MISC")


def type_keys(labels) -> dict[str, str]:
    """Single-letter keys for entity types: the first letter not already taken."""
    keys: dict[str, str] = {}
    for lab in labels:
        for ch in (lab or "E").upper():
            if ch.isalpha() and ch not in keys:
                keys[ch] = lab
                break
    return keys


class AnnotationView(SentenceView):
    editRequested = Signal(list, str)
    editRefused = Signal(str)
    selectionChanged = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.StrongFocus)
        self.editable = True
        self.anchor = -1
        self.caret = -1
        self._dragging = False
        self.set_types(DEFAULT_TYPES)

    def set_types(self, labels) -> None:
        labels = [lab for lab in labels]
        for lab in DEFAULT_TYPES:  # the usual four stay available
            if lab not in labels and all(lab2 != "" for lab2 in labels):
                labels.append(lab)
        self.types = list(dict.fromkeys(labels))
        self.keys = type_keys(self.types)

    # -- content --------------------------------------------------------------------------
    def set_sentence(self, words, gold=(), candidate=None, candidate_name: str = "candidate") -> None:
        same = tuple(words) == self._words
        super().set_sentence(words, gold, candidate, candidate_name)
        if not same:
            self.anchor = self.caret = (0 if self._words else -1)
            self.selectionChanged.emit(*self.selection())

    def gold(self) -> list[Span]:
        return list(self._gold)

    def selection(self) -> tuple[int, int]:
        """Selected tokens as ``[start, end)``; (-1, -1) when nothing is selected."""
        if self.caret < 0:
            return -1, -1
        return min(self.anchor, self.caret), max(self.anchor, self.caret) + 1

    def select_tokens(self, start: int, end: int) -> None:
        n = len(self._words)
        if not n:
            return
        self.anchor = max(0, min(start, n - 1))
        self.caret = max(0, min(end - 1, n - 1))
        self.update()
        self.selectionChanged.emit(*self.selection())

    def token_at(self, pos) -> int:
        for i, r in enumerate(self._boxes):
            if r.adjusted(-_HALF_GAP, -8, _HALF_GAP, 8).contains(pos):
                return i
        return -1

    # -- mouse ----------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:
        i = self.token_at(event.position())
        if i >= 0 and event.button() == Qt.LeftButton:
            self.setFocus(Qt.MouseFocusReason)
            if event.modifiers() & Qt.ShiftModifier and self.caret >= 0:
                self.caret = i
            else:
                self.anchor = self.caret = i
            self._dragging = True
            self.update()
            self.selectionChanged.emit(*self.selection())
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._dragging:
            i = self.token_at(event.position())
            if i >= 0 and i != self.caret:
                self.caret = i
                self.update()
                self.selectionChanged.emit(*self.selection())
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        self._dragging = False
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:
        i = self.token_at(event.position())
        sp = ann.span_at(self._gold, i) if i >= 0 else None
        if sp is not None:
            self.select_tokens(sp.start, sp.end)
        super().mouseDoubleClickEvent(event)

    # -- keys -----------------------------------------------------------------------------
    def keyPressEvent(self, event) -> None:
        if not self._words:
            return super().keyPressEvent(event)
        key, mods, text = event.key(), event.modifiers(), event.text()
        n = len(self._words)
        ctrl = bool(mods & Qt.ControlModifier)
        shift = bool(mods & Qt.ShiftModifier)
        if key in (Qt.Key_Left, Qt.Key_Right) and ctrl:
            self._resize(-1 if key == Qt.Key_Left else 1, shrink=shift)
            return
        if key in (Qt.Key_Left, Qt.Key_Right, Qt.Key_Home, Qt.Key_End) and not (mods & Qt.AltModifier):
            step = {Qt.Key_Left: -1, Qt.Key_Right: 1}.get(key)
            c = max(self.caret, 0)
            c = (c + step) if step is not None else (0 if key == Qt.Key_Home else n - 1)
            c = max(0, min(n - 1, c))
            if shift:
                self.caret = c
            else:
                self.anchor = self.caret = c
            self.update()
            self.selectionChanged.emit(*self.selection())
            return
        if key == Qt.Key_Escape:
            self.anchor = self.caret
            self.update()
            self.selectionChanged.emit(*self.selection())
            return
        if not self.editable or ctrl or (mods & Qt.AltModifier):
            return super().keyPressEvent(event)
        if key in (Qt.Key_Delete, Qt.Key_Backspace):
            self.clear_selection_spans()
            return
        if text == "/":
            self.split_at_caret()
            return
        if text in ("+", "="):
            self.merge_with_next()
            return
        label = None
        if text and text.upper() in self.keys:
            label = self.keys[text.upper()]
        elif text and text.isdigit() and 1 <= int(text) <= len(self.types):
            label = self.types[int(text) - 1]
        if label is not None:
            self.set_type(label)
            return
        super().keyPressEvent(event)

    # -- edits (also callable directly) ---------------------------------------------------
    def _request(self, new: list[Span], text: str) -> None:
        if sorted(new) != sorted(self._gold):
            self.editRequested.emit(list(new), text)

    def set_type(self, label: str) -> None:
        a, b = self.selection()
        if a < 0:
            return
        sp = ann.span_at(self._gold, self.caret)
        if b - a == 1 and sp is not None:
            self._request(ann.set_label(self._gold, sp.start, sp.end, label),
                          f"type “{sp.text(self._words)}” as {label}")
        else:
            self._request(ann.set_label(self._gold, a, b, label),
                          f"mark “{' '.join(self._words[a:b])}” as {label}")

    def clear_selection_spans(self) -> None:
        a, b = self.selection()
        if a >= 0:
            self._request(ann.clear(self._gold, a, b), "clear entity")

    def _resize(self, direction: int, shrink: bool) -> None:
        sp = ann.span_at(self._gold, self.caret)
        if sp is None:
            return
        n = len(self._words)
        if not shrink:
            start, end = (sp.start - 1, sp.end) if direction < 0 else (sp.start, sp.end + 1)
            what = "extend"
        else:
            start, end = (sp.start, sp.end - 1) if direction < 0 else (sp.start + 1, sp.end)
            what = "shrink"
        if start < 0 or end > n or (start, end) == (sp.start, sp.end):
            return
        try:
            new = ann.resize(self._gold, sp, start, end, n)
        except ann.EditRefused as exc:
            self.editRefused.emit(f"Cannot {what} the {sp.label or 'entity'}: {exc} (use + to merge)")
            return
        if end > start:
            self.caret = max(start, min(self.caret, end - 1))
            self.anchor = self.caret
        self._request(new, f"{what} {sp.label} entity")

    def split_at_caret(self) -> None:
        sp = ann.span_at(self._gold, self.caret)
        if sp is not None and sp.start < self.caret < sp.end:
            self._request(ann.split(self._gold, sp, self.caret), f"split {sp.label} entity")

    def merge_with_next(self) -> None:
        pair = ann.merge_pair(self._gold, self.caret)
        if pair is None:
            self.editRefused.emit("Nothing to merge: put the caret on an entity that has a next entity, "
                                  "or on the first token of one that follows another")
            return
        self._request(ann.merge(self._gold, *pair), f"merge {pair[0].label} entities")

    # -- painting -------------------------------------------------------------------------
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
        p.setPen(QPen(sel, 1.5 if self.hasFocus() else 1.0, Qt.SolidLine if self.hasFocus() else Qt.DotLine))
        for r in self._span_rects(Span(a, b, "")):
            p.drawRect(r.adjusted(-3, -3, 3, 3))
        c = self._boxes[self.caret]
        p.setPen(QPen(sel, 2))
        p.drawLine(QRectF(c).bottomLeft() + _pt(2, 2), QRectF(c).bottomRight() + _pt(-2, 2))
        p.end()


_HALF_GAP = 3


def _pt(x, y):
    from PySide6.QtCore import QPointF
    return QPointF(x, y)
