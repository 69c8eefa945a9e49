"""The main window's menus, its toolbar and the list of its keyboard shortcuts.

A base class of :class:`~nerstudio.gui.main_window.MainWindow`: the window calls
:meth:`WindowMenus._build_menus` once its controllers exist (the actions call the controllers'
methods), and Help ▸ Keyboard shortcuts reads the keys back from the menus. Kept apart from the
window so that the window's module stays light (importing this one loads no numpy, no
document model and no controller; nor Qt's namespace of enums, nor the icons, which load with
the toolbar).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLineEdit, QMainWindow, QMenu, QMessageBox, QWidget

from .actions import make_action
from .dialogs import corpus_formats_in_words
from .window_names import WindowNames

if TYPE_CHECKING:  # annotations only: the controllers load with the window's second phase
    from .controllers.adjudication import AdjudicationController
    from .controllers.agreement import AgreementController
    from .controllers.loop import LoopController
    from .controllers.notes import NotesController
    from .controllers.occurrences import OccurrencesController
    from .controllers.preannotate import PreannotateController
    from .controllers.suspects import SuspectsController
    from .zoom import Zoom


class WindowMenus(WindowNames, QMainWindow):
    """The menus and the toolbar over the window's controllers (set by the window's build)."""

    preannotate: PreannotateController
    occurrences: OccurrencesController
    loop: LoopController
    notes: NotesController
    adjudication: AdjudicationController
    agreement: AgreementController
    suspects: SuspectsController
    zoom: Zoom

    # -- menus ----------------------------------------------------------------------------
    def _act(self, text, slot, shortcut=None, tip="", menu=None) -> QAction:
        return make_action(self, text, slot, shortcut, tip, menu)

    def _build_menus(self) -> None:
        f, b, t, an, v = self.files, self.browser, self.training, self.annotation, self.views
        menu = self.menuBar()
        filem = menu.addMenu("&File")
        self.act_open = self._act(
            "&Open corpus…",
            f.open_dialog,
            QKeySequence.StandardKey.Open,
            f"Open a corpus file: {corpus_formats_in_words()}",
            filem,
        )
        self.act_open_folder = self._act(
            "Open brat &folder…",
            f.open_folder_dialog,
            None,
            "Open a folder of brat pairs (NAME.txt + NAME.ann), one document per pair; "
            "Save writes each pair back",
            filem,
        )
        self.recent_menu = f.recent_menu = filem.addMenu("Open &recent")
        f.refresh_recent()
        filem.addSeparator()
        self.act_open_nbest = self._act(
            "Open &N-best list…",
            f.open_nbest_dialog,
            "Ctrl+Shift+O",
            "Open the N-best list of the open corpus",
            filem,
        )
        self.act_open_dev = self._act(
            "Open &dev N-best list…",
            f.open_dev_nbest_dialog,
            None,
            "Open the N-best list of the development set (for the training curve)",
            filem,
        )
        self.act_open_model = self._act(
            "Open reranker &model…",
            f.open_model_dialog,
            "Ctrl+M",
            "Open a trained reranker and score the candidates",
            filem,
        )
        self.act_open_tagger = self._act(
            "Open &tagger model…",
            f.open_tagger_dialog,
            None,
            "Open a trained tagger (decodes dev corpora)",
            filem,
        )
        self.act_open_kt = self._act(
            "Open se&quence tagger (K&&T)…",
            t.open_kt_dialog,
            None,
            "Open a perceptron or joint (Kazama & Torisawa) tagger and show its candidates "
            "for the open corpus",
            filem,
        )
        self.act_open_results = self._act(
            "Open results &folder…",
            f.open_results_dialog,
            "Ctrl+Shift+L",
            "Resume a saved session: N-best lists and models from a folder",
            filem,
        )
        filem.addSeparator()
        self.act_save_corpus, self.act_save_corpus_as = an.act_save, an.act_save_as
        filem.addAction(an.act_save)
        filem.addAction(an.act_save_as)
        self.act_save = self._act(
            "Save &results to folder…",
            f.save_results_dialog,
            "Ctrl+Shift+S",
            "Save the N-best lists, tagger and reranker of this session",
            filem,
        )
        self._act(
            "Save N-best list…",
            f.save_nbest_dialog,
            None,
            "Save the N-best list of the open corpus",
            filem,
        )
        self._act(
            "Save reranker model…", f.save_model_dialog, None, "Save the trained reranker", filem
        )
        self._act(
            "Save sequence tagger (K&&T)…",
            t.save_kt_dialog,
            None,
            "Save the perceptron or joint tagger trained in this session",
            filem,
        )
        filem.addSeparator()
        self._act(
            "Ad&judicate annotations…",
            self.adjudication.open_dialog,
            None,
            "Merge two or more annotators' files of the same text: agreements kept, disagreements walked "
            "one by one (take A / B, edit, skip)",
            filem,
        )
        self._act(
            "Com&pare annotations…",
            self.agreement.compare_dialog,
            None,
            "Agreement of two annotation files of the same text: span F, Cohen's kappa, the sentences that differ",
            filem,
        )
        filem.addSeparator()
        self._act("&Quit", self.close, QKeySequence.StandardKey.Quit, "Quit nerstudio", filem)

        editm = menu.addMenu("&Edit")
        self.act_undo, self.act_redo, self.act_accept = an.act_undo, an.act_redo, an.act_accept
        # every annotation command with its key (the annotation controller's)
        an.fill_edit_menu(editm)
        self.act_preannotate = self.preannotate.act
        annotatem = menu.addMenu("&Annotate")
        annotatem.addAction(self.act_preannotate)
        annotatem.addAction(self.occurrences.act)  # Label all occurrences…
        self.loop.add_to(annotatem)  # Learn from corrections
        self.notes.add_to(annotatem)  # notes, flags, guidelines
        self.suspects.add_to(annotatem)  # suspect annotations: find, open, accept, dismiss

        viewm = self.view_menu = menu.addMenu("&View")
        for a in v.workspaces.actions():
            viewm.addAction(a)
        viewm.addSeparator()
        for a in self.zoom.actions():
            viewm.addAction(a)
        viewm.addSeparator()
        viewm.addAction(b.act_uncertain_first)  # the browser's order (its controller's action)
        navm = menu.addMenu("&Navigate")
        self.act_next = self._act(
            "&Next sentence",
            lambda: b.step_sentence(1),
            "Ctrl+Down",
            "Next sentence (among those the filters show)",
            navm,
        )
        self.act_prev = self._act(
            "&Previous sentence",
            lambda: b.step_sentence(-1),
            "Ctrl+Up",
            "Previous sentence (among those the filters show)",
            navm,
        )
        self.act_next_err = self._act(
            "Next &error",
            lambda: b.step_matching("error", 1),
            "F8",
            "Next sentence whose top candidate is wrong, in the browser's order",
            navm,
        )
        self._act(
            "Next &change by the reranker",
            lambda: b.step_matching("changed", 1),
            "Shift+F8",
            "Next sentence where the reranker picks another candidate, in the browser's order",
            navm,
        )
        navm.addAction(b.act_next_uncertain)
        navm.addSeparator()
        self._act(
            "&Find…",
            lambda: self._focus(v.search, select_all=True),
            QKeySequence.StandardKey.Find,
            "Search the sentences",
            navm,
        )
        self._act(
            "Focus &sentence",
            lambda: self._focus(v.sentence_view),
            "Alt+S",
            "Focus the sentence view (the annotation keys work there and in the corpus browser)",
            navm,
        )
        self._act(
            "Focus &corpus",
            lambda: self._focus(v.corpus_view),
            "Alt+1",
            "Focus the corpus browser",
            navm,
        )
        self._act(
            "Focus N-&best",
            lambda: self._focus(v.nbest_view),
            "Alt+2",
            "Focus the candidate table",
            navm,
        )
        self._act(
            "Focus f&eatures",
            lambda: self._focus(v.feature_panel.search, select_all=True),
            "Alt+3",
            "Filter the features",
            navm,
        )
        self._act(
            "Compare with &top candidate",
            self.candidates.compare_with_top,
            "Ctrl+D",
            "Compare the selected candidate with the tagger's top candidate",
            navm,
        )

        trainm = menu.addMenu("&Train")
        self.act_train = self._act(
            "&Train",
            t.train_from_menu,
            "F5",
            "Start training with the settings of the training panel",
            trainm,
        )
        self.act_cancel = self._act(
            "&Cancel", t.cancel_job, "Shift+F5", "Stop the running job", trainm
        )
        self._act(
            "Folds run &on…",
            t.choose_executor,
            None,
            "Where the full pipeline's jackknife folds run: here, local processes or a Dask cluster",
            trainm,
        )
        self.act_cancel.setEnabled(False)
        trainm.addSeparator()
        self.act_show_training = v.workspaces.spaces["train"].action
        self.act_show_stepper = v.workspaces.spaces["teach"].action
        self.act_step = self._act(
            "&Step through training",
            self._step,
            "F10",
            "One boosting round or perceptron update in the Teach workspace",
            trainm,
        )

        def step_back() -> None:
            v.stepper_dock.show()
            v.stepper_panel.back()

        self.act_step_back = self._act(
            "Step &back",
            step_back,
            "Shift+F10",
            "Take the last step back in the Teach workspace",
            trainm,
        )
        self._act(
            "Export curve &image…",
            v.curve_plot.export_image_dialog,
            None,
            "Save the training curves as PNG or SVG",
            trainm,
        )
        self._act(
            "Export curve &data…",
            v.curve_plot.export_csv_dialog,
            None,
            "Save the training curves as CSV",
            trainm,
        )

        helpm = menu.addMenu("&Help")
        self._act(
            "&Keyboard shortcuts",
            self.show_shortcuts,
            QKeySequence.StandardKey.HelpContents,
            "List the keyboard shortcuts",
            helpm,
        )
        self._act(
            "Open &log folder",
            self.open_log_folder,
            None,
            "Open the folder of nerstudio's log file (errors with their tracebacks, a child process's too)",
            helpm,
        )
        self._act(
            "&About nerstudio",
            self.about,
            None,
            "About nerstudio and the papers it implements",
            helpm,
        )

        self._build_toolbar()

    def _build_toolbar(self) -> None:
        """One row of icons (the names are in the tooltips and the menus): it fits at 1280 px
        whatever the actions are called."""
        from PySide6.QtCore import QSize, Qt  # Qt's namespace costs 40 ms: not before the shell

        from . import icons

        tb = self.addToolBar("Main")
        tb.setObjectName("mainToolbar")
        tb.setMovable(False)
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        tb.setIconSize(QSize(22, 22))
        entries = (
            (self.act_open, "open", "openButton"),
            (self.act_save_corpus, "save", "saveCorpusButton"),
            None,
            (self.act_undo, "undo", "undoButton"),
            (self.act_redo, "redo", "redoButton"),
            (self.act_accept, "accept", "acceptButton"),
            None,
            (self.act_prev, "previous", "previousButton"),
            (self.act_next, "next", "nextButton"),
            (self.act_next_err, "next_error", "nextErrorButton"),
            None,
            (self.act_train, "train", "trainToolButton"),
            (self.act_cancel, "cancel", "cancelToolButton"),
        )
        for e in entries:
            if e is None:
                tb.addSeparator()
                continue
            a, name, obj = e
            a.setIcon(icons.icon(name))
            if not a.toolTip() or a.toolTip() == a.text().replace("&", ""):
                key = a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                a.setToolTip(a.text().replace("&", "") + (f" ({key})" if key else ""))
            tb.addAction(a)
            tb.widgetForAction(a).setObjectName(obj)
        self.toolbar = tb

    def _focus(self, widget: QWidget, select_all: bool = False) -> None:
        """Bring ``widget``'s workspace forward (if it is not showing it) and focus it (and,
        for a line edit, select its text)."""
        if not self.views.workspaces.holds(widget):
            self.views.workspaces.reveal(widget)
        widget.setFocus()
        if select_all and isinstance(widget, QLineEdit):
            widget.selectAll()

    def _step(self) -> None:
        self.views.stepper_dock.show()
        self.views.stepper_panel.step()

    def _on_busy(self, busy: bool) -> None:
        self.act_cancel.setEnabled(busy)
        self.act_train.setEnabled(not busy)
        for a in (
            self.act_open,
            self.act_open_nbest,
            self.act_open_model,
            self.act_open_results,
            self.act_open_kt,
        ):
            a.setEnabled(not busy)

    # -- shortcuts -------------------------------------------------------------------------
    def shortcuts(self) -> list[tuple[str, str]]:
        """The window's shortcuts (the annotation keys are in :meth:`shortcuts_html`'s own table)."""
        out = []
        mine = set(self.annotation.annotation_actions())
        for a in self.findChildren(QAction):
            if not a.shortcut().isEmpty() and a.text() and a not in mine:
                out.append(
                    (
                        a.shortcut().toString(QKeySequence.SequenceFormat.NativeText),
                        a.text().replace("&", ""),
                    )
                )
        return sorted(set(out), key=lambda x: x[1])

    def shortcut_groups(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """The keys grouped by task: the annotation keys, then each menu's (View: workspaces,
        zoom and presentation), then any the menus do not list."""
        mine = set(self.annotation.annotation_actions())
        groups = [
            ("Annotate (sentence view or corpus browser focused)", self.annotation.shortcut_rows())
        ]
        seen: set = set()
        titles = {
            "File": "Files",
            "Edit": "Edit",
            "View": "Workspaces, zoom and presentation",
            "Navigate": "Move through the corpus",
            "Train": "Train and Teach",
            "Help": "Help",
        }
        for menu_action in self.menuBar().actions():
            menu = menu_action.menu()
            if not isinstance(menu, QMenu):
                continue
            rows = []
            todo = list(menu.actions())
            while todo:
                a = todo.pop(0)
                sub = a.menu()
                if isinstance(sub, QMenu):
                    todo.extend(sub.actions())
                elif a.shortcuts() and a.text() and a not in mine and a not in seen:
                    seen.add(a)
                    keys = ", ".join(
                        k.toString(QKeySequence.SequenceFormat.NativeText) for k in a.shortcuts()
                    )
                    rows.append(
                        (keys, a.text().replace("&&", "\0").replace("&", "").replace("\0", "&"))
                    )
            title = menu_action.text().replace("&", "")
            groups.append((titles.get(title, title), rows))
        rest = [
            (k, t)
            for k, t in self.shortcuts()
            if not any(t == r[1] for _g, rows in groups for r in rows)
        ]
        groups.append(("Other", rest))
        return [(t, rows) for t, rows in groups if rows]

    def shortcuts_html(self) -> str:
        from .views.shortcuts_dialog import groups_html

        return groups_html(self.shortcut_groups(), 2, SHORTCUTS_NOTE)

    def show_shortcuts(self) -> None:
        from .views.shortcuts_dialog import ShortcutsDialog

        ShortcutsDialog(self.shortcut_groups(), SHORTCUTS_NOTE, self).exec()

    # -- help ------------------------------------------------------------------------------
    def about(self) -> None:
        from .. import __version__

        QMessageBox.about(self, "About nerstudio", ABOUT_HTML.format(version=__version__))

    def open_log_folder(self) -> str:
        """Help ▸ Open log folder: the folder of the rotating log file, in the file manager."""
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        from .. import logs

        folder = str(logs.ensure_log_dir())
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(folder)):
            self.statusBar().showMessage(f"The log folder is {folder}", 10000)
        return folder


SHORTCUTS_NOTE = (
    "In the candidate table: arrows move, Ctrl+click selects a second candidate to compare."
)

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
