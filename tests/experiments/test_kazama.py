"""The Kazama & Torisawa suite end to end on the bundled demo corpus."""

import json
import os

import pytest
from helpers.recorder import Recorder

from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.evaluation import evaluate_sentences
from nerstudio.experiments.kazama import SYSTEMS, KazamaConfig
from nerstudio.runs.kazama_suite import STAGE_TRAINING, run_kazama

DEMO = str(DEMO_DIR)
pytestmark = pytest.mark.slow  # the suite trained on the demo, test after test


def on_demo(out, cfg, **kw):
    """The suite on the bundled demo corpus (train / dev / test), written to ``out``."""
    return run_kazama(
        f"{DEMO}/train.conll", f"{DEMO}/dev.conll", f"{DEMO}/test.conll", out, cfg, **kw
    )


def test_suite_on_demo(tmp_path):
    cfg = KazamaConfig(
        epochs=3,
        joint_epochs=2,
        C_margin=50,
        C_joint=5,
        C_rerank1=1,
        C_rerank2=5,
        n=5,
        n_test=8,
        n_primes=(5, 8),
        folds=2,
        workers=1,
    )
    report = on_demo(tmp_path, cfg)
    names = [s["name"] for s in report["systems"]]
    assert names == list(SYSTEMS)
    on_disk = json.loads((tmp_path / "report.json").read_text())
    assert on_disk["systems"][0]["dev"].keys() >= {
        "precision",
        "recall",
        "f1",
        "rel_error_reduction",
    }
    assert [r["n_test"] for r in on_disk["n_prime"]] == [5, 8]
    md = (tmp_path / "report.md").read_text()
    for table in ("Table 2", "Table 3", "Table 6", "Table 7", "seen / unseen"):
        assert table in md
    for s in report["systems"]:  # the breakdown counts every test entity once
        b = s["test_breakdown"]
        assert b["seen"]["gold"] + b["unseen"]["gold"] == sum(
            v["gold"] for v in b["per_type"].values()
        )
    gold = read_corpus(f"{DEMO}/test.conll")
    for s in report["systems"]:
        pred = read_corpus(tmp_path / f"pred-{s['name']}-test.conll")
        ev = evaluate_sentences(gold.sentences, pred.sentences)
        assert abs(ev.overall.f1 - s["test"]["f1"]) < 1e-9  # the file scores what the report says
    assert os.path.getsize(tmp_path / "curves.png") > 0
    assert (tmp_path / "joint-proposed.npz").exists() and (tmp_path / "tagger-margin.npz").exists()


def test_cli_perceptron_tagger_and_suite(tmp_path, capsys):
    from nerstudio.cli import main
    from nerstudio.nbest import NBestList

    model, pred = tmp_path / "pt.npz", tmp_path / "pred.conll"
    assert (
        main(
            [
                "train-tagger",
                f"{DEMO}/train.conll",
                "--model",
                "perceptron",
                "--out",
                str(model),
                "--dev",
                f"{DEMO}/dev.conll",
                "--epochs",
                "2",
                "--C",
                "50",
            ]
        )
        == 0
    )
    assert "dev " in capsys.readouterr().out
    assert main(["tag", str(model), f"{DEMO}/test.conll", "--out", str(pred)]) == 0
    said = capsys.readouterr().out
    gold = read_corpus(f"{DEMO}/test.conll")
    ev = evaluate_sentences(gold.sentences, read_corpus(pred).sentences)
    assert f"F {ev.overall.f1:.2f}" in said  # the summary scores the file it wrote
    assert (
        main(
            [
                "nbest",
                str(model),
                f"{DEMO}/test.conll",
                "--out",
                str(tmp_path / "d.npz"),
                "--documents",
                "--n",
                "5",
            ]
        )
        == 0
    )
    nb = NBestList.load(tmp_path / "d.npz")
    assert len(nb) == len(gold.documents) and nb.meta["unit"] == "document"
    # usage error (exit 1): the margin C is the perceptron tagger's, not the max-ent tagger's
    assert main(["train-tagger", f"{DEMO}/train.conll", "--out", str(model), "--C", "2"]) == 1
    out = tmp_path / "kz"
    assert (
        main(
            [
                "experiment",
                "--suite",
                "kazama",
                "--train",
                f"{DEMO}/train.conll",
                "--dev",
                f"{DEMO}/dev.conll",
                "--test",
                f"{DEMO}/test.conll",
                "--out",
                str(out),
                "--systems",
                "margin,proposed",
                "--epochs",
                "2",
                "--joint-epochs",
                "2",
                "--C",
                "50",
                "--C-joint",
                "5",
                "--n",
                "4",
                "--n-test",
                "6",
                "--n-primes",
                "4,6",
            ]
        )
        == 0
    )
    rep = json.loads((out / "report.json").read_text())
    assert [s["name"] for s in rep["systems"]] == ["margin", "proposed"] and rep[
        "suite"
    ] == "kazama"
    # the defaults are the dev-chosen features; --features/--gazetteer give K&T's Table 1 back
    margin = rep["systems"][0]["settings"]
    assert (margin["features"], margin["gazetteer"]) == ("kt+rich+clusters", "lists")
    assert (
        main(
            [
                "experiment",
                "--suite",
                "kazama",
                "--train",
                f"{DEMO}/train.conll",
                "--dev",
                f"{DEMO}/dev.conll",
                "--test",
                f"{DEMO}/test.conll",
                "--out",
                str(tmp_path / "kt"),
                "--systems",
                "margin",
                "--epochs",
                "1",
                "--features",
                "kt",
                "--gazetteer",
                "none",
            ]
        )
        == 0
    )
    margin = json.loads((tmp_path / "kt" / "report.json").read_text())["systems"][0]["settings"]
    assert (margin["features"], margin["gazetteer"]) == ("kt", None)
    assert (
        main(
            [
                "experiment",
                "--suite",
                "kazama",
                "--train",
                f"{DEMO}/train.conll",
                "--dev",
                f"{DEMO}/dev.conll",
                "--test",
                f"{DEMO}/test.conll",
                "--out",
                str(tmp_path / "bad"),
                "--features",
                "conll",
            ]
        )
        == 1
    )
    from nerstudio.tagging.perceptron import PerceptronTagger

    assert (
        main(
            [
                "train-tagger",
                f"{DEMO}/train.conll",
                "--model",
                "perceptron",
                "--out",
                str(model),
                "--epochs",
                "1",
                "--features",
                "kt+rich",
            ]
        )
        == 0
    )
    assert PerceptronTagger.load(model).features_.rich
    capsys.readouterr()


def test_cli_tag_and_nbest_with_a_joint_model(tmp_path, capsys):
    from nerstudio.cli import main
    from nerstudio.nbest import NBestList
    from nerstudio.tagging.joint import JointTagger

    train, test = read_corpus(f"{DEMO}/train.conll"), read_corpus(f"{DEMO}/test.conll")
    jt = JointTagger("proposed", n=4, n_test=6, C=5.0, epochs=2).fit(train)
    model = tmp_path / "joint.npz"
    jt.save(model)
    assert main(["tag", str(model), f"{DEMO}/test.conll", "--out", str(tmp_path / "p.conll")]) == 0
    assert read_corpus(tmp_path / "p.conll").sentences[0].spans == jt.predict_spans(test)[0]
    assert (
        main(
            [
                "nbest",
                str(model),
                f"{DEMO}/test.conll",
                "--out",
                str(tmp_path / "s.npz"),
                "--n",
                "5",
            ]
        )
        == 0
    )
    nb = NBestList.load(tmp_path / "s.npz")
    assert len(nb) == len(test.sentences) and max(nb.n_candidates(i) for i in range(len(nb))) <= 5
    capsys.readouterr()


def test_load_tagger_tells_models_apart(tmp_path):
    import pytest

    from nerstudio.errors import FormatError
    from nerstudio.tagging import load_tagger
    from nerstudio.tagging.maxent import MaxEntTagger
    from nerstudio.tagging.perceptron import PerceptronTagger

    train = read_corpus(f"{DEMO}/train.conll")
    PerceptronTagger(epochs=1).fit(train).save(tmp_path / "p.npz")
    assert isinstance(load_tagger(tmp_path / "p.npz"), PerceptronTagger)
    assert isinstance(load_tagger(f"{DEMO}/model/tagger.npz"), MaxEntTagger)
    with pytest.raises(FormatError, match="it is a max-ent tagger"):
        load_tagger(f"{DEMO}/model/tagger.npz", ("joint", "perceptron"))
    with pytest.raises(FormatError, match="reranker"):
        load_tagger(f"{DEMO}/model/reranker.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(FormatError, match="junk.npz.*not a readable nerstudio .npz file"):
        load_tagger(tmp_path / "junk.npz")


def test_C_chosen_per_system_on_dev(tmp_path):
    """Each system with a grid gets the C of its best dev F, candidate apart from proposed; the
    model kept and reported is that C's (its dev F is the grid's best)."""
    cfg = KazamaConfig(
        epochs=2,
        joint_epochs=2,
        n=4,
        n_test=5,
        n_primes=(),
        workers=1,
        systems=("margin", "candidate", "proposed"),
        C_grids={"margin": (5, 50), "candidate": (1, 20), "proposed": (2, 30)},
    )
    report = on_demo(tmp_path, cfg)
    for s in report["systems"]:
        tried = {float(c): f for c, f in s["settings"]["C_dev_f1"].items()}
        assert set(tried) == set(cfg.C_grids[s["name"]])
        assert s["settings"]["C"] == max(tried, key=lambda c: (tried[c], -list(tried).index(c)))
        assert s["dev"]["f1"] == max(tried.values())  # the kept model is the best dev run's


def test_reranking_first_models_use_the_margin_perceptrons_chosen_C(tmp_path, monkeypatch):
    """The cross-validated first models of re-ranking are the margin perceptron as dev chose it:
    its C from the grid, not the configured default."""
    import nerstudio.experiments.kazama_fits as fits

    seen = set()
    real = fits.first_model_fold

    def spy(data, job, ctx):
        seen.add(job.settings["params"]["C"])
        return real(data, job, ctx)

    monkeypatch.setattr(fits, "first_model_fold", spy)
    cfg = KazamaConfig(
        epochs=2,
        joint_epochs=1,
        n=3,
        n_test=3,
        n_primes=(),
        workers=1,
        folds=2,
        systems=("reranking1",),
        C_margin=7.0,
        C_grids={"margin": (0.5, 80.0)},
    )
    report = on_demo(tmp_path, cfg)
    margin = next(s for s in report["systems"] if s["name"] == "margin")
    assert seen == {margin["settings"]["C"]} and margin["settings"]["C"] in (0.5, 80.0)


def test_trainings_side_by_side_give_the_same_report(tmp_path):
    """Every system and every C of a grid trained in two processes gives what one process gives:
    the same figures, settings, choices of C and epoch, and byte-identical predictions."""
    reports = {}
    for workers in (1, 2):
        cfg = KazamaConfig(
            epochs=3,
            joint_epochs=2,
            n=4,
            n_test=5,
            n_primes=(4,),
            folds=2,
            workers=workers,
            C_grids={"margin": (5, 50), "proposed": (2, 30), "reranking2": (1, 10)},
        )
        out = tmp_path / f"w{workers}"
        reports[workers] = on_demo(out, cfg)
    one, two = reports[1], reports[2]
    assert [s["name"] for s in one["systems"]] == list(SYSTEMS)

    def figures(report):
        return [
            (s["name"], s["dev"], s["test"], s["settings"], s["test_breakdown"])
            for s in report["systems"]
        ]

    assert figures(one) == figures(two)
    assert one["n_prime"] == two["n_prime"]
    for s in one["systems"]:
        name = f"pred-{s['name']}-test.conll"
        assert (tmp_path / "w1" / name).read_bytes() == (tmp_path / "w2" / name).read_bytes()
    # no training's temporary folder is left behind
    assert not [p for p in os.listdir(tmp_path / "w2") if p.startswith(".fits-")]


def test_a_kept_model_predicts_what_the_trained_one_did(tmp_path):
    """The suite keeps a model by saving and loading it (kazama_fits): the loaded margin perceptron
    and proposed model predict exactly what the models fitted in this process predict."""
    from nerstudio.tagging.joint import JointTagger
    from nerstudio.tagging.perceptron import PerceptronTagger

    cfg = KazamaConfig(epochs=3, joint_epochs=2, n=4, n_test=5, n_primes=(), workers=1)
    cfg.systems = ("margin", "proposed")
    report = on_demo(tmp_path, cfg)
    train, dev, test = (read_corpus(f"{DEMO}/{n}.conll") for n in ("train", "dev", "test"))
    labels = train.labels
    tagger = PerceptronTagger(
        **cfg.local(variant="margin", C=cfg.C_margin, epochs=cfg.epochs, bpm=0, labels=labels)
    ).fit(train, dev)
    joint = JointTagger(
        "proposed",
        n=cfg.n,
        n_test=cfg.n_test,
        C=cfg.C_joint,
        epochs=cfg.joint_epochs,
        average=False,
        bpm=0,
        seed=cfg.seed,
        local=cfg.local(labels=labels),
    ).fit(train, dev)
    by = {s["name"]: s for s in report["systems"]}
    for name, model in (("margin", tagger), ("proposed", joint)):
        pred = read_corpus(tmp_path / f"pred-{name}-test.conll")
        assert [s.spans for s in pred.sentences] == model.predict_spans(test)
        ev = evaluate_sentences(
            test.sentences, test.with_spans(model.predict_spans(test)).sentences
        )
        assert abs(ev.overall.f1 - by[name]["test"]["f1"]) < 1e-9


def test_progress_names_each_trainings_epoch(tmp_path):
    """Trainings running side by side say which C and which epoch a dev F belongs to."""
    ctx = Recorder()
    cfg = KazamaConfig(
        epochs=2,
        joint_epochs=2,
        n=3,
        n_test=3,
        n_primes=(),
        workers=1,
        systems=("margin", "proposed"),
        C_grids={"proposed": (2, 30)},
    )
    on_demo(tmp_path, cfg, ctx=ctx)
    said = [m for stage, m, _, _ in ctx.reports if stage == STAGE_TRAINING]
    assert any(m.startswith("margin: epoch 1: dev F ") for m in said), said
    for C in ("2", "30"):
        assert any(m.startswith(f"proposed: C={C} epoch 2: dev F ") for m in said), said


def test_rerankers_follow_the_margin_perceptron_in_one_run(tmp_path):
    """The cross-validated lists and the re-rankers run as follow-ups of the margin perceptron's
    trainings (kazama_fits.Reranking): the lists are those of the folds run on their own
    (cross_validated_lists) with the kept margin perceptron's C and epoch, and the re-rankers
    trained on them predict what re-rankers trained after the stages, one after the other, do."""
    import numpy as np

    from nerstudio.experiments.kazama_fits import (
        KEPT_FILE,
        LISTS_SAID_AS,
        Fit,
        Reranking,
        cross_validated_lists,
        train_all,
    )
    from nerstudio.runtime.folds import split

    train, dev, test = (read_corpus(f"{DEMO}/{n}.conll") for n in ("train", "dev", "test"))
    cfg = KazamaConfig(epochs=3, n=4, n_test=5)
    labels = train.labels
    margin = [
        Fit("margin", C, "local", cfg.local(variant="margin", C=C, epochs=3, bpm=0, labels=labels))
        for C in (5.0, 50.0)
    ]
    joint = {"n": 4, "n_test": 5, "epochs": 2, "average": False, "seed": 0}

    def params(m):
        return cfg.local(
            variant="margin", C=m.C, bpm=0, epochs=m.best_epoch_, keep_best=False, labels=labels
        )

    def rerankers(first):
        return [Fit("reranking2", C, "joint", dict(joint, C=C), first=first) for C in (1.0, 10.0)]

    said = []
    out = tmp_path / "follow"
    out.mkdir()
    folds = split(train, 2, unit="document")[1]
    follow = train_all(
        margin,
        train,
        dev,
        reranking=Reranking(folds, params, 4, rerankers),
        workers=2,
        out_dir=str(out),
        say=lambda *a: said.append(a),
    )
    assert set(follow.chosen) == {"margin", "reranking2"}
    listed = [m for system, m, _, _ in said if system == LISTS_SAID_AS]
    assert [m for m in listed if "listed" in m] and listed[-1].endswith("(2/2 done)")
    # six jobs: two margin perceptrons, two folds, two re-rankers; the last one counts them all
    assert {total for *_, total in said} == {6}
    assert said[-1][0] == "reranking2" and said[-1][1].endswith(" trained")
    assert said[-1][2:] == (6, 6)
    assert follow.fold_seconds > 0

    stages_out = tmp_path / "stages"
    stages_out.mkdir()
    first = train_all(margin, train, dev, workers=1, out_dir=str(stages_out), say=lambda *a: None)
    kept = first.chosen["margin"].model
    assert kept.C == follow.chosen["margin"].model.C
    lists = cross_validated_lists(train, params(kept), 4, 2, workers=1)
    for got, want in zip(follow.lists, lists):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    path = str(stages_out / KEPT_FILE["local"].format("margin"))
    then = train_all(
        rerankers(path),
        train,
        dev,
        lists=lists,
        workers=1,
        out_dir=str(stages_out),
        say=lambda *a: None,
    ).chosen["reranking2"]
    now = follow.chosen["reranking2"]
    assert now.tried == then.tried and now.fit.C == then.fit.C
    assert now.model.predict_spans(test) == then.model.predict_spans(test)


def test_the_averaged_run_makes_the_plain_perceptron_as_alone(tmp_path):
    """With both wanted, one run trains the averaged and the plain perceptron (a twin): each
    system's figures, chosen epoch and test predictions are those of the system run alone, and
    each hears its own epochs."""
    cfg = {"epochs": 4, "n_primes": (), "workers": 1}
    ctx = Recorder()
    both = on_demo(
        tmp_path / "both", KazamaConfig(systems=("perceptron", "averaged"), **cfg), ctx=ctx
    )
    for name in ("perceptron", "averaged"):
        alone = on_demo(tmp_path / name, KazamaConfig(systems=(name,), **cfg))
        a, b = (next(s for s in r["systems"] if s["name"] == name) for r in (alone, both))
        assert (a["dev"], a["test"], a["settings"]) == (b["dev"], b["test"], b["settings"])
        pred = f"pred-{name}-test.conll"
        assert (tmp_path / name / pred).read_bytes() == (tmp_path / "both" / pred).read_bytes()
        assert any(m.startswith(f"{name}: epoch 4: dev F ") for m in ctx.messages), ctx.messages


def test_suite_with_bilou_taggers(tmp_path):
    """With BILOU tags every system trains, its predictions score as reported, its models keep
    their alphabet, and the lists they write are SCN."""
    from nerstudio.nbest import tags_to_spans
    from nerstudio.tagging.joint import JointTagger
    from nerstudio.tagging.perceptron import PerceptronTagger
    from nerstudio.tagging.tag_alphabets import scn_tagset

    cfg = KazamaConfig(
        epochs=3, joint_epochs=2, n=4, n_test=5, n_primes=(), folds=2, workers=1, alphabet="bilou"
    )
    report = on_demo(tmp_path, cfg)
    assert [s["name"] for s in report["systems"]] == list(SYSTEMS)
    gold = read_corpus(f"{DEMO}/test.conll")
    for s in report["systems"]:
        pred = read_corpus(tmp_path / f"pred-{s['name']}-test.conll")
        ev = evaluate_sentences(gold.sentences, pred.sentences)
        assert abs(ev.overall.f1 - s["test"]["f1"]) < 1e-9
        if "alphabet" in s["settings"]:
            assert s["settings"]["alphabet"] == "bilou"
    margin = PerceptronTagger.load(tmp_path / "tagger-margin.npz")
    joint = JointTagger.load(tmp_path / "joint-proposed.npz")
    assert margin.alphabet == "bilou" and "U-PER" in margin.tagset_
    for model in (margin, joint):
        nb = model.nbest(gold, n=3)
        assert nb.tagset == scn_tagset(margin.tagset_)
        for words, cands in zip(nb.words, nb.candidates):
            for c in cands:  # valid SCN: every C continues an entity of its own type
                spans = tags_to_spans(c, nb.tagset)
                assert all(0 <= sp.start < sp.end <= len(words) for sp in spans)
                prev = "N"
                for t in (nb.tagset[k] for k in c):
                    assert not t.startswith("C") or (prev[2:] == t[2:] and prev != "N")
                    prev = t
