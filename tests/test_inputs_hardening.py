"""Inputs that never crash and never lie (issue 12): JSONL records, conversions that report what
they cannot keep, detection from content, evaluation of misaligned files, model and N-best files
that are refused before they can do harm, exit statuses, and the command line of the application.

Every test here was written against a defect reproduced first; each fails on the code before the
fix (an exception other than ours, exit status 3 or 2, a silently wrong result)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT

from nerstudio.cli import main
from nerstudio.corpus import Span, convert_file, formats, iter_sentences, read_corpus, write_corpus
from nerstudio.corpus.writing import Losses
from nerstudio.errors import FormatError, NerstudioError
from nerstudio.nbest import NBestList
from nerstudio.persist import load_npz

DEMO = ROOT / "nerstudio" / "demo"
DEMO_MODEL = DEMO / "model"


def _cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# --------------------------------------------------------------------------------------------
# JSONL: each bad record is one file:line error

DEEP = '{"text": "a", "x": ' + "[" * 30000 + "]" * 30000 + "}"
BAD_JSONL = {
    # name: (second line of the file, message fragment)
    "spans_not_a_list": ('{"text": "a b", "spans": 5}', '"spans" must be a list of spans'),
    "spans_an_object": ('{"text": "a b", "spans": {"start": 0}}', '"spans" must be a list'),
    "label_a_string": ('{"text": "a b", "label": "positive"}', '"label" must be a list of spans'),
    "infinite_offset": (
        '{"text": "a b", "spans": [[0, Infinity, "X"]]}',
        "end must be a whole number, not Infinity",
    ),
    "nan_offset": (
        '{"text": "a b", "spans": [[NaN, 1, "X"]]}',
        "start must be a whole number, not NaN",
    ),
    "fractional_offset": (
        '{"text": "ab cd", "spans": [[0.9, 2.5, "X"]]}',
        "start must be a whole number, not 0.9",
    ),
    "boolean_offset": (
        '{"text": "a b", "spans": [[false, true, "X"]]}',
        "start must be a whole number, not false",
    ),
    "string_offset": (
        '{"text": "a b", "spans": [["0", 1, "X"]]}',
        'start must be a whole number, not "0"',
    ),
    "huge_offset": ('{"text": "a b", "spans": [[0, 1' + "0" * 5000 + ', "X"]]}', "invalid JSON"),
    "deep_nesting": (DEEP, "invalid JSON: nested too deeply"),
    "null_label": (
        '{"text": "a b", "spans": [[0, 1, null]]}',
        "the label must be a string, not null",
    ),
    "number_label": (
        '{"text": "a b", "spans": [{"start": 0, "end": 1, "label": 7}]}',
        "the label must be a string",
    ),
    "empty_span": ('{"text": "a b", "spans": [[1, 1, "X"]]}', "span [1, 1) is empty"),
    "reversed_span": ('{"text": "a b", "spans": [[2, 0, "X"]]}', "span [2, 0) is empty"),
    "negative_span": ('{"text": "a b", "spans": [[-1, 1, "X"]]}', "outside the text"),
    "whitespace_span": ('{"text": "a   b", "spans": [[1, 3, "X"]]}', "covers only whitespace"),
    "span_inside_a_token": (
        '{"text": "New York", "tokens": ["New", "York"], "spans": [[1, 3, "X"]]}',
        "does not fall on token boundaries",
    ),
    "doc_id_list": ('{"text": "a b", "doc_id": [1]}', '"doc_id" must be a string or an integer'),
    "columns_ragged": (
        '{"tokens": ["a", "b"], "columns": [["N"]]}',
        '"columns" must be a list of columns',
    ),
    "lone_surrogate": ('{"text": "a \\ud800 b"}', "unpaired surrogate"),
    "lone_surrogate_label": ('{"text": "a b", "spans": [[0, 1, "\\udfff"]]}', "unpaired surrogate"),
}


@pytest.mark.parametrize("case", BAD_JSONL)
def test_bad_jsonl_record_is_one_error_at_its_line(tmp_path, capsys, case):
    line, fragment = BAD_JSONL[case]
    path = tmp_path / f"{case}.jsonl"
    path.write_text('{"text": "fine", "spans": []}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_corpus(path)
    assert info.value.path == str(path) and info.value.line == 2
    assert fragment in info.value.message and "\n" not in str(info.value)
    with pytest.raises(FormatError) as info2:
        list(iter_sentences(path))
    assert str(info2.value) == str(info.value)
    out = tmp_path / "out.conll"
    for argv in (["stats", path], ["convert", path, out, "--to", "conll2003"]):
        code, _, err = _cli(capsys, *argv)
        assert code == 1
        assert _one_error_line(err).startswith(f"nerstudio: error: {path}:2: ")
    assert not out.exists()


def test_offsets_that_are_whole_floats_are_read(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_text('{"text": "Jan Peeters left", "spans": [[0.0, 11.0, "PER"]]}\n')
    assert read_corpus(path).sentences[0].spans == [Span(0, 2, "PER")]


def test_a_span_boundary_inside_a_word_splits_the_word(tmp_path):
    """The documented reading: without "tokens", span boundaries cut words (Obama|'s)."""
    path = tmp_path / "w.jsonl"
    path.write_text(
        '{"text": "Obama\'s plan", "spans": [[0, 5, "PER"]]}\n'
        '{"text": "abcdef", "spans": [[1, 3, "X"]]}\n'
    )
    c = read_corpus(path)
    assert [list(s.words) for s in c] == [["Obama", "'s", "plan"], ["a", "bc", "def"]]
    assert [s.spans for s in c] == [[Span(0, 1, "PER")], [Span(1, 2, "X")]]


def test_empty_records_hold_no_sentence_are_kept_in_jsonl_and_reported_elsewhere(tmp_path, capsys):
    src = tmp_path / "e.jsonl"
    data = (
        '{"text": ""}\n{"text": "Jan left", "spans": [[0, 3, "PER"]]}\n{"text": "   ", "id": 7}\n'
        '{"tokens": []}\n'
    )
    src.write_text(data)
    c = read_corpus(src)
    assert [list(s.words) for s in c] == [["Jan", "left"]]
    write_corpus(c, tmp_path / "same.jsonl")
    assert (tmp_path / "same.jsonl").read_text() == data  # nothing lost in its own format
    losses = Losses()
    write_corpus(c, tmp_path / "c.conll", format="conll2003", losses=losses)
    assert losses.counts["empty"] == 3
    code, _, err = _cli(capsys, "convert", src, tmp_path / "d.conll")
    assert code == 0 and "note: " in err and "3 empty record(s) not written" in err
    assert [list(s.words) for s in read_corpus(tmp_path / "d.conll")] == [["Jan", "left"]]


def test_a_first_line_longer_than_the_sniffing_window_is_still_jsonl(tmp_path):
    long_text = "word " * 20000  # about 100 KiB on the first line
    path = tmp_path / "long"
    path.write_text(json.dumps({"text": long_text, "spans": [[0, 4, "X"]]}) + "\n")
    assert formats.sniff_format(path) == "jsonl"
    c = read_corpus(path)
    assert (
        c.format == "jsonl"
        and len(c.sentences[0]) == 20000
        and c.sentences[0].spans == [Span(0, 1, "X")]
    )


# --------------------------------------------------------------------------------------------
# Conversions refuse what the target cannot hold, report what they drop, keep what both can hold


@pytest.mark.parametrize(
    "record,fragment",
    [
        ('{"text": "a b", "spans": [[0, 1, "New Type"]]}', "label 'New Type' contains a space"),
        (
            '{"text": "a b", "spans": [[0, 1, "A\\tB"]]}',
            "label 'A\\tB' contains whitespace ('\\t')",
        ),
        ('{"tokens": ["-DOCSTART-", "b"], "spans": []}', "token 1 is -DOCSTART-"),
        ('{"tokens": ["a", "b c"], "spans": []}', "token 2 'b c' contains a space"),
        ('{"tokens": ["a", ""], "spans": []}', "token 2 '' is empty"),
        (
            '{"tokens": ["a", "b"], "columns": [["N", "V V"]]}',
            "column 2 of token 2 ('V V') contains a space",
        ),
    ],
)
@pytest.mark.parametrize("target", ["conll2003", "columns"])
def test_what_a_column_format_cannot_hold_is_refused(tmp_path, capsys, record, fragment, target):
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "fine"}\n' + record + "\n")
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    with pytest.raises(FormatError) as info:
        convert_file(src, out, to_format=target)
    assert info.value.path == str(src) and info.value.line == 2 and fragment in info.value.message
    with pytest.raises(FormatError):
        write_corpus(read_corpus(src), out, format=target)
    assert out.read_text() == "old\n"  # nothing written half-way
    code, _, err = _cli(capsys, "convert", src, out, "--to", target)
    assert code == 1 and fragment in _one_error_line(err)


def test_a_tab_label_cannot_go_to_tsv_but_a_space_label_can(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "a b", "spans": [[0, 1, "New Type"]]}\n')
    convert_file(src, tmp_path / "o.tsv", to_format="tsv")
    assert read_corpus(tmp_path / "o.tsv").sentences[0].spans == [Span(0, 1, "New Type")]
    src.write_text('{"text": "a b", "spans": [[0, 1, "A\\tB"]]}\n')
    with pytest.raises(FormatError, match="contains a tab"):
        convert_file(src, tmp_path / "o2.tsv", to_format="tsv")


def test_pos_and_chunk_columns_survive_jsonl(tmp_path):
    src = tmp_path / "eng.conll"
    src.write_text(
        "-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\n\nPeter NNP I-NP I-PER\n\n"
    )
    convert_file(src, tmp_path / "c.jsonl", to_format="jsonl")
    assert json.loads((tmp_path / "c.jsonl").read_text().splitlines()[0])["columns"] == [
        ["NNP", "VBZ"],
        ["I-NP", "I-VP"],
    ]
    c = read_corpus(tmp_path / "c.jsonl", format="jsonl")
    assert c.sentences[0].extra == (("NNP", "VBZ"), ("I-NP", "I-VP"))  # read back, not only written
    back = tmp_path / "back.conll"
    convert_file(
        tmp_path / "c.jsonl", back, from_format="jsonl", to_format="conll2003", scheme="iob1"
    )
    assert back.read_text() == src.read_text()


def test_conversion_reports_document_ids_spacing_fields_and_columns(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(
        '{"doc_id": "a", "text": "EU  rejects", "spans": [[0, 2, "ORG"]], "meta": {"k": 1}}\n'
        '{"doc_id": "b", "tokens": ["x", "y"], "columns": [["N", "V"], ["B", "I"]]}\n'
    )
    code, _, err = _cli(capsys, "convert", src, tmp_path / "o.conll02", "--to", "conll2002")
    assert code == 0
    notes = [x for x in err.splitlines() if x.startswith("note: ")]
    assert any("the ids of 2 document(s) not kept" in x for x in notes)
    assert any("original spacing of 1 record(s)" in x and "line 1" in x for x in notes)
    assert any("other fields (meta) of 1 record(s)" in x for x in notes)
    assert any("extra columns of 1 sentence(s) not kept" in x and "line 2" in x for x in notes)
    code, _, err = _cli(capsys, "convert", src, tmp_path / "o.jsonl", "--scheme", "bioes")
    assert code == 0 and "note:" not in err  # JSONL to JSONL keeps everything


ROUND_TRIP_FORMATS = ["conll2003", "conll2002", "columns", "tsv", "jsonl"]
ROUND_TRIP_SCHEMES = ["iob1", "iob2", "bioes", "bilou", "scn"]
RICH = (
    "-DOCSTART- -X- -X- O\n\n"
    "EU NNP I-NP I-ORG\nrejects VBZ I-VP O\nGerman JJ I-NP I-MISC\ncall NN I-NP O\n\n"
    "Peter NNP I-NP I-PER\nBlackburn NNP I-NP I-PER\n\n"
    "-DOCSTART- -X- -X- O\n\n"
    "Germany NNP I-NP I-LOC\nFrance NNP I-NP B-LOC\nand CC O O\nAtlanta NNP I-NP I-MISC\nGames NNP I-NP I-MISC\n\n"
    "Sunday NNP I-NP O\n"
)
EXTRA_COLUMNS = {"conll2003": 2, "conll2002": 1, "columns": 2, "tsv": 2, "jsonl": 2}


def _content(c):
    return [[(s.words, s.spans) for s in d.sentences] for d in c.documents]


def _source(tmp_path: Path, fmt: str, scheme: str) -> Path:
    path = tmp_path / f"source.{fmt}.{scheme}"
    write_corpus(
        read_corpus(_write(tmp_path / "rich.conll", RICH)), path, format=fmt, scheme=scheme
    )
    return path


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.data_integrity
@pytest.mark.parametrize("src_fmt", ROUND_TRIP_FORMATS)
@pytest.mark.parametrize("dst_fmt", ROUND_TRIP_FORMATS)
def test_round_trips_between_every_pair_of_formats_and_schemes(
    tmp_path, monkeypatch, src_fmt, dst_fmt
):
    """A → B → A keeps words, entities, documents and the extra columns both formats hold, for
    every pair of schemes; read back by detection (nothing forced), the way a user would."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test here; speed is
    for src_scheme in ROUND_TRIP_SCHEMES:
        src = _source(tmp_path, src_fmt, src_scheme)
        original = read_corpus(src)
        if src_fmt != "jsonl":
            assert original.scheme == src_scheme
        for dst_scheme in ROUND_TRIP_SCHEMES:
            mid, back = tmp_path / "mid", tmp_path / "back"
            losses = Losses()
            convert_file(src, mid, to_format=dst_fmt, scheme=dst_scheme, losses=losses)
            there = read_corpus(mid)
            # "columns" is any other number of columns: 3 or 4 of them read back as conll2002/2003
            assert there.format == dst_fmt or {there.format, dst_fmt} <= {
                "columns",
                "conll2002",
                "conll2003",
            }
            assert _content(there) == _content(original)
            convert_file(mid, back, to_format=src_fmt, scheme=src_scheme)
            again = read_corpus(back)
            assert _content(again) == _content(original), (src_fmt, src_scheme, dst_fmt, dst_scheme)
            kept = min(EXTRA_COLUMNS[src_fmt], EXTRA_COLUMNS[dst_fmt])
            assert [s.extra[:kept] for s in again] == [s.extra[:kept] for s in original]
            if src_fmt == "jsonl":
                assert [d.id for d in again.documents] == [d.id for d in original.documents]
            if EXTRA_COLUMNS[dst_fmt] < EXTRA_COLUMNS[src_fmt]:
                assert losses.counts.get("columns") == len(original.sentences)
            if src_fmt == dst_fmt and src_scheme == dst_scheme:
                assert mid.read_bytes() == src.read_bytes()


# --------------------------------------------------------------------------------------------
# Detection from content


def test_nbest_file_without_its_extension_is_recognised_by_evaluate(tmp_path, capsys):
    plain = tmp_path / "dev-candidates"
    plain.write_bytes((DEMO_MODEL / "dev.nbest.npz").read_bytes())
    code, out, _ = _cli(capsys, "evaluate", DEMO / "dev.conll", plain, "--json")
    assert code == 0
    assert set(json.loads(out)["oracle"]) >= {"1", "5", "20"}


@pytest.mark.parametrize(
    "content,fragment",
    [
        (
            (DEMO_MODEL / "tagger.npz").read_bytes(),
            "a nerstudio .npz file (nerstudio-maxent), not a corpus",
        ),
        (b"PK\x03\x04not really a zip", "a zip archive (or .npz file), not a corpus"),
        (b"\x1f\x8b\x08\x00compressed", "a gzip-compressed file"),
        (b"\x7fELF\x02\x01\x01", "a program"),
        (b"word\x00\x01\x02 O\n", "binary data"),
        (b'[{"text": "a b"}]\n', "a JSON array; nerstudio reads JSON Lines"),
        (b"This is just prose.\n", "unrecognised format: unknown tag 'prose.'"),
        (b"oneword\n", "unrecognised format: a token line needs at least 2 columns"),
    ],
)
def test_an_unknown_file_is_unrecognised_and_the_supported_formats_are_listed(
    tmp_path, capsys, content, fragment
):
    # a .txt of prose is plain text (tests/corpus/foreign/test_format_text.py); without the
    # extension it is no corpus
    path = tmp_path / (
        "mystery" if content.rstrip().isalpha() or b"prose" in content else "mystery.txt"
    )
    path.write_bytes(content)
    with pytest.raises(FormatError) as info:
        read_corpus(path)
    assert fragment in str(info.value)
    assert "supported corpus formats: conll2003, conll2002, columns" in str(info.value)
    code, _, err = _cli(capsys, "stats", path)
    assert code == 1 and _one_error_line(err).startswith(f"nerstudio: error: {path}")
    if content[:2] in (
        b"PK",
        b"\x1f\x8b",
        b"\x7fE",
    ):  # forcing a format does not make binary data text
        with pytest.raises(FormatError, match="unrecognised format"):
            read_corpus(path, format="conll2003")


def test_a_forced_format_mismatch_is_not_called_unrecognised(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("oneword\n")
    with pytest.raises(FormatError) as info:
        read_corpus(path, format="columns")
    assert "unrecognised" not in str(info.value) and "at least 2 columns" in str(info.value)


@pytest.mark.parametrize(
    "name,expected",
    [
        ("out.jsonl", "jsonl"),
        ("out.JSONL", "jsonl"),
        ("out.ndjson", "jsonl"),
        ("out.json", "jsonl"),
        ("out.tsv", "tsv"),
        ("out.conll", "conll2002"),
        ("out.conll03", "conll2003"),
        ("out.txt", "conll2002"),
        ("out", "conll2002"),
    ],
)
def test_convert_infers_the_output_format_from_the_extension(tmp_path, capsys, name, expected):
    src = _write(tmp_path / "esp.conll", "La DA B-ORG\nOTAN NC I-ORG\n\nen SP O\n")
    out = tmp_path / name
    code, _, err = _cli(capsys, "convert", src, out)
    assert code == 0 and err.startswith(f"wrote {out} ({expected}, iob2)")
    back = read_corpus(out)
    assert back.format == expected
    assert [s.spans for s in back] == [[Span(0, 2, "ORG")], []]


def test_dot_conll_from_jsonl_means_conll2003(tmp_path):
    src = _write(tmp_path / "in.jsonl", '{"text": "Jan left", "spans": [[0, 3, "PER"]]}\n')
    convert_file(src, tmp_path / "out.conll")
    assert (tmp_path / "out.conll").read_text() == "Jan -X- -X- B-PER\nleft -X- -X- O\n\n"


def test_streamed_and_whole_file_reading_detect_the_same_scheme(tmp_path, monkeypatch):
    """The first sentences look IOB2 (entities start with B-), the rest of the file is IOB1
    (entities start with I-): the whole file decides, streamed or not."""
    monkeypatch.setattr(formats, "_DETECT_SENTENCES", 3)
    text = "a B-PER\nb I-PER\n\n" * 3 + "c I-LOC\nd O\n\n" * 8 + "e I-LOC\nf B-LOC\n"
    path = _write(tmp_path / "mixed.conll", text)
    whole = read_corpus(path)
    assert whole.scheme == "iob1"
    reader = formats.Reader(path)
    streamed = list(reader.sentences())
    assert reader.scheme == whole.scheme
    assert [s.spans for s in streamed] == [s.spans for s in whole]
    assert streamed[-1].spans == [
        Span(0, 1, "LOC"),
        Span(1, 2, "LOC"),
    ]  # IOB1: B- splits two entities


# --------------------------------------------------------------------------------------------
# evaluate compares tokens


GOLD = "EU B-ORG\nrejects O\n\nPeter B-PER\nBlackburn I-PER\n\nin O\nBrussels B-LOC\n"


def test_shuffled_sentences_are_an_error_naming_the_first_differing_line(tmp_path, capsys):
    gold = _write(tmp_path / "gold.txt", GOLD)
    # the same sentence lengths in another order: scoring them would give a wrong F silently
    pred = _write(
        tmp_path / "pred.txt",
        "in O\nBrussels B-LOC\n\nPeter B-PER\nBlackburn I-PER\n\nEU B-ORG\nrejects O\n",
    )
    code, _, err = _cli(capsys, "evaluate", gold, pred)
    assert code == 1
    assert _one_error_line(err) == (
        f"nerstudio: error: {pred}:1: token 'in' differs from the gold token 'EU' at "
        f"{gold}:1 (sentence 1, token 1): the files are not aligned"
    )


def test_a_changed_token_inside_a_sentence_is_found(tmp_path, capsys):
    gold = _write(tmp_path / "gold.txt", GOLD)
    pred = _write(
        tmp_path / "pred.jsonl",
        '{"tokens": ["EU", "rejects"]}\n{"tokens": ["Peter", "Blackburne"]}\n'
        '{"tokens": ["in", "Brussels"]}\n',
    )
    code, _, err = _cli(capsys, "evaluate", gold, pred)
    assert code == 1
    assert _one_error_line(err) == (
        f"nerstudio: error: {pred}:2: token 'Blackburne' differs from the gold token "
        f"'Blackburn' at {gold}:5 (sentence 2, token 2): the files are not aligned"
    )


def test_evaluating_an_nbest_list_of_other_sentences_is_an_error(tmp_path, capsys):
    nb = NBestList.load(DEMO_MODEL / "dev.nbest.npz")
    gold = read_corpus(DEMO / "dev.conll")
    gold.sentences[5].words = ("Changed",) + gold.sentences[5].words[1:]
    write_corpus(gold, tmp_path / "gold.conll")
    code, _, err = _cli(capsys, "evaluate", tmp_path / "gold.conll", DEMO_MODEL / "dev.nbest.npz")
    assert code == 1 and "token 'Changed' differs from" in _one_error_line(err)
    assert f"{tmp_path / 'gold.conll'}:{gold.sentences[5].line}:" in err
    assert len(nb) == len(gold)


# --------------------------------------------------------------------------------------------
# Model and N-best files


def _arrays(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k].copy() for k in z.files}


def _save(path: Path, arrays: dict, compressed: bool = True) -> Path:
    with open(path, "wb") as f:
        (np.savez_compressed if compressed else np.savez)(f, **arrays)
    return path


def _header(arrays: dict) -> dict:
    return json.loads(arrays["header"].tobytes())


def _with_header(arrays: dict, header) -> dict:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return dict(arrays, header=np.frombuffer(raw, dtype=np.uint8))


@pytest.mark.parametrize(
    "source,array,command",
    [
        ("tagger.npz", "W", "tag"),
        ("reranker.npz", "learner_alpha", "rerank"),
        ("reranker.npz", "learner_alpha0", "rerank"),
        ("dev.nbest.npz", "logprobs", "evaluate"),
    ],
)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_are_refused(tmp_path, capsys, source, array, command, value):
    a = _arrays(DEMO_MODEL / source)
    a[array] = a[array].copy()
    a[array].flat[0] = value
    bad = _save(tmp_path / f"bad-{source}", a)
    argv = {
        "tag": ["tag", bad, DEMO / "dev.conll", "--out", tmp_path / "o.conll"],
        "rerank": ["rerank", bad, DEMO_MODEL / "dev.nbest.npz", "--out", tmp_path / "o.conll"],
        "evaluate": ["evaluate", DEMO / "dev.conll", bad],
    }[command]
    code, _, err = _cli(capsys, *argv)
    assert code == 1
    assert (
        _one_error_line(err)
        == f"nerstudio: error: {bad}: corrupt {_kind(source)}: array '{array}' holds NaN or infinite values"
    )
    assert not (tmp_path / "o.conll").exists()


def _kind(source: str) -> str:
    return {
        "tagger.npz": "tagger model",
        "reranker.npz": "reranker model",
        "dev.nbest.npz": "N-best file",
    }[source]


@pytest.mark.parametrize("source", ["tagger.npz", "reranker.npz", "dev.nbest.npz"])
def test_deep_json_headers_are_refused(tmp_path, capsys, source):
    a = _with_header(_arrays(DEMO_MODEL / source), b"[" * 30000 + b"]" * 30000)
    bad = _save(tmp_path / source, a)
    code, _, err = (
        _cli(capsys, "evaluate", DEMO / "dev.conll", bad)
        if "nbest" in source
        else _cli(
            capsys,
            "rerank" if "reranker" in source else "tag",
            bad,
            DEMO_MODEL / "dev.nbest.npz" if "reranker" in source else DEMO / "dev.conll",
            "--out",
            tmp_path / "o",
        )
    )
    assert (
        code == 1
        and _one_error_line(err)
        == f"nerstudio: error: {bad}: no readable header (JSON nested too deeply)"
    )


def test_deep_json_inside_an_array_is_refused(tmp_path):
    a = _arrays(DEMO_MODEL / "dev.nbest.npz")
    a["words"] = np.frombuffer(b"[" * 30000 + b"]" * 30000, dtype=np.uint8)
    bad = _save(tmp_path / "n.npz", a)
    with pytest.raises(FormatError, match="corrupt N-best file: JSON nested too deeply"):
        NBestList.load(bad)


_PEAK = r"""
import re, sys
from nerstudio.errors import NerstudioError
from nerstudio.nbest import NBestList
from nerstudio.rerank.model import RerankerModel
def status(key):
    return int(re.search(key + r":\s+(\d+) kB", open("/proc/self/status").read()).group(1))
open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS")
try:
    (NBestList if sys.argv[1] == "nbest" else RerankerModel).load(sys.argv[2])
    print("loaded")
except NerstudioError as exc:
    print("error:", exc)
print("PEAK_MB", (status("VmHWM") - before) / 1024)
"""


def _can_measure_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _bomb(path: Path, arrays: dict, name: str, nbytes: int) -> Path:
    """``arrays`` with ``name`` replaced by ``nbytes`` of float64 zeros, deflated (a zip bomb:
    real data, about 1,000 times smaller stored), streamed so that building it takes no memory."""
    import io
    import zipfile

    import numpy.lib.format as npformat

    _save(path, {k: v for k, v in arrays.items() if k != name}, compressed=False)
    head = io.BytesIO()
    npformat.write_array_header_1_0(
        head, {"descr": "<f8", "fortran_order": False, "shape": (nbytes // 8,)}
    )
    with (
        zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z,
        z.open(name + ".npy", "w", force_zip64=True) as f,
    ):
        f.write(head.getvalue())
        zeros = bytes(16 << 20)
        for _ in range(nbytes // len(zeros)):
            f.write(zeros)
    return path


@pytest.mark.slow
@pytest.mark.skipif(
    not _can_measure_peak(), reason="needs Linux /proc/self/clear_refs to measure peak memory"
)
@pytest.mark.parametrize(
    "kind,source,array,nbytes",
    [
        ("nbest", "dev.nbest.npz", "logprobs", 2**30),
        ("reranker", "reranker.npz", "learner_alpha", 2**27),
    ],
)
def test_a_small_file_declaring_a_gigabyte_is_refused_before_it_is_read(
    tmp_path, kind, source, array, nbytes
):
    """The issue's case (a file of a few MB declaring 1 GiB took 1-2 GB to load), and a smaller one."""
    bad = _bomb(tmp_path / source, _arrays(DEMO_MODEL / source), array, nbytes)
    assert bad.stat().st_size < nbytes / 100
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK, kind, str(bad)], capture_output=True, text=True, check=True
    )
    assert f"error: {bad}: corrupt" in proc.stdout
    assert f"array '{array}' declares {'1.0 GB' if nbytes == 2**30 else '128.0 MB'}" in proc.stdout
    peak = float(proc.stdout.split("PEAK_MB")[1])
    assert peak < 50, f"loading took {peak:.0f} MB"


def _npy(arr: np.ndarray, shape=None) -> bytes:
    """``arr`` as .npy bytes whose header may declare another ``shape``."""
    import io

    import numpy.lib.format as npformat

    buf = io.BytesIO()
    npformat.write_array_header_1_0(
        buf,
        {
            "descr": npformat.dtype_to_descr(arr.dtype),
            "fortran_order": False,
            "shape": arr.shape if shape is None else shape,
        },
    )
    buf.write(arr.tobytes())
    return buf.getvalue()


def test_an_array_header_that_lies_about_its_size_is_refused(tmp_path):
    """The .npy header of 'logprobs' declares 2**27 numbers (1 GiB); the archive holds 1,000."""
    import zipfile

    a = _arrays(DEMO_MODEL / "dev.nbest.npz")
    bad = tmp_path / "lie.npz"
    with zipfile.ZipFile(bad, "w") as z:
        for name, arr in a.items():
            z.writestr(name + ".npy", _npy(arr, (2**27,) if name == "logprobs" else None))
    with pytest.raises(FormatError) as info:
        NBestList.load(bad)
    assert str(info.value).startswith(
        f"{bad}: not an N-best file (.npz): array 'logprobs' declares 1,073,741,"
    )


def test_nbest_sizes_are_checked_against_each_other_before_reading(tmp_path):
    a = _arrays(DEMO_MODEL / "dev.nbest.npz")
    a["tags"] = a["tags"][:-1]
    with pytest.raises(FormatError, match=r"tags must hold \d+ integers"):
        NBestList.load(_save(tmp_path / "short.npz", a))
    a = _arrays(DEMO_MODEL / "dev.nbest.npz")
    h = _header(a)
    h["ids"] = h["ids"][:-1]
    with pytest.raises(FormatError, match="lengths must hold one integer per sentence"):
        NBestList.load(_save(tmp_path / "ids.npz", _with_header(a, h)))


@pytest.mark.parametrize(
    "gold",
    [
        [[[0, 99, "X"]]],
        [[[1.5, 2, "X"]]],
        [[[0, 2, "X"], [1, 3, "Y"]]],
        [[[0, 1, None]]],
        [[["a", 1, "X"]]],
        5,
    ],
)
def test_bad_gold_spans_in_an_nbest_file_are_refused(tmp_path, gold):
    a = _arrays(DEMO_MODEL / "dev.nbest.npz")
    g = json.loads(a["gold"].tobytes())
    if isinstance(gold, list):
        g[0] = gold[0]
    else:
        g = gold
    a["gold"] = np.frombuffer(json.dumps(g).encode(), dtype=np.uint8)
    with pytest.raises(FormatError, match="corrupt N-best file"):
        NBestList.load(_save(tmp_path / "g.npz", a))


def test_every_model_error_names_the_file_and_exits_1(tmp_path, capsys):
    cases = {
        "missing.npz": None,
        "empty.npz": b"",
        "garbage.npz": b"PK\x03\x04garbage",
        "text.npz": b"EU B-ORG\n",
        "folder.npz": "dir",
    }
    for name, content in cases.items():
        path = tmp_path / name
        if content == "dir":
            path.mkdir()
        elif content is not None:
            path.write_bytes(content)
        for argv in (
            ["rerank", path, DEMO_MODEL / "dev.nbest.npz", "--out", tmp_path / "o"],
            ["tag", path, DEMO / "dev.conll", "--out", tmp_path / "o"],
            ["nbest", path, DEMO / "dev.conll", "--out", tmp_path / "o"],
            ["rerank", DEMO_MODEL / "reranker.npz", path, "--out", tmp_path / "o"],
            ["train-reranker", "--train", path, "--algo", "boost", "--out", tmp_path / "o"],
        ):
            code, _, err = _cli(capsys, *argv)
            assert code == 1, (name, argv[0])
            assert _one_error_line(err).startswith(f"nerstudio: error: {path}: "), (
                name,
                argv[0],
                err,
            )
    assert not (tmp_path / "o").exists()


def test_load_npz_reads_arrays_lazily_and_reports_declared_shapes(tmp_path):
    header, arrays = load_npz(DEMO_MODEL / "dev.nbest.npz", "nerstudio-nbest", 1, "an N-best file")
    assert (
        arrays.shape("lengths") == (len(header["ids"]),) and arrays.dtype("logprobs") == np.float64
    )
    assert "header" not in arrays and "tags" in arrays
    assert arrays["lengths"] is arrays["lengths"]  # read once


# --------------------------------------------------------------------------------------------
# The application's command line


@pytest.mark.slow
def test_main_py_with_a_bad_corpus_shows_one_message_not_a_traceback(tmp_path):
    bad = _write(tmp_path / "bad.jsonl", '{"text": "a b", "spans": 5}\n')
    script = (
        "import sys\n"
        "from PySide6.QtWidgets import QApplication, QMessageBox\n"
        "shown = []\n"
        "QMessageBox.critical = staticmethod(lambda parent, title, text, *a, **k: shown.append((title, text)))\n"
        "QApplication.exec = lambda self: 0\n"
        "from nerstudio.gui.app import main\n"
        "rc = main(sys.argv[1:])\n"
        "print(repr(shown))\n"
        "sys.exit(rc)\n"
    )
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "cfg"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        NERSTUDIO_LOG_DIR=str(tmp_path / "logs"),
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(bad)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0
    message = f'{bad}:1: "spans" must be a list of spans'
    assert message in proc.stdout and "Cannot open corpus" in proc.stdout
    errors = [x for x in proc.stderr.splitlines() if x.startswith("nerstudio: ")]
    assert len(errors) == 1 and errors[0].startswith(f"nerstudio: error: {message}")
    assert f"cannot open {bad}: {message}" in (tmp_path / "logs" / "nerstudio.log").read_text()


def test_readers_raise_only_project_errors_for_files_they_cannot_open(tmp_path):
    if os.name != "posix" or os.geteuid() == 0:
        pytest.skip("needs a user for whom permissions apply")
    path = _write(tmp_path / "locked.conll", "a O\n")
    path.chmod(0)
    with pytest.raises(NerstudioError, match="cannot read"):
        read_corpus(path, format="conll2003")
