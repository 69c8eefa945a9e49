"""The Python API: a tagger (and optionally a reranker) as one object, for notebooks and scripts.

Without it, predicting from Python takes a tagger loader, a corpus built by hand, a beam search,
global features and a learner; this module puts them behind three calls::

    import nerstudio
    pipe = nerstudio.load("run/")            # tagger.npz (+ reranker.npz / reranker-<system>.npz)
    pipe.predict("Ms. Haag plays Elianti .")  # [Entity(label='PER', start=4, end=8, text='Haag', …)]

Offsets are **character** offsets into the text given (``text[e.start:e.end] == e.text``); for
pre-tokenised input (a list of tokens) they index the tokens joined by single spaces. A string
is one sentence: it is split into tokens by :func:`tokenize` (a regular expression over words,
numbers and punctuation) and is **not** split into sentences.

``import nerstudio`` stays cheap: :func:`nerstudio.load`, :func:`nerstudio.read` and
:func:`nerstudio.write` import this module on first use, and this module imports the taggers
and rerankers only when a model is loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import DataError, SettingsError


@dataclass(frozen=True)
class Entity:
    """One predicted entity.

    ``start``/``end``: character offsets (end exclusive) into the text, or into the tokens joined
    by single spaces; ``token_start``/``token_end``: token indices (end exclusive); ``score``:
    the share of the tagger's N-best probability mass held by the candidates that contain this
    exact entity (1.0: every candidate agrees; for the perceptron taggers, whose scores are no
    log-probabilities, the softmax of their scores: a relative confidence, not calibrated).
    """

    label: str
    start: int
    end: int
    text: str
    score: float
    token_start: int
    token_end: int


@dataclass
class Candidate:
    """One candidate segmentation of a sentence, as :meth:`Pipeline.nbest` lists them.

    ``rank``: its place in the tagger's list (0 = the tagger's best); ``log_prob``: L(x), the
    tagger's log-probability (its score for the perceptron taggers); ``probability``: its share
    of the list's mass, softmax of L(x); ``reranker_score``: the reranker's score (``None``
    without a reranker).
    """

    rank: int
    entities: list[Entity]
    log_prob: float
    probability: float
    reranker_score: float | None = None


@dataclass
class Explanation:
    """Why the reranker chose its candidate.

    ``chosen`` is the reranker's pick and ``tagger_top`` the tagger's best. When they differ,
    ``terms`` are the features on which they differ, each with how much it moves
    score(chosen) − score(tagger_top) (``delta``); when they are the same candidate, ``terms``
    are every term of its score and ``delta`` is that score.
    """

    chosen: Candidate
    tagger_top: Candidate
    delta: float
    terms: list = field(default_factory=list)  # nerstudio.rerank.model.Term

    def __str__(self) -> str:
        from .numfmt import num

        lines = [
            f"chosen: candidate {self.chosen.rank + 1} "
            f"{[(e.text, e.label) for e in self.chosen.entities]}",
            f"tagger's best: candidate {self.tagger_top.rank + 1} "
            f"{[(e.text, e.label) for e in self.tagger_top.entities]}",
        ]
        for t in self.terms[:10]:
            lines.append(f"  {num(t.contribution, sign=True):>8}  {t.name}")
        return "\n".join(lines)


def tokenize(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Tokens of one sentence and their ``(start, end)`` character offsets, cut as the
    application cuts plain text (:mod:`nerstudio.corpus.segment`: CoNLL-style tokens such as
    ``U.S.``, ``Inc.``, ``1,000.50``, ``Smith-Jones``, ``O'Neill``, with clitics and a sentence's
    final dot apart). No sentence splitting: the whole string is one sentence.
    """
    from .corpus.segment import tokens as segment_tokens

    offsets = segment_tokens(text)
    return [text[a:b] for a, b in offsets], offsets


def _as_tokens(text_or_tokens) -> tuple[str, list[str], list[tuple[int, int]]]:
    if isinstance(text_or_tokens, str):
        tokens, offsets = tokenize(text_or_tokens)
        return text_or_tokens, tokens, offsets
    tokens = list(text_or_tokens)
    if not all(isinstance(t, str) and t for t in tokens):
        raise SettingsError("tokens must be non-empty strings (or give the text as one string)")
    offsets, pos = [], 0
    for t in tokens:
        offsets.append((pos, pos + len(t)))
        pos += len(t) + 1
    return " ".join(tokens), tokens, offsets


class Pipeline:
    """A tagger and, optionally, a reranker (see the module docstring). ``n``: candidates per
    sentence the tagger proposes (the reranker chooses among them)."""

    def __init__(self, tagger, reranker=None, n: int = 20):
        self.tagger, self.reranker, self.n = tagger, reranker, _candidate_count(n)

    def __repr__(self) -> str:
        rr = f", reranker={self.reranker.algo}" if self.reranker is not None else ""
        return f"Pipeline(tagger={type(self.tagger).__name__}{rr}, n={self.n})"

    # -- the candidates of one sentence ------------------------------------------------------------
    def _list(self, tokens: list[str], n: int):
        from .runtime.predictor import tagger_nbest

        return tagger_nbest(self.tagger, [tokens], n)

    def _scored(self, text_or_tokens, n: int | None = None):
        """(candidates in the tagger's order, index of the chosen one, ranking data or None)."""
        text, tokens, offsets = _as_tokens(text_or_tokens)
        if not tokens:
            return [], 0, None, None
        nb = self._list(tokens, self.n if n is None else _candidate_count(n))
        logp = np.asarray(nb.logprobs[0], dtype=np.float64)
        prob = np.exp(logp - logp.max())
        prob /= prob.sum()
        cand_spans = nb.candidate_spans(0)
        mass: dict = {}
        for spans, p in zip(cand_spans, prob.tolist()):
            for sp in spans:
                mass[sp] = mass.get(sp, 0.0) + p
        rscores, chosen, data = None, 0, None
        if self.reranker is not None:
            from .runtime.predictor import needs_documents

            if needs_documents(self.reranker):  # one sentence: a document of its own, no context
                nb.meta["documents"] = [0]
            data = self.reranker.data(nb)
            rscores = self.reranker.scores(data)
            chosen = int(self.reranker.predict(data)[0])
        cands = []
        for j, spans in enumerate(cand_spans):
            ents = [
                Entity(
                    sp.label,
                    offsets[sp.start][0],
                    offsets[sp.end - 1][1],
                    text[offsets[sp.start][0] : offsets[sp.end - 1][1]],
                    min(1.0, mass[sp]),
                    sp.start,
                    sp.end,
                )
                for sp in spans
            ]
            cands.append(
                Candidate(
                    j,
                    ents,
                    float(logp[j]),
                    float(prob[j]),
                    None if rscores is None else float(rscores[j]),
                )
            )
        return cands, chosen, data, nb

    # -- the public calls -------------------------------------------------------------------------------
    def predict(self, text_or_tokens: str | Sequence[str]) -> list[Entity]:
        """The entities of one sentence: the reranker's pick among the tagger's ``n`` best, or
        the tagger's best without a reranker. A string is tokenised by :func:`tokenize`; a list
        is taken as tokens (offsets then index the tokens joined by single spaces)."""
        cands, chosen, _, _ = self._scored(text_or_tokens)
        return cands[chosen].entities if cands else []

    def nbest(self, text_or_tokens: str | Sequence[str], n: int | None = None) -> list[Candidate]:
        """The tagger's ``n`` best candidates (default: the pipeline's ``n``), best first, with
        their probabilities and, with a reranker, its scores."""
        return self._scored(text_or_tokens, n)[0]

    def explain(self, text_or_tokens: str | Sequence[str]) -> Explanation:
        """Why the reranker picks its candidate over the tagger's best (see :class:`Explanation`)."""
        if self.reranker is None:
            raise SettingsError("explain needs a reranker: load a folder that holds one")
        cands, chosen, data, _ = self._scored(text_or_tokens)
        if not cands:
            raise DataError("nothing to explain: the text holds no token")
        start = int(data.offsets[0])
        if chosen == 0:
            ex = self.reranker.explain(data, start)
            return Explanation(cands[0], cands[0], ex.score, ex.terms)
        cmp = self.reranker.compare(data, start + chosen, start)
        return Explanation(cands[chosen], cands[0], cmp.delta, cmp.terms)


def _candidate_count(n) -> int:
    """``n`` checked to be a number of candidates: a whole number (not a bool), at least 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise SettingsError(f"n must be a whole number of candidates, at least 1, not {n!r}")
    return int(n)


def load(folder, system: str | None = None, n: int = 20) -> Pipeline:
    """A :class:`Pipeline` from a folder: ``tagger.npz`` (or ``sequence-tagger.npz``) and,
    when present, the reranker: ``reranker.npz`` (the demo model and the application's results
    folders) or ``reranker-<system>.npz`` (``nerstudio experiment``'s output; ``system`` picks
    one when there are several). A path to a tagger file loads the tagger alone."""
    from .runtime.predictor import load_model_folder

    return Pipeline(*load_model_folder(folder, system), n)


def read(path, format: str | None = None, scheme: str | None = None, encoding: str | None = None):
    """A corpus file as a :class:`nerstudio.corpus.model.Corpus` (format and tag scheme detected
    unless given; see the README's formats table). Bad input raises
    :class:`nerstudio.errors.FormatError` naming the file and line."""
    from .corpus.formats import read_corpus

    return read_corpus(path, format, scheme, encoding)


def write(corpus, path, format: str | None = None, scheme: str | None = None) -> None:
    """Write ``corpus`` atomically; the format is the corpus's own unless ``format`` is given
    (or, for a new format, named by the extension as ``nerstudio convert`` does)."""
    from .corpus.detect import format_for_output
    from .corpus.writing import write_corpus

    if format is None:
        format = format_for_output(path, corpus.format) or corpus.format
    write_corpus(corpus, path, format, scheme)


def suspects(
    corpus,
    *,
    more=(),
    folds: int = 5,
    model=None,
    n: int = 20,
    executor=None,
    progress=None,
    cancel=None,
    tagger_params: dict | None = None,
):
    """The sentences of ``corpus`` (a Corpus or a corpus file) ranked by the evidence that their
    gold annotation is wrong, most suspect first: a list of
    :class:`nerstudio.label_errors.Suspect` (sentence index, score, the span where gold and the
    model's suggestion differ, both sides' entities there, the evidence in words). Each sentence
    is judged by a max-ent tagger that never trained on it: one trained on the other ``folds`` − 1
    folds plus ``more`` (corpora or files), or ``model`` (a model folder, a tagger file or a
    loaded max-ent tagger). ``progress(done, total, text)``; a true ``cancel()`` stops with
    :class:`nerstudio.errors.Cancelled`. See :func:`nerstudio.label_errors.find_suspects`."""
    from .label_errors import find_suspects

    def as_corpus(c):
        return c if hasattr(c, "sentences") else read(c)

    return find_suspects(
        as_corpus(corpus),
        more=[as_corpus(m) for m in more],
        folds=folds,
        model=model,
        n=n,
        executor=executor,
        progress=progress,
        cancel=cancel,
        tagger_params=tagger_params,
    )
