"""doccano JSONL in both modes: label triples and relation mode (entities with
start_offset/end_offset, relations). Read, detected, written back in the mode read, round trips,
relations reported as not kept, bad records one file:line error (issue 16).

Fixtures follow the record shapes of doccano's documentation for sequence labelling import and
export (``{"text", "label": [[start, end, label]]}``; ``{"id", "text", "entities": [{"id",
"label", "start_offset", "end_offset"}], "relations": [{"id", "from_id", "to_id", "type"}]}``),
written in our own words."""

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

LABEL = (
    '{"id": 7, "text": "Marie Curie moved to Paris.", "label": [[0, 11, "PER"], [21, 26, "LOC"]], "Comments": []}\n'
    '{"id": 8, "text": "The Sorbonne hired her", "label": [[4, 12, "ORG"]], "Comments": ["checked"]}\n'
)
REL = (
    '{"id": 1, "text": "Toyota opened a plant in Kentucky.", "entities": ['
    '{"id": 11, "label": "ORG", "start_offset": 0, "end_offset": 6}, '
    '{"id": 12, "label": "LOC", "start_offset": 25, "end_offset": 33}], '
    '"relations": [{"id": 3, "from_id": 11, "to_id": 12, "type": "located_in"}], "Comments": []}\n'
    '{"id": 2, "text": "Nobody here", "entities": [], "relations": []}\n'
)


def _file(tmp_path, text, name="data.jsonl"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_label_mode_read(tmp_path):
    c = read_corpus(_file(tmp_path, LABEL))
    assert c.format == "doccano" and c.notes == []
    assert [list(s.words) for s in c.sentences] == [
        ["Marie", "Curie", "moved", "to", "Paris", "."],
        ["The", "Sorbonne", "hired", "her"],
    ]
    assert [s.spans for s in c.sentences] == [
        [Span(0, 2, "PER"), Span(4, 5, "LOC")],
        [Span(1, 2, "ORG")],
    ]


def test_relation_mode_read_reports_relations(tmp_path):
    c = read_corpus(_file(tmp_path, REL))
    assert c.format == "doccano-rel"
    assert c.sentences[0].spans == [Span(0, 1, "ORG"), Span(5, 6, "LOC")]
    assert all(re.search(r", first at line \d+$", n) for n in c.notes)
    assert [re.sub(r", first at line \d+$", "", n) for n in c.notes] == [
        "1 relation(s) in 1 record(s) not kept: nerstudio holds entities only"
    ]


def test_detection(tmp_path):
    assert sniff_format(_file(tmp_path, LABEL, "a.txt")) == "doccano"
    assert sniff_format(_file(tmp_path, REL, "b.txt")) == "doccano-rel"
    # nerstudio's own JSONL (spans, or a file mixing label triples with spans) stays jsonl
    own = '{"text": "EU rejects it", "label": [[0, 2, "ORG"]]}\n{"text": "EU", "spans": [[0, 2, "ORG"]]}\n'
    assert sniff_format(_file(tmp_path, own, "c.jsonl")) == "jsonl"
    assert sniff_format(_file(tmp_path, '{"text": "EU", "spans": []}\n', "d.jsonl")) == "jsonl"


@pytest.mark.parametrize("text, fmt", [(LABEL, "doccano"), (REL, "doccano-rel")])
def test_round_trip_in_the_mode_read(tmp_path, text, fmt):
    c = read_corpus(_file(tmp_path, text))
    out = tmp_path / "out.jsonl"
    write_corpus(c, out)
    again = read_corpus(out)
    assert again.format == fmt
    assert [s.words for s in again.sentences] == [s.words for s in c.sentences]
    assert [s.spans for s in again.sentences] == [s.spans for s in c.sentences]
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    if fmt == "doccano":
        assert recs[1] == {
            "id": 8,
            "text": "The Sorbonne hired her",
            "label": [[4, 12, "ORG"]],
            "Comments": ["checked"],
        }
    else:
        assert recs[0]["relations"] == [] and recs[0]["id"] == 1
        assert [(e["label"], e["start_offset"], e["end_offset"]) for e in recs[0]["entities"]] == [
            ("ORG", 0, 6),
            ("LOC", 25, 33),
        ]


def test_edit_and_switch_modes(tmp_path):
    c = read_corpus(_file(tmp_path, LABEL))
    c.sentences[0].spans = [Span(4, 5, "GPE")]
    out = tmp_path / "rel.jsonl"
    write_corpus(c, out, "doccano-rel")
    again = read_corpus(out)
    assert again.format == "doccano-rel" and again.sentences[0].spans == [Span(4, 5, "GPE")]
    write_corpus(again, tmp_path / "label.jsonl", "doccano")
    rec = json.loads((tmp_path / "label.jsonl").read_text().splitlines()[0])
    assert rec["label"] == [[21, 26, "GPE"]] and rec["text"] == "Marie Curie moved to Paris."


def test_plain_text_offsets_survive(tmp_path):
    """A corpus with source text (e.g. read from plain text) keeps its spacing in doccano."""
    from nerstudio.corpus.model import Corpus, Document, Sentence

    text = "Dr.  Who  left."
    s = Sentence(
        ["Dr.", "Who", "left", "."],
        [Span(1, 2, "PER")],
        source=text,
        offsets=[(0, 3), (5, 8), (10, 14), (14, 15)],
    )
    c = Corpus([Document([s], text=text)], format="jsonl")
    write_corpus(c, tmp_path / "d.jsonl", "doccano")
    rec = json.loads((tmp_path / "d.jsonl").read_text())
    assert rec["text"] == text and rec["label"] == [[5, 8, "PER"]]


def test_documents_and_columns(tmp_path):
    src = _file(tmp_path, "EU NNP B-ORG\n\n-DOCSTART- -X- O\nPeter NNP B-PER\n", "c.conll")
    c = read_corpus(src)
    losses = Losses()
    write_corpus(c, tmp_path / "d.jsonl", "doccano", losses=losses)
    assert losses.messages() == [
        "extra columns of 2 sentence(s) not kept: doccano has fewer columns, first at line 1"
    ]
    again = read_corpus(tmp_path / "d.jsonl")
    assert len(again.documents) == 2 and [s.spans for s in again.sentences] == [
        s.spans for s in c.sentences
    ]


@pytest.mark.parametrize(
    "text, bad, line, message",
    [
        (LABEL, '{"text": "x y", "label": [[0, 1]]}', 3, "triples"),
        (LABEL, '{"text": "x y", "label": [[0, 9, "X"]]}', 3, "outside the text"),
        (
            LABEL,
            '{"text": "x y", "spans": []}',
            3,
            "mixes",
        ),  # beyond what detection sees: forced below
        (LABEL, '{"label": [[0, 1, "X"]]}', 3, '"text" string'),
        (
            REL,
            '{"text": "x y", "entities": [{"id": 1, "label": "X", "start_offset": 0}], "relations": []}',
            3,
            "start_offset",
        ),
        (
            REL,
            '{"text": "x y", "entities": [{"id": 1, "label": "X", "start_offset": 0, "end_offset": 1}, '
            '{"id": 2, "label": "Y", "start_offset": 0, "end_offset": 3}]}',
            3,
            "overlapping",
        ),
    ],
)
def test_bad_record_is_one_error(tmp_path, capsys, text, bad, line, message):
    p = _file(tmp_path, text + bad + "\n", "bad.jsonl")
    fmt = "doccano-rel" if text is REL else "doccano"
    with pytest.raises(FormatError) as err:
        read_corpus(p, fmt)
    assert err.value.line == line and message in err.value.message
    assert main(["stats", str(p), "--from", fmt]) == 1
    err_text = capsys.readouterr().err
    assert f"bad.jsonl:{line}:" in err_text and "Traceback" not in err_text


def test_cli(tmp_path, capsys):
    p = _file(tmp_path, REL)
    assert main(["stats", str(p)]) == 0
    out, err = capsys.readouterr()
    assert "doccano-rel" in out and "note:" in err and "relation" in err
    assert main(["convert", str(p), str(tmp_path / "o.jsonl"), "--to", "doccano"]) == 0
    assert "relation(s)" in capsys.readouterr().err
    assert read_corpus(tmp_path / "o.jsonl").format == "doccano"
    assert main(["convert", str(p), str(tmp_path / "o.tsv")]) == 0
    assert read_corpus(tmp_path / "o.tsv").sentences[0].spans == [
        Span(0, 1, "ORG"),
        Span(5, 6, "LOC"),
    ]


def test_token_breaks_the_reader_would_not_give_back_are_reported(tmp_path):
    # "Bob's" is one token of the column file; doccano holds text, read back as Bob + 's
    from nerstudio.corpus import convert_file

    src = tmp_path / "in.conll"
    src.write_text("Ann B-PER\nmet O\nBob's O\n\nAnn B-PER\nleft O\n. O\n")
    losses = Losses()
    out = tmp_path / "out.jsonl"
    write_corpus(read_corpus(src), out, "doccano", losses=losses)
    (msg,) = [m for m in losses.messages() if "token breaks" in m]
    assert msg.startswith("the token breaks of 1 sentence(s)") and "line 1" in msg
    back = read_corpus(out, "doccano")
    assert list(back.sentences[0].words) == ["Ann", "met", "Bob", "'s"]
    strict_out = tmp_path / "strict.jsonl"
    with pytest.raises(FormatError, match="token breaks"):
        convert_file(src, strict_out, to_format="doccano", strict=True)
    assert not strict_out.exists()
    # tokens the reader finds again: nothing to report
    src.write_text("Ann B-PER\nmet O\nBob B-PER\n. O\n")
    losses = Losses()
    write_corpus(read_corpus(src), out, "doccano", losses=losses)
    assert not [m for m in losses.messages() if "token breaks" in m]
