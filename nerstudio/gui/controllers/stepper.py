"""The step-through dock: boosting one round, or the perceptron one update, at a time.

When the dock is shown it gets the attached N-best list (with the corpus's gold of that moment)
and the dev list as ranking data, with the loaded reranker's features (or features fitted on the
list) — computed as a view job for large lists. The data is rebuilt only when the list, the dev
list, the reranker or the gold changed since.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Slot

from ..views.stepper import LARGE as STEPPER_LARGE
from . import Context


class StepperController(QObject):
    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self.panel = views.stepper_panel
        self._source = None  # what the panel's data was made from
        self.panel.set_executor(self._run_work)
        views.stepper_dock.visibilityChanged.connect(lambda vis: vis and self.prepare())
        ctx.jobs.viewProgress.connect(self._on_progress)

    @Slot(str, str, int, int)
    def _on_progress(self, name: str, message: str, done: int, total: int) -> None:
        if name == "stepper":
            self.panel.show_progress(message, done, total)

    def prepare(self, force: bool = False) -> bool:
        """Give the panel the attached N-best list (and the dev list) as ranking data."""
        doc = self.doc
        nb = doc.nbest
        if nb is None or nb.gold is None:
            self.panel.info.setText("Open an N-best list with gold (the demo has one) to step through training.")
            return False
        key = (id(nb), id(doc.dev_nbest), id(doc.model), doc.gold_revision)
        if key == self._source and not force:
            return True
        self._source = key
        model, dev_nb = doc.model, doc.dev_nbest
        # the scored list's ranking data is the same thing, unless the gold was edited since
        sc = doc.scored
        reuse = sc.data if (sc is not None and model is not None and sc.model is model and doc.scores_current()
                            and sc.data.nbest is nb) else None
        snap = doc.nbest_snapshot()
        eps = getattr(getattr(model, "learner", None), "epsilon", None)

        def compute(should_cancel=None, progress=None):
            def prog(stage):
                return None if progress is None else (lambda d, n: progress(stage, d, n))
            if model is not None and getattr(model, "features", None) is not None:
                feats = model.features
                train = reuse if reuse is not None else \
                    model.data(snap, progress=prog("global features of the N-best list"), should_cancel=should_cancel)
            else:
                from ...rerank.features import GlobalFeatures
                feats = GlobalFeatures()
                train = feats.fit_transform(snap, progress=prog("global features of the N-best list"),
                                            should_cancel=should_cancel)
            dev = feats.transform(dev_nb, progress=prog("global features of the dev list"),
                                  should_cancel=should_cancel) \
                if dev_nb is not None and dev_nb.gold is not None else None
            return train, dev, list(feats.names_)

        def done(res):
            if key == self._source:
                self.panel.set_data(*res, eps)

        def failed(message):
            if key == self._source:
                self._source = None
                self.panel.set_failed(f"Cannot prepare the step-through: {message}")
        if int(doc.nbest_index.offsets[-1]) <= STEPPER_LARGE:
            try:
                done(compute())
            except (ValueError, KeyError) as exc:
                failed(str(exc))
                return False
            return True
        self.panel.set_preparing(f"Computing the global features of {len(nb):,} sentences for the step-through…")
        self.ctx.jobs.view("stepper", lambda ctx: compute(ctx.should_cancel, ctx.progress), done, failed)
        return True

    def _run_work(self, fn, on_done, on_fail) -> None:
        """The panel's executor: its setup and steps on large data."""
        self.ctx.jobs.view("stepper", lambda ctx: fn(), on_done, on_fail)
