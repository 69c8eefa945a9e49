"""Prodigy JSONL (ner_manual / ner tasks): read, detected, written back importable, round trips,
the rejected and repeated tasks reported, bad tasks one file:line error (issue 16).

The fixture follows the task shape of Prodigy's documentation (annotation interfaces, ner_manual:
tokens as objects with text/start/end/id/ws, spans with token_start/token_end inclusive), in our
own words and texts."""

from __future__ import annotations

import json
import re

import pytest

from nerstudio.cli import main
from nerstudio.corpus import read_corpus
from nerstudio.corpus.detect import sniff_format
from nerstudio.corpus.formats import Losses, write_corpus
from nerstudio.corpus.model import Span
from nerstudio.errors import FormatError


def _tokens(text, words):
    out, pos = [], 0
    for i, w in enumerate(words):
        a = text.index(w, pos)
        pos = a + len(w)
        out.append(
            {"text": w, "start": a, "end": pos, "id": i, "ws": pos < len(text) and text[pos] == " "}
        )
    return out


def _task(text, words, spans, answer="accept", ih=1, th=1, **extra):
    toks = _tokens(text, words)
    sp = []
    for ts, te, lab in spans:
        sp.append(
            {
                "start": toks[ts]["start"],
                "end": toks[te]["end"],
                "token_start": ts,
                "token_end": te,
                "label": lab,
            }
        )
    return {
        "text": text,
        "tokens": toks,
        "spans": sp,
        "_input_hash": ih,
        "_task_hash": th,
        "_view_id": "ner_manual",
        "answer": answer,
        **extra,
    }


TASKS = [
    _task(
        "Grace Hopper joined the Navy in New York.",
        ["Grace", "Hopper", "joined", "the", "Navy", "in", "New", "York", "."],
        [(0, 1, "PERSON"), (4, 4, "ORG"), (6, 7, "GPE")],
        ih=10,
        th=20,
        meta={"source": "bio"},
    ),
    _task("Nothing to see.", ["Nothing", "to", "see", "."], [], answer="reject", ih=11, th=21),
    _task("Skip me please", ["Skip", "me", "please"], [], answer="ignore", ih=12, th=22),
    _task(
        "Grace Hopper joined the Navy in New York.",
        ["Grace", "Hopper", "joined", "the", "Navy", "in", "New", "York", "."],
        [(0, 1, "PERSON")],
        ih=10,
        th=23,
    ),
    {
        "text": "Ada  Lovelace wrote notes",
        "spans": [{"start": 0, "end": 13, "label": "PERSON"}],
        "_input_hash": 13,
        "_task_hash": 24,
        "answer": "accept",
    },
]


def _write(tmp_path, tasks, name="data.jsonl"):
    p = tmp_path / name
    p.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return p


def test_read_accepted_tasks_and_report_the_rest(tmp_path):
    c = read_corpus(_write(tmp_path, TASKS))
    assert c.format == "prodigy"
    assert [list(s.words) for s in c.sentences] == [
        ["Grace", "Hopper", "joined", "the", "Navy", "in", "New", "York", "."],
        ["Ada", "Lovelace", "wrote", "notes"],
    ]
    assert [s.spans for s in c.sentences] == [
        [Span(0, 2, "PERSON"), Span(4, 5, "ORG"), Span(6, 8, "GPE")],
        [Span(0, 2, "PERSON")],
    ]
    assert all(re.search(r", first at line \d+$", n) for n in c.notes)
    assert [re.sub(r", first at line \d+$", "", n) for n in c.notes] == [
        "only accepted tasks read: 1 rejected and 1 ignored task(s) skipped",
        "1 task(s) with the _input_hash of an earlier accepted task skipped "
        "(the first annotation of each text is read)",
    ]
    # the running text and the token offsets are Prodigy's own
    s = c.sentences[1]
    assert s.text() == "Ada  Lovelace wrote notes"
    text, offs = s.char_offsets()
    assert [text[a:b] for a, b in offs] == list(s.words)


def test_detection_from_content(tmp_path):
    assert sniff_format(_write(tmp_path, TASKS, "any.name")) == "prodigy"
    plain = tmp_path / "own.jsonl"  # nerstudio's own JSONL stays jsonl
    plain.write_text(
        '{"text": "EU rejects it", "spans": [{"start": 0, "end": 2, "label": "ORG"}]}\n'
    )
    assert sniff_format(plain) == "jsonl"


def test_round_trip_keeps_tokens_spans_and_fields(tmp_path):
    c = read_corpus(_write(tmp_path, TASKS))
    out = tmp_path / "out.jsonl"
    write_corpus(c, out)
    again = read_corpus(out)
    assert again.format == "prodigy" and again.notes == []
    assert [s.words for s in again.sentences] == [s.words for s in c.sentences]
    assert [s.spans for s in again.sentences] == [s.spans for s in c.sentences]
    assert [s.char_offsets() for s in again.sentences] == [s.char_offsets() for s in c.sentences]
    first = json.loads(out.read_text().splitlines()[0])
    assert (
        first["meta"] == {"source": "bio"}
        and first["_task_hash"] == 20
        and first["answer"] == "accept"
    )
    assert first["spans"][2] == {
        "start": 32,
        "end": 40,
        "token_start": 6,
        "token_end": 7,
        "label": "GPE",
    }
    assert first["tokens"][1] == {"text": "Hopper", "start": 6, "end": 12, "id": 1, "ws": True}
    # an edited task loses its stale _task_hash (Prodigy recomputes it), keeps its input hash
    c.sentences[0].spans = [Span(0, 2, "PERSON")]
    write_corpus(c, out)
    first = json.loads(out.read_text().splitlines()[0])
    assert "_task_hash" not in first and first["_input_hash"] == 10


def test_conll_to_prodigy_and_back(tmp_path):
    src = tmp_path / "c.conll"
    src.write_text(
        "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\n"
        "-DOCSTART- -X- -X- O\n\nPeter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n"
    )
    c = read_corpus(src)
    out = tmp_path / "p.jsonl"
    losses = Losses()
    write_corpus(c, out, "prodigy", losses=losses)
    assert losses.messages() == [
        "extra columns of 2 sentence(s) not kept: prodigy has fewer columns, first at line 3"
    ]
    tasks = [json.loads(x) for x in out.read_text().splitlines()]
    assert [t["meta"]["doc_id"] for t in tasks] == ["1", "2"]  # documents kept
    again = read_corpus(out)
    assert len(again.documents) == 2
    assert [s.words for s in again.sentences] == [s.words for s in c.sentences]
    assert [s.spans for s in again.sentences] == [s.spans for s in c.sentences]


@pytest.mark.parametrize(
    "bad, line, message",
    [
        ('{"text": "a b", "answer": "maybe"}', 2, '"answer" must be'),
        (
            '{"text": "a b", "tokens": [{"text": "a", "start": 0, "end": 2}], "answer": "accept"}',
            2,
            "does not match",
        ),
        (
            '{"text": "a b", "tokens": [{"text": "a", "start": 0, "end": 1}, {"text": "b", "start": 2, "end": 3}], '
            '"spans": [{"start": 0, "end": 3, "token_start": 0, "token_end": 0, "label": "X"}]}',
            2,
            "cover",
        ),
        (
            '{"text": "ab", "spans": [{"start": 0, "end": 1, "label": "X"}, {"start": 0, "end": 2, "label": "Y"}],'
            ' "_input_hash": 5}',
            2,
            "overlapping",
        ),
        ('{"text": "a b", "_task_hash": 1, ', 2, "invalid JSON"),
    ],
)
def test_bad_task_is_one_error_with_its_line(tmp_path, capsys, bad, line, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps(TASKS[0]) + "\n" + bad + "\n")
    with pytest.raises(FormatError) as err:
        read_corpus(p)
    assert err.value.line == line and message in err.value.message
    assert main(["stats", str(p)]) == 1
    assert f"bad.jsonl:{line}:" in capsys.readouterr().err


def test_cli_stats_and_convert(tmp_path, capsys):
    p = _write(tmp_path, TASKS)
    assert main(["stats", str(p), "--json"]) == 0
    out, err = capsys.readouterr()
    st = json.loads(out)
    assert (st["format"], st["sentences"], st["entities"]) == ("prodigy", 2, 4)
    assert "1 rejected and 1 ignored" in err and st["notes"][0].startswith("only accepted")
    assert main(["convert", str(p), str(tmp_path / "out.conll")]) == 0
    err = capsys.readouterr().err
    assert "note:" in err and "rejected" in err
    assert (
        main(
            [
                "convert",
                str(tmp_path / "out.conll"),
                str(tmp_path / "back.jsonl"),
                "--to",
                "prodigy",
            ]
        )
        == 0
    )
    assert read_corpus(tmp_path / "back.jsonl").format == "prodigy"
