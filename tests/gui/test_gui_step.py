"""The step-through panel on the demo corpus: boosting rounds and perceptron updates."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nerstudio.experiments.stepthrough import EpochEnd, PerceptronUpdate
from nerstudio.gui.main_window import DEMO_MODEL_DIR
from nerstudio.rerank.boosting import Boosting

pytestmark = pytest.mark.skipif(
    not (DEMO_MODEL_DIR / "reranker.npz").exists(),
    reason="demo model not built (tools/demo/build_model.py)",
)


def ready(teach, qtbot) -> None:
    """Wait for the step-through's set-up (always in the window's worker): ``teach`` is the
    window's Teach controller, which owns the stepper."""
    qtbot.waitUntil(lambda: teach.learner is not None and not teach.busy, timeout=60000)


def test_three_boosting_steps_choose_the_batch_features(window, qtbot):
    window.act_show_stepper.trigger()
    panel = window.findChild(object, "stepperPanel")
    teach = window.stepper
    ready(teach, qtbot)
    assert panel is window.stepper_panel and teach.learner is not None
    eps = panel.param.value()
    assert eps == pytest.approx(window.document.model.learner.epsilon)
    step = window.findChild(object, "stepButton")
    for _ in range(3):
        step.click()
    chosen = list(teach.learner.chosen)
    batch = Boosting(rounds=3, epsilon=eps, eval_every=1, keep_best=False).fit(teach.train)
    assert chosen == list(batch.chosen_[:3])
    assert (
        "Round 3" in panel.info.text()
        and teach.names[chosen[2]].split("=")[0][:3] in panel.info.text()
    )
    assert panel.table.rowCount() > 0
    assert len(teach.learner.history) == 4  # dev F at round 0 and after each round
    # loss falls round by round
    assert teach.last.info.loss_after < teach.last.info.loss_before
    # reset starts over
    window.findChild(object, "resetButton").click()
    assert teach.learner.rounds == 0 and len(teach.learner.history) == 1


@pytest.mark.slow
def test_perceptron_steps_and_continuous_play(window, qtbot):
    window.act_show_stepper.trigger()
    panel = window.stepper_panel
    teach = window.stepper
    ready(teach, qtbot)
    panel.algo.setCurrentIndex(1)
    panel.param.setValue(0.3)
    r = teach.step()
    assert isinstance(r, PerceptronUpdate)
    assert "oracle" in panel.info.text() and "mistakes this epoch" in panel.info.text()
    assert panel.table.rowCount() == min(40, r.rows.stop - r.rows.start)
    # run at full speed until a few more updates happened, then pause
    panel.speed.setValue(50)
    window.findChild(object, "runButton").click()
    assert teach.running
    qtbot.waitUntil(lambda: teach.learner.updates >= 5, timeout=10000)
    window.findChild(object, "runButton").click()
    assert not teach.running
    n = teach.learner.updates
    qtbot.wait(100)
    assert teach.learner.updates == n
    # finish the epoch step by step
    while not isinstance(teach.step(), EpochEnd):
        pass
    assert "End of epoch 1" in panel.info.text()
    assert len(teach.learner.history) == teach.learner.updates + 1


def test_large_data_prepares_and_steps_in_the_background(window, qtbot, monkeypatch):
    """Above the size limit (eng.train), the features, the stepper and every step are computed in
    the window's background worker; the panel shows it is busy and the results are the same."""
    from nerstudio.gui.controllers import stepper as sc

    monkeypatch.setattr(sc, "LARGE", 0)  # the controller's limit
    panel = window.stepper_panel
    teach = window.stepper
    window.act_show_stepper.trigger()
    assert teach.busy and teach.learner is None and not panel.step_button.isEnabled()
    qtbot.waitUntil(lambda: teach.learner is not None and not teach.busy, timeout=30000)
    assert panel.step_button.isEnabled() and "Boosting ready" in panel.info.text()
    for _ in range(3):
        assert teach.step() is None  # computed in the background, shown when it arrives
        assert teach.busy and not panel.step_button.isEnabled()
        qtbot.waitUntil(lambda: not teach.busy, timeout=30000)
    batch = Boosting(rounds=3, epsilon=panel.param.value(), eval_every=1, keep_best=False).fit(
        teach.train
    )
    assert list(teach.learner.chosen) == list(batch.chosen_[:3])
    assert "Round 3" in panel.info.text() and len(teach.learner.history) == 4
    # a reset while nothing runs builds a new stepper in the background too
    panel.reset_button.click()
    qtbot.waitUntil(lambda: teach.learner is not None and not teach.busy, timeout=30000)
    assert teach.learner.rounds == 0
