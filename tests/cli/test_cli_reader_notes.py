"""Every command that reads a corpus says what the reader did not keep, as ``convert`` and
``stats`` do: a Prodigy file of four tasks, one rejected and one ignored, gives two sentences, and
``tag`` and ``preannotate`` say so on a ``note:`` line; with ``--strict`` they refuse the file
and write nothing."""

from __future__ import annotations

import json

import pytest

from nerstudio.cli import main
from nerstudio.corpus import read_corpus
from nerstudio.demo import DEMO_MODEL_DIR


def _task(text, spans, answer, n):
    return {
        "text": text,
        "spans": [{"start": a, "end": b, "label": lab} for a, b, lab in spans],
        "_input_hash": n,
        "_task_hash": 100 + n,
        "answer": answer,
    }


@pytest.fixture
def tasks(tmp_path):
    path = tmp_path / "tasks.jsonl"
    rows = [
        _task("Maria Lopez visited Linz .", [(0, 11, "PER")], "accept", 1),
        _task("Nothing to see here .", [], "reject", 2),
        _task("Skip this one .", [], "ignore", 3),
        _task("The EU met in Paris .", [(4, 6, "ORG")], "accept", 4),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert len(read_corpus(path).sentences) == 2
    return path


def _commands(tasks, out):
    return {
        "tag": ["tag", str(DEMO_MODEL_DIR / "tagger.npz"), str(tasks), "--out", str(out)],
        "preannotate": [
            "preannotate",
            str(tasks),
            "--model",
            str(DEMO_MODEL_DIR),
            "--out",
            str(out),
        ],
    }


@pytest.mark.parametrize("command", ["tag", "preannotate"])
def test_the_readers_notes_are_said(tasks, tmp_path, capsys, command):
    out = tmp_path / "out.conll"
    assert main(_commands(tasks, out)[command]) == 0
    err = capsys.readouterr().err
    notes = [x for x in err.splitlines() if x.startswith(f"note: {tasks}: ")]
    assert len(notes) == 1 and "1 rejected and 1 ignored task(s) skipped" in notes[0], err
    assert len(read_corpus(out).sentences) == 2


@pytest.mark.parametrize("command", ["tag", "preannotate"])
def test_strict_refuses_what_the_reader_would_drop(tasks, tmp_path, capsys, command):
    out = tmp_path / "out.conll"
    assert main([*_commands(tasks, out)[command], "--strict"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"nerstudio: error: {tasks}: --strict: only accepted tasks read")
    assert not out.exists()


def test_strict_preannotate_refuses_what_the_output_format_would_drop(tmp_path, capsys):
    """JSONL keeps an empty record; CoNLL cannot: with --strict nothing is written."""
    src = tmp_path / "e.jsonl"
    src.write_text('{"text": "Maria Lopez visited Linz ."}\n{"text": "   "}\n', encoding="utf-8")
    out = tmp_path / "out.conll"
    args = ["preannotate", str(src), "--model", str(DEMO_MODEL_DIR), "--out", str(out)]
    assert main([*args, "--strict"]) == 1
    assert "--strict" in capsys.readouterr().err and not out.exists()
    assert main(args) == 0
    assert "note: " in capsys.readouterr().err and out.exists()
