"""What a reranker has learned: its features ranked over the whole attached N-best list.

The "Model features" tab lists the templates and features that move the reranker's decisions
most often (:mod:`nerstudio.rerank.importance`), computed as a view job from the scored list when
the tab is shown and the scores changed; a click shows in the browser only the sentences where
that feature or template moves (or resists) a decision. Gold edits do not change the ranking (it
compares the reranker's pick with another candidate, not with gold), so it is recomputed only
when a list or a reranker is installed.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Slot

from ...app.document import Change, ChangeKind
from . import Context


def importance_job(model, data, against: str):
    """A view job: the ranking of ``model``'s features over ``data`` (scipy loads in the
    worker), cancellable."""

    def job(ctx):
        from ...rerank.importance import model_importance

        return model_importance(model, data, against, should_cancel=ctx.should_cancel)

    return job


class ModelFeaturesController(QObject):
    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self._shown: tuple | None = (
            None  # (scored object, against) of the result shown or being computed
        )
        views.when_built("model_features_view", self._wire)  # built on first use
        views.tabs.currentChanged.connect(lambda _i: self.refresh())
        ctx.events.changed.connect(self._on_change)

    @property
    def view(self):
        return self.v.model_features_view

    def _wire(self, view) -> None:
        view.refreshRequested.connect(lambda: self.refresh(force=True))
        view.sentencesRequested.connect(self._show_sentences)

    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind in (ChangeKind.CORPUS, ChangeKind.NBEST, ChangeKind.SCORES, ChangeKind.MODEL):
            self._shown = None
            self.ctx.jobs.cancel_view("model-features")
            self.refresh()

    def refresh(self, force: bool = False) -> bool:
        """Rank the scored list's features (when the tab is shown and the scores changed)."""
        if not self.v.shows("model_features_view"):
            return False
        sc = self.doc.scored
        key = (id(sc), self.view.against())
        if not force and self._shown == key:
            return False
        self._shown = key
        if sc is None:
            self.view.show_message(
                "No reranker scores: open a reranker (Ctrl+M) or train one (F5) to see what it "
                "has learned over the whole N-best list."
            )
            return False
        if sc.model.__class__.__name__ == "KernelPerceptron" or not hasattr(sc.model, "compare"):
            self.view.show_message(
                "This reranker has no per-feature weights to rank (a kernel perceptron scores "
                "by similarity to stored mistakes)."
            )
            return False
        name = (
            os.path.basename(self.doc.nbest_path)
            if self.doc.nbest_path
            else "the N-best list of this session"
        )
        self.view.set_busy("Ranking the reranker's features…")

        def done(result):
            if self._shown == key:
                self.view.set_result(result, name)

        def failed(message):
            if self._shown == key:
                self.view.show_message(f"The ranking failed: {message}")

        self.ctx.jobs.view(
            "model-features",
            importance_job(sc.model, self.doc.scored_data(), self.view.against()),
            done,
            failed,
        )
        return True

    @Slot(list)
    def _show_sentences(self, rows: list) -> None:
        """N-best sentences → corpus sentences, shown alone in the browser."""
        ix = self.doc.nbest_index
        if ix is None or not rows:
            return
        wanted = {int(i) for i in rows}
        ks = [k for k, i in enumerate(ix.row_of) if int(i) in wanted]
        self.ctx.cursor.showOnly.emit(ks, f"{len(ks)} where the chosen feature matters")
        self.ctx.status(
            f"{len(ks)} sentences shown in the browser ('show all' under the list brings back the rest)",
            6000,
        )
