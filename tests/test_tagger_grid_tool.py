"""tools/tagger_grid.py on the demo corpus: every point's dev and test F are those of the tagger
trained with its settings, and the dev F alone marks the choice."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import ROOT

from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.evaluation import evaluate_spans
from nerstudio.tagging.maxent import MaxEntTagger


@pytest.mark.slow
def test_tagger_grid_scores_each_point_on_dev_and_test(tmp_path):
    files = {k: str(DEMO_DIR / f"{k}.conll") for k in ("train", "dev", "test")}
    cmd = (
        [sys.executable, str(ROOT / "tools/tagger_grid.py"), "--out", str(tmp_path)]
        + [x for k, v in files.items() for x in (f"--{k}", v)]
        + [
            "--point",
            "features=paper max_iter=15",
            "--point",
            "features=conll+rich l2=3 max_iter=15",
        ]
    )
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "grid.json").read_text())["points"]
    assert [row["settings"] for row in rows] == [
        {"features": "paper", "max_iter": 15},
        {"features": "conll+rich", "l2": 3.0, "max_iter": 15},
    ]
    train, test = read_corpus(files["train"]), read_corpus(files["test"])
    m = MaxEntTagger(task="typed", features="conll+rich", l2=3.0, max_iter=15).fit(train.sentences)
    f = evaluate_spans(
        [s.spans for s in test.sentences], m.nbest(test.sentences, n=1, beam=20).top()
    ).overall.f1
    assert rows[1]["test"]["f1"] == pytest.approx(f)
    best = max(rows, key=lambda row: row["dev"]["f1"])
    md = (tmp_path / "grid.md").read_text()
    assert md.count("(dev choice)") == 1
    assert next(line for line in md.splitlines() if "(dev choice)" in line).startswith(
        "| " + " ".join(f"{k}={v}" for k, v in best["settings"].items())
    )
    # a second run trains nothing again
    r2 = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r2.returncode == 0 and "dev F" not in r2.stderr
