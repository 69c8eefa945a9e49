"""The reranking commands end to end on the bundled demo corpus: experiment, train-reranker, rerank."""

from __future__ import annotations

import json
import os

import pytest

from nerstudio.cli import main
from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.evaluation import evaluate_sentences
from nerstudio.rerank.model import RerankerModel

DEMO = str(DEMO_DIR)


@pytest.fixture(scope="module")
def experiment_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("exp")
    rc = main(
        [
            "experiment",
            "--train",
            os.path.join(DEMO, "train.conll"),
            "--dev",
            os.path.join(DEMO, "dev.conll"),
            "--test",
            os.path.join(DEMO, "test.conll"),
            "--out",
            str(out),
            "--features",
            "paper",
            "--systems",
            "boost,voted,averaged,margin",
            "--rounds",
            "600",
            "--eval-every",
            "50",
            "--epochs",
            "3",
            "--beta",
            "0.3",
            "--min-sentences",
            "2",
            "--folds",
            "3",
            "--workers",
            "1",
            "--json",
        ]
    )
    assert rc == 0
    return out


@pytest.mark.slow
def test_experiment_writes_the_report_and_scorable_predictions(experiment_dir):
    rep = json.loads((experiment_dir / "report.json").read_text())
    names = [s["name"] for s in rep["systems"]]
    assert names == ["baseline", "boosting", "voted", "averaged", "margin"]
    for s in rep["systems"]:
        for part in ("dev", "test"):
            assert set(s[part]) == {"precision", "recall", "f1", "rel_error_reduction"}
        assert s["seconds"] >= 0 and isinstance(s["settings"], dict)
        # the prediction file scores exactly what the report says
        pred = read_corpus(experiment_dir / f"pred-{s['name']}-test.conll")
        gold = read_corpus(os.path.join(DEMO, "test.conll"))
        assert evaluate_sentences(gold.sentences, pred.sentences).f1 == pytest.approx(
            s["test"]["f1"]
        )
    assert rep["systems"][0]["test"]["rel_error_reduction"] == 0.0
    assert rep["seconds_total"] > 0 and "features" in rep["stages"]
    md = (experiment_dir / "report.md").read_text()
    assert "| boosting |" in md and "rel. error reduction" in md
    assert (experiment_dir / "curves.png").read_bytes()[:4] == b"\x89PNG"
    # every system improves the weak demo baseline on dev (the dev set picked their round/epoch)
    base = rep["systems"][0]["dev"]["f1"]
    assert all(s["dev"]["f1"] > base for s in rep["systems"][1:])


@pytest.mark.slow
def test_rerank_writes_the_same_prediction_as_the_experiment(experiment_dir, tmp_path, capsys):
    out = tmp_path / "pred.conll"
    rc = main(
        [
            "rerank",
            str(experiment_dir / "reranker-boosting.npz"),
            str(experiment_dir / "test-nbest.npz"),
            "--out",
            str(out),
            "--json",
        ]
    )
    assert rc == 0
    assert out.read_bytes() == (experiment_dir / "pred-boosting-test.conll").read_bytes()
    scores = json.loads(capsys.readouterr().out)
    rep = json.loads((experiment_dir / "report.json").read_text())
    assert scores["reranked"]["f1"] == pytest.approx(rep["systems"][1]["test"]["f1"])


@pytest.mark.slow
def test_train_reranker_command(experiment_dir, tmp_path, capsys):
    model = tmp_path / "m.npz"
    rc = main(
        [
            "train-reranker",
            "--train",
            str(experiment_dir / "train-nbest.npz"),
            "--dev",
            str(experiment_dir / "dev-nbest.npz"),
            "--algo",
            "margin",
            "--C",
            "3",
            "--epochs",
            "2",
            "--beta",
            "0.3",
            "--min-sentences",
            "2",
            "--out",
            str(model),
        ]
    )
    assert rc == 0
    assert "reranked F" in capsys.readouterr().out
    m = RerankerModel.load(model)
    assert m.algo == "margin" and m.learner.C == 3.0 and len(m.learner.history_) == 2


@pytest.mark.slow
def test_reranker_options_that_do_not_apply_are_refused(experiment_dir, tmp_path, capsys):
    rc = main(
        [
            "train-reranker",
            "--train",
            str(experiment_dir / "train-nbest.npz"),
            "--algo",
            "boost",
            "--epochs",
            "3",
            "--out",
            str(tmp_path / "m.npz"),
        ]
    )
    assert rc == 1
    assert "--epochs does not apply to boost" in capsys.readouterr().err
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.slow
def test_rerank_with_a_broken_model_is_one_clear_line(tmp_path, capsys, experiment_dir):
    bad = tmp_path / "model.npz"
    bad.write_bytes(b"PK\x03\x04garbage")
    rc = main(
        [
            "rerank",
            str(bad),
            str(experiment_dir / "test-nbest.npz"),
            "--out",
            str(tmp_path / "p.conll"),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "model.npz" in err and "Traceback" not in err
    assert not (tmp_path / "p.conll").exists()


@pytest.mark.slow
def test_lists_from_an_earlier_run_gives_the_same_figures(experiment_dir, tmp_path, capsys):
    """--lists-from takes the tagger and lists of a run with the same settings: every figure of
    the report is the full run's (the tagger stage is the only one skipped)."""
    out = tmp_path / "again"
    rc = main(
        [
            "experiment",
            "--train",
            os.path.join(DEMO, "train.conll"),
            "--dev",
            os.path.join(DEMO, "dev.conll"),
            "--test",
            os.path.join(DEMO, "test.conll"),
            "--out",
            str(out),
            "--features",
            "paper",
            "--systems",
            "boost,voted,averaged,margin",
            "--rounds",
            "600",
            "--eval-every",
            "50",
            "--epochs",
            "3",
            "--beta",
            "0.3",
            "--min-sentences",
            "2",
            "--folds",
            "3",
            "--lists-from",
            str(experiment_dir),
        ]
    )
    assert rc == 0
    first = json.loads((experiment_dir / "report.json").read_text())
    again = json.loads((out / "report.json").read_text())
    assert again["config"]["lists_from"] == str(experiment_dir)
    assert [(s["name"], s["dev"], s["test"]) for s in again["systems"]] == [
        (s["name"], s["dev"], s["test"]) for s in first["systems"]
    ]
    assert (out / "pred-voted-test.conll").read_bytes() == (
        experiment_dir / "pred-voted-test.conll"
    ).read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize(
    "change, message",
    [
        (["--features", "conll"], "made with other settings: features 'paper' (wanted 'conll')"),
        (["--n", "10"], "made with other settings: n 20 (wanted 10)"),
        (["--tagger-l2", "3"], "made with other settings: l2 1.0 (wanted 3.0)"),
        (
            ["--tagger-alphabet", "scn"],
            "made with other settings: alphabet 'bilou' (wanted 'scn')",
        ),
        (["--swap"], "other words than the corpus"),
        (["--gazetteer-lists", "persons", "--no-global-gazetteers"], "drop --no-global-gazetteers"),
        (["--gazetteer-lists", "people"], "unknown gazetteer or family 'people'"),
        (["--context-scope", "document", "--no-context"], "drop --no-context"),
    ],
)
def test_lists_from_with_other_settings_or_corpora_is_refused(
    experiment_dir, tmp_path, capsys, change, message
):
    dev, test = os.path.join(DEMO, "dev.conll"), os.path.join(DEMO, "test.conll")
    if change == ["--swap"]:
        dev, test, change = test, dev, []
    args = [
        "experiment",
        "--train",
        os.path.join(DEMO, "train.conll"),
        "--dev",
        dev,
        "--test",
        test,
        "--out",
        str(tmp_path / "x"),
        "--folds",
        "3",
        "--lists-from",
        str(experiment_dir),
    ]
    if "--features" not in change:
        args += ["--features", "paper"]
    rc = main(args + change)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1
    assert message in err[-1] and "Traceback" not in "".join(err)
    assert not (tmp_path / "x" / "report.json").exists()


def test_kazama_suite_refuses_the_collins_only_options(tmp_path, capsys):
    rc = main(
        [
            "experiment",
            "--suite",
            "kazama",
            "--train",
            "a",
            "--dev",
            "b",
            "--test",
            "c",
            "--out",
            str(tmp_path),
            "--lists-from",
            str(tmp_path),
        ]
    )
    assert rc == 1 and "--lists-from applies to the collins suite only" in capsys.readouterr().err


@pytest.mark.slow
def test_lists_from_copies_the_inputs_byte_for_byte(experiment_dir, tmp_path):
    out = tmp_path / "copy"
    rc = main(
        [
            "experiment",
            "--train",
            os.path.join(DEMO, "train.conll"),
            "--dev",
            os.path.join(DEMO, "dev.conll"),
            "--test",
            os.path.join(DEMO, "test.conll"),
            "--out",
            str(out),
            "--features",
            "paper",
            "--systems",
            "averaged",
            "--epochs",
            "2",
            "--beta",
            "0.3",
            "--min-sentences",
            "2",
            "--folds",
            "3",
            "--lists-from",
            str(experiment_dir),
            "--no-context",
            "--gazetteer-lists",
            "locations",
        ]
    )
    assert rc == 0
    for name in ("tagger", "train-nbest", "dev-nbest", "test-nbest"):
        assert (out / f"{name}.npz").read_bytes() == (experiment_dir / f"{name}.npz").read_bytes()
    rep = json.loads((out / "report.json").read_text())
    assert rep["config"]["reranker_context"] is False
    assert all(n.startswith("loc_") for n in rep["config"]["reranker_gazetteers"])


@pytest.mark.slow
def test_lists_made_before_the_tag_alphabet_option_are_scn(experiment_dir, tmp_path):
    """Lists whose settings do not name the tagger's alphabet were made by an SCN tagger, and
    those that do not name its optimiser by L-BFGS: they serve an SCN L-BFGS run and are refused
    to a BILOU one (the default) and to one whose tagger is trained online."""
    from nerstudio.nbest import NBestList

    def run(out, *more):
        return main(
            [
                "experiment",
                "--train",
                os.path.join(DEMO, "train.conll"),
                "--dev",
                os.path.join(DEMO, "dev.conll"),
                "--test",
                os.path.join(DEMO, "test.conll"),
                "--out",
                str(tmp_path / out),
                "--features",
                "paper",
                "--systems",
                "averaged",
                "--epochs",
                "2",
                "--folds",
                "3",
                *more,
            ]
        )

    lbfgs = ("--tagger-optimizer", "lbfgs")
    assert run("first", "--tagger-alphabet", "scn", *lbfgs, "--min-sentences", "2") == 0
    for name in ("train", "dev", "test"):  # as written before either option existed
        path = tmp_path / "first" / f"{name}-nbest.npz"
        nb = NBestList.load(path)
        assert nb.meta["made_by"].pop("alphabet") == "scn"
        assert nb.meta["made_by"].pop("optimizer") == "lbfgs"
        assert "epochs" not in nb.meta["made_by"]  # only the iterations count for L-BFGS
        nb.save(path)
    old = ["--lists-from", str(tmp_path / "first")]
    assert run("scn", "--tagger-alphabet", "scn", *lbfgs, *old) == 0
    assert run("bilou", *lbfgs, *old) == 1
    assert not (tmp_path / "bilou" / "report.json").exists()
    # nor do they serve a run whose tagger is trained online
    assert run("online", "--tagger-alphabet", "scn", "--tagger-optimizer", "adagrad", *old) == 1


@pytest.mark.slow
def test_a_requested_kernel_run_reports_training_and_test_seconds(experiment_dir, tmp_path):
    """With the kernel perceptron asked for beside the default systems, every reranker's report
    entry gives its training and test-scoring seconds, and report.md shows both columns."""
    out = tmp_path / "defaults"
    rc = main(
        [
            "experiment",
            "--systems",
            "boost,voted,averaged,kernel",
            "--train",
            os.path.join(DEMO, "train.conll"),
            "--dev",
            os.path.join(DEMO, "dev.conll"),
            "--test",
            os.path.join(DEMO, "test.conll"),
            "--out",
            str(out),
            "--features",
            "paper",
            "--rounds",
            "600",
            "--eval-every",
            "50",
            "--epochs",
            "3",
            "--min-sentences",
            "2",
            "--folds",
            "3",
            "--workers",
            "1",
            "--lists-from",
            str(experiment_dir),
        ]
    )
    assert rc == 0
    rep = json.loads((out / "report.json").read_text())
    assert [s["name"] for s in rep["systems"]] == [
        "baseline",
        "boosting",
        "voted",
        "averaged",
        "kernel",
    ]
    for s in rep["systems"][1:]:
        assert s["seconds"] > 0 and s["test_seconds"] > 0
        assert rep["stages"][s["name"] + "_test"] == s["test_seconds"]
    kernel = rep["systems"][-1]
    # one thread (see collins.py)
    assert kernel["settings"]["beta_grid"] and kernel["settings"]["threads"] == 1
    # the typed default; the preset keeps the tagging kernel
    assert kernel["settings"]["global_features"] is True
    from nerstudio.experiments.collins import ExperimentConfig

    assert (
        ExperimentConfig.from_preset("collins2002").learner_params("kernel")["global_features"]
        is False
    )
    md = (out / "report.md").read_text()
    assert "| training s | test scoring s |" in md
    assert f"| {kernel['seconds']:.1f} | {kernel['test_seconds']:.1f} |" in md


def _experiment_settings(*options):
    from nerstudio.cli.commands.experiment import collins_config
    from nerstudio.cli.parser import build_parser

    files = ("--train", "t", "--dev", "d", "--test", "e", "--out", "o")
    return collins_config(build_parser().parse_args(["experiment", *files, *options]))


def test_the_kernel_perceptron_runs_only_when_asked_for():
    """The default typed experiment leaves the kernel perceptron out (the slowest reranker, the
    smallest gain); --systems naming it, or the collins2002 preset, runs it."""
    assert _experiment_settings().systems == ("boost", "voted", "averaged")
    asked = _experiment_settings("--systems", "boost,kernel")
    assert asked.systems == ("boost", "kernel") and asked.task == "typed"
    assert _experiment_settings("--preset", "collins2002").systems == ("boost", "voted", "kernel")
    # an explicit list still overrides the preset's
    assert _experiment_settings("--preset", "collins2002", "--systems", "voted").systems == (
        "voted",
    )


def test_the_collins2002_preset_keeps_the_papers_settings_whatever_the_defaults():
    """The defaults moved to the Brown clusters and a larger kernel sample (chosen on dev,
    docs/results.md); the preset's run must not move with them: every setting that
    distinguishes the defaults is pinned by the preset."""
    from nerstudio.experiments.collins import ExperimentConfig

    default, paper = ExperimentConfig(), ExperimentConfig.from_preset("collins2002")
    assert "clusters" in default.tagger_features and default.reranker_clusters
    assert default.kernel_sentences == 6000 and default.tagger_alphabet == "bilou"
    assert paper.tagger_alphabet == "scn"  # Collins' start/continue tags
    assert paper.tagger_features == "paper" and paper.task == "scn"
    assert paper.reranker_clusters is False and paper.reranker_biglex is False
    assert paper.reranker_gazetteers is False and paper.reranker_context is False
    assert paper.learner_params("kernel")["max_sentences"] == 3000
    assert paper.learner_params("kernel")["word_features"] is False
    assert (paper.tagger_cutoff, paper.tagger_max_iter) == (5, 100)


def test_jackknife_lists_carry_their_documents_for_the_context_features(tmp_path, capsys):
    """The lists ``nerstudio jackknife`` writes name each sentence's document, as the window's
    and the experiment's do, so the rerankers' document-context features see real documents."""
    out, dev_out = tmp_path / "train.npz", tmp_path / "dev.npz"
    assert (
        main(
            [
                "jackknife",
                str(DEMO_DIR / "dev.conll"),
                "--folds",
                "2",
                "--n",
                "3",
                "--workers",
                "1",
                "--features",
                "paper",
                "--out",
                str(out),
                "--decode",
                str(DEMO_DIR / "test.conll"),
                str(dev_out),
            ]
        )
        == 0
    )
    from nerstudio.nbest import NBestList

    for path, corpus in ((out, "dev.conll"), (dev_out, "test.conll")):
        nb = NBestList.load(path)
        c = read_corpus(DEMO_DIR / corpus)
        assert nb.meta["documents"] == c.sentence_document()
        assert len(set(nb.meta["documents"])) == len(c.documents) > 1
        assert nb.meta["source"] == os.path.abspath(DEMO_DIR / corpus)
