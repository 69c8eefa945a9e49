"""The adjudication window: annotators' disagreements walked one by one, with keys.

It shows the disagreement in its sentence — boxes: the merged entities so far; bars: the first
two annotators' versions (A and B) — and every annotator's version in words, with the key that
takes it. Keys while walking: **A**, **B**, **C** … take that annotator's version, **E** edits
the sentence by hand, **S** (or Space) skips, **N** / **P** go to the next / previous
disagreement, **Ctrl+S** saves the merged file, **Esc** closes (asking first when decisions are not
saved). While editing, the sentence view takes the usual
annotation keys (the type's digit or letter, Delete, Ctrl(+Shift)+arrows; Tab / Shift+Tab for
the next / previous entity); **Enter** keeps the edit, **Esc** drops it. The report (agreement
before, the decisions so far) is under the sentence.

The view only shows and asks: ``takeRequested(region, annotator)``, ``skipRequested(region)``,
``editDone(sentence, spans)``, ``saveRequested()``; the adjudication controller decides in the
:class:`~nerstudio.adjudication.Adjudication` and calls :meth:`show`.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from string import ascii_uppercase

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
)

from ...app import span_edits
from ...app.types import TypeScheme
from .annotation_view import AnnotationView


class AdjudicationView(QDialog):
    takeRequested = Signal(int, int)  # region, annotator
    skipRequested = Signal(int)
    editDone = Signal(int, list)  # sentence, spans
    saveRequested = Signal()

    def __init__(self, adjudication, scheme: TypeScheme, parent=None):
        super().__init__(parent)
        self.setObjectName("adjudicationView")
        self.setWindowTitle("Adjudicate annotations")
        self.setWindowFlag(Qt.WindowType.Window)
        self.resize(1100, 640)
        self.adj = adjudication
        self.scheme = scheme
        self.at = 0  # index into adj.disagreements
        self.editing = False
        lay = QVBoxLayout(self)
        self.header = QLabel()
        self.header.setObjectName("adjudicationHeader")
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.header)
        self.where = QLabel()
        self.where.setObjectName("adjudicationWhere")
        lay.addWidget(self.where)
        self.sentence = AnnotationView()
        self.sentence.setObjectName("adjudicationSentence")
        self.sentence.set_scheme(scheme)
        self.sentence.editable = False
        self.sentence.editRequested.connect(self._on_edit)
        self.sentence.installEventFilter(self)
        area = QScrollArea()
        area.setWidgetResizable(True)
        area.setWidget(self.sentence)
        area.setMinimumHeight(120)
        lay.addWidget(area, 1)
        self.versions = QLabel()
        self.versions.setObjectName("adjudicationVersions")
        self.versions.setTextFormat(Qt.TextFormat.RichText)
        self.versions.setWordWrap(True)
        lay.addWidget(self.versions)
        buttons = QHBoxLayout()
        self.take_buttons = []
        for i, name in enumerate(self.adj.names):
            b = QPushButton(f"Take {name}  ({ascii_uppercase[i]})")
            b.setObjectName(f"adjudicationTake{name}")
            b.clicked.connect(lambda _=False, i=i: self.take(i))
            buttons.addWidget(b)
            self.take_buttons.append(b)
        self.edit_button = QPushButton("Edit  (E)")
        self.edit_button.clicked.connect(self.start_edit)
        self.skip_button = QPushButton("Skip  (S)")
        self.skip_button.clicked.connect(self.skip)
        self.save_button = QPushButton("Save merged…  (Ctrl+S)")
        self.save_button.setObjectName("adjudicationSave")
        self.save_button.clicked.connect(self.saveRequested)
        for b in (self.edit_button, self.skip_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.save_button)
        for b in (*self.take_buttons, self.edit_button, self.skip_button, self.save_button):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay the window's
        lay.addLayout(buttons)
        self.report = QPlainTextEdit()
        self.report.setObjectName("adjudicationReport")
        self.report.setReadOnly(True)
        self.report.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        lay.addWidget(self.report, 1)
        self._keys = []
        walk: dict[str, Callable[[], object]] = {
            **{ascii_uppercase[i]: self._taker(i) for i in range(len(self.adj.names))},
            "E": self.start_edit,
            "S": self.skip,
            "Space": self.skip,
            "N": lambda: self.step(1),
            "P": lambda: self.step(-1),
        }
        for key, fn in walk.items():
            sc = QShortcut(QKeySequence(key), self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.activated.connect(fn)
            self._keys.append(sc)
        save = QShortcut(QKeySequence.StandardKey.Save, self)
        save.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        save.activated.connect(self.saveRequested)
        self.show_current()

    confirm_close: Callable[[], bool] | None = (
        None  # a callable saying whether the window may close (decisions not saved)
    )

    def reject(self) -> None:  # Esc, the title bar's close button
        if self.editing:
            return
        if self.confirm_close is None or self.confirm_close():
            super().reject()

    def closeEvent(self, event) -> None:
        if self.isVisible() and self.confirm_close is not None and not self.confirm_close():
            event.ignore()
            return
        super().closeEvent(event)

    # -- what is shown --------------------------------------------------------------------
    def current(self) -> int | None:
        """The region shown (an index into ``adj.regions``), or None when there is none."""
        d = self.adj.disagreements
        return d[self.at] if 0 <= self.at < len(d) else None

    def show_current(self) -> None:
        adj, i = self.adj, self.current()
        summary = adj.summary()  # cheap at every key; the full report is saved with the merged file
        self.header.setText(
            "  ·  ".join(f"{n} = {p}" for n, p in zip(adj.names, adj.paths))
            + "\n"
            + summary.split("\n")[0]
        )
        self.report.setPlainText(summary)
        for b in (*self.take_buttons, self.edit_button, self.skip_button):
            b.setEnabled(i is not None and not self.editing)
        if i is None:
            self.where.setText(
                "No disagreement: every entity is agreed. Save the merged file (Ctrl+S)."
            )
            self.sentence.clear()
            self.versions.setText("")
            return
        r = adj.regions[i]
        d = adj.decisions.get(i)
        state = (
            "undecided"
            if d is None or d.kind == "skip"
            else "edited by hand"
            if d.kind == "edit"
            else f"took {adj.names[d.who]}"
        )
        left = len(adj.undecided())
        self.where.setText(
            f"Disagreement {self.at + 1} of {len(adj.disagreements)} · sentence {r.k + 1}"
            + (f" (line {adj.lines[r.k]})" if adj.lines[r.k] else "")
            + f" · this one: {state} · {left} of {len(adj.disagreements)} undecided"
            + (
                "  —  EDITING: type keys, Delete, Ctrl+arrows; Enter keeps, Esc drops"
                if self.editing
                else ""
            )
        )
        words = adj.words[r.k]
        second = list(adj.sentences[1][r.k].spans)
        self.sentence.set_sentence(
            words,
            adj.merged_spans(r.k),
            list(adj.sentences[0][r.k].spans),
            adj.names[0],
            second,
            adj.names[1],
        )
        self.sentence.select_tokens(r.start, r.end)
        rows = []
        for n, (name, v) in enumerate(zip(adj.names, r.versions)):
            file = os.path.basename(adj.paths[n] or "") or name
            rows.append(
                f"<b>{ascii_uppercase[n]}</b> ({html.escape(file)}): {html.escape(adj.region_text(r, v))}"
            )
        self.versions.setText("<br>".join(rows))

    def step(self, direction: int) -> None:
        if self.editing or not self.adj.disagreements:
            return
        self.at = max(0, min(len(self.adj.disagreements) - 1, self.at + direction))
        self.show_current()

    def advance(self) -> None:
        """To the next undecided disagreement after this one (else the next one)."""
        d, und = self.adj.disagreements, set(self.adj.undecided())
        later = [p for p in range(self.at + 1, len(d)) if d[p] in und] or [
            p for p in range(len(d)) if d[p] in und
        ]
        if later:
            self.at = later[0]
        self.show_current()

    # -- deciding -------------------------------------------------------------------------
    def _taker(self, who: int) -> Callable[[], None]:
        """The key that takes annotator ``who``'s version."""
        return lambda: self.take(who)

    def take(self, who: int) -> None:
        i = self.current()
        if i is not None and not self.editing and who < len(self.adj.names):
            self.takeRequested.emit(i, who)

    def skip(self) -> None:
        i = self.current()
        if i is not None and not self.editing:
            self.skipRequested.emit(i)

    def start_edit(self) -> None:
        i = self.current()
        if i is None or self.editing:
            return
        self.editing = True
        for sc in self._keys:
            sc.setEnabled(False)
        self.sentence.editable = True
        self.sentence.setFocus()
        self.show_current()

    def finish_edit(self, keep: bool) -> None:
        if not self.editing:
            return
        k = self.adj.regions[self.current()].k
        spans = self.sentence.gold()
        self.editing = False
        self.sentence.editable = False
        for sc in self._keys:
            sc.setEnabled(True)
        if keep:
            self.editDone.emit(k, spans)
        else:
            self.show_current()

    def _on_edit(self, spans: list, _text: str) -> None:
        if self.editing:
            self.sentence.set_gold(spans)

    def _command(self, name: str) -> None:
        """An annotation command on the sentence being edited (what cannot be done changes
        nothing)."""
        v = self.sentence
        try:
            edit = span_edits.command(name, v.gold(), v.selection_state())
        except span_edits.EditRefused:
            return
        if edit is not None:
            v.apply(edit)

    def eventFilter(self, obj, ev) -> bool:
        """While editing, the annotation keys run the annotation commands on the sentence."""
        if obj is not self.sentence or ev.type() != QEvent.Type.KeyPress:
            return False
        if not self.editing:
            if (
                ev.key() == Qt.Key.Key_Escape
            ):  # walking: Esc closes the window (asking first if not saved)
                self.reject()
                return True
            return False
        key, mods, v = ev.key(), ev.modifiers(), self.sentence
        ctrl, shift = (
            bool(mods & Qt.KeyboardModifier.ControlModifier),
            bool(mods & Qt.KeyboardModifier.ShiftModifier),
        )
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.finish_edit(True)
        elif key == Qt.Key.Key_Escape:
            self.finish_edit(False)
        elif key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self._command("clear")
        elif ctrl and key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            d = -1 if key == Qt.Key.Key_Left else 1
            self._command(("shrink_" if shift else "extend_") + ("left" if d < 0 else "right"))
        elif key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
            v.step_entity(-1 if shift or key == Qt.Key.Key_Backtab else 1)
        elif not ctrl and (label := self.scheme.type_for_key(ev.text())) is not None:
            edit = span_edits.type_selection(v.gold(), v.words(), v.selection_state(), label)
            if edit is not None:
                v.apply(edit)
        else:
            return False
        return True
