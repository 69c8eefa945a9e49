"""Readers and writers: lossless round trips, detection, conversion, editing, atomic writing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nerstudio.corpus import (  # noqa: F401
    SCHEMES,
    Corpus,
    Document,
    Sentence,
    Span,
    Token,
    convert_file,
    encode,
    formats,
    iter_sentences,
    normalize_format,
    read_corpus,
    sniff_format,
    write_corpus,
    writing,
)
from nerstudio.errors import FormatError

# --------------------------------------------------------------------------------------------
# Samples

CONLL2003 = """\
-DOCSTART- -X- -X- O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O
. . O O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER

-DOCSTART- -X- -X- O

Germany NNP I-NP I-LOC
France NNP I-NP B-LOC
and CC O O
the DT I-NP O
Atlanta NNP I-NP B-MISC
Games NNPS I-NP I-MISC

Sunday NNP I-NP O
"""
CONLL2003_WORDS = [
    ["EU", "rejects", "German", "call", "."],
    ["Peter", "Blackburn"],
    ["Germany", "France", "and", "the", "Atlanta", "Games"],
    ["Sunday"],
]
CONLL2003_SPANS = [
    [Span(0, 1, "ORG"), Span(2, 3, "MISC")],
    [Span(0, 2, "PER")],
    [Span(0, 1, "LOC"), Span(1, 2, "LOC"), Span(4, 6, "MISC")],
    [],
]

DUTCH = """\
-DOCSTART- -DOCSTART- O
De Art O
tekst N O
van Prep O
Justitie N B-ORG
. Punc O

Een Art O
Belg N B-MISC
. Punc O
-DOCSTART- -DOCSTART- O
Brussel N B-LOC
en Conj O
Jan N B-PER
Peeters N I-PER

"""
DUTCH_WORDS = [
    ["De", "tekst", "van", "Justitie", "."],
    ["Een", "Belg", "."],
    ["Brussel", "en", "Jan", "Peeters"],
]
DUTCH_SPANS = [[Span(3, 4, "ORG")], [Span(1, 2, "MISC")], [Span(0, 1, "LOC"), Span(2, 4, "PER")]]

TSV = (
    "@paulwalk\tO\nEmpire\tB-location\nState\tI-location\nBuilding\tI-location\n=\tO\nESB\tB-location\n"
    "\t\n"  # whitespace-only separator
    "From\tO\nApple\tB-corporation\nInc \tI-corporation\n\tO\n\U0001f600 \tO\n"
    "\n"
    "lol\tO\n \tO\n"
)
TSV_WORDS = [
    ["@paulwalk", "Empire", "State", "Building", "=", "ESB"],
    ["From", "Apple", "Inc ", "", "\U0001f600 "],
    ["lol", " "],
]
TSV_SPANS = [[Span(1, 4, "location"), Span(5, 6, "location")], [Span(1, 3, "corporation")], []]

TWO_COL = """\
010 I-MISC
is O
the O
Russian I-MISC
singer O
. O

-DOCSTART- O

Bobby I-PER
. O

-DOCSTART- O
"""
TWO_COL_WORDS = [["010", "is", "the", "Russian", "singer", "."], ["Bobby", "."]]
TWO_COL_SPANS = [[Span(0, 1, "MISC"), Span(3, 4, "MISC")], [Span(0, 1, "PER")]]

JSONL = (
    '{"text": "EU rejects German call.", "spans": [{"start": 0, "end": 2, "label": "ORG"}, '
    '{"start": 11, "end": 17, "label": "MISC"}]}\n'
    '{"text": "Peter  Blackburn", "tokens": ["Peter", "Blackburn"], "spans": [[0, 16, "PER"]]}\n'
    '{"doc_id": "d2", "text": "BRUSSELS 1996-08-22", "entities": [[0, 9, "LOC"]]}\n'
    '{"doc_id": "d2", "text": "Anti-Nazi protest \\u00e9t\\u00e9", "label": [[5, 9, "MISC"]], "meta": {"k": 1}}\n'
    '{"doc_id": 3, "tokens": ["Jan", "Peeters"], "spans": []}\n'
)
JSONL_WORDS = [
    ["EU", "rejects", "German", "call", "."],
    ["Peter", "Blackburn"],
    ["BRUSSELS", "1996-08-22"],
    ["Anti-", "Nazi", "protest", "été"],
    ["Jan", "Peeters"],
]
JSONL_SPANS = [
    [Span(0, 1, "ORG"), Span(2, 3, "MISC")],
    [Span(0, 2, "PER")],
    [Span(0, 1, "LOC")],
    [Span(1, 2, "MISC")],
    [],
]

SAMPLES = {
    # name: (text, format, scheme, words, spans, number of documents)
    "conll2003": (CONLL2003, "conll2003", "iob1", CONLL2003_WORDS, CONLL2003_SPANS, 2),
    "dutch": (DUTCH, "conll2002", "iob2", DUTCH_WORDS, DUTCH_SPANS, 2),
    "tsv": (TSV, "tsv", "iob2", TSV_WORDS, TSV_SPANS, 1),
    "two_col": (TWO_COL, "columns", "iob1", TWO_COL_WORDS, TWO_COL_SPANS, 2),
    "jsonl": (JSONL, "jsonl", "iob2", JSONL_WORDS, JSONL_SPANS, 3),
}


def write_bytes(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def words_of(corpus: Corpus):
    return [list(s.words) for s in corpus.sentences]


def spans_of(corpus: Corpus):
    return [list(s.spans) for s in corpus.sentences]


def no_temp_files(folder: Path) -> bool:
    return not [p for p in os.listdir(folder) if p.endswith(".tmp")]


# --------------------------------------------------------------------------------------------
# Reading the samples


@pytest.mark.parametrize("name", SAMPLES)
def test_read_sample(tmp_path, name):
    text, fmt, scheme, words, spans, ndocs = SAMPLES[name]
    path = write_bytes(tmp_path / f"{name}.txt", text)
    c = read_corpus(path)
    assert c.format == fmt
    assert c.scheme == scheme
    assert words_of(c) == words
    assert spans_of(c) == spans
    assert len(c.documents) == ndocs
    assert c.path == str(path)
    assert c.n_tokens == sum(map(len, words))
    # streaming gives the same sentences
    streamed = list(iter_sentences(path))
    assert [list(s.words) for s in streamed] == words
    assert [list(s.spans) for s in streamed] == spans


def test_conll2003_details(tmp_path):
    c = read_corpus(write_bytes(tmp_path / "a.conll", CONLL2003))
    assert c.ncols == 4 and c.sep == " "
    assert c.documents[0].docstart == "-DOCSTART- -X- -X- O"
    assert c.repairs == 1  # "Atlanta" B-MISC after O is an IOB1 irregularity
    s = c.sentences[0]
    assert s.line == 3
    assert s.extra == (("NNP", "VBZ", "JJ", "NN", "."), ("I-NP", "I-VP", "I-NP", "I-NP", "O"))
    assert s.tags == ("I-ORG", "O", "I-MISC", "O", "O")
    assert s.tokens[2] == Token("German", ("JJ", "I-NP"), 2)
    assert s.entity_texts() == [("ORG", "EU"), ("MISC", "German")]
    assert c.labels == ["LOC", "MISC", "ORG", "PER"]
    assert c.sentence_document() == [0, 0, 1, 1]
    assert [s.line for s in c.sentences] == [3, 9, 14, 21]


def test_dutch_docstart_not_followed_by_blank(tmp_path):
    c = read_corpus(write_bytes(tmp_path / "ned.testa", DUTCH))
    assert [len(d.sentences) for d in c.documents] == [2, 1]
    assert c.documents[1].docstart == "-DOCSTART- -DOCSTART- O"
    assert c.sentences[0].line == 2


def test_tsv_details(tmp_path):
    c = read_corpus(write_bytes(tmp_path / "t.conll", TSV))
    assert c.sep == "\t" and c.ncols == 2
    assert "\t" in c.layout  # the whitespace-only separator is kept verbatim


def test_jsonl_details(tmp_path):
    c = read_corpus(write_bytes(tmp_path / "c.jsonl", JSONL))
    assert [d.id for d in c.documents] == ["1", "d2", "3"]
    assert [len(d.sentences) for d in c.documents] == [2, 2, 1]
    assert [s.line for s in c.sentences] == [1, 2, 3, 4, 5]


# --------------------------------------------------------------------------------------------
# Lossless round trips


def _variants(text: str) -> dict[str, bytes]:
    b = text.encode("utf-8")
    return {
        "plain": b,
        "crlf": b.replace(b"\n", b"\r\n"),
        "bom": b"\xef\xbb\xbf" + b,
        "bom_crlf": b"\xef\xbb\xbf" + b.replace(b"\n", b"\r\n"),
        "no_final_newline": b.rstrip(b"\n"),
        "crlf_no_final_newline": b.rstrip(b"\n").replace(b"\n", b"\r\n"),
    }


@pytest.mark.parametrize("variant", list(_variants("x")))
@pytest.mark.parametrize("name", SAMPLES)
def test_round_trip_byte_identical(tmp_path, name, variant):
    text, fmt, scheme, words, spans, _ = SAMPLES[name]
    data = _variants(text)[variant]
    src = write_bytes(tmp_path / "in.txt", data)
    c = read_corpus(src)
    assert words_of(c) == words and spans_of(c) == spans
    assert c.newline == ("\r\n" if "crlf" in variant else "\n")
    assert c.bom == ("bom" in variant)
    assert c.final_newline == ("no_final" not in variant)
    write_corpus(c, tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_bytes() == data
    # streaming conversion to the same format is lossless too
    convert_file(src, tmp_path / "out2.txt")
    assert (tmp_path / "out2.txt").read_bytes() == data
    # and so is forcing the format that would be detected
    write_corpus(read_corpus(src, format=fmt, scheme=scheme), tmp_path / "out3.txt")
    assert (tmp_path / "out3.txt").read_bytes() == data
    assert no_temp_files(tmp_path)


def test_round_trip_in_place(tmp_path):
    path = write_bytes(tmp_path / "a.conll", CONLL2003)
    write_corpus(read_corpus(path), path)
    assert path.read_text() == CONLL2003
    convert_file(path, path)
    assert path.read_text() == CONLL2003
    assert no_temp_files(tmp_path)


def test_latin1_round_trip(tmp_path):
    data = "Río NC B-LOC\nés V O\n".encode("latin-1")
    path = write_bytes(tmp_path / "esp.txt", data)
    c = read_corpus(path, encoding="latin-1")
    assert words_of(c) == [["Río", "és"]]
    write_corpus(c, tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_bytes() == data
    # converting the encoding: same text, UTF-8 bytes
    write_corpus(c, tmp_path / "utf8.txt", encoding="utf-8")
    assert (tmp_path / "utf8.txt").read_bytes() == data.decode("latin-1").encode("utf-8")


@pytest.mark.parametrize("encoding", ["utf-8", "UTF8", "utf_8", "utf-8-sig", "U8"])
@pytest.mark.parametrize("bom", [True, False])
def test_bom_with_every_spelling_of_utf8(tmp_path, encoding, bom):
    data = (b"\xef\xbb\xbf" if bom else b"") + "Zürich B-LOC\n".encode()
    path = write_bytes(tmp_path / "in.txt", data)
    c = read_corpus(path, encoding=encoding)
    assert c.bom == bom and words_of(c) == [["Zürich"]]  # the BOM is not part of the first word
    write_corpus(c, tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_bytes() == data
    convert_file(path, tmp_path / "conv.txt", encoding=encoding)
    assert (tmp_path / "conv.txt").read_bytes() == data


def test_utf8_sig_target_gets_one_bom(tmp_path):
    c = read_corpus(write_bytes(tmp_path / "in.txt", "a O\n"))
    write_corpus(c, tmp_path / "sig.txt", encoding="utf-8-sig")
    assert (tmp_path / "sig.txt").read_bytes() == b"\xef\xbb\xbfa O\n"
    write_corpus(c, tmp_path / "sig.jsonl", format="jsonl", encoding="utf-8-sig")
    assert (tmp_path / "sig.jsonl").read_bytes().startswith(b"\xef\xbb\xbf{")
    assert read_corpus(tmp_path / "sig.jsonl").sentences[0].words == ("a",)


def test_mixed_newlines_fall_back_to_canonical_layout(tmp_path):
    path = write_bytes(tmp_path / "m.txt", b"a O\r\nb B-X\n\nc O\r\n")
    c = read_corpus(path)
    assert words_of(c) == [["a", "b"], ["c"]]
    assert c.layout is None
    write_corpus(c, tmp_path / "out.txt")
    again = read_corpus(tmp_path / "out.txt")
    assert words_of(again) == words_of(c) and spans_of(again) == spans_of(c)
    # the streaming converter keeps the layout and uses the first line's ending throughout
    reader = convert_file(path, tmp_path / "conv.txt")
    assert reader.mixed_newlines
    assert (tmp_path / "conv.txt").read_bytes() == b"a O\r\nb B-X\r\n\r\nc O\r\n"


# --------------------------------------------------------------------------------------------
# Detection and forcing


@pytest.mark.parametrize("name", SAMPLES)
def test_sniff_format(tmp_path, name):
    text, fmt, *_ = SAMPLES[name]
    assert sniff_format(str(write_bytes(tmp_path / "x", text))) == fmt
    assert sniff_format(str(write_bytes(tmp_path / "y", b"\xef\xbb\xbf" + text.encode()))) == fmt


@pytest.mark.parametrize(
    "text,fmt",
    [
        ("a b c d e O\n", "columns"),
        ("a O\n", "columns"),
        ("\n\n-DOCSTART- -X- -X- O\n\na B C O\n", "conll2003"),
        ("-DOCSTART-\tO\n", "tsv"),
        ("-DOCSTART- O\n", "conll2003"),
        ("", "conll2003"),
        ('  {"text": "a"}\n', "jsonl"),
    ],
)
def test_sniff_format_cases(tmp_path, text, fmt):
    assert sniff_format(str(write_bytes(tmp_path / "x", text))) == fmt


def test_sniff_long_first_lines(tmp_path):
    """A file whose first 64 KiB hold one partial line still sniffs (the line is complete)."""
    line = " ".join(["w"] * 40000) + "\n"
    path = write_bytes(tmp_path / "x", "a B C O\n" + line)
    assert sniff_format(str(path)) == "conll2003"


def test_force_format(tmp_path):
    path = write_bytes(tmp_path / "a.conll", CONLL2003)
    c = read_corpus(path, format="columns")
    assert (
        c.format == "columns" and words_of(c) == CONLL2003_WORDS and spans_of(c) == CONLL2003_SPANS
    )
    write_corpus(c, tmp_path / "out")
    assert (tmp_path / "out").read_text() == CONLL2003
    # forcing the scheme: read as IOB2, the B-LOC after I-LOC still starts a new entity
    c2 = read_corpus(path, scheme="bio")
    assert c2.scheme == "iob2" and spans_of(c2) == CONLL2003_SPANS
    assert c2.repairs == 4  # every I- that starts an entity is an IOB2 repair


def test_force_tsv_as_space_format_hints(tmp_path):
    path = write_bytes(tmp_path / "t.conll", "Empire\tB-location\n")
    with pytest.raises(FormatError, match=r"t\.conll:1: .*try --from tsv"):
        read_corpus(path, format="conll2002")


@pytest.mark.parametrize(
    "name,expected",
    [
        ("CoNLL", "conll2003"),
        ("conll03", "conll2003"),
        ("conll02", "conll2002"),
        ("TSV", "tsv"),
        ("wnut", "tsv"),
        ("json", "jsonl"),
        ("2col", "columns"),
        ("columns", "columns"),
    ],
)
def test_normalize_format(name, expected):
    assert normalize_format(name) == expected


def test_normalize_format_unknown():
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        normalize_format("xml")


# --------------------------------------------------------------------------------------------
# Conversion between formats and schemes


@pytest.mark.parametrize("target", ["jsonl", "tsv", "columns", "conll2002", "conll2003"])
@pytest.mark.parametrize("name", SAMPLES)
def test_convert_keeps_words_spans_documents(tmp_path, name, target):
    text, fmt, scheme, words, spans, ndocs = SAMPLES[name]
    if target in ("conll2003", "conll2002", "columns") and any(
        " " in w for ws in words for w in ws
    ):
        pytest.skip("tokens with spaces cannot be written to a space-separated format")
    src = write_bytes(tmp_path / "in", text)
    c = read_corpus(src)
    out = tmp_path / f"out.{target}"
    write_corpus(c, out, format=target)
    back = read_corpus(out, format=target)
    assert words_of(back) == words
    assert spans_of(back) == spans
    assert len(back.documents) == ndocs
    # the streaming converter gives the same words, spans and documents
    convert_file(src, tmp_path / "streamed", to_format=target)
    streamed = read_corpus(tmp_path / "streamed", format=target)
    assert words_of(streamed) == words and spans_of(streamed) == spans
    assert len(streamed.documents) == ndocs
    # and back to the source format gives the same words and spans
    write_corpus(back, tmp_path / "again", format=fmt, scheme=scheme)
    again = read_corpus(tmp_path / "again", format=fmt)
    assert words_of(again) == words and spans_of(again) == spans


def test_conll2003_to_jsonl_and_back(tmp_path):
    src = write_bytes(tmp_path / "eng.testb", CONLL2003)
    convert_file(src, tmp_path / "c.jsonl", to_format="jsonl")
    records = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert records[0] == {
        "doc_id": "1",
        "text": "EU rejects German call .",
        "tokens": ["EU", "rejects", "German", "call", "."],
        "spans": [
            {"start": 0, "end": 2, "label": "ORG"},
            {"start": 11, "end": 17, "label": "MISC"},
        ],
        "columns": [["NNP", "VBZ", "JJ", "NN", "."], ["I-NP", "I-VP", "I-NP", "I-NP", "O"]],
    }
    assert [r["doc_id"] for r in records] == ["1", "1", "2", "2"]
    convert_file(
        tmp_path / "c.jsonl", tmp_path / "back.conll", to_format="conll2003", scheme="iob1"
    )
    back = read_corpus(tmp_path / "back.conll")
    assert back.scheme == "iob1"
    assert words_of(back) == CONLL2003_WORDS and spans_of(back) == CONLL2003_SPANS
    assert [len(d.sentences) for d in back.documents] == [2, 2]
    # the canonical IOB1 encoding: B- only between same-type neighbours (Atlanta is now I-MISC)
    assert back.sentences[2].tags == ("I-LOC", "B-LOC", "O", "O", "I-MISC", "I-MISC")


@pytest.mark.parametrize(
    "scheme,tags",
    [
        ("iob2", ("B-LOC", "B-LOC", "O", "O", "B-MISC", "I-MISC")),
        ("bioes", ("S-LOC", "S-LOC", "O", "O", "B-MISC", "E-MISC")),
        ("bilou", ("U-LOC", "U-LOC", "O", "O", "B-MISC", "L-MISC")),
        ("scn", ("S-LOC", "S-LOC", "N", "N", "S-MISC", "C-MISC")),
        (
            "iob1",
            ("I-LOC", "B-LOC", "O", "O", "B-MISC", "I-MISC"),
        ),  # same scheme: original tags kept
    ],
)
def test_convert_scheme(tmp_path, scheme, tags):
    src = write_bytes(tmp_path / "eng", CONLL2003)
    out = tmp_path / f"out.{scheme}"
    convert_file(src, out, scheme=scheme)
    c = read_corpus(out)
    assert c.scheme == scheme
    assert c.sentences[2].tags == tags
    assert words_of(c) == CONLL2003_WORDS and spans_of(c) == CONLL2003_SPANS
    # layout (-DOCSTART- lines, blank lines) is kept in a same-format conversion
    lines = out.read_text().splitlines()
    assert lines[0] == "-DOCSTART- -X- -X- O" and lines[1] == ""
    assert len(lines) == len(CONLL2003.splitlines())
    write_corpus(read_corpus(src), tmp_path / "api", scheme=scheme)
    assert (tmp_path / "api").read_bytes() == out.read_bytes()


def test_convert_dutch_to_conll2003_layout(tmp_path):
    src = write_bytes(tmp_path / "ned", DUTCH)
    convert_file(src, tmp_path / "out", to_format="conll2003")
    lines = (tmp_path / "out").read_text().splitlines()
    assert lines[:3] == ["-DOCSTART- -X- -X- O", "", "De Art -X- O"]
    c = read_corpus(tmp_path / "out")
    assert c.format == "conll2003" and words_of(c) == DUTCH_WORDS and spans_of(c) == DUTCH_SPANS
    assert [len(d.sentences) for d in c.documents] == [2, 1]


def test_convert_conll2003_to_dutch_layout(tmp_path):
    src = write_bytes(tmp_path / "eng", CONLL2003)
    convert_file(src, tmp_path / "out", to_format="conll2002")
    lines = (tmp_path / "out").read_text().splitlines()
    assert lines[:2] == ["-DOCSTART- -DOCSTART- O", "EU NNP I-ORG"]
    c = read_corpus(tmp_path / "out")
    assert c.format == "conll2002" and [len(d.sentences) for d in c.documents] == [2, 2]


def test_code_built_corpus_canonical_layout(tmp_path):
    corpus = Corpus(
        [Document([Sentence(["A", "b"], [Span(0, 1, "X")])]), Document([Sentence(["c"], [])])]
    )
    write_corpus(corpus, tmp_path / "o.conll")
    assert (tmp_path / "o.conll").read_text() == (
        "-DOCSTART- -X- -X- O\n\nA -X- -X- B-X\nb -X- -X- O\n\n-DOCSTART- -X- -X- O\n\nc -X- -X- O\n\n"
    )
    write_corpus(corpus, tmp_path / "o.tsv", format="tsv", scheme="bioes")
    assert (
        tmp_path / "o.tsv"
    ).read_text() == "-DOCSTART-\tO\n\nA\tS-X\nb\tO\n\n-DOCSTART-\tO\n\nc\tO\n\n"
    single = Corpus.from_sentences([Sentence(["A"], [Span(0, 1, "")])])
    write_corpus(single, tmp_path / "s.txt", format="columns", scheme="scn")
    assert (tmp_path / "s.txt").read_text() == "A S\n\n"


# --------------------------------------------------------------------------------------------
# Editing: only edited sentences are re-encoded


def test_edit_reencodes_only_that_sentence(tmp_path):
    src = write_bytes(tmp_path / "eng", CONLL2003)
    c = read_corpus(src)
    c.sentences[1].spans = [Span(0, 1, "PER"), Span(1, 2, "PER")]  # split "Peter Blackburn"
    write_corpus(c, tmp_path / "out")
    old, new = CONLL2003.splitlines(), (tmp_path / "out").read_text().splitlines()
    diff = [(a, b) for a, b in zip(old, new) if a != b]
    assert diff == [("Blackburn NNP I-NP I-PER", "Blackburn NNP I-NP B-PER")]
    assert len(old) == len(new)
    # the untouched irregular "Atlanta ... B-MISC" (IOB1 B- after O) keeps its tag
    assert "Atlanta NNP I-NP B-MISC" in new


def test_edit_irregular_sentence_is_normalised(tmp_path):
    src = write_bytes(tmp_path / "eng", CONLL2003)
    c = read_corpus(src)
    s = c.sentences[2]
    s.spans = s.spans[:2]  # drop "Atlanta Games"
    write_corpus(c, tmp_path / "out")
    text = (tmp_path / "out").read_text()
    assert "Atlanta NNP I-NP O" in text and "Games NNPS I-NP O" in text
    assert "France NNP I-NP B-LOC" in text


def test_edit_iob2_keeps_stray_i_elsewhere(tmp_path):
    text = "a B-X\nb I-X\n\nc O\nd I-Y\n\ne B-Y\n"  # sentence 2 has an IOB2 stray I-Y
    src = write_bytes(tmp_path / "x", text)
    c = read_corpus(src, scheme="iob2")
    assert c.repairs == 1
    c.sentences[0].spans = []
    write_corpus(c, tmp_path / "out")
    assert (tmp_path / "out").read_text() == "a O\nb O\n\nc O\nd I-Y\n\ne B-Y\n"


def test_with_spans_writes_a_prediction(tmp_path):
    src = write_bytes(tmp_path / "eng", CONLL2003)
    c = read_corpus(src)
    pred = c.with_spans([[], *spans_of(c)[1:]])
    assert pred.layout == c.layout and pred.layout is not c.layout
    write_corpus(pred, tmp_path / "pred")
    out = (tmp_path / "pred").read_text().splitlines()
    assert out[2:7] == [
        "EU NNP I-NP O",
        "rejects VBZ I-VP O",
        "German JJ I-NP O",
        "call NN I-NP O",
        ". . O O",
    ]
    assert out[7:] == CONLL2003.splitlines()[7:]
    assert spans_of(c)[0]  # the gold corpus itself is unchanged
    with pytest.raises(ValueError):
        c.with_spans([[]])


def test_edit_jsonl_record(tmp_path):
    src = write_bytes(tmp_path / "c.jsonl", JSONL)
    c = read_corpus(src)
    c.sentences[0].spans = [Span(1, 3, "X")]
    c.sentences[2].spans = []
    write_corpus(c, tmp_path / "out.jsonl")
    old, new = JSONL.splitlines(), (tmp_path / "out.jsonl").read_text().splitlines()
    assert new[1] == old[1] and new[3:] == old[3:]
    assert json.loads(new[0]) == {
        "text": "EU rejects German call.",
        "spans": [{"start": 3, "end": 17, "label": "X"}],
    }
    rec = json.loads(new[2])
    assert rec["doc_id"] == "d2" and rec["entities"] == []
    again = read_corpus(tmp_path / "out.jsonl")
    assert spans_of(again)[0] == [Span(1, 3, "X")] and spans_of(again)[2] == []
    assert words_of(again) == JSONL_WORDS


def test_edit_jsonl_keeps_tokenisation(tmp_path):
    """Without "tokens", span boundaries split words; removing the span must not merge them back."""
    src = write_bytes(
        tmp_path / "c.jsonl",
        '{"text": "Anti-Nazi protest", "label": [[5, 9, "MISC"]]}\n'
        '{"text": "New York-based", "spans": [[0, 8, "LOC"]]}\n',
    )
    c = read_corpus(src)
    assert words_of(c) == [["Anti-", "Nazi", "protest"], ["New", "York", "-based"]]
    c.sentences[0].spans = []
    c.sentences[1].spans = [Span(0, 1, "LOC")]
    write_corpus(c, tmp_path / "out.jsonl")
    again = read_corpus(tmp_path / "out.jsonl")
    assert words_of(again) == words_of(c)
    assert spans_of(again) == [[], [Span(0, 1, "LOC")]]
    first = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert first == {
        "text": "Anti-Nazi protest",
        "label": [],
        "tokens": ["Anti-", "Nazi", "protest"],
    }
    # an edit that keeps the tokenisation reproducible adds nothing
    c.sentences[0].spans = [Span(1, 2, "MISC"), Span(2, 3, "X")]
    write_corpus(c, tmp_path / "out2.jsonl")
    assert "tokens" not in json.loads((tmp_path / "out2.jsonl").read_text().splitlines()[0])


def test_sentence_copy_and_validation():
    s = Sentence(
        ["a", "b"], [Span(1, 2, "X"), (0, 1, "Y")], extra=[["P", "Q"]], tags=["B-Y", "B-X"], line=3
    )
    assert s.spans == [Span(0, 1, "Y"), Span(1, 2, "X")]
    t = s.copy([Span(0, 2, "Z")])
    assert t.words is s.words and t.spans == [Span(0, 2, "Z")] and s.spans[0].label == "Y"
    assert len(Span(2, 5, "X")) == 3 and Span(0, 2, "X").text(["a", "b"]) == "a b"
    # len() counts tokens, yet the namedtuple API keeps working
    assert Span(0, 1, "X")._replace(end=4) == Span(0, 4, "X")
    assert Span._make([1, 2, "Y"]) == Span(1, 2, "Y") and Span(1, 2, "Y")._asdict()["label"] == "Y"
    with pytest.raises(ValueError):
        Sentence(["a", "b"], extra=[["P"]])


# --------------------------------------------------------------------------------------------
# Atomic writing


def test_failing_writer_leaves_target_unchanged(tmp_path, monkeypatch):
    src = write_bytes(tmp_path / "eng", CONLL2003)
    target = write_bytes(tmp_path / "target", "old contents\n")
    c = read_corpus(src)

    def broken(*args, **kw):
        yield "first line"
        yield "second line"
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(writing, "render_lines", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_corpus(c, target)
    assert target.read_text() == "old contents\n"
    assert no_temp_files(tmp_path)
    with pytest.raises(RuntimeError):
        convert_file(src, target)
    assert target.read_text() == "old contents\n"
    assert no_temp_files(tmp_path)


@pytest.mark.parametrize("fmt", ["conll2003", "jsonl"])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_unencodable_character_leaves_target_unchanged(tmp_path, where, fmt):
    words = [["Zurich", "is", "nice"], ["in", "May"], ["Sunday"]]
    k = {"first": 0, "middle": 1, "last": 2}[where]
    words[k][-1] = "Zürich"
    corpus = Corpus.from_sentences([Sentence(w, []) for w in words])
    target = write_bytes(tmp_path / "target", "old contents\n")
    if fmt == "jsonl":  # UTF-8 by definition: written in UTF-8 whatever the encoding asked
        write_corpus(corpus, target, format=fmt, encoding="ascii")
        assert "Zürich" in target.read_bytes().decode("utf-8")
        return
    with pytest.raises(FormatError) as info:
        write_corpus(corpus, target, format=fmt, encoding="ascii")
    line = [3, 6, 8][k]
    assert str(info.value).startswith(f"{target}:{line}: ") and "ascii" in str(info.value)
    assert "'ü'" in str(info.value)
    assert target.read_text() == "old contents\n"
    assert no_temp_files(tmp_path)


def test_latin1_reads_any_bytes_losslessly(tmp_path):
    from nerstudio.cli import main

    src = write_bytes(tmp_path / "in", "Zürich B-LOC\n")
    target = write_bytes(tmp_path / "out", "old\n")
    # latin-1 can read the UTF-8 bytes (as mojibake) and write them back: a lossless pass
    assert main(["convert", str(src), str(target), "--encoding", "latin-1"]) == 0
    assert target.read_bytes() == src.read_bytes()
    assert no_temp_files(tmp_path)


def test_write_into_missing_folder(tmp_path):
    c = Corpus.from_sentences([Sentence(["a"], [])])
    with pytest.raises(FormatError, match="does not exist"):
        write_corpus(c, tmp_path / "nope" / "out.txt")


def test_reading_error_midway_leaves_target_unchanged(tmp_path):
    src = write_bytes(tmp_path / "in", "a O\n\n" * 100 + "b O extra\n")
    target = write_bytes(tmp_path / "out", "old\n")
    for scheme in (
        None,
        "iob2",
    ):  # detected (fails while buffering) or forced (fails while writing)
        with pytest.raises(FormatError, match=r"in:201: ragged columns"):
            convert_file(src, target, to_format="jsonl", from_scheme=scheme)
        assert target.read_text() == "old\n"
        assert no_temp_files(tmp_path)


# --------------------------------------------------------------------------------------------
# Property: random corpora survive every format

_CHARS = st.characters(categories=("L", "N", "P", "S"))
_WORDS = st.text(_CHARS, min_size=1, max_size=5)
_LABELS = st.sampled_from(["PER", "LOC", "creative-work", ""])


@st.composite
def sentences(draw, n_extra: int):
    n = draw(st.integers(1, 6))
    words = draw(st.lists(_WORDS, min_size=n, max_size=n))
    # one action per token: O (outside), B (begin an entity) or C (continue the open one)
    actions = draw(st.lists(st.tuples(st.sampled_from("OBC"), _LABELS), min_size=n, max_size=n))
    spans: list[Span] = []
    for i, (act, lab) in enumerate(actions):
        if act == "C" and spans and spans[-1].end == i:
            spans[-1] = spans[-1]._replace(end=i + 1)
        elif act != "O":
            spans.append(Span(i, i + 1, lab))
    extra = [draw(st.lists(_WORDS, min_size=n, max_size=n)) for _ in range(n_extra)]
    return Sentence(words, spans, extra=extra)


@st.composite
def corpora(draw):
    n_extra = draw(st.integers(0, 2))
    docs = draw(
        st.lists(st.lists(sentences(n_extra), min_size=1, max_size=3), min_size=1, max_size=3)
    )
    return Corpus([Document(d) for d in docs])


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["conll2003", "conll2002", "columns", "tsv", "jsonl"])
@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(corpus=corpora(), scheme=st.sampled_from(SCHEMES), crlf=st.booleans())
def test_property_random_corpora_round_trip(tmp_path, monkeypatch, fmt, corpus, scheme, crlf):
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test here; speed is
    path = tmp_path / f"c.{fmt}"
    write_corpus(corpus, path, format=fmt, scheme=scheme)
    if crlf:
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    back = read_corpus(path, format=fmt)
    assert [[list(s.words) for s in d.sentences] for d in back.documents] == [
        [list(s.words) for s in d.sentences] for d in corpus.documents
    ]
    assert [[s.spans for s in d.sentences] for d in back.documents] == [
        [s.spans for s in d.sentences] for d in corpus.documents
    ]
    assert len(back.documents) == len(corpus.documents)
    if fmt in ("columns", "tsv") and corpus.sentences[0].extra:
        assert [s.extra for s in back.sentences] == [s.extra for s in corpus.sentences]
    write_corpus(back, tmp_path / "again")
    assert (tmp_path / "again").read_bytes() == path.read_bytes()
    # the sentences as read encode to exactly the tags in the file
    if fmt != "jsonl" and back.scheme == scheme:
        assert all(tuple(encode(s.spans, len(s), scheme)) == s.tags for s in back.sentences)


def test_a_sniffer_bug_is_not_hidden(tmp_path, monkeypatch):
    """Malformed input just is not a handler's format (the next one is asked), but a sniffer
    that breaks (a bug) surfaces instead of handing the file to a lower handler."""
    from nerstudio.corpus.foreign import prodigy

    p = write_bytes(tmp_path / "c.jsonl", '{"text": "EU rejects German call .", "spans": []}\n')
    assert sniff_format(p) == "jsonl"

    def malformed(path, head):
        raise ValueError("not JSON")

    monkeypatch.setattr(prodigy, "sniff", malformed)
    assert sniff_format(p) == "jsonl"

    def buggy(path, head):
        raise KeyError("a bug")

    monkeypatch.setattr(prodigy, "sniff", buggy)
    with pytest.raises(KeyError):
        sniff_format(p)


def test_jsonl_text_after_the_last_token_is_refused(tmp_path):
    # six words, four given as tokens: the last two would be dropped without a word
    p = tmp_path / "tail.jsonl"
    rec = {"text": "Ann met Bob in Oslo today", "tokens": ["Ann", "met", "Bob", "in"], "spans": []}
    p.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    for read in (lambda: read_corpus(p), lambda: list(iter_sentences(p))):
        with pytest.raises(FormatError) as err:
            read()
        assert err.value.line == 1 and "'Oslo today'" in err.value.message
    # trailing whitespace is no word: read as before
    rec["text"] = "Ann met Bob in  \n"
    p.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    assert read_corpus(p).sentences[0].words == ("Ann", "met", "Bob", "in")
