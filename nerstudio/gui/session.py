"""What the window shows, as plain Python: the corpus, its N-best list, the models, their scores.

The :class:`Session` imports no Qt. It lines up an N-best list with the open corpus, keeps the
tagger and reranker models, and holds the per-candidate numbers the panels display — every one
of them computed by the core (span counts from :func:`nerstudio.rerank.data.span_counts`, feature
rows from ``RerankerModel.data``, scores from ``RerankerModel.scores``). Heavy steps
(:func:`index_nbest`, :func:`score_nbest`) are plain functions so the window can run them in a
worker and install the result with :meth:`Session.install`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..corpus.model import Corpus, Span
from ..errors import Cancelled
from ..nbest import NBestList


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
        if self.correct is None:
            return None
        g = np.repeat(self.n_gold, np.diff(self.offsets))
        return (self.correct == self.proposed) & (self.correct == g)

    def recount(self, i: int) -> None:
        """Count sentence ``i``'s correct entities again (its gold changed)."""
        if self.correct is None:
            return
        correct, _proposed, n_gold = sentence_counts(self.nbest, i)
        self.correct[int(self.offsets[i]):int(self.offsets[i + 1])] = correct
        self.n_gold[i] = n_gold


def sentence_counts(nb: NBestList, i: int) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`nerstudio.rerank.data.span_counts` of one sentence of ``nb``: per candidate its
    correct and proposed entities, and the sentence's gold count."""
    from ..nbest import span_counts
    one = NBestList(nb.tagset, [nb.words[i]], [nb.candidates[i]], [nb.logprobs[i]],
                    None if nb.gold is None else [nb.gold[i]], [nb.ids[i]])
    correct, proposed, n_gold = span_counts(one)
    return correct, proposed, int(n_gold[0])


def list_gold(nb: NBestList, spans) -> list[Span]:
    """Gold spans as the N-best list holds them (untyped for an untyped list)."""
    if nb.typed:
        return [Span(*sp) for sp in spans]
    return [Span(sp[0], sp[1], "") for sp in spans]


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


def index_nbest(corpus: Corpus, nbest: NBestList, should_cancel=None) -> NBestIndex:
    """Line up ``nbest`` with ``corpus`` and count every candidate's correct entities."""
    row_of = align(corpus, nbest)
    _check(should_cancel)
    sizes = np.array([nbest.n_candidates(i) for i in range(len(nbest))], dtype=np.int64)
    offsets = np.zeros(len(nbest) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    from ..nbest import span_counts
    correct, proposed, n_gold = span_counts(nbest)
    if nbest.gold is None:
        correct = n_gold = None
    return NBestIndex(nbest, row_of, offsets, correct, proposed, n_gold)


@dataclass
class Scored:
    """A reranker applied to an N-best list."""

    model: Any  # nerstudio.rerank.model.RerankerModel
    data: Any  # RankingData of the N-best list
    scores: np.ndarray  # per candidate
    choice: np.ndarray  # per N-best sentence: index of the reranker's pick


def score_nbest(model, nbest: NBestList, should_cancel=None) -> Scored:
    data = model.data(nbest)
    _check(should_cancel)
    scores = np.asarray(model.scores(data), dtype=np.float64)
    choice = np.asarray(data.argmax(scores))
    return Scored(model, data, scores, choice)


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
    def build(cls, model, doc_nbest: NBestList, origin: list) -> "KTCandidates":
        doc_of, start_of = [], []
        for d, off in enumerate(doc_nbest.meta["sentence_offsets"]):
            for a in off[:-1]:
                doc_of.append(d)
                start_of.append(int(a))
        if len(doc_of) != len(origin):
            raise ValueError(f"{len(origin)} sentence lists, but the documents hold {len(doc_of)} sentences")
        return cls(model, doc_nbest, origin, np.asarray(doc_of, dtype=np.int64), np.asarray(start_of, dtype=np.int64))

    @property
    def joint(self) -> bool:
        return hasattr(self.model, "nonlocal_terms")

    def document_candidate(self, i: int, j: int) -> tuple[int, int]:
        return int(self.doc_of[i]), int(self.origin[i][j])

    def explain(self, i: int, j: int):
        """Non-local features of the document candidate behind candidate j of sentence i:
        ``(terms [(name, family, count, weight, count·weight)], total score, Σ count·weight,
        document, document candidate)``; terms sorted by |contribution|."""
        from ..text.nonlocal_features import template_of
        d, jj = self.document_candidate(i, j)
        nb = self.doc_nbest
        total = float(nb.logprobs[d][jj])
        terms = []
        if self.joint:
            for name, c, w in self.model.nonlocal_terms(nb.words[d], nb.spans(d, jj)):
                terms.append((name, template_of(name), c, w, c * w))
        terms.sort(key=lambda t: (-abs(t[4]), t[0]))
        return terms, total, sum(t[4] for t in terms), d, jj

    def compare(self, i: int, a: int, b: int):
        """Non-local features whose counts differ between the document candidates behind
        candidates a and b: ``(terms [(name, family, count A, count B, weight, (A−B)·weight)],
        explain(a), explain(b))``."""
        ea, eb = self.explain(i, a), self.explain(i, b)
        ca = {t[0]: t for t in ea[0]}
        cb = {t[0]: t for t in eb[0]}
        terms = []
        for name in set(ca) | set(cb):
            x = ca[name][2] if name in ca else 0.0
            y = cb[name][2] if name in cb else 0.0
            if x == y:
                continue
            w = (ca.get(name) or cb.get(name))[3]
            fam = (ca.get(name) or cb.get(name))[1]
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
    def of(cls, path) -> "FileStamp | None":
        try:
            st = os.stat(path)
        except OSError:
            return None
        return cls(os.path.abspath(path), st.st_mtime_ns, st.st_size)

    def unchanged(self) -> bool:
        return FileStamp.of(self.path) == self


@dataclass
class Session:
    corpus: Corpus | None = None
    nbest_index: NBestIndex | None = None
    nbest_path: str | None = None
    scored: Scored | None = None
    model: Any = None  # RerankerModel
    model_path: str | None = None
    tagger: Any = None  # MaxEntTagger
    tagger_path: str | None = None
    dev_nbest: NBestList | None = None
    dev_nbest_path: str | None = None
    type_masks: dict[str, np.ndarray] = field(default_factory=dict)
    nbest_file: FileStamp | None = None  # the file the N-best list was read from
    dev_nbest_file: FileStamp | None = None
    nbest_gold_edits: int = 0  # gold changes of the N-best list since it was installed
    kt_model: Any = None  # the K&T sequence tagger of this session (PerceptronTagger or JointTagger)
    kt_model_path: str | None = None
    kt: KTCandidates | None = None  # set when the displayed N-best list came from a K&T tagger

    # -- corpus ---------------------------------------------------------------------------
    def set_corpus(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.nbest_index = None
        self.nbest_path = None
        self.nbest_file = None
        self.scored = None
        self.kt = None
        labels: dict[str, list[int]] = {}
        for k, s in enumerate(corpus.sentences):
            for sp in s.spans:
                lst = labels.setdefault(sp.label, [])
                if not lst or lst[-1] != k:
                    lst.append(k)
        n = len(corpus)
        self.type_masks = {}
        for lab, ks in sorted(labels.items()):
            m = np.zeros(n, dtype=bool)
            m[ks] = True
            self.type_masks[lab] = m

    # -- N-best ---------------------------------------------------------------------------
    @property
    def nbest(self) -> NBestList | None:
        return self.nbest_index.nbest if self.nbest_index is not None else None

    def install(self, index: NBestIndex | None = None, scored: Scored | None = None, path: str | None = None,
                stamp: FileStamp | None = None, kt: KTCandidates | None = None) -> None:
        if index is not None:
            self.kt = kt
            self.nbest_index = index
            self.nbest_path = path
            self.nbest_file = stamp
            self.nbest_gold_edits = 0
            if scored is None:
                self.scored = None
        if scored is not None:
            self.scored = scored

    def nbest_row(self, k: int) -> int:
        """N-best sentence of corpus sentence ``k`` (-1 when it has no candidates)."""
        ix = self.nbest_index
        if ix is None or k < 0 or k >= len(ix.row_of):
            return -1
        return int(ix.row_of[k])

    def candidate_rows(self, i: int) -> slice:
        ix = self.nbest_index
        return slice(int(ix.offsets[i]), int(ix.offsets[i + 1]))

    def scores_of(self, i: int) -> np.ndarray | None:
        if self.scored is None:
            return None
        d = self.scored.data
        return self.scored.scores[d.rows(i)]

    def set_gold(self, k: int, spans) -> int:
        """Make ``spans`` the gold of corpus sentence ``k`` in the N-best list too (so the next
        training run and the quality columns use it) and count its candidates again. Returns
        the N-best sentence, or -1 when ``k`` has none."""
        i = self.nbest_row(k)
        nb = self.nbest
        if i < 0 or nb is None or nb.gold is None:
            return -1
        nb.gold[i] = list_gold(nb, spans)
        self.nbest_gold_edits += 1
        self.nbest_index.recount(i)
        sc = self.scored
        d = sc.data if sc is not None else None
        if d is not None and d.correct is not None and d.n_gold is not None and len(d) == len(nb):
            rows = d.rows(i)
            d.correct[rows] = self.nbest_index.correct[self.candidate_rows(i)]
            d.n_gold[i] = self.nbest_index.n_gold[i]
        return i

    def nbest_source(self) -> str | None:
        """The file holding exactly the N-best list (read from it, gold not edited since, file
        unchanged), or None."""
        st = self.nbest_file
        return st.path if st is not None and not self.nbest_gold_edits and st.unchanged() else None

    def dev_nbest_source(self) -> str | None:
        st = self.dev_nbest_file
        return st.path if st is not None and st.unchanged() else None

    def update_type_masks(self, k: int) -> list[str]:
        """Refresh the per-type sentence masks for sentence ``k``; returns types seen for the
        first time."""
        labels = {sp.label for sp in self.corpus.sentences[k].spans}
        new = []
        for lab in labels - set(self.type_masks):
            self.type_masks[lab] = np.zeros(len(self.corpus), dtype=bool)
            new.append(lab)
        for lab, m in self.type_masks.items():
            m[k] = lab in labels
        return new

    def reranked_choice(self, i: int) -> int | None:
        if self.scored is None:
            return None
        return int(self.scored.choice[i])

    def data_row(self, i: int, j: int) -> int | None:
        """Row of candidate ``j`` of N-best sentence ``i`` in the reranker's RankingData."""
        if self.scored is None:
            return None
        return int(self.scored.data.offsets[i]) + j

    # -- filters --------------------------------------------------------------------------
    def flags(self) -> dict[str, np.ndarray]:
        """Per corpus sentence: has_nbest, error (baseline top ≠ gold), changed (the reranker
        picked another candidate), missing (gold not among the candidates)."""
        n = len(self.corpus) if self.corpus else 0
        out = {"has_nbest": np.zeros(n, bool), "error": np.zeros(n, bool), "changed": np.zeros(n, bool),
               "missing": np.zeros(n, bool)}
        ix = self.nbest_index
        if ix is None or n == 0:
            return out
        has = ix.row_of >= 0
        out["has_nbest"] = has
        rows = np.where(has, ix.row_of, 0)
        exact = ix.exact()
        sizes = np.diff(ix.offsets)
        if exact is not None:
            first_ok = np.zeros(len(ix.nbest), dtype=bool)
            nz = sizes > 0
            first_ok[nz] = exact[ix.offsets[:-1][nz]]
            any_ok = np.zeros(len(ix.nbest), dtype=bool)
            if len(exact):
                any_ok[nz] = np.logical_or.reduceat(exact, ix.offsets[:-1][nz])
            out["error"] = has & ~first_ok[rows]
            out["missing"] = has & ~any_ok[rows]
        if self.scored is not None:
            choice = self.scored.choice
            out["changed"] = has & (choice[rows] > 0)
            if exact is not None:
                pick = ix.offsets[:-1] + np.maximum(choice, 0)
                ok = np.zeros(len(ix.nbest), dtype=bool)
                valid = (choice >= 0) & (sizes > 0)
                ok[valid] = exact[pick[valid]]
                out["rerank_error"] = has & ~ok[rows]
        return out


def span_diff(spans: list[Span], reference: list[Span], words) -> str:
    """``+TYPE text`` for entities only in ``spans``, ``−TYPE text`` for those only in ``reference``."""
    a, b = set(spans), set(reference)
    parts = [f"+{s.label or 'ENT'} {s.text(words)}" for s in sorted(a - b)]
    parts += [f"−{s.label or 'ENT'} {s.text(words)}" for s in sorted(b - a)]
    return "  ".join(parts)
