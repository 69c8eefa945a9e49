"""What a projector and a newcomer hit in the real window: presentation mode on a small screen,
the tables' rows, the focus after a workspace switch, texts cut short. Checked on the real window,
shown offscreen."""

from __future__ import annotations

import pytest
from helpers import ROOT

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

pytestmark = pytest.mark.ux


@pytest.fixture
def shown(window, qtbot):
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    base = QApplication.font()
    yield window
    window.zoom.reset()
    QApplication.setFont(base)


@pytest.mark.slow
@pytest.mark.parametrize(
    "keys", [("annotate", Qt.Key.Key_2, "inspect"), ("inspect", Qt.Key.Key_1, "annotate")]
)
def test_after_a_workspace_switch_the_keys_go_to_the_sentence(shown, qtbot, keys):
    w = shown
    start, key, goal = keys
    w.workspaces.activate(start)
    w.select_sentence(0)
    w.entity_table.setFocus() if start == "annotate" else w.sentence_view.setFocus()
    qtbot.wait(20)
    qtbot.keyClick(QApplication.focusWidget() or w, key, Qt.KeyboardModifier.ControlModifier)
    qtbot.wait(20)
    assert w.workspaces.current == goal
    assert QApplication.focusWidget() is w.sentence_view


@pytest.mark.slow
def test_after_switching_to_train_the_focus_is_on_its_page(shown, qtbot):
    w = shown
    w.workspaces.activate("annotate")
    w.entity_table.setFocus()
    qtbot.keyClick(w.entity_table, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    qtbot.wait(20)
    assert QApplication.focusWidget() is w.training_panel.start_combo  # its first field


def _contrast_with_white(c) -> float:
    def lin(v):
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    lum = 0.2126 * lin(c.red()) + 0.7152 * lin(c.green()) + 0.0722 * lin(c.blue())
    return 1.05 / (lum + 0.05)


def test_the_mode_bar_labels_stay_readable_under_the_mouse_and_checked(shown, qtbot):
    """The labels are white: the panel a hovered or the checked button gets must be dark (the
    style's own light panel made them white on white)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QToolButton

    bar = shown.workspaces.bar
    buttons = bar.findChildren(QToolButton)
    for b in buttons:
        b.setAttribute(Qt.WidgetAttribute.WA_UnderMouse, True)  # as when the mouse is over it
    img = bar.grab().toImage()
    for b in buttons:
        corner = img.pixelColor(b.mapTo(bar, QPoint(5, b.height() - 5)))
        assert _contrast_with_white(corner) >= 3.0, (b.objectName(), corner.name())


PRESENT_ON_SMALL_SCREEN = r"""
import sys, tempfile
from PySide6.QtCore import QRect, QSettings
from PySide6.QtWidgets import QApplication, QPushButton
app = QApplication([])
from nerstudio.gui.main_window import MainWindow
w = MainWindow(QSettings(tempfile.mkdtemp() + "/s.ini", QSettings.Format.IniFormat))
assert w.load_demo() and w.runner.wait(60000)
w.show()
app.processEvents()
w.zoom.toggle_presentation()
for _ in range(10):
    app.processEvents()
print("factor", w.zoom.factor)
screen = w.screen().geometry()
for name in ("annotate", "inspect", "train", "teach"):
    w.workspaces.activate(name)
    w.jobs.views.wait(60000)  # Teach prepares in the worker: never exit while it runs
    for _ in range(10):
        app.processEvents()
    ws = w.workspaces.spaces[name]
    hint, room = ws.page.minimumSizeHint(), ws.scroll.viewport().size()
    if hint.width() > room.width() or hint.height() > room.height():
        print("overflow", name, hint.width() - room.width(), hint.height() - room.height())
    if name == "train":
        for b in w.views.curve_plot.findChildren(QPushButton):
            r = QRect(b.mapToGlobal(b.rect().topLeft()), b.size())
            if not screen.contains(r):
                print("off-screen", b.text())
w.zoom.toggle_presentation()
"""


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1024, 768), (960, 540)])  # 960×540: 1920×1080 at scale 2
def test_presentation_mode_fits_a_small_screen(size, tmp_path):
    """F11 on a projector's 1024×768 (or 1920×1080 at scale 2): every workspace's page fits the
    screen without scrolling, the plot's buttons are on it, and the type is not smaller than
    before. Run in a process of its own: the screen's size is fixed when Qt starts."""
    import json
    import os
    import subprocess
    import sys

    cfg = tmp_path / "screen.json"
    cfg.write_text(
        json.dumps(
            {
                "screens": [
                    {
                        "name": "small",
                        "x": 0,
                        "y": 0,
                        "width": size[0],
                        "height": size[1],
                        "logicalDpi": 96,
                        "logicalBaseDpi": 96,
                        "dpr": 1,
                    }
                ]
            }
        )
    )
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=f"offscreen:configfile={cfg}",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    root = ROOT
    out = subprocess.run(
        [sys.executable, "-c", PRESENT_ON_SMALL_SCREEN],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    factor = float(next(x for x in lines if x.startswith("factor")).split()[1])
    assert factor >= 1.0
    if size[0] >= 1024:
        assert factor > 1.0  # presentation still enlarges on a projector's screen
    problems = [x for x in lines if x.startswith(("overflow", "off-screen"))]
    assert problems == []


INSPECT_ROWS = r"""
import json, tempfile
from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from nerstudio.gui.main_window import MainWindow
w = MainWindow(QSettings(tempfile.mkdtemp() + "/s.ini", QSettings.Format.IniFormat))
w.show()
assert w.load_demo() and w.runner.wait(60000)
def settle():
    for _ in range(5):
        app.processEvents()
        w.jobs.wait(60000)
        w.jobs.views.wait(60000)
        QCoreApplication.sendPostedEvents()
w.workspaces.activate("inspect")
settle()
fp, nb = w.feature_panel, w.nbest_view
longest = (-1, 0)  # the sentence whose two first candidates have the longest "why"
for k in range(40):
    w.select_sentence(k)
    settle()
    if nb.model().rowCount() >= 2:
        w.nbest_panel.select(0, 1)
        settle()
        longest = max(longest, (len(fp.why_text()), k))
w.select_sentence(longest[1])
settle()
w.nbest_panel.select(0, 1)
settle()
def shown(view):
    return view.viewport().visibleRegion().boundingRect().height()
label = fp.header
box = getattr(fp, "header_box", label)  # the box that shows the label, if any
print(json.dumps({
    "why": len(fp.why_text()),
    "nbest_rows": shown(nb) / nb.rowHeight(0),
    "tree_rows": shown(fp.view) / fp.view.rowHeight(fp.proxy.index(0, 0)),
    "label_needs": label.heightForWidth(label.width()),
    "label_height": label.height(),
    "box_height": box.height(),
    "box_shown": label.visibleRegion().boundingRect().height(),
    "page_scrolls": w.workspaces.spaces["inspect"].scroll.verticalScrollBar().maximum() > 0,
}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("size", [(960, 540), (1024, 768), (1280, 800)])
def test_inspect_keeps_four_rows_of_each_table_and_the_why_uncut(size, tmp_path):
    """Inspect at 1920×1080 and scale 2 (960×540), or on a small laptop: the candidates and the
    feature tree each show at least four rows, and the "why" sentence above the tree is never cut
    (what its box cannot show scrolls); the sentence gives up its height for them, not the page's
    scroll bar. Run in a process of its own: the screen's size is fixed when Qt starts."""
    import json
    import os
    import subprocess
    import sys

    cfg = tmp_path / "screen.json"
    screen = {"name": "s", "x": 0, "y": 0, "width": size[0], "height": size[1]}
    screen.update(logicalDpi=96, logicalBaseDpi=96, dpr=1)
    cfg.write_text(json.dumps({"screens": [screen]}))
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=f"offscreen:configfile={cfg}",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    root = ROOT
    out = subprocess.run(
        [sys.executable, "-c", INSPECT_ROWS],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["why"] > 200  # a comparison with a long explanation is shown
    assert got["nbest_rows"] >= 4, got
    assert got["tree_rows"] >= 4, got
    assert got["label_needs"] <= got["label_height"], got  # the label is never squeezed
    assert got["box_shown"] == got["box_height"], got  # nor its box (what it shows is seen)
    assert not got["page_scrolls"], got


def test_the_adjudication_report_is_named_as_the_docs_say():
    from pathlib import Path

    from nerstudio.adjudication import report_name

    docs = (ROOT / "docs" / "annotating-faster.md").read_text()
    assert Path(report_name("/x/merged.conll")).name == "merged.conll.report.json"
    assert "`merged.conll.report.json`" in docs and "NAME.report.json" not in docs


def test_the_messages_say_what_happened_and_what_save_does():
    from nerstudio.app.keepboth import MergePlan, describe
    from nerstudio.gui.controllers.file_owner import disk_note

    gone = disk_note("eng.testb", "missing")
    assert gone.startswith("eng.testb was deleted or moved")
    assert "Save writes this window's version there again" in gone
    assert "both versions" not in gone  # nothing of the file is left to keep
    changed = disk_note("eng.testb", "changed")
    assert "changed by another program" in changed and "keep both" in changed
    plan = MergePlan(True, conflicts=[1, 4, 6], mine=[1, 4, 6, 8])
    text = describe(plan)
    assert "3 sentences (2, 5, 7) were changed in both versions" in text
    assert " it " not in text


@pytest.mark.slow
@pytest.mark.parametrize("factor", [1.0, 1.5])
def test_f1_never_breaks_a_key_name(shown, qtbot, factor):
    """Each key cell of the F1 list is one line: "Ctrl+Shift+R" above "eturn" read as two keys."""
    from nerstudio.gui.views.shortcuts_dialog import ShortcutsDialog

    w = shown
    w.zoom.set_factor(factor, remember=False)
    groups = w.shortcut_groups()
    d = ShortcutsDialog(groups, "", w)
    qtbot.addWidget(d)
    d.show()
    qtbot.waitExposed(d)
    keys = {k for _t, rows in groups for k, _what in rows}
    split = []
    block = d.text.document().begin()
    while block.isValid():
        if block.text() in keys and block.layout().lineCount() > 1:
            split.append(block.text())
        block = block.next()
    assert split == []
    assert d.text.horizontalScrollBar().maximum() == 0  # and the list still fits its width


def test_the_browser_shows_a_long_documents_counts_whole(shown, qtbot, tmp_path):
    """A document of 1,200 tokens and 1,200 entities: its counts are not cut to "1…"."""
    lines = ["-DOCSTART- -X- -X- O", ""]
    for s in range(120):
        lines += [f"Name{s}x{t} NNP B-NP B-PER" for t in range(10)] + [""]
    path = tmp_path / "long.conll"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    w = shown
    assert w.load_corpus(str(path))
    view = w.corpus_view
    model = view.model()
    fm = view.fontMetrics()
    doc = model.index(0, 0)
    for c in (1, 2):
        text = str(model.data(model.index(0, c)))
        assert text == "1200"
        assert view.header().sectionSize(c) >= fm.horizontalAdvance(text) + 8, c
    assert doc.isValid()


def test_after_save_as_the_header_and_title_name_the_new_file(empty_window, qtbot, tmp_path):
    w = empty_window
    src = tmp_path / "first.conll"
    src.write_text(
        "-DOCSTART- -X- -X- O\n\nJohn NNP B-NP B-PER\nruns VBZ B-VP O\n\nMary NNP B-NP B-PER\n\n",
        encoding="utf-8",
    )
    assert w.load_corpus(str(src))
    w.select_sentence(1)
    assert "first.conll:6" in w.sentence_header.text()
    w.dialogs.ask_save = lambda *_a: str(tmp_path / "second.conll")
    assert w.annotation.owner.save_as(wait=True)
    qtbot.waitUntil(lambda: not w.annotation.owner.saving, timeout=10000)
    assert "second.conll:6" in w.sentence_header.text()
    assert "first.conll" not in w.sentence_header.text()
    assert "second.conll" in w.windowTitle()


def _rows_shown(view) -> int:
    vp, model = view.viewport().rect(), view.model()
    return sum(
        1
        for r in range(model.rowCount())
        if not view.visualRect(model.index(r, 0)).isEmpty()
        and vp.contains(view.visualRect(model.index(r, 0)).adjusted(0, 0, -1, -1))
    )


@pytest.mark.slow
def test_the_comparison_tables_show_several_rows_at_1280x800(shown, qtbot):
    """The per-type scores, the error analysis and the sentence list each showed one or two rows
    on a 1280×800 screen."""
    w = shown
    w.workspaces.activate("inspect")
    w.select_sentence(0)
    w.tabs.setCurrentWidget(w.comparison_view)
    view = w.comparison_view
    qtbot.waitUntil(lambda: view.result is not None, timeout=30000)
    qtbot.wait(50)
    assert _rows_shown(view.table) >= 4
    assert _rows_shown(view.list) >= 4
    view.left_tabs.setCurrentWidget(view.errors)
    qtbot.wait(50)
    assert _rows_shown(view.errors) >= 4


@pytest.mark.slow
def test_table_rows_follow_the_font_through_zoom_steps(shown, qtbot):
    """Rows grew apart from the text: each step scaled every row and a fixed minimum, so after
    presentation mode and back the candidates' rows were twice the text's height (two rows on a
    screen at scale 2)."""
    w = shown
    w.workspaces.activate("inspect")
    w.select_sentence(0)
    view = w.nbest_view
    start = view.rowHeight(0)
    for factor in (1.5, 1.25, 1.1, 2.0):
        w.zoom.set_factor(factor, remember=False)
        assert view.rowHeight(0) <= view.fontMetrics().height() + 10, factor
        assert view.rowHeight(3) == view.rowHeight(0)
    w.zoom.set_factor(1.0, remember=False)
    assert view.rowHeight(0) == start


@pytest.mark.slow
@pytest.mark.parametrize("factor", [1.0, 1.5])
def test_the_gold_entities_column_gets_the_room(shown, qtbot, factor):
    """The entity's words get what the type, tokens and length columns do not need ("ME…" in
    presentation mode, when every column kept a scaled 100 px)."""
    w = shown
    w.workspaces.activate("annotate")
    w.select_sentence(0)  # PRIME MINISTER CALLS EARLY ELECTION IN MERIDIA: MERIDIA is LOC
    w.zoom.set_factor(factor, remember=False)
    qtbot.wait(30)
    t = w.entity_table
    hdr = t.horizontalHeader()
    assert t.item(0, 1).text() == "MERIDIA"
    assert hdr.sectionSize(1) >= t.fontMetrics().horizontalAdvance("MERIDIA") + 8
    assert hdr.sectionSize(1) >= max(hdr.sectionSize(c) for c in (0, 2, 3))
    for c in range(4):  # no title cut either
        title = t.horizontalHeaderItem(c).text()
        assert hdr.sectionSize(c) >= hdr.fontMetrics().horizontalAdvance(title) + 6, title


def test_a_feature_templates_description_spans_the_empty_columns(shown, qtbot):
    """At 1280×800 the feature panel beside the candidates cut a template's description after
    two words ("TO101 · shape …"): its row spans the empty Value and Weight columns now."""
    from PySide6.QtCore import QModelIndex

    w = shown
    w.workspaces.activate("inspect")
    w.select_sentence(0)
    qtbot.wait(50)
    view = w.feature_panel.view
    model, hdr = view.model(), view.header()
    last = model.columnCount() - 1
    rows = [r for r in range(model.rowCount()) if model.hasChildren(model.index(r, 0))]
    assert rows
    fm = view.fontMetrics()
    for r in rows:
        idx = model.index(r, 0)
        text = str(idx.data())
        spanned = view.isFirstColumnSpanned(r, QModelIndex())
        right = hdr.sectionViewportPosition(last) if spanned else hdr.sectionSize(0)
        shown_text = fm.elidedText(
            text, Qt.TextElideMode.ElideRight, right - view.visualRect(idx).left() - 8
        )
        if text.startswith("TO101"):
            assert shown_text.startswith("TO101 · shape of the word 2"), shown_text
        # the total is still in the last column
        assert model.index(r, last).data()


def test_the_resources_checkboxes_stay_whole_whatever_the_algorithm(shown, qtbot):
    """The training panel's Resources row wraps on a narrow panel; when the algorithm's rows
    were rebuilt, the form gave it one line and cut the wrapped checkboxes off (Clusters
    vanished with the perceptron at 1280 × 800)."""
    shown.workspaces.activate("train")
    shown.resize(1024, 768)  # narrow enough that the row wraps
    qtbot.wait(200)
    panel = shown.training_panel
    for algo in ("boost", "perceptron", "averaged", "voted", "boost"):
        panel.set_algorithm(algo)
        qtbot.wait(100)
        assert any(b.geometry().top() > 0 for b in panel.resources.values()), "no wrap"
        for name, box in panel.resources.items():
            row = box.parentWidget()
            assert box.isVisible() and row.rect().contains(box.geometry()), (algo, name)


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1280, 800), (1024, 768)])
def test_the_run_controls_stay_in_sight_below_the_training_settings(shown, qtbot, size):
    """The Train and Cancel buttons, the progress bar and its message are what an instructor
    watches during a run: below the settings, which scroll, never scrolled away with them (the
    bar and its "done" sat below the fold at 1280 × 800)."""
    shown.resize(*size)
    shown.workspaces.activate("train")
    panel = shown.training_panel
    panel.set_start("tagger")  # the longest settings: the full pipeline's
    panel.set_algorithm("perceptron")
    qtbot.wait(200)
    scroll = shown.views.training_scroll
    assert scroll.verticalScrollBar().maximum() > 0, "the settings fit: nothing is tested"
    for bar_at in (0, scroll.verticalScrollBar().maximum()):
        scroll.verticalScrollBar().setValue(bar_at)
        qtbot.wait(50)
        for w in (panel.train_button, panel.cancel_button, panel.progress, panel.message):
            seen = w.visibleRegion().boundingRect()
            assert w.isVisible() and seen == w.rect(), (w.objectName(), bar_at, seen, w.rect())
