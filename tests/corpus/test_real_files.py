"""Files from other tools' public repositories (fixtures/real here, see its SOURCES.md; shapes
written for nerstudio where a licence does not allow a copy): each is read as its tool meant it,
streamed and whole alike, or refused in one line that names the format and says what to do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.samples import FIXTURES, REAL

import nerstudio
from nerstudio.cli.commands.stats import corpus_stats
from nerstudio.corpus.convert import convert_file
from nerstudio.corpus.formats import Reader, read_corpus
from nerstudio.errors import FormatError

pytestmark = pytest.mark.data_integrity


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


def test_norne_name_attribute_in_misc(tmp_path):
    """NorNE (ltgoslo/norne, Norwegian UD) tags entities as ``name=B-PER`` in MISC; saved back
    unchanged, the file is the same bytes."""
    path = FIXTURES / "shapes" / "norne-name.conllu"
    c, notes = read_both(path)
    assert c.format == "conllu" and not notes
    assert entities(c) == [("Kari Nordmann", "PER"), ("Bergen", "GPE_LOC"), ("Statoil", "ORG")]
    out = tmp_path / "out.conllu"
    convert_file(path, out)
    assert out.read_bytes() == path.read_bytes()


def test_conllu_plus_with_a_declared_ner_column(tmp_path):
    """Flair's ``train.conllup``: ``# global.columns = id form ner misc``; its relations comments
    are reported; an edit is written into the declared column."""
    path = REAL / "flair-train.conllup"
    c, notes = read_both(path)
    assert c.format == "conllu"
    assert entities(c)[:3] == [("Larry Page", "PER"), ("Sergey Brin", "PER"), ("Google", "ORG")]
    assert any("relation(s) in '# relations' comments" in n for n in notes)
    out = tmp_path / "out.conllup"
    convert_file(path, out, to_format="conllu")
    # the same lines (CoNLL-U ends each sentence, the last too, with a blank line)
    assert out.read_bytes().rstrip(b"\n") == path.read_bytes().rstrip(b"\n")
    c.sentences[0].spans = c.sentences[0].spans[:1]  # Sergey Brin and Google no longer entities
    from nerstudio.corpus import write_corpus

    write_corpus(c, out, format="conllu")
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("# global.columns") and "4\tSergey\tPROPN\tO\t_" in lines
    assert entities(read_corpus(out)) == entities(c)
    assert entities(c)[:2] == [("Larry Page", "PER"), ("Microsoft", "ORG")]


def test_flair_five_column_conllu_is_refused_saying_what_to_declare():
    for read in (lambda p: corpus_stats(Reader(p)), nerstudio.read):
        with pytest.raises(FormatError, match="global.columns = ID FORM UPOS NER MISC") as exc:
            read(str(REAL / "flair-5-columns.conllu"))
        assert "ragged" not in str(exc.value)


def test_germeval_2014_outer_level_read_inner_level_reported():
    c, notes = read_both(FIXTURES / "shapes" / "germeval2014.tsv")
    assert c.format == "germeval" and len(c.documents) == 2
    assert entities(c) == [
        ("Landesregierung von Hessen", "ORG"),
        ("Wiesbaden", "LOC"),
        ("deutsche", "LOCderiv"),
        ("Jens Maier", "PER"),
        ("Berliner Volksbank-Liga", "ORG"),
    ]
    (note,) = notes
    assert note.startswith("3 inner-level entit(ies)") and "line 5" in note


def test_ontonotes_conll_2012_named_entity_brackets():
    c, notes = read_both(FIXTURES / "shapes" / "ontonotes.gold_conll")
    assert c.format == "ontonotes"
    assert [d.id for d in c.documents] == [
        "nw/demo/00/demo_0001; part 000",
        "nw/demo/00/demo_0002; part 000",
    ]
    assert entities(c) == [
        ("Maria Lopez", "PERSON"),
        ("Acme Robotics", "ORG"),
        ("2019", "DATE"),
        ("Lisbon", "GPE"),
        ("Geneva", "GPE"),
        ("Friday", "DATE"),
    ]
    assert any("coreference" in n for n in notes)


def test_ontonotes_skeleton_file_is_refused_saying_so(tmp_path):
    text = (FIXTURES / "shapes" / "ontonotes.gold_conll").read_text(encoding="utf-8")
    path = tmp_path / "demo.v4_gold_skel"
    path.write_text(
        "\n".join(
            " ".join(f[:3] + ["[WORD]"] + f[4:]) if len(f := line.split()) > 10 else line
            for line in text.split("\n")
        ),
        encoding="utf-8",
    )
    with pytest.raises(FormatError, match="skeleton file.*CoNLL-2012 scripts"):
        nerstudio.read(str(path))


def test_label_studio_tsv_export_is_refused_naming_it():
    for read in (lambda p: corpus_stats(Reader(p)), nerstudio.read):
        with pytest.raises(
            FormatError, match="Label Studio's TSV export.*export the project as JSON"
        ):
            read(str(FIXTURES / "shapes" / "label-studio-export.tsv"))


@pytest.mark.parametrize("name", ["train.txt", "train.tsv", "train"])
def test_flair_five_columns_under_another_name_are_named_not_misread(tmp_path, name):
    """Whatever its name, the file is not read as plain text or as ragged columns."""
    path = tmp_path / name
    path.write_bytes((REAL / "flair-5-columns.conllu").read_bytes())
    with pytest.raises(FormatError, match="CoNLL-U in another tool's columns.*global.columns"):
        nerstudio.read(str(path))


def test_conllu_plus_without_an_entity_column_says_so(tmp_path):
    """The CoNLL-U Plus example of Universal Dependencies' documentation declares PARSEME:MWE,
    no entity column: read with no entities and a note naming the declared columns."""
    path = tmp_path / "mwe.conllup"
    path.write_text(
        "# global.columns = ID FORM UPOS HEAD DEPREL MISC PARSEME:MWE\n"
        "# text = She took the lead.\n"
        "1\tShe\tPRON\t2\tnsubj\t_\t*\n"
        "2\ttook\tVERB\t0\troot\t_\t1:VID\n"
        "3\tthe\tDET\t4\tdet\t_\t*\n"
        "4\tlead\tNOUN\t2\tobj\tSpaceAfter=No\t1\n"
        "5\t.\tPUNCT\t2\tpunct\t_\t*\n\n",
        encoding="utf-8",
    )
    c, notes = read_both(path)
    assert c.format == "conllu" and c.sentences[0].words == ("She", "took", "the", "lead", ".")
    assert not entities(c) and any("PARSEME:MWE" in n and "no entities read" in n for n in notes)


def test_label_studio_region_drawn_twice_is_read_once(tmp_path):
    path = tmp_path / "ls.json"
    region = {
        "type": "labels",
        "from_name": "label",
        "to_name": "text",
        "value": {"start": 0, "end": 4, "text": "Anna", "labels": ["PER"]},
    }
    task = {"data": {"text": "Anna sings."}, "annotations": [{"result": [region, region]}]}
    path.write_text(json.dumps([task]), encoding="utf-8")
    c, notes = read_both(path)
    assert entities(c) == [("Anna", "PER")]
    assert any(n.startswith("1 entit(ies) annotated again") for n in notes)


def test_nerstudio_jsonl_span_given_twice_is_not_called_nested(tmp_path):
    path = tmp_path / "twice.jsonl"
    path.write_text('{"text": "Anna sings", "spans": [[0, 4, "PER"], [0, 4, "PER"]]}\n')
    with pytest.raises(FormatError, match="given twice") as exc:
        nerstudio.read(str(path))
    assert "nested" not in str(exc.value)
