"""The views of the pages and tabs not shown first are built on first use (issue 26).

A new window has not built the training settings, the step-through panel, the comparison, the
model's features, What if or the agreement; reading one (``window.comparison_view``) or bringing
its workspace or tab forward builds it, in its place, wired to its controller.
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

LAZY = {  # view -> its workspace
    "training_panel": "train",
    "stepper_panel": "teach",
    "comparison_view": "inspect",
    "model_features_view": "inspect",
    "what_if_view": "inspect",
    "agreement_view": "annotate",
}


def test_a_new_window_builds_none_of_them(empty_window):
    v = empty_window.views
    assert {name: v.built(name) for name in LAZY} == dict.fromkeys(LAZY)


@pytest.mark.parametrize("name", sorted(LAZY))
def test_reading_one_builds_it_in_its_place(empty_window, name):
    w = empty_window
    view = getattr(w.views, name)
    assert view is not None and w.views.built(name) is view
    assert getattr(w.views, name) is view  # built once
    assert w.workspaces.workspace_of(view) == LAZY[name]
    w.workspaces.reveal(view)
    assert w.workspaces.current == LAZY[name] and w.workspaces.holds(view)
    others = {n for n in LAZY if n != name and w.views.built(n) is not None}
    assert others <= {n for n in LAZY if LAZY[n] == LAZY[name]}  # at most its page's current tab


def test_showing_its_workspace_or_tab_builds_it(empty_window, qtbot):
    w = empty_window
    w.show()
    qtbot.waitExposed(w)
    w.workspaces.activate("train")
    qtbot.waitUntil(lambda: w.views.built("training_panel") is not None)
    assert w.views.built("stepper_panel") is None
    w.workspaces.activate("inspect")
    assert w.views.built("comparison_view") is None
    w.views.inspect_tabs.setCurrentIndex(1)  # Comparison
    qtbot.waitUntil(lambda: w.views.built("comparison_view") is not None)
    assert w.tabs.currentWidget() is w.comparison_view


def test_built_late_it_is_wired_to_its_controller(empty_window):
    w = empty_window
    asked: list = []
    w.training.start_training = asked.append  # what the panel's Train button reaches
    w.comparison.refresh = lambda force=False: asked.append(("refresh", force))
    w.training_panel.trainRequested.emit("settings")
    w.comparison_view.refreshRequested.emit()
    assert asked == ["settings", ("refresh", True)]


def _panel_state(w) -> dict:
    p = w.training_panel
    bar = p.progress
    return {
        "message": p.message.text(),
        "bar": (bar.minimum(), bar.maximum(), bar.value(), bar.format()),
        "running": p.running,
        "train": p.train_button.isEnabled(),
        "cancel": p.cancel_button.isEnabled(),
        "dev": p.dev_path.text(),
        "state": p.state.text(),
    }


@pytest.mark.slow
def test_the_jobs_of_the_start_do_not_build_the_panel_nor_change_what_it_shows(
    make_window, tmp_path
):
    """Opening the demo (its jobs, their progress, a corpus and a dev list) does not build the
    training panel; built afterwards, it says what it would have said had it been there all
    along, and so after a job that failed."""
    eager, lazy = make_window(), make_window()
    assert eager.training_panel is not None  # built first
    for w in (eager, lazy):
        assert w.load_demo() and w.runner.wait(60000)
    assert lazy.views.built("training_panel") is None
    assert _panel_state(lazy) == _panel_state(eager)
    assert _panel_state(eager)["dev"].endswith("dev.nbest.npz")
    # a reranker file that cannot be read: its job fails, the panel says so the same way
    bad = tmp_path / "reranker.npz"
    bad.write_bytes(b"not a reranker")
    eager, lazy = make_window(), make_window()  # (reading the state above built the panel)
    assert eager.training_panel is not None
    for w in (eager, lazy):
        w.dialogs.critical = lambda *a: None
        assert w.files.load_model(str(bad)) and w.runner.wait(60000)
    assert lazy.views.built("training_panel") is None
    assert _panel_state(lazy) == _panel_state(eager)
    assert _panel_state(lazy)["message"].startswith("Failed: ")
