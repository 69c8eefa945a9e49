"""Annotation: gold edits, undo and redo, accepting a candidate, saving, autosave and recovery.

Every annotation command is one QAction here (label as each of the corpus's types, clear,
extend / shrink, split, merge, accept, undo / redo), shared by the Edit menu, the sentence view's
right-click menu, the legend chips and the keys; each is enabled from what the sentence view's
selection allows. The edit keys work with the focus in the sentence view *or* in the corpus
browser (an event filter on both routes a key to its action; the browser's type-ahead search is
switched off so a letter never jumps the list), and nowhere else: typing in the search box or any
text field types text. The type keys and colours come from the corpus's own types
(:func:`nerstudio.app.types.document_types`, in the fixed order of their set). Next / previous
entity (Tab / Shift+Tab) and token (Left / Right) are actions too, so they work from the browser
and the N-best table as well; when a corpus opens, the sentence view takes the focus so the first key reaches it.

Saving, the checks of the file on disk, its lock and the recovery offers are the file owner's
(:mod:`.file_owner`, over the Qt-free :mod:`nerstudio.app.saving`); this controller keeps the
actions and the autosave timer.

Edits from the sentence view (keys and mouse) and "accept candidate as gold" become
:meth:`Document.set_spans <nerstudio.app.document.Document.set_spans>` calls — one undoable step
each, in the document's own history, which the Undo / Redo actions drive. An
:class:`~nerstudio.app.autosave.Autosaver` keeps the recovery file in step (a single-shot timer
armed at its deadline: a few seconds after the last edit, at most ``max delay`` after the first
one not yet written), and removes it whenever the document is clean. After a crash, the edits
that differ from the file are offered back (each recovery file of a window that is gone) as one
undoable step, and the window goes to the first recovered sentence.
"""

from __future__ import annotations

import os
import time

from PySide6.QtCore import QEvent, QKeyCombination, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QLineEdit,
    QMenu,
    QMenuBar,
    QPlainTextEdit,
    QTextEdit,
)

from ...app import span_edits
from ...app.autosave import DEBOUNCE_S, MAX_DELAY_S, AutosavePolicy, Autosaver
from ...app.document import Change, ChangeKind
from ...app.types import TypeScheme, document_types
from ..actions import build_action
from ..views.annotation_view import CARET_KEYS, NAV_COMMANDS
from ..views.palette import type_icon
from . import Context
from .file_owner import FileOwner

# the edit commands other than "label as <type>" (nerstudio.app.span_edits.COMMANDS): name, menu
# text, keys, and what to say when the key is pressed while the command cannot apply
EDIT_COMMANDS = (
    (
        "clear",
        "&Clear entities in the selection",
        ("Delete", "Backspace"),
        "No entity under the selection",
    ),
    (
        "extend_left",
        "Extend entity to the &left",
        ("Ctrl+Left",),
        "Put the caret on an entity that does not start the sentence",
    ),
    (
        "extend_right",
        "Extend entity to the &right",
        ("Ctrl+Right",),
        "Put the caret on an entity that does not end the sentence",
    ),
    (
        "shrink_left",
        "Shrink entity (end moves left)",
        ("Ctrl+Shift+Left",),
        "Put the caret on an entity first",
    ),
    (
        "shrink_right",
        "Shrink entity (start moves right)",
        ("Ctrl+Shift+Right",),
        "Put the caret on an entity first",
    ),
    (
        "split",
        "S&plit entity before the caret",
        ("/",),
        "Put the caret inside an entity, after its first token",
    ),
    (
        "merge",
        "&Merge with the adjacent entity",
        ("+", "="),
        span_edits.NOTHING_TO_MERGE,
    ),
)


def default_recovery_dir(settings=None) -> str:
    val = settings.value("annotation/recoveryDir") if settings is not None else None
    if val:
        return str(val)
    env = os.environ.get("NERSTUDIO_RECOVERY_DIR")
    if env:
        return env
    from ..paths import recovery_dir

    return recovery_dir()


def _seconds(settings, key: str, default: float) -> float:
    val = settings.value(key) if settings is not None else None
    return int(val) / 1000 if val not in (None, "") else default


class AnnotationController(QObject):
    dirtyChanged = Signal(bool)
    autosaved = Signal(str)  # the recovery file just written

    def __init__(self, ctx: Context, views, parent_widget):
        super().__init__(parent_widget)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        policy = AutosavePolicy(
            _seconds(ctx.settings, "annotation/autosaveMs", DEBOUNCE_S),
            _seconds(ctx.settings, "annotation/autosaveMaxMs", MAX_DELAY_S),
        )
        self.autosaver = Autosaver(
            self.doc, default_recovery_dir(ctx.settings), policy, queue=ctx.suspects
        )
        self.autosaver.scheduled = self._arm
        self.owner = FileOwner(ctx, self.autosaver, views.status, self)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self._on_timer)
        views.sentence_view.editRequested.connect(self._on_edit_requested)
        views.sentence_view.editRefused.connect(lambda msg: ctx.status(msg, 6000))
        ctx.events.changed.connect(self._on_change)
        w = self._window = parent_widget
        self.act_undo = build_action(w, "annotation.act_undo", self)
        self.act_redo = build_action(w, "annotation.act_redo", self)
        self.act_accept = build_action(w, "annotation.act_accept", self)
        self.act_save = build_action(w, "annotation.act_save", self)
        self.act_save_as = build_action(w, "annotation.act_save_as", self)
        self._build_edit_actions()
        views.sentence_view.selectionChanged.connect(lambda *_: self._update_enabled())
        views.sentence_view.contextMenuWanted.connect(lambda pos: self.context_menu().exec(pos))
        views.legend.typeClicked.connect(self.label_selection)
        self._keys = _KeyRouter(self)
        for widget in (views.sentence_view, views.corpus_view):
            widget.installEventFilter(self._keys)
        views.corpus_view.setProperty("annotationKeys", True)
        views.nbest_view.installEventFilter(self._keys)  # the moving keys only (issue 23)
        views.nbest_view.setProperty("navigationKeysOnly", True)
        self._update_actions()
        self._set_scheme(document_types(self.doc))

    # -- the annotation actions -----------------------------------------------------------
    def _build_edit_actions(self) -> None:
        self.type_actions: dict[str, QAction] = {}
        self.edit_actions: dict[str, QAction] = {}
        self._menus: list[QMenu] = []
        self.scheme: TypeScheme | None = None
        view = self.v.sentence_view
        for name, text, keys, _why in EDIT_COMMANDS:
            a = QAction(text, self._window)
            a.setShortcuts([QKeySequence(k) for k in keys])
            # keys reach it through _KeyRouter only
            a.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            a.setStatusTip(text.replace("&", ""))
            a.triggered.connect(lambda _=False, name=name: self.run_command(name))
            self.edit_actions[name] = a
        self.nav_actions: dict[str, QAction] = {}  # next / previous entity and token (issue 23)
        for name, text, keys, call in NAV_COMMANDS:
            a = self.nav_actions[name] = QAction(text, self._window)
            a.setShortcuts([QKeySequence(k) for k in keys])
            a.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            a.triggered.connect(lambda _=False, call=call: call(view))

    def _set_scheme(self, scheme: TypeScheme) -> None:
        """The corpus's types changed (a corpus opened, a new type appeared): new type actions."""
        if scheme == self.scheme:
            return
        self.scheme = scheme
        for a in self.type_actions.values():
            a.deleteLater()
        self.type_actions = {}
        for lab in scheme.labels:
            name = lab or "entity"
            a = QAction(f"Label as {name.replace('&', '&&')}", self._window)
            a.setShortcuts([QKeySequence(k) for k in (scheme.letter(lab), scheme.digit(lab)) if k])
            a.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            a.setIcon(type_icon(lab, scheme))
            a.setStatusTip(
                f"Set the type of the selected tokens (or of the entity under the caret) to {name}"
            )
            a.triggered.connect(lambda _=False, lab=lab: self.type_selection(lab))
            self.type_actions[lab] = a
        self.v.sentence_view.set_scheme(scheme)
        self.v.legend.set_scheme(scheme)
        self.v.sentence_view.setToolTip(
            "Boxes: gold entities · bars: the selected candidate(s) · red: they differ.\n"
            "Click or drag over tokens (Shift+arrows) to select; "
            + ", ".join(
                f"{scheme.letter(lab)} {lab or 'entity'}"
                for lab in scheme.labels
                if scheme.letter(lab)
            )
            + " (or 1–9) set the type, Delete clears, Ctrl(+Shift)+arrows extend (shrink), / splits, + merges; "
            "right-click for the menu. The keys also work from the corpus browser."
        )
        self._keys_table: dict[int, QAction] | None = None
        for m in self._menus:
            self.fill_menu(m)
        self._update_enabled()

    def annotation_actions(self) -> list[QAction | None]:
        """Every annotation command in menu order (None: a separator)."""
        e = self.edit_actions
        return [
            self.act_undo,
            self.act_redo,
            None,
            *self.type_actions.values(),
            None,
            e["clear"],
            None,
            e["extend_left"],
            e["extend_right"],
            e["shrink_left"],
            e["shrink_right"],
            e["split"],
            e["merge"],
            None,
            self.act_accept,
        ]

    def fill_menu(self, menu: QMenu) -> QMenu:
        menu.clear()
        for a in self.annotation_actions():
            menu.addAction(a) if a is not None else menu.addSeparator()
        return menu

    def fill_edit_menu(self, menu: QMenu) -> None:
        """Fill the window's Edit menu (and refill it when the corpus's types change)."""
        self._menus.append(menu)
        self.fill_menu(menu)

    def context_menu(self) -> QMenu:
        """The sentence view's right-click menu: the Edit menu's actions."""
        menu = QMenu(self.v.sentence_view)
        menu.setObjectName("annotationContextMenu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        return self.fill_menu(menu)

    def guard_menus(self, menubar: QMenuBar) -> None:
        """Keep the annotation keys out of the window's open menus: a letter typed in an open menu
        is the menu's (a mnemonic), never a label for the tokens behind it. Qt would otherwise
        fire the label actions' shortcuts from a popup that does not claim the key (found with
        xdotool under openbox: Alt+A then L labelled the selected token LOC)."""
        for a in menubar.actions():
            menu = a.menu()
            if isinstance(menu, QMenu):
                menu.installEventFilter(self._keys)

    def key_table(self) -> dict[int, QAction]:
        """Key combination (as an int) → the action it triggers in the sentence view / browser."""
        if self._keys_table is None:
            table: dict[int, QAction] = {}
            for a in [
                *self.type_actions.values(),
                *self.edit_actions.values(),
                *self.nav_actions.values(),
            ]:
                for seq in a.shortcuts():
                    table[seq[0].toCombined()] = a  # type: ignore[index]  # QKeySequence[i]: Qt's operator[]
            self._keys_table = table
        return self._keys_table

    def shortcut_rows(self) -> list[tuple[str, str]]:
        """(keys, what they do) for the help: the annotation actions, then the caret keys."""
        rows = []
        for a in self.annotation_actions():
            if a is not None and a.shortcuts():
                keys = ", ".join(
                    s.toString(QKeySequence.SequenceFormat.NativeText) for s in a.shortcuts()
                )
                rows.append(
                    (keys, a.text().replace("&&", "\0").replace("&", "").replace("\0", "&"))
                )
        rows += [
            (a.shortcut().toString(QKeySequence.SequenceFormat.NativeText), a.text())
            for a in self.nav_actions.values()
        ]
        return rows + list(CARET_KEYS)

    def run_command(self, name: str) -> None:
        """The annotation command ``name`` on the sentence view's selection (an Edit action)."""
        view = self.v.sentence_view
        try:
            edit = span_edits.command(name, view.gold(), view.selection_state())
        except span_edits.EditRefused as exc:
            self.ctx.status(str(exc), 6000)
            return
        if edit is not None:
            view.apply(edit)

    def type_selection(self, label: str) -> None:
        """Type the sentence view's selection ``label`` (a type action)."""
        view = self.v.sentence_view
        edit = span_edits.type_selection(view.gold(), view.words(), view.selection_state(), label)
        if edit is not None:
            view.apply(edit)

    def label_selection(self, label: str) -> None:
        """Set ``label`` on the sentence view's selection (a legend chip)."""
        a = self.type_actions.get(label)
        if a is not None and a.isEnabled():
            a.trigger()
        elif a is not None:
            self.ctx.status("Select tokens in the sentence view first", 4000)

    def why_disabled(self, action: QAction) -> str:
        if self.ctx.cursor.k < 0 or not self.v.sentence_view.words():
            return "No sentence shown: open a corpus and pick a sentence"
        for name, _text, _keys, why in EDIT_COMMANDS:
            if self.edit_actions[name] is action:
                return why
        return "Select tokens in the sentence view first"

    def _update_enabled(self) -> None:
        view = self.v.sentence_view
        can = span_edits.available(view.gold(), view.selection_state())
        for a in self.type_actions.values():
            a.setEnabled(can["type"])
        for name, a in self.edit_actions.items():
            a.setEnabled(can[name])
        for a in self.nav_actions.values():
            a.setEnabled(bool(self.v.sentence_view.words()))

    # -- the document ---------------------------------------------------------------------
    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind not in (
            ChangeKind.GOLD,
            ChangeKind.SAVED,
            ChangeKind.CORPUS,
            ChangeKind.REVIEW,
            ChangeKind.MARKS,
        ):  # all undoable or saved
            return
        if ch.kind in (ChangeKind.GOLD, ChangeKind.CORPUS):
            self._set_scheme(document_types(self.doc))
            self._update_enabled()
        if (
            ch.kind is ChangeKind.CORPUS
        ):  # the first key after opening a file goes to the sentence (issue 23)
            QTimer.singleShot(0, self.focus_sentence_view)
        if (
            ch.kind is ChangeKind.GOLD
            and ch.origin.by_user
            and ch.sentences
            and self.ctx.cursor.k not in ch.sentences
        ):  # undo / redo of an edit elsewhere goes back there; the application's edits (a model
            # in the loop, a job, a reload) never move the view
            self.ctx.cursor.go(ch.sentences[0])
        self._update_actions()
        self.dirtyChanged.emit(self.doc.is_dirty())

    def _update_actions(self) -> None:
        h = self.doc.history
        self.act_undo.setEnabled(h.can_undo())
        self.act_redo.setEnabled(h.can_redo())
        # fixed texts (a toolbar button must not grow with the edit's name); what is undone
        # goes to the tooltip and the status tip
        for a, verb, what in (
            (self.act_undo, "Undo", h.undo_text()),
            (self.act_redo, "Redo", h.redo_text()),
        ):
            tip = f"{verb} {what}".strip()
            a.setToolTip(f"{tip} ({a.shortcut().toString()})")
            a.setStatusTip(tip)

    # -- edits ----------------------------------------------------------------------------
    @Slot(list, str)
    def _on_edit_requested(self, spans: list, text: str) -> None:
        if self.ctx.cursor.k >= 0:
            self.doc.set_spans(self.ctx.cursor.k, spans, text)

    def focus_sentence_view(self) -> None:
        """Focus the sentence view, unless the user is typing in a text field."""
        if not isinstance(
            QApplication.focusWidget(), (QLineEdit, QAbstractSpinBox, QTextEdit, QPlainTextEdit)
        ):
            self.v.sentence_view.setFocus(Qt.FocusReason.OtherFocusReason)

    def undo(self) -> None:
        self.doc.undo()

    def redo(self) -> None:
        self.doc.redo()

    def accept_candidate(self, j: int | None = None) -> bool:
        """Make candidate ``j`` (default: the selected one) the gold of the current sentence."""
        k = self.ctx.cursor.k
        i, nb = self.doc.nbest_row(k), self.doc.nbest
        if k < 0 or i < 0 or nb is None:
            self.ctx.status("No candidates for this sentence", 4000)
            return False
        if j is None:
            sel = self.v.nbest_panel.selected()
            j = sel[0] if sel else None
        if j is None:
            self.ctx.status("Select a candidate in the N-best table first", 4000)
            return False
        if self.doc.set_spans(k, nb.spans(i, j), f"accept candidate {j + 1} as gold") is None:
            self.ctx.status(f"Candidate {j + 1} already equals the gold", 4000)
            return False
        return True

    # -- saving (the file's owner: app.saving, asked through the dialogs) ------------------
    def save_corpus(
        self, path: str | None = None, overwrite: bool = False, wait: bool = False
    ) -> bool:
        return self.owner.save(path, overwrite, wait)

    def save_corpus_as_dialog(self) -> bool:
        return self.owner.save_as()

    def confirm_unsaved(self) -> bool:
        """True when the corpus may be closed (nothing unsaved, saved, or edits discarded)."""
        self.owner.wait_save()  # a background save finishes first
        if not self.doc.is_dirty():
            return True
        if (
            self.owner.reloading
        ):  # the user chose Reload: the edits go (asked once, for this reload)
            self.owner.reloading = False
            return True
        choice = self.ctx.dialogs.ask_unsaved()
        if choice == "save":
            return self.save_corpus(wait=True)
        if choice == "discard":
            self.autosaver.discard()
            return True
        return False

    # -- autosave and recovery ------------------------------------------------------------
    def _arm(self, deadline: float | None) -> None:
        if deadline is None:
            self.timer.stop()
        else:
            self.timer.start(max(0, int((deadline - time.monotonic()) * 1000)))

    @Slot()
    def _on_timer(self) -> None:
        path = self.autosaver.poll()
        if path:
            self.owner.note_disk()
        if path:
            self.autosaved.emit(path)
        else:
            self._arm(self.autosaver.deadline())

    def autosave_now(self) -> str | None:
        """Write the recovery file now (what the timer does when it is due)."""
        path = self.autosaver.write()
        self._arm(None)
        if path:
            self.autosaved.emit(path)
        return path

    def recovery_file(self) -> str | None:
        return self.autosaver.recovery_file()

    def offer_recovery(self) -> list[int]:
        """After a corpus opens: offer back the edits of the recovery files of instances that
        are gone (a crash, ``kill -9``) that change it."""
        return self.owner.offer_recovery()

    def close(self) -> None:
        """The window closes (its edits saved or discarded): the lock goes, the instance ends."""
        self.timer.stop()
        self.owner.close()


class _KeyRouter(QObject):
    """Routes the edit keys pressed in the sentence view or the corpus browser to their actions,
    and keeps plain typing in the browser from jumping the list (QTreeView's type-ahead)."""

    def __init__(self, controller: AnnotationController):
        super().__init__(controller)
        self.c = controller

    @staticmethod
    def combination(ev) -> int:
        mods = ev.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        # Shift+Tab arrives as Backtab
        key = ev.key() if ev.key() != Qt.Key.Key_Backtab else Qt.Key.Key_Tab
        if key < 0x01000000 and not (Qt.Key.Key_A <= key <= Qt.Key.Key_Z):
            mods &= ~Qt.KeyboardModifier.ShiftModifier  # "+", "/" … need Shift on many layouts
        return QKeyCombination(mods, Qt.Key(key)).toCombined()

    def eventFilter(self, obj, ev) -> bool:
        t = ev.type()
        if t not in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride):
            return False
        if isinstance(obj, QMenu):  # an open menu of the window (guard_menus)
            if t == QEvent.Type.ShortcutOverride and self.c.key_table().get(self.combination(ev)):
                ev.accept()  # the menu takes the key as a key press: no label shortcut fires
            return False
        if (
            QApplication.activePopupWidget() is not None
            or QApplication.activeModalWidget() is not None
        ):
            return (
                False  # a menu or a dialog is open: its mnemonics and keys are not annotation keys
            )
        act = self.c.key_table().get(self.combination(ev))
        if (
            act is not None
            and obj.property("navigationKeysOnly")
            and act not in self.c.nav_actions.values()
        ):
            return False  # the N-best table: only next / previous entity and token are ours
        if (
            act is not None
            and ev.key() in (Qt.Key.Key_Left, Qt.Key.Key_Right)
            and obj is self.c.v.corpus_view
            and obj.model().hasChildren(obj.currentIndex())
        ):
            return False  # on a document of the browser, Left / Right fold and unfold it
        if act is None:
            plain = not (
                ev.modifiers()
                & (
                    Qt.KeyboardModifier.ControlModifier
                    | Qt.KeyboardModifier.AltModifier
                    | Qt.KeyboardModifier.MetaModifier
                )
            )
            typed = ev.text()
            if (
                t == QEvent.Type.KeyPress
                and obj.property("annotationKeys")
                and plain
                and typed.strip()
                and typed.isprintable()
            ):
                self.c.ctx.status(
                    f"“{typed}” is not an annotation key (Help ▸ Keyboard shortcuts lists them; "
                    "Ctrl+F searches the sentences)",
                    5000,
                )
                return True
            return False
        if t == QEvent.Type.ShortcutOverride:
            ev.accept()  # ours, even if a window shortcut has the same key
            return True
        if act.isEnabled():
            act.trigger()
        else:
            self.c.ctx.status(self.c.why_disabled(act), 5000)
        return True
