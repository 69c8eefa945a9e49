"""The Teach workspace: boosting one round, or the perceptron one update, at a time.

Teach always trains on a *training* N-best list and draws its curve on a *dev* list, however they
were opened, and the panel names both. Which list plays which role is read from the lists
themselves (:mod:`nerstudio.app.list_roles`): a dev list attached with File ▸ Open N-best list
(or found beside the dev corpus) is still the dev list, and the training list is then the last
training list of this session, else ``train…`` beside it (``model/dev.nbest.npz`` →
``model/train.nbest.npz``); a training list without a dev list finds ``dev…`` beside it the same
way. The features are the loaded reranker's (or fitted on the training list), computed as a view
job in the window's worker (for the demo's lists too: entering Teach never waits for them).

The data is rebuilt whenever the lists, the reranker or the gold changed since, and — while Teach
is showing — as soon as a list, the corpus or the reranker changes (so a window that starts in
Teach is ready once the demo's lists are attached).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Slot

from ...app.attachments import FileStamp
from ...app.document import ChangeKind
from ...app.list_roles import Held, TeachLists, pick_lists
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


class StepperController(QObject):
    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self._source: tuple[int, int, int, int] | None = None  # what the data was made from
        self._train: Held | None = None  # the last training list seen
        self._found: dict[FileStamp, Held | None] = {}  # lists read from beside others
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
            old = self._train  # keep its gold of that corpus, not the corpus itself
            self._train = Held(plain_copy(old.nbest), old.path, old.name)
        if ch.kind in REBUILD_ON and self.v.stepper_dock.isVisible():
            self.prepare()

    def _held(self) -> tuple[Held | None, Held | None]:
        """The attached list and the list opened as the dev list, as Teach names them."""
        doc = self.doc
        attached = (
            Held.of(doc.nbest, doc.nbest_path, "the open N-best list")
            if doc.nbest is not None
            else None
        )
        dev = (
            Held.of(doc.dev_nbest, doc.dev_nbest_path, "the dev list of this session")
            if doc.dev_nbest is not None
            else None
        )
        return attached, dev

    def _corpus_path(self) -> str | None:
        c = self.doc.corpus
        return c.path if c is not None else None

    def _remember_attached(self) -> None:
        attached, dev = self._held()
        if attached is None:
            return
        lists = pick_lists(attached, dev, [], self._corpus_path(), lambda path: None)
        if lists.train_attached and lists.train is not None:
            self._train = lists.train

    def _load_beside(self, path: str) -> Held | None:
        """A list found beside another (read again only when its file changed)."""
        stamp = FileStamp.of(path)
        if stamp is None:
            return None
        if stamp not in self._found:
            try:
                self._found[stamp] = Held.of(NBestList.load(path), path, "")
            except (NerstudioError, OSError) as exc:
                self.ctx.status(f"Teach: cannot read {path}: {exc}", 8000)
                self._found[stamp] = None
        return self._found[stamp]

    def teach_lists(self) -> TeachLists:
        """The training list and the dev list Teach uses now — see the module docstring."""
        attached, dev = self._held()
        remembered = [self._train] if self._train is not None else []
        lists = pick_lists(attached, dev, remembered, self._corpus_path(), self._load_beside)
        if lists.train_attached:
            self._train = lists.train
        return lists

    def prepare(self, force: bool = False) -> bool:
        """Give the panel the training list and the dev list as ranking data."""
        doc = self.doc
        lists = self.teach_lists()
        if lists.train is None:
            self._source = None
            open_list = self._held()[0]
            self.panel.set_no_data(
                f"The open N-best list ({open_list.name}) is a dev list, and no training list is "
                "open or beside it: open the training corpus (its N-best list is the training "
                "list) to step through training."
                if open_list is not None and open_list.nbest.gold is not None
                else None
            )
            return False
        nb, train_name, attached = lists.train.nbest, lists.train.name, lists.train_attached
        dev_nb = lists.dev.nbest if lists.dev is not None else None
        dev_name = lists.dev.name if lists.dev is not None else ""
        edits = doc.gold_revision if attached or lists.dev_attached else 0
        key = (id(nb), id(dev_nb), id(doc.model), edits)
        if key == self._source and not force:
            return True
        self._source = key
        model = doc.model
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
        if lists.dev_attached:  # the dev list's gold as it is now (a worker reads it)
            dev_nb = doc.nbest_snapshot()
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

        # always in the window's worker, the demo's lists too: entering Teach shows the panel at
        # once, saying what it prepares, and returns to the event loop
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
