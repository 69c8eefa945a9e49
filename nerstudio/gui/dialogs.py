"""Every question the application asks and every message box it shows, in one place.

Controllers ask through a :class:`Dialogs` object instead of opening boxes themselves, so tests
(and benchmarks) replace one method — ``ask_unsaved``, ``ask_recover``, ``ask_disk_changed``, ``ask_open`` … — to
answer without a blocking dialog. File dialogs remember their folder per kind of file.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QDialog,
    QFileDialog,
    QInputDialog,
    QMessageBox,
    QPushButton,
)

from .. import logs
from ..corpus.file_kinds import all_extensions, file_kinds, format_names


def _patterns(extensions) -> str:
    return " ".join(f"*{e}" for e in extensions)


def corpus_filter() -> str:
    """The Open dialog's filter: every corpus extension, then each kind of corpus file, from the
    format tables (:mod:`nerstudio.corpus.file_kinds`)."""
    kinds = [f"{label} ({_patterns(exts)})" for label, exts in file_kinds()]
    return ";;".join([f"Corpora ({_patterns(all_extensions())})", *kinds, "All files (*)"])


def corpus_formats_in_words() -> str:
    """Every format the readers take, in words, for a tooltip: ``CoNLL columns, TSV, … or plain
    text``."""
    names = format_names()
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


CORPUS_FILTER = corpus_filter()
NBEST_FILTER = "N-best lists (*.npz);;All files (*)"
MODEL_FILTER = "Models (*.npz);;All files (*)"
ENCODINGS = (
    ("Latin-1", "latin-1"),
    ("Windows-1252", "cp1252"),
    ("UTF-16", "utf-16"),
    ("ISO-8859-15", "iso-8859-15"),
    ("Windows-1250", "cp1250"),
    ("GB18030", "gb18030"),
    ("Shift JIS", "shift_jis"),
    ("UTF-8", "utf-8"),
)


class Dialogs:
    def __init__(self, parent, settings, near=lambda: ""):
        self.parent = parent
        self.settings = settings
        self.near = near  # the open corpus's folder ("" without one): where files start
        #: set for a window nobody watches (a picture taken with --screenshot): unsaved work is
        #: discarded without asking, since no one could answer
        self.unattended = False

    # -- files ----------------------------------------------------------------------------
    def start_dir(self, key: str) -> str:
        """Where an Open dialog for files of kind ``key`` starts: where the last one of that
        kind came from, else the open corpus's folder (its lists and models are usually
        beside it), else the last folder opened, else the home folder; never the folder
        nerstudio happened to be started from."""
        for where in (
            self.settings.value(f"files/{key}Dir", ""),
            self.near(),
            self.settings.value("files/lastDir", ""),
        ):
            if where and os.path.isdir(str(where)):
                return str(where)
        return os.path.expanduser("~")

    def ask_open(self, title: str, filt: str, key: str) -> str | None:
        start = self.start_dir(key)
        path, _ = QFileDialog.getOpenFileName(self.parent, title, start, filt)
        if path:
            self.settings.setValue(f"files/{key}Dir", os.path.dirname(path))
        return path or None

    def ask_save(self, title: str, default: str, filt: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self.parent, title, default, filt)
        return path or None

    def ask_folder(self, title: str) -> str | None:
        d = QFileDialog.getExistingDirectory(
            self.parent, title, self.settings.value("files/resultsDir", "")
        )
        if d:
            self.settings.setValue("files/resultsDir", d)
        return d or None

    def ask_corpus_folder(self) -> str | None:
        """A folder of brat pairs to open as one corpus."""
        start = self.settings.value("files/lastDir", "")
        d = QFileDialog.getExistingDirectory(self.parent, "Open a folder of brat pairs", start)
        if d:
            self.settings.setValue("files/lastDir", os.path.dirname(d))
        return d or None

    def ask_model_folder(self, start: str) -> str | None:
        """A model folder (a tagger, and optionally a reranker) to pre-annotate with."""
        d = QFileDialog.getExistingDirectory(
            self.parent, "Pre-annotate with the model in folder", start
        )
        return d or None

    # -- questions ------------------------------------------------------------------------
    def ask_unsaved(self) -> str:
        """What to do with unsaved edits: 'save', 'discard' or 'cancel'."""
        return self._save_discard_cancel(
            "Unsaved annotations",
            "The corpus has edits that are not saved.",
            "Save them before closing?",
        )

    def ask_recover(self, path: str, summary: str = "") -> bool | None:
        """Offer back the edits a recovery file kept (``summary``: "3 sentences of eng.testb
        edited 4 minutes ago …"): True recovers them, False discards the file, None keeps it
        for the next time."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Recover unsaved annotations",
            f"Unsaved edits were kept from a window that did not close normally: {summary or path}.",
            parent=self.parent,
        )
        box.setInformativeText(
            "Recover them? They become one edit (Ctrl+Z undoes it); save to keep them."
        )
        box.setDetailedText(f"Recovery file: {path}")
        yes = box.addButton("Recover", QMessageBox.ButtonRole.AcceptRole)
        no = box.addButton("Discard them", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton("Ask me later", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(yes)
        box.exec()
        answers: dict[QAbstractButton, bool] = {yes: True, no: False}
        return answers.get(box.clickedButton())

    def ask_disk_changed(
        self,
        path: str,
        status: str,
        edits: int,
        keep_both: str,
        can_keep_both: bool,
        when: str = "",
        can_overwrite: bool = True,
    ) -> str:
        """The corpus file changed on disk (``status`` ``changed``) or is gone (``missing``)
        since it was read or saved here: 'reload', 'keep_both', 'overwrite', 'save_as' or
        'cancel'. ``edits``: sentences with unsaved edits here; ``keep_both``: what Keep both
        would do (or why it cannot); ``can_overwrite`` False: another window holds the file."""
        name = os.path.basename(path)
        box = QMessageBox(QMessageBox.Icon.Warning, "File changed on disk", "", parent=self.parent)
        box.setObjectName("diskChangedBox")
        buttons: dict[QPushButton, str] = {}
        if status == "missing":
            box.setWindowTitle("File deleted or moved")
            box.setText(f"<b>{name}</b> was deleted or moved by another program.")
            box.setInformativeText(
                f"It was in {os.path.dirname(path)}. Save writes this window's version there again; "
                "Save as… puts it elsewhere."
            )
            if can_overwrite:
                buttons[box.addButton("Save here again", QMessageBox.ButtonRole.AcceptRole)] = (
                    "overwrite"
                )
        else:
            at = f" (at {when})" if when else ""
            box.setText(
                f"<b>{name}</b> was changed on disk{at} by another program or window since you opened or "
                "saved it here."
            )
            if edits:
                noun = "sentence" if edits == 1 else "sentences"
                then = (
                    "; Overwrite replaces the other program's changes with this window's version."
                    if can_overwrite
                    else ". Another window holds the file: Save as… keeps this window's version apart."
                )
                info = (
                    f"This window has unsaved edits in {edits:,} {noun}. {keep_both}\n\n"
                    f"Reload shows the file's version and drops your edits{then}"
                )
            else:
                info = (
                    "This window has no unsaved edits: Reload shows the file as it is now. Overwrite would "
                    "replace the other program's changes."
                )
            box.setInformativeText(info)
            if edits and can_keep_both:
                buttons[box.addButton("Keep both", QMessageBox.ButtonRole.AcceptRole)] = "keep_both"
            buttons[
                box.addButton(
                    "Reload (drop my edits)" if edits else "Reload",
                    QMessageBox.ButtonRole.DestructiveRole
                    if edits
                    else QMessageBox.ButtonRole.AcceptRole,
                )
            ] = "reload"
            if can_overwrite:
                buttons[box.addButton("Overwrite", QMessageBox.ButtonRole.DestructiveRole)] = (
                    "overwrite"
                )
        buttons[box.addButton("Save as…", QMessageBox.ButtonRole.ActionRole)] = "save_as"
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        default = next((b for b, v in buttons.items() if v in ("keep_both",)), None)
        if default is None and not edits:
            default = next((b for b, v in buttons.items() if v == "reload"), None)
        box.setDefaultButton(default or cancel)
        box.setEscapeButton(cancel)
        box.exec()
        clicked = box.clickedButton()
        return next((v for b, v in buttons.items() if b == clicked), "cancel")

    def ask_locked(self, path: str, holder: str) -> str:
        """The corpus is open for writing in another window: 'save_as' or 'cancel'."""
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "Open in another window",
            f"<b>{os.path.basename(path)}</b> is being edited in another nerstudio window: {holder}.",
            parent=self.parent,
        )
        box.setInformativeText(
            "Only that window saves to this file, so neither overwrites the other. Save a copy "
            "under another name, or close it there and save here."
        )
        save_as = box.addButton("Save as…", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(save_as)
        box.exec()
        return "save_as" if box.clickedButton() is save_as else "cancel"

    def ask_keep_runs(self, n: int, corpora: str, new: str) -> bool:
        """Keep the curves of ``n`` runs trained on ``corpora`` now that ``new`` opens?"""
        r = QMessageBox.question(
            self.parent,
            "Keep earlier training runs?",
            f"{n} training run(s) were trained on {corpora}, not on {new}. Keep their curves (marked as from "
            "another corpus)? If not, they are removed.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return r == QMessageBox.StandardButton.Yes

    def ask_unsaved_models(self, what: str) -> str:
        """What to do with trained models never saved (``what`` names them): 'save' (to a
        results folder), 'discard' or 'cancel'."""
        verb = "were" if " and " in what else "was"
        return self._save_discard_cancel(
            "Unsaved models",
            f"The {what} trained in this session {verb} never saved.",
            "Save the session's results to a folder before quitting?",
        )

    def _save_discard_cancel(self, title: str, text: str, question: str) -> str:
        """A warning with Save (the default), Discard and Cancel: 'save', 'discard' or 'cancel'."""
        if self.unattended:
            return "discard"
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, parent=self.parent)
        box.setInformativeText(question)
        box.setStandardButtons(
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel
        )
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        r = box.exec()
        answers = {
            QMessageBox.StandardButton.Save: "save",
            QMessageBox.StandardButton.Discard: "discard",
        }
        return answers.get(QMessageBox.StandardButton(r), "cancel")

    def ask_reopen_encoding(self, path: str, message: str) -> str | None:
        """The file is not in the encoding it was read with: show why, offer to read it again in
        another encoding; returns the encoding chosen, or None."""
        box = QMessageBox(
            QMessageBox.Icon.Critical, "Cannot open corpus", message, parent=self.parent
        )
        box.setInformativeText("Reopen it with another encoding?")
        choices = {
            box.addButton(f"Reopen as {label}", QMessageBox.ButtonRole.AcceptRole): enc
            for label, enc in ENCODINGS[:2]
        }
        other = box.addButton("Other encoding…", QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        clicked = box.clickedButton()
        if clicked in choices:
            return choices[clicked]
        if clicked is other:
            labels = [f"{label} ({enc})" for label, enc in ENCODINGS]
            item, ok = QInputDialog.getItem(
                self.parent, "Reopen with encoding", f"Encoding of {path}:", labels, 0, True
            )
            if ok and item:
                for (_label, enc), text in zip(ENCODINGS, labels):
                    if item == text:
                        return enc
                return item.strip() or None
        return None

    def ask_preannotate_policy(self, with_entities: int, without: int) -> str | None:
        """Which sentences a model pre-annotates when some have entities already: 'empty' (only
        the ``without`` sentences that have none), 'all' (replace every sentence's entities) or
        None (cancel)."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Pre-annotate with model",
            f"{with_entities:,} sentence(s) already have entities, {without:,} have none.",
            parent=self.parent,
        )
        box.setInformativeText(
            "Fill only the sentences without entities, or replace the entities of every "
            "sentence with the model's? Either is one edit (Ctrl+Z undoes it)."
        )
        empty = box.addButton("Fill sentences without entities", QMessageBox.ButtonRole.AcceptRole)
        every = box.addButton("Replace all", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(empty)
        box.exec()
        answers: dict[QAbstractButton, str] = {empty: "empty", every: "all"}
        return answers.get(box.clickedButton())

    def ask_suspect_options(self, model: str = ""):
        """How to find suspect annotations (a SuspectOptions; None when cancelled); ``model``:
        the model folder proposed."""
        from .views.suspects_dialog import SuspectsDialog

        d = SuspectsDialog(
            lambda: self.ask_open("Add a training corpus", CORPUS_FILTER, "suspectsCorpus"),
            lambda start: (
                QFileDialog.getExistingDirectory(self.parent, "Model folder", start) or None
            ),
            model,
            self.parent,
        )
        try:
            return d.options() if d.exec() == QDialog.DialogCode.Accepted else None
        finally:
            d.deleteLater()

    def ask_text(self, title: str, label: str, text: str) -> str | None:
        """One line of text (None when cancelled)."""
        value, ok = QInputDialog.getText(self.parent, title, label, text=text)
        return value if ok else None

    # -- messages -------------------------------------------------------------------------
    def critical(self, title: str, text: str) -> None:
        QMessageBox.critical(self.parent, title, text)

    def warning(self, title: str, text: str) -> None:
        QMessageBox.warning(self.parent, title, text)

    def info(self, title: str, text: str) -> None:
        QMessageBox.information(self.parent, title, text)

    def failure(self, title: str, text: str, details: str) -> None:
        """A bug's report: non-modal, with the traceback under "Show details" (and in the log)."""
        logs.log_error(f"{title}: {text}", details, name="gui")
        box = QMessageBox(
            QMessageBox.Icon.Critical, title, text, QMessageBox.StandardButton.Ok, self.parent
        )
        box.setDetailedText(details)
        box.setModal(False)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.show()

    def bug(self, summary: str, details: str) -> None:
        """The one report of a bug (``summary`` one line, ``details`` its traceback): said to be a
        bug, never a problem with the user's input (those are NerstudioError/OSError)."""
        self.failure(
            "Internal error",
            f"{summary}\n\nThis is a bug in nerstudio, not a problem with your input or "
            "settings: the details are below and in the log file (Help ▸ Open log folder).",
            details,
        )

    def internal_error(self, what: str, exc: BaseException) -> None:
        """A bug met while doing ``what`` ("Saving the corpus"), reported by :meth:`bug`."""
        import traceback

        self.bug(
            f"{what} failed: {type(exc).__name__}: {exc}", "".join(traceback.format_exception(exc))
        )
