"""Annotate ▸ Find suspect annotations…: how the open corpus's sentences are judged.

Either by folds of the corpus itself (a tagger trained on the other folds, and on any more
training corpora the user adds, judges each fold's sentences) or by a model folder (a tagger
trained elsewhere judges every sentence); and how many suspects to list. The answer is a
:class:`SuspectOptions`, which the suspects controller hands to the ranking in the worker.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

DEFAULT_FOLDS = 5
DEFAULT_COUNT = 20


@dataclass(frozen=True)
class SuspectOptions:
    """What the ranking is asked for: ``n`` suspects, judged by ``folds`` folds of the corpus
    (with the ``more`` training corpora) or, when ``model`` names a folder, by that model."""

    n: int = DEFAULT_COUNT
    folds: int = DEFAULT_FOLDS
    more: tuple[str, ...] = ()
    model: str | None = None

    def describe(self) -> str:
        """How the list was made, in words (the queue's source)."""
        if self.model:
            return f"judged by the model in {os.path.basename(os.path.normpath(self.model))}"
        more = f" and {len(self.more)} more training corpora" if self.more else ""
        return f"judged by {self.folds} folds of the corpus{more}"


class SuspectsDialog(QDialog):
    """See the module docstring. ``ask_corpus`` / ``ask_folder``: the window's file dialogs
    (they remember their folders)."""

    def __init__(
        self,
        ask_corpus: Callable[[], str | None],
        ask_folder: Callable[[str], str | None],
        model: str = "",
        parent=None,
    ):
        super().__init__(parent)
        self.setObjectName("suspectsDialog")
        self.setWindowTitle("Find suspect annotations")
        self._ask_corpus, self._ask_folder = ask_corpus, ask_folder
        intro = QLabel(
            "Ranks the sentences of the open corpus by the evidence that their gold annotation "
            "is wrong: a tagger that did not see a sentence's gold judges it. The most suspect "
            "ones are listed, with a suggestion and the evidence in words."
        )
        intro.setWordWrap(True)
        self.by_folds = QRadioButton("&Folds of this corpus (a tagger trained on the others)")
        self.by_model = QRadioButton("A &model folder (a tagger trained elsewhere)")
        group = QButtonGroup(self)
        group.addButton(self.by_folds)
        group.addButton(self.by_model)
        self.by_folds.setChecked(True)
        self.folds = QSpinBox()
        self.folds.setObjectName("suspectFolds")
        self.folds.setRange(2, 20)
        self.folds.setValue(DEFAULT_FOLDS)
        self.more = QListWidget()
        self.more.setObjectName("suspectMoreCorpora")
        self.more.setMaximumHeight(5 * self.more.fontMetrics().height() + 8)
        self.more.setToolTip("Corpora the taggers also train on (the same types)")
        add, remove = QPushButton("&Add corpus…"), QPushButton("&Remove")
        add.clicked.connect(self._add)
        remove.clicked.connect(lambda: self.more.takeItem(self.more.currentRow()))
        self.model = QLineEdit(model)
        self.model.setObjectName("suspectModel")
        self.model.setPlaceholderText("a folder holding tagger.npz")
        browse = QPushButton("&Browse…")
        browse.clicked.connect(self._browse)
        self.count = QSpinBox()
        self.count.setObjectName("suspectCount")
        self.count.setRange(1, 100_000)
        self.count.setValue(DEFAULT_COUNT)
        folds = QWidget()
        fl = QFormLayout(folds)
        fl.setContentsMargins(24, 0, 0, 0)
        fl.addRow("Folds:", self.folds)
        more_row = QHBoxLayout()
        more_row.addWidget(self.more, 1)
        side = QVBoxLayout()
        side.addWidget(add)
        side.addWidget(remove)
        side.addStretch(1)
        more_row.addLayout(side)
        fl.addRow("More training corpora:", more_row)
        model_row = QHBoxLayout()
        model_row.setContentsMargins(24, 0, 0, 0)
        model_row.addWidget(self.model, 1)
        model_row.addWidget(browse)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        if ok is not None:
            ok.setText("Find suspects")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        count = QFormLayout()
        count.addRow("Suspects to list:", self.count)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(self.by_folds)
        lay.addWidget(folds)
        lay.addWidget(self.by_model)
        lay.addLayout(model_row)
        lay.addLayout(count)
        lay.addWidget(buttons)
        folding: tuple[QWidget, ...] = (self.folds, self.more, add, remove)
        for w in folding:
            self.by_folds.toggled.connect(w.setEnabled)
        for w in (self.model, browse):
            self.by_model.toggled.connect(w.setEnabled)
            w.setEnabled(False)

    def _add(self) -> None:
        path = self._ask_corpus()
        if path:
            self.more.addItem(path)

    def _browse(self) -> None:
        path = self._ask_folder(self.model.text())
        if path:
            self.model.setText(path)

    def accept(self) -> None:
        if self.by_model.isChecked() and not self.model.text().strip():
            self.model.setPlaceholderText("choose the model folder first")
            self.model.setFocus()
            return
        super().accept()

    def options(self) -> SuspectOptions:
        """The choice in the dialog."""
        if self.by_model.isChecked():
            return SuspectOptions(self.count.value(), model=self.model.text().strip())
        more = tuple(self.more.item(r).text() for r in range(self.more.count()))
        return SuspectOptions(self.count.value(), self.folds.value(), more)
