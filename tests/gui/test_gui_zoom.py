"""Zoom for projectors (issue 24, point 4): Ctrl+= / Ctrl+- / Ctrl+0 scale the text, the sentence
view, the tables and the plots, the factor is remembered in the settings, F11 is a full-screen
presentation mode with larger type, and the F1 list is grouped by task and fits the screen."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from nerstudio.gui.views import figure_image
from nerstudio.gui.views.shortcuts_dialog import ShortcutsDialog


@pytest.fixture
def shown(window, qtbot):
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    base = QApplication.font()
    yield window
    window.zoom.reset()  # the application's font is shared by every test
    QApplication.setFont(base)


def _key(w, qtbot, key, mod=Qt.KeyboardModifier.ControlModifier):
    qtbot.keyClick(w.sentence_view, key, mod)


@pytest.mark.slow
def test_ctrl_plus_minus_zero_scale_the_whole_interface(shown, qtbot):
    w = shown
    w.workspaces.activate("inspect")
    w.select_sentence(0)
    pt = QApplication.font().pointSizeF()
    token = w.sentence_view.token_rect(0).width()
    nb = w.nbest_view.horizontalHeader()
    rank = nb.sectionSize(0)
    row = w.nbest_view.verticalHeader().defaultSectionSize()
    _key(w, qtbot, Qt.Key.Key_Equal)
    _key(w, qtbot, Qt.Key.Key_Equal)
    assert w.zoom.factor == pytest.approx(1.25)
    assert QApplication.font().pointSizeF() == pytest.approx(pt * 1.25)
    assert w.sentence_view.token_rect(0).width() > token * 1.15  # measured again in the larger font
    assert (
        nb.sectionSize(0) >= round(rank * 1.2)
        and w.nbest_view.verticalHeader().defaultSectionSize() > row
    )
    assert figure_image._ZOOM[0] == pytest.approx(1.25)  # plots drawn at 1.25 × their dpi
    assert float(w.settings.value("view/zoom")) == pytest.approx(1.25)
    _key(w, qtbot, Qt.Key.Key_Minus)
    assert w.zoom.factor == pytest.approx(1.1)
    _key(w, qtbot, Qt.Key.Key_0)
    assert w.zoom.factor == 1.0 and QApplication.font().pointSizeF() == pytest.approx(pt)
    assert abs(nb.sectionSize(0) - rank) <= 2 and figure_image._ZOOM[0] == 1.0


@pytest.mark.slow
def test_the_zoom_is_remembered_between_sessions(shown, make_window, qtbot):
    pt = QApplication.font().pointSizeF()
    shown.zoom.set_factor(1.5)
    shown.settings.sync()
    QApplication.setFont(shown.zoom.base)  # as a new process would start
    shown.zoom.factor = 1.0
    again = make_window()
    try:
        assert again.zoom.factor == pytest.approx(1.5)
        assert QApplication.font().pointSizeF() == pytest.approx(pt * 1.5)
    finally:
        again.zoom.reset()


@pytest.mark.slow
def test_presentation_mode_is_full_screen_with_larger_type(shown, qtbot):
    w = shown
    qtbot.keyClick(w.sentence_view, Qt.Key.Key_F11)
    qtbot.waitUntil(lambda: w.isFullScreen(), timeout=5000)
    assert w.zoom.presenting and w.zoom.factor == pytest.approx(1.5)
    assert float(w.settings.value("view/zoom", 1.0)) == 1.0  # presentation is not the saved zoom
    qtbot.keyClick(w.sentence_view, Qt.Key.Key_F11)
    qtbot.waitUntil(lambda: not w.isFullScreen(), timeout=5000)
    assert not w.zoom.presenting and w.zoom.factor == 1.0


def test_f1_groups_the_keys_by_task_and_fits_the_screen(shown, qtbot):
    w = shown
    groups = dict(w.shortcut_groups())
    assert "Annotate (sentence view or corpus browser focused)" in groups
    view = [t for k, t in groups["Workspaces, zoom and presentation"]]
    assert {
        "Annotate",
        "Inspect",
        "Train",
        "Teach",
        "Zoom in",
        "Zoom out",
        "Actual size",
        "Presentation mode",
    } <= set(view)
    assert any(t == "Step through training" for _k, t in groups["Train and Teach"])
    d = ShortcutsDialog(w.shortcut_groups(), "", w)
    qtbot.addWidget(d)
    avail = w.screen().availableGeometry()
    assert d.width() <= avail.width() and d.height() <= avail.height()
    assert "Zoom in" in d.text.toPlainText() and "Label as LOC" in d.text.toPlainText()


@pytest.mark.parametrize("dpi", [100, 200])
def test_a_curve_legend_fits_its_plot_at_any_screen_scale(dpi):
    """At QT_SCALE_FACTOR=2 the figure's dpi doubles with its fonts: the legend's labels are
    wrapped to the plot's width in points, so the legend stays inside its plot's width (it ran
    past the axes and over the y label when the wrap counted pixels)."""
    from matplotlib.figure import Figure

    from nerstudio.gui.views.curve_plot import Run, draw_runs

    fig = Figure(figsize=(5.0, 3.6), dpi=dpi, layout="constrained")
    label = "boost(rounds=3000, eval_every=100) feats(min_sentences=2) [reranker.npz]"
    run = Run(label, unit="round", steps=[0, 100, 200], f=[51.7, 60.0, 69.1], state="done")
    axes = draw_runs(fig, [run], False, False, True)
    fig.canvas.draw()
    ax = axes["round"]
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "\n" in texts[0]  # wrapped, at either dpi alike
    assert texts[0].replace("\n", " ") == label
    legend = ax.get_legend().get_window_extent()
    assert legend.width <= ax.get_window_extent().width
