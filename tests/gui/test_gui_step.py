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


def ready(panel, qtbot) -> None:
    """Wait for the step-through's set-up (always in the window's worker)."""
    qtbot.waitUntil(lambda: panel.stepper is not None and not panel.busy, timeout=60000)


def test_three_boosting_steps_choose_the_batch_features(window, qtbot):
    window.act_show_stepper.trigger()
    panel = window.findChild(object, "stepperPanel")
    ready(panel, qtbot)
    assert panel is window.stepper_panel and panel.stepper is not None
    eps = panel.param.value()
    assert eps == pytest.approx(window.document.model.learner.epsilon)
    step = window.findChild(object, "stepButton")
    for _ in range(3):
        step.click()
    chosen = list(panel.stepper.chosen)
    batch = Boosting(rounds=3, epsilon=eps, eval_every=1, keep_best=False).fit(panel.train)
    assert chosen == list(batch.chosen_[:3])
    assert (
        "Round 3" in panel.info.text()
        and panel.names[chosen[2]].split("=")[0][:3] in panel.info.text()
    )
    assert panel.table.rowCount() > 0
    assert len(panel.stepper.history) == 4  # dev F at round 0 and after each round
    # loss falls round by round
    assert panel.last.info.loss_after < panel.last.info.loss_before
    # reset starts over
    window.findChild(object, "resetButton").click()
    assert panel.stepper.rounds == 0 and len(panel.stepper.history) == 1


@pytest.mark.slow
def test_perceptron_steps_and_continuous_play(window, qtbot):
    window.act_show_stepper.trigger()
    panel = window.stepper_panel
    ready(panel, qtbot)
    panel.algo.setCurrentIndex(1)
    panel.param.setValue(0.3)
    r = panel.step()
    assert isinstance(r, PerceptronUpdate)
    assert "oracle" in panel.info.text() and "mistakes this epoch" in panel.info.text()
    assert panel.table.rowCount() == min(40, r.rows.stop - r.rows.start)
    # run at full speed until a few more updates happened, then pause
    panel.speed.setValue(50)
    window.findChild(object, "runButton").click()
    assert panel.running
    qtbot.waitUntil(lambda: panel.stepper.updates >= 5, timeout=10000)
    window.findChild(object, "runButton").click()
    assert not panel.running
    n = panel.stepper.updates
    qtbot.wait(100)
    assert panel.stepper.updates == n
    # finish the epoch step by step
    while not isinstance(panel.step(), EpochEnd):
        pass
    assert "End of epoch 1" in panel.info.text()
    assert len(panel.stepper.history) == panel.stepper.updates + 1


def test_large_data_prepares_and_steps_in_the_background(window, qtbot, monkeypatch):
    """Above the size limit (eng.train), the features, the stepper and every step are computed in
    the window's background worker; the panel shows it is busy and the results are the same."""
    from nerstudio.gui.views import stepper as sv

    monkeypatch.setattr(sv, "LARGE", 0)  # the panel's limit, which the controller reads too
    panel = window.stepper_panel
    window.act_show_stepper.trigger()
    assert panel.busy and panel.stepper is None and not panel.step_button.isEnabled()
    qtbot.waitUntil(lambda: panel.stepper is not None and not panel.busy, timeout=30000)
    assert panel.step_button.isEnabled() and "Boosting ready" in panel.info.text()
    for _ in range(3):
        assert panel.step() is None  # computed in the background, shown when it arrives
        assert panel.busy and not panel.step_button.isEnabled()
        qtbot.waitUntil(lambda: not panel.busy, timeout=30000)
    batch = Boosting(rounds=3, epsilon=panel.param.value(), eval_every=1, keep_best=False).fit(
        panel.train
    )
    assert list(panel.stepper.chosen) == list(batch.chosen_[:3])
    assert "Round 3" in panel.info.text() and len(panel.stepper.history) == 4
    # a reset while nothing runs builds a new stepper in the background too
    panel.reset_button.click()
    qtbot.waitUntil(lambda: panel.stepper is not None and not panel.busy, timeout=30000)
    assert panel.stepper.rounds == 0
