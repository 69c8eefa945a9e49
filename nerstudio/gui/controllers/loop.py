"""The model in the loop, in the window: Annotate ▸ Learn from corrections, its panel, and the
N-best lists of a tagger opened on a corpus.

With **Learn from corrections** on, a model (the sequence tagger or the tagger already open,
else the bundled demo model with the demo corpus as its seed) follows the annotator
(:mod:`nerstudio.app.loop`): every sentence they edit becomes reviewed as they leave it
(:mod:`nerstudio.app.visit`), one they accept (**Mark sentence reviewed**) at once; when the
model is due to learn (a perceptron: each new reviewed sentence; a max-ent tagger: every
``annotation/loopEvery`` of them, default 50) a round runs in the worker — cancellable with
Shift+F5, never blocking the window — then re-predicts the sentences not reviewed yet as one
undoable edit (never a reviewed sentence, one edited while the round ran, nor the one the
annotator is on; the view does not move for it) and attaches its N-best list, so the browser's
"most uncertain first" follows the new model. Turning it on runs a first round that only
predicts (after asking, since it replaces the entities of the sentences not reviewed). The
**Model in the loop** tab (beside the gold entities) shows, per batch of reviewed sentences, the
entity F of the suggestions the annotator found against what they kept and the corrections they
needed, so the annotator sees the model improve.
A reranker open in the window (File ▸ Open reranker model…) of the perceptron family learns
too (:mod:`nerstudio.app.loop_rerank`): every ``annotation/loopEvery`` reviewed sentences it is
warm-started on their N-best lists, and its choice among the tagger's candidates is the
suggestion; after such a round the window's reranker is the one that learned (its scores
attached with the new lists). Another kind of reranker is left out of the loop, and the panel
says so. **Save loop model…** writes the current models as a model folder for
``nerstudio.load`` (``tagger.npz``, and ``reranker.npz`` when a reranker learns).

**File ▸ Open tagger model…** on a corpus without an N-best list: the tagger's N-best lists of
the corpus are made in the worker (with progress) and attached, so every view that needs them
(candidates, "most uncertain first") works.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from ...app import loop
from ...app.attachments import index_nbest
from ...app.document import Change, ChangeKind
from ...app.visit import Visit, reviewing
from ...corpus.formats import read_corpus
from ...demo import DEMO_CORPUS, DEMO_MODEL_DIR
from ...numfmt import num
from ..actions import build_action
from . import Context

JOB_NAME = "model in the loop"
NBEST_JOB = "tagger N-best lists"
STAGE_LEARN = "learning from the reviewed sentences"
STAGE_DECODE = "predicting the other sentences"
STAGE_RERANK = "the reranker learning and choosing"


class LoopPanel(QWidget):
    """The per-batch table and a line about the model."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("loopPanel")
        self.label = QLabel("Learn from corrections is off (Annotate menu)")
        self.label.setWordWrap(True)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(
            ["Reviewed", "Suggestion F", "Edits", "Added / removed / relabelled"]
        )
        tips = (
            "The batch's sentences, in review order",
            "Entity F of the model's suggestions against what was kept",
            "Entity corrections the suggestions needed: spans added + removed + relabelled",
            "The corrections by kind",
        )
        for c, tip in enumerate(tips):
            if (item := self.table.horizontalHeaderItem(c)) is not None:
                item.setToolTip(tip)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setToolTip(
            "Per batch of reviewed sentences (in review order): the entity F of the model's "
            "suggestions against what was kept, and the entity corrections they needed"
        )
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        lay = QHBoxLayout(self)
        lay.addWidget(self.label, 2)
        lay.addWidget(self.table, 3)

    def show_batches(self, scores: list) -> None:
        self.table.setRowCount(len(scores))
        done = 0
        for r, b in enumerate(scores):
            cells = (
                f"{done + 1}–{done + b.sentences}",
                num(b.f1, 2),
                str(b.edits),
                f"{b.added} / {b.removed} / {b.relabelled}",
            )
            done += b.sentences
            for c, text in enumerate(cells):
                it = QTableWidgetItem(text)
                if c:
                    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, it)


class LoopController(QObject):
    def __init__(self, ctx: Context, views, parent_widget):
        super().__init__(parent_widget)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        w = parent_widget
        self.act_learn = build_action(w, "loop.act_learn", self)
        self.act_review = build_action(w, "loop.act_review", self)
        self.act_save = build_action(w, "loop.act_save", self)
        self.panel = LoopPanel()
        views.annotate_tabs.addTab(self.panel, "Model in the loop")  # beside the gold entities
        self.learner: loop.OnlineLearner | None = None
        self.source = ""  # what the learner started from
        self.last = ""  # the last round's summary (tests, scripts)
        self.confirm = self._confirm  # replaced in tests
        self._held = False  # a round was cancelled: none starts until a sentence is reviewed
        self._nbest_for = (
            None  # a tagger just opened, whose N-best lists are wanted once no job runs
        )
        # the sentence the annotator is on: edited, it becomes reviewed as they leave it (while
        # the loop is on or some sentence is reviewed)
        self.visit = Visit(self.doc, lambda: self.learner is not None or reviewing(self.doc))
        ctx.cursor.moved.connect(self.visit.enter)
        ctx.events.changed.connect(self._on_change)
        ctx.jobs.idle.connect(self._on_idle)
        self._update()

    # -- state ----------------------------------------------------------------------------
    @property
    def every(self) -> int:
        raw = self.ctx.settings.value("annotation/loopEvery", loop.EVERY)
        try:
            return max(1, int(raw if isinstance(raw, (int, str)) else loop.EVERY))
        except ValueError:
            return loop.EVERY

    def _update(self) -> None:
        has = self.doc.corpus is not None
        self.act_learn.setEnabled(has)
        self.act_review.setEnabled(has)
        self.act_save.setEnabled(self.learner is not None)
        self._show()

    def _show(self) -> None:
        if self.doc.corpus is None:
            return
        n = int(self.doc.reviewed.sum())
        scores = loop.batch_scores(self.doc, self.every)
        self.panel.show_batches(scores)
        if self.learner is None:
            self.panel.label.setText(
                f"{n:,} of {len(self.doc.corpus):,} sentences reviewed. Learn from corrections "
                "is off (Annotate menu)."
            )
            return
        kind = (
            "learns per sentence"
            if self.learner.online
            else f"learns every {self.learner.every} sentences"
        )
        lr = self.learner
        if lr.reranker is not None:
            rr = (
                f"<br>Reranker ({lr.reranker.algo}): chooses the suggestions, learns every "
                f"{lr.every} sentences; {len(lr.reranked):,} sentence(s) learned."
            )
        else:
            rr = f"<br>No reranker in the loop: {lr.reranker_note}." if lr.reranker_note else ""
        self.panel.label.setText(
            f"<b>{self.source}</b>, {kind}: {lr.rounds} round(s), "
            f"{len(lr.learned):,} sentence(s) learned.{rr}<br>{n:,} of "
            f"{len(self.doc.corpus):,} sentences reviewed.<br>{self.last}"
        )

    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self.stop()
        elif ch.kind is ChangeKind.TAGGER:
            self._nbest_for = self.doc.tagger
            # after whatever opened it (a demo, a results folder)
            QTimer.singleShot(0, self._on_idle)
        if ch.kind in (ChangeKind.CORPUS, ChangeKind.REVIEW, ChangeKind.GOLD):
            self._update()
        if ch.kind is ChangeKind.REVIEW and self.learner is not None:
            self._held = False  # a cancelled round is tried again at the next review
            QTimer.singleShot(0, self._on_idle)

    # -- the loop -------------------------------------------------------------------------
    def toggle(self, on: bool | None = None) -> bool:
        on = self.act_learn.isChecked() if on is None else bool(on)
        if not on:
            self.stop()
            return False
        ok = self.start()
        self.act_learn.setChecked(ok)
        return ok

    def _model(self):
        """The tagger to learn with, its seed and a name for it."""
        kt = self.doc.kt_model
        if kt is not None and hasattr(kt, "learn"):
            return kt, [], "The sequence tagger"
        if self.doc.tagger is not None:
            return self.doc.tagger, [], "The open tagger"
        from ...runtime.predictor import load_model_folder

        tagger, _ = load_model_folder(DEMO_MODEL_DIR)
        return (
            tagger,
            read_corpus(str(DEMO_CORPUS)).sentences,
            "The demo model (seed: the demo corpus)",
        )

    def start(self) -> bool:
        doc = self.doc
        if doc.corpus is None:
            self.ctx.status("Open a corpus first", 4000)
            return False
        if self.ctx.jobs.busy:
            self.ctx.status(
                f"A job is running ({self.ctx.jobs.name}): wait for it or cancel it (Shift+F5)",
                5000,
            )
            return False
        todo = sum(1 for k, s in enumerate(doc.corpus.sentences) if s.spans and not doc.reviewed[k])
        if todo and not self.confirm(
            "Learn from corrections",
            f"The model will replace the entities of the {todo:,} sentence(s) not reviewed yet that have "
            "some, now and after each time it learns (each time one undoable edit). Sentences you edit or "
            "mark reviewed (Ctrl+Shift+Return) are never changed. Continue?",
        ):
            return False
        tagger, seed, self.source = self._model()
        self.learner = loop.OnlineLearner(tagger, seed, every=self.every, reranker=doc.model)
        self._held = False
        self.v.annotate_tabs.setCurrentWidget(self.panel)
        self._update()
        return self.run_round(train=False)

    def stop(self) -> None:
        if self.ctx.jobs.busy and self.ctx.jobs.name == JOB_NAME:
            self.ctx.jobs.cancel()
        self.learner = None
        self.act_learn.setChecked(False)
        self._update()

    @Slot()
    def _on_idle(self) -> None:
        if self._nbest_for is not None and not self.ctx.jobs.busy:
            wanted, self._nbest_for = self._nbest_for, None
            if wanted is self.doc.tagger:
                self.make_nbest()
        self._maybe_start()

    @Slot()
    def _maybe_start(self) -> None:
        if self.learner is None or self.ctx.jobs.busy or self.doc.corpus is None or self._held:
            return
        if self.learner.due(loop.snapshot(self.doc)):
            self.run_round()

    def run_round(self, train: bool | None = None) -> bool:
        """One round in the worker (see the module docstring); False when nothing started."""
        doc, learner = self.doc, self.learner
        if learner is None or doc.corpus is None or self.ctx.jobs.busy:
            return False
        corpus, rnd = doc.corpus, loop.snapshot(doc)
        learns = learner.tagger_due(rnd) if train is None else train
        rerank = learner.reranker is not None

        def job(ctx):
            def decoded(d: int, n: int) -> None:
                ctx.stage(STAGE_DECODE, f"{d:,}/{n:,} sentences", d, n)
                if d == n and rerank:
                    ctx.stage(STAGE_RERANK, "global features, warm start, choice")

            stages = ([STAGE_LEARN] if learns else []) + [STAGE_DECODE]
            ctx.plan(stages + ([STAGE_RERANK] if rerank else []))
            if learns:
                ctx.stage(STAGE_LEARN, f"{len(learner.new(rnd)):,} new sentence(s)")
            return learner.run(rnd, decoded, ctx.should_cancel, train)

        def done(res: loop.RoundResult) -> None:
            if doc.corpus is not corpus or self.learner is not learner:
                return  # another corpus, or the loop turned off meanwhile
            if res.reranker is not None and res.reranker is not doc.model:
                doc.install_model(res.reranker)  # the reranker that learned is the window's
            # never the sentence the annotator is on: it is theirs until they leave it
            applied = loop.apply(doc, res, "model in the loop: re-predict", (self.ctx.cursor.k,))
            learner.adopt(res)
            self.last = f"Last round: {res.note + '; ' if res.note else ''}{applied.summary()}."
            if not res.trained:
                self.last = f"{applied.summary().capitalize()}; N-best lists attached."
            self.ctx.status(self.last, 8000)
            self._update()

        return self.ctx.jobs.run(
            JOB_NAME,
            job,
            done,
            on_failed=lambda msg, tb: self.ctx.status(f"Model in the loop failed: {msg}", 10000),
            on_cancelled=self._cancelled,
        )

    def _cancelled(self) -> None:
        self._held = True
        self.ctx.status(
            "Model in the loop: round cancelled, nothing changed (the next review starts another)",
            6000,
        )

    def mark_reviewed(self) -> bool:
        k = self.ctx.cursor.k
        if self.doc.corpus is None or not 0 <= k < len(self.doc.corpus):
            return False
        if not self.doc.set_reviewed([k]):
            self.ctx.status("This sentence is reviewed already", 3000)
            return False
        self.ctx.status(f"Sentence {k + 1} reviewed", 3000)
        return True

    def save_dialog(self) -> None:
        if self.learner is None:
            return
        folder = self.ctx.dialogs.ask_folder("Save the loop model into folder")
        if folder:
            try:
                path = self.learner.save(folder)
            except OSError as exc:
                self.ctx.dialogs.critical("Cannot save the model", str(exc))
                return
            if self.learner.reranker is not None and self.learner.reranker is self.doc.model:
                # the window's reranker is now a file: quitting need not ask to save it
                self.doc.install_model(self.doc.model, os.path.join(folder, "reranker.npz"))
            self.ctx.status(f"Saved {path}", 6000)

    def _confirm(self, title: str, text: str) -> bool:
        window = self.parent()
        parent = window if isinstance(window, QWidget) else None
        return QMessageBox.question(parent, title, text) == QMessageBox.StandardButton.Yes

    # -- a tagger opened on a corpus: its N-best lists ----------------------------------------
    @Slot()
    def make_nbest(self) -> bool:
        """Decode the corpus with the open tagger when no N-best list is attached (worker)."""
        doc = self.doc
        tagger, corpus = doc.tagger, doc.corpus
        if tagger is None or corpus is None or doc.nbest is not None:
            return False
        if self.ctx.jobs.busy:
            return False
        sents = [s for s in corpus.sentences if len(s.words)]

        def job(ctx):
            ctx.progress("decoding…", 0, len(sents))
            return loop.decode(
                tagger,
                sents,
                loop.N_CANDIDATES,
                lambda d, n: ctx.progress(f"{d:,}/{n:,} sentences", d, n),
                ctx.should_cancel,
            )

        def done(nb) -> None:
            if doc.corpus is not corpus or doc.tagger is not tagger or doc.nbest is not None:
                return
            doc.attach_nbest(index_nbest(corpus, nb, revision=doc.revision))
            self.ctx.status(f"N-best lists of {len(nb):,} sentences made by the tagger", 6000)

        return self.ctx.jobs.run(
            NBEST_JOB,
            job,
            done,
            on_cancelled=lambda: self.ctx.status("N-best lists not made (cancelled)", 5000),
        )
