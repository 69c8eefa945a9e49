"""Files from other tools' public repositories (tests/fixtures/real, see its SOURCES.md; shapes
written for nerstudio where a licence does not allow a copy): each is read as its tool meant it,
streamed and whole alike, or refused in one line that names the format and says what to do.
"""

from __future__ import annotations

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
OTHER_TOOLS = ["real/allennlp-conll2003.txt"]


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
