"""The window's run and ``nerstudio experiment`` make their tagger and lists by the same stage
(:func:`nerstudio.runs.stages.tagger_and_lists`): with the same settings they give the same
tagger, the same jackknifed lists and the same development list, and the experiment reports its
stages in order to any :class:`~nerstudio.app.progress.Progress`."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.recorder import Recorder

from nerstudio.app.progress import Reporter
from nerstudio.corpus.formats import read_corpus, write_corpus
from nerstudio.corpus.model import Corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import Cancelled
from nerstudio.experiments.collins import ExperimentConfig
from nerstudio.nbest import NBestList
from nerstudio.runs.experiment import STAGE_OUTPUTS, experiment_stages, run_experiment
from nerstudio.runs.spec import RunSettings
from nerstudio.runs.stages import STAGE_FEATURES, STAGE_JACKKNIFE, STAGE_TAGGER
from nerstudio.runs.training import run_training

TAGGER = {"tagger_features": "paper", "tagger_cutoff": 1, "tagger_epochs": 3}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Four documents of the demo's training text, two of its dev text and one of its test
    text, as files (the experiment reads files; the window holds the corpus)."""
    folder = tmp_path_factory.mktemp("corpora")
    out = {}
    for name, docs in (("train", 4), ("dev", 2), ("test", 1)):
        full = read_corpus(f"{DEMO_DIR}/{name}.conll")
        path = folder / f"{name}.conll"
        write_corpus(Corpus(full.documents[:docs], format=full.format, scheme=full.scheme), path)
        out[name] = path
    return out


def _lists_equal(a: NBestList, b: NBestList) -> None:
    assert a.words == b.words and a.tagset == b.tagset
    assert [list(g) for g in a.gold] == [list(g) for g in b.gold]
    assert all(np.array_equal(x, y) for x, y in zip(a.candidates, b.candidates))
    assert all(np.array_equal(x, y) for x, y in zip(a.logprobs, b.logprobs))
    assert a.meta["documents"] == b.meta["documents"]


def _small(**kw) -> ExperimentConfig:
    """A small typed experiment: the paper's tagger features, SCN tags, two folds, one worker,
    the averaged perceptron without resources."""
    return ExperimentConfig(
        task="typed",
        tagger_features=TAGGER["tagger_features"],
        tagger_alphabet="scn",
        folds=2,
        workers=1,
        systems=("averaged",),
        reranker_gazetteers=False,
        reranker_context=False,
        reranker_clusters=False,
        **kw,
    )


@pytest.mark.slow
def test_the_window_and_the_experiment_make_the_same_tagger_and_lists(files, tmp_path):
    cfg = _small(
        tagger_cutoff=TAGGER["tagger_cutoff"], tagger_epochs=TAGGER["tagger_epochs"], n=5, epochs=2
    )
    out = tmp_path / "exp"
    run_experiment(files["train"], files["dev"], files["test"], out, cfg)
    settings = RunSettings(
        start="tagger",
        task="typed",
        alphabet="scn",
        folds=2,
        n=5,
        algo="averaged",
        params={"epochs": 2},
        dev_path=str(files["dev"]),
        feature_params={"min_sentences": 5},
        **TAGGER,
    )
    res = run_training(
        Recorder(), settings, 1, read_corpus(files["train"]), None, None, None, in_child=False
    )
    tagger = type(res.tagger).load(out / "tagger.npz")
    assert tagger.n_iter_ == res.tagger.n_iter_  # the epochs chosen on the same dev corpus
    assert np.array_equal(tagger.W_, res.tagger.W_)
    _lists_equal(NBestList.load(out / "train-nbest.npz"), res.nbest_index.nbest)
    _lists_equal(NBestList.load(out / "dev-nbest.npz"), res.dev_nbest)


def test_the_experiment_goes_through_its_stages_and_stops_when_asked(files, tmp_path):
    cfg = _small(tagger_epochs=2, n=3, epochs=1)
    lines: list[str] = []
    run_experiment(
        files["train"],
        files["dev"],
        files["test"],
        tmp_path / "a",
        cfg,
        Reporter(lambda line, done, total: lines.append(line)),
    )
    stages = experiment_stages(cfg)
    seen = [
        s
        for s in stages
        if any(
            line.startswith(f"stage {stages.index(s) + 1} of {len(stages)}: {s}") for line in lines
        )
    ]
    assert seen == stages
    assert any("fold 2/2" in line for line in lines)

    ctx = Recorder(cancel_at=STAGE_FEATURES)
    with pytest.raises(Cancelled):
        run_experiment(files["train"], files["dev"], files["test"], tmp_path / "b", cfg, ctx)
    assert ctx.entered[-1] == STAGE_FEATURES and STAGE_OUTPUTS not in ctx.entered
    assert ctx.entered[1:3] == [STAGE_TAGGER, STAGE_JACKKNIFE]


@pytest.mark.slow
@pytest.mark.parametrize("in_child", [False, True], ids=["here", "child"])
def test_the_window_and_the_experiment_train_the_same_reranker(files, tmp_path, in_child):
    """The reranker stage is one function (:func:`nerstudio.rerank.fitting.fit_rerankers`): the
    window's run, in its thread or in a child process, trains from the experiment's lists the
    model the experiment saved, array for array."""
    from nerstudio.learners import FEATURE_FAMILIES
    from nerstudio.rerank.model import RerankerModel

    cfg = _small(tagger_epochs=2, n=4, epochs=2)
    out = tmp_path / "exp"
    run_experiment(files["train"], files["dev"], files["test"], out, cfg)
    settings = RunSettings(
        start="reranker",
        task="typed",
        algo="averaged",
        params=cfg.learner_params("averaged"),
        feature_params={
            "min_sentences": cfg.min_sentences,
            **{f.keyword: getattr(cfg, f.experiment) for f in FEATURE_FAMILIES.values()},
        },
    )
    train = NBestList.load(out / "train-nbest.npz")
    dev = NBestList.load(out / "dev-nbest.npz")
    res = run_training(Recorder(), settings, 1, None, train, dev, None, in_child=in_child)
    ours = tmp_path / "window.npz"
    res.model.save(ours)
    theirs = RerankerModel.load(out / "reranker-averaged.npz")
    assert res.model.features.names_ == theirs.features.names_
    a = np.load(ours, allow_pickle=False)
    b = np.load(out / "reranker-averaged.npz", allow_pickle=False)
    assert sorted(a) == sorted(b)
    for key in a:
        if key != "header":  # the window's model also records its list's words
            assert np.array_equal(a[key], b[key]), key
    assert [h.dev_f1 for h in res.model.learner.history_] == [
        h.dev_f1 for h in theirs.learner.history_
    ]


def test_an_experiment_without_rerankers_reports_the_tagger_alone(files, tmp_path):
    """``--systems ,`` names no reranker: the reranker stage builds the features (the baseline's
    figures need them) and trains nothing, as before the stage was shared."""
    cfg = ExperimentConfig(
        task="typed",
        tagger_features="paper",
        tagger_epochs=1,
        folds=2,
        n=3,
        workers=1,
        systems=(),
        reranker_gazetteers=False,
        reranker_context=False,
        reranker_clusters=False,
    )
    report = run_experiment(files["train"], files["dev"], files["test"], tmp_path / "out", cfg)
    assert [s["name"] for s in report["systems"]] == ["baseline"]
    assert (tmp_path / "out" / "pred-baseline-test.conll").exists()
