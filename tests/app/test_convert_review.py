"""`nerstudio convert` carries review states, notes and flags where the application's save puts
them (nerstudio.app.review.save): JSONL records, Prodigy meta, the sidecar for the others; a
target whose sentences read back differently (brat re-splits them) gets a note instead."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import nerstudio
from nerstudio.app import review
from nerstudio.demo import DEMO_DIR

TARGETS = {
    "conll2003": "out.conll",
    "tsv": "out.tsv",
    "conllu": "out.conllu",
    "hf": "out.hf.jsonl",
    "jsonl": "out.jsonl",
    "prodigy": "out.prodigy.jsonl",
    "doccano": "out.doccano.jsonl",
    "label-studio": "out.ls.json",
}


def _states(n):
    reviewed = np.zeros(n, dtype=bool)
    reviewed[[1, 3]] = True
    marks = review.Marks({2: "check this", 7: "ask Ana"}, np.zeros(n, dtype=bool))
    marks.flagged[[5, 7]] = True
    return reviewed, marks


def _convert(tmp_path, src, out, fmt):
    args = [sys.executable, "-m", "nerstudio", "convert", str(src), str(tmp_path / out)]
    return subprocess.run(args + ["--to", fmt], capture_output=True, text=True, cwd=tmp_path)


def _check(path, fmt, want):
    back = nerstudio.read(path, fmt)
    reviewed, marks = review.read(back)
    assert np.array_equal(reviewed, want[0])
    assert marks.notes == want[1].notes and np.array_equal(marks.flagged, want[1].flagged)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(TARGETS))
def test_convert_from_jsonl_keeps_review_states_notes_and_flags(tmp_path, fmt):
    c = nerstudio.read(DEMO_DIR / "dev.conll")
    want = _states(len(c))
    review.save(c, want[0], tmp_path / "in.jsonl", "jsonl", marks=want[1])
    r = _convert(tmp_path, tmp_path / "in.jsonl", TARGETS[fmt], fmt)
    assert r.returncode == 0, r.stderr
    _check(tmp_path / TARGETS[fmt], fmt, want)
    if not review.in_file(fmt):
        assert "2 reviewed sentence(s), 2 note(s), 2 flag(s) kept in " in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["jsonl", "prodigy", "conllu"])
def test_convert_from_a_sidecar(tmp_path, fmt):
    c = nerstudio.read(DEMO_DIR / "dev.conll")
    want = _states(len(c))
    review.save(c, want[0], tmp_path / "in.conll", "conll2003", marks=want[1])
    assert (tmp_path / "in.conll.nerstudio-review.json").exists()
    r = _convert(tmp_path, tmp_path / "in.conll", TARGETS[fmt], fmt)
    assert r.returncode == 0, r.stderr
    _check(tmp_path / TARGETS[fmt], fmt, want)


def test_nothing_to_carry_writes_no_sidecar(tmp_path):
    r = _convert(tmp_path, DEMO_DIR / "dev.conll", "out.conllu", "conllu")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "out.conllu.nerstudio-review.json").exists()


@pytest.mark.slow
def test_a_target_that_resplits_sentences_gets_a_note(tmp_path):
    c = nerstudio.read(DEMO_DIR / "dev.conll")
    want = _states(len(c))
    review.save(c, want[0], tmp_path / "in.jsonl", "jsonl", marks=want[1])
    (tmp_path / "outb").mkdir()
    r = _convert(tmp_path, tmp_path / "in.jsonl", "outb", "brat")
    assert r.returncode == 0, r.stderr
    assert "review states, notes and flags not carried" in r.stderr
    assert not (tmp_path / "outb.nerstudio-review.json").exists()
