"""The main window: a shell on screen at once, then the document, the job service, the views and
the controllers, wired together, with the menus and the toolbar.

``MainWindow(settings)`` builds everything in its constructor (tests, scripts, ``--screenshot``).
The application (:func:`nerstudio.gui.app.run`) opens it in phases instead, so that the user
sees the window before the heavy parts load: ``MainWindow(settings, shell=True)`` is the window
with its title, its saved (or first) geometry, its menu bar's titles and a tool bar's room (so
that nothing moves later) and a quiet "Starting nerstudio…" in the centre — importing this module
loads no numpy, no document model, no controller and no view; :meth:`MainWindow.first_screen`,
once the shell is on screen, builds the views and, for the demo, shows its first screen
(:mod:`.views.screen`: numpy, the document model and the controllers still unloaded); and
:meth:`MainWindow.finish` builds the rest in place. Closed before that, the shell just closes; a
build that fails is reported as a bug (log, dialog, and the centre of the window says so), never
an empty window.

The views are laid out in four workspaces (:mod:`.workspaces`, built in :mod:`.window_views`):
Annotate, Inspect, Train and Teach, chosen with the mode bar, the View menu or Ctrl+1…4; the
window restores the last one once the controllers exist (entering Teach prepares the stepper).

What the window shows comes from one :class:`~nerstudio.app.document.Document` (the open corpus,
the only copy of its gold, and what is attached to it). The behaviour lives in the controllers of
:mod:`nerstudio.gui.controllers`, one per feature; the window only connects the few signals that
cross features (a corpus opened → recovery offered; a results folder naming a sequence tagger →
the training controller opens it) and keeps the public names tests, benchmarks and
``app.py --screenshot`` use, forwarded to the part that owns each (:mod:`.window_names`). The
menus, the toolbar and the shortcut list are in :mod:`.window_menus`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QBoxLayout, QLabel, QWidget

from . import screen_fit
from .window_menus import WindowMenus

if TYPE_CHECKING:  # annotations only: these load with the window's second phase
    from ..app.document import Document
    from ..app.first_screen import DemoStart
    from .job_service import JobService
    from .window_views import Views

STARTING = "Starting nerstudio…"


class MainWindow(WindowMenus):
    """The main window; ``shell=True``: only its shell until :meth:`finish` (see the module)."""

    def __init__(self, settings: QSettings | None = None, *, shell: bool = False):
        super().__init__()
        self.setObjectName("mainWindow")
        self.settings = settings or QSettings()
        self.built = False  # the parts exist: at once, or once finish() has built them
        self.failed: str | None = None  # why finish() could not build them (a bug)
        self._closed = False  # closed as a shell: finish() builds nothing
        if shell:
            self.setWindowTitle("nerstudio")
            self._reserve_bars()
            self.setCentralWidget(_starting(self))
        else:
            self._build()
        geo = self.settings.value("window/geometry")
        if geo is not None:
            self.restoreGeometry(geo)
        else:
            self.resize(screen_fit.first_size(self))
        self.screen_fit = screen_fit.install(self)  # the frame never leaves the screen
        self._restore_state()  # a shell's: its tool bar shown or hidden as the user left it

    def first_screen(self) -> DemoStart | None:
        """The application's start with the demo, between the shell and :meth:`finish`: the
        views, and the demo's first screen when it can be shown (shown, painted at the next turn
        of the event loop): its first sentence, candidates, scores and features, shipped with it
        (:mod:`nerstudio.app.first_screen`), over the corpus of the user's copy — before numpy,
        the document model and the controllers load. Only at the window's usual look (the
        Inspect workspace, 100 % zoom); a bug in it is logged and the demo opens as usual. None
        when the window was closed or its views could not be built (a bug, as in
        :meth:`finish`)."""
        if self.built or self._closed or self.failed:
            return None
        try:
            v = self._build_views()
        except Exception as exc:
            self._build_failed(exc)
            return None
        from ..app import first_screen
        from ..app.demo_copy import user_demo
        from .zoom import saved_factor

        folder = user_demo()
        if folder is None or v.workspaces.current != "inspect" or saved_factor(self.settings) != 1:
            return first_screen.DemoStart(folder)
        try:
            start = first_screen.read(folder)
            if start.screen is not None and start.corpus is not None:
                from .views.screen import show

                show(self, v, start.screen, start.corpus)
        except Exception as exc:  # a shortcut's bug must not cost the user the window
            import traceback

            from .. import logs

            logs.log_error(
                f"the demo's first screen failed: {type(exc).__name__}: {exc}",
                "".join(traceback.format_exception(exc)),
                name="app",
            )
            return first_screen.DemoStart(folder)
        return start

    def finish(self) -> bool:
        """The second phase of a shell: build the parts in place. True once the window is built;
        False when it was closed first, or when the build failed (a bug: logged, reported in a
        dialog and in the window)."""
        if self.built or self._closed or self.failed:
            return self.built
        try:
            self._build()
            self._restore_state()
        except Exception as exc:  # a bug: say so, never leave a silent, half-made window
            self._build_failed(exc)
            return False
        return True

    def _build(self) -> None:
        from ..app.document import Document
        from ..app.suspects import SuspectQueue
        from .controllers import Context, DocumentEvents, SentenceCursor
        from .controllers.adjudication import AdjudicationController
        from .controllers.agreement import AgreementController
        from .controllers.annotation import AnnotationController
        from .controllers.browser import BrowserController
        from .controllers.candidates import CandidatesController
        from .controllers.comparison import ComparisonController
        from .controllers.files import FilesController
        from .controllers.loop import LoopController
        from .controllers.model_features import ModelFeaturesController
        from .controllers.notes import NotesController
        from .controllers.occurrences import OccurrencesController
        from .controllers.preannotate import PreannotateController
        from .controllers.stepper import StepperController
        from .controllers.suspects import SuspectsController
        from .controllers.training import TrainingController
        from .controllers.what_if import WhatIfController
        from .dialogs import Dialogs
        from .job_service import JobService
        from .zoom import Zoom

        self.dialogs = Dialogs(self, self.settings, self._corpus_folder)
        self.document = Document()
        # before every other listener: a corpus's queue is read before the views hear of it
        self.suspect_queue = SuspectQueue(self.document)
        self.jobs = JobService(self)
        # which sentence is shown (not "cursor": QWidget.cursor() is the mouse pointer's)
        self.sentence_cursor = SentenceCursor(self)
        self.setAcceptDrops(True)
        v = self._build_views()

        def status(msg: str, ms: int = 5000) -> None:
            v.status.showMessage(msg, ms)

        ctx = Context(
            self.document,
            DocumentEvents(self.document, self),
            self.jobs,
            self.dialogs,
            self.sentence_cursor,
            self.settings,
            status,
            self.suspect_queue,
        )
        # the order matters where two react to one change: the browser selects, then the rest follow
        self.browser = BrowserController(ctx, v, self)
        self.candidates = CandidatesController(ctx, v, self)
        self.annotation = AnnotationController(ctx, v, self)
        self.files = FilesController(ctx, v, self.annotation.confirm_unsaved, self)
        self.training = TrainingController(ctx, v, self)
        self.comparison = ComparisonController(ctx, v, self)
        self.model_features = ModelFeaturesController(ctx, v, self)
        self.stepper = StepperController(ctx, v, self)
        self.preannotate = PreannotateController(ctx, self)
        self.agreement = AgreementController(ctx, v, self)
        self.loop = LoopController(ctx, v, self)
        self.what_if = WhatIfController(ctx, v, self)
        self.notes = NotesController(ctx, v, self)
        self.occurrences = OccurrencesController(ctx, v, self)
        self.adjudication = AdjudicationController(ctx, self)
        # the folds of a ranking run where the training's do (the "Folds run on" setting)
        self.suspects = SuspectsController(ctx, v, self, self.training.fold_executor)
        self.files.corpusOpened.connect(self.annotation.offer_recovery)
        self.annotation.owner.reloadWanted.connect(
            lambda path, enc: self.files.open_corpus(path, True, enc)
        )
        self.comparison.devListWanted.connect(self.files.open_dev_nbest_dialog)
        self.files.ktModelRequested.connect(
            lambda path, n: self.training.load_kt_model(path, n or None)
        )
        self.annotation.dirtyChanged.connect(lambda _d: self._update_title())
        self.annotation.owner.lockChanged.connect(lambda _ro: self._update_title())
        self.annotation.owner.pathChanged.connect(lambda _p: self._after_save_as())
        self.training.busyChanged.connect(self._on_busy)
        # Ctrl+= / Ctrl+- / Ctrl+0, F11: the saved zoom applies now
        self.zoom = Zoom(self, self.settings)
        self._build_menus()
        self.annotation.guard_menus(self.menuBar())  # a letter in an open menu is the menu's
        # after the controllers: entering a workspace may prepare it
        v.workspaces.restore("inspect")
        self._update_title()
        self.training.update_state()
        self.built = True

    def _build_views(self) -> Views:
        """The window's widgets (:mod:`.window_views`), once: the first screen may have built
        them before the rest."""
        if getattr(self, "views", None) is None:
            from .window_views import Views

            self.views = Views(self, self.settings)
        return self.views

    def _restore_state(self) -> None:
        state = self.settings.value("window/state")
        if state is not None:
            self.restoreState(state)

    def _build_failed(self, exc: Exception) -> None:
        import traceback

        from .. import logs
        from .dialogs import Dialogs

        if getattr(self, "dialogs", None) is None:
            self.dialogs = Dialogs(self, self.settings)
        self.failed = f"the window could not be built: {type(exc).__name__}: {exc}"
        self.dialogs.bug(
            f"Starting nerstudio failed: {type(exc).__name__}: {exc}",
            "".join(traceback.format_exception(exc)),
        )
        notice = _failure(
            self,
            f"nerstudio could not start: {type(exc).__name__}: {exc}\n\nThis is a bug in "
            f"nerstudio; the details are in {logs.log_path()}",
        )
        self.setCentralWidget(notice)
        notice.show()  # the window is on screen already

    @property
    def runner(self) -> JobService:
        return self.jobs

    @property
    def view_jobs(self):
        return self.jobs.views

    @property
    def session(self) -> Document:
        return self.document

    @property
    def last_switch_ms(self) -> float:
        return self.sentence_cursor.last_ms

    # -- window ---------------------------------------------------------------------------
    def _update_title(self) -> None:
        c = self.document.corpus
        name = os.path.basename(c.path) if c is not None and c.path else "no corpus"
        # another window holds the file
        ro = " (read-only)" if self.annotation.owner.file.read_only else ""
        self.setWindowTitle(f"nerstudio — {name}{ro}[*]")  # Qt shows the '*' while modified
        self.setWindowModified(self.document.is_dirty())

    def _corpus_folder(self) -> str:
        """The open corpus's folder ("" without a corpus file): where Open dialogs start."""
        c = self.document.corpus if getattr(self, "document", None) is not None else None
        return os.path.dirname(os.path.abspath(c.path)) if c is not None and c.path else ""

    def _after_save_as(self) -> None:
        """The corpus is another file now: the title and the sentence's header name it."""
        self._update_title()
        if self.sentence_cursor.k >= 0:
            self.sentence_cursor.set(self.sentence_cursor.k)

    def dragEnterEvent(self, event) -> None:
        if self.built and event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        if not self.built:
            return
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.files.open_dropped(url.toLocalFile())
                break

    def closeEvent(self, event) -> None:
        if not self.built:  # a shell (or a failed build): nothing to confirm, only where it was
            self._closed = True
            jobs = getattr(self, "jobs", None)
            if jobs is not None:  # a failed build may have started the worker thread
                jobs.shutdown()
            self.settings.setValue("window/geometry", self.saveGeometry())
            super().closeEvent(event)
            return
        if (
            not self.annotation.confirm_unsaved()
            or not self.files.confirm_unsaved_models()
            or not self.adjudication.confirm_close()
        ):
            event.ignore()
            return
        self.stepper.pause()  # Run stops
        self.jobs.shutdown()
        self.training.close_executor()
        self.annotation.close()  # the corpus's lock goes
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.views.save(self.settings)
        super().closeEvent(event)


def _starting(parent: QWidget) -> QWidget:
    """The centre of the shell: "Starting nerstudio…" centred, in the theme's placeholder colour
    (centred by stretches: no Qt enum, whose namespace would cost more than the window)."""
    label = QLabel(STARTING)
    label.setObjectName("startNotice")
    pal = label.palette()
    pal.setColor(QPalette.ColorRole.WindowText, pal.color(QPalette.ColorRole.PlaceholderText))
    label.setPalette(pal)
    centre = QWidget(parent)
    rows = QBoxLayout(QBoxLayout.Direction.TopToBottom, centre)
    row = QBoxLayout(QBoxLayout.Direction.LeftToRight)
    rows.addStretch(1)
    rows.addLayout(row)
    rows.addStretch(1)
    row.addStretch(1)
    row.addWidget(label)
    row.addStretch(1)
    return centre


def _failure(parent: QWidget, text: str) -> QLabel:
    """The centre of a window whose build failed: what happened, centred, selectable."""
    from PySide6.QtCore import Qt

    label = QLabel(text, parent)
    label.setObjectName("startNotice")
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setMargin(24)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def __getattr__(name: str):
    """Names re-exported for tests and scripts (the demo's folders, two helpers of the
    controllers), loaded when first asked for: not with the shell."""
    if name in ("DEMO_DIR", "DEMO_MODEL_DIR"):
        from .. import demo

        return getattr(demo, name)
    if name == "companion_nbest":
        from .controllers.files import companion_nbest

        return companion_nbest
    if name == "sibling_dev":
        from .controllers.training import sibling_dev

        return sibling_dev
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
