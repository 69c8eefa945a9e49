"""The stages every front end's training run shares, so that a run means the same whoever
started it (the window's worker, ``nerstudio experiment`` and its K&T suite): their names, and
the tagger stage itself.

:func:`tagger_and_lists` is the one way a run makes its tagger and N-best lists: one run of the
fold driver (:func:`nerstudio.runtime.pipeline.jackknife` with ``full=True``) that trains the
tagger on the whole corpus, its epochs chosen on the development corpus when there is one, and
lists every training sentence with a fold's tagger that never saw it. It reports to a
:class:`~nerstudio.app.progress.Progress`: :data:`STAGE_TAGGER` while the whole-corpus tagger
trains alone, :data:`STAGE_JACKKNIFE` from the first fold on.
"""

from __future__ import annotations

from ..app.progress import Progress
from ..corpus.model import Corpus

STAGE_READ = "reading the corpora"
STAGE_TAGGER = "training the tagger"
STAGE_JACKKNIFE = "jackknifing N-best lists"
STAGE_INDEX = "lining up the N-best list"
STAGE_DEV = "the development set"
STAGE_FEATURES = "global features"
STAGE_RERANKER = "training the reranker"
STAGE_SCORE = "scoring the candidates"
STAGE_OUTPUTS = "writing the report"


def tagger_and_lists(
    ctx: Progress,
    corpus: Corpus,
    tagger_params: dict,
    folds: int,
    n: int,
    *,
    decode: dict[str, Corpus] | None = None,
    select_on: str | None = None,
    workers: int | None = None,
    executor=None,
):
    """The tagger on all of ``corpus``, ``corpus``'s jackknifed N-best lists and the ``decode``
    corpora's lists from that tagger (a
    :class:`~nerstudio.runtime.pipeline.JackknifeResult`). ``select_on`` names the ``decode``
    corpus the tagger's epochs are chosen on; ``workers``/``executor`` say where the jobs run
    (one worker: here, one after the other, the whole-corpus tagger first)."""
    from ..runtime.pipeline import full_model_job, jackknife

    full = full_model_job(len(corpus.sentences))
    ctx.stage(STAGE_TAGGER, f"on all {len(corpus.sentences):,} sentences…", 0, folds + 1)
    jackknifing = False

    def progress(ev) -> None:
        nonlocal jackknifing
        if not jackknifing and ev.job != full:
            jackknifing = True
            ctx.stage(STAGE_JACKKNIFE, f"{folds} folds…", ev.done, ev.total)
        # a finished job's message names it; a running job's says what it is doing
        ctx.progress(ev.message if ev.final else f"{ev.job}: {ev.message}", ev.done, ev.total)

    return jackknife(
        corpus,
        folds,
        n,
        tagger_params,
        workers=workers,
        progress=progress,
        should_cancel=ctx.should_cancel,
        full=True,
        decode=dict(decode or {}),
        select_on=select_on,
        executor=executor,
    )
