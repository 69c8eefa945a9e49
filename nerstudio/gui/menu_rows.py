"""The window's actions and menus as data: one row per action, the menus and the toolbar by id.

An :class:`ActionRow` is all there is to one action: its ``id`` (where the QAction is kept, as a
path from the window: ``"act_open"`` on the window, ``"loop.act_learn"`` on the loop
controller), its text, keys and tip, the method it calls (``call``, a path from the object that
keeps it) with its arguments, whether it is checkable, and when the window enables it
(``enabled_when``: while a job runs, or while none does). :func:`~nerstudio.gui.actions.build_action`
makes the QAction of a row: the window builds its own rows with its menus
(:meth:`~nerstudio.gui.window_menus.WindowMenus._build_menus`), a controller or the zoom builds
the rows it keeps, as it uses them from its first moment.

:data:`MENUS` is the menu bar: each menu's items are action ids, :data:`SEPARATOR`, or a
section the window fills (``"@recent"``: the recent files; ``"@annotation"``: the annotation
commands, whose type actions follow the corpus, from the annotation controller's own table;
``"@workspaces"``: the workspaces' actions, from their table in
:mod:`~nerstudio.gui.window_views`). :data:`TOOLBAR` is the toolbar's row of icons.
Help ▸ Keyboard shortcuts reads the keys back from the menus built from these rows, grouped
under each menu's ``keys_title``; tests/gui/test_gui_menus.py compares the menus with a record and
checks that no two actions share a key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from PySide6.QtGui import QKeySequence

StandardKey = QKeySequence.StandardKey
Key = str | QKeySequence.StandardKey


@dataclass(frozen=True)
class ActionRow:
    id: str  # where the action is kept: a path from the window ("act_open", "loop.act_learn")
    text: str
    call: str  # the method, a path from the object that keeps the action ("files.open_dialog")
    keys: tuple[Key, ...] = ()
    tip: str = ""  # "{corpus_formats}": the formats the window reads, in words
    # None: Qt's triggered(checked) goes to the method as it takes it; a tuple: exactly these
    args: tuple | None = None
    checkable: bool = False
    enabled_when: Literal["", "idle", "busy"] = ""  # the window's job state that enables it
    window_wide: bool = False  # its keys work wherever the focus is, whether a menu shows it or not

    @property
    def keeper(self) -> str:
        """The path from the window of the object that keeps (and builds) the action."""
        return self.id.rpartition(".")[0]

    @property
    def attr(self) -> str:
        return self.id.rpartition(".")[2]


ACTIONS: tuple[ActionRow, ...] = (
    # -- File -----------------------------------------------------------------------------
    ActionRow(
        "act_open",
        "&Open corpus…",
        "files.open_dialog",
        (StandardKey.Open,),
        "Open a corpus file: {corpus_formats}",
        enabled_when="idle",
    ),
    ActionRow(
        "act_open_folder",
        "Open brat &folder…",
        "files.open_folder_dialog",
        tip="Open a folder of brat pairs (NAME.txt + NAME.ann), one document per pair; "
        "Save writes each pair back",
    ),
    ActionRow(
        "act_open_nbest",
        "Open &N-best list…",
        "files.open_nbest_dialog",
        ("Ctrl+Shift+O",),
        "Open the N-best list of the open corpus",
        enabled_when="idle",
    ),
    ActionRow(
        "act_open_dev",
        "Open &dev N-best list…",
        "files.open_dev_nbest_dialog",
        tip="Open the N-best list of the development set (for the training curve)",
    ),
    ActionRow(
        "act_open_model",
        "Open reranker &model…",
        "files.open_model_dialog",
        ("Ctrl+M",),
        "Open a trained reranker and score the candidates",
        enabled_when="idle",
    ),
    ActionRow(
        "act_open_tagger",
        "Open &tagger model…",
        "files.open_tagger_dialog",
        tip="Open a trained tagger (decodes dev corpora)",
    ),
    ActionRow(
        "act_open_kt",
        "Open se&quence tagger (K&&T)…",
        "training.open_kt_dialog",
        tip="Open a perceptron or joint (Kazama & Torisawa) tagger and show its candidates "
        "for the open corpus",
        enabled_when="idle",
    ),
    ActionRow(
        "act_open_results",
        "Open results &folder…",
        "files.open_results_dialog",
        ("Ctrl+Shift+L",),
        "Resume a saved session: N-best lists and models from a folder",
        enabled_when="idle",
    ),
    ActionRow(
        "annotation.act_save",
        "&Save corpus",
        "save_corpus",
        (StandardKey.Save,),
        "Save the gold annotations to the corpus file (its own format)",
        args=(),
    ),
    ActionRow(
        "annotation.act_save_as",
        "Save corpus &as…",
        "save_corpus_as_dialog",
        tip="Save the gold annotations to another file",
    ),
    ActionRow(
        "act_save",
        "Save &results to folder…",
        "files.save_results_dialog",
        ("Ctrl+Shift+S",),
        "Save the N-best lists, tagger and reranker of this session",
    ),
    ActionRow(
        "act_save_nbest",
        "Save N-best list…",
        "files.save_nbest_dialog",
        tip="Save the N-best list of the open corpus",
    ),
    ActionRow(
        "act_save_model",
        "Save reranker model…",
        "files.save_model_dialog",
        tip="Save the trained reranker",
    ),
    ActionRow(
        "act_save_kt",
        "Save sequence tagger (K&&T)…",
        "training.save_kt_dialog",
        tip="Save the perceptron or joint tagger trained in this session",
    ),
    ActionRow(
        "act_adjudicate",
        "Ad&judicate annotations…",
        "adjudication.open_dialog",
        tip="Merge two or more annotators' files of the same text: agreements kept, disagreements "
        "walked one by one (take A / B, edit, skip)",
    ),
    ActionRow(
        "act_compare_files",
        "Com&pare annotations…",
        "agreement.compare_dialog",
        tip="Agreement of two annotation files of the same text: span F, Cohen's kappa, the "
        "sentences that differ",
    ),
    ActionRow("act_quit", "&Quit", "close", (StandardKey.Quit,), "Quit nerstudio"),
    # -- Edit: the annotation controller's (its commands and type actions are its own table) --
    ActionRow("annotation.act_undo", "&Undo", "undo", (StandardKey.Undo,)),
    ActionRow("annotation.act_redo", "&Redo", "redo", (StandardKey.Redo,)),
    ActionRow(
        "annotation.act_accept",
        "&Accept candidate as gold",
        "accept_candidate",
        ("Ctrl+Return",),
        "Make the selected candidate's entities the gold of this sentence",
        args=(),
    ),
    # -- Annotate -------------------------------------------------------------------------
    ActionRow(
        "preannotate.act",
        "&Pre-annotate with model…",
        "ask_and_run",
        tip="Fill the corpus's sentences with a model's entities, to correct them (one undoable "
        "edit)",
    ),
    ActionRow(
        "occurrences.act",
        "Label all &occurrences…",
        "open_dialog",
        ("Ctrl+Shift+A",),
        "Find every occurrence of the selected entity's words (or the search text) in the "
        "corpus and label or remove them in one undoable edit",
        args=(),
    ),
    ActionRow(
        "loop.act_learn",
        "&Learn from corrections",
        "toggle",
        tip="A model learns from every sentence you review and re-predicts the others",
        checkable=True,
    ),
    ActionRow(
        "loop.act_review",
        "&Mark sentence reviewed",
        "mark_reviewed",
        ("Ctrl+Shift+Return",),
        "Accept the shown sentence as it is: it becomes reviewed (the model learns it)",
    ),
    ActionRow(
        "loop.act_save",
        "Save loop &model…",
        "save_dialog",
        tip="Save the model in the loop as a model folder (nerstudio.load reads it)",
    ),
    ActionRow(
        "notes.act_note",
        "Add &note…",
        "edit_note",
        ("Ctrl+Shift+N",),
        "Write a note on the shown sentence (saved with the corpus)",
    ),
    ActionRow(
        "notes.act_flag",
        "Toggle &flag",
        "toggle_flag",
        ("Ctrl+Shift+F",),
        "Flag the shown sentence (or take its flag away): the browser's Flagged filter "
        "finds it again",
        checkable=True,
    ),
    ActionRow(
        "suspects.act_find",
        "Find &suspect annotations…",
        "find_dialog",
        tip="Rank the sentences by the evidence that their gold annotation is wrong (a tagger "
        "that did not see a sentence judges it); the browser's Suspects filter lists them",
        args=(),
        enabled_when="idle",
    ),
    ActionRow(
        "suspects.act_open",
        "Open suspects l&ist…",
        "open_dialog",
        tip="Open a list of suspect annotations written by nerstudio suspects --out",
        args=(),
    ),
    ActionRow(
        "suspects.act_accept",
        "&Accept suggestion",
        "accept",
        ("F9",),
        "Put the suspect's suggestion in the sentence (one undoable edit; the sentence "
        "becomes reviewed)",
        args=(),
    ),
    ActionRow(
        "suspects.act_dismiss",
        "&Dismiss suspect",
        "dismiss",
        ("Shift+F9",),
        "Keep the gold of the suspect's region and mark the sentence reviewed",
        args=(),
    ),
    ActionRow(
        "notes.act_choose",
        "Choose &guidelines file…",
        "choose_dialog",
        tip="Show this Markdown file as the open corpus's guidelines",
    ),
    # -- View -----------------------------------------------------------------------------
    ActionRow(
        "zoom.act_in",
        "Zoom &in",
        "zoom_in",
        ("Ctrl+=", "Ctrl++"),
        "Larger text, tables and plots (remembered)",
        args=(),
        window_wide=True,
    ),
    ActionRow(
        "zoom.act_out",
        "Zoom &out",
        "zoom_out",
        ("Ctrl+-",),
        "Smaller text, tables and plots",
        args=(),
        window_wide=True,
    ),
    ActionRow(
        "zoom.act_reset",
        "&Actual size",
        "reset",
        ("Ctrl+0",),
        "Back to 100 %",
        args=(),
        window_wide=True,
    ),
    ActionRow(
        "zoom.act_present",
        "&Presentation mode",
        "toggle_presentation",
        ("F11",),
        "Full screen with larger type, for a projector (F11 again to leave)",
        args=(),
        checkable=True,
        window_wide=True,
    ),
    ActionRow(
        "browser.act_uncertain_first",
        "Most &uncertain first",
        "set_uncertain_first",
        tip="Order the browser's sentences most uncertain first (by the top candidate's "
        "probability unless another measure is chosen in the browser)",
        checkable=True,
    ),
    # -- Navigate -------------------------------------------------------------------------
    ActionRow(
        "act_next",
        "&Next sentence",
        "browser.step_sentence",
        ("Ctrl+Down",),
        "Next sentence (among those the filters show)",
        args=(1,),
    ),
    ActionRow(
        "act_prev",
        "&Previous sentence",
        "browser.step_sentence",
        ("Ctrl+Up",),
        "Previous sentence (among those the filters show)",
        args=(-1,),
    ),
    ActionRow(
        "act_next_err",
        "Next &error",
        "browser.step_matching",
        ("F8",),
        "Next sentence whose top candidate is wrong, in the browser's order",
        args=("error", 1),
    ),
    ActionRow(
        "act_next_change",
        "Next &change by the reranker",
        "browser.step_matching",
        ("Shift+F8",),
        "Next sentence where the reranker picks another candidate, in the browser's order",
        args=("changed", 1),
    ),
    ActionRow(
        "browser.act_next_uncertain",
        "Next most &uncertain",
        "step_uncertain",
        ("F7",),
        "Go to the next sentence in the most-uncertain-first order (among those the filters show)",
        args=(1,),
    ),
    ActionRow(
        "act_find",
        "&Find…",
        "focus_part",
        (StandardKey.Find,),
        "Search the sentences",
        args=("search",),
    ),
    ActionRow(
        "act_focus_sentence",
        "Focus &sentence",
        "focus_part",
        ("Alt+S",),
        "Focus the sentence view (the annotation keys work there and in the corpus browser)",
        args=("sentence",),
    ),
    ActionRow(
        "act_focus_corpus",
        "Focus &corpus",
        "focus_part",
        ("Alt+1",),
        "Focus the corpus browser",
        args=("corpus",),
    ),
    ActionRow(
        "act_focus_nbest",
        "Focus N-&best",
        "focus_part",
        ("Alt+2",),
        "Focus the candidate table",
        args=("nbest",),
    ),
    ActionRow(
        "act_focus_features",
        "Focus f&eatures",
        "focus_part",
        ("Alt+3",),
        "Filter the features",
        args=("features",),
    ),
    ActionRow(
        "act_compare_top",
        "Compare with &top candidate",
        "candidates.compare_with_top",
        ("Ctrl+D",),
        "Compare the selected candidate with the tagger's top candidate",
    ),
    # -- Train ----------------------------------------------------------------------------
    ActionRow(
        "act_train",
        "&Train",
        "training.train_from_menu",
        ("F5",),
        "Start training with the settings of the training panel",
        enabled_when="idle",
    ),
    ActionRow(
        "act_cancel",
        "&Cancel",
        "training.cancel_job",
        ("Shift+F5",),
        "Stop the running job",
        enabled_when="busy",
    ),
    ActionRow(
        "act_folds",
        "Folds run &on…",
        "training.choose_executor",
        tip="Where the full pipeline's jackknife folds run: here, local processes or a Dask "
        "cluster",
    ),
    ActionRow(
        "act_step",
        "&Step through training",
        "step_training",
        ("F10",),
        "One boosting round or perceptron update in the Teach workspace",
        args=(1,),
    ),
    ActionRow(
        "act_step_back",
        "Step &back",
        "step_training",
        ("Shift+F10",),
        "Take the last step back in the Teach workspace",
        args=(-1,),
    ),
    ActionRow(
        "act_export_image",
        "Export curve &image…",
        "views.curve_plot.export_image_dialog",
        tip="Save the training curves as PNG or SVG",
    ),
    ActionRow(
        "act_export_data",
        "Export curve &data…",
        "views.curve_plot.export_csv_dialog",
        tip="Save the training curves as CSV",
    ),
    # -- Help -----------------------------------------------------------------------------
    ActionRow(
        "act_shortcuts",
        "&Keyboard shortcuts",
        "show_shortcuts",
        (StandardKey.HelpContents,),
        "List the keyboard shortcuts",
    ),
    ActionRow(
        "act_log_folder",
        "Open &log folder",
        "open_log_folder",
        tip="Open the folder of nerstudio's log file (errors with their tracebacks, a child "
        "process's too)",
    ),
    ActionRow(
        "act_about",
        "&About nerstudio",
        "about",
        tip="About nerstudio and the papers it implements",
    ),
)

ROWS: dict[str, ActionRow] = {r.id: r for r in ACTIONS}

SEPARATOR = "---"


@dataclass(frozen=True)
class Menu:
    title: str
    keys_title: str  # the group's title in Help ▸ Keyboard shortcuts
    items: tuple[str, ...]  # action ids, SEPARATOR, "@section"s (see the module docstring)
    attr: str = ""  # the window keeps the menu under this name


MENUS: tuple[Menu, ...] = (
    Menu(
        "&File",
        "Files",
        (
            "act_open",
            "act_open_folder",
            "@recent",
            SEPARATOR,
            "act_open_nbest",
            "act_open_dev",
            "act_open_model",
            "act_open_tagger",
            "act_open_kt",
            "act_open_results",
            SEPARATOR,
            "annotation.act_save",
            "annotation.act_save_as",
            "act_save",
            "act_save_nbest",
            "act_save_model",
            "act_save_kt",
            SEPARATOR,
            "act_adjudicate",
            "act_compare_files",
            SEPARATOR,
            "act_quit",
        ),
    ),
    Menu("&Edit", "Edit", ("@annotation",)),
    Menu(
        "&Annotate",
        "Annotate",
        (
            "preannotate.act",
            "occurrences.act",
            SEPARATOR,
            "loop.act_learn",
            "loop.act_review",
            "loop.act_save",
            SEPARATOR,
            "notes.act_note",
            "notes.act_flag",
            "notes.act_choose",
            SEPARATOR,
            "suspects.act_find",
            "suspects.act_open",
            "suspects.act_accept",
            "suspects.act_dismiss",
        ),
    ),
    Menu(
        "&View",
        "Workspaces, zoom and presentation",
        (
            "@workspaces",
            SEPARATOR,
            "zoom.act_in",
            "zoom.act_out",
            "zoom.act_reset",
            "zoom.act_present",
            SEPARATOR,
            "browser.act_uncertain_first",
        ),
        attr="view_menu",
    ),
    Menu(
        "&Navigate",
        "Move through the corpus",
        (
            "act_next",
            "act_prev",
            "act_next_err",
            "act_next_change",
            "browser.act_next_uncertain",
            SEPARATOR,
            "act_find",
            "act_focus_sentence",
            "act_focus_corpus",
            "act_focus_nbest",
            "act_focus_features",
            "act_compare_top",
        ),
    ),
    Menu(
        "&Train",
        "Train and Teach",
        (
            "act_train",
            "act_cancel",
            "act_folds",
            SEPARATOR,
            "act_step",
            "act_step_back",
            "act_export_image",
            "act_export_data",
        ),
    ),
    Menu("&Help", "Help", ("act_shortcuts", "act_log_folder", "act_about")),
)

#: the window's other names for actions others keep: window attribute -> action path
ALIASES = {
    "act_save_corpus": "annotation.act_save",
    "act_save_corpus_as": "annotation.act_save_as",
    "act_undo": "annotation.act_undo",
    "act_redo": "annotation.act_redo",
    "act_accept": "annotation.act_accept",
    "act_preannotate": "preannotate.act",
    "act_show_training": "views.workspaces.spaces.train.action",
    "act_show_stepper": "views.workspaces.spaces.teach.action",
}

#: the toolbar, left to right: (action id, icon, object name) or SEPARATOR
TOOLBAR: tuple[tuple[str, str, str] | str, ...] = (
    ("act_open", "open", "openButton"),
    ("annotation.act_save", "save", "saveCorpusButton"),
    SEPARATOR,
    ("annotation.act_undo", "undo", "undoButton"),
    ("annotation.act_redo", "redo", "redoButton"),
    ("annotation.act_accept", "accept", "acceptButton"),
    SEPARATOR,
    ("act_prev", "previous", "previousButton"),
    ("act_next", "next", "nextButton"),
    ("act_next_err", "next_error", "nextErrorButton"),
    SEPARATOR,
    ("act_train", "train", "trainToolButton"),
    ("act_cancel", "cancel", "cancelToolButton"),
)
