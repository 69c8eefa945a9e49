"""The command line: convert, evaluate, stats; forcing options; exit codes; --debug."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nerstudio import __version__, cli
from nerstudio.cli import commands, main
from nerstudio.corpus import read_corpus

GOLD = """\
-DOCSTART- -X- -X- O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER
in IN I-PP O
Brussels NNP I-NP I-LOC
"""
# EU right, German missed, Peter Blackburn cut short, Brussels mislabelled, "call" spurious
PRED = """\
-DOCSTART- -X- -X- O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP O
call NN I-NP I-MISC

Peter NNP I-NP I-PER
Blackburn NNP I-NP O
in IN I-PP O
Brussels NNP I-NP I-ORG
"""


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
    gold.write_text(GOLD)
    pred.write_text(PRED)
    return gold, pred


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------------------------
# evaluate


def test_evaluate_json(files, capsys):
    gold, pred = files
    code, out, err = run(capsys, "evaluate", gold, pred, "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    # gold 4 (ORG, MISC, PER, LOC), proposed 4 (ORG, MISC, PER, ORG), correct 1
    assert (d["correct"], d["proposed"], d["gold"]) == (1, 4, 4)
    assert d["precision"] == pytest.approx(25.0)
    assert d["recall"] == pytest.approx(25.0)
    assert d["f1"] == pytest.approx(25.0)
    assert set(d["per_type"]) == {"LOC", "MISC", "ORG", "PER"}
    org = d["per_type"]["ORG"]
    assert (org["precision"], org["recall"], org["f1"]) == pytest.approx((50.0, 100.0, 200 / 3))
    assert d["per_type"]["PER"]["f1"] == 0.0
    assert d["sentences"] == 2 and d["tokens"] == 8
    assert d["token_accuracy"] == pytest.approx(100 * 4 / 8)
    assert d["gold_file"] == str(gold) and d["pred_file"] == str(pred) and d["mode"] == "conlleval"


def test_evaluate_table(files, capsys):
    gold, pred = files
    code, out, _err = run(capsys, "evaluate", gold, pred)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("sentences: 2; tokens: 8; gold entities: 4; proposed: 4; correct: 1")
    assert [ln.split()[0] for ln in lines[3:]] == ["LOC", "MISC", "ORG", "PER", "overall"]
    assert lines[-1].split()[1:4] == ["25.00", "25.00", "25.00"]


def test_evaluate_self_is_perfect(files, capsys):
    gold, _ = files
    _code, out, _ = run(capsys, "evaluate", gold, gold, "--json")
    d = json.loads(out)
    assert (d["precision"], d["recall"], d["f1"], d["token_accuracy"]) == (
        100.0,
        100.0,
        100.0,
        100.0,
    )


def test_evaluate_mixed_formats(files, tmp_path, capsys):
    gold, pred = files
    code, _, _ = run(capsys, "convert", pred, tmp_path / "pred.jsonl", "--to", "jsonl")
    assert code == 0
    code, out, _ = run(capsys, "evaluate", gold, tmp_path / "pred.jsonl", "--json")
    assert code == 0 and json.loads(out)["f1"] == pytest.approx(25.0)
    # a .txt holding JSONL, announced with --pred-format
    (tmp_path / "pred.txt").write_bytes((tmp_path / "pred.jsonl").read_bytes())
    code, out, _ = run(
        capsys, "evaluate", gold, tmp_path / "pred.txt", "--pred-format", "jsonl", "--json"
    )
    assert json.loads(out)["f1"] == pytest.approx(25.0)


def test_evaluate_modes(tmp_path, capsys):
    gold = tmp_path / "gold.txt"
    pred = tmp_path / "pred.txt"
    gold.write_text("a B-PER\nb I-PER\nc O\n\nd B-LOC\n")
    pred.write_text("a B-PER\nb I-PER\nc O\n\nd I-LOC\n")  # stray I-LOC
    _, out, _ = run(
        capsys, "evaluate", gold, pred, "--json", "--gold-scheme", "iob2", "--pred-scheme", "iob2"
    )
    assert json.loads(out)["f1"] == 100.0  # repaired: I-LOC starts an entity
    _, out, _ = run(
        capsys, "evaluate", gold, pred, "--json", "--mode", "strict", "--pred-scheme", "iob2"
    )
    d = json.loads(out)
    assert d["mode"] == "strict" and (d["correct"], d["proposed"], d["gold"]) == (1, 1, 2)
    code, _, err = run(capsys, "evaluate", gold, pred, "--strict", "--pred-scheme", "iob2")
    assert code == 1 and err.startswith(f"nerstudio: error: {pred}:5: invalid transition")


def test_evaluate_misaligned(files, tmp_path, capsys):
    gold, _ = files
    short = tmp_path / "short.conll"
    short.write_text(GOLD.split("\nPeter")[0] + "\n")
    code, _, err = run(capsys, "evaluate", gold, short)
    assert code == 1
    assert (
        err == f"nerstudio: error: {gold}:8: has more sentences than {short} (which ends after 1)\n"
    )
    other = tmp_path / "other.conll"
    other.write_text(GOLD.replace("call NN I-NP O\n", ""))
    code, _, err = run(capsys, "evaluate", gold, other)
    assert code == 1
    assert err == (
        f"nerstudio: error: {other}:3: sentence 1 has 3 tokens but the gold sentence at "
        f"{gold}:3 has 4\n"
    )


# --------------------------------------------------------------------------------------------
# stats


def test_stats_json(files, capsys):
    gold, _ = files
    code, out, err = run(capsys, "stats", gold, "--json")
    assert code == 0 and err == ""
    st = json.loads(out)
    assert st == {
        "file": str(gold),
        "format": "conll2003",
        "scheme": "iob1",
        "encoding": "utf-8",
        "documents": 1,
        "sentences": 2,
        "tokens": 8,
        "entities": 4,
        "entities_by_type": {"LOC": 1, "MISC": 1, "ORG": 1, "PER": 1},
        "longest_sentence": 4,
        "repairs": 0,
    }


def test_stats_table(files, capsys):
    gold, _ = files
    code, out, _ = run(capsys, "stats", gold)
    assert code == 0
    assert out.splitlines()[0] == f"{gold}: conll2003, IOB1, utf-8"
    assert "  sentences            2" in out and "    PER                1" in out
    assert "longest sentence: 4 tokens" in out and "repaired" not in out


def test_stats_forcing(files, capsys):
    gold, _ = files
    _, out, _ = run(capsys, "stats", gold, "--json", "--from", "columns", "--from-scheme", "bio")
    st = json.loads(out)
    assert (st["format"], st["scheme"], st["repairs"]) == ("columns", "iob2", 4)
    code, out, err = run(capsys, "stats", gold, "--from", "tsv")
    assert (
        code == 1 and "a token line needs at least 2 columns" in err and len(err.splitlines()) == 1
    )


# --------------------------------------------------------------------------------------------
# convert


def test_convert_lossless(files, tmp_path, capsys):
    gold, _ = files
    out = tmp_path / "out.conll"
    code, stdout, err = run(capsys, "convert", gold, out)
    assert code == 0 and stdout == ""
    assert err == f"wrote {out} (conll2003, iob1) from {gold} (conll2003, iob1)\n"
    assert out.read_bytes() == gold.read_bytes()


@pytest.mark.parametrize(
    "to,scheme,first_tag",
    [
        ("tsv", "iob2", "EU\tNNP\tI-NP\tB-ORG"),
        ("conll2002", "bioes", "EU NNP S-ORG"),
        ("columns", "scn", "EU NNP I-NP S-ORG"),
        ("conll2003", "bilou", "EU NNP I-NP U-ORG"),
    ],
)
def test_convert_to_and_scheme(files, tmp_path, capsys, to, scheme, first_tag):
    gold, _ = files
    out = tmp_path / "out"
    code, _, err = run(capsys, "convert", gold, out, "--to", to, "--scheme", scheme)
    assert code == 0 and err.startswith(
        f"wrote {out} ({to}, {scheme}) from {gold} (conll2003, iob1)"
    )
    assert first_tag in out.read_text().splitlines()
    c = read_corpus(out, format=to)
    assert c.scheme == scheme
    assert [s.spans for s in c] == [s.spans for s in read_corpus(gold)]


def test_convert_from_forcing(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text('{"text": "Jan Peeters", "spans": [[0, 11, "PER"]]}\n')
    out = tmp_path / "out.txt"
    code, _, err = run(
        capsys, "convert", src, out, "--from", "json", "--to", "2col", "--scheme", "iob1"
    )
    assert code == 0
    assert out.read_text() == "Jan I-PER\nPeeters I-PER\n\n"
    # --from-scheme: read IOB1 tags as IOB2 (the I- start is repaired and reported)
    src2 = tmp_path / "iob1.txt"
    src2.write_text("Jan I-PER\nPeeters I-PER\n")
    code, _, err = run(capsys, "convert", src2, out, "--from-scheme", "iob2", "--scheme", "bioes")
    assert code == 0
    assert "note:" in err and "1 invalid tag transition(s)" in err and "--strict" in err
    assert out.read_text() == "Jan B-PER\nPeeters E-PER\n"


def test_convert_mixed_newlines_note(tmp_path, capsys):
    src = tmp_path / "m.txt"
    src.write_bytes(b"a B-X\r\nb O\n")
    code, _, err = run(capsys, "convert", src, tmp_path / "o.txt")
    assert code == 0 and "mixed line endings" in err


# --------------------------------------------------------------------------------------------
# Errors, exit codes, --debug


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["convert", "{gold}", "{out}", "--scheme", "xyz"], "unknown tag scheme 'xyz'"),
        (["convert", "{gold}", "{out}", "--to", "xml"], "unknown format 'xml'"),
        (["convert", "{gold}", "{out}", "--from", "xml"], "unknown format 'xml'"),
        (["stats", "{gold}", "--from-scheme", "nope"], "unknown tag scheme 'nope'"),
        (["evaluate", "{gold}", "{gold}", "--gold-format", "xml"], "unknown format 'xml'"),
    ],
)
def test_bad_option_values_exit_1(files, tmp_path, capsys, argv, fragment):
    gold, _ = files
    out = tmp_path / "out"
    code, _, err = run(capsys, *[a.format(gold=gold, out=out) for a in argv])
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("nerstudio: error: ") and fragment in err
    assert not out.exists()


def test_user_errors_exit_1_single_line(tmp_path, capsys):
    bad = tmp_path / "bad.conll"
    bad.write_text("a B C O\nb B C\n")
    code, out, err = run(capsys, "stats", bad)
    assert code == 1 and out == ""
    assert (
        err
        == f"nerstudio: error: {bad}:2: ragged columns: expected 4 columns as on earlier lines, found 3\n"
    )


def test_usage_errors(capsys):
    """A command line argparse cannot parse is a user error too: status 1 (not argparse's 2)."""
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "only-one-file"])
    assert info.value.code == 1
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 1
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "a", "b", "--mode", "lenient"])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith(
        "nerstudio evaluate: error: argument --mode: invalid choice"
    )
    assert main([]) == 1  # no command: help
    assert "convert" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"nerstudio {__version__}"


@pytest.mark.parametrize("where", ["before", "after", "env"])
def test_debug_shows_traceback(tmp_path, capsys, monkeypatch, where):
    missing = tmp_path / "missing.conll"
    argv = ["stats", str(missing)]
    if where == "before":
        argv = ["--debug", *argv]
    elif where == "after":
        argv = [*argv, "--debug"]
    else:
        monkeypatch.setenv("NERSTUDIO_DEBUG", "1")
    code, _, err = run(capsys, *argv)
    assert code == 1
    assert "Traceback (most recent call last)" in err and "FormatError" in err
    assert err.splitlines()[-1] == f"nerstudio: error: {missing}: no such file"


def test_no_traceback_without_debug(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("NERSTUDIO_DEBUG", raising=False)
    code, _, err = run(capsys, "stats", tmp_path / "missing.conll")
    assert code == 1 and "Traceback" not in err and len(err.splitlines()) == 1


def test_internal_error(files, capsys, monkeypatch):
    gold, _ = files

    def boom(args):
        raise RuntimeError("bug here")

    monkeypatch.setattr(commands.module("stats"), "run", boom)
    monkeypatch.delenv("NERSTUDIO_DEBUG", raising=False)
    code, _, err = run(capsys, "stats", gold)
    assert code == 3
    assert err == (
        f"nerstudio: internal error: RuntimeError: bug here (a bug; the details are in "
        f"{cli.logs.log_path()})\n"
    )
    code, _, err = run(capsys, "--debug", "stats", gold)
    assert code == 3
    assert "Traceback (most recent call last)" in err and "RuntimeError: bug here" in err
    assert (
        err.splitlines()[-1]
        == "nerstudio: internal error: RuntimeError: bug here (a bug; the details are above)"
    )


def test_os_error_exit_1(files, tmp_path, capsys):
    gold, _ = files
    target = tmp_path / "dir"
    target.mkdir()
    code, _, err = run(capsys, "convert", gold, target)  # cannot replace a folder by a file
    assert code == 1
    assert err.startswith("nerstudio: error: ") and len(err.splitlines()) == 1
    assert target.is_dir()


@pytest.mark.slow
def test_a_closed_output_pipe_is_no_error():
    """`nerstudio stats FILE | head -1`: when the reader of the output has gone, the command stops
    quietly (status 141, as for SIGPIPE) instead of printing 'error: Broken pipe'."""
    import os
    import subprocess
    import sys

    from nerstudio.demo import DEMO_CORPUS

    read, write = os.pipe()
    os.close(read)  # nobody will read: the first write fails with EPIPE
    try:
        r = subprocess.run(
            [sys.executable, "-m", "nerstudio", "stats", str(DEMO_CORPUS)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert r.returncode == 141, r.stderr
    assert r.stderr == ""
