"""Every sample of every format, real (fixtures/real here, from the tools' own repositories, see
its SOURCES.md) or written in their shapes (fixtures/shapes): read streamed (what ``stats``
and ``convert`` do) and whole (``nerstudio.read``, the application), the two agree, and whatever is
not kept is reported: the annotations in the file, counted here by an independent reading of its
raw text, equal the entities read plus those the notes say were set aside, and every other kind
of annotation (relations, events, notes…) that was not read is counted in a note. A file nerstudio
does not read is refused in one line that says what it is and what to do.

Survey of the brat example corpora (nlplab/brat ``example-data/corpora``, not kept here: their
texts carry their own terms), run once while writing this: BioNLP-ST 2011 EPI 20 documents, 365
entities; NCBI-disease 20 documents, 226 entities; CoNLL-ST 2002 esp 10 documents, 540 entities;
TDT 6 documents, 1,165 entities, 5,840 relation/attribute lines reported as not shown; ``stats``
and ``nerstudio.read`` agreed on every folder.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from helpers.samples import FIXTURES, OTHER_TOOLS, REAL, SHAPES

import nerstudio
from nerstudio.cli.commands.stats import corpus_stats
from nerstudio.corpus.formats import Reader
from nerstudio.errors import FormatError

pytestmark = pytest.mark.data_integrity


def noted(notes, *words) -> int:
    """The sum of the counts that open the notes holding all ``words``."""
    total = 0
    for n in notes:
        if all(w in n for w in words):
            m = re.match(r"(\d+) ", n)
            assert m, f"a note without its count: {n!r}"
            total += int(m.group(1))
    return total


def read_both(path: Path):
    r = Reader(str(path))
    st = corpus_stats(r)
    c = nerstudio.read(str(path))
    n_ents = sum(len(s.spans) for s in c.sentences)
    assert (st["documents"], st["sentences"], st["entities"]) == (
        len(c.documents),
        len(c.sentences),
        n_ents,
    )
    assert list(r.notes) == list(c.notes)
    return c, n_ents, list(c.notes)


# -- independent counts of what a file holds -------------------------------------------------


def jsonl_records(path: Path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def doccano_counts(path: Path):
    spans = rels = 0
    for r in jsonl_records(path):
        spans += sum(len(r.get(k) or []) for k in ("label", "labels", "entities", "annotations"))
        rels += len(r.get("relations") or [])
    return spans, rels


def prodigy_counts(path: Path):
    """Spans and relations of the tasks read (accepted, first of their _input_hash), and the
    number of tasks skipped."""
    spans = rels = skipped = 0
    seen = set()
    for r in jsonl_records(path):
        if r.get("answer", "accept") != "accept" or r.get("_input_hash") in seen:
            skipped += 1
            continue
        seen.add(r.get("_input_hash"))
        spans += len(r.get("spans") or [])
        rels += len(r.get("relations") or [])
    return spans, rels, skipped


def brat_counts(ann: Path):
    lines = [x for x in ann.read_text(encoding="utf-8").split("\n") if x.strip()]
    t = sum(x.lstrip("\ufeff").startswith("T") for x in lines)
    return t, len(lines) - t


def ud_mentions(path: Path) -> int:
    n = 0
    for line in path.read_text(encoding="utf-8").split("\n"):
        f = line.split("\t")
        if len(f) == 10 and f[0].isdigit():
            for attr in f[9].split("|"):
                if attr.startswith("Entity="):
                    n += attr.count("(")
    return n


# -- the samples ---------------------------------------------------------------------------

DOCCANO = [
    "real/doccano-1x-export.jsonl",
    "real/doccano-relation.jsonl",
    "real/doccano-seq-labeling.jsonl",
    "real/doccano-same-span-twice.jsonl",
    "shapes/doccano-mixed.jsonl",
]
PRODIGY = [
    "real/prodigy-ner-news-headlines.jsonl",
    "real/prodigy-reddit-product-ner.jsonl",
    "shapes/prodigy-rel-manual.jsonl",
]


@pytest.mark.parametrize("name", DOCCANO)
def test_doccano_samples_keep_or_report_every_span_and_relation(name):
    path = FIXTURES / name
    c, n_ents, notes = read_both(path)
    assert c.format.startswith("doccano")
    spans, rels = doccano_counts(path)
    assert n_ents + noted(notes, "annotated again") == spans  # else read, or an error at their line
    assert noted(notes, "relation") == rels
    if "1x" in name:
        assert noted(notes, "label id") == spans
    ids = [r.get("doc_id") for r in jsonl_records(path)]
    assert len(c.documents) == len(ids) - sum(
        1 for a, b in itertools.pairwise(ids) if a is not None and a == b
    )


@pytest.mark.parametrize("name", PRODIGY)
def test_prodigy_samples_keep_or_report_every_span_relation_and_task(name):
    path = FIXTURES / name
    c, n_ents, notes = read_both(path)
    assert c.format == "prodigy"
    spans, rels, skipped = prodigy_counts(path)
    assert n_ents + noted(notes, "annotated again") == spans
    assert noted(notes, "relation") == rels
    skip_notes = [n for n in notes if "skipped" in n]
    assert (
        sum(int(m) for n in skip_notes for m in re.findall(r"(\d+) (?:rejected|ignored|task)", n))
        == skipped
    )
    assert len(c.documents) == len(c.sentences)  # tasks without a doc_id are documents of their own


def test_brat_sample_keeps_or_reports_every_line():
    ann = SHAPES / "brat" / "visit.ann"
    _c, n_ents, notes = read_both(ann)
    t_lines, other = brat_counts(ann)
    assert n_ents + noted(notes, "set aside") == t_lines
    assert noted(notes, "not shown") == other
    assert noted(notes, "whitespace at their edges") == 1
    assert noted(notes, "read as one span") == 1


def test_ud_entity_sample_keeps_or_reports_every_mention():
    path = SHAPES / "ud-entity.conllu"
    _c, n_ents, notes = read_both(path)
    assert n_ents + noted(notes, "mention", "set aside") + noted(
        notes, "mention", "not read"
    ) == ud_mentions(path)
    assert any("Entity=" in n and "not only names" in n for n in notes)


def test_label_studio_single_task_keeps_or_reports_every_result():
    c, n_ents, notes = read_both(SHAPES / "label-studio-task.json")
    assert c.format == "label-studio" and n_ents == 3  # the latest annotation's three regions
    assert noted(notes, "other than labels") == 1  # its relation
    assert noted(notes, "several labels") == 1
    assert noted(notes, "several annotations") == 1


def test_hf_data_wrapper_sample():
    c, n_ents, notes = read_both(SHAPES / "hf-data-wrapper.json")
    assert c.format == "hf" and n_ents == 3 and not notes


def test_webanno_tsv3_sample_reports_the_stacked_entity():
    path = REAL / "webanno-tsv3-stacked.tsv"
    _c, n_ents, notes = read_both(path)
    values = [
        v
        for line in path.read_text(encoding="utf-8").split("\n")
        if re.match(r"\d+-\d+\t", line)
        for v in line.split("\t")[4].split("|")
        if v not in ("_", "")
    ]
    assert n_ents + noted(notes, "set aside") == len(set(values))  # one entity per distinct value


@pytest.mark.parametrize(
    "name,version",
    [
        ("real/webanno-tsv2-kappatest.tsv", "2"),
        ("real/webanno-tsv2-ne-stacked.tsv", "2"),
        ("shapes/webanno-tsv1.tsv", "1"),
    ],
)
def test_old_webanno_files_are_refused_saying_what_they_are(name, version):
    for read in (lambda p: corpus_stats(Reader(p)), nerstudio.read):
        with pytest.raises(FormatError, match=f"WebAnno TSV {version} file.*WebAnno TSV 3"):
            read(str(FIXTURES / name))


def test_every_sample_is_covered_by_a_test():
    names = {
        str(p.relative_to(FIXTURES))
        for p in list(REAL.glob("*")) + list(SHAPES.rglob("*"))
        if p.is_file()
        and p.suffix != ".md"
        and not p.name.endswith(".labels.txt")  # a sidecar
        and not (p.parent.name == "brat" and p.suffix == ".txt")  # the text of an .ann
    }
    covered = (
        set(DOCCANO)
        | set(PRODIGY)
        | set(OTHER_TOOLS)
        | {
            "shapes/brat/visit.ann",
            "shapes/ud-entity.conllu",
            "shapes/label-studio-task.json",
            "shapes/hf-data-wrapper.json",
            "real/webanno-tsv3-stacked.tsv",
            "real/webanno-tsv2-kappatest.tsv",
            "real/webanno-tsv2-ne-stacked.tsv",
            "shapes/webanno-tsv1.tsv",
        }
    )
    assert names == covered


@pytest.mark.parametrize(
    "fmt,name",
    [
        ("conll2003", "s.conll"),
        ("conll2002", "s.conll02"),
        ("columns", "s.cols"),
        ("tsv", "s.tsv"),
        ("jsonl", "s.jsonl"),
        ("hf", "s.hf.jsonl"),
        ("conllu", "s.conllu"),
        ("doccano", "s.doccano.jsonl"),
        ("prodigy", "s.prodigy.jsonl"),
        ("label-studio", "s.ls.json"),
    ],
)
def test_every_written_format_reads_back_alike_with_nothing_unreported(tmp_path, fmt, name):
    """The demo corpus written in every format nerstudio writes, read back streamed and whole:
    the same entities, and no note unless something was not kept."""
    from nerstudio.corpus import read_corpus, write_corpus

    demo = read_corpus(Path(nerstudio.__file__).parent / "demo" / "dev.conll")
    out = tmp_path / name
    write_corpus(demo, out, format=fmt)
    c, n_ents, notes = read_both(out)
    assert c.format == fmt or fmt == "columns"  # four columns read back as conll2003, rightly
    assert n_ents == sum(len(s.spans) for s in demo.sentences)
    if (
        fmt == "label-studio"
    ):  # written as pre-annotations: read from the predictions, which is said
        assert len(notes) == 1 and "read from their (most recent) prediction" in notes[0]
    else:
        assert notes == []
