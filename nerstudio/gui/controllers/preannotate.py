"""Pre-annotation: Annotate ▸ Pre-annotate with model… fills the open corpus's gold with a
model's entities, so the annotator corrects them instead of starting from nothing.

The model folder (a tagger, optionally a reranker) defaults to the folder of the tagger already
loaded, else the bundled demo model. The model is read and run in the worker
(:func:`~nerstudio.app.preannotate.predict_folder`: "stage k of n", cancellable with Shift+F5)
over copies of the sentences taken when it starts; its result reaches the corpus only through
:meth:`Document.set_many <nerstudio.app.document.Document.set_many>`, as one undoable edit, so
the dirty flag, autosave, the browser's counts and Ctrl+Z follow as for any edit. Sentences the
annotator edited while the model ran keep the annotator's edit
(:func:`nerstudio.app.preannotate.edits_for`).
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Slot

from ...app.document import Change, ChangeKind
from ...app.preannotate import PredictedSpans, edits_for, predict_folder, targets
from ...demo import DEMO_MODEL_DIR
from ...runtime.predictor import TAGGER_FILES
from ..actions import build_action
from ..workers import job_of
from . import Context

JOB_NAME = "preannotate"


class PreannotateController(QObject):
    def __init__(self, ctx: Context, parent_widget):
        super().__init__(parent_widget)
        self.ctx, self.doc = ctx, ctx.document
        self.act = build_action(parent_widget, "preannotate.act", self)
        self.last: str = ""  # the last result's summary (tests, scripts)
        ctx.events.changed.connect(self._on_change)
        ctx.jobs.started.connect(lambda _name: self._update())
        ctx.jobs.idle.connect(self._update)
        self._update()

    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self._update()

    def _update(self) -> None:
        self.act.setEnabled(self.doc.corpus is not None and not self.ctx.jobs.busy)

    def default_folder(self) -> str:
        """The folder of the tagger (or reranker) already loaded when it holds a model folder's
        tagger, else the bundled demo model."""
        for path in (self.doc.tagger_path, self.doc.model_path):
            folder = os.path.dirname(path) if path else ""
            if folder and any(os.path.isfile(os.path.join(folder, f)) for f in TAGGER_FILES):
                return folder
        return str(DEMO_MODEL_DIR)

    def ask_and_run(self) -> bool:
        """Ask for the model folder and, when some sentences have entities, which to predict."""
        if self.doc.corpus is None:
            self.ctx.status("Open a corpus first", 4000)
            return False
        folder = self.ctx.dialogs.ask_model_folder(self.default_folder())
        if not folder:
            return False
        sents = self.doc.corpus.sentences
        with_entities = sum(1 for s in sents if s.spans)
        replace = False
        if with_entities:
            policy = self.ctx.dialogs.ask_preannotate_policy(
                with_entities, len(sents) - with_entities
            )
            if policy is None:
                return False
            replace = policy == "all"
        return self.run(folder, replace)

    def run(self, folder: str, replace: bool = False, system: str | None = None) -> bool:
        """Pre-annotate the open corpus with the model in ``folder`` (in the worker); False when
        nothing started."""
        doc = self.doc
        if doc.corpus is None:
            return False
        if self.ctx.jobs.busy:
            self.ctx.status(
                f"A job is running ({self.ctx.jobs.name}): wait for it or cancel it (Shift+F5)",
                5000,
            )
            return False
        corpus, start = doc.corpus, doc.revision
        ks = targets(corpus.sentences, replace)
        if not ks:
            self.ctx.status("Every sentence has entities already: nothing to pre-annotate", 6000)
            return False
        # every sentence (a reranker with document context reads them all): words and columns are
        # immutable and shared, the spans left behind
        snapshot = [s.copy(spans=()) for s in corpus.sentences]
        documents = corpus.sentence_document()
        job = job_of(predict_folder, folder, ks, snapshot, system, documents)

        def done(res: PredictedSpans) -> None:
            if doc.corpus is not corpus:
                self.ctx.status("Pre-annotation discarded: another corpus was opened", 8000)
                return
            edited = set(doc.changed_since(start).tolist()) & set(res.sentences)
            pre = edits_for(corpus.sentences, res.sentences, res.spans, replace, skip=edited)
            if pre.edits:
                doc.set_many(pre.edits, f"pre-annotate {pre.changed:,} sentence(s)")
            self.last = f"{pre.summary()[0].upper()}{pre.summary()[1:]} by {res.model}"
            self.ctx.status(self.last + (" (Ctrl+Z undoes it)" if pre.edits else ""), 15000)

        def failed(message: str, tb: str) -> None:
            if not tb:  # the folder the user chose cannot be used: say why
                self.ctx.dialogs.critical("Cannot pre-annotate", message)

        return self.ctx.jobs.run(
            JOB_NAME,
            job,
            done,
            on_failed=failed,
            on_cancelled=lambda: self.ctx.status("Pre-annotation cancelled: nothing changed", 6000),
        )
