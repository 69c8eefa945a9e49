"""Label all occurrences: Annotate ▸ Label all occurrences… (Ctrl+Shift+A).

From the search text (when the search box has the focus), else the entity under the caret (or
the selected tokens, or else the search text) it
opens the preview (:class:`~nerstudio.gui.views.occurrences_dialog.OccurrencesDialog`) with every
occurrence of that phrase in the corpus, ticked unless it overlaps another entity. "Label ticked"
gives each ticked occurrence the chosen type and "Remove all" removes the entities spanning a
ticked occurrence exactly; either is one
:meth:`Document.set_many <nerstudio.app.document.Document.set_many>` call — one undoable edit —
built by :mod:`nerstudio.app.occurrences`, and the status bar says what it did (overlapping
entities replaced are counted there).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot

from ...app import occurrences as occ
from ...app import span_edits
from ...app.document import Change, ChangeKind, Origin
from ...app.types import document_types
from ..actions import build_action
from . import Context

if TYPE_CHECKING:
    from ..views.occurrences_dialog import OccurrencesDialog


class OccurrencesController(QObject):
    def __init__(self, ctx: Context, views, parent_widget):
        super().__init__(parent_widget)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self._window = parent_widget
        self.act = build_action(parent_widget, "occurrences.act", self)
        self.dialog: OccurrencesDialog | None = None
        self.last = ""  # the last result (tests, scripts)
        ctx.events.changed.connect(self._on_change)
        self._update()

    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self._update()

    def _update(self) -> None:
        self.act.setEnabled(self.doc.corpus is not None)

    def default_phrase(self) -> tuple[str, str]:
        """(phrase, type): the search text when the search box has the focus (the user just searched),
        else the entity under the caret, else the selected tokens, else the search text."""
        search = self.v.search.text().strip()
        if search and self.v.search.hasFocus():
            return search, ""
        view = self.v.sentence_view
        words, gold = view.words(), view.gold()
        a, b = view.selection()
        if words and a >= 0:
            sp = span_edits.span_at(gold, view.caret)
            if sp is not None and b - a == 1:
                return " ".join(words[sp.start : sp.end]), sp.label
            inside = [s for s in gold if (s.start, s.end) == (a, b)]
            if b - a > 1 or inside:
                return " ".join(words[a:b]), inside[0].label if inside else ""
            return words[a], ""
        return self.v.search.text().strip(), ""

    def open_dialog(
        self, phrase: str | None = None, label: str | None = None
    ) -> OccurrencesDialog | None:
        """Open the preview (not blocking); it applies what the user chooses when it closes."""
        corpus = self.doc.corpus
        if corpus is None:
            self.ctx.status("Open a corpus first", 4000)
            return None
        p, lab = self.default_phrase()
        labels = document_types(self.doc).labels
        if not lab:  # a search: the type most of the phrase's entities have already
            exact = (o.exact() for o in occ.find(corpus.sentences, p))
            have = Counter(sp.label for sp in exact if sp is not None)
            lab = have.most_common(1)[0][0] if have else ""
        from ..views.occurrences_dialog import OccurrencesDialog  # on first use

        d = self.dialog = OccurrencesDialog(
            corpus.sentences,
            labels,
            p if phrase is None else phrase,
            (lab or labels[0]) if label is None else label,
            self._window,
        )
        d.searchChanged.connect(
            lambda text, case: d.show_found(occ.find(corpus.sentences, text, case))
        )
        d.show_found(occ.find(corpus.sentences, d.phrase.text(), d.case.isChecked()))
        d.accepted.connect(lambda: self.apply(d, corpus))
        d.open()
        return d

    def apply(self, d: OccurrencesDialog, corpus=None) -> list[int]:
        """Make the dialog's choice one undoable edit; returns the sentences changed."""
        c = self.doc.corpus
        if c is None or (corpus is not None and c is not corpus):
            return []
        ticked = {(o.k, o.start, o.end) for o in d.chosen()}  # found again: the gold of this moment
        chosen = [
            o
            for o in occ.find(c.sentences, d.phrase.text(), d.case.isChecked())
            if (o.k, o.start, o.end) in ticked
        ]
        phrase = " ".join(occ.tokens_of(d.phrase.text()))
        if d.action == "remove":
            edits, rep = occ.remove_edit(c.sentences, chosen)
            text = f"remove {rep.removed} “{phrase}” entities"
            summary = rep.text()
        else:
            edits, rep = occ.label_edit(c.sentences, chosen, d.label())
            text = f"label {len(chosen)} × “{phrase}” as {d.label() or 'entity'}"
            summary = rep.text(d.label())
        done = self.doc.set_many(edits, text, origin=Origin.USER)  # the annotator's edit
        self.last = f"“{phrase}”: {summary}"
        self.ctx.status(self.last + (" in one edit (Ctrl+Z undoes it)" if done else ""), 10000)
        return done
