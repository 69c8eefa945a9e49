"""What attaches to the open corpus: an N-best list lined up with it, a reranker's scores, a
K&T tagger's candidates, the files they came from.

An attached N-best list keeps no gold of its own: :func:`index_nbest` replaces its ``gold`` by a
:class:`CorpusGold` view that reads every matched sentence's gold from the corpus, so the
quality counts, the comparison and the next training run all see the corpus's gold, and a list
whose stored gold differs from the corpus is re-scored against it (:attr:`NBestIndex.differ`
says how many sentences differed). The per-candidate numbers the panels display are computed by
the core (span counts from :func:`nerstudio.nbest.span_counts`, feature rows from
``RerankerModel.data``, scores from ``RerankerModel.scores``). Heavy steps (:func:`index_nbest`,
:func:`score_nbest`, both in :func:`prepare`) are plain functions run in a worker; the
:class:`~nerstudio.app.document.Document` installs their results. No Qt here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias, overload

import numpy as np

from ..corpus.model import Corpus, Span
from ..errors import Cancelled
from ..nbest import NBestList
from ..runtime.predictor import needs_documents
from .progress import Progress

#: a non-local feature of a K&T candidate: (name, family, count, weight, count·weight)
Term: TypeAlias = tuple[str, str, float, float, float]
#: :meth:`KTCandidates.explain`: (terms, total score, Σ count·weight, document, its candidate)
Explanation: TypeAlias = tuple[list[Term], float, float, int, int]
#: a feature of :meth:`KTCandidates.compare`: (name, family, count A, count B, weight, (A−B)·weight)
TermPair: TypeAlias = tuple[str, str, float, float, float, float]


def _check(should_cancel: Callable[[], bool] | None) -> None:
    if should_cancel is not None and should_cancel():
        raise Cancelled("cancelled")


@dataclass
class NBestIndex:
    """An N-best list lined up with a corpus, with per-candidate quality counts."""

    nbest: NBestList
    row_of: np.ndarray  # corpus sentence -> N-best sentence, -1 if absent
    offsets: np.ndarray  # N-best sentence i -> candidates offsets[i]:offsets[i+1] (flat arrays)
    correct: np.ndarray | None  # per candidate: correct entities
    proposed: np.ndarray  # per candidate: proposed entities
    n_gold: np.ndarray | None  # per N-best sentence
    differ: int = 0  # matched sentences whose gold in the list's file differed from the corpus
    revision: int = 0  # the document revision the counts are up to date with

    @property
    def matched(self) -> int:
        return int((self.row_of >= 0).sum())

    def span_f(self, i: int) -> np.ndarray | None:
        """Span F (percent) of every candidate of N-best sentence ``i`` against gold."""
        if self.correct is None or self.n_gold is None:
            return None
        sl = slice(int(self.offsets[i]), int(self.offsets[i + 1]))
        c = self.correct[sl].astype(np.float64)
        p = self.proposed[sl].astype(np.float64)
        g = float(self.n_gold[i])
        den = g + p
        return np.where(den > 0, 200.0 * c / np.maximum(den, 1), 100.0)

    def exact(self) -> np.ndarray | None:
        """Per candidate: its entities are exactly the gold ones."""
        if self.correct is None or self.n_gold is None:
            return None
        g = np.repeat(self.n_gold, np.diff(self.offsets))
        same: np.ndarray = (self.correct == self.proposed) & (self.correct == g)
        return same

    def recount(self, i: int) -> None:
        """Count sentence ``i``'s correct entities again (its gold changed)."""
        if self.correct is None or self.n_gold is None:
            return
        correct, _proposed, n_gold = sentence_counts(self.nbest, i)
        self.correct[int(self.offsets[i]) : int(self.offsets[i + 1])] = correct
        self.n_gold[i] = n_gold


def sentence_counts(nb: NBestList, i: int) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`nerstudio.nbest.span_counts` of one sentence of ``nb``: per candidate its
    correct and proposed entities, and the sentence's gold count."""
    from ..nbest import span_counts

    one = NBestList(
        nb.tagset,
        [nb.words[i]],
        [nb.candidates[i]],
        [nb.logprobs[i]],
        None if nb.gold is None else [nb.gold[i]],
        [nb.ids[i]],
    )
    correct, proposed, n_gold = span_counts(one)
    return correct, proposed, int(n_gold[0])


def list_gold(nb: NBestList, spans: Iterable[Span]) -> list[Span]:
    """Gold spans as the N-best list holds them (untyped for an untyped list)."""
    if nb.typed:
        return list(spans)
    return [Span(sp[0], sp[1], "") for sp in spans]


class CorpusGold(Sequence[list[Span]]):
    """The gold of an attached N-best list, read from the corpus: ``gold[i]`` is the current
    gold of the corpus sentence matched with list sentence ``i`` (as the list holds spans), or
    the list's own gold for a sentence the corpus does not have. Read-only: gold is edited in
    the corpus, through the document."""

    def __init__(
        self,
        corpus: Corpus,
        nbest: NBestList,
        row_of: np.ndarray,
        own: Sequence[list[Span]] | None,
    ) -> None:
        self.corpus = corpus
        self.nbest = nbest
        self.sentence_of = np.full(len(nbest), -1, dtype=np.int64)
        hit = np.flatnonzero(row_of >= 0)
        self.sentence_of[row_of[hit]] = hit
        self.own = own  # the list's stored gold (None: it had none)

    def __len__(self) -> int:
        return len(self.sentence_of)

    @overload
    def __getitem__(self, i: int) -> list[Span]: ...
    @overload
    def __getitem__(self, i: slice) -> list[list[Span]]: ...
    def __getitem__(self, i: int | slice) -> list[Span] | list[list[Span]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        k = int(self.sentence_of[i])
        if k >= 0:
            return list_gold(self.nbest, self.corpus.sentences[k].spans)
        return list(self.own[i]) if self.own is not None else []

    def snapshot(self) -> list[list[Span]]:
        """The gold as it is now, as a plain list (for a worker or a training run)."""
        return [self[i] for i in range(len(self))]


def align(corpus: Corpus, nbest: NBestList) -> np.ndarray:
    """Corpus sentence -> N-best sentence with the same words (-1 if none), in order."""
    sents = corpus.sentences
    if len(sents) == len(nbest) and all(s.words == w for s, w in zip(sents, nbest.words)):
        return np.arange(len(sents), dtype=np.int64)
    where: dict[tuple, list[int]] = {}
    for i, w in enumerate(nbest.words):
        where.setdefault(tuple(w), []).append(i)
    out = np.full(len(sents), -1, dtype=np.int64)
    for k, s in enumerate(sents):
        lst = where.get(s.words)
        if lst:
            out[k] = lst.pop(0)
    return out


def index_nbest(
    corpus: Corpus,
    nbest: NBestList,
    should_cancel: Callable[[], bool] | None = None,
    revision: int = 0,
) -> NBestIndex:
    """Line up ``nbest`` with ``corpus``, give it the corpus's gold (a :class:`CorpusGold`
    view; the list's own gold is only kept for sentences the corpus lacks) and count every
    candidate's correct entities against it. ``revision``: the document revision ``corpus`` is
    at (edits after it are counted again when the index is installed)."""
    row_of = align(corpus, nbest)
    _check(should_cancel)
    own = nbest.gold.own if isinstance(nbest.gold, CorpusGold) else nbest.gold
    differ = 0
    if own is not None:
        for k in np.flatnonzero(row_of >= 0):
            if sorted(own[row_of[k]]) != sorted(list_gold(nbest, corpus.sentences[k].spans)):
                differ += 1
    if own is not None or (row_of >= 0).any():
        nbest.gold = CorpusGold(corpus, nbest, row_of, own)
    sizes = np.array([nbest.n_candidates(i) for i in range(len(nbest))], dtype=np.int64)
    offsets = np.zeros(len(nbest) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    from ..nbest import span_counts

    correct, proposed, n_gold = span_counts(nbest)
    if nbest.gold is None:
        correct = n_gold = None
    return NBestIndex(nbest, row_of, offsets, correct, proposed, n_gold, differ, revision)


def list_documents(nbest: NBestList) -> list[int] | None:
    """The document of each sentence of ``nbest``: the list's own (``meta["documents"]``), else,
    for a list attached to a corpus, the corpus's documents (a sentence the corpus does not hold
    is a document of its own), else None. The context features of the rerankers read them."""
    docs = nbest.meta.get("documents")
    if docs is not None:
        return [int(d) for d in docs]
    gold = nbest.gold
    if not isinstance(gold, CorpusGold):
        return None
    of = gold.corpus.sentence_document()
    extra = len(gold.corpus.documents)
    return [of[k] if k >= 0 else extra + i for i, k in enumerate(gold.sentence_of.tolist())]


def with_documents(nbest: NBestList) -> tuple[NBestList, bool]:
    """``nbest`` with each sentence's document in its meta (:func:`list_documents`; a copy that
    shares the candidates when the list had none), and whether they were unknown, so that each
    sentence is a document of its own, as :func:`nerstudio.runtime.predictor.choices` takes
    such a list."""
    if "documents" in nbest.meta:
        return nbest, False
    docs = list_documents(nbest)
    unknown = docs is None
    docs = list(range(len(nbest))) if docs is None else docs
    return replace(nbest, meta={**nbest.meta, "documents": docs}), unknown


@dataclass
class Scored:
    """A reranker applied to an N-best list."""

    model: Any  # nerstudio.rerank.model.RerankerModel
    data: Any  # RankingData of the N-best list
    scores: np.ndarray  # per candidate
    choice: np.ndarray  # per N-best sentence: index of the reranker's pick


def score_nbest(
    model: Any,
    nbest: NBestList,
    should_cancel: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Scored:
    """``model``'s features and scores of every candidate of ``nbest``; ``progress(done,
    total)`` hears of the sentences whose features are computed (the long part of a large
    list), and ``should_cancel`` is asked between them."""
    if needs_documents(model):  # the context features read each sentence's document
        nbest, _ = with_documents(nbest)
    data = model.data(nbest, progress=progress, should_cancel=should_cancel)
    _check(should_cancel)
    return scored_data(model, data)


def scored_data(model: Any, data: Any) -> Scored:
    """``model``'s scores and picks on ranking ``data`` it has computed already (the training
    list's, which the reranker stage returns: no second feature pass)."""
    scores = np.asarray(model.scores(data), dtype=np.float64)
    return Scored(model, data, scores, np.asarray(data.argmax(scores)))


def prepare(
    ctx: Progress,
    corpus: Corpus,
    nbest: NBestList | None,
    model: Any,
    score_target: NBestList | None = None,
    revision: int = 0,
) -> tuple[NBestIndex | None, Scored | None]:
    """Line up a new N-best list with the corpus (if ``nbest``; its gold becomes the corpus's,
    counted at document ``revision``) and score the list on display (``nbest`` or else
    ``score_target``) with the reranker (if ``model``), reporting to ``ctx``. Returns the
    index and the scores, each ``None`` when not asked for."""
    ix = scored = None
    if nbest is not None:
        ctx.progress("lining up the N-best list with the corpus…")
        ix = index_nbest(corpus, nbest, ctx.should_cancel, revision)
    target = nbest if nbest is not None else score_target
    if model is not None and target is not None:
        what = "computing global features and reranker scores…"
        ctx.progress(what)
        scored = score_nbest(
            model,
            target,
            ctx.should_cancel,
            lambda done, total: ctx.progress(what, done, total),
        )
    return ix, scored


@dataclass
class KTCandidates:
    """The displayed N-best list came from a K&T sequence tagger (perceptron or joint): its
    per-sentence candidates were split from document candidates (``doc_nbest``); ``origin[i][j]``
    is the document candidate behind candidate j of sentence i, ``doc_of[i]`` its document and
    ``start_of[i]`` the sentence's first token in the document."""

    model: Any  # PerceptronTagger or JointTagger
    doc_nbest: NBestList
    origin: list
    doc_of: np.ndarray
    start_of: np.ndarray

    @classmethod
    def build(cls, model: Any, doc_nbest: NBestList, origin: list) -> KTCandidates:
        doc_of, start_of = [], []
        for d, off in enumerate(doc_nbest.meta["sentence_offsets"]):
            for a in off[:-1]:
                doc_of.append(d)
                start_of.append(int(a))
        if len(doc_of) != len(origin):
            raise ValueError(
                f"{len(origin)} sentence lists, but the documents hold {len(doc_of)} sentences"
            )
        return cls(
            model,
            doc_nbest,
            origin,
            np.asarray(doc_of, dtype=np.int64),
            np.asarray(start_of, dtype=np.int64),
        )

    @property
    def joint(self) -> bool:
        return hasattr(self.model, "nonlocal_terms")

    def document_candidate(self, i: int, j: int) -> tuple[int, int]:
        return int(self.doc_of[i]), int(self.origin[i][j])

    def explain(self, i: int, j: int) -> Explanation:
        """Non-local features of the document candidate behind candidate j of sentence i:
        ``(terms [(name, family, count, weight, count·weight)], total score, Σ count·weight,
        document, document candidate)``; terms sorted by |contribution|."""
        from ..text.nonlocal_features import template_of

        d, jj = self.document_candidate(i, j)
        nb = self.doc_nbest
        total = float(nb.logprobs[d][jj])
        terms: list[Term] = []
        if self.joint:
            for name, c, w in self.model.nonlocal_terms(nb.words[d], nb.spans(d, jj)):
                terms.append((name, template_of(name), c, w, c * w))
        terms.sort(key=lambda t: (-abs(t[4]), t[0]))
        return terms, total, sum(t[4] for t in terms), d, jj

    def compare(self, i: int, a: int, b: int) -> tuple[list[TermPair], Explanation, Explanation]:
        """Non-local features whose counts differ between the document candidates behind
        candidates a and b: ``(terms [(name, family, count A, count B, weight, (A−B)·weight)],
        explain(a), explain(b))``."""
        ea, eb = self.explain(i, a), self.explain(i, b)
        ca = {t[0]: t for t in ea[0]}
        cb = {t[0]: t for t in eb[0]}
        terms: list[TermPair] = []
        for name in set(ca) | set(cb):
            x = ca[name][2] if name in ca else 0.0
            y = cb[name][2] if name in cb else 0.0
            if x == y:
                continue
            t = ca[name] if name in ca else cb[name]
            w, fam = t[3], t[1]
            terms.append((name, fam, x, y, w, (x - y) * w))
        terms.sort(key=lambda t: (-abs(t[5]), t[0]))
        return terms, ea, eb


@dataclass(frozen=True)
class FileStamp:
    """A file as it was when read: a process that needs the same content may read the file
    again instead of being handed a copy, as long as the file is unchanged."""

    path: str
    mtime_ns: int
    size: int

    @classmethod
    def of(cls, path: str | os.PathLike[str]) -> FileStamp | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return cls(os.path.abspath(path), st.st_mtime_ns, st.st_size)

    def unchanged(self) -> bool:
        return FileStamp.of(self.path) == self
