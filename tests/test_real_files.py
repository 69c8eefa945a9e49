"""Files from other tools' public repositories (tests/fixtures/real, see its SOURCES.md; shapes
written for nerstudio where a licence does not allow a copy): each is read as its tool meant it,
streamed and whole alike, or refused in one line that names the format and says what to do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nerstudio
from nerstudio.cli.corpus_commands import corpus_stats
from nerstudio.corpus.formats import Reader, convert_file, read_corpus
from nerstudio.errors import FormatError

pytestmark = pytest.mark.data_integrity

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REAL = FIXTURES / "real"

# the samples this file covers (test_real_samples checks that every sample is covered)
OTHER_TOOLS = [
    "real/allennlp-conll2003.txt",
    "shapes/label-studio-0x-completions.json",
    "shapes/hf-words-ner.json",
    "shapes/doccano-data-key.jsonl",
]


def read_both(path: Path):
    """Streamed (``stats``) and whole (``nerstudio.read``): the same counts and notes."""
    r = Reader(str(path))
    st = corpus_stats(r)
    c = nerstudio.read(str(path))
    spans = [
        (d.id, k, sp) for d in c.documents for k, s in enumerate(d.sentences) for sp in s.spans
    ]
    assert (st["documents"], st["sentences"], st["entities"]) == (
        len(c.documents),
        len(c.sentences),
        len(spans),
    )
    assert list(r.notes) == list(c.notes)
    return c, list(c.notes)


def entities(c) -> list[tuple[str, str]]:
    return [(" ".join(s.words[sp.start : sp.end]), sp.label) for s in c.sentences for sp in s.spans]


def test_allennlp_tab_separated_conll2003_with_a_spaced_docstart(tmp_path):
    """Tokens tab-separated, ``-DOCSTART- -X- -X- O`` with spaces: two documents, written back
    byte for byte."""
    path = REAL / "allennlp-conll2003.txt"
    c, notes = read_both(path)
    assert c.format == "tsv" and len(c.documents) == 2 and not notes
    assert entities(c)[:3] == [("U.N.", "ORG"), ("Ekeus", "PER"), ("Baghdad", "LOC")]
    assert len(entities(c)) == 6
    out = tmp_path / "out.tsv"
    convert_file(path, out)
    assert out.read_bytes() == path.read_bytes()


def test_prodigy_binary_task_with_the_same_span_twice_is_read_once():
    """prodigy-recipes' reddit PRODUCT file: an accepted ``ner.teach`` task lists its span twice
    (two model scores); every task is read, the repeat once, with a note."""
    c, notes = read_both(REAL / "prodigy-reddit-product-ner.jsonl")
    assert c.format == "prodigy" and len(c.sentences) == 4  # line 5 repeats line 4's text
    assert ("Reddit", "PRODUCT") in entities(c)
    (note,) = [n for n in notes if "annotated again" in n]
    assert note.startswith("1 entit(ies)") and "line 3" in note and "nested" not in note


def test_doccano_record_with_the_same_span_twice_is_read_once():
    c, notes = read_both(REAL / "doccano-same-span-twice.jsonl")
    assert c.format == "doccano" and [sp.label for s in c.sentences for sp in s.spans] == ["LOC"]
    assert any(n.startswith("1 entit(ies) annotated again") and "line 1" in n for n in notes)


def test_strict_refuses_the_repeated_span():
    with pytest.raises(FormatError, match="--strict: 1 entit"):
        read_corpus(REAL / "doccano-same-span-twice.jsonl", strict=True)


def test_label_studio_0x_completions_are_read_as_annotations(tmp_path):
    """Label Studio 0.x (label-studio-converter's ``completions/348.json`` in this shape): one
    task object over many lines, its annotations under ``completions``; an array of them too."""
    path = FIXTURES / "shapes" / "label-studio-0x-completions.json"
    c, notes = read_both(path)
    assert c.format == "label-studio"
    assert entities(c) == [
        ("Aqua ,", "INGREDIENT"),
        ("Coco Glucoside", "INGREDIENT"),
        ("Glycerin", "INGREDIENT"),
        ("Citric Acid", "INGREDIENT"),
    ]
    assert [n for n in notes if "whitespace at their edges" in n]  # " Citric Acid", trimmed
    array = tmp_path / "export.json"
    text = path.read_text(encoding="utf-8")
    array.write_text(f"[{text},{text}]", encoding="utf-8")
    c2, _ = read_both(array)
    assert len(c2.sentences) == 2 and len(entities(c2)) == 8


def test_transformers_words_and_ner_sample(tmp_path):
    """The transformers token-classification examples' ``{"words", "ner"}`` lines (string tags)."""
    path = FIXTURES / "shapes" / "hf-words-ner.json"
    c, notes = read_both(path)
    assert c.format == "hf" and not notes
    assert entities(c) == [
        ("Maria Lopez", "PER"),
        ("Acme Robotics", "ORG"),
        ("Lisbon", "LOC"),
        ("GENEVA", "LOC"),
    ]
    out = tmp_path / "out.hf.jsonl"
    convert_file(path, out, to_format="hf")
    first = json.loads(out.read_text(encoding="utf-8").split("\n")[0])
    assert "words" in first and "ner" in first and "tokens" not in first
    assert entities(nerstudio.read(str(out))) == entities(c)


def test_doccano_records_with_data_instead_of_text(tmp_path):
    path = FIXTURES / "shapes" / "doccano-data-key.jsonl"
    c, notes = read_both(path)
    assert c.format == "doccano" and not notes
    assert entities(c) == [
        ("Anna Berg", "PER"),
        ("Oslo", "LOC"),
        ("Paris", "LOC"),
        ("Nordic Rail", "ORG"),
    ]
    out = tmp_path / "out.jsonl"
    convert_file(path, out, to_format="doccano")
    back = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    want = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert back == want
