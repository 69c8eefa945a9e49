"""Real corpora in ../shared/data (see its PROVENANCE.md): round trips, counts, and seqeval agreement.

Skipped when the folder is absent (it is never committed).
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import warnings
from pathlib import Path

import pytest
from helpers.shared_data import SKIP_REASON, shared_data_dir

from nerstudio.cli import main
from nerstudio.cli.commands.stats import corpus_stats
from nerstudio.corpus import Reader, Span, convert_file, iter_sentences, read_corpus, write_corpus
from nerstudio.errors import FormatError

DATA = shared_data_dir()
pytestmark = pytest.mark.slow  # real corpora, read whole


def _data_files() -> list[str]:
    if DATA is None:
        return []
    return sorted(
        p.relative_to(DATA).as_posix()
        for p in DATA.rglob("*")
        if p.is_file()
        and not p.name.startswith(("README", "LICENSE", "PROVENANCE"))
        and not p.name.startswith(".")
    )


FILES = _data_files()

# From PROVENANCE.md: format and scheme we detect, then documents (0 there = no -DOCSTART-: one
# implicit document), sentences, tokens, entities by type, bytes, sha256 prefix, and repairs
# (invalid transitions read the conlleval way: the two IOB1 B-after-O in eng.train, the stray
# I- in each Spanish file).
EXPECTED = {
    "conll2003/eng.train": (
        "conll2003",
        "iob1",
        946,
        14041,
        203621,
        {"LOC": 7140, "MISC": 3438, "ORG": 6321, "PER": 6600},
        3283420,
        "90f4cdcaf844",
        2,
    ),
    "conll2003/eng.testa": (
        "conll2003",
        "iob1",
        216,
        3250,
        51362,
        {"LOC": 1837, "MISC": 922, "ORG": 1341, "PER": 1842},
        827443,
        "4d39793e09ab",
        0,
    ),
    "conll2003/eng.testb": (
        "conll2003",
        "iob1",
        231,
        3453,
        46435,
        {"LOC": 1668, "MISC": 702, "ORG": 1661, "PER": 1617},
        748095,
        "6412af8187e6",
        0,
    ),
    "conll2000/train.txt": (
        "conll2002",
        "iob2",
        0,
        8936,
        211727,
        {
            "ADJP": 2060,
            "ADVP": 4227,
            "CONJP": 56,
            "INTJ": 31,
            "LST": 10,
            "NP": 55081,
            "PP": 21281,
            "PRT": 556,
            "SBAR": 2207,
            "UCP": 2,
            "VP": 21467,
        },
        2842164,
        "82033cd7a72b",
        0,
    ),
    "conll2000/test.txt": (
        "conll2002",
        "iob2",
        0,
        2012,
        47377,
        {
            "ADJP": 438,
            "ADVP": 866,
            "CONJP": 9,
            "INTJ": 2,
            "LST": 5,
            "NP": 12422,
            "PP": 4811,
            "PRT": 106,
            "SBAR": 535,
            "VP": 4658,
        },
        639396,
        "73b7b1e565fa",
        0,
    ),
    "conll2002/esp.train": (
        "conll2002",
        "iob2",
        0,
        8323,
        264715,
        {"LOC": 4914, "MISC": 2173, "ORG": 7390, "PER": 4321},
        2970825,
        "a20d95cab7d8",
        1,
    ),
    "conll2002/esp.testa": (
        "conll2002",
        "iob2",
        0,
        1915,
        52923,
        {"LOC": 985, "MISC": 445, "ORG": 1700, "PER": 1222},
        594058,
        "85c17793b778",
        1,
    ),
    "conll2002/esp.testb": (
        "conll2002",
        "iob2",
        0,
        1517,
        51533,
        {"LOC": 1084, "MISC": 340, "ORG": 1400, "PER": 735},
        575807,
        "1f8f7a392c6d",
        1,
    ),
    "conll2002/ned.train": (
        "conll2002",
        "iob2",
        287,
        15806,
        202644,
        {"LOC": 3208, "MISC": 3338, "ORG": 2082, "PER": 4716},
        2377174,
        "0a419dcb356b",
        0,
    ),
    "conll2002/ned.testa": (
        "conll2002",
        "iob2",
        74,
        2895,
        37687,
        {"LOC": 479, "MISC": 748, "ORG": 686, "PER": 703},
        450785,
        "51259d4bfe52",
        0,
    ),
    "conll2002/ned.testb": (
        "conll2002",
        "iob2",
        119,
        5195,
        68875,
        {"LOC": 774, "MISC": 1187, "ORG": 882, "PER": 1098},
        814282,
        "2aa748edb82e",
        0,
    ),
    "wnut17/wnut17train.conll": (
        "tsv",
        "iob2",
        0,
        3394,
        62730,
        {
            "corporation": 221,
            "creative-work": 140,
            "group": 264,
            "location": 548,
            "person": 660,
            "product": 142,
        },
        493781,
        "731820e13f71",
        0,
    ),
    "wnut17/emerging.dev.conll": (
        "tsv",
        "iob2",
        0,
        1009,
        15733,
        {
            "corporation": 34,
            "creative-work": 105,
            "group": 39,
            "location": 74,
            "person": 470,
            "product": 114,
        },
        114749,
        "e053b752b815",
        0,
    ),
    "wnut17/emerging.test.annotated": (
        "tsv",
        "iob2",
        0,
        1287,
        23394,
        {
            "corporation": 66,
            "creative-work": 142,
            "group": 165,
            "location": 150,
            "person": 429,
            "product": 127,
        },
        192425,
        "2aa79b764e56",
        0,
    ),
    "wikigold/wikigold.conll.txt": (
        "columns",
        "iob1",
        145,
        1696,
        39007,
        {"LOC": 1014, "MISC": 712, "ORG": 898, "PER": 934},
        318530,
        "c797a64d0cf7",
        0,
    ),
    "btc/a.conll": (
        "tsv",
        "iob2",
        0,
        1000,
        16612,
        {"LOC": 119, "ORG": 173, "PER": 229},
        121889,
        "ac824cc13c88",
        0,
    ),
    "btc/b.conll": (
        "tsv",
        "iob2",
        0,
        2000,
        30825,
        {"LOC": 229, "ORG": 516, "PER": 865},
        235519,
        "504a094a0398",
        0,
    ),
    "btc/e.conll": (
        "tsv",
        "iob2",
        0,
        200,
        3981,
        {"LOC": 144, "ORG": 122, "PER": 59},
        34631,
        "77aca745cdc2",
        0,
    ),
    "btc/f.conll": (
        "tsv",
        "iob2",
        0,
        2001,
        35428,
        {"LOC": 636, "ORG": 1090, "PER": 2650},
        294166,
        "3bd2387dfc98",
        0,
    ),
    "btc/g.conll": (
        "tsv",
        "iob2",
        0,
        2138,
        34062,
        {"LOC": 1385, "ORG": 1498, "PER": 1802},
        320339,
        "d53a27645cab",
        0,
    ),
    "btc/h.conll": (
        "tsv",
        "iob2",
        0,
        2001,
        29480,
        {"LOC": 309, "ORG": 736, "PER": 2323},
        235158,
        "7f31215a79f3",
        0,
    ),
    "btc/btc.train": (
        "tsv",
        "iob2",
        0,
        6338,
        99933,
        {"LOC": 2030, "ORG": 2665, "PER": 4084},
        827726,
        "2117732e744d",
        0,
    ),
    "btc/btc.dev": (
        "tsv",
        "iob2",
        0,
        1001,
        15027,
        {"LOC": 156, "ORG": 380, "PER": 1194},
        119810,
        "9f7d33bcd195",
        0,
    ),
    "btc/btc.test": (
        "tsv",
        "iob2",
        0,
        2001,
        35428,
        {"LOC": 636, "ORG": 1090, "PER": 2650},
        294166,
        "3bd2387dfc98",
        0,
    ),
}


@pytest.fixture
def data(shared_data) -> Path:
    return shared_data


@functools.cache
def _stats(path: Path) -> dict:
    """``nerstudio stats`` of a file (cached: several tests look at the same files)."""
    return corpus_stats(Reader(path))


def _path(data: Path, name: str) -> Path:
    path = data / name
    if not path.exists():
        pytest.skip(f"{name} not in {data}")
    return path


# --------------------------------------------------------------------------------------------
# (1) every data file round-trips byte for byte


@pytest.mark.parametrize(
    "name", FILES or [pytest.param(None, marks=pytest.mark.skip(reason=SKIP_REASON))]
)
def test_round_trip_every_file(data, tmp_path, name):
    path = data / name
    corpus = read_corpus(path)
    out = tmp_path / "out"
    write_corpus(corpus, out)
    assert out.read_bytes() == path.read_bytes()
    if name in EXPECTED:
        fmt, scheme, *_ = EXPECTED[name]
        assert (corpus.format, corpus.scheme) == (fmt, scheme)


def test_all_documented_files_present(data):
    assert sorted(EXPECTED) == sorted(n for n in FILES if n in EXPECTED)
    assert set(EXPECTED) <= set(FILES)


# --------------------------------------------------------------------------------------------
# (2) counts equal PROVENANCE.md


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_match_provenance(data, name):
    fmt, scheme, docs, sents, toks, by_type, nbytes, sha, repairs = EXPECTED[name]
    path = _path(data, name)
    raw = path.read_bytes()
    assert len(raw) == nbytes and hashlib.sha256(raw).hexdigest().startswith(sha)
    st = _stats(path)
    assert (st["format"], st["scheme"]) == (fmt, scheme)
    assert st["documents"] == max(docs, 1)
    assert st["sentences"] == sents
    assert st["tokens"] == toks
    assert st["entities_by_type"] == by_type
    assert st["entities"] == sum(by_type.values())
    assert st["repairs"] == repairs


def test_totals(data):
    """The PROVENANCE totals quoted in prose, for the collections."""

    def total(names):
        sts = [_stats(_path(data, n)) for n in names]
        return tuple(sum(s[k] for s in sts) for k in ("sentences", "tokens", "entities"))

    assert total(["conll2003/eng.testb"])[2] == 5648
    assert total(["conll2003/eng.testa"])[2] == 5942
    # esp: one more entity than B- tags in each file (the stray I-)
    assert total(["conll2002/esp.train", "conll2002/esp.testa", "conll2002/esp.testb"]) == (
        8323 + 1915 + 1517,
        264715 + 52923 + 51533,
        18798 + 4352 + 3559,
    )
    assert total(["conll2002/ned.train", "conll2002/ned.testa", "conll2002/ned.testb"]) == (
        15806 + 2895 + 5195,
        202644 + 37687 + 68875,
        13344 + 2616 + 3941,
    )
    assert total(
        ["wnut17/wnut17train.conll", "wnut17/emerging.dev.conll", "wnut17/emerging.test.annotated"]
    ) == (3394 + 1009 + 1287, 62730 + 15733 + 23394, 1975 + 836 + 1079)
    assert total(["wikigold/wikigold.conll.txt"]) == (1696, 39007, 3558)
    assert total(["btc/btc.train", "btc/btc.dev", "btc/btc.test"]) == (
        6338 + 1001 + 2001,
        99933 + 15027 + 35428,
        8779 + 1730 + 4376,
    )


@pytest.mark.parametrize(
    "name,line",
    [
        ("conll2003/eng.train", 152428),  # Atlanta NNP I-NP B-MISC (IOB1 B- after O)
        ("conll2002/esp.train", 221619),  # San AQ I-LOC
        ("conll2002/esp.testa", 30882),  # Río NC I-LOC
        ("conll2002/esp.testb", 9291),  # Calidad NC I-MISC
    ],
)
def test_strict_reports_the_documented_irregularity(data, name, line):
    path = _path(data, name)
    with pytest.raises(FormatError) as info:
        for _ in iter_sentences(path, strict=True):
            pass
    assert info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: invalid transition")


def test_quirks(data):
    wnut = read_corpus(_path(data, "wnut17/wnut17train.conll"))
    # TAB-only separators
    assert sum(1 for x in wnut.layout if isinstance(x, str) and x == "\t") == 2394
    h = read_corpus(_path(data, "btc/h.conll"))
    line_of = {}
    for s in h.sentences:
        for i, w in enumerate(s.words):
            line_of[s.line + i] = w
    assert line_of[22918] == "" and line_of[30879] == ""  # empty tokens (the line is just <TAB>O)
    # split on TAB only
    assert line_of[30881] == "" and line_of[30882] == "ke s" and line_of[30888] == " "
    e = read_corpus(_path(data, "btc/e.conll"))
    assert {"MH17 ", "PrayForMH17 "} <= {
        w for s in e.sentences for w in s.words
    }  # trailing spaces kept
    wiki = read_corpus(_path(data, "wikigold/wikigold.conll.txt"))
    # the markers come after each article: the first article has none, the file ends with one
    tail = [x for x in wiki.layout if not (isinstance(x, str) and not x.strip())]
    assert wiki.documents[0].docstart is None and tail[-1] == "-DOCSTART- O"
    ned = read_corpus(_path(data, "conll2002/ned.testa"))
    assert ned.documents[0].docstart == "-DOCSTART- -DOCSTART- O" and ned.sentences[0].line == 2


# --------------------------------------------------------------------------------------------
# Conversions of real corpora


@pytest.mark.parametrize("name", ["conll2003/eng.testb", "wikigold/wikigold.conll.txt"])
def test_iob1_via_bioes_and_back_is_identical(data, tmp_path, name):
    """eng.testb and wikigold have only regular IOB1 tags: a detour through BIOES changes nothing."""
    path = _path(data, name)
    convert_file(path, tmp_path / "bioes", scheme="bioes")
    assert read_corpus(tmp_path / "bioes").scheme == "bioes"
    convert_file(tmp_path / "bioes", tmp_path / "back", scheme="iob1")
    assert (tmp_path / "back").read_bytes() == path.read_bytes()


def test_esp_via_bioes_fixes_only_the_stray_tag(data, tmp_path):
    path = _path(data, "conll2002/esp.testb")
    convert_file(path, tmp_path / "bioes", scheme="bioes")
    convert_file(tmp_path / "bioes", tmp_path / "back", scheme="iob2")
    old = path.read_text(encoding="utf-8").splitlines()
    new = (tmp_path / "back").read_text(encoding="utf-8").splitlines()
    assert len(old) == len(new)
    diff = [(k + 1, a, b) for k, (a, b) in enumerate(zip(old, new)) if a != b]
    assert diff == [(9291, "Calidad NC I-MISC", "Calidad NC B-MISC")]


@pytest.mark.parametrize(
    "name,back",
    [
        ("conll2003/eng.testb", "conll2003"),
        ("conll2002/ned.testb", "conll2002"),
        ("btc/h.conll", "tsv"),  # empty tokens, tokens with trailing spaces
        ("wnut17/emerging.dev.conll", "tsv"),
    ],
)
def test_via_jsonl_and_back(data, tmp_path, name, back):
    path = _path(data, name)
    gold = read_corpus(path)
    convert_file(path, tmp_path / "c.jsonl", to_format="jsonl")
    convert_file(tmp_path / "c.jsonl", tmp_path / "back", to_format=back, scheme=gold.scheme)
    again = read_corpus(tmp_path / "back")
    assert [s.words for s in again] == [s.words for s in gold]
    assert [s.spans for s in again] == [s.spans for s in gold]
    assert [len(d.sentences) for d in again.documents] == [len(d.sentences) for d in gold.documents]


# --------------------------------------------------------------------------------------------
# (3) nerstudio evaluate equals seqeval


def perturb(corpus, seed: int = 0) -> list[list[Span]]:
    """Deterministic prediction errors: ~10% dropped, ~10% boundaries shifted, ~10% relabelled,
    a few spurious entities."""
    rng = random.Random(seed)
    labels = corpus.labels
    out = []
    for s in corpus.sentences:
        n = len(s)
        new = []
        for sp in s.spans:
            r = rng.random()
            if r < 0.10:
                continue
            if r < 0.20:
                a, b = rng.choice([(-1, 0), (1, 0), (0, 1), (0, -1)])
                sp = Span(sp.start + a, sp.end + b, sp.label)
            elif r < 0.30:
                sp = Span(sp.start, sp.end, rng.choice([x for x in labels if x != sp.label]))
            new.append(sp)
        if n and rng.random() < 0.05:
            k = rng.randrange(n)
            new.append(Span(k, min(n, k + rng.randint(1, 2)), rng.choice(labels)))
        kept, last = [], 0
        for sp in sorted(x for x in new if 0 <= x.start < x.end <= n):
            if sp.start >= last:
                kept.append(sp)
                last = sp.end
        out.append(kept)
    return out


def file_tags(path: Path) -> list[list[str]]:
    """Tag sequences read independently of nerstudio: last space-separated field, blank/-DOCSTART- break."""
    seqs, cur = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("-DOCSTART-"):
                if cur:
                    seqs.append(cur)
                    cur = []
                continue
            cur.append(line.split(" ")[-1])
    if cur:
        seqs.append(cur)
    return seqs


def _evaluate_cli(capsys, gold: Path, pred: Path, *extra: str) -> dict:
    assert main(["evaluate", str(gold), str(pred), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _compare(ours: dict, y_true, y_pred, **kw) -> None:
    metrics = pytest.importorskip("seqeval.metrics")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = metrics.precision_score(y_true, y_pred, **kw)
        r = metrics.recall_score(y_true, y_pred, **kw)
        f = metrics.f1_score(y_true, y_pred, **kw)
        report = metrics.classification_report(y_true, y_pred, output_dict=True, **kw)
    assert ours["precision"] == pytest.approx(100 * p, abs=1e-9)
    assert ours["recall"] == pytest.approx(100 * r, abs=1e-9)
    assert ours["f1"] == pytest.approx(100 * f, abs=1e-9)
    types = {k for k in report if not k.endswith(" avg")}
    assert set(ours["per_type"]) == types
    for t in types:
        mine = ours["per_type"][t]
        assert mine["precision"] == pytest.approx(100 * report[t]["precision"], abs=1e-9), t
        assert mine["recall"] == pytest.approx(100 * report[t]["recall"], abs=1e-9), t
        assert mine["f1"] == pytest.approx(100 * report[t]["f1-score"], abs=1e-9), t
        assert mine["gold"] == report[t]["support"], t
    assert ours["gold"] == sum(report[t]["support"] for t in types)


@pytest.fixture
def prediction(data, tmp_path):
    def make(name: str) -> tuple[Path, Path]:
        gold = _path(data, name)
        corpus = read_corpus(gold)
        pred = tmp_path / (Path(name).name + ".pred")
        write_corpus(corpus.with_spans(perturb(corpus)), pred)
        return gold, pred

    return make


@pytest.mark.parametrize(
    "name", ["conll2003/eng.testb", "conll2002/esp.testb", "conll2002/ned.testb"]
)
def test_evaluate_equals_seqeval_default(prediction, capsys, name):
    pytest.importorskip("seqeval")
    gold, pred = prediction(name)
    ours = _evaluate_cli(capsys, gold, pred)
    assert 50 < ours["f1"] < 95  # a non-trivial prediction
    y_true, y_pred = file_tags(gold), file_tags(pred)
    assert [len(x) for x in y_true] == [len(x) for x in y_pred]
    _compare(ours, y_true, y_pred)


@pytest.mark.parametrize("name", ["conll2002/esp.testb", "conll2002/ned.testb"])
def test_evaluate_strict_equals_seqeval_strict(prediction, capsys, name):
    scheme = pytest.importorskip("seqeval.scheme")
    gold, pred = prediction(name)
    ours = _evaluate_cli(capsys, gold, pred, "--mode", "strict")
    assert ours["mode"] == "strict"
    _compare(ours, file_tags(gold), file_tags(pred), mode="strict", scheme=scheme.IOB2)
    if name.startswith("conll2002/esp"):
        # the stray I-MISC forms an entity in conlleval mode only
        assert ours["gold"] == 3558
        assert _evaluate_cli(capsys, gold, pred)["gold"] == 3559


def test_evaluate_gold_against_itself(data, capsys):
    gold = _path(data, "conll2003/eng.testb")
    ours = _evaluate_cli(capsys, gold, gold)
    assert (ours["precision"], ours["recall"], ours["f1"], ours["token_accuracy"]) == (
        100.0,
        100.0,
        100.0,
        100.0,
    )
    assert (ours["gold"], ours["sentences"], ours["tokens"]) == (5648, 3453, 46435)
