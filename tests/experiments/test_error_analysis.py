"""Error analysis (issue 24, point 8): F by entity length and sentence length, errors by kind,
two systems side by side — every number of a tiny example counted by hand; the CLI command."""

from __future__ import annotations

import json

import pytest

from nerstudio.corpus.model import Span
from nerstudio.evaluation import evaluate_spans
from nerstudio.experiments.breakdown import breakdown, breakdown_lines
from nerstudio.experiments.error_analysis import (
    analysis_lines,
    bucket_prf,
    classify,
    error_kinds,
    sentences_of_kind,
)

S1 = ["Anna", "Lee", "met", "Bob", "Smith"]  # 5 words
S2 = [
    "Lyon",
    "and",
    "Acme",
    "Steel",
    "Works",
    "said",
    "the",
    "Euro",
    "rose",
    "on",
    "Monday",
    ".",
]  # 12 words
WORDS = [S1, S2]
GOLD = [
    [Span(0, 2, "PER"), Span(3, 5, "PER")],
    [Span(0, 1, "LOC"), Span(2, 5, "ORG"), Span(7, 8, "MISC")],
]
PRED = [
    [Span(0, 2, "PER"), Span(3, 4, "PER")],  # correct; boundary (Bob for Bob Smith)
    [Span(0, 1, "ORG"), Span(2, 4, "LOC"), Span(10, 11, "PER")],
]  # type; boundary+type; Euro missed; spurious


def test_each_entity_gets_its_kind_by_hand():
    assert classify(GOLD[0], PRED[0]) == [
        ("correct", Span(0, 2, "PER"), Span(0, 2, "PER")),
        ("boundary", Span(3, 5, "PER"), Span(3, 4, "PER")),
    ]
    assert classify(GOLD[1], PRED[1]) == [
        ("type", Span(0, 1, "LOC"), Span(0, 1, "ORG")),
        ("boundary+type", Span(2, 5, "ORG"), Span(2, 4, "LOC")),
        ("missed", Span(7, 8, "MISC"), None),
        ("spurious", None, Span(10, 11, "PER")),
    ]
    kinds = error_kinds(GOLD, PRED)
    assert kinds == {
        "correct": 1,
        "type": 1,
        "boundary": 1,
        "boundary+type": 1,
        "missed": 1,
        "spurious": 1,
    }
    assert sum(v for k, v in kinds.items() if k != "spurious") == sum(map(len, GOLD))
    assert sentences_of_kind(GOLD, PRED, "missed") == [1] and sentences_of_kind(
        GOLD, PRED, "boundary"
    ) == [0]


def test_an_exact_proposal_wins_over_an_overlapping_one():
    g = [Span(0, 2, "PER")]
    assert classify(g, [Span(0, 1, "PER"), Span(0, 2, "ORG")])[0][0] == "type"
    assert classify(g, [Span(0, 1, "ORG"), Span(1, 2, "PER")])[0] == (
        "boundary",
        g[0],
        Span(1, 2, "PER"),
    )


def test_buckets_by_hand():
    ent = bucket_prf(WORDS, GOLD, PRED, "entity_length")
    # gold lengths 2, 2 | 1, 3, 1; proposed 2, 1 | 1, 2, 1; correct: Anna Lee (2 words)
    assert (ent["1 word"]["gold"], ent["1 word"]["proposed"], ent["1 word"]["correct"]) == (2, 3, 0)
    assert (ent["2 words"]["gold"], ent["2 words"]["proposed"], ent["2 words"]["correct"]) == (
        2,
        2,
        1,
    )
    assert ent["2 words"]["f1"] == pytest.approx(50.0)
    assert (ent["3 words"]["gold"], ent["3 words"]["proposed"]) == (1, 0) and ent["4+ words"][
        "gold"
    ] == 0
    sent = bucket_prf(WORDS, GOLD, PRED, "sentence_length")
    assert (
        sent["1–10 words"]["gold"],
        sent["1–10 words"]["proposed"],
        sent["1–10 words"]["correct"],
    ) == (2, 2, 1)
    assert (sent["11–20"]["gold"], sent["11–20"]["proposed"], sent["11–20"]["correct"]) == (3, 3, 0)
    ev = evaluate_spans(GOLD, PRED)
    for table in (ent, sent):  # the buckets partition the corpus's counts
        for k in ("gold", "proposed", "correct"):
            assert sum(b[k] for b in table.values()) == getattr(ev.overall, k)


def test_two_systems_side_by_side():
    a = breakdown(WORDS, GOLD, PRED, {("Anna", "Lee")})
    b = breakdown(WORDS, GOLD, GOLD, {("Anna", "Lee")})
    text = "\n".join(analysis_lines({"tagger": a, "gold copy": b}))
    assert "| 2 words | 50.00 | 100.00 | 2 |" in text
    assert "| boundary+type | 1 | 0 |" in text and "| spurious | 1 | 0 |" in text
    assert "| seen | 100.00 | 100.00 | 1 |" in text
    report = "\n".join(breakdown_lines([{"name": "tagger", "test_breakdown": a}]))
    assert "unseen F" in report and "F by entity length" in report and "| missed | 1 |" in report


def _write(path, words_tags):
    path.write_text(
        "\n\n".join("\n".join(f"{w} {t}" for w, t in s) for s in words_tags) + "\n",
        encoding="utf-8",
    )


def _tags(words, spans):
    tags = ["O"] * len(words)
    for sp in spans:
        tags[sp.start] = f"B-{sp.label}"
        for i in range(sp.start + 1, sp.end):
            tags[i] = f"I-{sp.label}"
    return list(zip(words, tags))


def test_cli_errors(tmp_path, capsys):
    from nerstudio.cli import main

    gold, sys1, train = tmp_path / "gold.conll", tmp_path / "sys.conll", tmp_path / "train.conll"
    _write(gold, [_tags(w, g) for w, g in zip(WORDS, GOLD)])
    _write(sys1, [_tags(w, p) for w, p in zip(WORDS, PRED)])
    _write(train, [_tags(S1, GOLD[0])])
    assert main(["errors", str(gold), str(sys1), str(gold), "--train", str(train)]) == 0
    out = capsys.readouterr().out
    assert "| missed | 1 | 0 |" in out and "| 2 words | 50.00 | 100.00 | 2 |" in out
    # seen in train.conll: gold Anna Lee and Bob Smith; proposed Anna Lee (Bob alone is unseen), correct:
    # P 1/1, R 1/2, F 66.67
    assert "| seen | 66.67 | 100.00 | 2 |" in out
    assert main(["errors", str(gold), str(sys1), "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert (
        js["systems"]["sys.conll"]["errors"]["type"] == 1
        and "seen" not in js["systems"]["sys.conll"]
    )
    bad = tmp_path / "bad.conll"
    _write(bad, [_tags(S1, [])])
    assert main(["errors", str(gold), str(bad)]) == 1
    assert "bad.conll" in capsys.readouterr().err


def test_error_sentences_by_hand():
    from nerstudio.experiments.error_analysis import error_sentences

    cells = error_sentences(WORDS, GOLD, PRED, {("Anna", "Lee"), ("Bob", "Smith")})
    # sentence 0: Bob Smith (2 words, seen) missed, Bob (1 word, unseen) proposed; sentence 1: all wrong
    assert cells["entity_length:1 word"] == [0, 1] and cells["entity_length:2 words"] == [0, 1]
    assert cells["entity_length:3 words"] == [1] and "entity_length:4+ words" not in cells
    assert cells["sentence_length:1–10 words"] == [0] and cells["sentence_length:11–20"] == [1]
    assert cells["seen:seen"] == [0] and cells["seen:unseen"] == [0, 1]
    assert (
        cells["errors:missed"] == [1]
        and cells["errors:boundary"] == [0]
        and "errors:correct" not in cells
    )
