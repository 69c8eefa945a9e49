"""The application's first window comes before its heavy machinery (issue 26, point 1).

The start-up runs in a fresh interpreter: an application-wide event filter notes which modules
are loaded when a window is first exposed (on screen), then ends the process. matplotlib,
scipy, numba and the learners must load on first use, after that. The learners' defaults that
the training panel shows are read from their source for this (:mod:`nerstudio.experiments.defaults`):
they must equal what the learners themselves say.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# loaded on first use, never before the first window
HEAVY = (
    "matplotlib",
    "scipy",
    "numba",
    "llvmlite",
    "nerstudio.rerank.model",
    "nerstudio.rerank.boosting",
    "nerstudio.rerank.perceptron",
    "nerstudio.rerank.kernel",
    "nerstudio.rerank.features",
    "nerstudio.rerank.data",
    "nerstudio.rerank.importance",
    "nerstudio.tagging.maxent",
    "nerstudio.tagging.perceptron",
    "nerstudio.tagging.joint",
    "nerstudio.tagging._viterbi",
    "nerstudio.tagging._maxent_compiled",
    "nerstudio.text.nonlocal_features",
    # the views of the pages and tabs not shown first, built on first use (test_gui_lazy.py)
    "nerstudio.gui.views.training_panel",
    "nerstudio.gui.views.stepper",
    "nerstudio.gui.views.comparison",
    "nerstudio.gui.views.model_features",
    "nerstudio.gui.views.what_if_view",
    "nerstudio.gui.views.agreement_view",
    "nerstudio.gui.views.adjudication_view",
)

CHILD = r"""
import json, os, sys
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

HEAVY = json.loads(sys.argv[1])
app = QApplication(sys.argv[:1])

class FirstExpose(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Expose:
            loaded = sorted({h for h in HEAVY for m in list(sys.modules) if m == h or m.startswith(h + ".")})
            print("RESULT " + json.dumps({"window": type(obj).__name__, "loaded": loaded}), flush=True)
            os._exit(0)
        return False

watch = FirstExpose()
app.installEventFilter(watch)
from nerstudio.gui.app import main
main([])
print("RESULT " + json.dumps({"window": None, "loaded": []}), flush=True)
"""


def first_window_modules(tmp_path) -> dict:
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        PYTHONPATH=str(ROOT),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(HEAVY)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(tmp_path),
    )
    lines = [ln[len("RESULT ") :] for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"the start-up child said nothing (exit {out.returncode}): {out.stderr[-2000:]}"
    return json.loads(lines[-1])


def test_no_heavy_module_before_the_first_window(tmp_path):
    got = first_window_modules(tmp_path)
    assert got["window"] is not None, "no window was exposed"
    assert got["loaded"] == [], f"loaded before the first window: {', '.join(got['loaded'])}"


def test_reranker_defaults_read_from_source_are_the_learners_own():
    from nerstudio.experiments.defaults import RERANKERS, reranker_defaults, reranking_algorithms
    from nerstudio.rerank.model import ALGORITHMS, learner_class, make_learner

    assert reranking_algorithms() == tuple(ALGORITHMS)
    assert set(RERANKERS) == set(ALGORITHMS)
    for algo in ALGORITHMS:
        cls = learner_class(algo)
        assert RERANKERS[algo] == (cls.__module__, cls.__name__)
        assert reranker_defaults(algo) == make_learner(algo).get_params(), algo


def test_sequence_tagger_defaults_read_from_source_are_the_taggers_own():
    from nerstudio.experiments.tagger_process import JOINT_KINDS, KINDS, default_params
    from nerstudio.tagging.joint import JointTagger
    from nerstudio.tagging.perceptron import PerceptronTagger

    local = PerceptronTagger().get_params()
    for kind in KINDS:
        p = (
            JointTagger(kind).get_params()
            if kind in JOINT_KINDS
            else PerceptronTagger(variant=kind).get_params()
        )
        want = {
            "C": float(p["C"]),
            "epochs": int(p["epochs"]),
            "bpm": int(p["bpm"]),
            "cutoff": int(local["cutoff"]),
            "edge_templates": local["edge_templates"],
        }
        if kind in JOINT_KINDS:
            want.update(n=int(p["n"]), n_test=int(p["n_test"]))
        got = default_params(kind)
        assert {k: got[k] for k in want} == want, kind


def test_constructor_defaults_follow_base_classes_and_named_constants(tmp_path, monkeypatch):
    from nerstudio.experiments import defaults

    (tmp_path / "ns_defaults_probe.py").write_text(
        "GRID = (1, 2)\n"
        "def f():\n    return 3\n"
        "class A:\n    def __init__(self, a=1, b=GRID, *, c='x'):\n        pass\n"
        "class B(A):\n    pass\n"
        "class C:\n    def __init__(self, d=f()):\n        self.d = d\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert defaults.constructor_defaults("ns_defaults_probe", "B") == {
        "a": 1,
        "b": (1, 2),
        "c": "x",
    }
    assert "ns_defaults_probe" not in sys.modules  # read, not imported
    # a computed default: the class is asked
    assert defaults.constructor_defaults("ns_defaults_probe", "C") == {"d": 3}
    assert "ns_defaults_probe" in sys.modules


@pytest.fixture
def renderer():
    from nerstudio.gui.views.figure_image import _RenderThread

    r = _RenderThread()
    yield r
    r.shutdown()


def test_held_figures_are_drawn_once_released(qtbot, renderer, monkeypatch):
    """The application holds figure drawing (and matplotlib) until its window is on screen."""
    from nerstudio.gui.views import figure_image

    monkeypatch.setattr(figure_image, "RENDERER", renderer)
    img = figure_image.FigureImage()
    qtbot.addWidget(img)
    img.resize(120, 80)
    renderer.hold()
    img.request(lambda fig: fig.add_subplot().plot([0, 1], [1, 0]))
    qtbot.wait(200)
    assert img.renders == 0 and renderer._thread is None
    renderer.release()
    qtbot.waitUntil(lambda: img.renders == 1, timeout=30000)
