"""brat standoff (.txt + .ann): detection, reading with the segmenter, the reported choices for
overlapping and discontinuous entities, bad input, and writing back without losing lines."""

from __future__ import annotations

import json

import pytest

from nerstudio.cli import main as cli_main
from nerstudio.corpus.detect import sniff_format
from nerstudio.corpus.formats import Losses, read_corpus, write_corpus
from nerstudio.corpus.model import Corpus, Document, Sentence, Span
from nerstudio.errors import FormatError

# the shapes of brat's documented example (T, R, A, # lines), in words of our own
TEXT = (
    "Nokia signed a deal with Siemens, a maker of trains based in Munich.\n"
    "Obama's visit to New\nYork City ended today.\n"
)


def _t(n, label, a, b, text=TEXT):
    return f"T{n}\t{label} {a} {b}\t{text[a:b].replace(chr(10), ' ')}"  # a .ann line holds no line break


def _pair(tmp_path, lines, text=TEXT, name="doc"):
    (tmp_path / f"{name}.txt").write_bytes(text.encode("utf-8"))
    ann = tmp_path / f"{name}.ann"
    ann.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    return ann


def _basic(tmp_path):
    i = TEXT.index
    return _pair(
        tmp_path,
        [
            _t(1, "ORG", 0, 5),
            _t(2, "ORG", i("Siemens"), i("Siemens") + 7),
            _t(3, "LOC", i("Munich"), i("Munich") + 6),
            "R1\tLocated Arg1:T2 Arg2:T3",
            "#1\tAnnotatorNotes T1\tFinnish company",
            "A1\tCertain T2",
            _t(4, "PER", i("Obama"), i("Obama") + 5),
        ],
    )


def test_pairs_are_detected_from_either_file(tmp_path):
    ann = _basic(tmp_path)
    assert sniff_format(ann) == "brat"
    assert sniff_format(tmp_path / "doc.txt") == "brat"  # a .txt with its .ann beside it


def test_entities_become_token_spans_cut_inside_words(tmp_path):
    c = read_corpus(_basic(tmp_path))
    assert c.format == "brat" and len(c.documents) == 1
    s1, s2 = c.sentences
    assert [(sp.label, s1.words[sp.start : sp.end]) for sp in s1.spans] == [
        ("ORG", ("Nokia",)),
        ("ORG", ("Siemens",)),
        ("LOC", ("Munich",)),
    ]
    assert s2.words[:2] == ("Obama", "'s") and s2.spans == [Span(0, 1, "PER")]
    for s in c.sentences:
        assert [TEXT[a:b] for a, b in s.offsets] == list(s.words)
    assert any("3 relation, event, attribute or note line(s)" in n for n in c.notes)


def test_stats_on_the_ann_file_just_works(tmp_path, capsys):
    ann = _basic(tmp_path)
    assert cli_main(["stats", str(ann)]) == 0
    out = capsys.readouterr()
    assert "brat" in out.out and "ORG" in out.out and "note:" in out.err


def test_overlapping_and_discontinuous_entities_are_a_reported_choice(tmp_path):
    i = TEXT.index
    ny = i("New")
    ann = _pair(
        tmp_path,
        [
            _t(1, "LOC", ny, ny + len("New\nYork City")),  # a name across a line break
            _t(2, "LOC", ny, ny + 3),  # nested in T1: set aside
            f"T3\tLOC {ny} {ny + 3};{ny + 4} {ny + 8}\tNew York",  # fragments with only whitespace between: joined
            "T4\tORG 0 5;25 32\tNokia Siemens",  # text between the fragments: set aside
        ],
    )
    c = read_corpus(ann)
    s2 = c.sentences[-1]
    assert [s2.words[sp.start : sp.end] for sp in s2.spans] == [
        ("New", "York", "City")
    ]  # the longest
    notes = " ".join(c.notes)
    assert "2 overlapping or nested entities set aside" in notes and "line 2" in notes
    assert "1 discontinuous entity set aside" in notes and "line 4" in notes
    # nothing set aside is lost when written back
    write_corpus(c, ann)
    assert ann.read_text(encoding="utf-8").splitlines()[:4] == [
        _t(1, "LOC", ny, ny + len("New\nYork City")),
        _t(2, "LOC", ny, ny + 3),
        f"T3\tLOC {ny} {ny + 3};{ny + 4} {ny + 8}\tNew York",
        "T4\tORG 0 5;25 32\tNokia Siemens",
    ]


def test_a_sentence_break_never_splits_an_entity(tmp_path):
    text = "He met Dr. No. Smith came later.\n"
    a, b = text.index("No."), text.index("Smith") + 5
    c = read_corpus(_pair(tmp_path, [_t(1, "PER", a, b, text)], text))
    (s,) = [s for s in c.sentences if s.spans]
    sp = s.spans[0]
    assert text[s.offsets[sp.start][0] : s.offsets[sp.end - 1][1]] == "No. Smith"


@pytest.mark.parametrize(
    "line,fragment",
    [
        ("T1\tORG 0 5\tNokiX", "is not the text at its offsets"),
        ("T1\tORG 0 500\tNokia", "outside the text"),
        ("T1\tORG five six\tNokia", "bad offsets"),
        ("T1\tORG", "a text-bound annotation is"),
    ],
)
def test_bad_ann_lines_are_one_error_at_their_line(tmp_path, capsys, line, fragment):
    ann = _pair(tmp_path, ["#1\tAnnotatorNotes T1\tok", line])
    with pytest.raises(FormatError) as info:
        read_corpus(ann, format="brat")
    assert info.value.line == 2 and fragment in info.value.message
    assert cli_main(["stats", str(ann), "--from", "brat"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"nerstudio: error: {ann}:2:")


def test_a_missing_txt_is_named(tmp_path):
    ann = tmp_path / "lonely.ann"
    ann.write_text("T1\tORG 0 5\tNokia\n", encoding="utf-8")
    with pytest.raises(FormatError, match="lonely.txt is missing"):
        read_corpus(ann)


def test_write_back_keeps_every_line_and_drops_only_dangling_references(tmp_path):
    ann = _basic(tmp_path)
    original = ann.read_bytes()
    c = read_corpus(ann)
    write_corpus(c, ann)
    assert ann.read_bytes() == original
    s1 = c.sentences[0]
    s1.spans = [sp for sp in s1.spans if sp.label != "LOC"] + [
        Span(s1.words.index("deal"), s1.words.index("deal") + 1, "EVENT")
    ]
    losses = Losses()
    write_corpus(c, ann, losses=losses)
    lines = ann.read_text(encoding="utf-8").splitlines()
    assert not any(ln.startswith(("T3", "R1")) for ln in lines)  # R1 pointed at T3
    assert "#1\tAnnotatorNotes T1\tFinnish company" in lines and "A1\tCertain T2" in lines
    d = TEXT.index("deal")
    assert f"T5\tEVENT {d} {d + 4}\tdeal" in lines
    assert (
        losses.counts == {"brat_refs": 1}
        and "refer to entities that were removed" in losses.messages()[0]
    )
    assert (tmp_path / "doc.txt").read_bytes() == TEXT.encode("utf-8")


def test_writing_a_token_corpus_gives_a_txt_the_ann_indexes(tmp_path):
    s = Sentence(
        ["John", "Smith", "lives", "in", "New", "York", "."], [Span(0, 2, "PER"), Span(4, 6, "LOC")]
    )
    c = Corpus([Document([s, Sentence(["Hi", "."])])], format="conll2003")
    write_corpus(c, tmp_path / "out.ann", "brat")
    txt = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert txt == "John Smith lives in New York .\nHi .\n"
    rows = [
        ln.split("\t") for ln in (tmp_path / "out.ann").read_text(encoding="utf-8").splitlines()
    ]
    for _, typed, surface in rows:
        _, a, b = typed.split()
        assert txt[int(a) : int(b)] == surface
    assert [r[2] for r in rows] == ["John Smith", "New York"]
    back = read_corpus(tmp_path / "out.ann")
    assert [sp for s in back.sentences for sp in s.spans] == [Span(0, 2, "PER"), Span(4, 6, "LOC")]


def test_several_documents_are_refused_before_anything_is_written(tmp_path):
    c = Corpus([Document([Sentence(["a"])]), Document([Sentence(["b"])])], format="conll2003")
    with pytest.raises(FormatError, match="one document per"):
        write_corpus(c, tmp_path / "x.ann", "brat")
    assert not (tmp_path / "x.txt").exists() and not (tmp_path / "x.ann").exists()


def _collection(tmp_path):
    """A brat collection: two annotated pairs (one with other lines), a .txt without its .ann,
    an empty .txt with its .ann, and a subfolder."""
    folder = tmp_path / "collection"
    folder.mkdir()
    _basic(folder)  # doc.txt / doc.ann
    text2 = "Greta Lind flew to Oslo.\n"
    _pair(folder, [_t(1, "PER", 0, 10, text2), _t(2, "LOC", 19, 23, text2)], text2, name="b-second")
    (folder / "draft.txt").write_text("Not annotated yet.\n", encoding="utf-8")
    _pair(folder, [], "", name="empty")
    (folder / "old").mkdir()
    return folder


def test_a_folder_of_pairs_is_a_collection_of_documents(tmp_path, capsys):
    folder = _collection(tmp_path)
    assert sniff_format(folder) == "brat"
    c = read_corpus(folder)
    assert [d.id for d in c.documents] == ["b-second", "doc"]  # name order
    assert c.documents[0].sentences[0].spans == [Span(0, 2, "PER"), Span(4, 5, "LOC")]
    notes = " ".join(c.notes)
    assert "draft.txt" in notes and "empty.txt" in notes and "subfolder" in notes and "old" in notes
    # the first pair's R/A/# lines, named by file
    assert "not shown" in notes and "doc.ann" in notes
    assert cli_main(["stats", str(folder)]) == 0
    out = capsys.readouterr()
    assert "documents            2" in out.out and "draft.txt" in out.err
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "x.conll").write_text("EU B-ORG\n", encoding="utf-8")
    with pytest.raises(FormatError, match="brat collection"):
        read_corpus(plain)


def test_a_collection_is_saved_back_pair_by_pair(tmp_path):
    """Saving the folder writes each document to its own pair: unchanged pairs keep every byte,
    an edit lands in its pair with the other lines kept, and files that are not documents are
    left alone."""
    folder = _collection(tmp_path)
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    c = read_corpus(folder)
    write_corpus(c, folder)  # nothing changed
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    c.documents[0].sentences[0].spans = [Span(0, 2, "PER")]  # Oslo is no longer an entity
    write_corpus(c, folder)
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert (
        after["b-second.ann"] == _t(1, "PER", 0, 10, "Greta Lind flew to Oslo.\n").encode() + b"\n"
    )
    assert {k: v for k, v in after.items() if k != "b-second.ann"} == {
        k: v for k, v in before.items() if k != "b-second.ann"
    }
    again = read_corpus(folder)
    assert [s.spans for s in again.sentences] == [s.spans for s in c.sentences]


def test_a_corpus_of_documents_converts_into_a_folder_and_back(tmp_path, capsys):
    """``nerstudio convert corpus.jsonl folder/ --to brat`` writes one pair per document, named by the
    document ids; reading the folder and converting it to JSONL gives the same documents."""
    src = tmp_path / "c.jsonl"
    src.write_text(
        '{"doc_id": "reuters-1", "text": "EU rejects German call .", "spans": [[0, 2, "ORG"]]}\n'
        '{"doc_id": "reuters-1", "text": "Peter Blackburn", "spans": [[0, 15, "PER"]]}\n'
        '{"doc_id": "reuters-2", "text": "BRUSSELS 1996-08-22", "spans": [[0, 8, "LOC"]]}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    out.mkdir()
    # a folder takes a collection only when asked
    assert cli_main(["convert", str(src), str(out)]) == 1
    assert "folder" in capsys.readouterr().err and not any(out.iterdir())
    assert cli_main(["convert", str(src), str(out), "--to", "brat"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "reuters-1.ann",
        "reuters-1.txt",
        "reuters-2.ann",
        "reuters-2.txt",
    ]
    back = read_corpus(out)
    orig = read_corpus(src)
    assert [d.id for d in back.documents] == ["reuters-1", "reuters-2"]
    assert [(list(s.words), s.spans) for s in back.sentences] == [
        (list(s.words), s.spans) for s in orig.sentences
    ]
    assert cli_main(["convert", str(out), str(tmp_path / "back.jsonl")]) == 0
    ids = [
        json.loads(x)["doc_id"]
        for x in (tmp_path / "back.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert ids == ["reuters-1", "reuters-1", "reuters-2"]


def test_folder_orphan_ann_and_upper_case_pairs(tmp_path):
    # a.txt/a.ann, b.txt/b.ANN (upper case) and c.ann without its text: one entity each
    i = TEXT.index
    _pair(tmp_path, [_t(1, "ORG", 0, 5)], name="a")
    (tmp_path / "b.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "b.ANN").write_text(_t(1, "LOC", i("Munich"), i("Munich") + 6) + "\n")
    (tmp_path / "c.ann").write_text(_t(1, "PER", i("Obama"), i("Obama") + 5) + "\n")
    c = read_corpus(tmp_path)
    assert [d.id for d in c.documents] == ["a", "b"]
    assert sorted(sp.label for s in c.sentences for sp in s.spans) == ["LOC", "ORG"]
    assert not any("without a .ann" in n for n in c.notes)  # b.ANN is b.txt's
    (orphan,) = [n for n in c.notes if "without a .txt" in n]
    assert orphan.startswith("1 ") and "c.ann" in orphan
    with pytest.raises(FormatError):
        read_corpus(tmp_path, strict=True)
    before = sorted(p.name for p in tmp_path.iterdir())
    write_corpus(c, tmp_path)  # saved back: b.ANN rewritten in place, no b.ann beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert len(read_corpus(tmp_path).documents) == 2


def test_one_upper_case_pair_is_read_and_written_in_place(tmp_path):
    (tmp_path / "d.TXT").write_text(TEXT, encoding="utf-8")
    (tmp_path / "d.ANN").write_text(_t(1, "ORG", 0, 5) + "\n")
    c = read_corpus(tmp_path / "d.ANN")
    assert c.sentences[0].spans == [Span(0, 1, "ORG")]
    c.sentences[0].spans = []
    write_corpus(c, tmp_path / "d.ANN")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.ANN", "d.TXT"]
    assert (tmp_path / "d.ANN").read_text() == ""


def test_a_repeated_t_id_gains_no_line_on_write_back(tmp_path):
    # two lines share the id T1 (a hand-merged file): both entities are read, and written back
    # as they were, without a third line for the one the old id lookup lost
    i = TEXT.index
    lines = [_t(1, "ORG", 0, 5), _t(1, "LOC", i("Munich"), i("Munich") + 6)]
    ann = _pair(tmp_path, lines)
    c = read_corpus(ann)
    assert len([sp for s in c.sentences for sp in s.spans]) == 2
    write_corpus(c, ann)
    assert ann.read_text(encoding="utf-8") == "".join(x + "\n" for x in lines)


def _long(tmp_path, n):
    """A pair of ``n`` one-word entities, the .ann listing them last first."""
    parts, ann, pos = [], [], 0
    for k in range(3 * n):
        w = ("Alpha", "beta", "Gamma")[k % 3]
        if k % 3 == 0:
            ann.append(f"T{k // 3 + 1}\tPER {pos} {pos + len(w)}\t{w}")
        sep = ". " if k % 12 == 11 else " "
        parts.append(w + sep)
        pos += len(w) + len(sep)
    return _pair(tmp_path, ann[::-1], "".join(parts), name=f"long{n}")


@pytest.mark.slow
def test_write_back_grows_linearly_with_the_entities(tmp_path):
    # each old line was looked for in a list of the document's entities: 20,000 entities took
    # over a minute to write back; ten times the entities must cost about ten times as much
    import time

    def cost(ann):
        c = read_corpus(ann)
        next(s for s in c.sentences if s.spans).spans.pop(0)  # one entity removed
        t = time.process_time()
        write_corpus(c, ann)
        return time.process_time() - t

    small, large = _long(tmp_path, 2000), _long(tmp_path, 20000)
    t_small = min(cost(small), cost(small))
    t_large = cost(large)
    assert len(read_corpus(large).layout) == 19999
    assert t_large < 40 * max(t_small, 0.01)


def test_sentence_and_token_breaks_brat_cannot_hold_are_reported(tmp_path):
    # two sentences without a final stop run together when the .txt is split again
    from nerstudio.corpus import convert_file

    src = tmp_path / "in.conll"
    src.write_text("Ann B-PER\nmet O\nBob B-PER\n\nhe O\nleft O\ntoday O\n")
    losses = Losses()
    out = tmp_path / "out.ann"
    write_corpus(read_corpus(src), out, "brat", losses=losses)
    assert len(read_corpus(out).sentences) == 1
    (msg,) = [m for m in losses.messages() if "breaks" in m]
    assert msg.startswith("the sentence or token breaks of 2 sentence(s)")
    with pytest.raises(FormatError, match="breaks"):
        convert_file(src, tmp_path / "strict.ann", to_format="brat", strict=True)
    assert not (tmp_path / "strict.ann").exists()
    # sentences the reader finds again (and a brat document saved back): nothing to report
    src.write_text("Ann B-PER\nmet O\nBob B-PER\n. O\n\nHe O\nleft O\n. O\n")
    for corpus in (read_corpus(src), read_corpus(_basic(tmp_path))):
        losses = Losses()
        write_corpus(corpus, tmp_path / "again.ann", "brat", losses=losses)
        assert not [m for m in losses.messages() if "breaks" in m]
