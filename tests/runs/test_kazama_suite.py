"""The Kazama & Torisawa suite as a run of the run service (nerstudio.runs.kazama_suite): it enters
its planned stages in order, each stage's progress arrives with its counts, a cancel stops it
before the next stage, and the command line prints a line per stage."""

from __future__ import annotations

import json

import pytest
from helpers.recorder import Recorder

from nerstudio.corpus.formats import read_corpus, write_corpus
from nerstudio.corpus.model import Corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import Cancelled
from nerstudio.experiments.kazama import KazamaConfig
from nerstudio.runs.kazama_suite import STAGE_SCORING, STAGE_TRAINING, kazama_stages, run_kazama
from nerstudio.runs.stages import STAGE_OUTPUTS, STAGE_READ

pytestmark = pytest.mark.slow  # the suite trains, test after test


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Six documents of the demo's training text, two of its dev text and two of its test text,
    as files (the suite reads files)."""
    folder = tmp_path_factory.mktemp("corpora")
    out = {}
    for name, docs in (("train", 6), ("dev", 2), ("test", 2)):
        full = read_corpus(f"{DEMO_DIR}/{name}.conll")
        path = folder / f"{name}.conll"
        write_corpus(Corpus(full.documents[:docs], format=full.format, scheme=full.scheme), path)
        out[name] = str(path)
    return out


def _small(**kw) -> KazamaConfig:
    """The margin perceptron, the proposed system and a re-ranker, a few epochs, one worker."""
    settings = {
        "epochs": 2,
        "joint_epochs": 2,
        "C_margin": 50,
        "C_joint": 5,
        "C_rerank1": 1,
        "n": 3,
        "n_test": 4,
        "n_primes": (3,),
        "folds": 2,
        "workers": 1,
        "systems": ("margin", "proposed", "reranking1"),
    }
    settings.update(kw)
    return KazamaConfig(**settings)


def _run(files, out, cfg, ctx, executor=None) -> dict:
    return run_kazama(files["train"], files["dev"], files["test"], out, cfg, ctx, executor=executor)


def test_the_suite_enters_its_stages_in_order_and_reports_each(files, tmp_path):
    cfg = _small()
    ctx = Recorder()
    report = _run(files, tmp_path, cfg, ctx)
    stages = kazama_stages(cfg)
    assert stages == [STAGE_READ, STAGE_TRAINING, STAGE_SCORING, STAGE_OUTPUTS]
    assert ctx.pipeline.stages == stages and ctx.entered == stages

    def counts(stage):
        return [(done, total) for s, _, done, total in ctx.reports if s == stage and total]

    assert counts(STAGE_READ) == [(1, 1)]
    # five jobs: margin, proposed, the two folds of the re-ranker's lists, the re-ranker; each
    # one finished is counted once, in the order they finish
    training = counts(STAGE_TRAINING)
    assert {t for _, t in training} == {5} and training[-1] == (5, 5)
    assert [d for d, _ in training] == sorted(d for d, _ in training)
    finished = [m for s, m, _, _ in ctx.reports if s == STAGE_TRAINING and "trained" in m]
    listed = [m for s, m, _, _ in ctx.reports if s == STAGE_TRAINING and "listed" in m]
    assert len(finished) == 3 and len(listed) == 2
    # every system scored is a step of the scoring stage, named with its figures
    scored = [(m, d, t) for s, m, d, t in ctx.reports if s == STAGE_SCORING and " test F " in m]
    by = {s["name"]: s for s in report["systems"]}
    assert [(m.split(":")[0], d, t) for m, d, t in scored] == [
        ("margin", 1, 3),
        ("proposed", 2, 3),
        ("proposed", 2, 3),  # at n' = 3
        ("reranking1", 3, 3),
    ]
    assert f"test F {by['reranking1']['test']['f1']:.2f}" in scored[-1][0]
    assert any(s == STAGE_OUTPUTS for s, *_ in ctx.reports)
    assert json.loads((tmp_path / "report.json").read_text())["systems"] == report["systems"]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_a_cancel_after_stage_k_stops_the_suite_before_stage_k_plus_1(files, tmp_path, k):
    cfg = _small()
    stages = kazama_stages(cfg)
    ctx = Recorder(cancel_at=stages[k - 1])  # asks to stop once stage k has begun
    with pytest.raises(Cancelled):
        _run(files, tmp_path, cfg, ctx)
    assert ctx.entered == stages[:k]
    assert not (tmp_path / "report.json").exists()


def test_the_command_line_prints_a_line_per_stage(files, tmp_path, capsys):
    from nerstudio.cli import main

    args = ["experiment", "--suite", "kazama", "--out", str(tmp_path / "out")]
    for name in ("train", "dev", "test"):
        args += [f"--{name}", files[name]]
    args += ["--systems", "margin", "--epochs", "1", "--workers", "1"]
    assert main(args) == 0
    err = capsys.readouterr().err.splitlines()
    stages = kazama_stages(_small(systems=("margin",)))
    for k, stage in enumerate(stages, 1):
        assert any(
            line.startswith(f"experiment: stage {k} of {len(stages)}: {stage}") for line in err
        ), err
    # a line each time a stage's count of finished steps moves: the training, the scoring
    assert any(f"{STAGE_TRAINING} — margin: C=1000 trained" in line for line in err), err
    assert any(f"{STAGE_SCORING} — margin: dev F " in line for line in err), err
