"""The window's widgets, built and laid out in one place (no behaviour: the controllers in
:mod:`nerstudio.gui.controllers` connect to them).

The corpus browser on the left; on the right the sentence view above the N-best and feature
panels and the bottom tabs (curves, gold entities, corpus summary, comparison); the training
and step-through panels as docks; the status bar with its state label. Splitter positions and
panel options are restored from the settings here and saved by :meth:`Views.save`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDockWidget, QFrame, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QScrollArea, QSplitter, QTableWidget, QTabWidget, QTreeView, QVBoxLayout,
                               QWidget)

from .models.corpus_model import CorpusTreeModel, SentenceFilterProxy
from .views.annotation_view import AnnotationView
from .views.comparison import ComparisonView
from .views.model_features import ModelFeaturesView
from .views.curve_plot import CurvePlot
from .views.feature_view import FeaturePanel
from .views.nbest_view import NBestPanel
from .views.status_bar import ElidedLabel, ElidingStatusBar
from .views.stepper import StepperPanel
from .views.training_panel import TrainingPanel
from .views.type_legend import TypeLegend

STATUS_FILTERS = (
    ("All sentences", None, "Show every sentence"),
    ("Baseline wrong (top ≠ gold)", "error", "Sentences whose top tagger candidate is not exactly the gold"),
    ("Reranker changed the baseline", "changed", "Sentences where the reranker picks another candidate than the "
                                                 "tagger's top one"),
    ("Reranker wrong", "rerank_error", "Sentences where the reranker's pick is not exactly the gold"),
    ("Gold not in N-best", "missing", "Sentences whose gold analysis is not among the candidates"),
    ("Has an N-best list", "has_nbest", "Sentences with candidates"),
)


class Views:
    """Every widget of the main window, as attributes (see the module docstring)."""

    def __init__(self, window, settings):
        # corpus browser
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(4, 4, 4, 4)
        self.search = QLineEdit()
        self.search.setObjectName("corpusSearch")
        self.search.setPlaceholderText("Search sentences…  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip("Show only sentences containing this text (case-insensitive)")
        lv.addWidget(self.search)
        frow = QHBoxLayout()
        frow.setContentsMargins(0, 0, 0, 0)
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("statusFilter")
        for k, (label, key, tip) in enumerate(STATUS_FILTERS):
            self.status_filter.addItem(label, key)
            self.status_filter.setItemData(k, tip, Qt.ToolTipRole)
        self.status_filter.setToolTip("Filter sentences by how the tagger and the reranker do on them")
        self.type_filter = QComboBox()
        self.type_filter.setObjectName("typeFilter")
        self.type_filter.addItem("Any type", None)
        self.type_filter.setToolTip("Show only sentences with a gold entity of this type")
        frow.addWidget(self.status_filter, 3)
        frow.addWidget(self.type_filter, 2)
        lv.addLayout(frow)
        self.tree_model = CorpusTreeModel()
        self.proxy = SentenceFilterProxy(window)
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
        self.legend = TypeLegend()
        tv.addWidget(self.legend)

        # candidates and features
        self.nbest_panel = NBestPanel()
        self.nbest_view = self.nbest_panel.view
        self.feature_panel = FeaturePanel()
        self.feature_view = self.feature_panel.view
        self.feature_panel.group.setChecked(settings.value("features/grouped", "true") in ("true", True))
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
        self.curve_plot.show_p.setChecked(settings.value("curves/precision", "false") in ("true", True))
        self.curve_plot.show_r.setChecked(settings.value("curves/recall", "false") in ("true", True))
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
        self.tabs.addTab(self.comparison_view, "Comparison")
        self.model_features_view = ModelFeaturesView()
        self.model_features_view.setObjectName("modelFeaturesView")
        self.tabs.addTab(self.model_features_view, "Model features")

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
        window.setCentralWidget(split)
        self.splitters = (split, right, mid)
        for sp in self.splitters:
            st = settings.value(f"window/{sp.objectName()}")
            if st is not None:
                sp.restoreState(st)

        # training dock
        self.training_panel = TrainingPanel(settings)
        self.training_dock = QDockWidget("Training", window)
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
        window.addDockWidget(Qt.RightDockWidgetArea, self.training_dock)
        self.training_dock.hide()
        self.train_button = self.training_panel.train_button

        # step-through dock (prepared when first shown)
        self.stepper_panel = StepperPanel()
        self.stepper_dock = QDockWidget("Step-through", window)
        self.stepper_dock.setObjectName("stepperDock")
        self.stepper_dock.setWidget(self.stepper_panel)
        window.addDockWidget(Qt.BottomDockWidgetArea, self.stepper_dock)
        self.stepper_dock.hide()
        self.cancel_button = self.training_panel.cancel_button

        window.setStatusBar(ElidingStatusBar(window))
        self.status = window.statusBar()
        self.state_label = ElidedLabel()
        self.state_label.setObjectName("stateLabel")
        self.status.addPermanentWidget(self.state_label)

    def save(self, settings) -> None:
        """Splitter positions and panel options, for the next session."""
        for sp in self.splitters:
            settings.setValue(f"window/{sp.objectName()}", sp.saveState())
        settings.setValue("features/grouped", self.feature_panel.group.isChecked())
        settings.setValue("curves/precision", self.curve_plot.show_p.isChecked())
        settings.setValue("curves/recall", self.curve_plot.show_r.isChecked())
