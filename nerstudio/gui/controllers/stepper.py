"""The Teach workspace: boosting one round, or the perceptron one update, at a time.

Teach always trains on the *training* N-best list and draws its curve on the *dev* list, whatever
corpus is open, and the panel says which lists those are. The training list is the attached list
when it is not the dev list; with the dev corpus open (its attached list is the dev list) it is
the last training list this session attached, else ``train*.nbest.npz`` found beside the dev list
(``dev`` → ``train`` in its file name, as the demo's ``model/`` folder has them). The features are
the loaded reranker's (or fitted on the training list), computed as a view job for large lists.

The data is rebuilt whenever the lists, the reranker or the gold changed since, and — while Teach
is showing — as soon as a list, the corpus or the reranker changes (so a window that starts in
Teach is ready once the demo's lists are attached).
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Slot

from ...app.document import ChangeKind
from ...errors import NerstudioError
from ...nbest import NBestList
from . import Context

#: the changes after which the shown step-through is rebuilt
REBUILD_ON = (ChangeKind.CORPUS, ChangeKind.NBEST, ChangeKind.DEV, ChangeKind.MODEL)


def plain_copy(nb: NBestList) -> NBestList:
    """``nb`` with its gold as a plain list (an attached list reads its gold from the corpus)."""
    snapshot = getattr(nb.gold, "snapshot", None)  # an attached list's gold view
    gold = snapshot() if snapshot is not None else (None if nb.gold is None else list(nb.gold))
    return NBestList(
        nb.tagset,
        nb.words,
        nb.candidates,
        nb.logprobs,
        gold,
        nb.ids,
        nb.meta,
        _span_cache=nb._span_cache,
    )


def same_sentences(a: NBestList | None, b: NBestList | None) -> bool:
    return (
        a is not None
        and b is not None
        and len(a) == len(b)
        and all(list(x) == list(y) for x, y in zip(a.words, b.words))
    )


def training_sibling(dev_path: str | None) -> str | None:
    """``train…`` beside a dev list named ``…dev…`` (``model/dev.nbest.npz`` → ``model/train.nbest.npz``)."""
    if not dev_path:
        return None
    head, name = os.path.split(dev_path)
    if "dev" not in name:
        return None
    cand = os.path.join(head, name.replace("dev", "train", 1))
    return cand if os.path.isfile(cand) else None


class StepperController(QObject):
    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self._source = None  # what the panel's data was made from
        self._train: tuple[NBestList, str] | None = (
            None  # the last training list seen (list, its name)
        )
        views.when_built("stepper_panel", lambda panel: panel.set_executor(self._run_work))
        views.stepper_dock.visibilityChanged.connect(lambda vis: vis and self.prepare())
        ctx.jobs.viewProgress.connect(self._on_progress)
        ctx.events.changed.connect(self._on_change)

    @property
    def panel(self):
        return self.v.stepper_panel  # built on first use

    @Slot(str, str, int, int)
    def _on_progress(self, name: str, message: str, done: int, total: int) -> None:
        if name == "stepper":
            self.panel.show_progress(message, done, total)

    def _on_change(self, ch) -> None:
        if ch.kind is ChangeKind.NBEST:
            self._remember_attached()
        elif ch.kind is ChangeKind.CORPUS and self._train is not None:
            nb, name = self._train  # keep its gold of that corpus, not the corpus itself
            self._train = (plain_copy(nb), name)
        if ch.kind in REBUILD_ON and self.v.stepper_dock.isVisible():
            self.prepare()

    def _attached_is_dev(self) -> bool:
        doc = self.doc
        if doc.nbest is None or doc.dev_nbest is None:
            return False
        if (
            doc.nbest_path
            and doc.dev_nbest_path
            and os.path.abspath(doc.nbest_path) == os.path.abspath(doc.dev_nbest_path)
        ):
            return True
        return same_sentences(doc.nbest, doc.dev_nbest)

    def _remember_attached(self) -> None:
        doc = self.doc
        if doc.nbest is not None and doc.nbest.gold is not None and not self._attached_is_dev():
            self._train = (
                doc.nbest,
                os.path.basename(doc.nbest_path) if doc.nbest_path else "the open N-best list",
            )

    def training_list(self) -> tuple[NBestList | None, str, bool]:
        """(the training list, its name, whether it is the attached list) — see the module docstring."""
        doc = self.doc
        if doc.nbest is not None and doc.nbest.gold is not None and not self._attached_is_dev():
            self._remember_attached()
            return self._train[0], self._train[1], True
        if self._train is None:
            path = training_sibling(doc.dev_nbest_path)
            if path is not None:
                try:
                    nb = NBestList.load(path)
                except (NerstudioError, OSError) as exc:
                    self.ctx.status(f"Teach: cannot read the training list {path}: {exc}", 8000)
                    nb = None
                if nb is not None and nb.gold is not None:
                    self._train = (nb, os.path.basename(path))
        if self._train is None:
            return None, "", False
        return self._train[0], self._train[1], False

    def prepare(self, force: bool = False) -> bool:
        """Give the panel the training list and the dev list as ranking data."""
        doc = self.doc
        nb, train_name, attached = self.training_list()
        if nb is None:
            self._source = None
            self.panel.set_no_data(
                "The open N-best list is the dev list: open the training corpus (its N-best list is the "
                "training list) to step through training."
                if doc.nbest is not None
                else None
            )
            return False
        dev_nb = (
            doc.dev_nbest if doc.dev_nbest is not None and doc.dev_nbest.gold is not None else None
        )
        key = (id(nb), id(dev_nb), id(doc.model), doc.gold_revision if attached else 0)
        if key == self._source and not force:
            return True
        self._source = key
        model = doc.model
        dev_name = (
            (
                os.path.basename(doc.dev_nbest_path)
                if doc.dev_nbest_path
                else "the dev list of this session"
            )
            if dev_nb is not None
            else ""
        )
        # the scored list's ranking data is the same thing, unless the gold was edited since
        sc = doc.scored
        reuse = (
            sc.data
            if (
                attached
                and sc is not None
                and model is not None
                and sc.model is model
                and doc.scores_current()
                and sc.data.nbest is nb
            )
            else None
        )
        snap = doc.nbest_snapshot() if attached else nb
        eps = getattr(getattr(model, "learner", None), "epsilon", None)
        n_train, n_dev = len(nb), (len(dev_nb) if dev_nb is not None else 0)
        sources = f"Trains on <b>{train_name}</b> ({n_train:,} sentences)" + (
            f" · dev F on <b>{dev_name}</b> ({n_dev:,} sentences)"
            if dev_nb is not None
            else " · no dev list: File ▸ Open dev N-best list… draws the dev F curve"
        )

        def compute(should_cancel=None, progress=None):
            def prog(stage):
                return None if progress is None else (lambda d, n: progress(stage, d, n))

            if model is not None and getattr(model, "features", None) is not None:
                feats = model.features
                train = (
                    reuse
                    if reuse is not None
                    else model.data(
                        snap,
                        progress=prog("global features of the training list"),
                        should_cancel=should_cancel,
                    )
                )
            else:
                from ...rerank.features import GlobalFeatures

                feats = GlobalFeatures()
                train = feats.fit_transform(
                    snap,
                    progress=prog("global features of the training list"),
                    should_cancel=should_cancel,
                )
            dev = (
                feats.transform(
                    dev_nb,
                    progress=prog("global features of the dev list"),
                    should_cancel=should_cancel,
                )
                if dev_nb is not None
                else None
            )
            return train, dev, list(feats.names_)

        def done(res):
            if key == self._source:
                self.panel.set_sources(sources)
                self.panel.set_data(*res, eps)

        def failed(message):
            if key == self._source:
                self._source = None
                self.panel.set_failed(f"Cannot prepare the step-through: {message}")

        size = sum(len(c) for c in nb.candidates)
        from ..views.stepper import LARGE as STEPPER_LARGE  # the panel's module: on first use

        if size <= STEPPER_LARGE:
            try:
                done(compute())
            except NerstudioError as exc:  # e.g. context features without documents
                failed(str(exc))
                return False
            return True
        self.panel.set_sources(sources)
        self.panel.set_preparing(
            f"Computing the global features of {len(nb):,} sentences for the step-through…"
        )
        self.ctx.jobs.view(
            "stepper", lambda ctx: compute(ctx.should_cancel, ctx.progress), done, failed
        )
        return True

    def _run_work(self, fn, on_done, on_fail) -> None:
        """The panel's executor: its setup and steps on large data."""
        self.ctx.jobs.view("stepper", lambda ctx: fn(), on_done, on_fail)
