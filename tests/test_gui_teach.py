"""Teach trains on the training list and scores on the dev list whatever corpus is open, says
which lists it uses, and is ready when the application starts in Teach (issue 24, points 1-2)."""

from __future__ import annotations

import html

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR
from nerstudio.nbest import NBestList

pytestmark = pytest.mark.skipif(
    not (DEMO_MODEL_DIR / "train.nbest.npz").exists(),
    reason="demo model not built (tools/demo/build_model.py)",
)


def _train_words():
    return [list(w) for w in NBestList.load(str(DEMO_MODEL_DIR / "train.nbest.npz")).words]


def _uses_training_list(panel) -> None:
    assert panel.stepper is not None and panel.step_button.isEnabled()
    assert [list(w) for w in panel.train.nbest.words] == _train_words()
    dev = NBestList.load(str(DEMO_MODEL_DIR / "dev.nbest.npz"))
    assert len(panel.dev) == len(dev)
    text = panel.sources.text()
    assert "train.nbest.npz" in text and "dev.nbest.npz" in text


def test_teach_trains_on_the_training_list_with_dev_open(window, qtbot):
    panel = window.stepper_panel
    window.act_show_stepper.trigger()
    _uses_training_list(panel)
    pairs = panel.stepper.session.n_pairs
    assert window.load_corpus(str(DEMO_DIR / "dev.conll"))
    assert window.runner.wait(60000)
    # the dev corpus's own list is attached
    assert window.document.nbest_path.endswith("dev.nbest.npz")
    _uses_training_list(panel)
    assert panel.stepper.session.n_pairs == pairs
    # back to the training corpus, then Reset: still the training list
    assert window.load_corpus(str(DEMO_DIR / "train.conll"))
    assert window.runner.wait(60000)
    panel.reset_button.click()
    _uses_training_list(panel)
    assert panel.stepper.session.n_pairs == pairs


def test_teach_finds_the_training_list_when_the_session_starts_on_dev(empty_window, qtbot):
    w = empty_window
    w.load_dev_nbest(str(DEMO_MODEL_DIR / "dev.nbest.npz"))
    assert w.load_model(str(DEMO_MODEL_DIR / "reranker.npz"))
    assert w.runner.wait(60000)
    assert w.load_corpus(str(DEMO_DIR / "dev.conll"))
    assert w.runner.wait(60000)
    w.act_show_stepper.trigger()
    _uses_training_list(w.stepper_panel)


def test_teach_is_ready_when_the_application_starts_in_teach(make_window, tmp_path, qtbot):
    st = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    st.setValue("window/workspace", "teach")
    st.sync()
    w = make_window()
    assert w.workspaces.current == "teach"
    w.show()
    assert w.load_demo()
    assert w.runner.wait(60000)
    qtbot.waitUntil(lambda: w.stepper_panel.stepper is not None, timeout=30000)
    panel = w.stepper_panel
    for b in (panel.step_button, panel.run_button, panel.reset_button):
        assert b.isEnabled()
    assert "Open an N-best list" not in panel.info.text()
    _uses_training_list(panel)
    panel.step_button.click()
    assert "Round 1" in panel.info.text()
    # the chosen feature's shape codes in words (issue 24, point 9)
    from nerstudio.rerank.glossary import decode_value

    value = decode_value(panel.last.feature_name)
    assert value and html.escape(value) in panel.info.text()


def test_teach_steps_back_and_shows_the_pair_side_by_side(window, qtbot):
    """Issue 24, point 6: Back (Shift+F10) restores the learner and shows the step before; a
    perceptron update shows the wrong top candidate and the oracle side by side with the features
    that moved; the curve's axes are the Train curves' (whole-number steps)."""
    w = window
    w.act_show_stepper.trigger()
    panel = w.stepper_panel
    assert not panel.back_button.isEnabled()
    for _ in range(3):
        panel.step_button.click()
    assert panel.back_button.isEnabled() and panel.stepper.rounds == 3
    third = panel.info.text()
    panel.back_button.click()
    assert (
        panel.stepper.rounds == 2
        and "Round 2" in panel.info.text()
        and len(panel.stepper.history) == 3
    )
    panel.step_button.click()
    assert panel.info.text() == third  # the same round again
    w.act_step_back.trigger()
    w.act_step_back.trigger()
    w.act_step_back.trigger()
    assert panel.stepper.rounds == 0 and not panel.back_button.isEnabled()
    assert panel.pages.currentWidget() is panel.intro_page and "Boosting ready" in panel.info.text()
    # the perceptron: one update, its pair side by side
    panel.algo.setCurrentIndex(1)
    u = panel.step()
    assert panel.pair.isVisibleTo(panel)
    text = panel.pair.text()
    jt, jo = u.top_row - u.rows.start, u.oracle_row - u.rows.start
    assert f"Wrong top: candidate {jt + 1}" in text and f"Oracle: candidate {jo + 1}" in text
    names = [panel.names[f] for f in u.plus[:3].tolist() + u.minus[:3].tolist()]
    assert names and all(html.escape(n) in text for n in names)
    w_before = panel.stepper.w.copy()
    panel.step()
    panel.back()
    assert (panel.stepper.w == w_before).all() and panel.pair.text() == text
    # the curve's axes
    from matplotlib.figure import Figure

    from nerstudio.gui.views.stepper import _draw_history

    fig = Figure()
    _draw_history(fig, [(0, 50.0), (1, 51.0), (2, 52.5)], "update")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "perceptron update" and ax.get_ylabel() == "dev F (%)"
    assert all(float(t).is_integer() for t in ax.get_xticks())


@pytest.mark.parametrize("how", ["open N-best list", "beside the corpus"])
def test_teach_never_trains_on_a_dev_list_attached_as_the_corpus_list(empty_window, qtbot, how):
    """The dev corpus with its dev list attached as the corpus's own list (File ▸ Open N-best
    list, or the list found beside the corpus), and no dev list opened as such: Teach still
    trains on the training list beside it and scores on the dev list, and names both."""
    w = empty_window
    assert w.load_corpus(str(DEMO_DIR / "dev.conll"), attach=how == "beside the corpus")
    if how == "open N-best list":
        assert w.load_nbest(str(DEMO_MODEL_DIR / "dev.nbest.npz"))
    assert w.runner.wait(60000)
    assert w.document.nbest_path.endswith("dev.nbest.npz") and w.document.dev_nbest is None
    w.act_show_stepper.trigger()
    panel = w.stepper_panel
    _uses_training_list(panel)
    text = panel.sources.text()
    assert "Trains on <b>train.nbest.npz</b> (337 sentences)" in text
    assert "dev F on <b>dev.nbest.npz</b> (78 sentences)" in text
    assert len(panel.stepper.history) == 1  # the curve starts at round 0, on the dev list


def test_teach_finds_the_dev_list_beside_the_training_list(empty_window, qtbot):
    """The training list opened with File ▸ Open N-best list and no dev list opened: the dev
    list beside it draws the curve."""
    w = empty_window
    assert w.load_corpus(str(DEMO_DIR / "train.conll"), attach=False)
    assert w.load_nbest(str(DEMO_MODEL_DIR / "train.nbest.npz"))
    assert w.runner.wait(60000)
    w.act_show_stepper.trigger()
    _uses_training_list(w.stepper_panel)


def test_a_dev_list_alone_is_not_trained_on(empty_window, tmp_path, qtbot):
    """A dev list with no training list open or beside it: nothing to step through, and the
    panel says which list it is."""
    import shutil

    w = empty_window
    shutil.copyfile(DEMO_MODEL_DIR / "dev.nbest.npz", tmp_path / "dev.nbest.npz")
    assert w.load_corpus(str(DEMO_DIR / "dev.conll"), attach=False)
    assert w.load_nbest(str(tmp_path / "dev.nbest.npz"))
    assert w.runner.wait(60000)
    w.act_show_stepper.trigger()
    panel = w.stepper_panel
    assert panel.stepper is None and not panel.step_button.isEnabled()
    assert "(dev.nbest.npz) is a dev list" in panel.info.text()
