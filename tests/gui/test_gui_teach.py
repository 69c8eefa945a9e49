"""Teach trains on the training list and scores on the dev list whatever corpus is open, says
which lists it uses, and is ready when the application starts in Teach (issue 24, points 1-2)."""

from __future__ import annotations

import html

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from nerstudio.demo import DEMO_MODEL_DIR
from nerstudio.nbest import NBestList

pytestmark = pytest.mark.skipif(
    not (DEMO_MODEL_DIR / "train.nbest.npz").exists(),
    reason="demo model not built (tools/demo/build_model.py)",
)


def _train_words():
    return [list(w) for w in NBestList.load(str(DEMO_MODEL_DIR / "train.nbest.npz")).words]


def ready(teach, qtbot) -> None:
    """Wait for the step-through's set-up (always in the window's worker): ``teach`` is the
    window's Teach controller, which owns the stepper."""
    qtbot.waitUntil(lambda: teach.learner is not None and not teach.busy, timeout=60000)


def _uses_training_list(w, qtbot) -> None:
    panel, teach = w.stepper_panel, w.stepper
    ready(teach, qtbot)
    assert teach.learner is not None and panel.step_button.isEnabled()
    assert [list(w) for w in teach.train.nbest.words] == _train_words()
    dev = NBestList.load(str(DEMO_MODEL_DIR / "dev.nbest.npz"))
    assert len(teach.dev) == len(dev)
    text = panel.sources.text()
    assert "train.nbest.npz" in text and "dev.nbest.npz" in text


@pytest.mark.slow
def test_teach_trains_on_the_training_list_with_dev_open(demo_files, window, qtbot):
    panel = window.stepper_panel
    teach = window.stepper
    window.act_show_stepper.trigger()
    _uses_training_list(window, qtbot)
    pairs = teach.learner.session.n_pairs
    assert window.load_corpus(str(demo_files / "dev.conll"))
    assert window.runner.wait(60000)
    # the dev corpus's own list is attached
    assert window.document.nbest_path.endswith("dev.nbest.npz")
    _uses_training_list(window, qtbot)
    assert teach.learner.session.n_pairs == pairs
    # back to the training corpus, then Reset: still the training list
    assert window.load_corpus(str(demo_files / "train.conll"))
    assert window.runner.wait(60000)
    panel.reset_button.click()
    _uses_training_list(window, qtbot)
    assert teach.learner.session.n_pairs == pairs


def test_teach_finds_the_training_list_when_the_session_starts_on_dev(
    demo_files, empty_window, qtbot
):
    w = empty_window
    w.load_dev_nbest(str(demo_files / "model" / "dev.nbest.npz"))
    assert w.load_model(str(demo_files / "model" / "reranker.npz"))
    assert w.runner.wait(60000)
    assert w.load_corpus(str(demo_files / "dev.conll"))
    assert w.runner.wait(60000)
    w.act_show_stepper.trigger()
    _uses_training_list(w, qtbot)


@pytest.mark.slow
def test_teach_is_ready_when_the_application_starts_in_teach(make_window, tmp_path, qtbot):
    st = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    st.setValue("window/workspace", "teach")
    st.sync()
    w = make_window()
    assert w.workspaces.current == "teach"
    w.show()
    assert w.load_demo()
    assert w.runner.wait(60000)
    qtbot.waitUntil(lambda: w.stepper.learner is not None, timeout=30000)
    panel = w.stepper_panel
    teach = w.stepper
    for b in (panel.step_button, panel.run_button, panel.reset_button):
        assert b.isEnabled()
    assert "Open an N-best list" not in panel.info.text()
    _uses_training_list(w, qtbot)
    panel.step_button.click()
    assert "Round 1" in panel.info.text()
    # the chosen feature's shape codes in words (issue 24, point 9)
    from nerstudio.rerank.glossary import decode_value

    value = decode_value(teach.last.feature_name)
    assert value and html.escape(value) in panel.info.text()


@pytest.mark.slow
def test_teach_steps_back_and_shows_the_pair_side_by_side(window, qtbot):
    """Issue 24, point 6: Back (Shift+F10) restores the learner and shows the step before; a
    perceptron update shows the wrong top candidate and the oracle side by side with the features
    that moved; the curve's axes are the Train curves' (whole-number steps)."""
    w = window
    w.act_show_stepper.trigger()
    panel = w.stepper_panel
    teach = w.stepper
    ready(teach, qtbot)
    assert not panel.back_button.isEnabled()
    for _ in range(3):
        panel.step_button.click()
    assert panel.back_button.isEnabled() and teach.learner.rounds == 3
    third = panel.info.text()
    panel.back_button.click()
    assert (
        teach.learner.rounds == 2
        and "Round 2" in panel.info.text()
        and len(teach.learner.history) == 3
    )
    panel.step_button.click()
    assert panel.info.text() == third  # the same round again
    w.act_step_back.trigger()
    w.act_step_back.trigger()
    w.act_step_back.trigger()
    assert teach.learner.rounds == 0 and not panel.back_button.isEnabled()
    assert panel.pages.currentWidget() is panel.intro_page and "Boosting ready" in panel.info.text()
    # the perceptron: one update, its pair side by side
    panel.algo.setCurrentIndex(1)
    u = teach.step()
    assert panel.pair.isVisibleTo(panel)
    text = panel.pair.text()
    jt, jo = u.top_row - u.rows.start, u.oracle_row - u.rows.start
    assert f"Wrong top: candidate {jt + 1}" in text and f"Oracle: candidate {jo + 1}" in text
    names = [teach.names[f] for f in u.plus[:3].tolist() + u.minus[:3].tolist()]
    assert names and all(html.escape(n) in text for n in names)
    w_before = teach.learner.w.copy()
    teach.step()
    teach.back()
    assert (teach.learner.w == w_before).all() and panel.pair.text() == text
    # the curve's axes
    from matplotlib.figure import Figure

    from nerstudio.gui.views.step_curve import draw_history as _draw_history

    fig = Figure()
    _draw_history(fig, [(0, 50.0), (1, 51.0), (2, 52.5)], "update")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "perceptron update" and ax.get_ylabel() == "dev F (%)"
    assert all(float(t).is_integer() for t in ax.get_xticks())
    # round 0 alone (before the first step): still whole rounds, not matplotlib's ±0.05
    fig = Figure()
    _draw_history(fig, [(0, 51.7)], "round")
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    shown = [t for t in ax.get_xticks() if lo <= t <= hi]
    assert shown[0] == 0 and all(float(t).is_integer() for t in shown)
    assert ax.get_xlabel() == "boosting round"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["open N-best list", "beside the corpus"])
def test_teach_never_trains_on_a_dev_list_attached_as_the_corpus_list(
    demo_files, empty_window, qtbot, how
):
    """The dev corpus with its dev list attached as the corpus's own list (File ▸ Open N-best
    list, or the list found beside the corpus), and no dev list opened as such: Teach still
    trains on the training list beside it and scores on the dev list, and names both."""
    w = empty_window
    assert w.load_corpus(str(demo_files / "dev.conll"), attach=how == "beside the corpus")
    if how == "open N-best list":
        assert w.load_nbest(str(demo_files / "model" / "dev.nbest.npz"))
    assert w.runner.wait(60000)
    assert w.document.nbest_path.endswith("dev.nbest.npz") and w.document.dev_nbest is None
    w.act_show_stepper.trigger()
    panel = w.stepper_panel
    teach = w.stepper
    _uses_training_list(w, qtbot)
    text = panel.sources.text()
    assert "Trains on <b>train.nbest.npz</b> (337 sentences)" in text
    assert "dev F on <b>dev.nbest.npz</b> (78 sentences)" in text
    assert len(teach.learner.history) == 1  # the curve starts at round 0, on the dev list


@pytest.mark.slow
def test_teach_finds_the_dev_list_beside_the_training_list(demo_files, empty_window, qtbot):
    """The training list opened with File ▸ Open N-best list and no dev list opened: the dev
    list beside it draws the curve."""
    w = empty_window
    assert w.load_corpus(str(demo_files / "train.conll"), attach=False)
    assert w.load_nbest(str(demo_files / "model" / "train.nbest.npz"))
    assert w.runner.wait(60000)
    w.act_show_stepper.trigger()
    _uses_training_list(w, qtbot)


def test_a_dev_list_alone_is_not_trained_on(demo_files, empty_window, tmp_path, qtbot):
    """A dev list with no training list open or beside it: nothing to step through, and the
    panel says which list it is."""
    import shutil

    w = empty_window
    shutil.copyfile(demo_files / "model" / "dev.nbest.npz", tmp_path / "dev.nbest.npz")
    assert w.load_corpus(str(demo_files / "dev.conll"), attach=False)
    assert w.load_nbest(str(tmp_path / "dev.nbest.npz"))
    assert w.runner.wait(60000)
    w.act_show_stepper.trigger()
    panel = w.stepper_panel
    teach = w.stepper
    assert teach.learner is None and not panel.step_button.isEnabled()
    assert "(dev.nbest.npz) is a dev list" in panel.info.text()


@pytest.mark.slow
def test_the_first_switch_to_teach_prepares_in_the_worker(window, qtbot, monkeypatch):
    """Entering Teach shows the panel at once, saying it prepares, and hands the global features
    and the first boosting set-up (scipy and the compiled code loading: seconds) to the window's
    worker instead of freezing the window."""
    import threading

    from nerstudio.experiments import stepthrough
    from nerstudio.gui.controllers import stepper as sc

    monkeypatch.setattr(
        sc, "_LOADED", set(), raising=False
    )  # as in a new session: boosting not loaded yet
    built_in = []
    real = stepthrough.BoostingStepper.__init__

    def init(self, *args, **kwargs):
        built_in.append(threading.current_thread())
        real(self, *args, **kwargs)

    monkeypatch.setattr(stepthrough.BoostingStepper, "__init__", init)
    window.act_show_stepper.trigger()
    panel = window.stepper_panel
    teach = window.stepper
    # back in the event loop with nothing built yet: the panel says what it prepares
    assert teach.learner is None and teach.busy and not panel.step_button.isEnabled()
    assert "Computing the global features of 337 sentences" in panel.info.text()
    assert panel.pages.currentWidget() is panel.intro_page and "F10" in panel.intro.text()
    ready(teach, qtbot)
    assert built_in and threading.main_thread() not in built_in
    assert "Boosting ready" in panel.info.text() and panel.step_button.isEnabled()
    # later set-ups of the small demo lists are immediate (the code is loaded now)
    panel.reset_button.click()
    assert teach.learner is not None and built_in[-1] is threading.main_thread()


def test_f10_from_another_workspace_steps_once_teach_is_ready(window, qtbot):
    """F10 from Inspect the first time: Teach comes forward, prepares in the worker, and the
    step pressed meanwhile is done once it is ready (once, not lost)."""
    window.workspaces.activate("inspect")
    window.act_step.trigger()
    panel = window.stepper_panel
    teach = window.stepper
    assert window.workspaces.current == "teach" and teach.busy
    ready(teach, qtbot)
    assert teach.learner.rounds == 1 and "Round 1" in panel.info.text()
    window.act_step.trigger()
    assert teach.learner.rounds == 2


def _shown(window, qtbot, size=(1280, 800)):
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.act_show_stepper.trigger()
    ready(window.stepper, qtbot)
    return window.stepper_panel


def _in_view(table, row: int) -> bool:
    rect = table.visualItemRect(table.item(row, 0))
    return rect.isValid() and table.viewport().rect().contains(rect)


def test_a_perceptron_step_shows_both_compared_candidates_in_view(window, qtbot):
    """The wrong top candidate and the oracle are both in the table's view after an update,
    also when the oracle is far down the N-best list."""
    teach = window.stepper
    panel = _shown(window, qtbot)
    panel.algo.setCurrentIndex(1)
    table = panel.table
    # a small screen, or a large zoom: six rows in view
    rows = table.verticalHeader().defaultSectionSize()
    table.setMaximumHeight(table.horizontalHeader().sizeHint().height() + 6 * rows + 4)
    far = 0
    for _ in range(400):
        u = teach.step()
        if not isinstance(u, stepthrough_update()):
            continue
        jt, jo = u.top_row - u.rows.start, u.oracle_row - u.rows.start
        labels = [table.item(row, 0).text() for row in range(table.rowCount())]
        top, oracle = labels.index(f"{jt + 1} (wrong top)"), labels.index(f"{jo + 1} (oracle)")
        assert _in_view(table, top) and _in_view(table, oracle), (jt, jo)
        # candidates are listed once each
        nums = [int(t.split()[0]) for t in labels]
        assert len(set(nums)) == len(nums) == min(len(u.scores_before), sv_max_rows())
        # a pair further apart than the rows that fit in the view
        if (abs(jt - jo) + 1) * table.rowHeight(0) > table.viewport().height():
            far += 1
            if far >= 3:
                break
    assert far >= 3, "no update whose candidates are further apart than the view"


def sv_max_rows() -> int:
    from nerstudio.gui.views.stepper import MAX_ROWS

    return MAX_ROWS


def stepthrough_update():
    from nerstudio.experiments.stepthrough import PerceptronUpdate

    return PerceptronUpdate


def test_a_boosting_step_shows_both_candidates_of_each_pair(window, qtbot):
    """A round lists its pairs with the better (oracle) and the worse candidate side by side,
    the chosen feature's value on each and the margins; the pair it moved most is shown above
    with both candidates' scores before and after."""
    teach = window.stepper
    panel = _shown(window, qtbot)
    for _ in range(2):
        r = teach.step()
    table = panel.table
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert headers[:4] == ["Sentence", "Better (oracle)", "Worse", "Feature"]
    inf = r.info
    order = np.argsort(-np.abs(inf.margins_after - inf.margins_before), kind="stable")
    off = teach.train.offsets
    for row in range(table.rowCount()):
        p = int(order[row])
        i = int(r.sentences[p])
        better = int(r.oracle_rows[p] - off[i]) + 1
        worse = int(r.other_rows[p] - off[i]) + 1
        assert table.item(row, 1).text().startswith(f"{better}: ")
        assert table.item(row, 2).text().startswith(f"{worse}: ")
        assert better != worse
    assert panel.pair.isVisibleTo(panel)
    text = panel.pair.text()
    p = int(order[0])
    i = int(r.sentences[p])
    assert f"Better (oracle): candidate {int(r.oracle_rows[p] - off[i]) + 1}" in text
    assert f"Worse: candidate {int(r.other_rows[p] - off[i]) + 1}" in text
    assert html.escape(r.feature_name) in text and "score" in text
    assert _in_view(table, 0)
    # the pair gets the height it needs: nothing of it scrolled out of view
    bar = panel.pair_scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() == 0, timeout=5000)


@pytest.mark.parametrize("hist", [[], [(0, 83.1)]], ids=["no point", "round 0"])
def test_the_curve_before_the_first_step_has_whole_steps_and_percent(hist):
    """Before the first step: whole-number ticks from step 0, an F axis within 0–100."""
    from matplotlib.figure import Figure

    from nerstudio.gui.views.step_curve import draw_history as _draw_history

    fig = Figure()
    _draw_history(fig, hist, "round")
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
    assert lo == 0 and hi >= 1 and len(ticks) >= 2
    assert all(float(t).is_integer() for t in ticks)
    ylo, yhi = ax.get_ylim()
    assert 0 <= ylo < yhi <= 100 and yhi - ylo >= 1
    if not hist:
        assert (ylo, yhi) == (0, 100)  # a percentage, not matplotlib's 0–1
    for _, f in hist:
        assert ylo < f < yhi


def test_the_first_curve_is_drawn_at_the_size_it_is_shown(window, qtbot):
    """The first frame of the curve on entering Teach is drawn for the canvas's laid-out size,
    never for a size it had before the panel was laid out (then shown stretched)."""
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    window.act_show_stepper.trigger()
    canvas = window.stepper_panel.canvas
    sizes = []
    canvas.imageChanged.connect(lambda: sizes.append((canvas.image().size(), canvas.size())))
    ready(window.stepper, qtbot)
    qtbot.waitUntil(lambda: bool(sizes), timeout=60000)
    image, widget = sizes[0]
    ratio = canvas.devicePixelRatioF()
    assert (image.width(), image.height()) == (
        round(widget.width() * ratio),
        round(widget.height() * ratio),
    )
    assert widget.width() > 400 and widget.height() > 100  # laid out in the window


@pytest.mark.parametrize("algo", [0, 1], ids=["boosting", "perceptron"])
def test_teach_fits_a_projector_window_without_scrolling(window, qtbot, algo):
    """A 960×540 window (1920×1080 at scale 2): the Teach page fills it and never scrolls, so
    the curve stays in view, before and after a step."""
    teach = window.stepper
    panel = _shown(window, qtbot, (960, 540))
    panel.algo.setCurrentIndex(algo)
    ws = window.workspaces.spaces["teach"]
    bar = ws.scroll.verticalScrollBar()
    qtbot.wait(50)
    assert bar.maximum() == 0
    teach.step()
    qtbot.wait(50)
    assert bar.maximum() == 0 and panel.canvas.height() >= 120
    # the curve's bottom edge is inside the page's view
    bottom = panel.canvas.mapTo(ws.scroll.viewport(), panel.canvas.rect().bottomLeft()).y()
    assert bottom <= ws.scroll.viewport().height()
