"""The window's public names, each forwarded to the part that owns it: a controller, the views
or the document. Tests, benchmarks and ``app.py --screenshot`` use these names (``window.load_corpus``,
``window.sentence_view``); written out rather than attached at import time so that a type checker
and a reader see them. :class:`~nerstudio.gui.main_window.MainWindow` inherits them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing the views here would defeat their lazy import
    from pathlib import Path

    import numpy as np
    from PySide6.QtWidgets import (
        QComboBox,
        QLabel,
        QLineEdit,
        QPushButton,
        QStatusBar,
        QTableView,
        QTableWidget,
        QTreeView,
    )

    from ..app.attachments import FileStamp
    from ..app.document import Document
    from ..app.first_screen import DemoStart
    from ..corpus.model import Corpus
    from ..nbest import NBestList
    from .controllers.annotation import AnnotationController
    from .controllers.browser import BrowserController
    from .controllers.candidates import CandidatesController
    from .controllers.comparison import ComparisonController
    from .controllers.files import FilesController
    from .controllers.stepper import StepperController
    from .controllers.training import TrainingController
    from .models.corpus_model import CorpusTreeModel, SentenceFilterProxy
    from .views.annotation_view import AnnotationView
    from .views.comparison import ComparisonView
    from .views.curve_plot import CurvePlot
    from .views.feature_view import FeaturePanel
    from .views.model_features import ModelFeaturesView
    from .views.nbest_view import NBestPanel
    from .views.status_bar import ElidedLabel
    from .views.stepper import StepperPanel
    from .views.training_panel import TrainingPanel
    from .views.type_legend import TypeLegend
    from .window_views import Views
    from .workspaces import PanelTabs, WorkspaceHandle, WorkspaceHost


class WindowNames:
    """The forwarding names; the window sets the parts in its ``__init__``."""

    document: Document
    views: Views
    files: FilesController
    browser: BrowserController
    candidates: CandidatesController
    annotation: AnnotationController
    training: TrainingController
    comparison: ComparisonController
    stepper: StepperController

    # -- files ---------------------------------------------------------------------------
    def load_corpus(self, path: str, attach: bool = True, encoding: str | None = None) -> bool:
        return self.files.load_corpus(path, attach, encoding)

    def set_corpus(self, corpus, type_masks: dict | None = None, disk=None) -> None:
        self.files.set_corpus(corpus, type_masks, disk)

    def load_nbest(self, path: str) -> bool:
        return self.files.load_nbest(path)

    def attach_nbest(
        self, nb: NBestList, path: str | None = None, stamp: FileStamp | None = None
    ) -> bool:
        return self.files.attach_nbest(nb, path, stamp)

    def load_model(self, path: str) -> bool:
        return self.files.load_model(path)

    def rescore(self) -> bool:
        return self.files.rescore()

    def load_tagger(self, path: str) -> bool:
        return self.files.load_tagger(path)

    def load_dev_nbest(self, path: str) -> bool:
        return self.files.load_dev_nbest(path)

    def load_results(self, folder: str) -> bool:
        return self.files.load_results(folder)

    def save_results(self, folder: str) -> list[str]:
        return self.files.save_results(folder)

    def load_demo(self, folder: Path | None = None, start: DemoStart | None = None) -> bool:
        return self.files.load_demo(folder, start)

    # -- browser -------------------------------------------------------------------------
    def select_sentence(self, k: int) -> None:
        self.browser.select_sentence(k)

    def current_sentence_index(self) -> int:
        return self.browser.current_sentence_index()

    def step_sentence(self, delta: int) -> None:
        self.browser.step_sentence(delta)

    def step_matching(self, flag: str, delta: int) -> None:
        self.browser.step_matching(flag, delta)

    # -- candidates ----------------------------------------------------------------------
    def show_sentence(self, k: int) -> None:
        self.candidates.show_sentence(k)

    def compare_with_top(self) -> None:
        self.candidates.compare_with_top()

    # -- annotation ----------------------------------------------------------------------
    def accept_candidate(self, j: int | None = None) -> bool:
        return self.annotation.accept_candidate(j)

    def save_corpus(
        self, path: str | None = None, overwrite: bool = False, wait: bool = False
    ) -> bool:
        return self.annotation.save_corpus(path, overwrite, wait)

    def confirm_unsaved(self) -> bool:
        return self.annotation.confirm_unsaved()

    def autosave_now(self) -> str | None:
        return self.annotation.autosave_now()

    def offer_recovery(self) -> list[int]:
        return self.annotation.offer_recovery()

    # -- training ------------------------------------------------------------------------
    def start_training(self, settings) -> bool:
        return self.training.start_training(settings)

    def cancel_job(self) -> None:
        self.training.cancel_job()

    def load_kt_model(self, path: str, n: int | None = None) -> bool:
        return self.training.load_kt_model(path, n)

    @property
    def train_in_child(self) -> bool:
        return self.training.train_in_child

    @train_in_child.setter
    def train_in_child(self, value: bool) -> None:
        self.training.train_in_child = value

    @property
    def child_pid(self) -> int | None:
        return self.training.child_pid

    @child_pid.setter
    def child_pid(self, value: int | None) -> None:
        self.training.child_pid = value

    @property
    def last_error(self) -> str:
        return self.training.last_error

    @property
    def last_run_timings(self) -> dict:
        return self.training.last_run_timings

    @property
    def last_install_ms(self) -> float:
        return self.training.last_install_ms

    def train_from_menu(self) -> None:
        self.training.train_from_menu()

    # -- comparison ----------------------------------------------------------------------
    def refresh_comparison(self, force: bool = False) -> bool:
        return self.comparison.refresh(force)

    # -- stepper -------------------------------------------------------------------------
    def prepare_stepper(self, force: bool = False) -> bool:
        return self.stepper.prepare(force)

    # -- views ---------------------------------------------------------------------------
    @property
    def search(self) -> QLineEdit:
        return self.views.search

    @property
    def status_filter(self) -> QComboBox:
        return self.views.status_filter

    @property
    def type_filter(self) -> QComboBox:
        return self.views.type_filter

    @property
    def tree_model(self) -> CorpusTreeModel:
        return self.views.tree_model

    @property
    def proxy(self) -> SentenceFilterProxy:
        return self.views.proxy

    @property
    def corpus_view(self) -> QTreeView:
        return self.views.corpus_view

    @property
    def filter_count(self) -> QLabel:
        return self.views.filter_count

    @property
    def sentence_header(self) -> QLabel:
        return self.views.sentence_header

    @property
    def sentence_view(self) -> AnnotationView:
        return self.views.sentence_view

    @property
    def legend(self) -> TypeLegend:
        return self.views.legend

    @property
    def nbest_panel(self) -> NBestPanel:
        return self.views.nbest_panel

    @property
    def nbest_view(self) -> QTableView:
        return self.views.nbest_view

    @property
    def feature_panel(self) -> FeaturePanel:
        return self.views.feature_panel

    @property
    def feature_view(self) -> QTreeView:
        return self.views.feature_view

    @property
    def tabs(self) -> PanelTabs:
        return self.views.tabs

    @property
    def curve_plot(self) -> CurvePlot:
        return self.views.curve_plot

    @property
    def entity_table(self) -> QTableWidget:
        return self.views.entity_table

    @property
    def summary(self) -> QLabel:
        return self.views.summary

    @property
    def comparison_view(self) -> ComparisonView:
        return self.views.comparison_view

    @property
    def model_features_view(self) -> ModelFeaturesView:
        return self.views.model_features_view

    @property
    def training_panel(self) -> TrainingPanel:
        return self.views.training_panel

    @property
    def training_dock(self) -> WorkspaceHandle:
        return self.views.training_dock

    @property
    def train_button(self) -> QPushButton:
        return self.views.train_button

    @property
    def cancel_button(self) -> QPushButton:
        return self.views.cancel_button

    @property
    def stepper_panel(self) -> StepperPanel:
        return self.views.stepper_panel

    @property
    def stepper_dock(self) -> WorkspaceHandle:
        return self.views.stepper_dock

    @property
    def status(self) -> QStatusBar:
        return self.views.status

    @property
    def state_label(self) -> ElidedLabel:
        return self.views.state_label

    @property
    def workspaces(self) -> WorkspaceHost:
        return self.views.workspaces

    # -- document ------------------------------------------------------------------------
    @property
    def corpus(self) -> Corpus | None:
        return self.document.corpus

    def flags(self) -> dict[str, np.ndarray]:
        return self.document.flags()
