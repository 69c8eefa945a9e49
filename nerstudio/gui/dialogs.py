"""Every question the application asks and every message box it shows, in one place.

Controllers ask through a :class:`Dialogs` object instead of opening boxes themselves, so tests
(and benchmarks) replace one method — ``ask_unsaved``, ``ask_recover``, ``ask_open`` … — to
answer without a blocking dialog. File dialogs remember their folder per kind of file.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

CORPUS_FILTER = "Corpora (*.conll *.txt *.tsv *.jsonl *.train *.testa *.testb *.dev *.test);;All files (*)"
NBEST_FILTER = "N-best lists (*.npz);;All files (*)"
MODEL_FILTER = "Models (*.npz);;All files (*)"


class Dialogs:
    def __init__(self, parent, settings):
        self.parent = parent
        self.settings = settings

    # -- files ----------------------------------------------------------------------------
    def ask_open(self, title: str, filt: str, key: str) -> str | None:
        start = self.settings.value(f"files/{key}Dir", self.settings.value("files/lastDir", ""))
        path, _ = QFileDialog.getOpenFileName(self.parent, title, start, filt)
        if path:
            self.settings.setValue(f"files/{key}Dir", os.path.dirname(path))
        return path or None

    def ask_save(self, title: str, default: str, filt: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self.parent, title, default, filt)
        return path or None

    def ask_folder(self, title: str) -> str | None:
        d = QFileDialog.getExistingDirectory(self.parent, title, self.settings.value("files/resultsDir", ""))
        if d:
            self.settings.setValue("files/resultsDir", d)
        return d or None

    # -- questions ------------------------------------------------------------------------
    def ask_unsaved(self) -> str:
        """What to do with unsaved edits: 'save', 'discard' or 'cancel'."""
        box = QMessageBox(QMessageBox.Warning, "Unsaved annotations",
                          "The corpus has edits that are not saved.", parent=self.parent)
        box.setInformativeText("Save them before closing?")
        box.setStandardButtons(QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel)
        box.setDefaultButton(QMessageBox.Save)
        r = box.exec()
        return {QMessageBox.Save: "save", QMessageBox.Discard: "discard"}.get(r, "cancel")

    def ask_recover(self, path: str, corpus_name: str = "", n: int = 0) -> bool:
        """Offer to bring back ``n`` sentences' edits from a recovery file."""
        r = QMessageBox.question(self.parent, "Recover unsaved annotations",
                                 f"Unsaved edits of {n or 'some'} sentence(s) of {corpus_name} were kept in {path} "
                                 "(the application did not close normally). Recover them?",
                                 QMessageBox.Yes | QMessageBox.No, QMessageBox.Yes)
        return r == QMessageBox.Yes

    # -- messages -------------------------------------------------------------------------
    def critical(self, title: str, text: str) -> None:
        QMessageBox.critical(self.parent, title, text)

    def warning(self, title: str, text: str) -> None:
        QMessageBox.warning(self.parent, title, text)

    def info(self, title: str, text: str) -> None:
        QMessageBox.information(self.parent, title, text)

    def failure(self, title: str, text: str, details: str) -> None:
        """A bug's report: non-modal, with the traceback under "Show details"."""
        box = QMessageBox(QMessageBox.Critical, title, text, QMessageBox.Ok, self.parent)
        box.setDetailedText(details)
        box.setModal(False)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.show()
