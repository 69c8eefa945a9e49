"""User errors against bugs: the CLI's routing by exception type, the message catalogue, and the
option choices and help generated from the format, scheme and learner registries."""

from __future__ import annotations

import pytest

from nerstudio import cli
from nerstudio.cli import main
from nerstudio.cli.parser import build_parser
from nerstudio.corpus.detect import FORMATS
from nerstudio.corpus.foreign import HANDLERS
from nerstudio.corpus.schemes import SCHEMES, normalize_scheme
from nerstudio.errors import DataError, FormatError, Msg, NerstudioError, SettingsError
from nerstudio.experiments.kazama import SYSTEMS
from nerstudio.rerank.model import ALGORITHMS

GOLD = "EU NNP I-NP I-ORG\nrejects VBZ I-VP O\n"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def gold(tmp_path):
    path = tmp_path / "gold.conll"
    path.write_text(GOLD)
    return path


def test_a_value_error_from_deep_inside_is_an_internal_error(gold, capsys, monkeypatch):
    import nerstudio.cli.commands.stats as commands

    def broken(reader):  # the counting of a corpus read without fault goes wrong
        raise ValueError("an index the code got wrong")

    monkeypatch.setattr(commands, "corpus_stats", broken)
    monkeypatch.delenv("NERSTUDIO_DEBUG", raising=False)
    code, _, err = run(capsys, "stats", gold)
    assert code == cli.INTERNAL_ERROR != cli.USER_ERROR
    assert err.startswith("nerstudio: internal error: ValueError: an index the code got wrong")
    assert "(a bug; the details are in " in err and "nerstudio: error:" not in err


def test_a_format_error_is_path_line_message_exit_1(tmp_path, capsys):
    bad = tmp_path / "bad.conll"
    bad.write_text("EU NNP I-NP I-ORG\nrejects VBZ I-VP Q-XYZ\n")
    code, _, err = run(capsys, "stats", bad, "--from", "conll2003", "--from-scheme", "iob1")
    assert code == 1
    assert err.startswith(f"nerstudio: error: {bad}:2: ") and len(err.splitlines()) == 1


def test_a_settings_error_from_a_command_is_exit_1(gold, tmp_path, capsys):
    code, _, err = run(capsys, "rank-uncertain", tmp_path / "x.npz", "--top", "-1")
    assert (code, err) == (1, "nerstudio: error: --top must be 0 (all) or more\n")


def test_user_errors_are_nerstudio_errors_and_still_value_errors():
    for cls in (SettingsError, DataError):
        assert issubclass(cls, NerstudioError) and issubclass(cls, ValueError)
    with pytest.raises(SettingsError) as e:
        normalize_scheme("iob3")
    assert str(e.value) == Msg.UNKNOWN.format(what="tag scheme", name="iob3", choices=SCHEMES)
    assert str(FormatError("a.conll", 3, "bad")) == "a.conll:3: bad"


def test_an_unknown_format_or_scheme_is_exit_1_naming_the_choices(gold, tmp_path, capsys):
    code, _, err = run(capsys, "convert", gold, tmp_path / "o", "--to", "xml")
    assert code == 1 and "unknown format 'xml' (choose from " in err and "webanno" in err
    code, _, err = run(capsys, "convert", gold, tmp_path / "o", "--scheme", "iob3")
    assert code == 1 and "unknown tag scheme 'iob3'" in err


def _help(*command: str) -> str:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")  # the subcommands
    return action.choices[command[0]].format_help() if command else parser.format_help()


@pytest.mark.parametrize("command", ["convert", "evaluate", "stats", "adjudicate", "preannotate"])
def test_help_lists_every_registered_format_and_scheme(command):
    text = " ".join(_help(command).split())  # argparse wraps the lines
    assert len(FORMATS) == 5 + len(HANDLERS)
    for name in (*FORMATS, *SCHEMES):
        assert name in text, (command, name)


def test_convert_to_lists_the_formats_nerstudio_writes():
    from nerstudio.corpus.foreign import writable

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["convert"]
    to = " ".join(next(a for a in sub._actions if "--to" in a.option_strings).help.split())
    listed = set(to.rsplit(": ", 1)[1].split(", "))
    assert listed == {f for f in FORMATS if writable(f)} and listed < set(FORMATS)


def test_learner_choices_and_help_come_from_the_registries(capsys):
    assert all(a in " ".join(_help("train-reranker").split()) for a in ALGORITHMS)
    text = " ".join(_help("experiment").split())
    assert all(s in text for s in (*ALGORITHMS, *SYSTEMS))
    text = " ".join(_help("sweep").split())
    assert all(a in text for a in ALGORITHMS)
    with pytest.raises(SystemExit):
        build_parser().parse_args(
            ["train-reranker", "--train", "t", "--algo", "nope", "--out", "m"]
        )
    assert "choose from" in capsys.readouterr().err


def test_a_format_added_to_the_table_shows_in_help_and_choices(monkeypatch, gold, tmp_path):
    import nerstudio.cli.options as parser_module

    monkeypatch.setattr(parser_module, "FORMATS", (*FORMATS, "brandnew"))
    assert "brandnew" in " ".join(_help("convert").split())


def test_run_settings_learners_are_the_registry():
    from nerstudio.runs import spec as run_settings

    assert run_settings.algorithms() == ALGORITHMS
    assert run_settings.learner_defaults("not-a-learner") == {}


def test_a_number_list_the_user_mistyped_is_exit_1(tmp_path, capsys):
    argv = ["experiment", "--suite", "kazama", "--out", tmp_path / "out"]
    argv += ["--train", "t", "--dev", "d", "--test", "e", "--C-grid", "margin=1,x"]
    code, _, err = run(capsys, *argv)
    assert (code, err) == (
        1,
        "nerstudio: error: --C-grid '1,x': expected numbers joined by commas\n",
    )


def _choices(command: str, option: str) -> tuple:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return tuple(next(a for a in sub._actions if option in a.option_strings).choices)


def test_every_other_choice_list_is_its_registry():
    from nerstudio.experiments.collins import PRESETS
    from nerstudio.rerank.context import SCOPES
    from nerstudio.rerank.importance import AGAINST, SORTS
    from nerstudio.rerank.uncertainty import MEASURES
    from nerstudio.tagging.maxent import TASKS
    from nerstudio.tagging.perceptron import VARIANTS
    from nerstudio.tagging.tag_alphabets import ALPHABETS

    assert _choices("train-reranker", "--algo") == ALGORITHMS
    assert _choices("train-tagger", "--variant") == VARIANTS
    assert _choices("train-tagger", "--task") == TASKS
    assert _choices("train-tagger", "--alphabet") == ALPHABETS
    assert _choices("experiment", "--tagger-alphabet") == ALPHABETS
    assert _choices("experiment", "--task") == TASKS
    assert _choices("experiment", "--context-scope") == SCOPES
    assert _choices("experiment", "--preset") == tuple(PRESETS)
    assert _choices("explain-model", "--against") == AGAINST
    assert _choices("explain-model", "--sort") == SORTS
    assert _choices("rank-uncertain", "--by") == MEASURES


@pytest.mark.parametrize(
    ("module", "name", "args", "kwargs"),
    [
        ("nerstudio.tagging.maxent", "MaxEntTagger", (), {"task": "nope"}),
        ("nerstudio.tagging.maxent", "MaxEntTagger", (), {"optimizer": "x"}),
        ("nerstudio.tagging.perceptron", "PerceptronTagger", (), {"variant": "nope"}),
        ("nerstudio.tagging.features", "parse_feature_set", ("conll+nope",), {}),
        ("nerstudio.resources", "select_lists", ("nope",), {}),
        ("nerstudio.rerank.model", "learner_class", ("nope",), {}),
        ("nerstudio.runtime.dask_executor", "executor_from_setting", ("local:0",), {}),
        ("nerstudio.corpus.detect", "normalize_format", ("xml",), {}),
    ],
)
def test_a_bad_setting_deep_in_the_library_is_a_settings_error(module, name, args, kwargs):
    import importlib

    with pytest.raises(SettingsError):
        getattr(importlib.import_module(module), name)(*args, **kwargs)
