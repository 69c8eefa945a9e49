"""The preview of "label all occurrences": every place the phrase occurs, one checkbox each.

The phrase (prefilled from the selected entity or the search box), "Match case" and the type
are at the top; the list below shows each occurrence in its sentence with what the gold has there
now — nothing, already this type, another type (relabelled), or entities it overlaps (replaced,
so those are unticked until the user ticks them). "Label ticked" and "Remove all" close the
dialog with :attr:`action` set. No behaviour: the occurrences controller finds the phrase
(:func:`nerstudio.app.occurrences.find`) whenever the phrase or the case option changes
(:attr:`OccurrencesDialog.searchChanged`) and hands the dialog what it found
(:meth:`~OccurrencesDialog.show_found`); the annotation itself is the controller's too (one
undoable edit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
)

if TYPE_CHECKING:  # the occurrences are found by the controller; here they are shown
    from ...app import occurrences as occ

CONTEXT = 6  # tokens shown on each side of an occurrence


def _context(words, o: occ.Occurrence) -> str:
    left = words[max(0, o.start - CONTEXT) : o.start]
    right = words[o.end : o.end + CONTEXT]
    return (
        ("… " if o.start > CONTEXT else "")
        + " ".join([*left, "«" + " ".join(words[o.start : o.end]) + "»", *right])
        + (" …" if o.end + CONTEXT < len(words) else "")
    )


def _status(o: occ.Occurrence, label: str, words) -> str:
    st = o.status(label)
    if st == "same":
        return f"already {label}"
    exact = o.exact()
    if st == "relabel" and exact is not None:  # relabel: an entity spans exactly the phrase
        return f"{exact.label} → {label}"
    if st == "overlap":
        return (
            "overlaps "
            + ", ".join(f"{s.label} “{' '.join(words[s.start : s.end])}”" for s in o.overlapping())
            + " (replaced if ticked)"
        )
    return "new"


class OccurrencesDialog(QDialog):
    searchChanged = Signal(str, bool)  # the phrase, match case

    def __init__(self, sentences, labels, phrase: str = "", label: str = "", parent=None):
        super().__init__(parent)
        self.setObjectName("occurrencesDialog")
        self.setWindowTitle("Label all occurrences")
        self.resize(960, 520)
        self.sentences = sentences
        self.action = ""  # "label" or "remove" once closed by one of them
        self.found: list[occ.Occurrence] = []
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        self.phrase = QLineEdit(phrase)
        self.phrase.setPlaceholderText("Tokens to find, separated by spaces")
        self.case = QCheckBox("Match &case")
        self.case.setChecked(True)
        self.type = QComboBox()
        for lab in labels:
            self.type.addItem(lab or "entity", lab)
        if label in labels:
            self.type.setCurrentIndex(list(labels).index(label))
        phrase_label = QLabel("&Phrase:")
        phrase_label.setBuddy(self.phrase)
        row.addWidget(phrase_label)
        row.addWidget(self.phrase, 1)
        row.addWidget(self.case)
        type_label = QLabel("&Type:")
        type_label.setBuddy(self.type)
        row.addWidget(type_label)
        row.addWidget(self.type)
        lay.addLayout(row)
        self.summary = QLabel()
        self.summary.setObjectName("occurrencesSummary")
        lay.addWidget(self.summary)
        self.list = QListWidget()
        self.list.setObjectName("occurrencesList")
        lay.addWidget(self.list, 1)
        ticks = QHBoxLayout()
        for text, on in (("Tick &all", True), ("Tick &none", False)):
            b = QPushButton(text)
            b.clicked.connect(lambda _=False, on=on: self.tick_all(on))
            ticks.addWidget(b)
        ticks.addStretch(1)
        lay.addLayout(ticks)
        box = QDialogButtonBox()
        self.label_button = box.addButton("&Label ticked", QDialogButtonBox.ButtonRole.AcceptRole)
        self.remove_button = box.addButton(
            "&Remove all", QDialogButtonBox.ButtonRole.DestructiveRole
        )
        self.remove_button.setToolTip(
            "Remove the entities that span exactly a ticked occurrence (any type)"
        )
        box.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.label_button.clicked.connect(lambda: self._close_with("label"))
        self.remove_button.clicked.connect(lambda: self._close_with("remove"))
        box.rejected.connect(self.reject)
        lay.addWidget(box)
        self.label_button.setDefault(True)
        self.phrase.textChanged.connect(self._search)
        self.case.toggled.connect(self._search)
        self.type.currentIndexChanged.connect(self._restatus)
        self._restatus()  # nothing found yet: the controller shows what it finds

    def label(self) -> str:
        return self.type.currentData()

    def _search(self, *_args) -> None:
        self.searchChanged.emit(self.phrase.text(), self.case.isChecked())

    def show_found(self, found: list[occ.Occurrence]) -> None:
        """The occurrences of the phrase, as found now, each ticked unless it overlaps another
        entity."""
        self.found = list(found)
        self.list.clear()
        for _o in self.found:
            it = QListWidgetItem()
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            self.list.addItem(it)
        self._restatus(tick=True)

    def _restatus(self, *_args, tick: bool = False) -> None:
        lab = self.label()
        for i, o in enumerate(self.found):
            it = self.list.item(i)
            words = self.sentences[o.k].words
            it.setText(f"{_status(o, lab, words)} — {o.k + 1}: {_context(words, o)}")
            if tick:
                it.setCheckState(
                    Qt.CheckState.Unchecked if o.status(lab) == "overlap" else Qt.CheckState.Checked
                )
        n = len(self.found)
        statuses = [o.status(lab) for o in self.found]
        counts = {st: statuses.count(st) for st in ("free", "same", "relabel", "overlap")}
        self.summary.setText(
            f"{n} occurrence(s) in {len({o.k for o in self.found})} sentence(s): "
            f"{counts['free']} new, {counts['same']} already {lab or 'entity'}, "
            f"{counts['relabel']} of another type, {counts['overlap']} overlapping other entities"
            if n
            else "No occurrence (whole tokens"
            + (", case-sensitive" if self.case.isChecked() else "")
            + ")"
        )
        self.label_button.setEnabled(bool(n))
        self.remove_button.setEnabled(bool(n))

    def tick_all(self, on: bool) -> None:
        for i in range(self.list.count()):
            self.list.item(i).setCheckState(
                Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
            )

    def chosen(self) -> list[occ.Occurrence]:
        return [
            o
            for i, o in enumerate(self.found)
            if self.list.item(i).checkState() == Qt.CheckState.Checked
        ]

    def _close_with(self, action: str) -> None:
        self.action = action
        self.accept()
