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


def _tsv(tmp_path, rows, name="g.tsv"):
    head = ["#FORMAT=WebAnno TSV 3.3", "#T_SP=" + NE + "|identifier|value", "", ""]
    p = tmp_path / name
    p.write_text("\n".join(head + rows + ["", ""]), encoding="utf-8")
    return p


NE = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"


def test_an_id_with_a_gap_or_two_labels_is_reported_not_merged(tmp_path):
    rows = [
        "#Text=Ann met Bob Smith in New York",
        "1-1\t0-3\tAnn\t*[1]\tPER[1]\t",  # PER[1] on Ann and Bob: "met" left out
        "1-2\t4-7\tmet\t_\t_\t",
        "1-3\t8-11\tBob\t*[1]|*[2]\tPER[1]|PER[2]\t",
        "1-4\t12-17\tSmith\t*[2]\tPER[2]\t",  # PER[2]: Bob Smith, read
        "1-5\t18-20\tin\t_\t_\t",
        "1-6\t21-24\tNew\t*[3]\tLOC[3]\t",  # LOC[3] then GPE[3]: one id, two labels
        "1-7\t25-29\tYork\t*[3]\tGPE[3]\t",
    ]
    c = read_corpus(_tsv(tmp_path, rows))
    assert c.sentences[0].spans == [Span(2, 4, "PER")]
    notes = " | ".join(c.notes)
    assert "1 discontinuous entity" in notes and "1 entity with two labels" in notes
    with pytest.raises(FormatError):
        read_corpus(_tsv(tmp_path, rows), strict=True)


def _many(tmp_path, n):
    """A file of ``n`` two-token entities in sentences of twelve tokens (four entities each)."""
    rows, pos, k = [], 0, 0
    for sent in range(1, n // 4 + 1):
        rows.append("#Text=" + " ".join(["Ab"] * 12))
        for i in range(12):
            cell = "_"
            if i % 3 != 2:
                cell = f"PER[{k + 1}]"
                if i % 3 == 1:
                    k += 1
            rows.append(f"{sent}-{i + 1}\t{pos}-{pos + 2}\tAb\t_\t{cell}\t")
            pos += 3
        rows.append("")
    return _tsv(tmp_path, rows, f"many{n}.tsv")


@pytest.mark.slow
def test_reading_grows_linearly_with_the_entities(tmp_path):
    # ten times the entities must cost about ten times as much, not a hundred (the stacked-entity
    # check compared every entity with every kept one: 20,000 entities took a minute)
    import time

    def cost(p):
        t = time.process_time()
        c = read_corpus(p)
        return time.process_time() - t, sum(len(s.spans) for s in c.sentences)

    small, large = _many(tmp_path, 2000), _many(tmp_path, 20000)
    cost(small)  # warm up (imports)
    t_small, n_small = min(cost(small), cost(small))
    t_large, n_large = cost(large)
    assert (n_small, n_large) == (2000, 20000)
    assert t_large < 40 * max(t_small, 0.01)
