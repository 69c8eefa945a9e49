"""spaCy DocBin in and out (format ``spacy``, the optional ``spacy`` extra): Docs built with
spaCy's own documented API (``Doc(vocab, words=, spaces=, ents=)``, ``DocBin(docs=)``) read as
documents with exact text, offsets, sentences and entities; round trips both ways; CoNLL and
plain text into a DocBin and back; and, without spaCy, detection still works and reading or
writing is one line that says how to install it (exit 1).

The tests that need spaCy skip without it (CI's ``extras`` step installs it and runs this file);
the ones that do not (detection, the install hint, a file that is no DocBin) always run.
"""

from __future__ import annotations

import sys
import zlib

import pytest

from nerstudio.cli import main as cli_main
from nerstudio.corpus.convert import convert_file
from nerstudio.corpus.detect import sniff_format
from nerstudio.corpus.formats import Losses, read_corpus, write_corpus
from nerstudio.corpus.model import Span
from nerstudio.errors import FormatError

HINT = "pip install 'nerstudio[spacy]'"
# the first bytes DocBin.to_bytes writes (zlib of a msgpack map starting with "version"), made
# by hand so that the tests without spaCy have a file that looks like one
FAKE_DOCBIN = zlib.compress(b"\x89\xa7version\xa30.1\xa5attrs\x9d" + bytes(200))


def _spacy():
    return pytest.importorskip(
        "spacy", reason="spaCy is optional: pip install 'nerstudio[spacy]' (CI: .ci/run extras)"
    )


def _docbin(path, docs):
    from spacy.tokens import DocBin

    DocBin(docs=docs).to_disk(path)
    return path


def _docs_of(path):
    from spacy.tokens import DocBin
    from spacy.vocab import Vocab

    return list(DocBin().from_disk(path).get_docs(Vocab()))


def _example_docs():
    """Two Docs: sentence starts set, a line break (a whitespace token), two spaces, entities,
    a span group and categories; and one without sentence boundaries."""
    from spacy.tokens import Doc
    from spacy.tokens import Span as SpacySpan
    from spacy.vocab import Vocab

    vocab = Vocab()
    words = [
        "Barack",
        "Obama",
        "visited",
        "New",
        "York",
        ".",
        "\n",
        "He",
        " ",
        "met",
        "Angela",
        "Merkel",
        ".",
    ]
    spaces = [True, True, True, True, False, False, False, True, False, True, True, False, False]
    starts = [
        True,
        False,
        False,
        False,
        False,
        False,
        False,
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    ents = ["B-PER", "I-PER", "O", "B-GPE", "I-GPE", "O", "O", "O", "O", "O", "B-PER", "I-PER", "O"]
    one = Doc(vocab, words=words, spaces=spaces, sent_starts=starts, ents=ents)
    one.spans["sc"] = [SpacySpan(one, 0, 2, "PER"), SpacySpan(one, 1, 2, "NAME")]
    one.cats = {"POLITICS": 1.0}
    two = Doc(
        vocab,
        words=["Apple", "sells", "phones"],
        spaces=[True, True, False],
        ents=["B-ORG", "O", "O"],
    )
    return [one, two]


# --- without spaCy ---------------------------------------------------------------------------


@pytest.fixture
def no_spacy(monkeypatch):
    """spaCy made unimportable for the test (as if not installed), whether or not it is."""
    for name in [n for n in sys.modules if n == "spacy" or n.startswith("spacy.")] + ["spacy"]:
        monkeypatch.setitem(sys.modules, name, None)


def test_without_spacy_reading_is_one_line_with_the_install_hint(tmp_path, capsys, no_spacy):
    p = tmp_path / "x.spacy"
    p.write_bytes(FAKE_DOCBIN)
    other = tmp_path / "train.bin"  # detected by content, whatever the name
    other.write_bytes(FAKE_DOCBIN)
    assert sniff_format(p) == "spacy" and sniff_format(other) == "spacy"  # detection needs no spaCy
    with pytest.raises(FormatError, match=r"pip install 'nerstudio\[spacy\]'"):
        read_corpus(p)
    assert cli_main(["stats", str(p)]) == 1
    err = capsys.readouterr().err
    assert HINT in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_without_spacy_writing_is_refused_and_nothing_is_written(tmp_path, capsys, no_spacy):
    src = tmp_path / "a.conll"
    src.write_text("Obama B-PER\nspoke O\n", encoding="utf-8")
    out = tmp_path / "a.spacy"
    assert cli_main(["convert", str(src), str(out)]) == 1
    err = capsys.readouterr().err
    assert HINT in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_spacy_named_file_that_is_no_docbin_is_one_error(tmp_path, capsys):
    p = tmp_path / "notes.spacy"
    p.write_text("Obama B-PER\n", encoding="utf-8")
    assert sniff_format(p) == "spacy"  # the name says so; the reader says what is wrong
    assert cli_main(["stats", str(p)]) == 1
    err = capsys.readouterr().err
    assert "not a spaCy DocBin" in err and len(err.strip().splitlines()) == 1
    text = tmp_path / "a.conll"
    text.write_text("Obama B-PER\n", encoding="utf-8")
    assert sniff_format(text) == "columns"  # the DocBin sniffer leaves text corpora alone


def test_nerstudio_imports_no_spacy_to_detect(tmp_path):
    """Detection reads bytes only: run in a fresh interpreter, spaCy is never imported."""
    import subprocess

    p = tmp_path / "x.spacy"
    p.write_bytes(FAKE_DOCBIN)
    code = (
        "import sys; from nerstudio.corpus.detect import sniff_format; "
        f"assert sniff_format({str(p)!r}) == 'spacy'; "
        "assert not any(m == 'spacy' or m.startswith('spacy.') for m in sys.modules), 'spaCy imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- reading -------------------------------------------------------------------------------------


def test_docbin_reads_documents_sentences_offsets_and_entities(tmp_path):
    _spacy()
    p = _docbin(tmp_path / "train.spacy", _example_docs())
    c = read_corpus(p)
    assert c.format == "spacy" and len(c.documents) == 2
    d1, d2 = c.documents
    assert d1.text == "Barack Obama visited New York.\nHe  met Angela Merkel."
    s1, s2 = d1.sentences
    assert s1.words == (
        "Barack",
        "Obama",
        "visited",
        "New",
        "York",
        ".",
    )  # the "\n" token is no word
    assert s2.words == ("He", "met", "Angela", "Merkel", ".")  # nor the extra space
    assert s1.spans == [Span(0, 2, "PER"), Span(3, 5, "GPE")]
    assert s2.spans == [Span(2, 4, "PER")]
    for s in d1.sentences:
        assert s.source is d1.text and [d1.text[a:b] for a, b in s.offsets] == list(s.words)
    assert s2.offsets[0] == (31, 33) and s2.offsets[1] == (35, 38)
    # the Doc without sentence boundaries is one sentence, said in a note
    assert [s.words for s in d2.sentences] == [("Apple", "sells", "phones")]
    assert d2.sentences[0].spans == [Span(0, 1, "ORG")]
    notes = " | ".join(c.notes)
    assert "1 Doc without sentence boundaries read as one sentence" in notes
    assert "2 spans in 1 doc.spans group(s) not read" in notes
    assert "categories (doc.cats) of 1 Doc not read" in notes


def test_entity_across_a_sentence_start_joins_the_sentences_and_missing_iob_is_reported(tmp_path):
    _spacy()
    from spacy.tokens import Doc
    from spacy.vocab import Vocab

    doc = Doc(
        Vocab(),
        words=["I", "saw", "New", "York", "today", "."],
        sent_starts=[True, False, False, True, False, False],
        ents=["O", "O", "B-GPE", "I-GPE", "", ""],
    )
    c = read_corpus(_docbin(tmp_path / "x.spacy", [doc]))
    assert [s.words for s in c.sentences] == [("I", "saw", "New", "York", "today", ".")]
    assert c.sentences[0].spans == [Span(2, 4, "GPE")]
    notes = " | ".join(c.notes)
    assert "1 sentence boundary inside an entity ignored" in notes
    assert "2 tokens with missing entity annotation" in notes


def test_a_damaged_docbin_is_one_error(tmp_path, capsys):
    _spacy()
    data = tmp_path / "ok.spacy"
    _docbin(data, _example_docs())
    bad = tmp_path / "bad.spacy"
    bad.write_bytes(data.read_bytes()[:60])  # cut short: the zlib stream ends early
    with pytest.raises(FormatError, match="not a readable spaCy DocBin"):
        read_corpus(bad)
    assert cli_main(["stats", str(bad)]) == 1
    assert "Traceback" not in capsys.readouterr().err


# --- round trips ---------------------------------------------------------------------------------


def _doc_view(doc):
    """What must survive: the text, the words (non-whitespace tokens) with their offsets, the
    entities by characters, the sentences."""
    return (
        doc.text,
        [(t.text, t.idx) for t in doc if t.text.strip()],
        [(e.start_char, e.end_char, e.label_) for e in doc.ents],
        [s.text.strip() for s in doc.sents] if doc.has_annotation("SENT_START") else None,
    )


def test_docbin_to_nerstudio_to_docbin_keeps_text_tokens_entities(tmp_path):
    _spacy()
    src = _docbin(tmp_path / "a.spacy", _example_docs())
    out = tmp_path / "b.spacy"
    c = read_corpus(src)
    write_corpus(c, out)
    before, after = _docs_of(src), _docs_of(out)
    assert len(after) == 2
    assert _doc_view(after[0]) == _doc_view(before[0])
    # the Doc without sentence boundaries comes back with one sentence, same text and entities
    assert _doc_view(after[1])[:3] == _doc_view(before[1])[:3]
    assert [s.text for s in after[1].sents] == ["Apple sells phones"]
    # whitespace tokens are spaCy's own again: "\n" alone, the extra space after "He "
    assert [t.text for t in after[0]] == [t.text for t in before[0]]
    assert [bool(t.whitespace_) for t in after[0]] == [bool(t.whitespace_) for t in before[0]]


def test_nerstudio_to_docbin_to_nerstudio_keeps_text_offsets_entities(tmp_path):
    _spacy()
    src = tmp_path / "a.jsonl"
    src.write_text(
        '{"text": "Ms. Lopez flew to Linz.", "spans": [{"start": 4, "end": 9, "label": "PER"},'
        ' {"start": 18, "end": 22, "label": "LOC"}]}\n'
        '{"text": "Acme  Inc. said no.", "spans": [{"start": 0, "end": 10, "label": "ORG"}]}\n',
        encoding="utf-8",
    )
    a = read_corpus(src)
    out = tmp_path / "a.spacy"
    write_corpus(a, out, format="spacy")
    b = read_corpus(out)
    assert [s.words for s in b.sentences] == [s.words for s in a.sentences]
    assert [s.spans for s in b.sentences] == [s.spans for s in a.sentences]
    for sa, sb in zip(a.sentences, b.sentences):
        assert sb.text() == sa.text()  # "Acme  Inc." keeps its two spaces
    assert [(e.text, e.label_) for d in _docs_of(out) for e in d.ents] == [
        ("Lopez", "PER"),
        ("Linz", "LOC"),
        ("Acme  Inc.", "ORG"),
    ]


def test_conll_to_docbin_and_back(tmp_path, capsys):
    _spacy()
    conll = tmp_path / "train.conll"
    conll.write_text(
        "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP B-MISC\n"
        "call NN I-NP O\n. . O O\n\nPeter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n\n"
        "-DOCSTART- -X- -X- O\n\nBRUSSELS NNP B-NP B-LOC\n1996-08-22 CD I-NP O\n",
        encoding="utf-8",
    )
    out = tmp_path / "train.spacy"
    assert cli_main(["convert", str(conll), str(out)]) == 0
    assert "extra columns of 3 sentence(s) not kept" in capsys.readouterr().err
    docs = _docs_of(out)
    assert [d.text for d in docs] == [
        "EU rejects German call . Peter Blackburn",
        "BRUSSELS 1996-08-22",
    ]
    assert [[s.text for s in d.sents] for d in docs] == [
        ["EU rejects German call .", "Peter Blackburn"],
        ["BRUSSELS 1996-08-22"],
    ]
    assert [(e.text, e.label_) for e in docs[0].ents] == [
        ("EU", "ORG"),
        ("German", "MISC"),
        ("Peter Blackburn", "PER"),
    ]
    back = tmp_path / "back.conll"
    assert cli_main(["convert", str(out), str(back)]) == 0
    a, b = read_corpus(conll), read_corpus(back)
    assert len(b.documents) == 2
    assert [(s.words, s.spans) for s in b.sentences] == [(s.words, s.spans) for s in a.sentences]


def test_plain_text_offsets_survive_into_the_docbin_text(tmp_path):
    _spacy()
    text = "Maria Lopez flew to Linz.  She met\tDr. Smith there.\r\n\r\nÄrger in Zürich!\n"
    p = tmp_path / "notes.txt"
    p.write_bytes(text.encode("utf-8"))
    c = read_corpus(p)
    assert c.format == "text"
    first = c.sentences[0]
    first.spans = [Span(0, 2, "PER"), Span(4, 5, "LOC")]
    out = tmp_path / "notes.spacy"
    write_corpus(c, out, format="spacy")
    (doc,) = _docs_of(out)
    assert doc.text == text
    words = [(t.idx, t.idx + len(t.text)) for t in doc if t.text.strip()]
    assert words == [o for s in c.sentences for o in s.offsets]
    assert [(e.start_char, e.end_char, e.label_) for e in doc.ents] == [
        (0, 11, "PER"),
        (20, 24, "LOC"),
    ]
    assert [s.text.strip() for s in doc.sents] == [s.text() for s in c.sentences]
    back = read_corpus(out)
    assert back.documents[0].text == text
    assert [s.offsets for s in back.sentences] == [s.offsets for s in c.sentences]


def test_an_empty_token_is_refused_naming_its_line(tmp_path):
    _spacy()
    tsv = tmp_path / "a.tsv"
    tsv.write_text("Obama\tB-PER\n\tO\nspoke\tO\n", encoding="utf-8")
    with pytest.raises(FormatError, match="token 2 is empty") as exc:
        convert_file(tsv, tmp_path / "a.spacy", losses=Losses())
    assert exc.value.line == 1
    assert not (tmp_path / "a.spacy").exists()


def test_untyped_entities_get_a_type_and_the_change_is_reported(tmp_path):
    """spaCy silently drops an entity whose label is empty: nerstudio types it ENT and says so."""
    _spacy()
    conll = tmp_path / "scn.conll"
    conll.write_text("Peter B\nBlackburn I\nspoke O\n", encoding="utf-8")
    a = read_corpus(conll)
    assert a.sentences[0].spans == [Span(0, 2, "")]
    losses = Losses()
    write_corpus(a, tmp_path / "scn.spacy", format="spacy", losses=losses)
    assert [(e.text, e.label_) for d in _docs_of(tmp_path / "scn.spacy") for e in d.ents] == [
        ("Peter Blackburn", "ENT")
    ]
    assert any(
        "entities without a type (1) written with the type ENT" in m for m in losses.messages()
    )
