"""The window's widgets, built and laid out in one place (no behaviour: the controllers in
:mod:`nerstudio.gui.controllers` connect to them).

The central widget is a :class:`~nerstudio.gui.workspaces.WorkspaceHost`: a mode bar and one page
per job —

* **Annotate**: the corpus browser, the current sentence (large), the gold entities, the
  corpus summary and the agreement of two annotation files;
* **Inspect**: the browser, the sentence, the N-best table and, beside it, the feature panel,
  the comparison and the model's feature ranking (and any view added with
  :meth:`Views.add_inspect_tab`);
* **Train**: the training settings, the curves and a small N-best table;
* **Teach**: the step-through panel, full size.

The browser, the sentence and the N-best table are one widget each, shared: they move into the
active page. The sentence area is as tall as the sentence needs (within a share of the window's
height, then it scrolls). Splitter positions, the workspace and panel options are restored from
the settings here and saved by :meth:`Views.save`. The views of what is not shown first are built
on first use (:class:`Views`), so the window comes on screen sooner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from . import icons
from .models.corpus_model import CorpusTreeModel, SentenceFilterProxy
from .views.annotation_view import AnnotationView
from .views.feature_view import FeaturePanel
from .views.fitting import AdaptiveSplitter, narrow_combo
from .views.nbest_view import NBestPanel
from .views.status_bar import ElidedLabel, ElidingStatusBar
from .views.type_legend import TypeLegend
from .views.uncertainty_bar import UncertaintyBar
from .workspaces import LazyPart, PanelTabs, Slot, WorkspaceHost

if TYPE_CHECKING:  # built on first use: its module loads then
    from .views.curve_plot import CurvePlot

SUSPECTS_FILTER = "suspect"  # the suspects queue's filter (app.suspects), not a document flag
STATUS_FILTERS = (
    ("All sentences", None, "Show every sentence"),
    (
        "Baseline wrong (top ≠ gold)",
        "error",
        "Sentences whose top tagger candidate is not exactly the gold",
    ),
    (
        "Reranker changed the baseline",
        "changed",
        "Sentences where the reranker picks another candidate than the tagger's top one",
    ),
    (
        "Reranker wrong",
        "rerank_error",
        "Sentences where the reranker's pick is not exactly the gold",
    ),
    ("Gold not in N-best", "missing", "Sentences whose gold analysis is not among the candidates"),
    ("Has an N-best list", "has_nbest", "Sentences with candidates"),
    (
        "Not reviewed",
        "unreviewed",
        "Sentences not reviewed yet (neither edited nor marked reviewed): those the model "
        "in the loop re-predicts",
    ),
    ("Flagged", "flagged", "Sentences you flagged (Annotate ▸ Toggle flag)"),
    ("Has a note", "noted", "Sentences with a note (Annotate ▸ Add note…)"),
    (
        "Suspects (most suspect first)",
        SUSPECTS_FILTER,
        "Sentences whose gold annotation is probably wrong and not decided yet, most suspect "
        "first (Annotate ▸ Find suspect annotations…); F7 walks them",
    ),
)

# the share of the window's height the sentence may take before it scrolls, per workspace
SENTENCE_SHARE = {"annotate": 0.55, "inspect": 0.3, "train": 0.3}

# (name, title, icon, description, shortcut)
WORKSPACES = (
    (
        "annotate",
        "Annotate",
        "annotate",
        "Annotate: the corpus, the sentence and its gold entities",
        "Ctrl+1",
    ),
    (
        "inspect",
        "Inspect",
        "inspect",
        "Inspect: the N-best candidates, the reranker's features and the comparison",
        "Ctrl+2",
    ),
    ("train", "Train", "curve", "Train: the training settings and the learning curves", "Ctrl+3"),
    (
        "teach",
        "Teach",
        "step",
        "Teach: step through boosting or the perceptron, one round or update at a time",
        "Ctrl+4",
    ),
)


class FitScroll(QScrollArea):
    """A scroll area exactly as tall as its widget wants, up to ``share`` of the window's height:
    a short sentence leaves no empty band, a long one scrolls instead of pushing the panels out."""

    def __init__(self, widget: QWidget, share: float = 0.3):
        super().__init__()
        self.share = share
        self._fitting = False
        self.setWidget(widget)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to the sentence view itself
        widget.installEventFilter(self)
        self.viewport().installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Resize):
            self.fit()
        return super().eventFilter(obj, event)

    def showEvent(self, event) -> None:
        self.fit()
        super().showEvent(event)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()  # before the first fit: the scroll area's own
        h = self.maximumHeight()
        return QSize(hint.width(), h if h < 100_000 else hint.height())

    def set_share(self, share: float) -> None:
        self.share = share
        self.fit()

    def fit(self) -> None:
        content = self.widget()
        if self._fitting or content is None:
            return
        self._fitting = True
        try:
            want = max(content.minimumHeight(), content.sizeHint().height())
            top = self.window()
            limit = max(
                90, int(self.share * (top.height() if top is not None and top is not self else 800))
            )
            h = min(want, limit)
            # it asks for ``h``; when the panels below need the room (a small screen, scale 2) the
            # layout may take it down to about one row of the sentence, which then scrolls
            low = min(h, 3 * self.fontMetrics().height() + 8)
            if (self.minimumHeight(), self.maximumHeight()) != (low, h):
                self.setMinimumHeight(low)
                self.setMaximumHeight(h)
                # only the hint changed: the layouts above keep theirs cached unless told
                w: QWidget | None = self
                while w is not None and not w.isWindow():
                    w.updateGeometry()
                    w = w.parentWidget()
        finally:
            self._fitting = False


class _SentencePanel(QWidget):
    """The sentence, its header and the legend. It does not pass its wrapped header's
    height-for-width up: a layout takes such a widget's height as fixed, so at scale 2 the sentence
    kept its full height and the candidates and features below were squeezed under their minimum
    rows. Its own layout still gives the header the lines it needs."""

    def hasHeightForWidth(self) -> bool:
        return False


class _PanelSplitter(AdaptiveSplitter):
    """The candidates and the tabs under the sentence. It asks for no more than its minimum (the
    tables' least rows): the layout then gives the sentence the height it asks for first and these
    panels the rest, instead of taking half of what is short from each."""

    def sizeHint(self) -> QSize:
        return self.minimumSizeHint()


def _splitter(orientation, name: str, *widgets, sizes=None, stretch=None) -> QSplitter:
    sp = QSplitter(orientation)
    sp.setObjectName(name)
    sp.setChildrenCollapsible(False)
    for w in widgets:
        sp.addWidget(w)
    for k, f in enumerate(stretch or ()):
        sp.setStretchFactor(k, f)
    if sizes:
        sp.setSizes(sizes)
    return sp


def _part(name: str):
    """A view built on first use: reading the attribute builds it (see :class:`LazyPart`)."""
    return property(lambda self: self.lazy[name].get())


def _tabs(name: str, *pages) -> QTabWidget:
    t = QTabWidget()
    t.setObjectName(name)
    t.setDocumentMode(True)
    for w, title in pages:
        t.addTab(w, title)
    return t


class Views:
    """Every widget of the main window, as attributes (see the module docstring).

    The views of the pages and tabs not shown first — the training settings and the curves, the
    step-through panel, the comparison, the model's features, What if and the agreement — are
    built on first use (issue 26: the window comes first): reading the attribute, or their
    workspace or tab coming forward, builds one; :meth:`when_built` runs a controller's wiring
    then."""

    training_panel = _part("training_panel")
    stepper_panel = _part("stepper_panel")
    comparison_view = _part("comparison_view")
    model_features_view = _part("model_features_view")
    what_if_view = _part("what_if_view")
    agreement_view = _part("agreement_view")
    curve_plot = _part("curve_plot")

    @property
    def train_button(self):
        return self.training_panel.train_button

    @property
    def cancel_button(self):
        return self.training_panel.cancel_button

    def when_built(self, name: str, fn) -> None:
        """Call ``fn(view)`` once the view ``name`` is built (now, if it is)."""
        self.lazy[name].when_built(fn)

    def shows(self, name: str) -> bool:
        """The view ``name`` is on the current tab of the active workspace (and so built)."""
        current = self.tabs.currentWidget()
        return current is not None and current is self.built(name)

    def built(self, name: str):
        """The view ``name`` if it is built, else None (nothing is built)."""
        return self.lazy[name].part

    def __init__(self, window, settings):
        self._build_browser(window)
        self._build_sentence()
        self._build_panels(settings)

        host = self.workspaces = WorkspaceHost(window, settings)
        host.share("browser", self.browser_panel)
        host.share("sentence", self.sentence_panel)
        host.share("nbest", self.nbest_panel)
        self.tabs = PanelTabs(host)
        self.splitters: list[QSplitter] = []
        pages = {
            "annotate": self._annotate_page(),
            "inspect": self._inspect_page(),
            "train": self._train_page(),
            "teach": self._teach_page(),
        }
        for name, title, icon, tip, key in WORKSPACES:
            page, slots = pages[name]
            ws = host.add(
                name, title, icons.icon(icon, QColor(Qt.GlobalColor.white)), tip, page, slots, key
            )
            if name in SENTENCE_SHARE:
                ws.on_enter.append(lambda f=SENTENCE_SHARE[name]: self.sentence_scroll.set_share(f))
            ws.focus = self._main_widget(name)
        window.setCentralWidget(host)
        for sp in self.splitters:
            st = settings.value(f"window/{sp.objectName()}")
            if st is not None and sp.restoreState(st) and isinstance(sp, AdaptiveSplitter):
                sp._balanced = True  # the user's own division stays until the panels must flip
        # what earlier versions showed as docks: the training and step-through workspaces
        self.training_dock = host.handle("train")
        self.stepper_dock = host.handle("teach")
        host.restore("inspect")

        window.setStatusBar(ElidingStatusBar(window))
        self.status = window.statusBar()
        self.state_label = ElidedLabel()
        self.state_label.setObjectName("stateLabel")
        self.status.addPermanentWidget(self.state_label)

    # -- the shared parts -----------------------------------------------------------------
    def _build_browser(self, window) -> None:
        left = self.browser_panel = QWidget()
        left.setObjectName("browserPanel")
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
            self.status_filter.setItemData(k, tip, Qt.ItemDataRole.ToolTipRole)
        self.status_filter.setToolTip(
            "Filter sentences by how the tagger and the reranker do on them"
        )
        self.type_filter = QComboBox()
        self.type_filter.setObjectName("typeFilter")
        self.type_filter.addItem("Any type", None)
        self.type_filter.setToolTip("Show only sentences with a gold entity of this type")
        narrow_combo(self.status_filter, 8)
        narrow_combo(self.type_filter, 5)
        frow.addWidget(self.status_filter, 3)
        frow.addWidget(self.type_filter, 2)
        lv.addLayout(frow)
        self.uncertainty_bar = UncertaintyBar()  # most uncertain first (the browser controller)
        lv.addWidget(self.uncertainty_bar)
        self.tree_model = CorpusTreeModel()
        self.proxy = SentenceFilterProxy(window)
        self.proxy.setSourceModel(self.tree_model)
        view = self.corpus_view = QTreeView()
        view.setObjectName("corpusView")
        view.setModel(self.proxy)
        view.setUniformRowHeights(True)
        view.setAlternatingRowColors(True)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.setIndentation(12)
        view.setTextElideMode(Qt.TextElideMode.ElideRight)
        hdr = view.header()
        hdr.setStretchLastSection(False)
        hdr.setMinimumSectionSize(24)
        hdr.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        fm = view.fontMetrics()
        for c, sample in ((1, "999"), (2, "99"), (3, "✗→✗ ∉"), (4, "≠ 0.000")):
            # fixed, narrow widths (ResizeToContents would ask every row for its data on each
            # change): the sentence column gets the rest; the titles are short, with tooltips
            hdr.setSectionResizeMode(c, QHeaderView.ResizeMode.Fixed)
            hdr.resizeSection(
                c,
                max(fm.horizontalAdvance(sample), fm.horizontalAdvance(CorpusTreeModel.SHORT[c]))
                + 10,
            )
        # a long document's totals (thousands of tokens) must not be cut to "1…"
        self.tree_model.modelReset.connect(self._fit_count_columns)
        lv.addWidget(view)
        self.filter_count = QLabel()
        self.filter_count.setObjectName("filterCount")
        lv.addWidget(self.filter_count)

    def _fit_entity_columns(self) -> None:
        """The gold entities' type, tokens and length as wide as their titles and values, the
        entity's words the rest (a default 100 px each, scaled by the zoom, left "ME…")."""
        hdr = self.entity_table.horizontalHeader()
        fm = hdr.fontMetrics()
        for c, sample in ((0, "MISC"), (2, "000–000"), (3, "Length")):
            item = self.entity_table.horizontalHeaderItem(c)
            title = item.text() if item is not None else ""
            hdr.resizeSection(
                c, max(fm.horizontalAdvance(sample), fm.horizontalAdvance(title)) + 18
            )

    def _fit_count_columns(self) -> None:
        """The token and entity columns as wide as the corpus's largest count (a document's
        total), at least three and two digits wide."""
        m, hdr = self.tree_model, self.corpus_view.header()
        fm = self.corpus_view.fontMetrics()
        for c, floor in ((1, 3), (2, 2)):
            most = max((int(m.data(m.index(r, c)) or 0) for r in range(m.rowCount())), default=0)
            digits = "9" * max(floor, len(str(most)))
            need = max(fm.horizontalAdvance(digits), fm.horizontalAdvance(CorpusTreeModel.SHORT[c]))
            hdr.resizeSection(c, need + 10)

    def _build_sentence(self) -> None:
        top = self.sentence_panel = _SentencePanel()
        top.setObjectName("sentencePanel")
        tv = QVBoxLayout(top)
        tv.setContentsMargins(4, 4, 4, 2)
        tv.setSpacing(2)
        self.sentence_header = QLabel("No corpus loaded")
        self.sentence_header.setObjectName("sentenceHeader")
        self.sentence_header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sentence_header.setWordWrap(True)  # a long header wraps instead of widening the window
        tv.addWidget(self.sentence_header)
        self.sentence_view = AnnotationView()
        # as tall as the sentence, within limits; a long sentence scrolls and never resizes the
        # panels below
        self.sentence_scroll = FitScroll(self.sentence_view)
        self.sentence_scroll.setObjectName("sentenceScroll")
        tv.addWidget(self.sentence_scroll)
        self.legend = TypeLegend()
        tv.addWidget(self.legend)

    def _build_panels(self, settings) -> None:
        self.nbest_panel = NBestPanel()
        self.nbest_view = self.nbest_panel.view
        self.feature_panel = FeaturePanel()
        self.feature_view = self.feature_panel.view
        self.feature_panel.group.setChecked(
            settings.value("features/grouped", "true") in ("true", True)
        )
        self.entity_table = QTableWidget(0, 4)  # a handful of rows per sentence
        self.entity_table.setObjectName("entityTable")
        self.entity_table.setHorizontalHeaderLabels(["Type", "Entity", "Tokens", "Length"])
        self.entity_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.entity_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.entity_table.verticalHeader().setVisible(False)
        self._fit_entity_columns()
        self.summary = QLabel()
        self.summary.setObjectName("corpusSummary")
        self.summary.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setMargin(8)
        self.lazy = {
            name: LazyPart(name, build)
            for name, build in (
                ("comparison_view", _comparison_view),
                ("agreement_view", _agreement_view),  # two annotators' files compared
                ("model_features_view", _model_features_view),
                ("what_if_view", _what_if_view),  # the sentence edited: candidates, live
                ("training_panel", lambda: self._training_panel(settings)),
                ("stepper_panel", _stepper_panel),
                ("curve_plot", lambda: _curve_plot(settings)),  # the Train page's curves
            )
        }

    # -- the pages ------------------------------------------------------------------------
    def _with_browser(self, name: str, right: QWidget, width: int = 470) -> tuple[QSplitter, Slot]:
        slot = Slot("browser")
        # the browser takes a share of a smaller window's loss of width (1 in 3), not none of it
        sp = _splitter(
            Qt.Orientation.Horizontal,
            name,
            slot,
            right,
            sizes=[width, 1202 - width],
            stretch=(1, 2),
        )
        self.splitters.append(sp)
        return sp, slot

    def _annotate_page(self):
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        sentence = Slot("sentence")
        rv.addWidget(sentence)
        self.annotate_tabs = self.tabs.add(
            _tabs(
                "annotateTabs",
                (self.entity_table, "Gold entities"),
                (self.summary, "Corpus"),
                (self.lazy["agreement_view"], "Agreement"),
            )
        )
        rv.addWidget(self.annotate_tabs, 1)
        page, browser = self._with_browser("annotateSplitter", right)
        return page, [browser, sentence]

    def _inspect_page(self):
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        sentence, nbest = Slot("sentence"), Slot("nbest")
        rv.addWidget(sentence)
        self.inspect_tabs = self.tabs.add(
            _tabs(
                "inspectTabs",
                (self.feature_panel, "Features"),
                (self.lazy["comparison_view"], "Comparison"),
                (self.lazy["model_features_view"], "Model features"),
                (self.lazy["what_if_view"], "What if"),
            )
        )
        # the candidates' "differs" column needs the width more than the feature names do
        # side by side when there is room for both, else the candidates above the tabs (1024 px, scale 2)
        mid = _PanelSplitter(110, shares=(0.6, 0.55))
        mid.setObjectName("candidateSplitter")
        mid.setChildrenCollapsible(False)
        mid.addWidget(nbest)
        mid.addWidget(self.inspect_tabs)
        mid.setStretchFactor(0, 3)
        mid.setStretchFactor(1, 2)
        mid.setSizes([530, 372])
        self.splitters.append(mid)
        # the comparison and the model's feature ranking are corpus-wide tables: while one of them
        # is shown it gets most of the width, the candidates what is left
        self.inspect_tabs.currentChanged.connect(lambda _i: self._balance_inspect(mid))
        rv.addWidget(mid, 1)
        page, browser = self._with_browser("inspectSplitter", right, 400)
        return page, [browser, sentence, nbest]

    def _balance_inspect(self, mid: AdaptiveSplitter) -> None:
        # the comparison and the model's feature ranking are corpus-wide: they get more room
        wide = self.inspect_tabs.currentWidget() is not self.feature_panel
        mid.shares = (0.35, 0.2) if wide else (0.6, 0.55)
        # the candidates keep four rows beside the features, fewer beside a corpus-wide table
        self.nbest_panel.kept.set_rows(2 if wide else 4)
        mid.balance()

    def _train_page(self):
        scroll = QScrollArea()  # a long list of settings must not force the window's height
        scroll.setObjectName("trainingScroll")
        scroll.setWidget(self.lazy["training_panel"])
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.training_scroll = scroll
        # the run's buttons, progress and messages go below the scrolling settings once the panel
        # is built (_training_panel): in sight whatever the window's height
        column = QWidget()
        column.setObjectName("trainingColumn")
        self._training_column = QVBoxLayout(column)
        self._training_column.setContentsMargins(0, 0, 0, 0)
        self._training_column.setSpacing(0)
        self._training_column.addWidget(scroll, 1)
        nbest = Slot("nbest")
        right = _splitter(
            Qt.Orientation.Vertical,
            "trainRightSplitter",
            self.lazy["curve_plot"],
            nbest,
            sizes=[520, 180],
            stretch=(3, 1),
        )
        # the settings give up some width on a small screen too (they scroll), the curve more
        page = _splitter(
            Qt.Orientation.Horizontal,
            "trainSplitter",
            column,
            right,
            sizes=[400, 806],
            stretch=(1, 3),
        )
        self.splitters += [right, page]
        return page, [nbest]

    def _main_widget(self, name: str):
        """What the keys go to when the workspace ``name`` becomes active."""
        if name in ("annotate", "inspect"):
            return lambda: self.sentence_view
        if name == "train":
            return lambda: self.training_panel
        return lambda: self.stepper_panel

    def _training_panel(self, settings):
        from .views.training_panel import TrainingPanel

        panel = TrainingPanel(settings)
        self._training_column.addWidget(panel.detach_footer())
        self.training_scroll.setMinimumWidth(_settings_width(panel))
        return panel

    def _teach_page(self):
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.lazy["stepper_panel"])
        return page, []

    def after_zoom(self) -> None:
        """The zoom changed the font: the settings' column is as wide as they now need, the
        browser's counts too."""
        self._fit_count_columns()
        self._fit_entity_columns()
        if self.built("training_panel") is not None:
            self.training_scroll.setMinimumWidth(_settings_width(self.training_panel))

    def add_inspect_tab(self, widget: QWidget, title: str) -> None:
        """Another view beside the feature panel and the comparison in the Inspect workspace."""
        self.inspect_tabs.addTab(widget, title)

    def save(self, settings) -> None:
        """Splitter positions and panel options, for the next session."""
        for sp in self.splitters:
            settings.setValue(f"window/{sp.objectName()}", sp.saveState())
        settings.setValue("features/grouped", self.feature_panel.group.isChecked())
        plot = cast("CurvePlot | None", self.built("curve_plot"))  # unbuilt: settings as they were
        if plot is not None:
            settings.setValue("curves/precision", plot.show_p.isChecked())
            settings.setValue("curves/recall", plot.show_r.isChecked())


def _settings_width(panel: QWidget) -> int:
    """The training settings' column: the panel's minimum width (it never scrolls sideways;
    rows that can wrap do) and its vertical scroll bar."""
    return panel.minimumSizeHint().width() + 16


# the views built on first use (their modules too are imported then)
def _comparison_view():
    from .views.comparison import ComparisonView

    return ComparisonView()


def _agreement_view():
    from .views.agreement_view import AgreementView

    return AgreementView()


def _model_features_view():
    from .views.model_features import ModelFeaturesView

    view = ModelFeaturesView()
    view.setObjectName("modelFeaturesView")
    return view


def _what_if_view():
    from .views.what_if_view import WhatIfView

    return WhatIfView()


def _curve_plot(settings):
    from .views.curve_plot import CurvePlot

    plot = CurvePlot()
    plot.show_p.setChecked(settings.value("curves/precision", "false") in ("true", True))
    plot.show_r.setChecked(settings.value("curves/recall", "false") in ("true", True))
    return plot


def _stepper_panel():
    from .views.stepper import StepperPanel

    return StepperPanel()
