"""Notes and flags on sentences: kept by the document, undone like the edits, filterable, and
through save and reload in every writable format — in the JSONL records, in the review sidecar
for the other formats (nerstudio.app.review) — and the guidelines' label descriptions."""

import importlib.util
import json
import os

import pytest

from nerstudio.app import review
from nerstudio.app.document import ChangeKind, Document
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
    ]
    return Corpus(
        [CorpusDocument(s[:2], id="d1"), CorpusDocument(s[2:], id="d2")], format="conll2003"
    )


def _doc(corpus) -> Document:
    d = Document()
    d.open(corpus)
    return d


def test_notes_and_flags_are_undoable_steps_that_make_the_document_dirty_and_filter():
    d = _doc(_corpus())
    seen = []
    d.subscribe(lambda ch: seen.append((ch.kind, ch.sentences)))
    assert d.set_note(1, "  is Blackburn a PER or a LOC?  ")
    assert d.notes == {1: "is Blackburn a PER or a LOC?"} and d.is_dirty()
    assert (ChangeKind.MARKS, (1,)) in seen
    assert not d.set_note(1, "is Blackburn a PER or a LOC?")  # unchanged: no step
    assert d.set_flag(3, True) and not d.set_flag(3, True)
    f = d.flags()
    assert f["flagged"].tolist() == [False, False, False, True]
    assert f["noted"].tolist() == [False, True, False, False]
    assert not d.reviewed.any()  # a note is not a review
    d.undo()
    assert not d.flagged.any() and d.flags()["flagged"].sum() == 0
    d.undo()
    assert d.notes == {} and not d.is_dirty()
    d.redo()
    assert d.notes == {1: "is Blackburn a PER or a LOC?"}
    d.set_flag(1, True)
    assert d.set_note(1, "")  # a blank note removes it; the flag stays
    assert d.notes == {} and d.flagged[1]
    d.undo()
    assert d.notes[1] and d.flagged[1]
    assert d.history.undo_text() == "flag sentence 2"


@pytest.mark.parametrize("fmt", sorted(WRITABLE))
def test_notes_and_flags_survive_save_and_reload(tmp_path, fmt):
    if fmt == "spacy" and importlib.util.find_spec("spacy") is None:
        pytest.skip("spaCy DocBin needs the spacy extra, not installed")
    d = _doc(_corpus())
    d.set_note(0, 'German: MISC, "call" is not part of it\nsecond line')
    d.set_flag(2, True)
    d.set_reviewed([1])
    path = tmp_path / WRITABLE[fmt]
    if fmt == "brat":
        path.mkdir()
    review.save(d.corpus, d.reviewed, path, fmt, marks=d.marks())
    assert os.path.exists(review.sidecar_path(path)) == (not review.in_file(fmt))
    back = read_corpus(str(path), format=fmt)
    d2 = _doc(back)
    assert d2.notes == {0: 'German: MISC, "call" is not part of it\nsecond line'}, back.notes
    assert d2.flagged.tolist() == [False, False, True, False]
    assert d2.reviewed.tolist() == [False, True, False, False]
    assert not [n for n in back.notes if "note" in n or "flag" in n]
    # taken away and saved again: gone from the file
    d2.set_note(0, "")
    d2.set_flag(2, False)
    review.save(d2.corpus, d2.reviewed, path, fmt, marks=d2.marks())
    d3 = _doc(read_corpus(str(path), format=fmt))
    assert d3.notes == {} and not d3.flagged.any() and d3.reviewed[1]


def test_jsonl_records_hold_note_and_flag_fields(tmp_path):
    d = _doc(_corpus())
    d.set_note(3, "empty on purpose")
    d.set_flag(3, True)
    path = tmp_path / "c.jsonl"
    review.save(d.corpus, d.reviewed, path, "jsonl", marks=d.marks())
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r.get(review.NOTE_FIELD) for r in recs] == [None, None, None, "empty on purpose"]
    assert [r.get(review.FLAG_FIELD) for r in recs] == [None, None, None, True]
    assert not os.path.exists(review.sidecar_path(path))


def test_sidecar_with_only_review_states_has_no_marks_and_bad_marks_are_a_note(tmp_path):
    d = _doc(_corpus())
    d.set_reviewed([0])
    path = tmp_path / "c.conll"
    review.save(d.corpus, d.reviewed, path, "conll2003")  # review.py's own call: no marks argument
    side = json.loads(open(review.sidecar_path(path)).read())
    assert "notes" not in side and side["reviewed"] == [0]
    d2 = _doc(read_corpus(str(path)))
    assert d2.notes == {} and not d2.flagged.any() and d2.reviewed[0]
    side["flagged"] = [7]
    open(review.sidecar_path(path), "w").write(json.dumps(side))
    back = read_corpus(str(path))
    d3 = _doc(back)
    assert not d3.flagged.any() and d3.reviewed[0]
    assert any("notes and flags not read" in n and "does not have" in n for n in back.notes)


def test_jsonl_flag_of_another_kind_is_a_note(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"text": "Bonn is far", "tokens": ["Bonn", "is", "far"], "spans": [], "nerstudio_flag": "yes"}\n'
    )
    back = read_corpus(str(path))
    d = _doc(back)
    assert not d.flagged.any()
    assert any("c.jsonl:1" in n and "nerstudio_flag" in n for n in back.notes), back.notes


def test_label_descriptions_from_headings_and_list_items():
    from nerstudio.app.guidelines import label_descriptions

    md = (
        "# Guidelines\nIntroduction: read this first.\n\n"
        "## PER — Person\nNames of **people**,\nfictional ones too.\n\n- not part of it\n\n"
        "## Other labels\n- ORG: companies, `teams`\n- **LOC** – places\n* MISC - everything else\n"
        "1. DATE: not a corpus label\n"
        "```\n## FAKE\n- CODE: inside a code block\n```\n## PER\nA second description is ignored.\n"
    )
    assert label_descriptions(
        md
    ) == {  # any one-word heading may be a label: the window looks up its own
        "Guidelines": "Introduction: read this first.",
        "PER": "Person — Names of people, fictional ones too.",
        "ORG": "companies, teams",
        "LOC": "places",
        "MISC": "everything else",
        "DATE": "not a corpus label",
    }
    assert label_descriptions(md, ["PER", "LOC", "GPE"]) == {
        "PER": "Person — Names of people, fictional ones too.",
        "LOC": "places",
    }
    # a heading without text describes nothing
    assert label_descriptions("## PER\n\n## LOC\n") == {}


def test_guidelines_file_beside_the_corpus(tmp_path):
    from nerstudio.app.guidelines import find_guidelines

    corpus = tmp_path / "news.conll"
    corpus.write_text("EU B-ORG\n")
    assert find_guidelines(str(corpus)) is None
    (tmp_path / "GUIDELINES.md").write_text("# g")
    assert find_guidelines(str(corpus)) == str(tmp_path / "GUIDELINES.md")
    (tmp_path / "news.guidelines.md").write_text("# own")
    # the corpus's own first
    assert find_guidelines(str(corpus)) == str(tmp_path / "news.guidelines.md")
    chosen = tmp_path / "team.md"
    chosen.write_text("# chosen")
    assert find_guidelines(str(corpus), str(chosen)) == str(chosen)
    assert find_guidelines(str(corpus), str(tmp_path / "gone.md")) == str(
        tmp_path / "news.guidelines.md"
    )
    brat = tmp_path / "collection"
    brat.mkdir()
    (brat / "guidelines.md").write_text("# in the folder")
    assert find_guidelines(str(brat) + "/") == str(brat / "guidelines.md")
    assert find_guidelines(None) is None


def test_prodigy_tasks_hold_them_in_meta_and_keep_their_other_fields(tmp_path):
    path = tmp_path / "p.jsonl"
    task = {
        "text": "Bonn is far",
        "spans": [{"start": 0, "end": 4, "label": "LOC"}],
        "meta": {"source": "wire"},
        "_input_hash": 7,
        "_task_hash": 8,
        "answer": "accept",
    }
    path.write_text(
        json.dumps(task) + "\n" + json.dumps({"text": "Nothing here", "answer": "accept"}) + "\n"
    )
    d = _doc(read_corpus(str(path), format="prodigy"))
    d.set_note(0, "far from what?")
    d.set_flag(1, True)
    d.set_reviewed([0])
    review.save(d.corpus, d.reviewed, path, "prodigy", marks=d.marks())
    assert not os.path.exists(review.sidecar_path(path))
    first, second = [json.loads(line) for line in path.read_text().splitlines()]
    assert first["meta"] == {
        "source": "wire",
        review.NOTE_FIELD: "far from what?",
        review.REVIEW_FIELD: "reviewed",
    }
    # spans unchanged: the task's own hash stays
    assert first["_task_hash"] == 8 and first["_input_hash"] == 7
    assert second["meta"] == {review.FLAG_FIELD: True}
    d2 = _doc(read_corpus(str(path), format="prodigy"))
    assert (
        d2.notes == {0: "far from what?"}
        and d2.flagged.tolist() == [False, True]
        and d2.reviewed.tolist() == [True, False]
    )
    d2.set_flag(1, False)
    d2.set_note(0, "")
    d2.set_reviewed([0], False)
    review.save(d2.corpus, d2.reviewed, path, "prodigy", marks=d2.marks())
    first, second = [json.loads(line) for line in path.read_text().splitlines()]
    assert first["meta"] == {"source": "wire"} and "meta" not in second
