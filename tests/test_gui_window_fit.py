"""What a projector and a newcomer hit in the real window: presentation mode on a small screen,
the tables' rows, the focus after a workspace switch, texts cut short. Checked on the real window,
shown offscreen."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize(
    "keys", [("annotate", Qt.Key_2, "inspect"), ("inspect", Qt.Key_1, "annotate")]
)
def test_after_a_workspace_switch_the_keys_go_to_the_sentence(shown, qtbot, keys):
    w = shown
    start, key, goal = keys
    w.workspaces.activate(start)
    w.select_sentence(0)
    w.entity_table.setFocus() if start == "annotate" else w.sentence_view.setFocus()
    qtbot.wait(20)
    qtbot.keyClick(QApplication.focusWidget() or w, key, Qt.ControlModifier)
    qtbot.wait(20)
    assert w.workspaces.current == goal
    assert QApplication.focusWidget() is w.sentence_view


def test_after_switching_to_train_the_focus_is_on_its_page(shown, qtbot):
    w = shown
    w.workspaces.activate("annotate")
    w.entity_table.setFocus()
    qtbot.keyClick(w.entity_table, Qt.Key_3, Qt.ControlModifier)
    qtbot.wait(20)
    focus = QApplication.focusWidget()
    assert focus is not None and w.training_panel.isAncestorOf(focus)


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
