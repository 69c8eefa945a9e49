"""Review states (pre-annotated / reviewed): kept by the document, undone with the edits, and
through save and reload in every writable format — in the JSONL records, in a sidecar file for
the other formats (nerstudio.app.review)."""

import importlib.util
import json
import os

import numpy as np
import pytest

from nerstudio.app import review
from nerstudio.app.document import Document
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Corpus, Sentence, Span
from nerstudio.corpus.model import Document as CorpusDocument

WRITABLE = {  # format: file name it is saved as
    "conll2003": "c.conll",
    "conll2002": "c.conll",
    "columns": "c.txt",
    "tsv": "c.tsv",
    "jsonl": "c.jsonl",
    "prodigy": "c.jsonl",
    "doccano": "c.jsonl",
    "doccano-rel": "c.jsonl",
    "label-studio": "c.json",
    "hf": "c.json",
    "brat": "folder",
    "conllu": "c.conllu",
    "spacy": "c.spacy",
}


def _corpus() -> Corpus:
    s = [
        Sentence(["EU", "rejects", "German", "call", "."], [Span(0, 1, "ORG"), Span(2, 3, "MISC")]),
        Sentence(["Peter", "Blackburn", "spoke", "."], [Span(0, 2, "PER")]),
        Sentence(["BRUSSELS", "is", "far", "."], [Span(0, 1, "LOC")]),
        Sentence(["Nothing", "here", "."], []),
        Sentence(["Bonn", "and", "Paris", "met", "."], [Span(0, 1, "LOC"), Span(2, 3, "LOC")]),
    ]
    return Corpus(
        [CorpusDocument(s[:3], id="d1"), CorpusDocument(s[3:], id="d2")], format="conll2003"
    )


def _doc(corpus) -> Document:
    d = Document()
    d.open(corpus)
    return d


def test_acceptance_makes_sentences_reviewed_an_edit_does_not_and_undo_takes_it_back():
    d = _doc(_corpus())
    assert not d.reviewed.any()
    d.set_spans(1, [Span(0, 1, "PER")])
    d.set_spans(1, [Span(0, 1, "ORG")])
    assert not d.reviewed.any() and not d.review_log  # still being corrected
    assert d.set_reviewed([3, 1]) == [3, 1]
    assert d.reviewed.tolist() == [False, True, False, True, False]
    # the suggestion each held before the annotator's edits
    assert d.review_log == ((3, ()), (1, (Span(0, 2, "PER"),)))
    d.set_spans(1, [])  # a reviewed sentence edited again: logged once
    assert len(d.review_log) == 2
    d.set_many({0: [], 2: []}, "pre-annotation")  # a model's edit: not reviewed
    assert not d.reviewed[[0, 2]].any()
    d.set_many({4: []}, "label all", reviewed=True)
    assert d.reviewed[4]
    d.mark_saved()
    assert not d.is_dirty()
    d.undo()  # the label-all step
    assert not d.reviewed[4] and d.is_dirty()
    d.undo()  # pre-annotation
    d.undo()  # the edit of 1
    d.undo()  # the acceptance
    assert not d.reviewed[[1, 3]].any() and not d.review_log
    d.redo()
    assert d.reviewed[3]
    assert d.set_reviewed([3], False) == [3] and not d.reviewed[3]


@pytest.mark.parametrize("fmt", sorted(WRITABLE))
def test_review_states_survive_save_and_reload(tmp_path, fmt):
    if fmt == "spacy" and importlib.util.find_spec("spacy") is None:
        pytest.skip("spaCy DocBin needs the spacy extra, not installed")
    d = _doc(_corpus())
    d.set_spans(1, [Span(0, 2, "PER"), Span(2, 3, "MISC")])
    d.set_reviewed([1, 4])
    path = tmp_path / WRITABLE[fmt]
    if fmt == "brat":
        path.mkdir()  # one .txt/.ann pair per document
    review.save(d.corpus, d.reviewed, path, fmt)
    side = review.sidecar_path(path)
    assert os.path.exists(side) == (not review.in_file(fmt))
    back = read_corpus(str(path), format=fmt)
    assert [s.words for s in back.sentences] == [s.words for s in d.corpus.sentences]
    d2 = _doc(back)
    assert d2.reviewed.tolist() == [False, True, False, False, True], back.notes
    assert not [n for n in back.notes if "review" in n]
    # saved again with nothing reviewed: the states go (the sidecar says so, the records lose the field)
    d2.set_reviewed([1, 4], False)
    review.save(d2.corpus, d2.reviewed, path, fmt)
    assert not _doc(read_corpus(str(path), format=fmt)).reviewed.any()


def test_jsonl_records_hold_the_field_and_unreviewed_files_are_written_unchanged(tmp_path):
    d = _doc(_corpus())
    path = tmp_path / "c.jsonl"
    review.save(d.corpus, d.reviewed, path, "jsonl")
    first = path.read_bytes()
    assert b"nerstudio_review" not in first and not os.path.exists(review.sidecar_path(path))
    d2 = _doc(read_corpus(str(path)))
    review.save(d2.corpus, d2.reviewed, path, "jsonl")
    assert path.read_bytes() == first  # nothing reviewed: byte for byte
    d2.set_reviewed([2])
    review.save(d2.corpus, d2.reviewed, path, "jsonl")
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r.get("nerstudio_review") for r in recs] == [None, None, "reviewed", None, None]


def test_no_sidecar_without_review_and_a_stale_one_is_ignored_with_a_note(tmp_path):
    d = _doc(_corpus())
    path = tmp_path / "c.conll"
    review.save(d.corpus, d.reviewed, path, "conll2003")
    assert not os.path.exists(review.sidecar_path(path))
    d.set_reviewed([0])
    review.save(d.corpus, d.reviewed, path, "conll2003")
    # another program changes a word: the sidecar no longer matches, the corpus still opens
    path.write_text(path.read_text().replace("Bonn", "Berlin"))
    back = read_corpus(str(path))
    assert not _doc(back).reviewed.any()
    assert (
        len(back.notes) == 1
        and "c.conll.nerstudio-review.json" in back.notes[0]
        and "other words" in back.notes[0]
    )


@pytest.mark.parametrize(
    "content, why",
    [
        ("{", "Expecting"),
        ('{"format": "x"}', "not a nerstudio-review"),
        ("[1]", "not a nerstudio-review"),
    ],
)
def test_unreadable_sidecar_is_a_note(tmp_path, content, why):
    d = _doc(_corpus())
    path = tmp_path / "c.conll"
    review.save(d.corpus, d.reviewed, path, "conll2003")
    with open(review.sidecar_path(path), "w") as f:
        f.write(content)
    back = read_corpus(str(path))
    assert not _doc(back).reviewed.any() and why in back.notes[0]


def test_sidecar_out_of_range_is_refused(tmp_path):
    c = _corpus()
    path = tmp_path / "c.conll"
    review.save(c, np.ones(len(c), bool), path, "conll2003")
    side = review.sidecar_path(path)
    data = json.load(open(side))
    data["reviewed"] = [0, 99]
    json.dump(data, open(side, "w"))
    back = read_corpus(str(path))
    assert not _doc(back).reviewed.any() and "does not have" in back.notes[0]


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_sidecar_that_is_not_a_regular_file_is_not_followed(tmp_path, kind):
    """A corpus folder from someone else: a sidecar that is a link to a file elsewhere is not
    read (its states would be a file outside the folder's), and a named pipe is not waited on."""
    d = _doc(_corpus())
    path = tmp_path / "c.conll"
    d.set_reviewed([0, 1])
    review.save(d.corpus, d.reviewed, path, "conll2003")
    side = review.sidecar_path(path)
    elsewhere = tmp_path / "elsewhere.json"
    os.replace(side, elsewhere)
    if kind == "link":
        os.symlink(elsewhere, side)
    else:
        os.mkfifo(side)
    back = read_corpus(str(path))
    assert not _doc(back).reviewed.any()
    assert (
        "not a regular file" in back.notes[0] and "c.conll.nerstudio-review.json" in back.notes[0]
    )
