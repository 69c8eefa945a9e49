"""Plain text in (format ``text``): one document of sentences with exact offsets, detected only
when the content is no column corpus; never written; its offsets survive JSONL and brat."""

from __future__ import annotations

import json
import os

import pytest

from nerstudio.cli import main as cli_main
from nerstudio.corpus.detect import sniff_format
from nerstudio.corpus.formats import read_corpus, write_corpus
from nerstudio.corpus.model import Span
from nerstudio.errors import FormatError

TEXT = (
    "Maria Lopez flew from Vienna to Linz on Tuesday.  She met Dr. Smith of\tAcme Inc. there.\r\n"
    "\r\n"
    "Ärger in Zürich — «Schön»!\n"
)


def _write(tmp_path, name="doc.txt", text=TEXT):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return p


def test_plain_text_is_one_document_with_exact_offsets(tmp_path):
    p = _write(tmp_path)
    assert sniff_format(p) == "text"
    c = read_corpus(p)
    assert c.format == "text" and len(c.documents) == 1
    d = c.documents[0]
    assert d.text == TEXT
    assert len(c.sentences) == 3
    for s in c.sentences:
        assert s.source is d.text
        assert [TEXT[a:b] for a, b in s.offsets] == list(s.words)
        assert s.spans == []
    assert c.sentences[1].words[:4] == ("She", "met", "Dr.", "Smith")
    assert c.sentences[2].text() == "Ärger in Zürich — «Schön»!"


def test_column_corpora_named_txt_are_not_plain_text(tmp_path):
    cases = {
        "a.txt": "Confidence NN B-NP\nin IN B-PP\n\n",
        "b.txt": "EU\tB-ORG\nrejects\tO\n",
        "c.txt": "-DOCSTART- O\n\nJohn B-PER\nlives O\n",
        "d.txt": '{"text": "a b"}\n',
        "e.txt": "a B-PER\n\nb O\nc per\n",
    }
    for name, content in cases.items():
        assert sniff_format(_write(tmp_path, name, content)) != "text", name


@pytest.mark.slow
def test_real_column_corpora_named_txt_are_not_plain_text(shared_data, tmp_path):
    """Every corpus of ../shared/data, read in place through a symlink named .txt, is still
    detected as the column format it is."""
    n = 0
    for root, _, files in os.walk(shared_data):
        for f in files:
            src = os.path.join(root, f)
            if f.upper().startswith(("README", "LICENSE", "PROVENANCE")):
                continue
            link = tmp_path / f"{n}.txt"
            os.symlink(src, link)
            before = sniff_format(src)
            assert sniff_format(link) == before != "text", src
            n += 1
    assert n >= 10


def test_plain_text_is_not_written_and_the_cli_names_the_formats(tmp_path, capsys):
    p = _write(tmp_path)
    c = read_corpus(p)
    with pytest.raises(FormatError, match="jsonl .* brat"):
        write_corpus(c, tmp_path / "out.txt")
    assert p.read_bytes() == TEXT.encode("utf-8")
    code = cli_main(["convert", str(p), str(tmp_path / "x.txt"), "--to", "text"])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1 and "jsonl" in err and "brat" in err


def test_text_to_jsonl_to_brat_keeps_the_original_offsets(tmp_path, capsys):
    p = _write(tmp_path)
    out = tmp_path / "doc.jsonl"
    assert cli_main(["convert", str(p), str(out)]) == 0
    # annotate the JSONL as a tool would: spans are character offsets in each record's text
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sum(r.get("offset", 0) == TEXT.index(r["text"]) for r in records) == len(records)
    records[0]["spans"] = [
        {"start": 0, "end": 11, "label": "PER"},
        {"start": 22, "end": 28, "label": "LOC"},
    ]
    records[1]["spans"] = [
        {"start": 8, "end": 17, "label": "PER"},
        {"start": 21, "end": 30, "label": "ORG"},
    ]
    out.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    back = read_corpus(out)
    assert back.documents[0].text == TEXT
    (tmp_path / "brat").mkdir()
    assert cli_main(["convert", str(out), str(tmp_path / "brat" / "doc.ann")]) == 0
    txt = (tmp_path / "brat" / "doc.txt").read_bytes().decode("utf-8")
    assert txt == TEXT
    got = []
    for line in (tmp_path / "brat" / "doc.ann").read_text(encoding="utf-8").splitlines():
        _, typed, surface = line.split("\t")
        label, a, b = typed.split()
        assert TEXT[int(a) : int(b)] == surface
        got.append((label, surface))
    assert got == [
        ("PER", "Maria Lopez"),
        ("LOC", "Vienna"),
        ("PER", "Dr. Smith"),
        ("ORG", "Acme Inc."),
    ]


def test_jsonl_of_running_text_round_trips_byte_for_byte(tmp_path):
    p = _write(tmp_path)
    c = read_corpus(p)
    c.sentences[0].spans = [Span(0, 2, "PER")]
    out = tmp_path / "a.jsonl"
    write_corpus(c, out, "jsonl")
    again = read_corpus(out)
    assert again.documents[0].text == TEXT and again.sentences[0].spans == [Span(0, 2, "PER")]
    for s, t in zip(again.sentences, c.sentences):
        assert s.offsets == t.offsets and s.words == t.words
    out2 = tmp_path / "b.jsonl"
    write_corpus(again, out2)
    assert out2.read_bytes() == out.read_bytes()


def test_jsonl_offset_that_goes_backwards_is_an_error_at_its_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text(
        '{"text": "a b", "spans": [], "offset": 0}\n{"text": "c", "spans": [], "offset": 1}\n',
        encoding="utf-8",
    )
    with pytest.raises(FormatError) as info:
        read_corpus(p)
    assert info.value.line == 2 and "offset" in info.value.message


def test_stats_and_convert_on_the_command_line(tmp_path, capsys):
    p = _write(tmp_path)
    assert cli_main(["stats", str(p), "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["format"] == "text" and st["sentences"] == 3 and st["entities"] == 0


def test_undecodable_text_is_one_error_with_its_line(tmp_path, capsys):
    p = tmp_path / "latin.txt"
    p.write_bytes("Zeile eins.\nGrüße aus Köln.\n".encode("latin-1"))
    code = cli_main(["stats", str(p)])
    err = capsys.readouterr().err
    assert code == 1 and f"{p}:2:" in err and "--encoding" in err
    assert cli_main(["stats", str(p), "--encoding", "latin-1"]) == 0


def test_jsonl_records_keep_their_own_spacing_in_a_brat_export(tmp_path):
    src = tmp_path / "tool.jsonl"
    src.write_text(
        '{"text": "Hello  Mr. Bean.", "spans": [[7, 15, "PER"]]}\n{"text": "Bye now", "spans": []}\n',
        encoding="utf-8",
    )
    c = read_corpus(src)
    assert c.documents[0].text == "Hello  Mr. Bean.\nBye now"
    assert cli_main(["convert", str(src), str(tmp_path / "t.ann")]) == 0
    txt = (tmp_path / "t.txt").read_text(encoding="utf-8")
    assert txt == "Hello  Mr. Bean.\nBye now"
    assert (tmp_path / "t.ann").read_text(encoding="utf-8") == "T1\tPER 7 15\tMr. Bean\n"


def test_a_hugging_face_record_forced_as_jsonl_is_an_error_not_zero_entities(tmp_path, capsys):
    p = tmp_path / "hf.jsonl"
    p.write_text('{"tokens": ["EU", "rejects"], "ner_tags": [3, 0]}\n', encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_corpus(p, format="jsonl")
    assert info.value.line == 1 and "--from hf" in info.value.message
    assert cli_main(["stats", str(p), "--from", "jsonl"]) == 1


def test_running_text_to_a_column_format_reports_what_is_lost(tmp_path, capsys):
    """A column file holds tokens only: converting running text to one says so (a note, status
    0), and converting it to JSONL, which keeps the text, says nothing."""
    src = tmp_path / "notes.txt"
    src.write_text("Maria  Lopez visited Linz.\n\nThen she left.\n", encoding="utf-8")
    assert cli_main(["convert", str(src), str(tmp_path / "out.conll")]) == 0
    err = capsys.readouterr().err
    assert "running text and character offsets of 2 sentence(s) not kept: conll2003" in err
    assert cli_main(["convert", str(src), str(tmp_path / "out.jsonl")]) == 0
    assert "not kept" not in capsys.readouterr().err
    c = read_corpus(tmp_path / "out.conll")  # the tokens themselves are all there
    assert [list(s.words) for s in c.sentences] == [
        ["Maria", "Lopez", "visited", "Linz", "."],
        ["Then", "she", "left", "."],
    ]
