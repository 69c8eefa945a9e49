"""The main window's menus, its toolbar and the list of its keyboard shortcuts, built from the
rows of :mod:`~nerstudio.gui.menu_rows`.

A base class of :class:`~nerstudio.gui.main_window.MainWindow`: the window calls
:meth:`WindowMenus._build_menus` once its controllers exist (the actions call the controllers'
methods, and the controllers have built the rows they keep), and Help ▸ Keyboard shortcuts
reads the keys back from the menus. Kept apart from the
window so that the window's module stays light (importing this one loads no numpy, no
document model and no controller; nor Qt's namespace of enums, nor the icons, which load with
the toolbar).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLineEdit, QMainWindow, QMenu, QMessageBox, QToolBar

from .actions import build_action, resolve
from .dialogs import corpus_formats_in_words
from .menu_rows import ACTIONS, ALIASES, MENUS, SEPARATOR, TOOLBAR
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
    def _build_menus(self) -> None:
        """The window's own actions from their rows, the menu bar from :data:`MENUS` (the
        controllers' actions exist already), then the toolbar."""
        values = {"corpus_formats": corpus_formats_in_words()}
        for row in ACTIONS:
            if not row.keeper:  # the window's own; the others' keepers built theirs
                setattr(self, row.attr, build_action(self, row, self, **values))
        for name, path in ALIASES.items():
            setattr(self, name, resolve(self, path))
        bar = self.menuBar()
        reserved = {a.text(): held for a in bar.actions() if isinstance(held := a.menu(), QMenu)}
        for m in MENUS:
            menu = reserved.get(m.title) or bar.addMenu(m.title)  # the shell's, or a new one
            menu.setEnabled(True)
            if m.attr:
                setattr(self, m.attr, menu)
            for item in m.items:
                if item == SEPARATOR:
                    menu.addSeparator()
                elif item.startswith("@"):
                    self._fill_section(item[1:], menu)
                else:
                    menu.addAction(resolve(self, item))
        self._build_toolbar()

    def _fill_section(self, name: str, menu: QMenu) -> None:
        """The part of a menu that follows the session: the recent files, the annotation
        commands (their types follow the corpus), the workspaces."""
        if name == "recent":
            self.recent_menu = self.files.recent_menu = menu.addMenu("Open &recent")
            self.files.refresh_recent()
        elif name == "annotation":
            self.annotation.fill_edit_menu(menu)  # refilled when the corpus's types change
        elif name == "workspaces":
            for a in self.views.workspaces.actions():
                menu.addAction(a)
        else:
            raise ValueError(f"no menu section {name!r}")

    def _build_toolbar(self) -> None:
        """One row of icons (the names are in the tooltips and the menus): it fits at 1280 px
        whatever the actions are called."""
        from PySide6.QtCore import Qt  # Qt's namespace costs 40 ms: not before the shell

        from . import icons

        tb = self._main_toolbar()
        tb.clear()  # the shell's placeholder
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        tb.setIconSize(QSize(22, 22))
        for e in TOOLBAR:
            if isinstance(e, str):  # SEPARATOR
                tb.addSeparator()
                continue
            path, name, obj = e
            a = resolve(self, path)
            a.setIcon(icons.icon(name))
            if not a.toolTip() or a.toolTip() == a.text().replace("&", ""):
                key = a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                a.setToolTip(a.text().replace("&", "") + (f" ({key})" if key else ""))
            tb.addAction(a)
            tb.widgetForAction(a).setObjectName(obj)
        self.toolbar = tb

    def _main_toolbar(self) -> QToolBar:
        """The tool bar (the shell's, if it made one)."""
        tb = self.findChild(QToolBar, "mainToolbar")
        if tb is None:
            tb = self.addToolBar("Main")
            tb.setObjectName("mainToolbar")
            tb.setMovable(False)
        return tb

    def _reserve_bars(self) -> None:
        """The shell's menu bar, tool bar and status bar: the menus' titles (disabled until the
        build fills the menus), an empty tool bar as tall as its buttons will make it and an
        empty status bar (the views bring theirs), so that nothing in the window moves when it is
        built."""
        self.statusBar()
        bar = self.menuBar()
        for m in MENUS:
            bar.addMenu(m.title).setEnabled(False)
        tb = self._main_toolbar()
        tb.setIconSize(QSize(22, 22))  # the icons' size: a button without one is as tall
        placeholder = QAction(tb)
        placeholder.setEnabled(False)
        tb.addAction(placeholder)

    def focus_part(self, part: str) -> None:
        """Navigate ▸ Find… and Focus …: bring the part's workspace forward (if it is not
        showing it) and focus it (and, for a line edit, select its text)."""
        path, select_all = FOCUS[part]
        widget = resolve(self.views, path)
        if not self.views.workspaces.holds(widget):
            self.views.workspaces.reveal(widget)
        widget.setFocus()
        if select_all and isinstance(widget, QLineEdit):
            widget.selectAll()

    def step_training(self, delta: int) -> None:
        """Train ▸ Step through training (``delta`` 1) and Step back (-1), in the Teach
        workspace."""
        self.views.stepper_dock.show()
        if delta > 0:
            self.stepper.step()
        else:
            self.stepper.back()

    def _on_busy(self, busy: bool) -> None:
        """A job started or ended: the actions the rows enable by the job state follow."""
        for row in ACTIONS:
            if row.enabled_when:
                resolve(self, row.id).setEnabled(busy == (row.enabled_when == "busy"))

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
        titles = {m.title: m.keys_title for m in MENUS}
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
            title = menu_action.text()
            groups.append((titles.get(title, title.replace("&", "")), rows))
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


#: Navigate ▸ Find… and Focus …: the part -> (its path from the views, select its text)
FOCUS = {
    "search": ("search", True),
    "sentence": ("sentence_view", False),
    "corpus": ("corpus_view", False),
    "nbest": ("nbest_view", False),
    "features": ("feature_panel.search", True),
}

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
