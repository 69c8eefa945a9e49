"""Issue 22, the parts about other tools' files: what a reader does not keep as it was is
reported (a ``note:`` line, :attr:`Corpus.notes`), ``--strict`` turns it into an error, and the
streamed reader (``stats``/``convert``) and the whole-file reader (``nerstudio.read``, the
application) agree. One test per numbered case; each failed on the code before the fix.

The files are written here in our own words, in the shapes the tools' own repositories show
(doccano 1.x export examples, Prodigy rel.manual tasks, Label Studio tasks, WebAnno TSV 1/2 test
files, UD treebanks with ``Entity=`` brackets); real samples are in tests/corpus/fixtures/real
(test_real_samples.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib

import pytest

import nerstudio
from nerstudio.cli import main
from nerstudio.cli.commands.stats import corpus_stats
from nerstudio.corpus import read_corpus, write_corpus
from nerstudio.corpus.formats import Reader
from nerstudio.errors import FormatError

pytestmark = pytest.mark.data_integrity


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def streamed(path, fmt=None):
    """What ``stats`` sees: (documents, sentences, entities by label, notes)."""
    r = Reader(str(path), fmt)
    st = corpus_stats(r)
    return st["documents"], st["sentences"], st["entities_by_type"], list(r.notes)


def whole(path, fmt=None):
    c = nerstudio.read(str(path), format=fmt)
    labels: dict = {}
    for s in c.sentences:
        for sp in s.spans:
            labels[sp.label] = labels.get(sp.label, 0) + 1
    return len(c.documents), len(c.sentences), dict(sorted(labels.items())), list(c.notes)


def both(path, fmt=None):
    a, b = streamed(path, fmt), whole(path, fmt)
    assert a == b, "stats and nerstudio.read disagree"
    return a


def write_lines(path, objs):
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


# -- case 4: doccano 1.x exports name labels by id ---------------------------------------------


def test_case4_doccano_1x_label_ids_are_read_and_reported(tmp_path, capsys):
    p = write_lines(
        tmp_path / "export.jsonl",
        [
            {
                "id": 7,
                "text": "Lena visited Oslo.",
                "annotations": [
                    {"id": 1, "label": 2, "start_offset": 0, "end_offset": 4, "user": 1},
                    {"id": 2, "label": 5, "start_offset": 13, "end_offset": 17, "user": 1},
                ],
                "meta": {},
            },
            {"id": 8, "text": "Nothing here.", "annotations": [], "meta": {}},
        ],
    )
    for fmt in (None, "doccano"):
        _docs, _sents, labels, notes = both(p, fmt)
        assert labels == {"2": 1, "5": 1}
        assert any("label id" in n and "line 1" in n for n in notes)
    code, _, err = run(capsys, "stats", p)
    assert code == 0 and "note:" in err and "label id" in err
    code, _, err = run(capsys, "stats", "--strict", p)
    assert code == 1 and "label id" in err


# -- case 5: whitespace at a span's edges -------------------------------------------------------


@pytest.mark.parametrize("fmt", ["doccano", "jsonl"])
def test_case5_trimmed_spans_are_reported_with_count_and_example(tmp_path, capsys, fmt):
    key = "label" if fmt == "doccano" else "spans"
    p = write_lines(
        tmp_path / "ws.jsonl",
        [
            {
                "text": "KEN CRUZ   went to kgotla ya Magapatona",
                key: [[0, 11, "PER"], [18, 39, "LOC"]],
            },
            {"text": "No space here", key: [[0, 2, "X"]]},
        ],
    )
    _docs, _sents, labels, notes = both(p, fmt)
    assert labels == {"LOC": 1, "PER": 1, "X": 1}
    trim = [n for n in notes if "whitespace at their edges" in n]
    assert (
        len(trim) == 1
        and trim[0].startswith("2 span(s)")
        and "line 1" in trim[0]
        and "'KEN CRUZ   '" in trim[0]
    )
    out = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "convert", p, out, "--to", "doccano")
    assert code == 0 and "whitespace at their edges" in err
    assert (
        run(capsys, "convert", "--strict", p, tmp_path / "strict.jsonl", "--to", "doccano")[0] == 1
    )
    assert not (tmp_path / "strict.jsonl").exists()


def test_case5_prodigy_tokens_with_whitespace_edges_reported(tmp_path):
    text = "Meet  KEN CRUZ today"
    toks = [
        {"text": w, "start": a, "end": b, "id": i}
        for i, (w, a, b) in enumerate(
            [("Meet", 0, 4), (" ", 5, 6), ("KEN", 6, 9), ("CRUZ", 10, 14), ("today", 15, 20)]
        )
    ]
    p = write_lines(
        tmp_path / "p.jsonl",
        [
            {
                "text": text,
                "tokens": toks,
                "spans": [
                    {"start": 5, "end": 14, "token_start": 1, "token_end": 3, "label": "PER"}
                ],
                "answer": "accept",
            }
        ],
    )
    _, _, labels, notes = both(p)
    assert labels == {"PER": 1}
    assert any("whitespace at their edges" in n for n in notes)


# -- case 6: Prodigy rel.manual relations -------------------------------------------------------


def _rel_task(text, ents, rels):
    toks, pos = [], 0
    for i, w in enumerate(text.split(" ")):
        toks.append({"text": w, "start": pos, "end": pos + len(w), "id": i, "ws": True})
        pos += len(w) + 1
    spans = [
        {
            "start": toks[a]["start"],
            "end": toks[b]["end"],
            "token_start": a,
            "token_end": b,
            "label": lab,
        }
        for a, b, lab in ents
    ]
    relations = [
        {
            "head": spans[h]["token_end"],
            "child": spans[c]["token_end"],
            "head_span": spans[h],
            "child_span": spans[c],
            "label": lab,
        }
        for h, c, lab in rels
    ]
    return {
        "text": text,
        "tokens": toks,
        "spans": spans,
        "relations": relations,
        "answer": "accept",
        "_view_id": "relations",
        "_input_hash": zlib.crc32(text.encode()),  # not hash(): salted per process, it can collide
        "_task_hash": 1,
    }


def test_case6_prodigy_relations_are_reported_on_read_and_strict_refuses(tmp_path, capsys):
    p = write_lines(
        tmp_path / "rel.jsonl",
        [
            _rel_task(
                "Ada works for Acme in Leeds",
                [(0, 0, "PER"), (3, 3, "ORG"), (5, 5, "LOC")],
                [(0, 1, "EMPLOYER"), (1, 2, "LOCATED")],
            ),
            _rel_task("Bo met Cy", [(0, 0, "PER"), (2, 2, "PER")], [(0, 1, "KNOWS")]),
        ],
    )
    _, _, labels, notes = both(p)
    assert labels == {"LOC": 1, "ORG": 1, "PER": 3}
    rel = [n for n in notes if "relation" in n]
    assert (
        len(rel) == 1
        and rel[0].startswith("3 relation(s)")
        and "line 1" in rel[0]
        and "'Ada'" in rel[0]
    )
    for target in ("out.jsonl", "out.conll"):
        code, _, err = run(capsys, "convert", p, tmp_path / target)
        assert code == 0 and "3 relation(s)" in err
    assert run(capsys, "convert", "--strict", p, tmp_path / "s.conll")[0] == 1
    assert not (tmp_path / "s.conll").exists()


# -- case 7: refusals that say what the file is -------------------------------------------------


def test_case7_single_label_studio_task_object_is_read(tmp_path):
    task = {
        "id": 3,
        "data": {"text": "Tom met Ann."},
        "annotations": [
            {
                "result": [
                    {
                        "type": "labels",
                        "from_name": "label",
                        "to_name": "text",
                        "value": {"start": 8, "end": 11, "text": "Ann", "labels": ["PER"]},
                    }
                ]
            }
        ],
    }
    pretty = tmp_path / "task.json"
    pretty.write_text(json.dumps(task, indent=2), encoding="utf-8")
    one_line = tmp_path / "task1.json"
    one_line.write_text(json.dumps(task), encoding="utf-8")
    for p in (pretty, one_line):
        docs, sents, labels, _notes = both(p)
        assert (docs, sents, labels) == (1, 1, {"PER": 1})
        assert read_corpus(p).format == "label-studio"


WEBANNO_2 = (
    " # de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity | value\n#id=1\n"
    "#text=Ida lives in Rome .\n1-1\tIda\tB-PER\t\n1-2\tlives\tO\t\n1-3\tin\tO\t\n1-4\tRome\tB-LOC\t\n"
    "1-5\t.\tO\t\n"
)
WEBANNO_1 = (
    "#id=1\n#text=Ida lives in Rome .\n1\tIda\tIda\tNNP\tB-PER\t_\t2\tnsubj\t_\t_\n"
    "2\tlives\tlive\tVBZ\tO\t_\t0\tROOT\t_\t_\n3\tin\tin\tIN\tO\t_\t2\tprep\t_\t_\n"
    "4\tRome\tRome\tNNP\tB-LOC\t_\t3\tpobj\t_\t_\n5\t.\t.\t.\tO\t_\t2\tpunct\t_\t_\n"
)


@pytest.mark.parametrize("content,version", [(WEBANNO_2, "2"), (WEBANNO_1, "1")])
def test_case7_webanno_tsv_1_and_2_are_named_with_what_to_do(tmp_path, capsys, content, version):
    p = tmp_path / "doc.tsv"
    p.write_text(content, encoding="utf-8")
    code, _, err = run(capsys, "stats", p)
    assert code == 1
    assert f"WebAnno TSV {version} file" in err and "WebAnno TSV 3" in err and "INCEpTION" in err
    assert "try --from tsv" not in err and "ragged" not in err
    with pytest.raises(FormatError, match="WebAnno TSV"):
        nerstudio.read(str(p))


# -- case 8: UD Entity= brackets ----------------------------------------------------------------

UD = """# newdoc id = d1
# global.Entity = eid-etype-head-other
# sent_id = 1
# text = The old mill of Ashford burned.
1\tThe\tthe\tDET\tDT\t_\t3\tdet\t_\tEntity=(e1-place-3
2\told\told\tADJ\tJJ\t_\t3\tamod\t_\t_
3\tmill\tmill\tNOUN\tNN\t_\t6\tnsubj\t_\t_
4\tof\tof\tADP\tIN\t_\t5\tcase\t_\t_
5\tAshford\tAshford\tPROPN\tNNP\t_\t3\tnmod\t_\tEntity=(e2-place-1)e1)
6\tburned\tburn\tVERB\tVBD\t_\t0\troot\t_\tSpaceAfter=No
7\t.\t.\tPUNCT\t.\t_\t6\tpunct\t_\t_

# sent_id = 2
# text = Mary Lee and Bo rebuilt it.
1\tMary\tMary\tPROPN\tNNP\t_\t5\tnsubj\t_\tEntity=(e3-person-1
2\tLee\tLee\tPROPN\tNNP\t_\t1\tflat\t_\tEntity=e3)
3\tand\tand\tCCONJ\tCC\t_\t4\tcc\t_\t_
4\tBo\tBo\tPROPN\tNNP\t_\t1\tconj\t_\tEntity=(e4[1/2]-person-1)
5\trebuilt\trebuild\tVERB\tVBD\t_\t0\troot\t_\t_
6\tit\tit\tPRON\tPRP\t_\t5\tobj\t_\tEntity=(e1-place-1)|SpaceAfter=No
7\t.\t.\tPUNCT\t.\t_\t5\tpunct\t_\t_

"""


def test_case8_ud_entity_brackets_are_read_and_what_is_set_aside_reported(tmp_path):
    p = tmp_path / "ud.conllu"
    p.write_text(UD, encoding="utf-8")
    _docs, _sents, labels, notes = both(p)
    assert labels == {"person": 1, "place": 2}
    c = read_corpus(p)
    assert [[(sp.start, sp.end, sp.label) for sp in s.spans] for s in c.sentences] == [
        [(0, 5, "place")],
        [(0, 2, "person"), (5, 6, "place")],
    ]
    assert any("Entity=" in n and "not only names" in n for n in notes)
    assert any(n.startswith("1 nested") and "line 9" in n for n in notes)
    assert any(n.startswith("1 discontinuous") and "line 18" in n for n in notes)


def test_case8_no_entity_attribute_at_all_is_said(tmp_path):
    p = tmp_path / "plain.conllu"
    p.write_text(
        "# text = Hi there\n1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n"
        "2\tthere\tthere\tADV\t_\t_\t1\tadvmod\t_\t_\n\n",
        encoding="utf-8",
    )
    _, _, labels, notes = both(p)
    assert labels == {} and any("no NE=, NER= or name= attribute" in n for n in notes)


# -- case 9: records without ids are documents of their own -------------------------------------


def test_case9_records_without_ids_are_separate_documents_and_ids_group(tmp_path):
    p = write_lines(
        tmp_path / "d.jsonl",
        [{"text": f"Text number {k}.", "label": []} for k in range(4)]
        + [{"text": "A.", "label": [], "doc_id": "x"}, {"text": "B.", "label": [], "doc_id": "x"}],
    )
    docs, sents, _, _ = both(p)
    assert (docs, sents) == (5, 6)
    out = tmp_path / "back.jsonl"
    write_corpus(read_corpus(p), out)
    back = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r.get("doc_id") for r in back] == [None, None, None, None, "x", "x"]  # no invented ids


def test_case9_prodigy_tasks_are_documents_of_their_own(tmp_path):
    p = write_lines(
        tmp_path / "p.jsonl",
        [
            {
                "text": "Ann slept.",
                "spans": [],
                "_input_hash": 1,
                "_task_hash": 1,
                "answer": "accept",
            },
            {
                "text": "Bob ran.",
                "spans": [],
                "_input_hash": 2,
                "_task_hash": 2,
                "answer": "accept",
            },
            {
                "text": "Cy sat.",
                "spans": [],
                "_input_hash": 3,
                "_task_hash": 3,
                "answer": "accept",
                "meta": {"doc_id": "d"},
            },
            {
                "text": "Di sat.",
                "spans": [],
                "_input_hash": 4,
                "_task_hash": 4,
                "answer": "accept",
                "meta": {"doc_id": "d"},
            },
        ],
    )
    docs, sents, _, _ = both(p)
    assert (docs, sents) == (3, 4)


# -- case 12: readers that disagree or drop -----------------------------------------------------


def test_case12_concatenated_outputs_and_a_repeated_line_read_alike_everywhere(tmp_path, capsys):
    src = tmp_path / "t.txt"
    src.write_text("Tom met Ann. She waved.\n\nBob left.\n", encoding="utf-8")
    one = tmp_path / "one.jsonl"
    assert run(capsys, "convert", src, one, "--to", "jsonl")[0] == 0
    lines = one.read_text(encoding="utf-8").splitlines(keepends=True)
    cat = tmp_path / "cat.jsonl"
    cat.write_text("".join(lines * 2), encoding="utf-8")
    dup = tmp_path / "dup.jsonl"
    dup.write_text("".join([lines[0]] + lines), encoding="utf-8")
    for p, n_docs, line in ((cat, 2, 4), (dup, 2, 2)):
        docs, _sents, _, notes = both(p)
        assert docs == n_docs
        assert any("new document" in n and f"line {line}" in n for n in notes)


def test_case12_doccano_mixed_modes_keep_both_modes_entities(tmp_path):
    p = write_lines(
        tmp_path / "mix.jsonl",
        [
            {"text": "Tom met Ann.", "label": [[0, 3, "PER"]]},
            {
                "text": "Bob met Cy.",
                "entities": [{"id": 1, "start_offset": 8, "end_offset": 10, "label": "PER"}],
            },
        ],
    )
    _, _, labels, notes = both(p)
    assert labels == {"PER": 2}
    assert any("other doccano mode" in n and "line 2" in n for n in notes)


def test_case12_brat_t_line_after_a_byte_order_mark_is_read(tmp_path):
    (tmp_path / "d.txt").write_text("Ann met Bob.\n", encoding="utf-8")
    (tmp_path / "d.ann").write_text("T1\tPER 0 3\tAnn\n\ufeffT2\tPER 8 11\tBob\n", encoding="utf-8")
    _, _, labels, notes = both(tmp_path / "d.ann")
    assert labels == {"PER": 2}
    assert any("byte-order mark" in n and "line 2" in n for n in notes)


def test_case12_brat_superscript_offset_is_a_file_line_error(tmp_path, capsys):
    (tmp_path / "d.txt").write_text("Ann met Bob.\n", encoding="utf-8")
    (tmp_path / "d.ann").write_text("T1\tPER 0 3\u00b2\tAnn\n", encoding="utf-8")
    code, _, err = run(capsys, "stats", tmp_path / "d.ann")
    assert code == 1 and "d.ann:1:" in err and "bad offsets" in err


def test_case12_ner_words_in_an_ne_file_are_read(tmp_path):
    p = tmp_path / "m.conllu"
    p.write_text(
        "1\tAnn\t_\t_\t_\t_\t0\troot\t_\tNE=B-PER\n2\tand\t_\t_\t_\t_\t1\tcc\t_\t_\n"
        "3\tOslo\t_\t_\t_\t_\t1\tconj\t_\tNER=B-LOC\n\n",
        encoding="utf-8",
    )
    _, _, labels, notes = both(p)
    assert labels == {"LOC": 1, "PER": 1}
    assert any("NER=" in n and "line 3" in n for n in notes)


def test_case12_characters_the_tokens_skip_are_refused(tmp_path):
    p = write_lines(
        tmp_path / "skip.jsonl", [{"text": "Ann, Bob", "tokens": ["Ann", "Bob"], "spans": []}]
    )
    for read in (lambda: streamed(p), lambda: whole(p)):
        with pytest.raises(FormatError, match="no token covers"):
            read()


def test_case12_hf_data_wrapper_on_one_line_is_read(tmp_path):
    p = tmp_path / "hf.json"
    p.write_text(
        json.dumps(
            {
                "data": [
                    {"tokens": ["Ann", "ran"], "ner_tags": ["B-PER", "O"]},
                    {"tokens": ["Bo"], "ner_tags": ["B-PER"]},
                ]
            }
        ),
        encoding="utf-8",
    )
    _docs, sents, labels, _ = both(p)
    assert (sents, labels) == (2, {"PER": 2})


@pytest.mark.parametrize("field", ["doc_id", "before", "columns"])
def test_case12_lone_surrogates_are_refused_in_every_field_when_read(tmp_path, field):
    rec = {
        "text": "Ann ran",
        "spans": [],
        "offset": 0,
        "before": "",
        "columns": [["N", "V"]],
        "doc_id": "d",
    }
    line = json.dumps(rec)
    bad = {
        "doc_id": '"doc_id": "d\\ud800"',
        "before": '"before": "\\udc00"',
        "columns": '"N", "\\ud801"',
    }[field]
    line = line.replace(
        {"doc_id": '"doc_id": "d"', "before": '"before": ""', "columns": '"N", "V"'}[field], bad
    )
    p = tmp_path / "s.jsonl"
    p.write_text(line + "\n", encoding="utf-8")
    for read in (lambda: streamed(p), lambda: whole(p)):
        with pytest.raises(FormatError, match="surrogate"):
            read()


def test_case12_lone_surrogate_in_hf_token_is_refused_when_read(tmp_path):
    p = tmp_path / "hf.jsonl"
    p.write_text('{"tokens": ["Ann", "\\ud800"], "ner_tags": ["B-PER", "O"]}\n', encoding="utf-8")
    with pytest.raises(FormatError, match="surrogate"):
        whole(p)


def test_case12_tsv_with_a_first_token_over_64_kib_is_detected(tmp_path):
    p = tmp_path / "long.tsv"
    p.write_text("x" * 70_000 + "\tB-PER\ny\tO\n", encoding="utf-8")
    _docs, _sents, labels, _ = both(p)
    assert read_corpus(p).format == "tsv" and labels == {"PER": 1}


# -- case 14: cost and inputs that never end ----------------------------------------------------


def cli_bounded(*argv):
    """The command line in a child process, stopped after 60 s (a FIFO blocked and /dev/zero grew
    without end before: the test fails instead of hanging)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run(
        [sys.executable, "-m", "nerstudio", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    return p.returncode, p.stderr


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_case14_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "pipe.conll"
    os.mkfifo(fifo)
    for argv in (
        ("stats", fifo),
        ("stats", "--from", "conll2003", fifo),
        ("stats", "--from", "prodigy", fifo),
    ):
        code, err = cli_bounded(*argv)
        assert code == 1 and "named pipe" in err and str(fifo) in err


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("fmt", ["conll2003", "jsonl", "doccano", "brat"])
def test_case14_a_device_with_a_forced_format_is_refused(fmt):
    code, err = cli_bounded("stats", "--from", fmt, "/dev/zero")
    assert code == 1 and "device" in err and "/dev/zero" in err


def test_case14_brat_overlap_choice_matches_brute_force():
    """The n log n choice of brat's non-overlapping entities equals the quadratic one."""
    import random

    from nerstudio.corpus.foreign.brat import _choose

    rng = random.Random(7)
    for _ in range(200):
        ents = []
        for k in range(rng.randint(0, 30)):
            a = rng.randint(0, 60)
            b = a + rng.randint(1, 8)
            disc = rng.random() < 0.1
            ents.append((a, b, "L", k + 1, f"T{k + 1}", disc, not disc or rng.random() < 0.5))
        kept_ref, aside_ref = [], {"overlap": [], "discontinuous": []}
        for e in sorted(ents, key=lambda e: (-(e[1] - e[0]), e[0], e[3])):
            if e[5] and not e[6]:
                aside_ref["discontinuous"].append(e)
            elif any(e[0] < k[1] and k[0] < e[1] for k in kept_ref):
                aside_ref["overlap"].append(e)
            else:
                kept_ref.append(e)
        assert _choose(ents) == (sorted(kept_ref), aside_ref)


def test_case14_segment_merge_matches_brute_force():
    """The one-sweep sentence merge of segment.split equals the all-pairs one."""
    import random

    from nerstudio.corpus import segment

    rng = random.Random(3)
    text = " ".join(rng.choice(["Ann ran.", "Bo sat", "Cy", "went home."]) for _ in range(80))
    base = segment.split(text)
    for _ in range(30):
        ranges = []
        for _ in range(rng.randint(0, 12)):
            a = rng.randrange(len(text) - 1)
            ranges.append((a, min(len(text), a + rng.randint(1, 40))))
        cuts = [c for r in ranges for c in r]
        sents = [segment._cut(s, sorted(set(cuts))) for s in base]
        expect: list = []
        for s in sents:
            if expect and any(a < s[0][0] < e for a, e in ranges if e - a > 1):
                expect[-1].extend(s)
            else:
                expect.append(list(s))
        assert segment.split(text, cuts=cuts, merge=ranges) == expect


def test_case7_spacy_v2_json_is_named_with_what_to_do(tmp_path, capsys):
    doc = [
        {
            "id": 0,
            "paragraphs": [
                {
                    "raw": "Ann ran",
                    "sentences": [
                        {
                            "tokens": [
                                {"id": 0, "orth": "Ann", "ner": "U-PER"},
                                {"id": 1, "orth": "ran", "ner": "O"},
                            ]
                        }
                    ],
                }
            ],
        }
    ]
    p = tmp_path / "train.json"
    p.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    code, _, err = run(capsys, "stats", p)
    assert code == 1 and "spaCy v2's JSON training format" in err and "spacy convert" in err


def test_case4_doccano_1x_spans_of_several_annotators_read_once_and_reported(tmp_path):
    p = write_lines(
        tmp_path / "two.jsonl",
        [
            {
                "id": 1,
                "text": "Ann met Bob.",
                "annotations": [
                    {"id": 1, "label": 2, "start_offset": 0, "end_offset": 3, "user": 1},
                    {"id": 2, "label": 2, "start_offset": 0, "end_offset": 3, "user": 2},
                    {"id": 3, "label": 2, "start_offset": 8, "end_offset": 11, "user": 2},
                ],
            }
        ],
    )
    _, _, labels, notes = both(p)
    assert labels == {"2": 2}
    assert any(n.startswith("1 entit(ies) annotated again") and "line 1" in n for n in notes)
