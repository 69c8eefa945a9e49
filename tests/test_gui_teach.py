"""Teach trains on the training list and scores on the dev list whatever corpus is open, says
which lists it uses, and is ready when the application starts in Teach (issue 24, points 1-2)."""

from __future__ import annotations

import html

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings  # noqa: E402

from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR  # noqa: E402
from nerstudio.nbest import NBestList  # noqa: E402

pytestmark = pytest.mark.skipif(not (DEMO_MODEL_DIR / "train.nbest.npz").exists(),
                                reason="demo model not built (tools/demo/build_model.py)")


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
    assert window.document.nbest_path.endswith("dev.nbest.npz")  # the dev corpus's own list is attached
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
    st = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
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
