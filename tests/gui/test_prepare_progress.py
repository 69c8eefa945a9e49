"""Attaching a user's own N-best list with a reranker computes every candidate's features in
the worker: the job reports how many sentences are done, and a cancel stops it."""

from __future__ import annotations

import pytest

from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import Cancelled
from nerstudio.nbest import NBestList
from nerstudio.rerank.model import RerankerModel


class _Ctx:
    def __init__(self, cancel_after: int | None = None):
        self.reports: list[tuple[str, int, int]] = []
        self.asked = 0
        self.cancel_after = cancel_after

    def progress(self, message: str = "", done: int = 0, total: int = 0) -> None:
        self.reports.append((message, done, total))

    def should_cancel(self) -> bool:
        self.asked += 1
        return self.cancel_after is not None and self.asked > self.cancel_after


def _job():
    from nerstudio.app.attachments import prepare

    corpus = read_corpus(str(DEMO_DIR / "train.conll"))
    nbest = NBestList.load(str(DEMO_DIR / "model" / "train.nbest.npz"))
    model = RerankerModel.load(str(DEMO_DIR / "model" / "reranker.npz"))
    return (lambda ctx: prepare(ctx, corpus, nbest, model)), len(nbest)


@pytest.mark.slow
def test_scoring_a_list_reports_the_sentences_done():
    job, n = _job()
    ctx = _Ctx()
    _ix, scored = job(ctx)
    assert scored is not None and len(scored.choice) == n
    counted = [(d, t) for m, d, t in ctx.reports if m.startswith("computing global features")]
    assert counted[-1] == (n, n)  # the feature stage's count, to its end


def test_scoring_a_list_can_be_cancelled_between_sentences(monkeypatch):
    from nerstudio.rerank.features import GlobalFeatures

    assembled = []  # the rows are assembled once every sentence's features are computed
    real = GlobalFeatures._to_data
    monkeypatch.setattr(
        GlobalFeatures, "_to_data", lambda *a, **k: assembled.append(1) or real(*a, **k)
    )
    job, _ = _job()
    ctx = _Ctx(cancel_after=1)  # the index asks once; then the features' loop
    with pytest.raises(Cancelled):
        job(ctx)
    assert not assembled  # stopped within the loop, not after it
