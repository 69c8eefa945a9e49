"""The Python API (nerstudio.load / read / write, the pipeline) on the bundled demo model.

The README's Python API block is run verbatim; offsets are checked against the text they index;
the pipeline's pick is checked against the tagger and reranker called directly (the eight
lines the API replaces); `import nerstudio` must not load the machinery.
"""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT

import nerstudio
from nerstudio.api import Pipeline, tokenize
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR


@pytest.fixture(scope="module")
def pipe():
    return nerstudio.load(DEMO_MODEL_DIR)


def _readme_python_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_python_api_runs_verbatim(tmp_path, monkeypatch, capsys):
    blocks = _readme_python_blocks()
    assert blocks, "the README's Python API section has no ```python block"
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    assert "chosen: candidate" in out
    written = nerstudio.read(tmp_path / "dev.jsonl")
    original = nerstudio.read(DEMO_DIR / "dev.conll")
    assert written.format == "jsonl"
    assert [(s.words, s.spans) for s in written.sentences] == [
        (s.words, s.spans) for s in original.sentences
    ]


def test_tokenize_offsets_index_the_text():
    text = "The U.S. firm Smith-Jones Inc. paid $1,000.50 to O'Neill, in Linz."
    tokens, offsets = tokenize(text)
    assert tokens == [
        "The",
        "U.S.",
        "firm",
        "Smith-Jones",
        "Inc.",
        "paid",
        "$",
        "1,000.50",
        "to",
        "O'Neill",
        ",",
        "in",
        "Linz",
        ".",
    ]
    assert [text[a:b] for a, b in offsets] == tokens


def test_predict_offsets_are_character_offsets(pipe):
    text = "  Yesterday Maria Lopez of the Riverside Council met officials in Linz and Vienna ."
    ents = pipe.predict(text)
    assert ents
    for e in ents:
        assert text[e.start : e.end] == e.text
        assert 0 < e.score <= 1
    tokens = text.split()
    joined = " ".join(tokens)
    for e in pipe.predict(tokens):
        assert joined[e.start : e.end] == e.text == " ".join(tokens[e.token_start : e.token_end])


def test_predict_is_the_rerankers_pick(pipe):
    """The API gives what the tagger's beam and the reranker give when called directly."""
    from nerstudio.corpus.model import Sentence
    from nerstudio.rerank.model import RerankerModel
    from nerstudio.tagging import load_tagger

    corpus = nerstudio.read(DEMO_DIR / "test.conll")
    tagger = load_tagger(DEMO_MODEL_DIR / "tagger.npz")
    reranker = RerankerModel.load(DEMO_MODEL_DIR / "reranker.npz")
    sents = corpus.sentences[:40]
    nb = tagger.nbest([Sentence(s.words) for s in sents], n=20, with_gold=False)
    _, choice = reranker.rerank(nb)
    expected = nb.top(choice)
    assert any(c != 0 for c in choice), (
        "the demo reranker changes none of these sentences: a weak test"
    )
    for s, spans in zip(sents, expected):
        got = [(e.token_start, e.token_end, e.label) for e in pipe.predict(list(s.words))]
        assert got == [tuple(sp) for sp in spans]
    # without the reranker: the tagger's best
    alone = Pipeline(tagger)
    for s, spans in zip(sents, nb.top()):
        assert [(e.token_start, e.token_end, e.label) for e in alone.predict(list(s.words))] == [
            tuple(sp) for sp in spans
        ]


def test_nbest_probabilities_and_entity_scores(pipe):
    cands = pipe.nbest("Maria Lopez visited Linz .", n=10)
    assert 1 < len(cands) <= 10
    probs = np.array([c.probability for c in cands])
    assert probs.sum() == pytest.approx(1.0)
    assert list(probs) == sorted(probs, reverse=True)
    assert all(c.reranker_score is not None for c in cands)
    # an entity's score is the mass of the candidates that hold it
    e = cands[0].entities[0]
    held = sum(
        c.probability
        for c in cands
        if any(
            (x.token_start, x.token_end, x.label) == (e.token_start, e.token_end, e.label)
            for x in c.entities
        )
    )
    assert e.score == pytest.approx(held)


def test_explain_sums_to_the_score_difference(pipe):
    ex = pipe.explain(["Maria", "Lopez", "visited", "Berlin", "."])
    assert ex.terms
    assert sum(t.contribution for t in ex.terms) == pytest.approx(ex.delta)
    if ex.chosen.rank != ex.tagger_top.rank:
        assert ex.delta == pytest.approx(ex.chosen.reranker_score - ex.tagger_top.reranker_score)
    with pytest.raises(ValueError, match="needs a reranker"):
        Pipeline(pipe.tagger).explain("Linz")


def test_empty_input_and_bad_tokens(pipe):
    assert pipe.predict("   ") == []
    assert pipe.nbest([]) == []
    with pytest.raises(ValueError, match="non-empty strings"):
        pipe.predict(["Linz", ""])


@pytest.mark.parametrize("n", [0, -1, 2.5, True, "3", None])
def test_the_number_of_candidates_is_checked(pipe, n):
    """n is a whole number of candidates, at least 1: anything else is one clear ValueError,
    never a raw error from deep inside, nor (for 0) candidates anyway."""
    if n is not None:
        with pytest.raises(ValueError, match="n must be a whole number of candidates"):
            pipe.nbest("Maria Lopez visited Linz .", n=n)
    with pytest.raises(ValueError, match="n must be a whole number of candidates"):
        Pipeline(pipe.tagger, n=0 if n is None else n)
    assert len(pipe.nbest("Linz", n=np.int64(2))) <= 2


def test_load_experiment_folder_layout(tmp_path):
    """`nerstudio experiment` writes reranker-<system>.npz: one is taken, several need system=."""
    import shutil

    shutil.copy(DEMO_MODEL_DIR / "tagger.npz", tmp_path / "tagger.npz")
    assert nerstudio.load(tmp_path).reranker is None
    shutil.copy(DEMO_MODEL_DIR / "reranker.npz", tmp_path / "reranker-boost.npz")
    assert nerstudio.load(tmp_path).reranker.algo == "boost"
    shutil.copy(DEMO_MODEL_DIR / "reranker.npz", tmp_path / "reranker-voted.npz")
    with pytest.raises(ValueError, match="several rerankers"):
        nerstudio.load(tmp_path)
    assert nerstudio.load(tmp_path, system="voted").reranker is not None
    with pytest.raises(ValueError, match="no reranker-margin.npz"):
        nerstudio.load(tmp_path, system="margin")
    with pytest.raises(FileNotFoundError):
        nerstudio.load(tmp_path / "missing")
    assert nerstudio.load(tmp_path / "tagger.npz").reranker is None


def test_import_nerstudio_is_cheap():
    code = (
        "import sys, nerstudio; heavy = [m for m in ('numpy', 'scipy', 'nerstudio.api', 'nerstudio.tagging') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.slow
def test_boosting_example_runs():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "boosting_one_round.py"), "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "round 1: feature" in proc.stdout and "round 2: feature" in proc.stdout
    assert re.search(r"exponential loss ([\d.]+) -> ([\d.]+)", proc.stdout)
    before, after = map(
        float, re.search(r"exponential loss ([\d.]+) -> ([\d.]+)", proc.stdout).groups()
    )
    assert after < before
