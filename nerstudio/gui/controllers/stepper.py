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

The controller drives the Qt-free stepper (:mod:`nerstudio.experiments.stepthrough`; the panel,
:class:`~nerstudio.gui.views.stepper.StepperPanel`, only shows): Step does one round / update,
Run plays continuously at the speed of the slider (a QTimer; each tick is one step, a few
milliseconds on the demo corpus), Back takes the last step back, Reset starts over. On large
data (eng.train: seconds to set boosting up, up to a second a round) building the stepper and
each step run as view jobs in the window's worker; on small data they run at once, except the
first set-up of a learner in the session (loading its compiled code takes seconds), which runs
there too while the panel says it is preparing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Slot

from ...app.attachments import FileStamp
from ...app.document import ChangeKind
from ...app.list_roles import Held, TeachLists, pick_lists
from ...errors import NerstudioError
from ...nbest import NBestList
from . import Context

#: the changes after which the shown step-through is rebuilt
REBUILD_ON = (ChangeKind.CORPUS, ChangeKind.NBEST, ChangeKind.DEV, ChangeKind.MODEL)
MAX_BACK = 1000  # steps shown again when going back (as many as the steppers can take back)
LARGE = 20_000  # candidates: above this, setup and steps run in the background (eng.train has 278k)
# the learners built once in this process: the first boosting set-up imports scipy and loads its
# compiled code (seconds on a busy machine), so it runs in the background whatever the size (the
# perceptron's is plain numpy)
_LOADED: set[str] = set()
SLOW_FIRST = ("boost",)


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
        # the step-through: its data, the stepper (boosting's or the perceptron's) and its steps
        self.train: Any = None  # RankingData of the training list
        self.dev: Any = None  # and of the dev list (None: no curve)
        self.names: list[str] = []  # of the features
        self.learner: Any = None  # the stepper, once built
        self.last: Any = None  # the step shown
        self._shown: list = []  # the steps shown, the last MAX_BACK of them
        self._busy = False  # building the data or the stepper, or a step, in the background
        self._generation = 0  # bumped by every reset: a build that finishes late is dropped
        self._step_when_ready = False  # Step pressed while the data or the stepper was prepared
        self.timer = QTimer(self)  # Run: one step a tick
        self.timer.timeout.connect(self.step)
        views.when_built("stepper_panel", self._connect)
        views.stepper_dock.visibilityChanged.connect(lambda vis: vis and self.prepare())
        ctx.jobs.viewProgress.connect(self._on_progress)
        ctx.events.changed.connect(self._on_change)

    @property
    def panel(self):
        return self.v.stepper_panel  # built on first use

    def _connect(self, panel) -> None:
        panel.stepRequested.connect(self.step)
        panel.backRequested.connect(self.back)
        panel.resetRequested.connect(self.reset)
        panel.runToggled.connect(self._on_run)
        panel.speed.valueChanged.connect(lambda _v: self.timer.setInterval(panel.interval()))
        self.timer.setInterval(panel.interval())

    @Slot(str, str, int, int)
    def _on_progress(self, name: str, message: str, done: int, total: int) -> None:
        if name == "stepper" and self._busy and message:
            self.panel.set_note(message + (f" ({done:,}/{total:,})" if total > 1 else ""))

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
            self._no_data(
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
                train, dev, names = res
                self.set_data(train, dev, names, eps)

        def failed(message):
            if key == self._source:
                self._source = None
                self._failed(f"Cannot prepare the step-through: {message}")

        # always in the window's worker, the demo's lists too: entering Teach shows the panel at
        # once, saying what it prepares, and returns to the event loop
        self.panel.set_sources(sources)
        self._preparing(
            f"Computing the global features of {len(nb):,} sentences for the step-through…"
        )
        self.ctx.jobs.view(
            "stepper", lambda ctx: compute(ctx.should_cancel, ctx.progress), done, failed
        )
        return True

    # -- the step-through's states --------------------------------------------------------
    def _preparing(self, text: str) -> None:
        """The data is being computed (a view job)."""
        self._generation += 1
        self.pause()
        self.train = self.dev = self.learner = self.last = None
        self._busy = True
        self.panel.set_buttons(False)
        self.panel.table.setRowCount(0)
        self.panel.set_note(text)

    def _failed(self, text: str) -> None:
        self._busy = self._step_when_ready = False
        self.learner = None
        self.panel.set_buttons(False)
        self.panel.set_info(text)

    def _no_data(self, text: str | None = None) -> None:
        """Nothing to step through: why (``text``, else the panel's hint)."""
        self._generation += 1
        self.pause()
        self.train = self.dev = self.learner = self.last = None
        self._busy = self._step_when_ready = False
        self.panel.set_buttons(False)
        self.panel.show_no_data(text)

    def set_data(self, train, dev=None, names=None, epsilon: float | None = None) -> None:
        """Training (and dev) RankingData to step through; ``names`` of the features;
        ``epsilon``: boosting's (the loaded reranker's)."""
        self.train, self.dev = train, dev
        self.names = list(names if names is not None else getattr(train, "feature_names", []))
        if epsilon is not None:
            self.panel.set_epsilon(epsilon)
        self.reset()

    @property
    def busy(self) -> bool:
        """The data, the stepper or a step is being computed in the background."""
        return self._busy

    def large(self) -> bool:
        return self.train is not None and self.train.n_candidates > LARGE

    def _enable(self) -> None:
        st = self.learner
        on = st is not None and not self._busy
        self.panel.set_buttons(on, st is not None and on and st.can_go_back())

    def _run(self, fn: Callable[[], Any], done, background: bool | None = None) -> None:
        """``done(fn())``: in the background on large data (or when ``background``), else now."""
        if background is None:
            background = self.large()
        if not background:
            done(fn())
            return
        self._busy = True
        self.panel.set_buttons(False)
        gen = self._generation

        def ok(result):
            if gen != self._generation:
                return  # reset meanwhile
            self._busy = False
            self.panel.set_buttons(True, self.learner is not None and self.learner.can_go_back())
            done(result)

        def failed(message, *_tb):
            if gen != self._generation:
                return
            self._busy = self._step_when_ready = False
            self.pause()
            self.panel.set_info(f"Step-through failed: {message}")
            self._enable()

        self.ctx.jobs.view("stepper", lambda _ctx: fn(), ok, failed)

    # -- stepping -------------------------------------------------------------------------
    @Slot()
    def reset(self) -> None:
        """Start over: a new stepper of the panel's algorithm and parameter on the data."""
        self._generation += 1
        self._busy = False
        self.pause()
        self.last = self.learner = None
        self._shown = []
        panel = self.panel
        panel.show_start()
        if self.train is None:
            panel.set_buttons(False)
            return
        train, dev, names = self.train, self.dev, self.names
        from ...experiments.stepthrough import BoostingStepper, PerceptronStepper

        mode, value = panel.mode, panel.value

        def build():
            if mode == "boost":
                return BoostingStepper(train, dev, epsilon=value, names=names)
            return PerceptronStepper(train, dev, beta=value or 1.0, names=names)

        background = self.large() or (mode in SLOW_FIRST and mode not in _LOADED)
        if background:
            panel.set_note(
                f"Preparing the {panel.algo.currentText().split(' (')[0].lower()} on "
                f"{train.n_candidates:,} candidates…"
            )
        self._run(build, lambda st: self._built(st, mode), background)

    def _built(self, stepper, mode: str) -> None:
        _LOADED.add(mode)
        self.learner = stepper
        self._shown = []
        self._ready_text(stepper)
        self.panel.set_buttons(True, stepper.can_go_back())
        self._draw_curve()
        if self._step_when_ready:
            self._step_when_ready = False
            self.step()

    def _ready_text(self, stepper) -> None:
        if _boosting(stepper):
            self.panel.show_ready_boosting(
                stepper.session.n_pairs, stepper.loss(), stepper.session.alpha0
            )
        else:
            self.panel.show_ready_perceptron(len(stepper.sentences), stepper.beta)

    @Slot(bool)
    def _on_run(self, on: bool) -> None:
        if on and self.learner is not None:
            self.panel.set_running(True)
            self.timer.start()
        else:
            self.pause()

    def pause(self) -> None:
        self.timer.stop()
        panel = self.v.built("stepper_panel")
        if panel is not None:
            panel.set_running(False)

    @property
    def running(self) -> bool:
        return self.timer.isActive()

    @Slot()
    def step(self):
        """One round / update. On large data it is computed in the background and shown when it
        arrives (returns None then); on small data it is done and shown now (and returned)."""
        st = self.learner
        if st is None and self._busy:  # F10 while it prepares: the step follows when it is ready
            self._step_when_ready = True
            return None
        if st is None or self._busy:
            return None
        out = []
        self._run(st.step, lambda r: out.append(self._show_step(st, r)))
        return out[0] if out else None

    def _show_step(self, st, r):
        if r is None:
            self.pause()
            self.panel.show_exhausted(st.rounds)
            return None
        self._shown.append(r)
        del self._shown[:-MAX_BACK]
        self._display(st, r)
        self._enable()
        return r

    def _display(self, st, r) -> None:
        self.last = r
        self.panel.show_step(r, _boosting(st), self.train, self.names)
        self._draw_curve()

    @Slot()
    def back(self) -> bool:
        """Take the last step back: the learner as it was before it, the step before it shown
        again (or the start). On large data the learner is restored in the background."""
        st = self.learner
        if st is None or self._busy or not st.can_go_back():
            return False
        self.pause()

        def shown(ok) -> None:
            if not ok:
                return
            if self._shown:
                self._shown.pop()
            if self._shown:
                self._display(st, self._shown[-1])
            else:
                self.last = None
                self.panel.show_start()
                self._ready_text(st)
                self._draw_curve()
            self._enable()

        self._run(st.back, shown)
        return True

    def _draw_curve(self) -> None:
        hist = list(self.learner.history) if self.learner is not None else []
        self.panel.draw_curve(hist, "round" if _boosting(self.learner) else "update")


def _boosting(stepper) -> bool:
    from ...experiments.stepthrough import BoostingStepper

    return isinstance(stepper, BoostingStepper)
