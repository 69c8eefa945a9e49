"""Label Studio JSON: an export read (which annotation of a task, predictions-only tasks, cancelled
ones, other result types, UTF-16 offsets), detection, export as tasks with predictions, round
trips, bad tasks one file:line error (issue 16).

Fixtures follow the task shape of Label Studio's "task format" and "import pre-annotations"
documentation (data.text; annotations[].result[] of type labels with value.start/end/text/labels;
was_cancelled, created_at, updated_at; predictions with model_version and score), in our own words."""

from __future__ import annotations

import json
import re

import pytest

from nerstudio.cli import main
from nerstudio.corpus import read_corpus
from nerstudio.corpus.detect import sniff_format
from nerstudio.corpus.formats import write_corpus
from nerstudio.corpus.model import Corpus, Document, Sentence, Span
from nerstudio.errors import FormatError


def _region(text, a, b, label, rid="r"):
    return {
        "id": rid,
        "from_name": "ner",
        "to_name": "body",
        "type": "labels",
        "value": {"start": a, "end": b, "text": text[a:b], "labels": [label]},
    }


T1 = "Serena Williams won in Melbourne"
T2 = "Kyoto hosts a festival"
T3 = "Rain fell on Oslo"
T4 = "Nobody annotated this"
T5 = "Refused task text"
EXPORT = [
    {
        "id": 1,
        "data": {"body": T1},
        "annotations": [
            {
                "id": 10,
                "result": [_region(T1, 0, 15, "PER")],
                "was_cancelled": False,
                "created_at": "2024-05-01T10:00:00.000000Z",
                "updated_at": "2024-05-01T10:00:00.000000Z",
            },
            {
                "id": 11,
                "result": [
                    _region(T1, 0, 15, "PER"),
                    _region(T1, 23, 32, "LOC"),
                    {"id": "rel", "type": "relation", "from_id": "a", "to_id": "b"},
                ],
                "was_cancelled": False,
                "created_at": "2024-05-02T09:00:00.000000Z",
                "updated_at": "2024-05-03T09:00:00.000000Z",
            },
            {
                "id": 12,
                "result": [],
                "was_cancelled": True,
                "created_at": "2024-06-01T00:00:00.000000Z",
            },
        ],
        "predictions": [],
    },
    {
        "id": 2,
        "data": {"body": T2},
        "annotations": [],
        "predictions": [
            {"model_version": "v1", "score": 0.4, "result": [_region(T2, 0, 5, "ORG")]},
            {
                "model_version": "v2",
                "score": 0.9,
                "result": [_region(T2, 0, 5, "LOC")],
                "created_at": "2024-07-01T00:00:00Z",
            },
        ],
    },
    {"id": 3, "data": {"body": T3}, "annotations": [{"result": [_region(T3, 13, 17, "LOC")]}]},
    {"id": 4, "data": {"body": T4}},
    {"id": 5, "data": {"body": T5}, "annotations": [{"result": [], "was_cancelled": True}]},
]


def _file(tmp_path, value, name="export.json"):
    p = tmp_path / name
    p.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return p


def test_read_export_and_its_choices(tmp_path):
    c = read_corpus(_file(tmp_path, EXPORT))
    assert c.format == "label-studio"
    assert [s.text() for s in c.sentences] == [T1, T2, T3, T4]  # the all-cancelled task is skipped
    assert [s.spans for s in c.sentences] == [
        [Span(0, 2, "PER"), Span(4, 5, "LOC")],  # the most recent annotation not cancelled
        [Span(0, 1, "LOC")],  # the most recent prediction
        [Span(3, 4, "LOC")],
        [],
    ]
    assert all(re.search(r", first at line \d+$", n) for n in c.notes)
    assert [re.sub(r", first at line \d+$", "", n) for n in c.notes] == [
        "1 task(s) with several annotations: the most recent not cancelled one was read",
        "1 task(s) without annotation read from their (most recent) prediction",
        "1 task(s) whose annotations were all cancelled skipped",
        "1 task(s) with neither annotation nor prediction read with no entities",
        "1 result(s) other than labels (relations, choices, ...) not kept",
    ]
    starts = [
        i
        for i, line in enumerate((tmp_path / "export.json").read_text().splitlines(), 1)
        if line == "  {"
    ]
    assert [s.line for s in c.sentences] == [
        starts[k] for k in (0, 1, 2, 3)
    ]  # where each task starts


def test_detection(tmp_path):
    assert sniff_format(_file(tmp_path, EXPORT, "x.txt")) == "label-studio"
    assert (
        sniff_format(_file(tmp_path, [{"data": {"text": "a"}, "predictions": []}], "y"))
        == "label-studio"
    )


def test_utf16_offsets_are_recognised(tmp_path):
    text = "\U0001f600 Oslo is cold"
    old = {
        "data": {"text": text},
        "annotations": [
            {
                "result": [
                    {
                        "type": "labels",
                        "value": {"start": 3, "end": 7, "text": "Oslo", "labels": ["LOC"]},
                    }
                ]
            }
        ],
    }
    new = {
        "data": {"text": text},
        "annotations": [
            {
                "result": [
                    {
                        "type": "labels",
                        "value": {"start": 2, "end": 6, "text": "Oslo", "labels": ["LOC"]},
                    }
                ]
            }
        ],
    }
    c = read_corpus(_file(tmp_path, [old, new]))
    assert [s.entity_texts() for s in c.sentences] == [[("LOC", "Oslo")], [("LOC", "Oslo")]]


def test_export_as_predictions_and_round_trip(tmp_path):
    c = read_corpus(_file(tmp_path, EXPORT))
    out = tmp_path / "tasks.json"
    write_corpus(c, out)
    tasks = json.loads(out.read_text())
    assert len(tasks) == 4 and all(set(t) == {"data", "predictions"} for t in tasks)
    first = tasks[0]
    assert first["data"] == {"body": T1}
    pred = first["predictions"][0]
    assert pred["model_version"] == "nerstudio" and "score" not in pred
    assert [(r["from_name"], r["to_name"], r["type"], r["value"]) for r in pred["result"]] == [
        (
            "ner",
            "body",
            "labels",
            {"start": 0, "end": 15, "text": "Serena Williams", "labels": ["PER"]},
        ),
        ("ner", "body", "labels", {"start": 23, "end": 32, "text": "Melbourne", "labels": ["LOC"]}),
    ]
    # region ids unique
    assert len({r["id"] for t in tasks for r in t["predictions"][0]["result"]}) == 4
    again = read_corpus(out)
    assert [s.words for s in again.sentences] == [s.words for s in c.sentences]
    assert [s.spans for s in again.sentences] == [s.spans for s in c.sentences]


def test_export_of_a_tagged_corpus_with_scores(tmp_path):
    """Pre-annotations: a sentence's meta may carry the tagger's model version and score."""
    text = "Lisbon  is sunny"
    s = Sentence(
        ["Lisbon", "is", "sunny"],
        [Span(0, 1, "LOC")],
        source=text,
        offsets=[(0, 6), (8, 10), (11, 16)],
        meta={"model_version": "tagger+boost", "score": 0.75},
    )
    c = Corpus([Document([s], text=text), Document([Sentence(["Hi"], [])])], format="conll2003")
    write_corpus(c, tmp_path / "pre.json", "label-studio")
    tasks = json.loads((tmp_path / "pre.json").read_text())
    assert tasks[0]["data"] == {"text": text, "doc_id": "1"}
    assert tasks[0]["predictions"][0]["model_version"] == "tagger+boost"
    assert tasks[0]["predictions"][0]["score"] == 0.75
    assert tasks[0]["predictions"][0]["result"][0]["value"] == {
        "start": 0,
        "end": 6,
        "text": "Lisbon",
        "labels": ["LOC"],
    }
    again = read_corpus(tmp_path / "pre.json")
    assert len(again.documents) == 2 and again.sentences[0].text() == text


@pytest.mark.parametrize(
    "value, message",
    [
        (
            [
                {
                    "data": {"text": "abc"},
                    "annotations": [
                        {
                            "result": [
                                {
                                    "type": "labels",
                                    "value": {"start": 0, "end": 1, "text": "b", "labels": ["X"]},
                                }
                            ]
                        }
                    ],
                }
            ],
            "is not the text",
        ),
        (
            [
                {
                    "data": {"text": "abc"},
                    "annotations": [
                        {
                            "result": [
                                {"type": "labels", "value": {"start": 0, "end": 1, "labels": []}}
                            ]
                        }
                    ],
                }
            ],
            "non-empty list",
        ),
        ([{"data": {"a": "x", "b": "y"}, "annotations": []}], "which field"),
        (
            [
                {
                    "data": {"text": "abc"},
                    "annotations": [
                        {
                            "result": [
                                {"type": "labels", "value": {"start": 0, "end": 9, "labels": ["X"]}}
                            ]
                        }
                    ],
                }
            ],
            "outside the text",
        ),
        (["not a task"], "JSON object"),
    ],
)
def test_bad_task_is_one_error_at_its_line(tmp_path, capsys, value, message):
    p = tmp_path / "bad.json"  # one task per line: the bad one starts on line 3
    p.write_text(
        "[\n"
        + ",\n".join(json.dumps(t) for t in [{"data": {"text": "fine"}, "annotations": []}] + value)
        + "\n]\n"
    )
    with pytest.raises(FormatError) as err:
        read_corpus(p)
    assert message in err.value.message and err.value.line == 3
    assert main(["stats", str(p)]) == 1
    assert "bad.json:3:" in capsys.readouterr().err


def test_broken_json_names_its_line(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text(
        '[\n {"data": {"text": "a"}, "annotations": []},\n {"data": {"text": "b"} "annotations": []}\n]\n'
    )
    with pytest.raises(FormatError) as err:
        read_corpus(p)
    assert err.value.line == 3


def test_cli(tmp_path, capsys):
    p = _file(tmp_path, EXPORT)
    assert main(["stats", str(p), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["format"] == "label-studio" and "most recent" in err
    assert main(["convert", str(p), str(tmp_path / "o.conll")]) == 0
    assert (
        main(
            ["convert", str(tmp_path / "o.conll"), str(tmp_path / "o.json"), "--to", "label-studio"]
        )
        == 0
    )
    assert read_corpus(tmp_path / "o.json").format == "label-studio"


def test_python_api_reads_and_writes_the_tools_formats(tmp_path):
    import nerstudio

    c = nerstudio.read(_file(tmp_path, EXPORT))
    assert c.format == "label-studio" and len(c.notes) == 5
    nerstudio.write(c, tmp_path / "tasks.jsonl", "prodigy")
    nerstudio.write(nerstudio.read(tmp_path / "tasks.jsonl"), tmp_path / "h.jsonl", "hf")
    back = nerstudio.read(tmp_path / "h.jsonl")
    assert back.format == "hf" and [s.spans for s in back.sentences] == [
        s.spans for s in c.sentences
    ]


def test_token_breaks_the_reader_would_not_give_back_are_reported(tmp_path):
    from nerstudio.corpus.formats import Losses

    corpus = Corpus(
        [Document([Sentence(["Bob's", "car"], [Span(0, 1, "PER")]), Sentence(["A", "b"], [])])]
    )
    losses = Losses()
    out = tmp_path / "tasks.json"
    write_corpus(corpus, out, "label-studio", losses=losses)
    assert any(m.startswith("the token breaks of 1 sentence(s)") for m in losses.messages())
    assert read_corpus(out, "label-studio").sentences[0].words == ("Bob", "'s", "car")
