"""tools/ablation.py on the demo corpus: each row is one experiment run, the table is their reports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import ROOT

from nerstudio.demo import DEMO_DIR


@pytest.mark.slow
def test_ablation_rows_are_experiment_runs_and_the_table_is_their_reports(tmp_path):
    out = tmp_path / "abl"
    small = "--features paper --folds 3 --workers 1 --rounds 300 --eval-every 50 --epochs 2 --beta 0.3 --min-sentences 2"
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools/ablation.py"),
            "--train",
            str(DEMO_DIR / "train.conll"),
            "--dev",
            str(DEMO_DIR / "dev.conll"),
            "--test",
            str(DEMO_DIR / "test.conll"),
            "--out",
            str(out),
            "--rows",
            "no-context,only-persons",
            "--options",
            small,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    table = json.loads((out / "ablation.json").read_text())
    assert [row["row"] for row in table["rows"]] == ["default", "no-context", "only-persons"]
    reports = {
        name: json.loads((out / name / "report.json").read_text())
        for name in ("default", "no-context", "only-persons")
    }
    # the rows that reuse default's lists say so, and their baseline is the same tagger's
    assert reports["no-context"]["config"]["lists_from"] == str(out / "default")
    assert reports["default"]["config"]["lists_from"] is None
    assert reports["no-context"]["config"]["reranker_context"] is False
    assert reports["only-persons"]["config"]["reranker_gazetteers"] == [
        "per_first",
        "per_last_20k",
        "per_last_2k",
    ]
    for row in table["rows"]:
        rep = reports[row["row"]]
        by_name = {s["name"]: s for s in rep["systems"]}
        for name, (dev, test) in row["f1"].items():
            assert (dev, test) == (by_name[name]["dev"]["f1"], by_name[name]["test"]["f1"])
        assert (
            row["dev_choice"]
            == max(
                (s for s in rep["systems"] if s["name"] != "baseline"), key=lambda s: s["dev"]["f1"]
            )["name"]
        )
    assert table["rows"][1]["f1"]["baseline"] == table["rows"][0]["f1"]["baseline"]
    md = (out / "ablation.md").read_text()
    assert md.count("\n| ") == 3 and "| no-context | off | all | off |" in md
    assert (
        "--lists-from" in table["commands"]["only-persons"]
        and "--lists-from" not in table["commands"]["default"]
    )
