"""CoNLL-U with entities in MISC (NE=/NER=): detection, schemes, multiword tokens and empty
nodes, byte-exact write-back that changes only the entity attribute, minimal CoNLL-U out."""

from __future__ import annotations

import pytest

from nerstudio.cli import main as cli_main
from nerstudio.corpus.detect import sniff_format
from nerstudio.corpus.formats import read_corpus, write_corpus
from nerstudio.corpus.model import Corpus, Document, Sentence, Span
from nerstudio.errors import FormatError


def _row(i, form, upos="X", misc="_", lemma="_"):
    return "\t".join(
        [str(i), form, lemma, upos, "_", "_", "0" if str(i) == "1" else "1", "dep", "_", misc]
    )


# the shapes of UD's format page: comments, a multiword token range, an empty node, SpaceAfter=No
SENT1 = [
    "# newdoc id = news-1",
    "# sent_id = 1",
    "# text = Vámonos al Museo del Prado.",
    "1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_",
    _row(1, "Vamos", "VERB", lemma="ir"),
    _row(2, "nos", "PRON"),
    "3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_",
    _row(3, "a", "ADP"),
    _row(4, "el", "DET"),
    _row(5, "Museo", "PROPN", "NE=B-LOC"),
    _row(6, "del", "ADP", "NE=I-LOC"),
    _row(7, "Prado", "PROPN", "NE=I-LOC|SpaceAfter=No"),
    "7.1\tva\t_\t_\t_\t_\t_\t_\t5:x\t_",
    _row(8, ".", "PUNCT"),
]
SENT2 = [
    "# sent_id = 2",
    "# text = Ana Pérez vive en Madrid.",
    _row(1, "Ana", "PROPN", "Gloss=Ana|NE=B-PER"),
    _row(2, "Pérez", "PROPN", "NE=I-PER"),
    _row(3, "vive", "VERB"),
    _row(4, "en", "ADP"),
    _row(5, "Madrid", "PROPN", "NE=B-LOC|SpaceAfter=No"),
    _row(6, ".", "PUNCT"),
]
TEXT = "\n".join(SENT1) + "\n\n" + "\n".join(SENT2) + "\n\n"


def _file(tmp_path, text=TEXT, name="ud.conllu"):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return p


def test_detected_by_content_whatever_the_name(tmp_path):
    assert sniff_format(_file(tmp_path)) == "conllu"
    assert sniff_format(_file(tmp_path, name="ud.txt")) == "conllu"


def test_words_entities_and_offsets(tmp_path):
    c = read_corpus(_file(tmp_path))
    assert c.format == "conllu" and c.scheme == "iob2"
    s1, s2 = c.sentences
    assert s1.words == (
        "Vamos",
        "nos",
        "a",
        "el",
        "Museo",
        "del",
        "Prado",
        ".",
    )  # words, not ranges or nodes
    assert s1.spans == [Span(4, 7, "LOC")] and s2.spans == [Span(0, 2, "PER"), Span(4, 5, "LOC")]
    assert s1.extra == (("VERB", "PRON", "ADP", "DET", "PROPN", "ADP", "PROPN", "PUNCT"),)
    assert s2.text() == "Ana Pérez vive en Madrid."  # from # text, SpaceAfter=No agrees
    assert [s2.source[a:b] for a, b in s2.offsets] == list(s2.words)
    assert c.documents[0].id == "news-1"


def test_writing_back_changes_only_the_entity_attribute(tmp_path):
    p = _file(tmp_path)
    c = read_corpus(p)
    write_corpus(c, tmp_path / "same.conllu")
    assert (tmp_path / "same.conllu").read_bytes() == p.read_bytes()
    s2 = c.sentences[1]
    s2.spans = [Span(0, 2, "PER")]  # Madrid is no longer an entity
    c.sentences[0].spans = [Span(4, 7, "ORG")]
    write_corpus(c, tmp_path / "edited.conllu")
    old = TEXT.splitlines()
    new = (tmp_path / "edited.conllu").read_text(encoding="utf-8").splitlines()
    assert len(old) == len(new)
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    assert changed == [
        (_row(5, "Museo", "PROPN", "NE=B-LOC"), _row(5, "Museo", "PROPN", "NE=B-ORG")),
        (_row(6, "del", "ADP", "NE=I-LOC"), _row(6, "del", "ADP", "NE=I-ORG")),
        (
            _row(7, "Prado", "PROPN", "NE=I-LOC|SpaceAfter=No"),
            _row(7, "Prado", "PROPN", "NE=I-ORG|SpaceAfter=No"),
        ),
        (
            _row(5, "Madrid", "PROPN", "NE=B-LOC|SpaceAfter=No"),
            _row(5, "Madrid", "PROPN", "SpaceAfter=No"),
        ),
    ]


def test_ner_key_and_bioes_are_detected_and_kept(tmp_path):
    text = (
        "\n".join(
            [
                "# text = New York is big",
                _row(1, "New", misc="NER=B-LOC"),
                _row(2, "York", misc="NER=E-LOC"),
                _row(3, "is", misc="NER=O"),
                _row(4, "big", misc="NER=O"),
            ]
        )
        + "\n\n"
    )
    c = read_corpus(_file(tmp_path, text))
    assert c.scheme == "bioes" and c.sentences[0].spans == [Span(0, 2, "LOC")]
    c.sentences[0].spans = [Span(0, 1, "LOC")]
    write_corpus(c, tmp_path / "o.conllu")
    rows = [
        ln.split("\t")[9]
        for ln in (tmp_path / "o.conllu").read_text(encoding="utf-8").splitlines()[1:]
        if ln
    ]
    assert rows == ["NER=S-LOC", "NER=O", "NER=O", "NER=O"]  # the file wrote O explicitly: so do we


def test_a_corpus_from_another_format_becomes_minimal_conllu(tmp_path):
    s = Sentence(
        ["John", "lives", "in", "New", "York", "."],
        [Span(0, 1, "PER"), Span(3, 5, "LOC")],
        extra=[["NNP", "VBZ", "IN", "NNP", "NNP", "."]],
    )
    write_corpus(Corpus([Document([s])], format="conll2002"), tmp_path / "m.conllu", "conllu")
    lines = (tmp_path / "m.conllu").read_text(encoding="utf-8").splitlines()
    assert lines[:3] == [
        "# sent_id = 1",
        "# text = John lives in New York .",
        "1\tJohn\t_\tNNP\t_\t_\t_\t_\t_\tNE=B-PER",
    ]
    assert lines[5] == "4\tNew\t_\tNNP\t_\t_\t_\t_\t_\tNE=B-LOC"
    back = read_corpus(tmp_path / "m.conllu")
    assert back.sentences[0].words == s.words and back.sentences[0].spans == s.spans


def test_conllu_to_brat_keeps_the_sentence_text(tmp_path):
    assert cli_main(["convert", str(_file(tmp_path)), str(tmp_path / "out.ann")]) == 0
    txt = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert "Ana Pérez vive en Madrid.\n" in txt
    for line in (tmp_path / "out.ann").read_text(encoding="utf-8").splitlines():
        _, typed, surface = line.split("\t")
        _, a, b = typed.split()
        assert txt[int(a) : int(b)] == surface


@pytest.mark.parametrize(
    "bad,line,fragment",
    [
        (_row(1, "a") + "\nbroken\tline\n", 3, "10 tab-separated columns"),
        ("# text = a\n" + _row(1, "a", misc="NE=X-PER") + "\n", 3, "MISC NE"),
    ],
)
def test_bad_lines_are_one_error(tmp_path, capsys, bad, line, fragment):
    p = _file(tmp_path, "# sent_id = 1\n" + bad)
    with pytest.raises(FormatError) as info:
        read_corpus(p, format="conllu")
    assert info.value.line == line and fragment in info.value.message
    assert cli_main(["stats", str(p), "--from", "conllu"]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_strict_refuses_a_repaired_transition_at_its_line(tmp_path):
    # I-PER after O is repaired into B-PER; --strict must refuse it, naming the word's line
    text = "\n".join(
        [
            "# text = Paris a b",
            _row(1, "Paris", misc="NE=B-LOC"),
            "2-3\tab\t_\t_\t_\t_\t_\t_\t_\t_",
            _row(2, "a"),
            _row(3, "b", misc="NE=I-PER"),
            "",
            "",
        ]
    )
    p = _file(tmp_path, text)
    assert read_corpus(p).repairs == 1
    with pytest.raises(FormatError) as e:
        read_corpus(p, strict=True)
    assert e.value.line == 5 and "I-PER" in str(e.value)


def test_tags_on_ranges_and_empty_nodes_are_reported(tmp_path):
    # two entities on syntactic words, one on a multiword token, one on an empty node
    text = "\n".join(
        [
            "# text = Ana vámonos Bo",
            _row(1, "Ana", misc="NE=B-PER"),
            "2-3\tvámonos\t_\t_\t_\t_\t_\t_\t_\tNE=B-ORG",
            _row(2, "vamos"),
            _row(3, "nos"),
            "3.1\tx\t_\t_\t_\t_\t_\t_\t_\tNE=B-LOC",
            _row(4, "Bo", misc="NE=B-PER"),
            "",
            "",
        ]
    )
    p = _file(tmp_path, text)
    c = read_corpus(p)
    assert [sp for s in c.sentences for sp in s.spans] == [Span(0, 1, "PER"), Span(3, 4, "PER")]
    note = next(n for n in c.notes if "multiword" in n)
    assert note.startswith("2 entity tag(s)") and "line 3" in note
    with pytest.raises(FormatError):
        read_corpus(p, strict=True)
    out = tmp_path / "back.conllu"
    write_corpus(c, out)
    assert out.read_text(encoding="utf-8") == text
