"""Suspect annotations in the window: Annotate ▸ Find suspect annotations…, Open suspects
list…, the Suspects tab and the keys that decide.

**Find suspect annotations…** asks how to judge the sentences (folds of the corpus, with more
training corpora, or a model folder; :class:`~nerstudio.gui.views.suspects_dialog.SuspectsDialog`)
and runs the ranking (:func:`nerstudio.label_errors.find_suspects`) in the worker on a copy of
the corpus, with progress and Shift+F5 to cancel. **Open suspects list…** reads a TSV written by
``nerstudio suspects --out``. Either list becomes the document model's queue
(:class:`~nerstudio.app.suspects.SuspectQueue`, which keeps it beside the corpus); the browser
then shows its "Suspects" filter, most suspect first, and F7 walks it.

The **Suspects** tab (beside the gold entities) shows the shown sentence's suspects: gold and
suggestion side by side, the evidence in words and what became of each. **Accept suggestion**
(F9) puts the current one's suggestion in the sentence, one undoable edit; **Dismiss suspect**
(Shift+F9) keeps the gold and marks the sentence reviewed. A suspect whose region the annotator
changed since the ranking is not applied: the tab and the status bar say so.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Slot

from ...app.document import Change, ChangeKind, Origin
from ...app.suspects import QueueChange, QueueKind, Status, rank_suspects, region
from ...app.types import document_types
from ...corpus.model import Corpus
from ...errors import DataError, NerstudioError
from ..actions import build_action
from ..views.suspects_panel import NO_LIST, Card, SuspectsPanel
from ..window_views import SUSPECTS_FILTER
from ..workers import job_of
from . import Context

JOB_NAME = "suspect annotations"
TSV_FILTER = "Suspects lists (*.tsv *.txt);;All files (*)"


class SuspectsController(QObject):
    def __init__(self, ctx: Context, views, parent_widget, fold_executor=lambda: None):
        super().__init__(parent_widget)
        self.ctx, self.doc, self.v, self.queue = ctx, ctx.document, views, ctx.suspects
        self.fold_executor = fold_executor  # where the folds run (None: the worker thread)
        w = parent_widget
        self.act_find = build_action(w, "suspects.act_find", self)
        self.act_open = build_action(w, "suspects.act_open", self)
        self.act_accept = build_action(w, "suspects.act_accept", self)
        self.act_dismiss = build_action(w, "suspects.act_dismiss", self)
        for act, text in ((self.act_accept, "Accept suggestion"), (self.act_dismiss, "Dismiss")):
            act.setIconText(f"{text} ({act.shortcut().toString()})")  # the key from its row
        self.panel = SuspectsPanel()
        self.panel.add_button(self.act_accept, "acceptSuggestionButton")
        self.panel.add_button(self.act_dismiss, "dismissSuspectButton")
        views.annotate_tabs.insertTab(1, self.panel, "Suspects")  # beside the gold entities
        self.last = ""  # the last result in words (tests, scripts)
        self.queue.subscribe(self._on_queue)
        ctx.events.changed.connect(self._on_change)
        ctx.cursor.moved.connect(lambda _k: self._refresh())
        ctx.jobs.started.connect(lambda _name: self._update())
        ctx.jobs.idle.connect(self._update)
        self._refresh()

    # -- what is shown ----------------------------------------------------------------------
    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:  # the queue of the new corpus is read already
            self._refresh()

    def _on_queue(self, ch: QueueChange) -> None:
        if ch.kind is QueueKind.NOTE:
            self.ctx.status(ch.text, 15000)
            return
        self._refresh()  # the summary counts every suspect: redrawn whichever changed
        k = self.ctx.cursor.k
        if ch.origin is Origin.HISTORY and ch.sentences and k not in ch.sentences:
            self.ctx.cursor.go(ch.sentences[0])  # an undone dismissal elsewhere: back there

    def _update(self) -> None:
        c = self.doc.corpus
        self.act_find.setEnabled(c is not None and not self.ctx.jobs.busy)
        self.act_open.setEnabled(c is not None)
        k = self.ctx.cursor.k
        can = c is not None and 0 <= k < len(c) and self.queue.current(k) is not None
        self.act_accept.setEnabled(can)
        self.act_dismiss.setEnabled(can)

    def _refresh(self) -> None:
        """The summary line, the shown sentence's suspects and the actions."""
        self._update()
        q, c, k = self.queue, self.doc.corpus, self.ctx.cursor.k
        tabs = self.v.annotate_tabs
        n = q.counts()[Status.OPEN] if q.active else 0
        tabs.setTabText(tabs.indexOf(self.panel), f"Suspects ({n})" if n else "Suspects")
        if not q.active:
            self.panel.show_summary(
                "No corpus open" if c is None else q.why_none() if q.has_list else NO_LIST
            )
            self.panel.show_sentence(k, [], [], 0, document_types(self.doc))
            return
        self.panel.show_summary(
            f"<b>{q.summary()}</b> · {q.source} · the browser's <i>Suspects</i> filter lists "
            "the open ones, most suspect first; F7 goes to the next"
        )
        if c is None or not 0 <= k < len(c):
            self.panel.show_sentence(k, [], [], 0, document_types(self.doc))
            return
        current = q.current(k)
        spans = self.doc.spans(k)
        cards = [
            Card(q.suspects[i], i + 1, q.status(i), i == current, region(spans, q.suspects[i]))
            for i in q.of_sentence(k)
        ]
        self.panel.show_sentence(
            k,
            c.sentences[k].words,
            cards,
            len(q.suspects),
            document_types(self.doc),
            f"Sentence {k + 1} is not among the suspects. F7 goes to the next open one "
            "(with the browser's Suspects filter).",
        )

    def _show_list(self, go: bool) -> None:
        """A new list: the browser's Suspects filter and the Suspects tab; ``go``: the Annotate
        workspace comes forward on the most suspect sentence (the sentence shown stays
        otherwise: the user went on working while the list was made)."""
        f = self.v.status_filter
        f.setCurrentIndex(f.findData(SUSPECTS_FILTER))
        self.v.annotate_tabs.setCurrentWidget(self.panel)
        order = self.queue.order()
        first = order[self.queue.open_mask()[order]]
        if go:
            self.v.tabs.setCurrentWidget(self.panel)
            if len(first):
                self.ctx.cursor.go(int(first[0]))

    # -- a list -----------------------------------------------------------------------------
    def default_model(self) -> str:
        """The folder of the tagger already loaded, if any."""
        path = self.doc.tagger_path
        return os.path.dirname(path) if path else ""

    def find_dialog(self) -> bool:
        if self.doc.corpus is None:
            self.ctx.status("Open a corpus first", 4000)
            return False
        options = self.ctx.dialogs.ask_suspect_options(self.default_model())
        return options is not None and self.run(options)

    def run(self, options) -> bool:
        """Rank the open corpus's sentences as ``options`` (a SuspectOptions) say, in the
        worker; False when nothing started."""
        doc = self.doc
        if doc.corpus is None:
            return False
        if self.ctx.jobs.busy:
            self.ctx.status(
                f"A job is running ({self.ctx.jobs.name}): wait for it or cancel it (Shift+F5)",
                5000,
            )
            return False
        corpus: Corpus = doc.corpus
        snapshot = _copy(corpus)
        start, where = doc.revision, self.ctx.cursor.k
        executor = None if options.model else self.fold_executor()
        job = job_of(
            rank_suspects,
            snapshot,
            options.n,
            options.folds,
            options.more,
            options.model,
            executor,
        )

        def done(found: list) -> None:
            if doc.corpus is not corpus:
                self.ctx.status("Suspects discarded: another corpus was opened", 8000)
                return
            self.queue.install(found, options.describe())
            self.last = f"Found {len(found):,} suspect annotation(s), {options.describe()}"
            self.ctx.status(self.last, 10000)
            # the user waited for it: to the first, unless they went on working meanwhile
            self._show_list(go=doc.revision == start and self.ctx.cursor.k == where)

        def failed(message: str, tb: str) -> None:
            if not tb:  # a file or folder the user chose cannot be used: say why
                self.ctx.dialogs.critical("Cannot find suspect annotations", message)

        return self.ctx.jobs.run(
            JOB_NAME,
            job,
            done,
            on_failed=failed,
            on_cancelled=lambda: self.ctx.status(
                "Finding suspects cancelled: nothing changed", 6000
            ),
        )

    def open_dialog(self) -> bool:
        if self.doc.corpus is None:
            self.ctx.status("Open a corpus first", 4000)
            return False
        path = self.ctx.dialogs.ask_open("Open suspects list", TSV_FILTER, "suspects")
        return path is not None and self.open_list(path)

    def open_list(self, path: str) -> bool:
        """Make the suspects in the TSV ``path`` (of the open corpus) the queue."""
        from ...label_errors import read_tsv

        c = self.doc.corpus
        if c is None:
            return False
        try:
            found = read_tsv(path, c)
        except (NerstudioError, OSError) as exc:
            self.ctx.dialogs.critical("Cannot open suspects list", str(exc))
            return False
        self.queue.install(found, f"from {os.path.basename(path)}")
        self.last = f"Opened {len(found):,} suspect annotation(s) from {path}"
        self.ctx.status(self.last, 10000)
        self._show_list(go=True)
        return True

    # -- deciding ---------------------------------------------------------------------------
    def _current(self) -> int | None:
        k, q = self.ctx.cursor.k, self.queue
        c = self.doc.corpus
        if c is None or not 0 <= k < len(c):
            return None
        i = q.current(k)
        if i is None:
            mine = q.of_sentence(k)
            if not q.active:
                self.ctx.status(q.why_none(), 5000)
            elif not mine:
                self.ctx.status(f"Sentence {k + 1} has no suspect: F7 goes to the next", 5000)
            else:
                st = q.status(mine[0])
                why = (
                    "you changed that part of the sentence since the ranking: the suggestion "
                    "is not applied"
                    if st is Status.EDITED
                    else "decided already (Ctrl+Z takes it back)"
                )
                self.ctx.status(f"The suspect of sentence {k + 1} is {why}", 6000)
        return i

    def accept(self) -> bool:
        return self._decide(
            self.queue.accept, "Suggestion accepted (Ctrl+Z takes it back); F7: the next suspect"
        )

    def dismiss(self) -> bool:
        return self._decide(
            self.queue.dismiss, "Suspect dismissed: the gold is kept; F7: the next suspect"
        )

    def _decide(self, act, done: str) -> bool:
        """Apply ``act`` (the queue's accept or dismiss) to the shown sentence's current suspect
        and say so; a refusal is said in the status bar."""
        i = self._current()
        if i is None:
            return False
        try:
            act(i)
        except DataError as exc:
            self.ctx.status(str(exc), 6000)
            return False
        self.ctx.status(done, 5000)
        return True


def _copy(corpus: Corpus) -> Corpus:
    """A copy of ``corpus`` holding the gold of this moment (the words shared)."""
    from ...app.keepboth import frozen

    return frozen(corpus, [list(s.spans) for s in corpus.sentences])
