"""Agreement between two annotations (nerstudio.agreement, ``nerstudio agreement``), checked by hand.

The tiny example (two sentences, eight tokens; IOB2 tags of A / B):

    John/B-PER/B-PER Smith/I-PER/I-PER lives/O/O in/O/O Paris/B-LOC/B-ORG
    Acme/B-ORG/B-ORG hired/O/O Mary/B-PER/O

Spans: A has 4 (PER John Smith, LOC Paris, ORG Acme, PER Mary), B has 3, 2 match:
P = 2/3, R = 2/4, F = 2·(2/3)(1/2)/(2/3 + 1/2) = 4/7 = 57.14 %.

Kappa on all tags: 6 of 8 tokens agree, p_o = 6/8. Tag counts A: B-PER 2, I-PER 1, O 3, B-LOC 1,
B-ORG 1; B: B-PER 1, I-PER 1, O 4, B-ORG 2. p_e = (2·1 + 1·1 + 3·4 + 1·0 + 1·2)/64 = 17/64.
κ = (48/64 − 17/64)/(1 − 17/64) = 31/47 = 0.6596.

Per type (other types' tags become O):
PER: pairs differ only at Mary (B-PER/O): p_o = 7/8; A: B-PER 2, I-PER 1, O 5; B: B-PER 1, I-PER 1,
O 6; p_e = (2 + 1 + 30)/64 = 33/64; κ = (56 − 33)/(64 − 33) = 23/31 = 0.7419.
LOC: only A marks Paris: p_o = 7/8, p_e = (7·8)/64 = 56/64: κ = 0.
ORG: B adds Paris: p_o = 7/8; A: B-ORG 1, O 7; B: B-ORG 2, O 6; p_e = (2 + 42)/64 = 44/64;
κ = (56 − 44)/(64 − 44) = 12/20 = 0.6.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from nerstudio.agreement import agreement, cohen_kappa
from nerstudio.cli import main

A = "John B-PER\nSmith I-PER\nlives O\nin O\nParis B-LOC\n\nAcme B-ORG\nhired O\nMary B-PER\n"
B = "John B-PER\nSmith I-PER\nlives O\nin O\nParis B-ORG\n\nAcme B-ORG\nhired O\nMary O\n"


@pytest.fixture
def files(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(A, encoding="utf-8")
    b.write_text(B, encoding="utf-8")
    return a, b


def test_figures_match_the_hand_computation(files, capsys):
    a, b = files
    assert main(["agreement", str(a), str(b), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["entities_a"], out["entities_b"], out["matching"]) == (4, 3, 2)
    assert out["precision"] == pytest.approx(200 / 3)
    assert out["recall"] == pytest.approx(50.0)
    assert out["f1"] == pytest.approx(400 / 7)
    assert out["kappa"] == pytest.approx(31 / 47)
    assert out["token_agreement"] == pytest.approx(75.0)
    per = out["per_type"]
    assert per["PER"]["kappa"] == pytest.approx(23 / 31)
    assert per["LOC"]["kappa"] == pytest.approx(0.0)
    assert per["ORG"]["kappa"] == pytest.approx(0.6)
    assert per["PER"]["f1"] == pytest.approx(200 / 3)  # P 1/1, R 1/2
    assert out["differing_sentences"] == 2
    first, second = out["differences"]
    assert (first["sentence"], first["line_a"]) == (1, 1)
    assert [(e["text"], e["label"]) for e in first["only_a"]] == [("Paris", "LOC")]
    assert [(e["text"], e["label"]) for e in first["only_b"]] == [("Paris", "ORG")]
    assert [(e["text"], e["label"]) for e in second["only_a"]] == [("Mary", "PER")] and second[
        "only_b"
    ] == []


def test_table_lists_the_differing_sentences(files, capsys):
    a, b = files
    assert main(["agreement", str(a), str(b), "--list", "1"]) == 0
    text = capsys.readouterr().out
    assert "Cohen's kappa: 0.660" in text
    assert "2 sentences differ (first 1):" in text
    assert "A only: [Paris]LOC" in text and "B only: [Paris]ORG" in text
    assert "Mary" not in text.split("differ")[1]


def test_identical_and_undefined():
    from nerstudio.corpus.model import Sentence, Span

    s = [Sentence(["Linz", "is", "big"], [Span(0, 1, "LOC")])]
    same = agreement(s, s)
    assert (
        same.kappa == pytest.approx(1.0)
        and same.spans.f1 == pytest.approx(100.0)
        and not same.differences
    )
    empty = [Sentence(["no", "names"])]
    assert agreement(empty, empty).kappa is None  # both annotators say O throughout: p_e = 1
    assert cohen_kappa(Counter()) is None


def test_misaligned_files_name_the_first_differing_line(tmp_path, capsys):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(A, encoding="utf-8")
    b.write_text(A.replace("hired O", "Hired O"), encoding="utf-8")
    assert main(["agreement", str(a), str(b)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert f"{b}:8:" in err[0] and f"{a}:8" in err[0] and "'Hired'" in err[0]
    b.write_text(A + "\nextra O\n", encoding="utf-8")
    assert main(["agreement", str(a), str(b)]) == 1
    assert "more sentences" in capsys.readouterr().err


class _Ctx:
    """A job's context that records its progress and cancels when told."""

    def __init__(self, cancel=False):
        self.reports, self.cancel = [], cancel

    def check(self):
        if self.cancel:
            from nerstudio.errors import Cancelled

            raise Cancelled("cancelled")

    def progress(self, message="", done=0, total=0):
        self.reports.append((message, done, total))


def test_the_windows_job_compares_two_files_and_keeps_the_differing_spans(files):
    from nerstudio.agreement import agreement_of_files
    from nerstudio.corpus.formats import read_corpus
    from nerstudio.corpus.model import Span

    a, b = map(str, files)
    ctx = _Ctx()
    run = agreement_of_files(ctx, a, b)
    want = agreement(read_corpus(a).sentences, read_corpus(b).sentences)
    assert run.result.spans.overall.f1 == pytest.approx(want.spans.overall.f1)
    assert not run.a_is_corpus and (run.path_a, run.path_b) == (a, b)
    assert run.details == {
        1: ([Span(0, 2, "PER"), Span(4, 5, "LOC")], [Span(0, 2, "PER"), Span(4, 5, "ORG")]),
        2: ([Span(0, 1, "ORG"), Span(2, 3, "PER")], [Span(0, 1, "ORG")]),
    }
    mb = [r for r in ctx.reports if r[0].endswith("MB read")]
    assert mb and mb[-1][1:] == (1000, 1000)
    # A as sentences (the open corpus, with its edits): only B is read
    edited = read_corpus(b).sentences
    same = agreement_of_files(_Ctx(), a, b, edited)
    assert same.a_is_corpus and same.details == {} and same.result.spans.overall.f1 == 100


def test_the_windows_job_says_in_one_line_which_file_is_missing_and_can_be_cancelled(
    files, tmp_path
):
    from nerstudio.agreement import agreement_of_files
    from nerstudio.errors import Cancelled, NerstudioError

    a, _b = map(str, files)
    with pytest.raises(NerstudioError) as err:
        agreement_of_files(_Ctx(), a, str(tmp_path / "absent.txt"))
    assert "absent.txt" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(Cancelled):
        agreement_of_files(_Ctx(cancel=True), a, a)
