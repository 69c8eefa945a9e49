"""WebAnno / INCEpTION TSV 3 import: the NamedEntity layer's value column, multi-token entities
by their [n] ids, the reported choices (stacked, unlabelled), document offsets, and refusal to
write."""

from __future__ import annotations

import pytest

from nerstudio.cli import main as cli_main
from nerstudio.corpus.detect import sniff_format
from nerstudio.corpus.formats import read_corpus, write_corpus
from nerstudio.corpus.model import Span
from nerstudio.errors import FormatError

# the documented shape: header, two span layers (POS, then NamedEntity with identifier and
# value), sentences of #Text and token lines with document offsets; our own sentences
TSV = "\n".join(
    [
        "#FORMAT=WebAnno TSV 3.3",
        "#T_SP=de.tudarmstadt.ukp.dkpro.core.api.lexmorph.type.pos.POS|PosValue",
        "#T_SP=de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity|identifier|value",
        "",
        "",
        "#Text=Greta Lind flew to Oslo Airport.",
        "1-1\t0-5\tGreta\tNNP\t*[1]\tPER[1]\t",
        "1-2\t6-10\tLind\tNNP\t*[1]\tPER[1]\t",
        "1-3\t11-15\tflew\tVBD\t_\t_\t",
        "1-4\t16-18\tto\tTO\t_\t_\t",
        "1-5\t19-23\tOslo\tNNP\t*[2]|*[3]\tLOC[2]|FAC[3]\t",
        "1-6\t24-31\tAirport\tNNP\t*[3]\tFAC[3]\t",
        "1-7\t31-32\t.\t.\t_\t_\t",
        "",
        "#Text=Norway ?",
        "2-1\t34-40\tNorway\tNNP\t_\tLOC\t",
        "2-2\t41-42\t?\t.\t_\t*\t",
        "",
        "",
    ]
)


def _file(tmp_path, text=TSV, name="export.tsv"):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return p


def test_detected_by_its_header_not_as_nerstudio_tsv(tmp_path):
    assert sniff_format(_file(tmp_path)) == "webanno"


def test_entities_offsets_and_reported_choices(tmp_path):
    c = read_corpus(_file(tmp_path))
    s1, s2 = c.sentences
    assert s1.spans == [
        Span(0, 2, "PER"),
        Span(4, 6, "FAC"),
    ]  # FAC[3] is longer than the stacked LOC[2]
    assert s2.spans == [Span(0, 1, "LOC")]
    text = c.documents[0].text
    offsets = [(0, 5), (6, 10), (11, 15), (16, 18), (19, 23), (24, 31), (31, 32)]
    assert list(s1.offsets) == offsets  # the file's own document offsets
    assert list(s2.offsets) == [(34, 40), (41, 42)]
    assert [text[a:b] for a, b in s1.offsets + s2.offsets] == list(s1.words + s2.words)
    notes = " ".join(c.notes)
    assert "1 stacked (overlapping) entity set aside" in notes
    assert "1 entity without a value (*) not read" in notes


def test_stats_prints_the_notes_and_writing_is_refused(tmp_path, capsys):
    p = _file(tmp_path)
    assert cli_main(["stats", str(p)]) == 0
    assert "note:" in capsys.readouterr().err
    c = read_corpus(p)
    with pytest.raises(FormatError, match="jsonl"):
        write_corpus(c, tmp_path / "back.tsv", "webanno")
    assert cli_main(["convert", str(p), str(tmp_path / "out.ann")]) == 0
    txt = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert txt.startswith("Greta Lind flew to Oslo Airport.")
    ann = (tmp_path / "out.ann").read_text(encoding="utf-8")
    assert "PER 0 10\tGreta Lind" in ann and "LOC 34 40\tNorway" in ann


def test_a_token_line_that_is_not_one_is_an_error_at_its_line(tmp_path, capsys):
    bad = TSV.replace("1-3\t11-15\tflew", "1-3 11-15 flew")
    p = _file(tmp_path, bad)
    with pytest.raises(FormatError) as info:
        read_corpus(p)
    assert info.value.line == 9
    assert cli_main(["stats", str(p)]) == 1
    assert capsys.readouterr().err.startswith(f"nerstudio: error: {p}:9:")


def test_offsets_in_utf16_units_around_characters_outside_the_bmp(tmp_path):
    """INCEpTION counts offsets in UTF-16 code units: an emoji is two there. The gap between
    two sentences must come out as the file says (one line break), not one space too many."""
    tsv = "\n".join(
        [
            "#FORMAT=WebAnno TSV 3.3",
            "#T_SP=de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity|identifier|value",
            "",
            "",
            "#Text=Greta \U0001f600 flew.",
            "1-1\t0-5\tGreta\t_\tPER\t",
            "1-2\t6-8\t\U0001f600\t_\t_\t",
            "1-3\t9-13\tflew\t_\t_\t",
            "1-4\t13-14\t.\t_\t_\t",
            "",
            "#Text=Oslo",
            "2-1\t15-19\tOslo\t_\tLOC\t",
            "",
            "",
        ]
    )
    c = read_corpus(_file(tmp_path, tsv))
    text = c.documents[0].text
    assert text == "Greta \U0001f600 flew.\nOslo\n"
    s1, s2 = c.sentences
    assert [text[a:b] for a, b in s1.offsets + s2.offsets] == [
        "Greta",
        "\U0001f600",
        "flew",
        ".",
        "Oslo",
    ]
    assert s1.spans == [Span(0, 1, "PER")] and s2.spans == [Span(0, 1, "LOC")]
