"""The model in the annotation loop: it learns from every correction and re-predicts the rest.

While the annotator reviews sentences (``Document.reviewed``), an :class:`OnlineLearner` keeps a
tagger trained on them and suggests better entities for the sentences not reviewed yet:

* a structured perceptron tagger (:class:`~nerstudio.tagging.perceptron.PerceptronTagger`)
  updates on each newly reviewed sentence (:meth:`~PerceptronTagger.learn`, its own update rule,
  ``passes`` passes) — the feature vocabulary stays the one it was trained with;
* a max-ent tagger (:class:`~nerstudio.tagging.maxent.MaxEntTagger`) is trained again every
  ``every`` newly reviewed sentences, on the seed corpus plus every reviewed sentence,
  warm-started from the current model (``fit(init=...)``).

With a reranker of the perceptron family (``reranker``; :mod:`nerstudio.app.loop_rerank`), it
too learns every ``every`` newly reviewed sentences — warm-started from its current weights, on
the reviewed sentences' N-best lists of the round's tagger with the reviewed spans as gold — and
its choice among each sentence's candidates is the suggestion (else the tagger's best). One *round* runs in three steps, so that the middle one can run on
a worker thread while the annotator goes on: :func:`snapshot` (main thread: the reviewed
sentences' gold, copied, and the document's revision), :meth:`OnlineLearner.run` (worker: learn,
then decode every non-empty sentence: the ``n``-best lists, whose top candidates are the new
suggestions and whose scores give the uncertainty order), :func:`apply` (main thread: one
``Document.set_many`` edit of the sentences neither reviewed nor edited since the snapshot nor
the one the annotator is on — never the annotator's work, and an edit of the application's, for
which no view moves — and the new N-best list attached; then
:meth:`OnlineLearner.adopt` makes the round's tagger the current one). A cancelled round changes
nothing. :meth:`OnlineLearner.save` writes the current model as a model folder that
``nerstudio.load`` and the pre-annotation read.

How good the suggestions were is measured on what the annotator kept: ``Document.review_log``
holds each reviewed sentence's spans as it became reviewed; :func:`batch_scores` gives, per
batch of reviewed sentences in review order, the entity F of those suggestions against the
sentences' gold now and the corrections they needed (:func:`corrections`). No Qt here.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..corpus.model import Sentence, Span
from ..errors import Cancelled, SettingsError
from ..evaluation import evaluate_spans
from ..nbest import NBestList
from ..runtime.predictor import tagger_nbest
from . import loop_rerank
from .attachments import Scored, index_nbest
from .events import Origin
from .preannotate import PLACEHOLDER

if TYPE_CHECKING:  # the learners (and scipy, numba) load with the first round, not the window
    from ..rerank.model import RerankerModel
    from ..tagging.maxent import MaxEntTagger
    from ..tagging.perceptron import PerceptronTagger
    from .document import Document

    # the taggers the loop trains: a perceptron learns online, a max-ent one is trained again
    Tagger = PerceptronTagger | MaxEntTagger

EVERY = 50  # max-ent: reviewed sentences between two trainings
N_CANDIDATES = 10  # the N-best lists' size (the uncertainty order needs the top two)
DECODE_BATCH = 200  # sentences decoded between two looks at progress and cancellation


def corrections(suggested: Sequence[Span], kept: Sequence[Span]) -> tuple[int, int, int]:
    """Entity-level corrections that turn ``suggested`` into ``kept``: (added, removed,
    relabelled). A span of both with the same boundaries and another label is relabelled (one
    correction); a suggested span whose boundaries no kept span has is removed, a kept one whose
    boundaries no suggested span has is added — so a boundary fix counts two (remove + add)."""
    s = {(a, b): lab for a, b, lab in suggested}
    k = {(a, b): lab for a, b, lab in kept}
    relabelled = sum(1 for ab, lab in k.items() if ab in s and s[ab] != lab)
    return len(k.keys() - s.keys()), len(s.keys() - k.keys()), relabelled


@dataclass
class BatchScore:
    """One batch of reviewed sentences: how many, the suggestion's entity F (percent) against
    what the annotator kept, and the corrections needed (added + removed + relabelled)."""

    sentences: int
    f1: float
    edits: int
    added: int = 0
    removed: int = 0
    relabelled: int = 0


def score_batch(suggested: Sequence[Sequence[Span]], kept: Sequence[Sequence[Span]]) -> BatchScore:
    ev = evaluate_spans(kept, suggested)
    parts = (
        np.array([corrections(s, k) for s, k in zip(suggested, kept)], dtype=np.int64)
        .reshape(-1, 3)
        .sum(axis=0)
    )
    return BatchScore(len(kept), ev.overall.f1, int(parts.sum()), *(int(x) for x in parts))


def batch_scores(document: Document, size: int = EVERY) -> list[BatchScore]:
    """Per batch of ``size`` reviewed sentences of ``document`` (in review order; the last batch
    may be smaller): see :class:`BatchScore`."""
    log = document.review_log
    sents = document.corpus.sentences if document.corpus is not None else []
    out = []
    for i in range(0, len(log), size):
        part = log[i : i + size]
        out.append(score_batch([list(s) for _, s in part], [sents[k].spans for k, _ in part]))
    return out


@dataclass
class Round:
    """What a round learns from and predicts (see the module docstring)."""

    revision: int
    reviewed: dict[int, tuple[Span, ...]]  # sentence -> its gold at the snapshot
    sentences: list[Sentence]  # the corpus's sentences (words and columns are never changed)
    train: list[Sentence] = field(default_factory=list)  # copies of the reviewed sentences


@dataclass
class RoundResult:
    """A finished round: the tagger it ends with, the N-best list of every non-empty sentence
    (in corpus order), their top candidates and what was learned."""

    tagger: Tagger
    revision: int
    nbest: NBestList
    rows: list[int]  # corpus sentence of each list entry
    suggestions: dict[int, list[Span]]  # per sentence not reviewed at the snapshot
    learned: dict[int, tuple[Span, ...]]
    trained: bool  # the tagger or the reranker changed in this round
    note: str = ""
    # the reranker the round ends with (None: the tagger's best)
    reranker: RerankerModel | None = None
    reranked: dict[int, tuple[Span, ...]] = field(default_factory=dict)  # what it learned
    scored: Scored | None = None  # the reranker's Scored of ``nbest`` (None: no reranker)


def snapshot(document: Document) -> Round:
    """The round's input, taken on the main thread."""
    sents = document.opened().sentences  # a round runs only on an open corpus
    ks = np.flatnonzero(document.reviewed)
    reviewed = {int(k): tuple(sents[k].spans) for k in ks}
    return Round(document.revision, reviewed, list(sents), [sents[k].copy() for k in ks])


class OnlineLearner:
    """See the module docstring. ``seed``: sentences trained on besides the reviewed ones
    (max-ent); ``every``: reviewed sentences between two max-ent (and reranker) trainings;
    ``passes``: perceptron passes over each newly reviewed sentence; ``n``: N-best size;
    ``reranker``: a :class:`~nerstudio.rerank.model.RerankerModel` that picks the suggestions
    and learns (the perceptron family; another is not used and :attr:`reranker_note` says
    why)."""

    def __init__(
        self,
        tagger: Tagger,
        seed: Sequence[Sentence] = (),
        every: int = EVERY,
        passes: int = 1,
        n: int = N_CANDIDATES,
        reranker: RerankerModel | None = None,
    ) -> None:
        if every < 1 or passes < 1 or n < 1:
            raise SettingsError("every, passes and n must be at least 1")
        self.tagger: Tagger = tagger
        self.seed = [s for s in seed if len(s.words)]
        self.every, self.passes, self.n = int(every), int(passes), int(n)
        self.learned: dict[int, tuple[Span, ...]] = {}  # sentence -> the gold the model learned
        self.rounds = 0
        self.reranker_note = "" if reranker is None else loop_rerank.why_not(reranker)
        self.reranker: RerankerModel | None = None if self.reranker_note else reranker
        self.reranked: dict[int, tuple[Span, ...]] = {}  # sentence -> the gold it learned

    @property
    def online(self) -> bool:
        """Updates per sentence (a perceptron tagger), rather than every ``every`` sentences."""
        from ..tagging.perceptron import PerceptronTagger

        return isinstance(self.tagger, PerceptronTagger)

    def new(self, rnd: Round, of: dict[int, tuple[Span, ...]] | None = None) -> list[int]:
        """Reviewed sentences of ``rnd`` the tagger (or what ``of`` records) has not learned as
        they are now."""
        of = self.learned if of is None else of
        return [k for k, spans in rnd.reviewed.items() if of.get(k) != spans]

    def tagger_due(self, rnd: Round) -> bool:
        """Any new sentence (perceptron), else ``every`` of them."""
        new = len(self.new(rnd))
        return new > 0 if self.online else new >= self.every

    def reranker_due(self, rnd: Round) -> bool:
        return self.reranker is not None and len(self.new(rnd, self.reranked)) >= self.every

    def due(self, rnd: Round) -> bool:
        """Whether this round would train the tagger or the reranker."""
        return self.tagger_due(rnd) or self.reranker_due(rnd)

    def run(
        self,
        rnd: Round,
        progress: Callable[[int, int], None] | None = None,
        should_cancel: Callable[[], bool] | None = None,
        train: bool | None = None,
    ) -> RoundResult:
        """Learn (each model when due, or as ``train`` says: True trains both on whatever is
        new, False neither), then decode: the worker's part. The current models are not changed
        (:meth:`adopt` does that)."""
        train_tagger = self.tagger_due(rnd) if train is None else train and bool(self.new(rnd))
        train_rr = self.reranker_due(rnd) if train is None else train
        train_rr = train_rr and self.reranker is not None and bool(self.new(rnd, self.reranked))
        tagger, notes = self.tagger, []
        learned = dict(self.learned)
        if train_tagger:
            new = self.new(rnd)
            current = self.tagger
            from ..tagging.maxent import MaxEntTagger
            from ..tagging.perceptron import PerceptronTagger

            if isinstance(current, PerceptronTagger):  # online
                tagger = copy.deepcopy(current)
                train_of = dict(zip(rnd.reviewed, rnd.train))
                updates = tagger.learn([train_of[k] for k in new], self.passes, should_cancel)
                notes.append(f"{updates} update(s) on {len(new)} sentence(s)")
            else:
                retrained = MaxEntTagger(**_params(current, self.seed + rnd.train))
                retrained.fit(self.seed + rnd.train, should_cancel=should_cancel, init=current)
                tagger = retrained
                notes.append(
                    f"trained on {len(self.seed)} seed + {len(rnd.train)} reviewed sentence(s)"
                )
            learned.update({k: rnd.reviewed[k] for k in new})
        rows = [k for k, s in enumerate(rnd.sentences) if len(s.words)]
        nb = decode(tagger, [rnd.sentences[k] for k in rows], self.n, progress, should_cancel)
        reranker, reranked = self.reranker, dict(self.reranked)
        if train_rr:
            at = {k: i for i, k in enumerate(rows)}
            ks = [k for k in rnd.reviewed if k in at]
            assert reranker is not None  # train_rr only with one
            reranker, note = loop_rerank.warm_start(
                reranker, nb, [at[k] for k in ks], [rnd.reviewed[k] for k in ks], should_cancel
            )
            notes.append(note)
            reranked.update({k: rnd.reviewed[k] for k in rnd.reviewed})
        scored = loop_rerank.score(reranker, nb, should_cancel)
        choice = np.zeros(len(nb), dtype=np.int64) if scored is None else scored.choice
        suggestions: dict[int, list[Span]] = {}
        for i, k in enumerate(rows):
            if k not in rnd.reviewed:
                spans = nb.spans(i, int(choice[i])) if nb.n_candidates(i) else []
                suggestions[k] = sorted(
                    spans if nb.typed else [Span(a, b, PLACEHOLDER) for a, b, _ in spans]
                )
        trained = bool(train_tagger or train_rr)
        return RoundResult(
            tagger,
            rnd.revision,
            nb,
            rows,
            suggestions,
            learned,
            trained,
            "; ".join(notes),
            reranker,
            reranked,
            scored,
        )

    def adopt(self, result: RoundResult) -> None:
        """Make the round's tagger (and reranker) the current ones."""
        self.tagger, self.learned = result.tagger, result.learned
        if self.reranker is not None:
            self.reranker, self.reranked = result.reranker, result.reranked
        self.rounds += 1

    def save(self, folder: str | os.PathLike[str]) -> str:
        """Write the current tagger (and reranker) as the model folder ``folder``
        (``tagger.npz``, ``reranker.npz``: what ``nerstudio.load`` and File ▸ Pre-annotate
        read); returns the tagger's file."""
        os.makedirs(folder, exist_ok=True)
        path = str(Path(folder) / "tagger.npz")
        self.tagger.save(path)
        if self.reranker is not None:
            self.reranker.save(str(Path(folder) / "reranker.npz"))
        return path


def _params(tagger: MaxEntTagger, train: Sequence[Sentence]) -> dict[str, Any]:
    """The constructor settings of a max-ent tagger (a loaded one knows them too); its entity
    types are its own and those of ``train`` (a reviewed sentence may bring a new one; a type
    the reviewed sentences lack yet is kept, for the reranker and the next sentences). The
    values are the tagger's attributes, of as many types as the constructor's arguments."""
    keys = (
        "task",
        "features",
        "cutoff",
        "l2",
        "optimizer",
        "max_iter",
        "epochs",
        "eta",
        "seed",
        "tol",
        "cutoff_on",
        "maxcor",
        "threads",
        "alphabet",
    )
    out = {k: getattr(tagger, k) for k in keys if hasattr(tagger, k)}
    old = [t.split("-", 1)[1] for t in getattr(tagger, "tagset_", []) if "-" in t]
    out["labels"] = sorted(set(old) | {sp.label for s in train for sp in s.spans})
    return out


def decode(
    tagger: Tagger,
    sentences: Sequence[Sentence],
    n: int,
    progress: Callable[[int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> NBestList:
    """The tagger's ``n`` best candidates of every sentence, in batches with progress and
    cancellation (:class:`~nerstudio.errors.Cancelled`)."""
    parts = []
    total = len(sentences)
    for start in range(0, total, DECODE_BATCH):
        if should_cancel is not None and should_cancel():
            raise Cancelled("the annotation loop was cancelled")
        parts.append(tagger_nbest(tagger, sentences[start : start + DECODE_BATCH], n))
        if progress is not None:
            progress(min(total, start + DECODE_BATCH), total)
    if not parts:
        tagset = getattr(tagger, "list_tagset_", None) or getattr(tagger, "tagset_", [])
        return NBestList(list(tagset), [], [], [])
    return NBestList.concatenate(parts)


@dataclass(frozen=True)
class Applied:
    """What :func:`apply` did: the sentences it predicted (given the round's suggestion) and,
    of those, the ones whose entities changed."""

    predicted: tuple[int, ...]
    changed: tuple[int, ...]

    def summary(self) -> str:
        """``predicted N sentence(s), M changed``."""
        return f"predicted {len(self.predicted):,} sentence(s), {len(self.changed):,} changed"


def apply(
    document: Document,
    result: RoundResult,
    text: str = "model in the loop",
    keep: Iterable[int] = (),
) -> Applied:
    """Put a round's suggestions in place (one undoable edit of the sentences neither reviewed
    nor edited since the snapshot, nor in ``keep``: the sentence the annotator is on, which is
    theirs while they are on it) and attach its N-best list. The edit is the application's
    (``Origin.APP``): no view moves for it."""
    edited = set(document.changed_since(result.revision).tolist()) | set(keep)
    edits = {
        k: spans
        for k, spans in result.suggestions.items()
        if not document.reviewed[k] and k not in edited
    }
    changed = document.set_many(edits, text, origin=Origin.APP)
    index = index_nbest(document.opened(), result.nbest, revision=document.revision)
    document.attach_nbest(index, scored=result.scored)
    return Applied(tuple(sorted(edits)), tuple(changed))
