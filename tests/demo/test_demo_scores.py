"""The demo's N-best list ships with its reranker's features and scores
(nerstudio/demo/model/train.scored.npz, nerstudio.app.saved_scores): rebuilding the file gives
the same arrays, loading it gives what scoring the list gives, a file that no longer matches its
sources is not used, and the window shows the demo's candidates without a scoring job."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import tool

from nerstudio.app.attachments import index_nbest, score_nbest
from nerstudio.app.saved_scores import load_scored, save_scored
from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.nbest import NBestList
from nerstudio.persist import load_npz
from nerstudio.rerank.model import RerankerModel

SHIPPED = DEMO_DIR / "model" / "train.scored.npz"


def _builder():
    return tool("tools/demo/build_scored.py")


def _sources(folder: Path) -> dict[str, Path]:
    return {
        "corpus": folder / "train.conll",
        "nbest": folder / "model" / "train.nbest.npz",
        "model": folder / "model" / "reranker.npz",
    }


def _attached(folder: Path):
    src = _sources(folder)
    corpus = read_corpus(str(src["corpus"]))
    nbest = NBestList.load(str(src["nbest"]))
    index_nbest(corpus, nbest)
    return nbest, RerankerModel.load(str(src["model"])), src


@pytest.mark.slow
def test_rebuilding_the_shipped_scores_gives_the_same_arrays(tmp_path):
    out = tmp_path / "train.scored.npz"
    _builder().build(DEMO_DIR, out)
    h1, a1 = load_npz(SHIPPED, "nerstudio-scored-list", 1, "a scored N-best list")
    h2, a2 = load_npz(out, "nerstudio-scored-list", 1, "a scored N-best list")
    assert h1 == h2
    for name in ("indices", "indptr", "scores", "choice"):
        assert a1[name].dtype == a2[name].dtype, name
        assert np.array_equal(a1[name], a2[name]), name


@pytest.mark.slow
def test_the_shipped_scores_are_what_scoring_the_list_gives():
    nbest, model, src = _attached(DEMO_DIR)
    fresh = score_nbest(model, nbest)
    saved = load_scored(SHIPPED, model, nbest, src)
    assert saved is not None
    assert (saved.data.X != fresh.data.X).nnz == 0 and saved.data.X.shape == fresh.data.X.shape
    assert np.array_equal(saved.scores, fresh.scores)
    assert np.array_equal(saved.choice, fresh.choice)
    for name in ("L", "offsets", "oracle", "correct", "proposed", "n_gold", "quality"):
        assert np.array_equal(getattr(saved.data, name), getattr(fresh.data, name)), name
    # the feature panel's explanation of the reranker's pick, from the saved rows
    row = int(saved.data.offsets[3]) + int(saved.choice[3])
    assert model.explain(saved.data, row) == model.explain(fresh.data, row)


@pytest.mark.slow
def test_scores_of_other_files_or_a_damaged_file_are_not_used(tmp_path):
    folder = tmp_path / "demo"
    shutil.copytree(DEMO_DIR, folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    nbest, model, src = _attached(folder)
    scored = folder / "model" / "train.scored.npz"
    assert load_scored(scored, model, nbest, src) is not None
    # the user's copy of the corpus edited: its gold (and documents) are no longer the scored ones
    text = src["corpus"].read_text(encoding="utf-8")
    src["corpus"].write_text(text.replace(" I-PER", " I-ORG", 1), encoding="utf-8")
    assert load_scored(scored, model, nbest, src) is None
    shutil.copy(DEMO_DIR / "train.conll", src["corpus"])
    assert (
        load_scored(scored, model, nbest, {**src, "model": folder / "model" / "tagger.npz"}) is None
    )
    # damaged: cut short, or rows naming a feature the reranker does not have
    data = scored.read_bytes()
    scored.write_bytes(data[: len(data) // 2])
    assert load_scored(scored, model, nbest, src) is None
    good = score_nbest(model, nbest)
    good.data.X.indices[5] = model.features.n_features + 3
    save_scored(scored, good, src)
    assert load_scored(scored, model, nbest, src) is None


@pytest.mark.slow
@pytest.mark.parametrize("edited", [False, True])
def test_the_window_shows_the_demos_candidates_without_a_scoring_job(
    make_window, monkeypatch, edited
):
    pytest.importorskip("pytestqt")
    import nerstudio.app.attachments as attachments

    scored_by_job = []
    real = attachments.score_nbest

    def counting(*a, **k):
        scored_by_job.append(1)
        return real(*a, **k)

    monkeypatch.setattr(attachments, "score_nbest", counting)
    if edited:  # the user's copy of the corpus differs: its list is scored in the worker
        from nerstudio.app.demo_copy import user_demo

        corpus = user_demo() / "train.conll"
        corpus.write_text(corpus.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    w = make_window()
    started = []
    run = w.jobs.run
    monkeypatch.setattr(
        w.jobs, "run", lambda name, *a, **k: started.append(name) or run(name, *a, **k)
    )
    assert w.load_demo()
    if not edited:
        # at once: no scoring job (after the corpus's reading, only the tagger's, which nothing
        # on the page shows), the table shows sentence 0's candidates
        assert started == ["open", "tagger"] and not scored_by_job
        assert w.document.scored is not None and w.nbest_panel.model.rowCount() > 0
        assert w.document.reranked_choice(w.document.nbest_row(0)) is not None
        assert w.runner.wait(60000) and w.document.tagger_path.endswith("tagger.npz")
    else:
        assert w.runner.wait(60000)
        # the tagger was read while the list was scored: no job of its own
        assert started == ["open", "prepare"] and scored_by_job == [1]
        assert w.document.scored is not None and w.document.tagger is not None
    w.close()
