"""Whatever a writer writes, its reader reads back equal, or the write is refused naming the file
(issue 22, case 11): a property test over every writable format, with corpora whose tokens,
labels and document ids hold the characters that broke round trips (line breaks of every kind,
U+0085, U+2028, U+2029, ``\\x0b``–``\\x1e``, tabs, ``|``, ``=``, empty tokens, ``-DOCSTART-``,
lone surrogates, byte-order marks), plus one regression test per case the fuzzing run found.

"Equal" is what each format promises to keep (its row in ``KEEPS``): the tokens and the
labelled spans of every sentence for token formats, the text and the labelled character spans
for formats of running text (whose tokens are the reader's own tokenisation), and the document
boundaries and ids where the format holds them."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nerstudio.corpus import read_corpus, write_corpus
from nerstudio.corpus.formats import Losses
from nerstudio.corpus.model import Corpus, Document, Sentence, Span
from nerstudio.errors import FormatError

pytestmark = pytest.mark.data_integrity

ODD = [
    "\n",
    "\r",
    "\t",
    " ",
    "\x85",
    "\u2028",
    "\u2029",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x1f",
    "|",
    "=",
    "#",
    "\ufeff",
    "\ud800",
    "-",
    "\u00a0",
    '"',
    "\\",
]


# -- what each format keeps ----------------------------------------------------------------------


def _token_view(c: Corpus, docs: bool):
    sents = lambda d: [(tuple(s.words), tuple(s.spans)) for s in d.sentences]
    if docs:
        return [sents(d) for d in c.documents]
    return [x for d in c.documents for x in sents(d)]


def _record_view(c: Corpus, docs: bool):
    """Per sentence: its text and its entities as (surface, label), without whitespace at their
    ends (running text has no whitespace tokens: the writers report that they are not kept)."""
    out = []
    for d in c.documents:
        cur = []
        for s in d.sentences:
            text, offs = s.char_offsets()
            cur.append(
                (
                    text.strip(),
                    tuple(
                        (text[offs[sp.start][0] : offs[sp.end - 1][1]].strip(), sp.label)
                        for sp in s.spans
                    ),
                )
            )
        out.append(cur)
    return out if docs else [x for d in out for x in d]


def _text_view(c: Corpus, docs: bool):
    """Per document: the entities as (surface, label), in order (brat keeps the text)."""
    out = []
    for d in c.documents:
        text, offsets = d.text_and_offsets()
        out.append(
            tuple(
                (
                    text[o[sp.start][0] : o[sp.end - 1][1]].replace("\n", " ").strip(),
                    sp.label or "Entity",
                )
                for s, o in zip(d.sentences, offsets)
                for sp in s.spans
            )
        )
    return out


KEEPS = {  # format, output name, view, whether document boundaries are kept
    "conll2003": ("out.conll", _token_view, False),
    "tsv": ("out.tsv", _token_view, False),
    "jsonl": ("out.jsonl", _token_view, True),
    "hf": ("out.json", _token_view, False),
    "conllu": ("out.conllu", _token_view, True),
    "prodigy": ("out.jsonl", _token_view, True),
    "doccano": ("out.jsonl", _record_view, True),
    "label-studio": ("out.json", _record_view, True),
    "brat": ("out.ann", _text_view, False),
}


def _roundtrip(corpus: Corpus, fmt: str, folder: str):
    """``None`` when the write was refused (properly), else (written view, read view)."""
    name, view, docs = KEEPS[fmt]
    path = os.path.join(folder, name)
    if fmt == "brat" and len(corpus.documents) > 1:
        path = os.path.join(folder, "coll")
        os.mkdir(path)
    losses = Losses(fmt)
    try:
        write_corpus(corpus, path, format=fmt, losses=losses)
    except FormatError as exc:
        assert exc.path is not None and exc.message, f"{fmt}: an error naming no file: {exc}"
        left = [n for n in os.listdir(folder) if n not in ("coll",)] + (
            os.listdir(path) if os.path.isdir(path) else []
        )
        assert left == [], f"{fmt}: a refused write left {left}"
        return None
    back = read_corpus(path, format=fmt)
    if "blank" in losses.counts:  # reported: sentences without text, not written
        kept = [
            Document([s for s in d.sentences if s.char_offsets()[0].strip()], id=d.id)
            for d in corpus.documents
        ]
        corpus = Corpus([d for d in kept if d.sentences], format=corpus.format)
    return view(corpus, docs), view(back, docs)


# -- corpora ------------------------------------------------------------------------------------

_chars = st.sampled_from(list("abX.") + ODD)
_word = st.one_of(
    st.text(_chars, min_size=0, max_size=4), st.sampled_from(["-DOCSTART-", "New", "York", "."])
)
_label = st.one_of(
    st.sampled_from(["PER", "LOC", "ORG", "MISC", ""]), st.text(_chars, min_size=1, max_size=4)
)


@st.composite
def _sentence(draw):
    words = draw(st.lists(_word, min_size=1, max_size=6))
    spans, i = [], 0
    while i < len(words):
        if draw(st.booleans()):
            j = draw(st.integers(i + 1, min(len(words), i + 3)))
            spans.append(Span(i, j, draw(_label)))
            i = j
        else:
            i += 1
    return Sentence(words, spans)


@st.composite
def corpora(draw):
    n_docs = draw(st.integers(1, 3))
    docs = []
    for k in range(n_docs):
        sents = draw(st.lists(_sentence(), min_size=1, max_size=3))
        doc_id = draw(
            st.one_of(st.just(str(k + 1)), st.just(""), st.text(_chars, min_size=1, max_size=3))
        )
        docs.append(Document(sents, id=doc_id))
    return Corpus(docs, format="conll2003")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(KEEPS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus=corpora())
def test_what_a_writer_writes_its_reader_reads_back_or_the_write_is_refused(fmt, corpus):
    folder = tempfile.mkdtemp()
    try:
        result = _roundtrip(corpus, fmt, folder)
        if result is not None:
            want, got = result
            assert got == want, f"{fmt}: written {want!r}, read back {got!r}"
    finally:
        shutil.rmtree(folder)


# -- the cases of the issue, one by one ---------------------------------------------------------


def _one(words, spans, fmt, tmp_path, doc_id="1"):
    return _roundtrip(
        Corpus([Document([Sentence(words, spans)], id=doc_id)], format="conll2003"),
        fmt,
        str(tmp_path),
    )


def _equal_or_refused(result):
    assert result is None or result[0] == result[1], result


def test_a_label_with_a_line_break_does_not_shift_hf_label_ids(tmp_path):
    c = Corpus([Document([Sentence(["a", "b", "c"], [Span(0, 1, "A\nB"), Span(2, 3, "LOC")])])])
    path = tmp_path / "data.jsonl"
    with pytest.raises(FormatError) as err:
        write_corpus(c, path, format="hf")
    assert "A\\nB" in err.value.message and err.value.path == str(path)
    assert os.listdir(tmp_path) == []


def test_a_label_with_a_bar_or_a_tab_is_refused_by_conllu(tmp_path):
    for label in ("PER|LOC", "P\tER", "P=ER\n"):
        with pytest.raises(FormatError) as err:
            write_corpus(
                Corpus([Document([Sentence(["a", "b"], [Span(0, 1, label)])])]),
                tmp_path / "x.conllu",
                format="conllu",
            )
        assert repr(label) in err.value.message
    assert os.listdir(tmp_path) == []


def test_an_empty_token_is_refused_by_prodigy_not_dropped(tmp_path):
    _equal_or_refused(_one(["a", "", "b"], [Span(2, 3, "PER")], "prodigy", tmp_path))
    with pytest.raises(FormatError):
        write_corpus(
            Corpus([Document([Sentence(["a", "", "b"], [Span(2, 3, "PER")])])]),
            tmp_path / "p.jsonl",
            format="prodigy",
        )


@pytest.mark.parametrize(
    "sep", ["\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]
)
def test_line_separators_in_text_make_a_brat_pair_that_reads_back(tmp_path, sep):
    c = Corpus(
        [Document([Sentence(["Ann", f"x{sep}y", "Bob"], [Span(0, 1, "PER"), Span(1, 2, "LOC")])])]
    )
    path = tmp_path / "doc.ann"
    write_corpus(c, path, format="brat")
    back = read_corpus(path)
    assert _text_view(back, False) == _text_view(c, False)


@pytest.mark.parametrize("sep", ["\x85", "\u2028", "\u2029", "\x0b", "\x1c"])
def test_line_separators_in_a_conllu_token_read_back(tmp_path, sep):
    _equal_or_refused(_one(["Ann", f"x{sep}y"], [Span(0, 1, "PER")], "conllu", tmp_path))
    path = tmp_path / "x.conllu"
    path.write_text(
        f"# text = Ann x{sep}y\n1\tAnn\t_\t_\t_\t_\t_\t_\t_\tNE=B-PER\n2\tx{sep}y\t_\t_\t_\t_\t_\t_\t_\t_\n\n"
    )
    assert read_corpus(path).sentences[0].words == ("Ann", f"x{sep}y")


@pytest.mark.parametrize("fmt", ["doccano", "prodigy", "label-studio", "conllu", "jsonl"])
def test_two_documents_read_with_one_id_stay_two_documents(tmp_path, fmt):
    """A record without doc_id, then one with doc_id "1": two documents, both called "1"."""
    src = tmp_path / "mix.jsonl"
    src.write_text(
        '{"text": "a b", "spans": [[0, 1, "X"]]}\n{"text": "c d", "doc_id": "1", "spans": [[0, 1, "Y"]]}\n'
    )
    c = read_corpus(src)
    assert len(c.documents) == 2
    out = tmp_path / ("out.json" if fmt == "label-studio" else f"out.{fmt}")
    losses = Losses(fmt)
    write_corpus(c, out, format=fmt, losses=losses)
    back = read_corpus(out, format=fmt)
    assert [[s.words for s in d.sentences] for d in back.documents] == [[("a", "b")], [("c", "d")]]


@pytest.mark.parametrize(
    "fmt, name",
    [
        ("jsonl", "out.jsonl"),
        ("conllu", "out.conllu"),
        ("brat", "out.ann"),
        ("doccano", "out.jsonl"),
        ("label-studio", "out.json"),
        ("prodigy", "out.jsonl"),
        ("hf", "out.jsonl"),
    ],
)
def test_utf8_formats_are_written_in_utf8_whatever_the_input(tmp_path, fmt, name):
    # a Latin-1 column file: the formats defined as UTF-8 are written in UTF-8, not Latin-1
    from nerstudio.corpus import convert_file

    src = tmp_path / "latin1.conll"
    src.write_bytes("José B-PER\nMünchen B-LOC\n".encode("latin-1"))
    corpus = read_corpus(src, "columns", encoding="latin-1")
    for k, write in enumerate(
        (
            lambda out: write_corpus(corpus, out, fmt),
            lambda out: convert_file(src, out, "columns", fmt, encoding="latin-1"),
        )
    ):
        folder = tmp_path / f"w{k}"
        folder.mkdir()
        out = folder / name
        write(out)
        written = [p for p in folder.iterdir() if not p.name.endswith(".labels.txt")]
        text = "".join(p.read_bytes().decode("utf-8") for p in written)  # not Latin-1
        assert "José" in text or "Jos\\u00e9" in text
        back = read_corpus(out, fmt)
        assert [w for s in back.sentences for w in s.words] == ["José", "München"]
