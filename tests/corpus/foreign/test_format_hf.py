"""Hugging Face token classification data (tokens + ner_tags): label names from a sidecar or
the dataset_info.json that datasets saves, string tags, JSON Lines / array / {"data": [...]}
shapes, a file of integer tags without names refused (never read as zero entities), detection,
writing with the names beside, round trips (issue 16).

Fixtures follow the shape ``datasets``' ``to_json`` writes for conll2003 (``id``, ``tokens``,
``pos_tags``, ``chunk_tags``, ``ner_tags`` as integers) and the ClassLabel names its features
hold (``O, B-PER, I-PER, B-ORG, I-ORG, B-LOC, I-LOC, B-MISC, I-MISC``), with our own sentences."""

from __future__ import annotations

import json

import pytest

from nerstudio.cli import main
from nerstudio.corpus import read_corpus
from nerstudio.corpus.detect import sniff_format
from nerstudio.corpus.formats import Losses, write_corpus
from nerstudio.corpus.model import Span
from nerstudio.errors import FormatError

NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
EXAMPLES = [
    {
        "id": "0",
        "tokens": ["Angela", "Merkel", "visited", "Siemens", "in", "Munich", "."],
        "pos_tags": [22, 22, 38, 22, 15, 22, 7],
        "chunk_tags": [11, 12, 21, 11, 13, 11, 0],
        "ner_tags": [1, 2, 0, 3, 0, 5, 0],
    },
    {
        "id": "1",
        "tokens": ["German", "beer", "is", "cheap"],
        "pos_tags": [16, 21, 42, 16],
        "chunk_tags": [11, 12, 21, 1],
        "ner_tags": [7, 0, 0, 0],
    },
]
INFO = {
    "description": "",
    "features": {
        "id": {"dtype": "string", "_type": "Value"},
        "tokens": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "Sequence"},
        "ner_tags": {"feature": {"names": NAMES, "_type": "ClassLabel"}, "_type": "Sequence"},
    },
}
SPANS = [[Span(0, 2, "PER"), Span(3, 4, "ORG"), Span(5, 6, "LOC")], [Span(0, 1, "MISC")]]


def _jsonl(path, examples=EXAMPLES):
    path.write_text("".join(json.dumps(e) + "\n" for e in examples))
    return path


def test_integer_tags_without_names_are_an_error_that_says_how(tmp_path, capsys):
    p = _jsonl(tmp_path / "train.jsonl")
    assert sniff_format(p) == "hf"  # not nerstudio's JSONL, which would read zero entities
    with pytest.raises(FormatError) as err:
        read_corpus(p)
    assert err.value.line == 1
    assert "train.labels.txt" in err.value.message and "dataset_info.json" in err.value.message
    assert main(["stats", str(p)]) == 1
    err_text = capsys.readouterr().err
    assert (
        err_text.count("\n") == 1
        and "train.jsonl:1: integer ner_tags but no label names" in err_text
    )


@pytest.mark.parametrize("where", ["sidecar", "labels.txt", "dataset_info", "dataset_infos"])
def test_names_from_each_place(tmp_path, where):
    p = _jsonl(tmp_path / "train.jsonl")
    if where == "sidecar":
        (tmp_path / "train.labels.txt").write_text("\n".join(NAMES) + "\n")
    elif where == "labels.txt":
        (tmp_path / "labels.txt").write_text("\n".join(NAMES))
    elif where == "dataset_info":
        (tmp_path / "dataset_info.json").write_text(json.dumps(INFO))
    else:
        (tmp_path / "dataset_infos.json").write_text(json.dumps({"conll2003": INFO}))
    c = read_corpus(p)
    assert c.format == "hf" and c.scheme == "iob2"
    assert [s.spans for s in c.sentences] == SPANS
    assert c.sentences[0].words == ("Angela", "Merkel", "visited", "Siemens", "in", "Munich", ".")


def test_string_tags_array_and_data_wrapper(tmp_path):
    ex = [{"tokens": e["tokens"], "ner_tags": [NAMES[t] for t in e["ner_tags"]]} for e in EXAMPLES]
    for name, value in (("a.json", ex), ("b.json", {"version": "1", "data": ex})):
        p = tmp_path / name
        p.write_text(json.dumps(value, indent=1))
        assert sniff_format(p) == "hf"
        assert [s.spans for s in read_corpus(p).sentences] == SPANS
    # the "tags" key and IOB1 tags, detected from the tags
    p = _jsonl(
        tmp_path / "c.jsonl",
        [{"tokens": ["New", "York", "Times"], "tags": ["I-ORG", "I-ORG", "I-ORG"]}],
    )
    c = read_corpus(p)
    assert c.scheme == "iob1" and c.sentences[0].spans == [Span(0, 3, "ORG")]


def test_write_with_names_and_round_trip(tmp_path):
    p = _jsonl(tmp_path / "train.jsonl")
    (tmp_path / "dataset_info.json").write_text(json.dumps(INFO))
    c = read_corpus(p)
    out = tmp_path / "out" / "dev.jsonl"
    out.parent.mkdir()
    write_corpus(c, out)
    assert (tmp_path / "out" / "dev.labels.txt").read_text().splitlines() == NAMES  # ids kept
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows[0] == EXAMPLES[0]  # other fields (pos_tags, chunk_tags) given back
    again = read_corpus(out)
    assert [s.spans for s in again.sentences] == SPANS and [s.words for s in again.sentences] == [
        s.words for s in c.sentences
    ]
    # an edit with a new type: its tags are appended, old ids unchanged
    c.sentences[1].spans = [Span(0, 1, "NORP")]
    write_corpus(c, out)
    names = (tmp_path / "out" / "dev.labels.txt").read_text().splitlines()
    assert names[:9] == NAMES and names[9:] == ["B-NORP", "I-NORP"]
    assert read_corpus(out).sentences[1].spans == [Span(0, 1, "NORP")]


def test_conll_to_hf_in_another_scheme(tmp_path, capsys):
    src = tmp_path / "c.conll"
    src.write_text(
        "-DOCSTART- -X- -X- O\n\nEU NNP B-NP I-ORG\nrejects VBZ B-VP O\n\n"
        "-DOCSTART- -X- -X- O\n\nPeter NNP B-NP I-PER\nBlackburn NNP I-NP I-PER\n"
    )
    c = read_corpus(src)
    losses = Losses()
    write_corpus(c, tmp_path / "h.jsonl", "hf", "bioes", losses=losses)
    assert (tmp_path / "h.labels.txt").read_text().splitlines() == [
        "O",
        "B-ORG",
        "I-ORG",
        "E-ORG",
        "S-ORG",
        "B-PER",
        "I-PER",
        "E-PER",
        "S-PER",
    ]
    assert sorted(losses.messages()) == [
        "extra columns of 2 sentence(s) not kept: hf has fewer columns, first at line 3",
        "the boundaries of 2 documents not kept: hf has examples, not documents",
    ]
    again = read_corpus(tmp_path / "h.jsonl")
    assert again.scheme == "bioes" and [s.spans for s in again.sentences] == [
        s.spans for s in c.sentences
    ]
    assert main(["convert", str(src), str(tmp_path / "k.jsonl"), "--to", "hf"]) == 0
    assert "document" in capsys.readouterr().err
    assert main(["stats", str(tmp_path / "k.jsonl")]) == 0
    assert "hf, IOB1" in capsys.readouterr().out


def test_docstart_examples_start_documents(tmp_path):
    p = _jsonl(
        tmp_path / "d.jsonl",
        [
            {"tokens": ["-DOCSTART-"], "ner_tags": ["O"]},
            {"tokens": ["Rome"], "ner_tags": ["B-LOC"]},
            {"tokens": ["-DOCSTART-"], "ner_tags": ["O"]},
            {"tokens": ["Ann"], "ner_tags": ["B-PER"]},
            {"tokens": [], "ner_tags": []},
        ],
    )
    c = read_corpus(p)
    assert len(c.documents) == 2 and len(c.sentences) == 2
    assert c.notes == ["1 example(s) without tokens skipped"]


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"tokens": ["a", "b"], "ner_tags": [0]}, "one tag per token"),
        ({"tokens": ["a"], "ner_tags": [42]}, "tag 42 has no name"),
        ({"tokens": ["a"], "ner_tags": ["X-Y"]}, "unknown tag"),
        ({"tokens": ["a"], "ner_tags": [0.5]}, "all integers or all strings"),
        ({"tokens": "a b", "ner_tags": [0]}, "list of strings"),
    ],
)
def test_bad_example_is_one_error_at_its_line(tmp_path, capsys, bad, message):
    (tmp_path / "labels.txt").write_text("\n".join(NAMES))
    p = _jsonl(tmp_path / "bad.jsonl", EXAMPLES + [bad])
    with pytest.raises(FormatError) as err:
        read_corpus(p, "hf")
    assert err.value.line == 3 and message in err.value.message
    assert main(["stats", str(p), "--from", "hf"]) == 1
    assert "bad.jsonl:3:" in capsys.readouterr().err


def test_own_jsonl_with_tokens_is_still_jsonl(tmp_path):
    p = tmp_path / "own.jsonl"
    p.write_text('{"tokens": ["Jan", "Peeters"], "spans": [[0, 11, "PER"]]}\n')
    assert sniff_format(p) == "jsonl"


def test_strict_refuses_a_repaired_transition(tmp_path):
    # I-PER after O is read as B-PER (the conlleval way); --strict refuses it at its example
    p = tmp_path / "t.jsonl"
    rows = [
        {"tokens": ["Paris", "is", "big"], "ner_tags": ["B-LOC", "O", "O"]},
        {"tokens": ["Bob", "and", "Al"], "ner_tags": ["B-PER", "O", "I-PER"]},
    ]
    _jsonl(p, rows)
    assert read_corpus(p).repairs == 1
    with pytest.raises(FormatError) as err:
        read_corpus(p, strict=True)
    assert err.value.line == 2 and "I-PER" in err.value.message


def test_label_files_that_disagree_are_reported(tmp_path):
    p = _jsonl(tmp_path / "train.jsonl")
    (tmp_path / "labels.txt").write_text("\n".join(NAMES) + "\n")
    swapped = NAMES[:1] + NAMES[3:5] + NAMES[1:3] + NAMES[5:]  # PER and ORG exchanged
    info = json.loads(json.dumps(INFO))
    info["features"]["ner_tags"]["feature"]["names"] = swapped
    (tmp_path / "dataset_info.json").write_text(json.dumps(info))
    c = read_corpus(p)
    assert [s.spans for s in c.sentences] == SPANS  # labels.txt comes first
    (note,) = [n for n in c.notes if "disagree" in n]
    assert "labels.txt" in note and "dataset_info.json" in note and "tag 1" in note
    with pytest.raises(FormatError):
        read_corpus(p, strict=True)
    # the same names in both files: nothing to say
    (tmp_path / "dataset_info.json").write_text(json.dumps(INFO))
    assert not read_corpus(p).notes
