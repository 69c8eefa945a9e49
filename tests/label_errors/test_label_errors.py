"""Suspect annotations (nerstudio.label_errors): the max-ent tagger's forced decoding and tag
marginals against brute force, the ranking on a small corpus with one error put in on purpose,
the TSV file (numbering, round trip, bad lines), the command and the Python API."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

import nerstudio
from nerstudio.cli import main
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Corpus, Document, Sentence, Span
from nerstudio.errors import Cancelled, FormatError, SettingsError
from nerstudio.label_errors import (
    Suspect,
    apply_suggestion,
    find_suspects,
    read_tsv,
    write_tsv,
)
from nerstudio.label_errors.readings import fixed, stretches
from nerstudio.tagging.maxent import MaxEntTagger
from nerstudio.tagging.maxent_probs import (
    alternatives_log_probs,
    sequence_log_probs,
    tag_ids,
    token_marginals,
)

PEOPLE = ["John Smith", "Mary Jones", "Peter Brown", "Anna Berg", "Paul Klee", "Ruth Lane"]
PLACES = ["Paris", "London", "Berlin", "Madrid", "Vienna", "Oslo"]
FIRMS = ["Acme Corp", "Globex Inc", "Initech", "Umbrella Corp"]
TEMPLATES = [
    "{PER} visited {LOC} on Monday .",
    "{ORG} opened an office in {LOC} .",
    "{PER} joined {ORG} last year .",
    "Shares of {ORG} rose in {LOC} trading .",
    "The mayor of {LOC} met {PER} .",
    "Rain fell all day .",
]
SMALL = {"features": "conll", "cutoff": 1, "max_iter": 60, "alphabet": "scn", "l2": 0.5}


def sentence(template: str, rng: random.Random) -> Sentence:
    words, spans = [], []
    for part in template.split():
        if part.startswith("{"):
            label = part[1:4]
            name = rng.choice({"PER": PEOPLE, "LOC": PLACES, "ORG": FIRMS}[label]).split()
            spans.append(Span(len(words), len(words) + len(name), label))
            words += name
        else:
            words.append(part)
    return Sentence(words, spans)


def small_corpus(docs: int = 8, per_doc: int = 8, seed: int = 1) -> Corpus:
    rng = random.Random(seed)
    return Corpus(
        [
            Document([sentence(rng.choice(TEMPLATES), rng) for _ in range(per_doc)], "-DOCSTART- O")
            for _ in range(docs)
        ]
    )


def write_conll(corpus: Corpus, path) -> None:
    """CoNLL-2003 text: a -DOCSTART- line before each document, one token per line."""
    lines = []
    for d in corpus.documents:
        lines += ["-DOCSTART- -X- O", ""]
        for s in d.sentences:
            tags = ["O"] * len(s.words)
            for sp in s.spans:
                for i in range(sp.start, sp.end):
                    tags[i] = ("B-" if i == sp.start else "I-") + sp.label
            lines += [f"{w} {t}" for w, t in zip(s.words, tags)] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")


def with_error(corpus: Corpus) -> tuple[Corpus, int, list[Span]]:
    """The corpus with one place's type swapped to PER; (corpus, sentence, original spans)."""
    for k, s in enumerate(corpus.sentences):
        locs = [sp for sp in s.spans if sp.label == "LOC"]
        if k > 20 and locs:
            spans = [Span(sp.start, sp.end, "PER") if sp == locs[0] else sp for sp in s.spans]
            out = corpus.with_spans(
                [spans if j == k else t.spans for j, t in enumerate(corpus.sentences)]
            )
            return out, k, list(s.spans)
    raise AssertionError("no sentence with a place")


@pytest.fixture(scope="module")
def noisy_file(tmp_path_factory):
    corpus, k, original = with_error(small_corpus())
    path = tmp_path_factory.mktemp("suspects") / "small.conll"
    write_conll(corpus, path)
    return path, k, original


@pytest.fixture(scope="module")
def kfold_suspects(noisy_file):
    path, _, _ = noisy_file
    corpus = read_corpus(path)
    return corpus, find_suspects(corpus, folds=3, workers=1, tagger_params=SMALL)


# ------------------------------------------------------------------------------------------------
# the tagger's probabilities


@pytest.fixture(scope="module", params=["scn", "bilou"])
def tiny_tagger(request):
    corpus = small_corpus(docs=3, per_doc=6)
    params = dict(SMALL, alphabet=request.param, max_iter=30)
    return MaxEntTagger(**params).fit(corpus.sentences)


def brute_force(tagger, s: Sentence):
    """Every tag sequence the beam may propose, with its probability (product of the local
    probabilities), by enumeration."""
    T = len(tagger.tagset_)
    final = np.isfinite(tagger.final_pen_) if tagger.final_pen_ is not None else np.ones(T, bool)
    out = []
    for seq in itertools.product(range(T), repeat=len(s.words)):
        prev = [T, *seq[:-1]]
        if all(tagger.allowed_[p, t] for p, t in zip(prev, seq)) and final[seq[-1]]:
            out.append((seq, math.exp(tagger.log_prob(s, seq))))
    return out


def test_forced_decoding_and_marginals_match_brute_force(tiny_tagger):
    t = tiny_tagger
    s = Sentence(["Anna", "Berg", "visited", "Oslo"], [Span(0, 2, "PER"), Span(3, 4, "LOC")])
    seqs = brute_force(t, s)
    T = len(t.tagset_)
    # gold's probability by forced decoding is the product along its tags
    gold = tuple(int(x) for x in tag_ids(t, s.spans, 4))
    assert sequence_log_probs(t, [s])[0] == pytest.approx(math.log(dict(seqs)[gold]), abs=1e-9)
    # and whatever the beam lists has the same score under forced decoding
    nb = t.nbest([s], n=5)
    cands = nb.candidate_spans(0)
    forced = sequence_log_probs(t, [s] * len(cands), cands)
    assert forced == pytest.approx(np.asarray(nb.logprobs[0]), abs=1e-6)
    assert alternatives_log_probs(t, s, cands) == pytest.approx(forced, abs=1e-9)
    # the marginals: each token's tags weighted by the valid sequences' probabilities
    Z = sum(p for _, p in seqs)
    expect = np.zeros((4, T))
    for seq, p in seqs:
        expect[np.arange(4), list(seq)] += p / Z
    (got,) = token_marginals(t, [s])
    assert got == pytest.approx(expect, abs=1e-9)


def test_forced_decoding_batches_sentences_alike(tiny_tagger):
    corpus = small_corpus(docs=2, per_doc=5, seed=7)
    sents = [*corpus.sentences, Sentence([])]
    batch = sequence_log_probs(tiny_tagger, sents)
    one = [
        tiny_tagger.log_prob(s, tag_ids(tiny_tagger, s.spans, len(s.words))) if s.words else 0.0
        for s in sents
    ]
    assert batch == pytest.approx(one, abs=1e-9)
    assert [m.shape[0] for m in token_marginals(tiny_tagger, sents)] == [len(s) for s in sents]


# ------------------------------------------------------------------------------------------------
# the ranking


def test_the_injected_error_ranks_first_with_its_fix(kfold_suspects, noisy_file):
    corpus, sus = kfold_suspects
    _, k, original = noisy_file
    assert len(sus) == len(corpus.sentences)
    assert sorted(s.sentence for s in sus) == list(range(len(corpus.sentences)))
    first = sus[0]
    assert first.sentence == k
    assert first.score > 0 and first.score > sus[1].score
    assert apply_suggestion(corpus.sentences[k].spans, first) == original
    assert "PER" in first.evidence and "LOC" in first.evidence
    assert [s.score for s in sus] == sorted((s.score for s in sus), reverse=True)


def test_a_model_judges_instead_of_folds(noisy_file):
    path, k, original = noisy_file
    clean = small_corpus(seed=5)  # other sentences of the same kind: it never saw the file
    tagger = MaxEntTagger(**SMALL).fit(clean.sentences)
    sus = nerstudio.suspects(path, model=tagger)
    assert sus[0].sentence == k
    assert apply_suggestion(read_corpus(path).sentences[k].spans, sus[0]) == original


def test_types_the_model_does_not_know_rank_first(noisy_file):
    path, _, _ = noisy_file
    corpus = read_corpus(path)
    tagger = MaxEntTagger(**SMALL).fit(small_corpus(seed=5).sentences)
    odd = next(j for j, s in enumerate(corpus.sentences) if s.spans)
    spans = [list(s.spans) for s in corpus.sentences]
    spans[odd] = [Span(spans[odd][0].start, spans[odd][0].end, "LCO"), *spans[odd][1:]]
    sus = find_suspects(corpus.with_spans(spans), model=tagger)
    assert sus[0].sentence == odd and sus[0].score == math.inf
    assert "LCO" in sus[0].evidence


def test_a_model_reports_progress_and_is_cancelled(noisy_file):
    corpus = read_corpus(noisy_file[0])
    tagger = MaxEntTagger(**SMALL).fit(small_corpus(seed=5).sentences)
    seen = []
    find_suspects(
        corpus, model=tagger, progress=lambda done, total, text: seen.append((done, total))
    )
    assert seen[-1] == (2 * len(corpus.sentences),) * 2
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    with pytest.raises(Cancelled):
        find_suspects(corpus, model=tagger, cancel=lambda: True)


def test_cancel_stops_the_folds(noisy_file):
    corpus = read_corpus(noisy_file[0])
    with pytest.raises(Cancelled):
        find_suspects(corpus, folds=2, workers=1, tagger_params=SMALL, cancel=lambda: True)


def test_bad_settings_are_refused(noisy_file):
    corpus = read_corpus(noisy_file[0])
    with pytest.raises(SettingsError):
        find_suspects(corpus, folds=1)
    with pytest.raises(SettingsError):
        find_suspects(corpus, model=MaxEntTagger(**dict(SMALL, task="scn")).fit(corpus.sentences))


def test_a_fix_takes_one_stretch_of_the_other_tagging():
    gold = [Span(0, 2, "PER"), Span(4, 5, "LOC"), Span(7, 9, "ORG")]
    other = [Span(0, 2, "PER"), Span(3, 5, "LOC"), Span(7, 8, "ORG"), Span(8, 9, "LOC")]
    assert stretches(gold, other) == [(3, 5), (7, 9)]
    assert fixed(gold, other, 3, 5) == (Span(0, 2, "PER"), Span(3, 5, "LOC"), Span(7, 9, "ORG"))
    assert fixed(gold, other, 7, 9)[-2:] == (Span(7, 8, "ORG"), Span(8, 9, "LOC"))
    assert stretches(gold, gold) == []


def test_apply_suggestion_replaces_what_overlaps_the_region():
    sus = Suspect(3, 2.0, 2, 5, (Span(2, 4, "LOC"),), (Span(2, 5, "ORG"),), "")
    spans = [Span(0, 1, "PER"), Span(2, 4, "LOC"), Span(6, 7, "MISC")]
    assert apply_suggestion(spans, sus) == [
        Span(0, 1, "PER"),
        Span(2, 5, "ORG"),
        Span(6, 7, "MISC"),
    ]
    deleted = Suspect(3, 2.0, 6, 7, (Span(6, 7, "MISC"),), (), "")
    assert apply_suggestion(spans, deleted) == spans[:2]


# ------------------------------------------------------------------------------------------------
# the file


def file_sentences(path) -> list[list[str]]:
    """The words of each sentence, read straight from the CoNLL text: blank lines end a
    sentence, -DOCSTART- lines are none."""
    out, cur = [], []
    for line in path.read_text(encoding="utf-8").split("\n") + [""]:
        if not line.strip():
            if cur:
                out.append(cur)
            cur = []
        elif not line.startswith("-DOCSTART-"):
            cur.append(line.split()[0])
    return out


def test_tsv_numbers_sentences_in_file_order_without_docstart(kfold_suspects, noisy_file, tmp_path):
    corpus, sus = kfold_suspects
    path, k, _ = noisy_file
    out = tmp_path / "suspects.tsv"
    write_tsv(out, corpus, sus)
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("#") and lines[0][1:].split("\t")[:7] == [
        "rank",
        "sentence",
        "score",
        "span",
        "gold",
        "suggested",
        "text",
    ]
    rows = [line.split("\t") for line in lines[1:] if line]
    assert len(rows) == len(corpus.sentences)
    words = file_sentences(path)
    assert len(words) == len(corpus.sentences)  # 8 -DOCSTART- lines, none counted
    for rank, row in enumerate(rows, 1):
        assert int(row[0]) == rank
        assert row[6] == " ".join(words[int(row[1]) - 1])
    assert int(rows[0][1]) == k + 1
    assert read_tsv(out, corpus) == sus


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda lines: ["rank\tsentence"] + lines[1:], ":1: not a suspects file"),
        (lambda lines: lines[:1] + ["1\t2\t3"] + lines[2:], ":2: 3 columns"),
        (
            lambda lines: lines[:1] + [lines[1].replace(lines[1].split("\t")[1], "999", 1)],
            ":2: sentence",
        ),
        (lambda lines: lines[:2] + [lines[2].replace("\t", "\tx", 2)], ":3: "),
    ],
)
def test_read_tsv_names_the_bad_line(kfold_suspects, tmp_path, edit, message):
    corpus, sus = kfold_suspects
    out = tmp_path / "suspects.tsv"
    write_tsv(out, corpus, sus)
    lines = out.read_text(encoding="utf-8").rstrip("\n").split("\n")
    out.write_text("\n".join(edit(lines)) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=message):
        read_tsv(out, corpus)


def test_read_tsv_refuses_another_corpus(kfold_suspects, tmp_path):
    corpus, sus = kfold_suspects
    out = tmp_path / "suspects.tsv"
    write_tsv(out, corpus, sus)
    other = small_corpus(seed=99)
    with pytest.raises(FormatError, match="another file"):
        read_tsv(out, other)


def test_cells_with_tabs_round_trip(tmp_path):
    corpus = Corpus([Document([Sentence(["a\tb", "c\\n"], [Span(0, 2, "X")])])])
    sus = [Suspect(0, 1.5, 0, 2, (Span(0, 2, "X"),), (Span(1, 2, "Y"),), "odd\ttext")]
    write_tsv(tmp_path / "s.tsv", corpus, sus)
    assert len((tmp_path / "s.tsv").read_text(encoding="utf-8").split("\n")) == 3
    assert read_tsv(tmp_path / "s.tsv", corpus) == sus


# ------------------------------------------------------------------------------------------------
# the command


def test_command_writes_the_ranking(noisy_file, tmp_path, capsys):
    path = noisy_file[0]
    out = tmp_path / "ranked.tsv"
    rc = main(
        [
            "suspects",
            str(path),
            "--folds",
            "2",
            "--workers",
            "1",
            "--max-iter",
            "40",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    rows = [r.split("\t") for r in out.read_text(encoding="utf-8").split("\n")[1:] if r]
    assert len(rows) == len(read_corpus(path).sentences)
    assert "wrote" in capsys.readouterr().err


def test_command_with_a_model_folder(noisy_file, tmp_path):
    path, k, _ = noisy_file
    folder = tmp_path / "model"
    folder.mkdir()
    MaxEntTagger(**SMALL).fit(small_corpus(seed=5).sentences).save(folder / "tagger.npz")
    out = tmp_path / "ranked.tsv"
    assert main(["suspects", str(path), "--model", str(folder), "--out", str(out)]) == 0
    assert read_tsv(out, read_corpus(path))[0].sentence == k


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--model", "{corpus}"], "not a max-ent tagger"),
        (["--model", "{tmp}/none"], "no such"),
        (["--model", "{tmp}", "--with", "{corpus}"], "--with"),
        (["--folds", "1"], "at least 2 folds"),
        (["--n", "0"], "--n"),
    ],
)
def test_command_bad_input_is_one_line_and_exit_1(noisy_file, tmp_path, capsys, argv, says):
    path = noisy_file[0]
    argv = [a.format(corpus=path, tmp=tmp_path) for a in argv]
    rc = main(["suspects", str(path), *argv, "--out", str(tmp_path / "x.tsv")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1
    assert err[-1].startswith("nerstudio: error:") and says in err[-1]
    assert not (tmp_path / "x.tsv").exists()


@pytest.mark.slow
def test_the_folds_rank_alike_on_a_dask_cluster(noisy_file, tmp_path):
    """The folds' jobs read the corpus and the extra training data from their files there."""
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    from nerstudio.runtime.dask_executor import executor_from_setting

    corpus = read_corpus(noisy_file[0])
    write_conll(small_corpus(docs=2, seed=11), tmp_path / "more.conll")
    more = [read_corpus(tmp_path / "more.conll")]
    local = find_suspects(corpus, more=more, folds=2, workers=1, tagger_params=SMALL)
    executor = executor_from_setting("dask-local:2")
    try:
        remote = find_suspects(corpus, more=more, folds=2, executor=executor, tagger_params=SMALL)
    finally:
        executor.close()
    assert remote == local
    assert remote[0].sentence == noisy_file[1]


def test_reading_a_ranking_loads_no_tagger():
    """A window that shows a ranking from a file imports the package without scipy or the taggers."""
    import subprocess
    import sys

    code = (
        "import sys, nerstudio.label_errors; "
        "print(sorted(m for m in sys.modules if m.startswith(('scipy', 'nerstudio.tagging', "
        "'nerstudio.experiments'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
