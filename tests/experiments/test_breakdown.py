"""Test F by type and by seen / unseen entity (nerstudio.experiments.breakdown)."""

import json

import pytest

from nerstudio.corpus.model import Sentence, Span
from nerstudio.evaluation import evaluate_spans
from nerstudio.experiments.breakdown import breakdown, training_strings


def test_seen_unseen_counts_by_hand():
    train = [
        Sentence(
            ["John", "Smith", "went", "to", "Paris"], [Span(0, 2, "PER"), Span(3 + 1, 5, "LOC")]
        )
    ]
    seen = training_strings(train)
    assert seen == {("John", "Smith"), ("Paris",)}
    words = [["Paris", "and", "Lyon", "and", "John", "Smith"]]
    gold = [[Span(0, 1, "LOC"), Span(2, 3, "LOC"), Span(4, 6, "PER")]]
    pred = [[Span(0, 1, "LOC"), Span(2, 3, "ORG"), Span(4, 5, "PER")]]
    b = breakdown(words, gold, pred, seen)
    # seen: gold Paris, John Smith; proposed Paris (John alone is unseen); correct Paris
    assert (b["seen"]["gold"], b["seen"]["proposed"], b["seen"]["correct"]) == (2, 1, 1)
    # unseen: gold Lyon; proposed Lyon/ORG and John; correct none
    assert (b["unseen"]["gold"], b["unseen"]["proposed"], b["unseen"]["correct"]) == (1, 2, 0)
    ev = evaluate_spans(gold, pred)
    for k in ("gold", "proposed", "correct"):
        assert b["seen"][k] + b["unseen"][k] == getattr(ev.overall, k)
    assert b["per_type"]["LOC"]["f1"] == pytest.approx(ev.per_type["LOC"].f1)


@pytest.mark.slow
def test_experiment_report_has_the_breakdown(tmp_path):
    from nerstudio.demo import DEMO_DIR
    from nerstudio.experiments.collins import ExperimentConfig
    from nerstudio.runs.experiment import run_experiment

    cfg = ExperimentConfig.from_preset(
        "collins2002", boost_rounds=300, boost_eval_every=100, workers=1, systems=("boost",)
    )
    assert (cfg.task, cfg.tagger_features, cfg.n, cfg.folds, cfg.epochs) == (
        "scn",
        "paper",
        20,
        5,
        10,
    )
    rep = run_experiment(
        DEMO_DIR / "train.conll", DEMO_DIR / "dev.conll", DEMO_DIR / "test.conll", tmp_path, cfg
    )
    for s in rep["systems"]:
        b = s["test_breakdown"]
        assert b["seen"]["gold"] + b["unseen"]["gold"] == sum(
            v["gold"] for v in b["per_type"].values()
        )
        f = b["per_type"][""]["f1"]  # boundaries only: one (untyped) class
        assert f == pytest.approx(s["test"]["f1"])
    md = (tmp_path / "report.md").read_text()
    assert "unseen F" in md and "Figure 5" in md and "preset collins2002" in md
    assert json.loads((tmp_path / "report.json").read_text())["config"]["preset"] == "collins2002"
    with pytest.raises(ValueError, match="unknown preset"):
        ExperimentConfig.from_preset("nope")


@pytest.mark.slow
def test_cli_preset_and_explicit_options_override_it(tmp_path):
    from nerstudio.cli import main
    from nerstudio.demo import DEMO_DIR

    out = tmp_path / "run"
    assert (
        main(
            [
                "experiment",
                "--preset",
                "collins2002",
                "--train",
                str(DEMO_DIR / "train.conll"),
                "--dev",
                str(DEMO_DIR / "dev.conll"),
                "--test",
                str(DEMO_DIR / "test.conll"),
                "--out",
                str(out),
                "--task",
                "typed",
                "--folds",
                "2",
                "--systems",
                "boost",
                "--rounds",
                "200",
                "--eval-every",
                "100",
                "--workers",
                "1",
            ]
        )
        == 0
    )
    cfg = json.loads((out / "report.json").read_text())["config"]
    # from the preset
    assert cfg["preset"] == "collins2002" and cfg["tagger_features"] == "paper" and cfg["n"] == 20
    # given explicitly
    assert cfg["task"] == "typed" and cfg["folds"] == 2 and cfg["boost_rounds"] == 200
    assert (
        main(
            [
                "experiment",
                "--suite",
                "kazama",
                "--preset",
                "collins2002",
                "--train",
                "a",
                "--dev",
                "b",
                "--test",
                "c",
                "--out",
                str(out),
            ]
        )
        == 1
    )  # a collins preset on the kazama suite: a user error
