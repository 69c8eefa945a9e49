"""The main window: corpus browser, sentence view, N-best and feature panels, training, curves.

Everything shown comes from the :class:`~nerstudio.gui.session.Session` (core objects); long
steps (lining up and scoring N-best lists, opening a reranker, training) run as jobs on the
:class:`TaskRunner`'s worker thread, one at a time, the reranker stage of training in a child
process; the comparison and the step-through setup run on a second worker (:class:`JobQueue`);
figures are drawn by a render thread. A gold edit updates, for its sentence only, the N-best
list's gold and counts, the candidate table, the browser's marks and counts and the type masks.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections import Counter
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDockWidget, QFileDialog, QFrame, QHBoxLayout, QHeaderView,
                               QLabel, QLineEdit, QMainWindow, QMessageBox, QScrollArea, QSplitter, QTableWidget, QTableWidgetItem,
                               QTabWidget, QTreeView, QVBoxLayout, QWidget)

from .. import __version__
from ..demo import DEMO_DIR, DEMO_MODEL_DIR
from ..corpus.formats import read_corpus
from ..corpus.model import Corpus, Span
from ..errors import FormatError, NerstudioError
from ..nbest import NBestList
from .annotator import Annotator
from .jobs import dev_baseline, make_kt_open_job, make_kt_training_job, make_prepare_job, make_training_job
from .models.corpus_model import CorpusTreeModel, SentenceFilterProxy, status_text
from .models.feature_model import TermRow, rows_from_terms
from .session import FileStamp, Session
from .views.curve_plot import CurvePlot
from .views.feature_view import FeaturePanel
from .views.nbest_view import NBestPanel
from .views.palette import type_color
from .views.annotation_view import AnnotationView
from .views.comparison import ComparisonView
from .views.stepper import LARGE as STEPPER_LARGE
from .views.stepper import StepperPanel
from .views.training_panel import TrainingPanel
from .workers import JobQueue, TaskRunner, release_in_background

MAX_RECENT = 8
CORPUS_FILTER = "Corpora (*.conll *.txt *.tsv *.jsonl *.train *.testa *.testb *.dev *.test);;All files (*)"
NBEST_FILTER = "N-best lists (*.npz);;All files (*)"
MODEL_FILTER = "Models (*.npz);;All files (*)"
SESSION_FILE = "session.json"

STATUS_FILTERS = (
    ("All sentences", None, "Show every sentence"),
    ("Baseline wrong (top ≠ gold)", "error", "Sentences whose top tagger candidate is not exactly the gold"),
    ("Reranker changed the baseline", "changed", "Sentences where the reranker picks another candidate than the "
                                                 "tagger's top one"),
    ("Reranker wrong", "rerank_error", "Sentences where the reranker's pick is not exactly the gold"),
    ("Gold not in N-best", "missing", "Sentences whose gold analysis is not among the candidates"),
    ("Has an N-best list", "has_nbest", "Sentences with candidates"),
)


def sibling_dev(path: str | None) -> str:
    """A development file next to a training file (dev.conll, eng.testa, …), or ''."""
    if not path:
        return ""
    p = Path(path).resolve()
    names = ["dev" + p.suffix, "dev.conll", p.stem.replace("train", "dev") + p.suffix, "eng.testa", "testa",
             p.stem + ".testa", p.stem + ".dev"]
    for n in names:
        q = p.with_name(n)
        if q != p and q.is_file():
            return str(q)
    return ""


def companion_nbest(path: str | None) -> str | None:
    """An N-best list saved for this corpus: ``<stem>.nbest.npz`` beside it or in ``model/``."""
    if not path:
        return None
    p = Path(path)
    for q in (p.with_name(p.stem + ".nbest.npz"), p.parent / "model" / (p.stem + ".nbest.npz")):
        if q.is_file():
            return str(q)
    return None


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        self.setObjectName("mainWindow")
        self.settings = settings or QSettings()
        self.session = Session()
        self.runner = TaskRunner(self)
        self._job_done: dict[str, object] = {}
        self._run_curve: int | None = None
        self._run_settings = None
        self._current_k = -1
        self._flags: dict[str, np.ndarray] | None = None
        self._exact_cache = None
        self.last_switch_ms = 0.0
        self.last_error = ""
        # the reranker stage of a training run goes to a child process (its own interpreter lock)
        self.train_in_child = os.environ.get("NERSTUDIO_TRAIN_IN_PROCESS", "") in ("", "0")
        self.child_pid: int | None = None
        self.setAcceptDrops(True)
        self._build_ui()
        self.annotator = Annotator(self, self.settings)
        self.annotator.changed.connect(self._on_gold_changed)
        self.annotator.recovered.connect(self._on_gold_recovered)
        self.annotator.dirtyChanged.connect(lambda _d: self._update_title())
        self.sentence_view.editRequested.connect(self._on_edit_requested)
        self._build_actions()
        self._connect_runner()
        self._update_title()
        self._update_state()
        geo = self.settings.value("window/geometry")
        if geo is not None:
            self.restoreGeometry(geo)
        else:
            self.resize(1280, 800)
        state = self.settings.value("window/state")
        if state is not None:
            self.restoreState(state)

    @property
    def corpus(self) -> Corpus | None:
        return self.session.corpus

    # -- construction ---------------------------------------------------------------------
    def _build_ui(self) -> None:
        # corpus browser
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(4, 4, 4, 4)
        self.search = QLineEdit()
        self.search.setObjectName("corpusSearch")
        self.search.setPlaceholderText("Search sentences…  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip("Show only sentences containing this text (case-insensitive)")
        self.search.textChanged.connect(self._apply_filter)
        lv.addWidget(self.search)
        frow = QHBoxLayout()
        frow.setContentsMargins(0, 0, 0, 0)
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("statusFilter")
        for k, (label, key, tip) in enumerate(STATUS_FILTERS):
            self.status_filter.addItem(label, key)
            self.status_filter.setItemData(k, tip, Qt.ToolTipRole)
        self.status_filter.setToolTip("Filter sentences by how the tagger and the reranker do on them")
        self.status_filter.currentIndexChanged.connect(self._apply_filter)
        self.type_filter = QComboBox()
        self.type_filter.setObjectName("typeFilter")
        self.type_filter.addItem("Any type", None)
        self.type_filter.setToolTip("Show only sentences with a gold entity of this type")
        self.type_filter.currentIndexChanged.connect(self._apply_filter)
        frow.addWidget(self.status_filter, 3)
        frow.addWidget(self.type_filter, 2)
        lv.addLayout(frow)
        self.tree_model = CorpusTreeModel()
        self._summary_stale = False
        self.proxy = SentenceFilterProxy(self)
        self.proxy.setSourceModel(self.tree_model)
        self.corpus_view = QTreeView()
        self.corpus_view.setObjectName("corpusView")
        self.corpus_view.setModel(self.proxy)
        self.corpus_view.setUniformRowHeights(True)
        self.corpus_view.setAlternatingRowColors(True)
        self.corpus_view.setSelectionMode(QAbstractItemView.SingleSelection)
        hdr = self.corpus_view.header()
        hdr.setSectionResizeMode(0, QHeaderView.Stretch)
        fm = self.corpus_view.fontMetrics()
        for c, sample in ((1, "Tokens"), (2, "Entities"), (3, "✗→✓ ∉")):
            # fixed widths: ResizeToContents would ask every row for its data on each change
            hdr.setSectionResizeMode(c, QHeaderView.Interactive)
            hdr.resizeSection(c, fm.horizontalAdvance(sample) + 18)
        hdr.setStretchLastSection(False)
        self.corpus_view.selectionModel().currentChanged.connect(self._on_current_changed)
        self.tree_model.statusChanged.connect(self.corpus_view.viewport().update)
        lv.addWidget(self.corpus_view)
        self.filter_count = QLabel()
        self.filter_count.setObjectName("filterCount")
        lv.addWidget(self.filter_count)

        # sentence
        top = QWidget()
        tv = QVBoxLayout(top)
        tv.setContentsMargins(4, 4, 4, 0)
        self.sentence_header = QLabel("No corpus loaded")
        self.sentence_header.setObjectName("sentenceHeader")
        self.sentence_header.setTextInteractionFlags(Qt.TextSelectableByMouse)
        tv.addWidget(self.sentence_header)
        self.sentence_view = AnnotationView()
        self.sentence_view.setToolTip("Boxes: gold entities · bars: the selected candidate · red: they differ.\n"
                                      "Click or drag over tokens (Shift+arrows) to select; P/O/L/M (or 1–9) set the "
                                      "type, Delete clears, Ctrl(+Shift)+arrows extend (shrink), / splits, + merges")
        # a scroll area keeps a long sentence from resizing the panels below (and the figure)
        self.sentence_scroll = QScrollArea()
        self.sentence_scroll.setObjectName("sentenceScroll")
        self.sentence_scroll.setWidget(self.sentence_view)
        self.sentence_scroll.setWidgetResizable(True)
        self.sentence_scroll.setFrameShape(QFrame.NoFrame)
        self.sentence_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.sentence_scroll.setMinimumHeight(100)
        tv.addWidget(self.sentence_scroll, 1)
        self.legend = QLabel()
        self.legend.setObjectName("typeLegend")
        tv.addWidget(self.legend)

        # candidates and features
        self.nbest_panel = NBestPanel()
        self.nbest_view = self.nbest_panel.view
        self.nbest_panel.candidateSelected.connect(self._on_candidate)
        self.nbest_panel.pairSelected.connect(self._on_pair)
        self.feature_panel = FeaturePanel()
        self.feature_view = self.feature_panel.view
        self.feature_panel.group.setChecked(self.settings.value("features/grouped", "true") in ("true", True))
        mid = QSplitter(Qt.Horizontal)
        mid.setObjectName("candidateSplitter")
        mid.addWidget(self.nbest_panel)
        mid.addWidget(self.feature_panel)
        mid.setStretchFactor(0, 1)
        mid.setStretchFactor(1, 1)
        mid.setSizes([490, 460])

        # bottom tabs: curves, entities, corpus
        self.tabs = QTabWidget()
        self.tabs.setObjectName("bottomTabs")
        self.curve_plot = CurvePlot()
        self.curve_plot.show_p.setChecked(self.settings.value("curves/precision", "false") in ("true", True))
        self.curve_plot.show_r.setChecked(self.settings.value("curves/recall", "false") in ("true", True))
        self.tabs.addTab(self.curve_plot, "Training curves")
        self.entity_table = QTableWidget(0, 4)  # a handful of rows per sentence
        self.entity_table.setObjectName("entityTable")
        self.entity_table.setHorizontalHeaderLabels(["Type", "Entity", "Tokens", "Length"])
        self.entity_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)
        self.entity_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.entity_table.verticalHeader().setVisible(False)
        self.tabs.addTab(self.entity_table, "Gold entities")
        self.summary = QLabel()
        self.summary.setObjectName("corpusSummary")
        self.summary.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.summary.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.summary.setMargin(8)
        self.tabs.addTab(self.summary, "Corpus")
        self.comparison_view = ComparisonView()
        self.comparison_view.sentenceActivated.connect(self._on_comparison_sentence)
        self.comparison_view.refreshRequested.connect(lambda: self.refresh_comparison(force=True))
        self.tabs.addTab(self.comparison_view, "Comparison")
        self._comparison_stale = True
        self._comparison_gen = 0
        self._gold_edits = 0  # edits so far (a computation started before one is stale)
        self.view_jobs = JobQueue(self)  # the comparison and the step-through setup, beside training
        self.view_jobs.runner.progress.connect(self._on_view_progress)
        self.tabs.currentChanged.connect(self._on_tab_changed)

        right = QSplitter(Qt.Vertical)
        right.setObjectName("rightSplitter")
        right.addWidget(top)
        right.addWidget(mid)
        right.addWidget(self.tabs)
        right.setStretchFactor(0, 0)
        right.setStretchFactor(1, 3)
        right.setStretchFactor(2, 2)
        right.setSizes([175, 320, 255])

        split = QSplitter(Qt.Horizontal)
        split.setObjectName("mainSplitter")
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 5)
        split.setSizes([330, 950])
        self.setCentralWidget(split)
        self._splitters = (split, right, mid)
        for sp in self._splitters:
            st = self.settings.value(f"window/{sp.objectName()}")
            if st is not None:
                sp.restoreState(st)

        # training dock
        self.training_panel = TrainingPanel(self.settings)
        self.training_panel.trainRequested.connect(self.start_training)
        self.training_panel.cancelRequested.connect(self.cancel_job)
        self.training_dock = QDockWidget("Training", self)
        self.training_dock.setObjectName("trainingDock")
        scroll = QScrollArea()  # a long list of settings must not force the window's height
        scroll.setObjectName("trainingScroll")
        scroll.setWidget(self.training_panel)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(self.training_panel.sizeHint().width() + 16)
        self.training_dock.setWidget(scroll)
        self.training_dock.setAllowedAreas(Qt.LeftDockWidgetArea | Qt.RightDockWidgetArea)
        self.addDockWidget(Qt.RightDockWidgetArea, self.training_dock)
        self.training_dock.hide()
        self.train_button = self.training_panel.train_button

        # step-through dock (prepared when first shown)
        self.stepper_panel = StepperPanel()
        self.stepper_panel.set_executor(self._run_stepper_work)
        self.stepper_dock = QDockWidget("Step-through", self)
        self.stepper_dock.setObjectName("stepperDock")
        self.stepper_dock.setWidget(self.stepper_panel)
        self.addDockWidget(Qt.BottomDockWidgetArea, self.stepper_dock)
        self.stepper_dock.hide()
        self.stepper_dock.visibilityChanged.connect(lambda vis: vis and self.prepare_stepper())
        self._stepper_source = None
        self._scored_edits = 0  # the gold edit count when the displayed scores were computed
        self.cancel_button = self.training_panel.cancel_button

        from .views.status_bar import ElidedLabel, ElidingStatusBar
        self.setStatusBar(ElidingStatusBar(self))
        self.status = self.statusBar()
        self.state_label = ElidedLabel()
        self.state_label.setObjectName("stateLabel")
        self.status.addPermanentWidget(self.state_label)

    def _act(self, text, slot, shortcut=None, tip="", menu=None, checkable=False) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setStatusTip(tip)
            a.setToolTip(f"{tip} ({a.shortcut().toString()})" if shortcut is not None else tip)
        a.setCheckable(checkable)
        a.triggered.connect(slot)
        if menu is not None:
            menu.addAction(a)
        return a

    def _build_actions(self) -> None:
        menu = self.menuBar()
        filem = menu.addMenu("&File")
        self.act_open = self._act("&Open corpus…", self.open_dialog, QKeySequence.Open,
                                  "Open a corpus file (CoNLL, TSV, JSONL)", filem)
        self.recent_menu = filem.addMenu("Open &recent")
        self._refresh_recent()
        filem.addSeparator()
        self.act_open_nbest = self._act("Open &N-best list…", self.open_nbest_dialog, "Ctrl+Shift+O",
                                        "Open the N-best list of the open corpus", filem)
        self.act_open_dev = self._act("Open &dev N-best list…", self.open_dev_nbest_dialog, None,
                                      "Open the N-best list of the development set (for the training curve)", filem)
        self.act_open_model = self._act("Open reranker &model…", self.open_model_dialog, "Ctrl+M",
                                        "Open a trained reranker and score the candidates", filem)
        self.act_open_tagger = self._act("Open &tagger model…", self.open_tagger_dialog, None,
                                         "Open a trained tagger (decodes dev corpora)", filem)
        self.act_open_kt = self._act("Open se&quence tagger (K&&T)…", self.open_kt_dialog, None,
                                     "Open a perceptron or joint (Kazama & Torisawa) tagger and show its candidates "
                                     "for the open corpus", filem)
        self.act_open_results = self._act("Open results &folder…", self.open_results_dialog, "Ctrl+Shift+L",
                                          "Resume a saved session: N-best lists and models from a folder", filem)
        filem.addSeparator()
        self.act_save_corpus = self._act("&Save corpus", lambda: self.save_corpus(), QKeySequence.Save,
                                         "Save the gold annotations to the corpus file (its own format)", filem)
        self.act_save_corpus_as = self._act("Save corpus &as…", self.save_corpus_as_dialog, None,
                                            "Save the gold annotations to another file", filem)
        self.act_save = self._act("Save &results to folder…", self.save_results_dialog, "Ctrl+Shift+S",
                                  "Save the N-best lists, tagger and reranker of this session", filem)
        self.act_save_nbest = self._act("Save N-best list…", self.save_nbest_dialog, None,
                                        "Save the N-best list of the open corpus", filem)
        self.act_save_model = self._act("Save reranker model…", self.save_model_dialog, None,
                                        "Save the trained reranker", filem)
        self.act_save_kt = self._act("Save sequence tagger (K&&T)…", self.save_kt_dialog, None,
                                     "Save the perceptron or joint tagger trained in this session", filem)
        filem.addSeparator()
        self._act("&Quit", self.close, QKeySequence.Quit, "Quit nerstudio", filem)

        self._build_edit_menu(menu)

        navm = menu.addMenu("&Navigate")
        self.act_next = self._act("&Next sentence", lambda: self.step_sentence(1), "Ctrl+Down",
                                  "Next sentence (among those the filters show)", navm)
        self.act_prev = self._act("&Previous sentence", lambda: self.step_sentence(-1), "Ctrl+Up",
                                  "Previous sentence (among those the filters show)", navm)
        self.act_next_err = self._act("Next &error", lambda: self.step_matching("error", 1), "F8",
                                      "Next sentence whose top candidate is wrong", navm)
        self.act_next_changed = self._act("Next &change by the reranker", lambda: self.step_matching("changed", 1),
                                          "Shift+F8", "Next sentence where the reranker picks another candidate",
                                          navm)
        navm.addSeparator()
        self.act_find = self._act("&Find…", lambda: (self.search.setFocus(), self.search.selectAll()),
                                  QKeySequence.Find, "Search the sentences", navm)
        self._act("Focus &corpus", lambda: self.corpus_view.setFocus(), "Ctrl+1", "Focus the corpus browser", navm)
        self._act("Focus N-&best", lambda: self.nbest_view.setFocus(), "Ctrl+2", "Focus the candidate table", navm)
        self._act("Focus f&eatures", lambda: (self.feature_panel.search.setFocus(),
                                              self.feature_panel.search.selectAll()),
                  "Ctrl+3", "Filter the features", navm)
        self._act("Compare with &top candidate", self.compare_with_top, "Ctrl+D",
                  "Compare the selected candidate with the tagger's top candidate", navm)

        trainm = menu.addMenu("&Train")
        self.act_train = self._act("&Train", self.train_from_menu, "F5",
                                   "Start training with the settings of the training panel", trainm)
        self.act_cancel = self._act("&Cancel", self.cancel_job, "Shift+F5", "Stop the running job", trainm)
        self.act_cancel.setEnabled(False)
        trainm.addSeparator()
        self.act_show_training = self.training_dock.toggleViewAction()
        self.act_show_training.setText("Show training &panel")
        self.act_show_training.setShortcut(QKeySequence("Ctrl+T"))
        trainm.addAction(self.act_show_training)
        self.act_show_stepper = self.stepper_dock.toggleViewAction()
        self.act_show_stepper.setText("&Step through training")
        self.act_show_stepper.setShortcut(QKeySequence("Ctrl+Shift+T"))
        trainm.addAction(self.act_show_stepper)
        self.act_show_stepper.triggered.connect(lambda on: on and self.prepare_stepper())
        self._act("Export curve &image…", self.curve_plot.export_image_dialog, None,
                  "Save the training curves as PNG or SVG", trainm)
        self._act("Export curve &data…", self.curve_plot.export_csv_dialog, None,
                  "Save the training curves as CSV", trainm)

        helpm = menu.addMenu("&Help")
        self._act("&Keyboard shortcuts", self.show_shortcuts, QKeySequence.HelpContents,
                  "List the keyboard shortcuts", helpm)
        self._act("&About nerstudio", self.about, None, "About nerstudio and the papers it implements", helpm)

        tb = self.addToolBar("Main")
        tb.setObjectName("mainToolbar")
        for a in (self.act_open, self.act_open_nbest, self.act_open_model, self.act_save):
            tb.addAction(a)
        tb.addSeparator()
        for a in (self.act_prev, self.act_next, self.act_next_err):
            tb.addAction(a)
        tb.addSeparator()
        tb.addAction(self.act_show_training)
        tb.addAction(self.act_train)
        tb.addAction(self.act_cancel)

    def _connect_runner(self) -> None:
        r = self.runner
        r.started.connect(self._on_job_started)
        r.progress.connect(self._on_job_progress)
        r.stats.connect(self._on_job_stats)
        r.partial.connect(self._on_job_partial)
        r.finished.connect(self._on_job_finished)
        r.failed.connect(self._on_job_failed)
        r.cancelled.connect(self._on_job_cancelled)
        r.idle.connect(self._on_job_idle)

    # -- corpus ---------------------------------------------------------------------------
    def load_corpus(self, path: str, attach: bool = True) -> bool:
        if not self.confirm_unsaved():
            return False
        if self.runner.busy:
            self.status.showMessage("A job is running: cancel it before opening another corpus", 5000)
            return False
        try:
            corpus = read_corpus(path)
        except (NerstudioError, OSError) as exc:
            QMessageBox.critical(self, "Cannot open corpus", str(exc))
            return False
        self.set_corpus(corpus)
        gc.freeze()  # long-lived: keep full collections short (see _on_job_started)
        self._add_recent(corpus.path or path)
        if attach:
            comp = companion_nbest(corpus.path or path)
            if comp:
                self.load_nbest(comp)
        return True

    def set_corpus(self, corpus: Corpus) -> None:
        self.session.set_corpus(corpus)
        self._comparison_stale = True
        self._comparison_gen += 1  # a comparison of the previous corpus is of no use
        self.view_jobs.cancel()
        self.comparison_view.show_message("Load an N-best list with gold (and a reranker) to compare.")
        self._flags = None
        self._exact_cache = None
        self.tree_model.set_corpus(corpus)
        self.type_filter.blockSignals(True)
        self.type_filter.clear()
        self.type_filter.addItem("Any type", None)
        for lab in self.session.type_masks:
            self.type_filter.addItem(lab or "(untyped)", lab)
        self.type_filter.blockSignals(False)
        self.status_filter.blockSignals(True)
        self.status_filter.setCurrentIndex(0)
        self.status_filter.blockSignals(False)
        self._apply_filter()
        if len(corpus.documents) <= 50:
            self.corpus_view.expandToDepth(0)
        self._update_summary()
        self._update_title()
        if not self.training_panel.dev_path.text():
            self.training_panel.dev_path.setText(sibling_dev(corpus.path))
        note = f"; {corpus.repairs} invalid tag transitions repaired" if corpus.repairs else ""
        self.status.showMessage(f"Loaded {corpus.path}: {len(corpus.documents)} documents, "
                                f"{len(corpus)} sentences, {corpus.n_tokens} tokens{note}", 10000)
        self.legend.setText("  ".join(
            f'<span style="background:{type_color(lab).name()};color:white;padding:2px">&nbsp;{lab or "entity"}&nbsp;</span>'
            for lab in corpus.labels) + "   <i>boxes: gold · bars: candidate · red: differs</i>")
        self._update_state()
        self.annotator.reset()
        self.sentence_view.set_types(corpus.labels)
        if len(corpus):
            self.select_sentence(0)
        self._offer_recovery()

    def select_sentence(self, k: int) -> None:
        src = self.tree_model.index_of_sentence(k)
        idx = self.proxy.mapFromSource(src)
        if idx.isValid():
            self.corpus_view.scrollTo(idx)
            self.corpus_view.setCurrentIndex(idx)
            if self._current_k != k:
                self.show_sentence(k)
        else:
            self.show_sentence(k)

    def current_sentence_index(self) -> int:
        idx = self.corpus_view.currentIndex()
        k = self.tree_model.sentence_index(self.proxy.mapToSource(idx)) if idx.isValid() else -1
        return k if k >= 0 else self._current_k

    def step_sentence(self, delta: int) -> None:
        if not self.corpus or not len(self.corpus):
            return
        k = self.current_sentence_index()
        n = len(self.corpus)
        if not self.proxy.active:
            k = 0 if k < 0 else min(max(k + delta, 0), n - 1)
            self.select_sentence(k)
            return
        j = k + delta
        while 0 <= j < n:
            if self.proxy.accepts(j):
                self.select_sentence(j)
                return
            j += delta
        self.status.showMessage("No more sentences match the filters", 3000)

    def step_matching(self, flag: str, delta: int) -> None:
        if not self.corpus or not len(self.corpus):
            return
        mask = self.flags().get(flag)
        if mask is None or not mask.any():
            self.status.showMessage("No such sentence (is an N-best list / reranker loaded?)", 4000)
            return
        k = self.current_sentence_index()
        hits = np.flatnonzero(mask & self._visible_mask())
        nxt = hits[hits > k] if delta > 0 else hits[hits < k][::-1]
        if len(nxt):
            self.select_sentence(int(nxt[0]))
        else:
            self.status.showMessage("No more such sentences", 3000)

    def _visible_mask(self) -> np.ndarray:
        n = len(self.corpus)
        if not self.proxy.active:
            return np.ones(n, dtype=bool)
        return np.fromiter((self.proxy.accepts(k) for k in range(n)), dtype=bool, count=n)

    @Slot(object, object)
    def _on_current_changed(self, current, _previous) -> None:
        k = self.tree_model.sentence_index(self.proxy.mapToSource(current))
        if k >= 0:
            self.show_sentence(k)

    def show_sentence(self, k: int) -> None:
        t0 = time.perf_counter()
        c = self.corpus
        s = c.sentences[k]
        self._current_k = k
        doc = self.tree_model.document_of(k)
        where = f"{os.path.basename(c.path or '')}:{s.line}" if s.line else ""
        self.sentence_header.setText(f"<b>Sentence {k + 1}</b> of {len(c):,} · document "
                                     f"{c.documents[doc].id} · {len(s)} tokens · {where}")
        self._fill_entity_table(s)
        i = self.session.nbest_row(k)
        if i < 0:
            self.sentence_view.set_sentence(s.words, s.spans)
            if self.session.nbest is None:
                self.nbest_panel.clear("No N-best list loaded — File ▸ Open N-best list…, or train in the "
                                       "training panel (Ctrl+T)")
            else:
                self.nbest_panel.clear("This sentence has no candidates in the N-best list")
            self.feature_panel.show_message("No candidates for this sentence")
        else:
            self._show_candidates(k, i)
        self.last_switch_ms = (time.perf_counter() - t0) * 1000

    def _fill_entity_table(self, s) -> None:
        self.entity_table.setRowCount(len(s.spans))
        for r, sp in enumerate(s.spans):
            item = QTableWidgetItem(sp.label or "entity")
            item.setForeground(type_color(sp.label))
            self.entity_table.setItem(r, 0, item)
            self.entity_table.setItem(r, 1, QTableWidgetItem(sp.text(s.words)))
            self.entity_table.setItem(r, 2, QTableWidgetItem(f"{sp.start}–{sp.end - 1}"))
            self.entity_table.setItem(r, 3, QTableWidgetItem(str(len(sp))))

    def _gold_for(self, i: int, k: int) -> list[Span]:
        nb = self.session.nbest
        if nb is not None and nb.gold is not None:
            return list(nb.gold[i])
        return list(self.corpus.sentences[k].spans)

    def _show_candidates(self, k: int, i: int) -> None:
        ses = self.session
        nb = ses.nbest
        ix = ses.nbest_index
        spans = nb.candidate_spans(i)
        scores = ses.scores_of(i)
        f = ix.span_f(i)
        exact = self._exact()
        ex = None if exact is None else exact[ses.candidate_rows(i)]
        chosen = ses.reranked_choice(i)
        self.nbest_panel.set_score_label("score" if ses.kt is not None else "L(x)")
        self.nbest_panel.set_candidates(nb.words[i], spans, nb.logprobs[i], scores, f, chosen, ex,
                                        header=self._candidates_header(i, ex))
        if spans:
            self.nbest_panel.select(chosen if chosen is not None and chosen >= 0 else 0)
        else:
            self.sentence_view.set_sentence(nb.words[i], self._gold_for(i, k), [])

    def _candidates_header(self, i: int, ex) -> str:
        parts = [f"<b>{self.session.nbest.n_candidates(i)} candidates</b>"]
        if ex is not None:
            gold_at = np.flatnonzero(ex)
            parts.append(f"gold is candidate {gold_at[0] + 1}" if len(gold_at) else
                         "<span style='color:#c62828'>gold not among them</span>")
        chosen = self.session.reranked_choice(i)
        if chosen is not None:
            parts.append("reranker keeps the top candidate" if chosen == 0 else
                         f"<b>reranker picks candidate {chosen + 1}</b>")
        return " · ".join(parts)

    def _exact(self):
        if self._exact_cache is None and self.session.nbest_index is not None:
            self._exact_cache = self.session.nbest_index.exact()
        return self._exact_cache

    # -- candidates and features ----------------------------------------------------------
    def _cur_nbest_row(self) -> int:
        return self.session.nbest_row(self._current_k)

    @Slot(int)
    def _on_candidate(self, j: int) -> None:
        i = self._cur_nbest_row()
        if i < 0:
            return
        nb = self.session.nbest
        chosen = self.session.reranked_choice(i)
        name = f"candidate {j + 1}" + (" (reranker's pick)" if chosen == j else "")
        self.sentence_view.set_sentence(nb.words[i], self._gold_for(i, self._current_k), nb.spans(i, j), name)
        if self.session.kt is not None:
            self._explain_kt(i, j)
            return
        sc = self.session.scored
        if sc is None:
            self.feature_panel.show_message("<i>No reranker loaded: open one (Ctrl+M) or train one (F5) to see "
                                            "each candidate's global features and weights.</i>")
            return
        row = self.session.data_row(i, j)
        try:
            expl = sc.model.explain(sc.data, row)
        except Exception as exc:  # noqa: BLE001 - a model that cannot explain must not break the panel
            self.feature_panel.show_message(f"<i>This reranker cannot list per-feature contributions: {exc}</i>")
            return
        rows = rows_from_terms(expl.terms)
        score = float(getattr(expl, "score", sc.scores[row]))
        lx = next((r for r in rows if r.name == "L(x)"), None)
        n_feat = sum(1 for r in rows if r.name != "L(x)")
        head = (f"<b>Candidate {j + 1}</b> · score F(x) = {score:.3f}"
                + (f" = L(x) term {lx.contribution:+.3f}" if lx else "")
                + f" + {n_feat} global features {score - (lx.contribution if lx else 0):+.3f}")
        self.feature_panel.show_terms(rows, head)

    @Slot(int, int)
    def _on_pair(self, a: int, b: int) -> None:
        i = self._cur_nbest_row()
        if i < 0:
            return
        nb = self.session.nbest
        self.sentence_view.set_sentence(nb.words[i], self._gold_for(i, self._current_k), nb.spans(i, a),
                                        f"candidate {a + 1}")
        if self.session.kt is not None:
            self._compare_kt(i, a, b)
            return
        sc = self.session.scored
        if sc is None:
            self.feature_panel.show_message("<i>No reranker loaded: nothing separates the candidates yet.</i>")
            return
        ra, rb = self.session.data_row(i, a), self.session.data_row(i, b)
        try:
            cmp_ = sc.model.compare(sc.data, ra, rb)
        except Exception as exc:  # noqa: BLE001 - a model that cannot explain must not break the panel
            self.feature_panel.show_message(f"<i>This reranker cannot compare feature by feature: {exc}</i>")
            return
        rows = rows_from_terms(cmp_.terms, compare=True)
        for r in rows:
            if r.name == "L(x)":  # show both log-probabilities rather than their difference
                r.a, r.b = float(sc.data.L[ra]), float(sc.data.L[rb])
        delta = float(getattr(cmp_, "delta", sc.scores[ra] - sc.scores[rb]))
        winner, loser = (a, b) if delta >= 0 else (b, a)
        top = sorted(rows, key=lambda r: -r.contribution if delta >= 0 else r.contribution)[:2]
        why = ", ".join(f"{r.name} ({r.contribution:+.2f})" for r in top)
        head = (f"<b>A = candidate {a + 1}</b> ({sc.scores[ra]:.3f}) vs <b>B = candidate {b + 1}</b> "
                f"({sc.scores[rb]:.3f}): F(A) − F(B) = <b>{delta:+.3f}</b>. The reranker prefers candidate "
                f"{winner + 1} over {loser + 1}" + (f", mostly because of {why}" if why else "") + ".")
        self.feature_panel.show_terms(rows, head, compare=True)

    def _explain_kt(self, i: int, j: int) -> None:
        """Candidate j of a K&T tagger: the non-local features of its document candidate."""
        kt = self.session.kt
        terms, total, nl, d, jj = kt.explain(i, j)
        kind = _kt_kind(kt.model)
        doc_name = kt.doc_nbest.ids[d] if d < len(kt.doc_nbest.ids) else str(d + 1)
        if not kt.joint:
            self.feature_panel.show_message(
                f"<b>Candidate {j + 1}</b> · local score Φ·w = {total:.3f} (document candidate {jj + 1} of "
                f"{doc_name}). <i>The {kind} tagger has local features only: no non-local features to show. "
                "Train the candidate or proposed algorithm for those.</i>")
            return
        rows = [TermRow(name, fam, c, None, w, cw) for name, fam, c, w, cw in terms]
        head = (f"<b>Candidate {j + 1}</b> · {kind}: total score {total:.3f} = local {total - nl:+.3f} + "
                f"non-local {nl:+.3f} ({len(terms)} non-local features of document candidate {jj + 1} "
                f"of {doc_name})")
        self.feature_panel.show_terms(rows, head)

    def _compare_kt(self, i: int, a: int, b: int) -> None:
        kt = self.session.kt
        if not kt.joint:
            ea, eb = kt.explain(i, a), kt.explain(i, b)
            self.feature_panel.show_message(
                f"<b>A = candidate {a + 1}</b> ({ea[1]:.3f}) vs <b>B = candidate {b + 1}</b> ({eb[1]:.3f}): "
                f"local score difference {ea[1] - eb[1]:+.3f}. <i>Local features only: no non-local features.</i>")
            return
        terms, ea, eb = kt.compare(i, a, b)
        rows = [TermRow(name, fam, x, y, w, c) for name, fam, x, y, w, c in terms]
        delta, dnl = ea[1] - eb[1], ea[2] - eb[2]
        top = sorted(rows, key=lambda r: -r.contribution if delta >= 0 else r.contribution)[:2]
        why = ", ".join(f"{r.name} ({r.contribution:+.2f})" for r in top)
        same = " (the same document candidate)" if ea[4] == eb[4] else ""
        head = (f"<b>A = candidate {a + 1}</b> ({ea[1]:.3f}) vs <b>B = candidate {b + 1}</b> ({eb[1]:.3f}){same}: "
                f"total A − B = <b>{delta:+.3f}</b> = local {delta - dnl:+.3f} + non-local {dnl:+.3f}"
                + (f"; non-local features moving it most: {why}" if why else "") + ".")
        self.feature_panel.show_terms(rows, head, compare=True)

    def compare_with_top(self) -> None:
        sel = self.nbest_panel.selected()
        j = sel[0] if sel else self.nbest_panel.model.chosen()
        if j is None or j <= 0 or self.nbest_panel.model.rowCount() < 2:
            j = 1 if self.nbest_panel.model.rowCount() > 1 else None
        if j is not None:
            self.nbest_panel.select(j, 0)

    # -- filters --------------------------------------------------------------------------
    def flags(self) -> dict[str, np.ndarray]:
        if self._flags is None:
            self._flags = self.session.flags()
        return self._flags

    @Slot()
    def _apply_filter(self, *_args) -> None:
        if self.corpus is None:
            return
        mask = None
        key = self.status_filter.currentData()
        if key:
            m = self.flags().get(key)
            mask = m if m is not None else np.zeros(len(self.corpus), dtype=bool)
        lab = self.type_filter.currentData()
        if lab is not None and lab in self.session.type_masks:
            tm = self.session.type_masks[lab]
            mask = tm if mask is None else (mask & tm)
        self.proxy.set_filter(self.search.text(), mask)
        if self.proxy.active:
            n = int(self._visible_mask().sum())
            self.filter_count.setText(f"{n:,} of {len(self.corpus):,} sentences shown")
            if n <= 2000:
                self.corpus_view.expandAll()
        else:
            self.filter_count.setText(f"{len(self.corpus):,} sentences in {len(self.corpus.documents):,} documents")

    def _refresh_flags(self) -> None:
        self._comparison_stale = True
        if self.tabs.currentWidget() is self.comparison_view:
            self.refresh_comparison()
        self._flags = None
        self._exact_cache = None
        if self.corpus is None:
            return
        flags = self.flags()
        self.tree_model.set_status(flags if self.session.nbest is not None else None)
        if self.status_filter.currentData():
            self._apply_filter()

    # -- N-best lists and models ----------------------------------------------------------
    def _busy_refusal(self) -> bool:
        if self.runner.busy:
            QMessageBox.information(self, "Busy", f"A job is running ({self.runner.name}). Wait for it or cancel it "
                                                  "(Shift+F5) first.")
            return True
        return False

    def load_nbest(self, path: str) -> bool:
        if self.corpus is None:
            QMessageBox.information(self, "No corpus", "Open the corpus the N-best list belongs to first.")
            return False
        if self._busy_refusal():
            return False
        stamp = FileStamp.of(path)
        try:
            nb = NBestList.load(path)
        except (NerstudioError, OSError, ValueError) as exc:
            QMessageBox.critical(self, "Cannot open N-best list", str(exc))
            return False
        return self.attach_nbest(nb, path, stamp)

    def attach_nbest(self, nb: NBestList, path: str | None = None, stamp: FileStamp | None = None) -> bool:
        job = make_prepare_job(self.corpus, nb, self.session.model)
        self._job_done["prepare"] = lambda res: self._install_prepared(res, path, stamp)
        return self.runner.start("prepare", job)

    def _install_prepared(self, res, path, stamp: FileStamp | None = None) -> None:
        ix, scored = res
        res = None
        old = [self.session.scored, self.session.nbest_index]  # freed in another thread
        if ix is not None:
            self.session.install(index=ix, path=path, stamp=stamp)
            missing = len(ix.row_of) - ix.matched
            msg = f"N-best list {os.path.basename(path or 'new')}: {ix.matched:,} of {len(ix.row_of):,} sentences"
            if missing:
                msg += f" ({missing:,} without candidates)"
            self.status.showMessage(msg, 8000)
        if scored is not None:
            self.session.install(scored=scored)
            self._scored_edits = self._gold_edits
        if ix is not None:
            self._sync_unsaved_gold()
        ix = scored = None
        self._refresh_flags()
        self._update_state()
        if self._current_k >= 0:
            self.show_sentence(self._current_k)
        release_in_background(old)

    def _sync_unsaved_gold(self) -> None:
        """A newly attached N-best list carries the gold of its file: give it the corpus's
        unsaved edits (made before it was attached, or recovered after a crash), so its quality
        columns and the next training run see what the sentence view shows."""
        ann = getattr(self, "annotator", None)
        if ann is None or self.corpus is None:
            return
        for k in ann.unsaved():
            self.session.set_gold(k, self.corpus.sentences[k].spans)

    def load_model(self, path: str) -> bool:
        """Open a reranker (read in the worker: a large feature index takes a while) and score
        the displayed N-best list with it."""
        if self._busy_refusal():
            return False

        def job(ctx):
            from ..rerank.model import RerankerModel
            ctx.progress(f"reading the reranker {os.path.basename(path)}…")
            try:
                return RerankerModel.load(path)
            except (OSError, ValueError, KeyError) as exc:
                raise FormatError(path, None, str(exc)) from None
        self._job_done["model"] = lambda model: self._install_model(model, path)
        return self.runner.start("model", job)

    def _install_model(self, model, path: str) -> None:
        old = [self.session.model]
        self.session.model, self.session.model_path = model, path
        model = None
        release_in_background(old)
        self._load_history(self.session.model, path)
        self.rescore()

    def rescore(self) -> bool:
        """Score the displayed N-best list with the session's reranker (in the worker)."""
        ses = self.session
        if ses.model is None or ses.nbest is None:
            self._update_state()
            return True
        job = make_prepare_job(self.corpus, None, ses.model, ses.nbest)
        self._job_done["prepare"] = lambda res: self._install_prepared(res, ses.nbest_path)
        return self.runner.start("prepare", job)

    def _load_history(self, model, path: str) -> None:
        """Show a loaded model's training curve (the model file keeps its history)."""
        learner = getattr(model, "learner", None)
        hist = getattr(learner, "history_", None) or getattr(model, "history_", None)
        if not hist:
            return
        unit = getattr(hist[0], "unit", None) or (hist[0].get("unit") if isinstance(hist[0], dict) else None) or "epoch"
        base = dev_baseline(self.session.dev_nbest) if self.session.dev_nbest is not None else None
        run = self.curve_plot.start_run(f"{_describe_model(model)} [{os.path.basename(path)}]", unit, base)
        self.curve_plot.add_points(run, hist)
        self.curve_plot.finish_run(run)

    def load_tagger(self, path: str) -> bool:
        from ..tagging.maxent import MaxEntTagger
        try:
            self.session.tagger = MaxEntTagger.load(path)
        except (NerstudioError, OSError, ValueError, KeyError) as exc:
            QMessageBox.critical(self, "Cannot open tagger", str(exc))
            return False
        self.session.tagger_path = path
        self._update_state()
        return True

    def load_dev_nbest(self, path: str) -> bool:
        stamp = FileStamp.of(path)
        try:
            self.session.dev_nbest = NBestList.load(path)
        except (NerstudioError, OSError, ValueError) as exc:
            QMessageBox.critical(self, "Cannot open N-best list", str(exc))
            return False
        self.session.dev_nbest_path = path
        self.session.dev_nbest_file = stamp
        if self.training_panel.dev_path.text() == "" or not self.training_panel.running:
            self.training_panel.dev_path.setText(path)
        self._update_state()
        return True

    def load_results(self, folder: str) -> bool:
        """Resume a session saved with :meth:`save_results` (plain files listed in session.json)."""
        f = Path(folder)
        try:
            info = json.loads((f / SESSION_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            QMessageBox.critical(self, "Cannot open results", f"{f / SESSION_FILE}: {exc}")
            return False
        if self._busy_refusal():
            return False
        corpus = info.get("corpus")
        if corpus and (self.corpus is None or os.path.abspath(self.corpus.path or "") != os.path.abspath(corpus)):
            if not os.path.isfile(corpus) or not self.load_corpus(corpus, attach=False):
                return False
        if info.get("tagger"):
            self.load_tagger(str(f / info["tagger"]))
        if info.get("dev_nbest"):
            self.load_dev_nbest(str(f / info["dev_nbest"]))
        if info.get("model"):
            try:
                from ..rerank.model import RerankerModel
                self.session.model = RerankerModel.load(str(f / info["model"]))
                self.session.model_path = str(f / info["model"])
                self._load_history(self.session.model, str(f / info["model"]))
            except (ImportError, NerstudioError, OSError, ValueError, KeyError) as exc:
                QMessageBox.warning(self, "Cannot open reranker", str(exc))
        if info.get("kt_model") and (info.get("nbest_from_kt") or not info.get("nbest")):
            # the shown candidates were the tagger's: decode again (their non-local features need it)
            return self.load_kt_model(str(f / info["kt_model"]), info.get("kt_n"))
        if info.get("nbest"):
            return self.load_nbest(str(f / info["nbest"]))
        return self.rescore()

    def save_results(self, folder: str) -> list[str]:
        ses = self.session
        f = Path(folder)
        f.mkdir(parents=True, exist_ok=True)
        info: dict = {"format": "nerstudio-session", "version": 1,
                      "corpus": os.path.abspath(self.corpus.path) if self.corpus and self.corpus.path else None}
        written = []
        stem = Path(self.corpus.path).stem if self.corpus and self.corpus.path else "corpus"
        if ses.nbest is not None:
            ses.nbest.save(str(f / f"{stem}.nbest.npz"))
            info["nbest"] = f"{stem}.nbest.npz"
        if ses.dev_nbest is not None:
            ses.dev_nbest.save(str(f / "dev.nbest.npz"))
            info["dev_nbest"] = "dev.nbest.npz"
        if ses.tagger is not None:
            ses.tagger.save(str(f / "tagger.npz"))
            info["tagger"] = "tagger.npz"
        if ses.model is not None:
            ses.model.save(str(f / "reranker.npz"))
            info["model"] = "reranker.npz"
        if ses.kt_model is not None:
            ses.kt_model.save(str(f / "sequence-tagger.npz"))
            info["kt_model"] = "sequence-tagger.npz"
            info["nbest_from_kt"] = ses.kt is not None
            if ses.kt is not None:  # the size of the shown lists, to decode the same ones again
                info["kt_n"] = max((ses.kt.doc_nbest.n_candidates(d) for d in range(len(ses.kt.doc_nbest))), default=0)
        (f / SESSION_FILE).write_text(json.dumps(info, indent=1), encoding="utf-8")
        written = [k for k in ("nbest", "dev_nbest", "tagger", "model", "kt_model") if k in info]
        return written

    # dialogs
    def _ask_open(self, title: str, filt: str, key: str) -> str | None:
        start = self.settings.value(f"files/{key}Dir", self.settings.value("files/lastDir", ""))
        path, _ = QFileDialog.getOpenFileName(self, title, start, filt)
        if path:
            self.settings.setValue(f"files/{key}Dir", os.path.dirname(path))
        return path or None

    def open_dialog(self) -> None:
        path = self._ask_open("Open corpus", CORPUS_FILTER, "last")
        if path:
            self.load_corpus(path)

    def open_nbest_dialog(self) -> None:
        path = self._ask_open("Open N-best list", NBEST_FILTER, "nbest")
        if path:
            self.load_nbest(path)

    def open_dev_nbest_dialog(self) -> None:
        path = self._ask_open("Open dev N-best list", NBEST_FILTER, "nbest")
        if path:
            self.load_dev_nbest(path)

    def open_model_dialog(self) -> None:
        path = self._ask_open("Open reranker model", MODEL_FILTER, "model")
        if path:
            self.load_model(path)

    def open_tagger_dialog(self) -> None:
        path = self._ask_open("Open tagger model", MODEL_FILTER, "model")
        if path:
            self.load_tagger(path)

    def open_results_dialog(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Open results folder", self.settings.value("files/resultsDir", ""))
        if d:
            self.settings.setValue("files/resultsDir", d)
            self.load_results(d)

    def save_results_dialog(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Save results to folder", self.settings.value("files/resultsDir", ""))
        if d:
            self.settings.setValue("files/resultsDir", d)
            try:
                written = self.save_results(d)
            except (OSError, NerstudioError, ValueError) as exc:
                QMessageBox.critical(self, "Cannot save", str(exc))
                return
            self.status.showMessage(f"Saved {', '.join(written) or 'nothing'} to {d}", 8000)

    def save_nbest_dialog(self) -> None:
        if self.session.nbest is None:
            self.status.showMessage("No N-best list to save", 4000)
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save N-best list", "", NBEST_FILTER)
        if path:
            try:
                self.session.nbest.save(path)
            except (OSError, ValueError) as exc:
                QMessageBox.critical(self, "Cannot save", str(exc))
                return
            self.status.showMessage(f"Saved {path}", 5000)

    def save_model_dialog(self) -> None:
        if self.session.model is None:
            self.status.showMessage("No reranker to save", 4000)
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save reranker model", "reranker.npz", MODEL_FILTER)
        if path:
            try:
                self.session.model.save(path)
            except (OSError, ValueError) as exc:
                QMessageBox.critical(self, "Cannot save", str(exc))
                return
            self.status.showMessage(f"Saved {path}", 5000)

    # -- training -------------------------------------------------------------------------
    def train_from_menu(self) -> None:
        self.training_dock.show()
        self.training_dock.raise_()
        self.training_panel._on_train()

    @Slot(object)
    def start_training(self, settings) -> bool:
        if self.runner.busy:
            self.status.showMessage(f"Busy ({self.runner.name}): one run at a time", 4000)
            return False
        ses = self.session
        if settings.start == "kt":
            return self._start_kt(settings)
        if settings.start == "reranker" and ses.nbest is None:
            QMessageBox.information(self, "No N-best list", "Open the N-best list of the training corpus "
                                    "(File ▸ Open N-best list…) or choose the full pipeline.")
            return False
        unit = "round" if settings.algo.startswith("boost") else "epoch"
        base = dev_baseline(ses.dev_nbest) if (settings.start == "reranker" and not settings.dev_path
                                               and ses.dev_nbest is not None) else None
        self._run_curve = self.curve_plot.start_run(settings.label(), unit, base)
        self._run_settings = settings
        dev_nb = ses.dev_nbest if settings.start == "reranker" else None
        if settings.dev_path and ses.dev_nbest_path and os.path.abspath(settings.dev_path) == \
                os.path.abspath(ses.dev_nbest_path) and settings.start == "reranker":
            settings = type(settings)(**{**settings.__dict__, "dev_path": ""})  # already loaded
        # lists read from files and unchanged since: the training process reads those files
        files = (ses.nbest_source() if settings.start == "reranker" else None,
                 ses.dev_nbest_source() if dev_nb is not None else None)
        job = make_training_job(settings, self._run_curve, self.corpus,
                                ses.nbest if settings.start == "reranker" else None, dev_nb, ses.tagger,
                                in_child=self.train_in_child, files=files)
        self._job_done["train"] = self._install_training
        self.tabs.setCurrentWidget(self.curve_plot)
        return self.runner.start("train", job)

    def _corpus_source(self) -> str | None:
        """The corpus file, if it holds exactly what the window shows (no unsaved edits)."""
        c = self.corpus
        if c is None or not c.path or not os.path.isfile(c.path) or self.annotator.unsaved():
            return None
        return c.path

    def _start_kt(self, settings) -> bool:
        if self.corpus is None or not len(self.corpus):
            QMessageBox.information(self, "No corpus", "Open the training corpus first.")
            return False
        note = ""
        if not settings.dev_path or settings.dev_path.lower().endswith(".npz"):
            # a dev N-best list cannot score a tagger: the corpus's sibling dev corpus, if any
            dev = sibling_dev(self.corpus.path)
            if dev and os.path.isfile(dev) and not dev.lower().endswith(".npz"):
                settings = type(settings)(**{**settings.__dict__, "dev_path": dev})
            else:
                note = " (no dev corpus: no curve; give one in the training panel)"
        self._run_curve = self.curve_plot.start_run(settings.label(), "epoch", None)
        self._run_settings = settings
        job = make_kt_training_job(settings, self._run_curve, self.corpus, self._corpus_source(),
                                   in_child=self.train_in_child)
        self._job_done["train"] = self._install_kt
        self.tabs.setCurrentWidget(self.curve_plot)
        ok = self.runner.start("train", job)
        if ok and note:
            self.status.showMessage("Training a sequence tagger" + note, 8000)
        return ok

    def _install_kt(self, res) -> None:
        """A K&T tagger (trained or opened) and the open corpus's candidates under it."""
        t0 = time.perf_counter()
        self.last_run_timings = dict(res.timings)
        ses = self.session
        old = [ses.scored, ses.nbest_index, ses.kt, ses.kt_model]
        ses.kt_model, ses.kt_model_path = res.model, res.path
        ses.install(index=res.nbest_index, path=None, kt=res.kt)
        self._sync_unsaved_gold()
        name = f"{_kt_kind(res.model)} tagger"
        if res.run_id >= 0 and res.run_id < len(self.curve_plot.runs):
            run = self.curve_plot.runs[res.run_id]
            best = run.best()
            msg = f"{name} trained in {res.seconds:.1f}s"
            if best is not None:
                msg += f": best dev F {run.f[best]:.2f} at epoch {int(run.steps[best])}"
        else:
            msg = f"{name} opened: candidates of the corpus in {res.seconds:.1f}s"
            hist = getattr(res.model, "history_", None)
            if hist:
                from ..experiments.tagger_process import epoch_point
                pts = [p for p in (epoch_point(h) for h in hist) if p is not None]
                if pts:
                    run = self.curve_plot.start_run(f"{_kt_kind(res.model)} [{os.path.basename(res.path or '')}]")
                    self.curve_plot.add_points(run, pts)
                    self.curve_plot.finish_run(run)
        msg += " — its candidates are in the N-best panel"
        res.model = res.nbest_index = res.kt = None
        self._installed(msg, old)
        self.last_install_ms = (time.perf_counter() - t0) * 1000

    def load_kt_model(self, path: str, n: int | None = None) -> bool:
        """Open a perceptron / joint tagger and show the open corpus's candidates under it
        (``n`` per document; default: the model's n', 20 for a perceptron tagger)."""
        if self.corpus is None:
            QMessageBox.information(self, "No corpus", "Open a corpus first: the tagger's candidates are shown for it.")
            return False
        if self._busy_refusal():
            return False
        job = make_kt_open_job(path, self.corpus, self._corpus_source(), int(n) if n else None)
        self._job_done["kt"] = self._install_kt
        return self.runner.start("kt", job)

    def open_kt_dialog(self) -> None:
        path = self._ask_open("Open sequence tagger", MODEL_FILTER, "model")
        if path:
            self.load_kt_model(path)

    def save_kt_dialog(self) -> None:
        if self.session.kt_model is None:
            self.status.showMessage("No sequence tagger to save", 4000)
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save sequence tagger",
                                              f"{_kt_kind(self.session.kt_model)}-tagger.npz", MODEL_FILTER)
        if path:
            try:
                self.session.kt_model.save(path)
            except (OSError, ValueError) as exc:
                QMessageBox.critical(self, "Cannot save", str(exc))
                return
            self.session.kt_model_path = path
            self.status.showMessage(f"Saved {path}", 5000)

    @Slot()
    def cancel_job(self) -> None:
        if self.runner.busy:
            self.runner.cancel()
            self.training_panel.set_message("Cancelling…")
            self.status.showMessage("Cancelling…", 3000)

    def _install_training(self, res) -> None:
        t0 = time.perf_counter()
        self.last_run_timings = dict(res.timings)
        ses = self.session
        old = [ses.model, ses.scored]  # freed in another thread, see release_in_background
        if res.model is not None:
            ses.model, ses.model_path = res.model, None
        if res.scored is not None:
            ses.install(scored=res.scored)
            self._scored_edits = self._gold_edits
            self._sync_unsaved_gold()  # edits made while it trained
        if res.dev_nbest is not None and res.dev_nbest is not ses.dev_nbest:  # a dev list new in this run
            ses.dev_nbest, ses.dev_nbest_path, ses.dev_nbest_file = res.dev_nbest, None, None
        run = self.curve_plot.runs[res.run_id] if res.run_id < len(self.curve_plot.runs) else None
        best = run.best() if run else None
        msg = f"Done in {res.seconds:.1f}s"
        if run is not None and best is not None:
            msg += f": best dev F {run.f[best]:.2f} at {run.unit} {int(run.steps[best])}"
            if res.baseline is not None or run.baseline is not None:
                b = res.baseline if res.baseline is not None else run.baseline
                msg += f" (tagger baseline {b:.2f})"
        res.model = res.scored = None
        self._installed(msg, old)
        self.last_install_ms = (time.perf_counter() - t0) * 1000

    def _installed(self, msg: str, old: list) -> None:
        """The common end of installing a run's result: the message, the window's state, the
        current sentence's panels, and the replaced objects freed in another thread."""
        self.training_panel.set_message(msg)
        self.status.showMessage(msg, 10000)
        self._refresh_flags()
        self._update_state()
        if self._current_k >= 0:
            # the sentence's panels in the next turn of the event loop: the browser repaints
            # first, and no single turn does all the refreshing
            k = self._current_k
            QTimer.singleShot(0, self, lambda: self._current_k == k and self.show_sentence(k))
        release_in_background(old)

    # -- runner signals -------------------------------------------------------------------
    @Slot(str)
    def _on_job_started(self, name: str) -> None:
        # Everything the window holds now (corpus, lists, models, Qt wrappers) lives for long:
        # move it out of the garbage collector's sight, so a full collection triggered by the
        # worker's allocations does not hold the interpreter lock for 100+ ms while it scans them
        gc.freeze()
        self.act_cancel.setEnabled(True)
        self.act_train.setEnabled(False)
        for a in (self.act_open, self.act_open_nbest, self.act_open_model, self.act_open_results, self.act_open_kt):
            a.setEnabled(False)
        self.training_panel.set_running(True)
        self.training_panel.set_message({"train": "Training…", "model": "Opening the reranker…",
                                         "kt": "Opening the sequence tagger…"}.get(
            name, "Preparing the N-best list…"))

    @Slot(str, int, int)
    def _on_job_progress(self, message: str, done: int, total: int) -> None:
        self.training_panel.show_progress(message, done, total)
        if message:
            self.status.showMessage(message, 2000)

    @Slot(list)
    def _on_job_stats(self, batch: list) -> None:
        if self._run_curve is not None and self.runner.name == "train":
            self.curve_plot.add_points(self._run_curve, batch)

    @Slot(str, object)
    def _on_job_partial(self, key: str, value) -> None:
        ses = self.session
        if key == "tagger":
            ses.tagger, ses.tagger_path = value, None
        elif key == "nbest":
            ses.install(index=value, path=None)
            self._sync_unsaved_gold()  # edits made while the tagger and the jackknife ran
            self._refresh_flags()
            if self._current_k >= 0:
                self.show_sentence(self._current_k)
        elif key == "dev_nbest":
            if value is not ses.dev_nbest:  # a dev list new in this run
                ses.dev_nbest, ses.dev_nbest_path, ses.dev_nbest_file = value, None, None
        elif key == "child":  # the reranker trains in this process
            self.child_pid = value
            return
        elif key == "baseline" and self._run_curve is not None:
            self.curve_plot.runs[self._run_curve].baseline = value
            self.curve_plot.schedule()
        self._update_state()

    @Slot(str, object)
    def _on_job_finished(self, name: str, result) -> None:
        handler = self._job_done.pop(name, None)
        if name == "train" and self._run_curve is not None:
            self.curve_plot.finish_run(self._run_curve, "done")
        if handler is not None:
            handler(result)

    @Slot(str, str, str)
    def _on_job_failed(self, name: str, message: str, tb: str) -> None:
        self._job_done.pop(name, None)
        if name == "train" and self._run_curve is not None:
            self.curve_plot.finish_run(self._run_curve, "failed")
        what = {"train": "Training", "model": "Opening the reranker", "kt": "Opening the sequence tagger"}.get(
            name, name.capitalize())
        self.training_panel.set_message(f"Failed: {message}")
        self.status.showMessage(f"{what} failed: {message}", 30000)
        self.last_error = message
        if name == "model" and not tb:  # the user just chose this file: say why it cannot be used
            QMessageBox.critical(self, "Cannot open reranker", message)
            return
        if not tb:  # a clear message (bad input, a failed or killed child process): no dialog
            return
        if os.environ.get("NERSTUDIO_DEBUG"):
            print(tb)
        box = QMessageBox(QMessageBox.Critical, "Job failed", f"{name}: {message}", QMessageBox.Ok, self)
        box.setDetailedText(tb)
        box.setModal(False)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.show()

    @Slot(str, str)
    def _on_job_cancelled(self, name: str, message: str) -> None:
        self._job_done.pop(name, None)
        if name == "train" and self._run_curve is not None:
            self.curve_plot.finish_run(self._run_curve, "cancelled")
        self.training_panel.set_message("Cancelled")
        self.status.showMessage(f"{name} cancelled", 5000)

    @Slot()
    def _on_job_idle(self) -> None:
        self.training_panel.set_running(False)
        self.act_cancel.setEnabled(False)
        self.act_train.setEnabled(True)
        for a in (self.act_open, self.act_open_nbest, self.act_open_model, self.act_open_results, self.act_open_kt):
            a.setEnabled(True)
        self._update_state()

    # -- state display --------------------------------------------------------------------
    def _update_state(self) -> None:
        ses = self.session
        parts = []
        html = []
        if ses.nbest_index is not None:
            ix = ses.nbest_index
            name = os.path.basename(ses.nbest_path) if ses.nbest_path else "from this session"
            parts.append(f"N-best: {name} ({ix.matched:,}/{len(ix.row_of):,})")
            html.append(f"<b>N-best</b>: {name}, {len(ix.nbest):,} sentences, {ix.matched:,} matched")
        else:
            html.append("<b>N-best</b>: none")
        if ses.dev_nbest is not None:
            name = os.path.basename(ses.dev_nbest_path) if ses.dev_nbest_path else "from this session"
            html.append(f"<b>Dev N-best</b>: {name}, {len(ses.dev_nbest):,} sentences")
        if ses.tagger is not None:
            html.append(f"<b>Tagger</b>: {os.path.basename(ses.tagger_path) if ses.tagger_path else 'trained now'} "
                        f"({getattr(ses.tagger, 'task', '?')}/{getattr(ses.tagger, 'features', '?')})")
        if ses.kt_model is not None:
            where = os.path.basename(ses.kt_model_path) if ses.kt_model_path else "trained now"
            html.append(f"<b>Sequence tagger</b>: {_kt_kind(ses.kt_model)} ({where})"
                        + (" — its candidates are shown" if ses.kt is not None else ""))
            if ses.kt is not None:
                parts.append(f"candidates: {_kt_kind(ses.kt_model)} tagger")
        if ses.model is not None:
            desc = _describe_model(ses.model)
            parts.append(f"reranker: {desc}")
            html.append(f"<b>Reranker</b>: {desc}")
        else:
            html.append("<b>Reranker</b>: none")
        if ses.scored is not None and ses.nbest is not None and ses.nbest.gold is not None:
            try:
                d = ses.scored.data
                _, _, fb = d.prf(np.zeros(len(d), dtype=np.int64))
                _, _, fr = d.prf(ses.scored.choice)
                html.append(f"On this list: top candidate F {fb:.2f} → reranked F {fr:.2f}")
                parts.append(f"F {fb:.2f} → {fr:.2f}")
            except (ValueError, AttributeError):
                pass
        if self.runner.busy:
            parts.append(f"running: {self.runner.name}")
        self.state_label.setText(" · ".join(parts))
        self.training_panel.set_state_text("<br>".join(html))

    def _update_summary(self) -> None:
        self._summary_stale = False
        c = self.corpus
        if c is None:
            self.summary.setText("")
            return
        ents = Counter(sp.label for s in c.sentences for sp in s.spans)
        rows = "".join(f"<tr><td>{lab or '(untyped)'}</td><td align=right>{n:,}</td></tr>"
                       for lab, n in sorted(ents.items()))
        self.summary.setText(
            f"<b>{c.path}</b><br>format {c.format}, scheme {c.scheme.upper()}, {c.encoding}<br><br>"
            f"<table cellspacing=4><tr><td>documents</td><td align=right>{len(c.documents):,}</td></tr>"
            f"<tr><td>sentences</td><td align=right>{len(c):,}</td></tr>"
            f"<tr><td>tokens</td><td align=right>{c.n_tokens:,}</td></tr>"
            f"<tr><td>entities</td><td align=right>{sum(ents.values()):,}</td></tr>{rows}</table>")

    # -- recent files, drag and drop ------------------------------------------------------
    def _recent(self) -> list[str]:
        val = self.settings.value("files/recent", [])
        if isinstance(val, str):
            val = [val]
        return [v for v in (val or []) if isinstance(v, str)]

    def _add_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        rec = [p for p in self._recent() if p != path]
        self.settings.setValue("files/recent", [path] + rec[: MAX_RECENT - 1])
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        rec = self._recent()
        for p in rec:
            self.recent_menu.addAction(os.path.basename(p), lambda p=p: self.load_corpus(p)).setToolTip(p)
        self.recent_menu.setEnabled(bool(rec))

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                p = url.toLocalFile()
                if p.endswith(".npz") and self.corpus is not None:
                    self.load_nbest(p)
                elif os.path.isdir(p) and os.path.isfile(os.path.join(p, SESSION_FILE)):
                    self.load_results(p)
                else:
                    self.load_corpus(p)
                break

    # -- demo -----------------------------------------------------------------------------
    def load_demo(self) -> bool:
        """The bundled demo: corpus, tagger, jackknifed N-best, dev N-best and reranker."""
        if not self.load_corpus(str(DEMO_DIR / "train.conll"), attach=False):
            return False
        md = DEMO_MODEL_DIR
        if (md / "tagger.npz").is_file():
            self.load_tagger(str(md / "tagger.npz"))
        if (md / "dev.nbest.npz").is_file():
            self.load_dev_nbest(str(md / "dev.nbest.npz"))
        if (md / "reranker.npz").is_file():
            try:
                from ..rerank.model import RerankerModel
                self.session.model = RerankerModel.load(str(md / "reranker.npz"))
                self.session.model_path = str(md / "reranker.npz")
                self._load_history(self.session.model, str(md / "reranker.npz"))
            except (ImportError, NerstudioError, OSError, ValueError, KeyError) as exc:
                self.status.showMessage(f"demo reranker not loaded: {exc}", 8000)
        if (md / "train.nbest.npz").is_file():
            return self.load_nbest(str(md / "train.nbest.npz"))
        return True

    @Slot(str, int, int)
    def _on_view_progress(self, message: str, done: int, total: int) -> None:
        if self.view_jobs.running() == "comparison":
            self.comparison_view.show_progress(done, total)
        elif self.view_jobs.running() == "stepper":
            self.stepper_panel.show_progress(message, done, total)

    @Slot(int)
    def _on_tab_changed(self, _i: int) -> None:
        if self.tabs.currentWidget() is self.summary and self._summary_stale:
            self._update_summary()
        self.refresh_comparison()

    # -- comparison -----------------------------------------------------------------------
    def refresh_comparison(self, force: bool = False) -> bool:
        """Compare the tagger's top candidates with the reranker's picks over the open N-best
        list (computed when the tab is shown and something changed, or on request)."""
        if not force and (not self._comparison_stale or self.tabs.currentWidget() is not self.comparison_view):
            return False
        ses = self.session
        nb = ses.nbest
        if nb is None or nb.gold is None:
            self._comparison_gen += 1
            self.view_jobs.cancel("comparison")
            self.comparison_view.show_message("No N-best list with gold entities: open one (Ctrl+Shift+O), or "
                                              "open dev.conll to compare on the development set.")
            self._comparison_stale = False
            return False
        from ..experiments.compare import compare_outputs
        has = ses.scored is not None
        choice = ses.scored.choice if has else np.zeros(len(nb), dtype=np.int64)
        snap = _nbest_snapshot(nb)  # the gold as it is now, while the worker compares
        name = os.path.basename(ses.nbest_path) if ses.nbest_path else "N-best list of this session"
        self._comparison_stale = False
        self._comparison_gen += 1
        gen = self._comparison_gen

        def job(ctx):
            def prog(d, n):
                ctx.progress("comparing", d, n)
            return compare_outputs(snap, choice, should_cancel=ctx.should_cancel, progress=prog)

        edits = self._gold_edits

        def done(res):
            if gen == self._comparison_gen:
                self.comparison_view.set_result(res, snap.words, has, name)
                if edits != self._gold_edits:  # the gold changed while it was computed
                    self._comparison_stale = True
                    self.comparison_view.mark_stale("gold edited since: Recompute")

        def failed(message):
            if gen == self._comparison_gen:
                self.comparison_view.show_message(f"The comparison failed: {message}")
        self.comparison_view.set_busy(f"Comparing the tagger's top candidates with the reranked output over "
                                      f"{len(nb):,} sentences…")
        self.view_jobs.submit("comparison", job, done, failed)
        return True

    @Slot(int)
    def _on_comparison_sentence(self, i: int) -> None:
        ix = self.session.nbest_index
        if ix is None:
            return
        hits = np.flatnonzero(ix.row_of == i)
        if len(hits):
            self.select_sentence(int(hits[0]))

    # -- step-through ---------------------------------------------------------------------
    def prepare_stepper(self, force: bool = False) -> bool:
        """Give the step-through panel the open N-best list (and the dev list) as ranking data,
        with the loaded reranker's features (or features fitted on the list). Computed in the
        background worker for large lists (eng.train: seconds of feature extraction)."""
        ses = self.session
        nb = ses.nbest
        if nb is None or nb.gold is None:
            self.stepper_panel.info.setText("Open an N-best list with gold (the demo has one) to step through "
                                            "training.")
            return False
        key = (id(nb), id(ses.dev_nbest), id(ses.model), self._gold_edits)
        if key == self._stepper_source and not force:
            return True
        self._stepper_source = key
        model, dev_nb = ses.model, ses.dev_nbest
        # the scored list's ranking data is the same thing, unless the gold was edited since
        sc = ses.scored
        reuse = sc.data if (sc is not None and model is not None and sc.model is model
                            and self._scored_edits == self._gold_edits and sc.data.nbest is nb) else None
        snap = _nbest_snapshot(nb)
        eps = getattr(getattr(model, "learner", None), "epsilon", None)

        def compute(should_cancel=None, progress=None):
            def prog(stage):
                return None if progress is None else (lambda d, n: progress(stage, d, n))
            if model is not None and getattr(model, "features", None) is not None:
                feats = model.features
                train = reuse if reuse is not None else \
                    model.data(snap, progress=prog("global features of the N-best list"), should_cancel=should_cancel)
            else:
                from ..rerank.features import GlobalFeatures
                feats = GlobalFeatures()
                train = feats.fit_transform(snap, progress=prog("global features of the N-best list"),
                                            should_cancel=should_cancel)
            dev = feats.transform(dev_nb, progress=prog("global features of the dev list"),
                                  should_cancel=should_cancel) \
                if dev_nb is not None and dev_nb.gold is not None else None
            return train, dev, list(feats.names_)

        def done(res):
            if key == self._stepper_source:
                self.stepper_panel.set_data(*res, eps)

        def failed(message):
            if key == self._stepper_source:
                self._stepper_source = None
                self.stepper_panel.set_failed(f"Cannot prepare the step-through: {message}")
        if int(self.session.nbest_index.offsets[-1]) <= STEPPER_LARGE:
            try:
                done(compute())
            except (ValueError, KeyError) as exc:
                failed(str(exc))
                return False
            return True
        self.stepper_panel.set_preparing(f"Computing the global features of {len(nb):,} sentences for the "
                                         "step-through…")
        self.view_jobs.submit("stepper", lambda ctx: compute(ctx.should_cancel, ctx.progress), done, failed)
        return True

    def _run_stepper_work(self, fn, on_done, on_fail) -> None:
        """The step-through panel's executor: its setup and steps on large data."""
        self.view_jobs.submit("stepper", lambda ctx: fn(), on_done, on_fail)

    # -- annotation -----------------------------------------------------------------------
    def _build_edit_menu(self, menu) -> None:
        editm = menu.addMenu("&Edit")
        stack = self.annotator.stack
        self.act_undo = stack.createUndoAction(self, "&Undo")
        self.act_undo.setShortcut(QKeySequence.Undo)
        self.act_redo = stack.createRedoAction(self, "&Redo")
        self.act_redo.setShortcut(QKeySequence.Redo)
        editm.addAction(self.act_undo)
        editm.addAction(self.act_redo)
        editm.addSeparator()
        self.act_accept = self._act("&Accept candidate as gold", lambda: self.accept_candidate(), "Ctrl+Return",
                                    "Make the selected candidate's entities the gold of this sentence", editm)
        tb = self.addToolBar("Annotation")
        tb.setObjectName("annotationToolbar")
        for a, name in ((self.act_undo, "undoButton"), (self.act_redo, "redoButton"),
                        (self.act_accept, "acceptButton"), (self.act_save_corpus, "saveCorpusButton")):
            tb.addAction(a)
            tb.widgetForAction(a).setObjectName(name)

    @Slot(list, str)
    def _on_edit_requested(self, spans: list, text: str) -> None:
        if self._current_k >= 0:
            self.annotator.edit(self._current_k, spans, text)

    @Slot(int)
    def _on_gold_changed(self, k: int) -> None:
        """One edit (or its undo): refresh what depends on sentence ``k``'s gold."""
        self._gold_edited([k])
        if k != self._current_k:
            self.select_sentence(k)  # undo / redo of an edit elsewhere goes back there
            return
        s = self.corpus.sentences[k]
        self._fill_entity_table(s)
        v = self.sentence_view
        i = self.session.nbest_row(k)
        v.set_sentence(s.words, self._gold_for(i, k) if i >= 0 else s.spans, v._cand, v._cand_name)
        if i >= 0:
            self._refresh_candidate_quality(k, i)
        self._update_title()

    @Slot(list)
    def _on_gold_recovered(self, ks: list) -> None:
        self._gold_edited(ks)
        if self._current_k >= 0:
            self.show_sentence(self._current_k)
        self._update_title()

    def _gold_edited(self, ks: list[int]) -> None:
        """The gold of sentences ``ks`` changed (already in the corpus and, through
        :meth:`Session.set_gold`, in the N-best list and its counts): update the browser's entity
        counts and ✓/✗ marks, the type filter, and mark the corpus summary, the comparison and
        the step-through data stale."""
        ses = self.session
        self._flags = None
        self._exact_cache = None
        self._gold_edits += 1
        if not self._comparison_stale and self.comparison_view.result is not None:
            self.comparison_view.mark_stale("gold edited since: Recompute")
        self._comparison_stale = True
        self._stepper_source = None
        for k in ks:
            for lab in ses.update_type_masks(k):
                self.type_filter.addItem(lab or "(untyped)", lab)
        if ses.nbest is not None and self.tree_model.has_status():
            flags = self.flags()
            for k in ks:
                self.tree_model.set_sentence_status(k, status_text(flags, k))
        for k in ks:
            self.tree_model.sentence_changed(k)
        self._summary_stale = True
        if self.tabs.currentWidget() is self.summary:
            self._update_summary()

    def _refresh_candidate_quality(self, k: int, i: int) -> None:
        """Span F and exact-match marks of the shown candidates after a gold edit (the
        selection, and so the candidate drawn in the sentence view, stays)."""
        ix = self.session.nbest_index
        exact = self._exact()
        ex = None if exact is None else exact[self.session.candidate_rows(i)]
        self.nbest_panel.model.set_quality(ix.span_f(i), ex)
        self.nbest_panel.header.setText(self._candidates_header(i, ex))

    def accept_candidate(self, j: int | None = None) -> bool:
        """Make candidate ``j`` (default: the selected one) the gold of the current sentence."""
        k = self._current_k
        i = self._cur_nbest_row()
        if k < 0 or i < 0:
            self.status.showMessage("No candidates for this sentence", 4000)
            return False
        if j is None:
            sel = self.nbest_panel.selected()
            j = sel[0] if sel else None
        if j is None:
            self.status.showMessage("Select a candidate in the N-best table first", 4000)
            return False
        spans = list(self.session.nbest.spans(i, j))
        done = self.annotator.edit(k, spans, f"accept candidate {j + 1} as gold")
        if not done:
            self.status.showMessage(f"Candidate {j + 1} already equals the gold", 4000)
        return done

    def save_corpus(self, path: str | None = None) -> bool:
        if self.corpus is None:
            return False
        if not path and not self.corpus.path:
            return self.save_corpus_as_dialog()
        try:
            target = self.annotator.save(path)
        except (NerstudioError, OSError, ValueError) as exc:
            QMessageBox.critical(self, "Cannot save corpus", str(exc))
            return False
        self._update_title()
        self.status.showMessage(f"Saved {target}", 5000)
        return True

    def save_corpus_as_dialog(self) -> bool:
        if self.corpus is None:
            return False
        path, _ = QFileDialog.getSaveFileName(self, "Save corpus as", self.corpus.path or "", CORPUS_FILTER)
        return bool(path) and self.save_corpus(path)

    def ask_unsaved(self) -> str:
        """Ask what to do with unsaved edits: 'save', 'discard' or 'cancel' (tests replace this)."""
        box = QMessageBox(QMessageBox.Warning, "Unsaved annotations",
                          "The corpus has edits that are not saved.", parent=self)
        box.setInformativeText("Save them before closing?")
        box.setStandardButtons(QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel)
        box.setDefaultButton(QMessageBox.Save)
        r = box.exec()
        return {QMessageBox.Save: "save", QMessageBox.Discard: "discard"}.get(r, "cancel")

    def confirm_unsaved(self) -> bool:
        """True when the corpus may be closed (nothing unsaved, saved, or edits discarded)."""
        ann = getattr(self, "annotator", None)
        if ann is None or self.corpus is None or not ann.is_dirty():
            return True
        choice = self.ask_unsaved()
        if choice == "save":
            return self.save_corpus()
        if choice == "discard":
            ann.discard_recovery()
            ann.reset()
            return True
        return False

    def ask_recover(self, path: str) -> bool:
        """Offer to bring back edits from a recovery file (tests replace this)."""
        r = QMessageBox.question(self, "Recover unsaved annotations",
                                 f"Unsaved edits of {os.path.basename(self.corpus.path)} were kept in "
                                 f"{path} (the application did not close normally). Recover them?",
                                 QMessageBox.Yes | QMessageBox.No, QMessageBox.Yes)
        return r == QMessageBox.Yes

    def _offer_recovery(self) -> list[int]:
        path = self.annotator.pending_recovery()
        if path is None:
            return []
        if not self.ask_recover(path):
            self.annotator.discard_recovery()
            return []
        try:
            done = self.annotator.recover(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            QMessageBox.warning(self, "Cannot recover", f"{path}: {exc}")
            return []
        self._update_title()
        self.status.showMessage(f"Recovered edits of {len(done)} sentence(s); save to keep them", 10000)
        return done

    # -- misc -----------------------------------------------------------------------------
    def _update_title(self) -> None:
        name = os.path.basename(self.corpus.path) if self.corpus and self.corpus.path else "no corpus"
        ann = getattr(self, "annotator", None)
        dirty = bool(ann is not None and ann.is_dirty())
        self.setWindowTitle(f"nerstudio — {name}[*]")  # Qt shows the '*' while modified
        self.setWindowModified(dirty)

    def about(self) -> None:
        QMessageBox.about(self, "About nerstudio", ABOUT_HTML.format(version=__version__))

    def shortcuts(self) -> list[tuple[str, str]]:
        out = []
        for a in self.findChildren(QAction):
            if not a.shortcut().isEmpty() and a.text():
                out.append((a.shortcut().toString(QKeySequence.NativeText), a.text().replace("&", "")))
        return sorted(set(out), key=lambda x: x[1])

    def show_shortcuts(self) -> None:
        rows = "".join(f"<tr><td><b>{k}</b></td><td>{t}</td></tr>" for k, t in self.shortcuts())
        QMessageBox.information(self, "Keyboard shortcuts", f"<table cellspacing=6>{rows}</table>"
                                "<p>In the candidate table: arrows move, Ctrl+click selects a second candidate "
                                "to compare.</p>")

    def closeEvent(self, event) -> None:
        if not self.confirm_unsaved():
            event.ignore()
            return
        self.stepper_panel.pause()
        if self.runner.busy:
            self.runner.cancel()
        self.view_jobs.shutdown()
        self.runner.shutdown()
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        for sp in self._splitters:
            self.settings.setValue(f"window/{sp.objectName()}", sp.saveState())
        self.settings.setValue("features/grouped", self.feature_panel.group.isChecked())
        self.settings.setValue("curves/precision", self.curve_plot.show_p.isChecked())
        self.settings.setValue("curves/recall", self.curve_plot.show_r.isChecked())
        super().closeEvent(event)


def _nbest_snapshot(nb: NBestList) -> NBestList:
    """The same N-best list with its own list of gold lists: a gold edit replaces ``gold[i]`` of
    the window's list, so a worker reading the snapshot sees the gold of the moment it began."""
    return NBestList(nb.tagset, nb.words, nb.candidates, nb.logprobs, None if nb.gold is None else list(nb.gold),
                     nb.ids, nb.meta, _span_cache=nb._span_cache)


def _kt_kind(model) -> str:
    from ..experiments.tagger_process import is_joint, model_kind
    return ("joint " if is_joint(model) else "") + model_kind(model)


def _describe_model(model) -> str:
    learner = getattr(model, "learner", None)
    if learner is not None and hasattr(learner, "get_params"):
        from .views.training_panel import short_label
        try:
            label = short_label(getattr(model, "algo", learner.algo), learner.get_params())
        except Exception:  # noqa: BLE001 - a description is optional
            label = None
        if label:
            nf = getattr(getattr(model, "features", None), "min_sentences", None)
            return label + (f" feats(min_sentences={nf})" if nf not in (None, 5) else "")
    for attr in ("describe", "label"):
        v = getattr(model, attr, None)
        if callable(v):
            try:
                return str(v())
            except Exception:  # noqa: BLE001 - a description is optional
                pass
        elif isinstance(v, str):
            return v
    learner = getattr(model, "learner", None)
    if learner is not None and hasattr(learner, "describe"):
        return learner.describe()
    return type(model).__name__


ABOUT_HTML = """<h3>nerstudio {version}</h3>
<p>Named-entity annotation and N-best reranking workbench.</p>
<p>The methods come from:</p>
<ul>
<li>M. Collins (2002). <i>Ranking Algorithms for Named-Entity Extraction: Boosting and the Voted
Perceptron.</i> ACL 2002.</li>
<li>M. Collins (2002). <i>Discriminative Training Methods for Hidden Markov Models: Theory and
Experiments with Perceptron Algorithms.</i> EMNLP 2002.</li>
<li>M. Collins and N. Duffy (2002). <i>New Ranking Algorithms for Parsing and Tagging: Kernels over
Discrete Structures, and the Voted Perceptron.</i> ACL 2002.</li>
<li>J. Kazama and K. Torisawa (2007). <i>A New Perceptron Algorithm for Sequence Labeling with
Non-local Features.</i> EMNLP-CoNLL 2007.</li>
</ul>
<p>Keyboard shortcuts: Help ▸ Keyboard shortcuts (F1).</p>"""
