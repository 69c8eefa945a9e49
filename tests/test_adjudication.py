"""Adjudication (issue 23, part 2) on a tiny example whose figures are worked out by hand.

Three sentences, annotators A and B (C for the majority):

    S1 John lives in New York     A: [John]PER [New York]LOC   B: [John]PER [New York]ORG
    S2 Acme hired Mary            A: [Acme]ORG                 B: [Acme]ORG [Mary]PER
    S3 Paris Hilton               A: [Paris Hilton]PER         B: [Paris]LOC

Regions: John, New York, Acme, Mary, Paris Hilton (Paris overlaps it): 5; agreed John and Acme (2);
disagreements New York, Mary, Paris Hilton (3).

Agreement before: A has 4 entities, B 5, 2 match: P = 2/5, R = 2/4, F1 = 2·2/(4+5) = 44.44 %.
Kappa on the 10 tokens' IOB2 tags: same tag on John, lives, in, Acme, hired → p_o = 5/10.
A's tags: B-PER 2, O 4, B-LOC 1, I-LOC 1, B-ORG 1, I-PER 1; B's: B-PER 2, O 4, B-ORG 2, I-ORG 1,
B-LOC 1 → p_e = (2·2 + 4·4 + 1·1 + 1·2)/100 = 0.23; κ = (0.5 − 0.23)/(1 − 0.23) = 0.350649.

Decisions: take A on New York, take B on Mary, skip Paris Hilton → merged: John PER, New York LOC,
Acme ORG, Mary PER (4 entities). A against it: 3 of A's 4 and of the merged 4 match → F1 75 %;
B: John, Acme, Mary match of 5 and 4 → F1 = 2·3/9 = 66.67 %.
"""

from __future__ import annotations

import json

import pytest
from helpers.adjudication_example import TEXT, A, B, C, write_conll

from nerstudio.adjudication import Adjudication, regions_of
from nerstudio.cli import main
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.errors import FormatError


def _corpus(tmp_path, name, spans):
    return read_corpus(write_conll(tmp_path / f"{name}.conll", spans)).sentences


def test_regions_figures_and_decisions_by_hand(tmp_path):
    adj = Adjudication([_corpus(tmp_path, "a", A), _corpus(tmp_path, "b", B)], ["A", "B"])
    assert [(r.k, r.start, r.end, r.agreed) for r in adj.regions] == [
        (0, 0, 1, True),
        (0, 3, 5, False),
        (1, 0, 1, True),
        (1, 2, 3, False),
        (2, 0, 2, False),
    ]
    assert adj.regions[4].versions == ((Span(0, 2, "PER"),), (Span(0, 1, "LOC"),))
    assert adj.regions[3].versions == ((), (Span(2, 3, "PER"),))
    rep = adj.report()
    ((_a, _b, f1, kappa),) = rep.pairs
    assert f1 == pytest.approx(100 * 4 / 9) and kappa == pytest.approx(0.27 / 0.77)
    assert rep.counts == {"agreed": 2, "disagreements": 3, "take": 0, "edit": 0, "undecided": 3}
    assert adj.merged() == [
        [Span(0, 1, "PER")],
        [Span(0, 1, "ORG")],
        [],
    ]  # nothing decided: agreements only
    d_ny, d_mary, d_paris = adj.disagreements
    adj.take(d_ny, 0)
    adj.take(d_mary, 1)
    adj.skip(d_paris)
    assert adj.merged() == [
        [Span(0, 1, "PER"), Span(3, 5, "LOC")],
        [Span(0, 1, "ORG"), Span(2, 3, "PER")],
        [],
    ]
    rep = adj.report()
    assert rep.counts == {"agreed": 2, "disagreements": 3, "take": 2, "edit": 0, "undecided": 1}
    assert rep.taken == {"A": 1, "B": 1} and rep.entities == 4
    assert dict(rep.vs_merged) == pytest.approx({"A": 75.0, "B": 100 * 6 / 9})
    assert rep.rows[2]["decision"] == "undecided" and rep.rows[2]["versions"] == {
        "A": "[Paris Hilton]PER",
        "B": "[Paris]LOC",
    }
    text = rep.text()
    assert "A–B span F1 44.44, kappa 0.351" in text and "undecided 1" in text
    # an edit by hand replaces the sentence, and its disagreements count as edited
    adj.edit(2, [Span(0, 1, "PER"), Span(1, 2, "PER")])
    assert adj.merged()[2] == [Span(0, 1, "PER"), Span(1, 2, "PER")]
    assert adj.report().counts["edit"] == 1 and adj.report().counts["undecided"] == 0


def test_majority_and_preference(tmp_path):
    three = [_corpus(tmp_path, n, s) for n, s in (("a", A), ("b", B), ("c", C))]
    adj = Adjudication(three, ["A", "B", "C"])
    assert adj.resolve(majority=True) == 3  # C sides with A on S1 and S3, with B on S2
    assert adj.merged() == [
        [Span(0, 1, "PER"), Span(3, 5, "LOC")],
        [Span(0, 1, "ORG"), Span(2, 3, "PER")],
        [Span(0, 2, "PER")],
    ]
    assert {r["decision"] for r in adj.report().rows} == {"A (majority)", "B (majority)"}
    two = Adjudication(three[:2], ["A", "B"])
    assert two.resolve(majority=True) == 0  # one against one: no majority
    assert two.resolve(majority=True, prefer=1) == 3
    assert two.merged() == [
        [Span(0, 1, "PER"), Span(3, 5, "ORG")],
        [Span(0, 1, "ORG"), Span(2, 3, "PER")],
        [Span(0, 1, "LOC")],
    ]


def test_regions_join_overlapping_entities():
    rs = regions_of(0, [[Span(0, 2, "X"), Span(5, 6, "Y")], [Span(1, 4, "X")], [Span(3, 5, "Z")]])
    # a chain of overlaps is one region; touching is not overlapping
    assert [(r.start, r.end) for r in rs] == [(0, 5), (5, 6)]
    rs = regions_of(0, [[Span(0, 2, "X")], [Span(2, 3, "X")]])
    assert [(r.start, r.end, r.agreed) for r in rs] == [(0, 2, False), (2, 3, False)]


def test_different_tokens_are_refused_naming_the_line(tmp_path):
    a = write_conll(tmp_path / "a.conll", A)
    other = [list(w) for w in TEXT]
    other[1][2] = "Marie"
    b = write_conll(tmp_path / "b.conll", B, other)
    with pytest.raises(FormatError) as e:
        Adjudication([read_corpus(a).sentences, read_corpus(b).sentences], ["A", "B"], [a, b])
    assert f"{b}:9" in str(e.value) and f"{a}:9" in str(e.value) and "'Marie'" in str(e.value)
    short = write_conll(tmp_path / "c.conll", B[:2], TEXT[:2])
    with pytest.raises(FormatError, match="more sentences"):
        Adjudication(
            [read_corpus(a).sentences, read_corpus(short).sentences], ["A", "B"], [a, short]
        )


def test_command_line(tmp_path, capsys):
    a, b, c = (write_conll(tmp_path / f"{n}.conll", s) for n, s in (("a", A), ("b", B), ("c", C)))
    out = tmp_path / "merged.jsonl"
    report = tmp_path / "report.json"
    assert main(["adjudicate", a, b, c, "-o", str(out), "--majority", "--report", str(report)]) == 0
    merged = read_corpus(str(out))
    assert merged.format == "jsonl"
    assert [sorted(s.spans) for s in merged.sentences] == [
        [Span(0, 1, "PER"), Span(3, 5, "LOC")],
        [Span(0, 1, "ORG"), Span(2, 3, "PER")],
        [Span(0, 2, "PER")],
    ]
    rep = json.loads(report.read_text())
    assert rep["regions"]["disagreements"] == 3 and rep["regions"]["undecided"] == 0
    assert rep["agreement_before"][0]["kappa"] == pytest.approx(0.27 / 0.77)
    printed = capsys.readouterr()
    assert "agreement before" in printed.out and "wrote" in printed.err
    # two files, A preferred; no policy at all is an error (the application walks them one by one)
    out2 = tmp_path / "merged.conll"
    assert main(["adjudicate", a, b, "-o", str(out2), "--prefer", "B"]) == 0
    assert [sorted(s.spans) for s in read_corpus(str(out2)).sentences][2] == [Span(0, 1, "LOC")]
    assert main(["adjudicate", a, b, "-o", str(out2)]) == 1
    assert "--majority" in capsys.readouterr().err
    assert main(["adjudicate", a, b, "-o", str(out2), "--prefer", "D"]) == 1
    assert "no annotator D" in capsys.readouterr().err
    # different tokens: one line naming the file and line, exit 1
    other = [list(w) for w in TEXT]
    other[0][0] = "Jon"
    bad = write_conll(tmp_path / "bad.conll", B, other)
    assert main(["adjudicate", a, bad, "-o", str(out2), "--majority"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}:1" in err


def test_snapshot_keeps_the_decisions_of_its_moment(tmp_path):
    adj = Adjudication([_corpus(tmp_path, "a", A), _corpus(tmp_path, "b", B)], ["A", "B"])
    adj.take(adj.disagreements[0], 0)
    snap = adj.snapshot()
    adj.take(adj.disagreements[0], 1)
    adj.edit(2, [])
    assert snap.merged()[0] == [Span(0, 1, "PER"), Span(3, 5, "LOC")] and snap.merged()[2] == []
    assert snap.report().counts["take"] == 1 and adj.report().counts == {
        "agreed": 2,
        "disagreements": 3,
        "take": 1,
        "edit": 1,
        "undecided": 1,
    }


class _Ctx:
    """A job's context that records its progress (the window's worker gives one)."""

    def __init__(self):
        self.reports = []

    def check(self):
        pass

    def progress(self, message="", done=0, total=0):
        self.reports.append((message, done, total))


def test_the_windows_jobs_read_align_and_write_the_merged_file_and_report(tmp_path):
    from nerstudio.adjudication import read_and_align, report_name, write_merged

    a, b, c = (write_conll(tmp_path / f"{n}.conll", s) for n, s in (("a", A), ("b", B), ("c", C)))
    ctx = _Ctx()
    adj, base = read_and_align(ctx, [a, b, c])
    assert adj.names == ["A", "B", "C"] and base.path == a
    assert [m for m, _d, _n in ctx.reports] == [
        "reading a.conll",
        "reading b.conll",
        "reading c.conll",
        "comparing the annotations",
    ]
    adj.resolve(majority=True)
    for s, spans in zip(base.sentences, adj.merged()):
        s.spans = spans
    out = str(tmp_path / "merged.jsonl")
    rep = write_merged(_Ctx(), adj.snapshot(), base, out, "jsonl", report_name(out))
    assert [sorted(s.spans) for s in read_corpus(out).sentences] == [
        [Span(0, 1, "PER"), Span(3, 5, "LOC")],
        [Span(0, 1, "ORG"), Span(2, 3, "PER")],
        [Span(0, 2, "PER")],
    ]
    # the report is the command line's: the same figures, files and output
    cli_report = tmp_path / "cli.json"
    cli_out = tmp_path / "cli.jsonl"
    assert (
        main(["adjudicate", a, b, c, "-o", str(cli_out), "--majority", "--report", str(cli_report)])
        == 0
    )
    mine = json.loads((tmp_path / "merged.jsonl.report.json").read_text(encoding="utf-8"))
    theirs = json.loads(cli_report.read_text(encoding="utf-8"))
    assert mine["files"] == theirs["files"] == {"A": a, "B": b, "C": c} and mine["output"] == out
    assert {k: v for k, v in mine.items() if k != "output"} == {
        k: v for k, v in theirs.items() if k != "output"
    }
    assert rep.counts == mine["regions"]


def test_a_bug_while_writing_the_merged_file_is_not_reported_as_the_users_error(
    tmp_path, monkeypatch
):
    """A file that cannot be written is the user's to fix; a bug in nerstudio is not, and
    reaches the bug dialog as itself."""
    from nerstudio import adjudication
    from nerstudio.adjudication import read_and_align, report_name, write_merged
    from nerstudio.errors import NerstudioError

    a, b = (write_conll(tmp_path / f"{n}.conll", s) for n, s in (("a", A), ("b", B)))
    adj, base = read_and_align(_Ctx(), [a, b])
    out = str(tmp_path / "merged.jsonl")

    def planted(*args, **kw):
        raise ValueError("a planted bug")

    monkeypatch.setattr(adjudication, "write_report", planted)
    with pytest.raises(ValueError, match="planted") as info:
        write_merged(_Ctx(), adj.snapshot(), base, out, "jsonl", report_name(out))
    assert not isinstance(info.value, NerstudioError)
    with pytest.raises(NerstudioError, match="merged"):
        write_merged(
            _Ctx(), adj.snapshot(), base, str(tmp_path / "no" / "merged.jsonl"), "jsonl", out
        )
