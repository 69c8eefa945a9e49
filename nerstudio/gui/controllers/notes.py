"""Guidelines, notes and flags in the window.

* **Annotate ▸ Add note…** (Ctrl+Shift+N) writes a free-text note on the shown sentence, **Toggle
  flag** (Ctrl+Shift+F) flags it or takes the flag away: undoable steps of the document
  (``Document.set_note`` / ``set_flag``), saved with the corpus (:mod:`nerstudio.app.review`).
  The shown sentence's flag and note appear under its header; the browser's "Flagged" and
  "Has a note" filters find them.
* **Guidelines**: the Markdown file beside the corpus (:func:`~nerstudio.app.guidelines.find_guidelines`)
  or one chosen with **Annotate ▸ Choose guidelines file…** (kept per corpus in the settings)
  is shown in the *Guidelines* tab beside the gold entities, reloaded when the file changes;
  the label descriptions it holds go into the tooltips of the legend's chips.
"""

from __future__ import annotations

import html
import json
import os

from PySide6.QtCore import QFileSystemWatcher, QObject, Qt, QTimer, QUrl, Slot
from PySide6.QtWidgets import (
    QInputDialog,
    QLabel,
    QPlainTextEdit,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ...app.document import Change, ChangeKind
from ...app.guidelines import find_guidelines, label_descriptions, read_guidelines
from ..actions import build_action
from ..menu_rows import ROWS
from . import Context

NOTE_KEY = str(ROWS["notes.act_note"].keys[0])  # the rows' keys, named for the tests
FLAG_KEY = str(ROWS["notes.act_flag"].keys[0])
CHOSEN_KEY = "guidelines/chosen"  # settings: JSON object, corpus path → guidelines file
GUIDELINES_FILTER = "Markdown (*.md *.markdown *.txt);;All files (*)"
NO_GUIDELINES = (
    "No guidelines file. Put a Markdown file named <b>guidelines.md</b> (or <b>NAME.guidelines.md</b> "
    "for a corpus NAME.EXT) beside the corpus, or choose one with Annotate ▸ Choose guidelines file…. "
    "A heading <tt>## PER</tt> or a list item <tt>- PER: description</tt> gives the label's "
    "description, shown in the legend's tooltips."
)


class GuidelinesPanel(QWidget):
    """The guidelines file's name and its text rendered from Markdown."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("guidelinesPanel")
        self.label = QLabel(NO_GUIDELINES)
        self.label.setObjectName("guidelinesPath")
        self.label.setWordWrap(True)
        self.browser = QTextBrowser()
        self.browser.setObjectName("guidelinesBrowser")
        self.browser.setOpenExternalLinks(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.label)
        lay.addWidget(self.browser, 1)


class NotesController(QObject):
    def __init__(self, ctx: Context, views, parent_widget):
        super().__init__(parent_widget)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        w = parent_widget
        self.act_note = build_action(w, "notes.act_note", self)
        self.act_flag = build_action(w, "notes.act_flag", self)
        self.act_choose = build_action(w, "notes.act_choose", self)
        self.ask_note = self._ask_note  # replaced in tests
        self.note_line = QLabel()
        self.note_line.setObjectName("sentenceNote")
        self.note_line.setWordWrap(True)
        self.note_line.setTextFormat(Qt.TextFormat.RichText)
        self.note_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note_line.hide()
        views.sentence_panel.layout().insertWidget(1, self.note_line)  # under the sentence's header
        self.panel = GuidelinesPanel()
        views.annotate_tabs.addTab(self.panel, "Guidelines")
        self.path: str | None = None  # the guidelines file shown
        self.descriptions: dict[str, str] = {}
        self._found_for: str | None = None  # the corpus path the guidelines were looked for
        self._reload_soon = QTimer(self)  # an editor's save is several events
        self._reload_soon.setSingleShot(True)
        self._reload_soon.setInterval(200)
        self._reload_soon.timeout.connect(self._on_disk_change)
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(lambda _p: self._reload_soon.start())
        self.watcher.directoryChanged.connect(lambda _p: self._reload_soon.start())
        ctx.events.changed.connect(self._on_change)
        ctx.cursor.moved.connect(lambda _k: self._show_current())
        self._update()

    # -- notes and flags ------------------------------------------------------------------
    def _current(self) -> int:
        k = self.ctx.cursor.k
        return k if self.doc.corpus is not None and 0 <= k < len(self.doc.corpus) else -1

    def _ask_note(self, k: int, text: str) -> str | None:
        parent = self.parent()  # the window
        dlg = QInputDialog(parent if isinstance(parent, QWidget) else None)
        dlg.setObjectName("noteDialog")
        dlg.setWindowTitle("Note on the sentence")
        dlg.setLabelText(f"Note on sentence {k + 1} (empty: no note). Tab moves to OK:")
        dlg.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        dlg.setTextValue(text)
        edit = dlg.findChild(QPlainTextEdit)
        if edit is not None:  # lines wrap; Tab leaves the text for the buttons (keyboard only)
            edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
            edit.setTabChangesFocus(True)
        dlg.resize(520, 260)
        return dlg.textValue() if dlg.exec() else None

    def edit_note(self) -> bool:
        """Annotate ▸ Add note…: ask for the shown sentence's note; returns whether it changed."""
        k = self._current()
        if k < 0:
            return False
        text = self.ask_note(k, self.doc.notes.get(k, ""))
        if text is None or not self.doc.set_note(k, text):
            return False
        self.ctx.status(
            f"Note on sentence {k + 1} " + ("saved with the corpus" if text.strip() else "removed"),
            3000,
        )
        return True

    def toggle_flag(self) -> bool:
        """Annotate ▸ Toggle flag on the shown sentence; returns its new state."""
        k = self._current()
        if k < 0:
            return False
        value = not bool(self.doc.flagged[k])
        self.doc.set_flag(k, value)
        self.ctx.status(f"Sentence {k + 1} " + ("flagged" if value else "no longer flagged"), 3000)
        return value

    def note_text(self, k: int) -> str:
        """What the line under the header says of sentence ``k`` (plain text; empty: nothing)."""
        parts = []
        if self.doc.corpus is not None and 0 <= k < len(self.doc.flagged) and self.doc.flagged[k]:
            parts.append("⚑ Flagged")
        note = self.doc.notes.get(k)
        if note:
            parts.append(f"Note: {note}")
        return " · ".join(parts)

    def _show_current(self) -> None:
        k = self._current()
        text = self.note_text(k) if k >= 0 else ""
        self.note_line.setText(html.escape(text, quote=False).replace("\n", "<br>"))
        self.note_line.setToolTip("Annotate ▸ Add note… (Ctrl+Shift+N) edits it" if text else "")
        self.note_line.setVisible(bool(text))
        self.act_flag.setChecked(k >= 0 and bool(self.doc.flagged[k]))

    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self.find()
            self._update()
        elif ch.kind in (
            ChangeKind.GOLD,
            ChangeKind.SAVED,
        ):  # the legend's chips may be new (a new type)
            self._describe_legend()
            if (
                ch.kind is ChangeKind.SAVED
                and self.doc.corpus is not None
                and self.doc.corpus.path != self._found_for
            ):
                self.find()  # saved as another file: its folder's guidelines
        elif ch.kind is ChangeKind.MARKS:
            if ch.origin.by_user and ch.sentences and self.ctx.cursor.k not in ch.sentences:
                self.ctx.cursor.go(ch.sentences[0])  # an undo elsewhere goes back there
            self._show_current()

    def _update(self) -> None:
        has = self.doc.corpus is not None
        for a in (self.act_note, self.act_flag, self.act_choose):
            a.setEnabled(has)
        self._show_current()

    # -- guidelines -----------------------------------------------------------------------
    def _chosen_map(self) -> dict:
        try:
            raw = self.ctx.settings.value(CHOSEN_KEY, "{}")
            m = json.loads(raw if isinstance(raw, str) and raw else "{}")
        except ValueError:
            return {}
        return m if isinstance(m, dict) else {}

    def _corpus_key(self) -> str:
        c = self.doc.corpus
        return os.path.realpath(c.path) if c is not None and c.path else ""

    def find(self) -> str | None:
        """Look for the open corpus's guidelines and show them (or say there are none)."""
        key = self._corpus_key()
        chosen = self._chosen_map().get(key) if key else None
        corpus_path = self.doc.corpus.path if self.doc.corpus is not None else None
        self._found_for = corpus_path
        self.show_file(find_guidelines(corpus_path, chosen))
        if self.path is None and corpus_path:  # a guidelines file created later appears
            folder = os.path.dirname(os.path.abspath(corpus_path))
            self.watcher.addPath(folder)
        return self.path

    def _on_disk_change(self) -> None:
        if self.path is None or not os.path.exists(self.path):
            if self.doc.corpus is not None:
                self.find()  # none yet, or the file went: look again
        else:
            self.reload()

    def choose_dialog(self) -> None:
        path = self.ctx.dialogs.ask_open("Choose guidelines file", GUIDELINES_FILTER, "guidelines")
        if path:
            self.choose(path)

    def choose(self, path: str) -> None:
        """Show ``path`` as the open corpus's guidelines from now on (kept in the settings)."""
        key = self._corpus_key()
        if key:
            m = self._chosen_map()
            m[key] = os.path.abspath(path)
            self.ctx.settings.setValue(CHOSEN_KEY, json.dumps(m))
        self.show_file(os.path.abspath(path))

    def show_file(self, path: str | None) -> None:
        """Show the guidelines file ``path`` (None: none) and watch it."""
        old = self.watcher.files() + self.watcher.directories()
        if old:
            self.watcher.removePaths(old)
        self.path = path = os.path.abspath(path) if path else None
        if path:
            self.watcher.addPath(path)
            self.watcher.addPath(os.path.dirname(path) or ".")  # an editor may replace the file
        self.reload()

    @Slot()
    def reload(self) -> None:
        """Read the shown guidelines file again (it changed on disk)."""
        path = self.path
        text = None
        if path:
            if path not in self.watcher.files() and os.path.isfile(path):
                self.watcher.addPath(path)  # replaced by an editor: watch the new file
            try:
                text = read_guidelines(path)
            except (OSError, ValueError) as exc:
                self.panel.label.setText(f"Guidelines not read: {html.escape(str(exc))}")
                self.panel.browser.clear()
        if text is not None and path:
            name, folder = html.escape(os.path.basename(path)), html.escape(os.path.dirname(path))
            self.panel.label.setText(f"<b>{name}</b> · {folder} · reloaded when the file changes")
            self.panel.label.setToolTip(path)
            self.panel.browser.setSearchPaths([os.path.dirname(path)])
            self.panel.browser.document().setBaseUrl(QUrl.fromLocalFile(path))
            bar = self.panel.browser.verticalScrollBar()
            at = bar.value()
            self.panel.browser.setMarkdown(text)
            bar.setValue(at)  # a reload keeps the reader's place
        elif not path:
            self.panel.label.setText(NO_GUIDELINES)
            self.panel.label.setToolTip("")
            self.panel.browser.clear()
        self.descriptions = label_descriptions(text) if text is not None else {}
        self._describe_legend()

    def _describe_legend(self) -> None:
        """Put each label's description from the guidelines in its legend chip's tooltip."""
        for lab, chip in self.v.legend.chips.items():
            base = chip.property("baseToolTip")
            if base is None:
                base = chip.toolTip()
                chip.setProperty("baseToolTip", base)
            desc = self.descriptions.get(lab)
            chip.setToolTip(
                f"<qt>{html.escape(base)}<br><b>{html.escape(lab)}</b>: {html.escape(desc)}</qt>"
                if desc
                else base
            )
