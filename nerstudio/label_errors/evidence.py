"""How suspect one sentence's gold annotation is, given a model that never trained on it.

The model's view of a sentence is its N-best list — the most probable taggings, each with its
log-probability — and gold's own log-probability, found by forced decoding whether or not the
beam kept gold (:func:`nerstudio.tagging.maxent_probs.sequence_log_probs`). The *suggestion* is
the most probable tagging that differs from gold; the *region* is the stretch of tokens where
the two differ (from the first differing entity's start to the last one's end, so the entities
of both sides are either wholly inside it or wholly outside).

The score is a log-likelihood ratio: how many times more probable the model finds its
suggestion than gold, in natural-log units (``log p(suggestion) − log p(gold)``). It is positive
when the model prefers another annotation, and the larger, the stronger the evidence; where the
model itself picks gold, it is the (negative) ratio of its runner-up. The parts of the sentence
outside the region are tagged alike on both sides and cancel, so the score is not lowered by the
rest of a long sentence, nor raised by it. Other measures were tried on the benchmark
(``bench/suspects.py``: the list's mass outside gold, the ratio over the region only); this one
ranks injected errors best (docs/benchmarks.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..corpus.model import Span


@dataclass(frozen=True)
class Suspect:
    """One sentence's evidence that its gold annotation is wrong (see the module docstring).

    ``sentence``: 0-based index into ``corpus.sentences`` (file order; ``-DOCSTART-`` is no
    sentence); ``score``: higher is more suspect; ``[start, end)``: the tokens where gold and
    the suggestion differ (``start == end``: the model has no alternative to gold);
    ``gold`` / ``suggested``: each side's entities inside the region; ``evidence``: the same in
    words, for the annotator."""

    sentence: int
    score: float
    start: int
    end: int
    gold: tuple[Span, ...]
    suggested: tuple[Span, ...]
    evidence: str


def apply_suggestion(spans: Sequence[Span], suspect: Suspect) -> list[Span]:
    """``spans`` (a sentence's entities) with those overlapping the suspect's region replaced by
    its suggestion."""
    kept = [s for s in spans if s.end <= suspect.start or s.start >= suspect.end]
    return sorted([*kept, *suspect.suggested])


def region(gold: Sequence[Span], other: Sequence[Span]) -> tuple[int, int]:
    """``[start, end)`` covering every entity that is on one side only (``(0, 0)`` if none)."""
    g, o = set(gold), set(other)
    diff = (g - o) | (o - g)
    if not diff:
        return 0, 0
    return min(s.start for s in diff), max(s.end for s in diff)


def inside(spans: Sequence[Span], start: int, end: int) -> tuple[Span, ...]:
    return tuple(sorted(s for s in spans if start <= s.start and s.end <= end))


def _restricted(spans: Iterable[Span], start: int, end: int) -> frozenset:
    """The entities touching ``[start, end)``: what a tagging says about that region."""
    return frozenset(s for s in spans if s.start < end and s.end > start)


@dataclass(frozen=True)
class SentenceView:
    """What the model says about one sentence: its candidates (entity lists, most probable
    first) with their log-probabilities, and gold's log-probability (``None``: gold holds a
    type the model does not know: ``unknown`` names them)."""

    words: Sequence[str]
    gold: Sequence[Span]
    candidates: Sequence[Sequence[Span]]
    logprobs: np.ndarray
    gold_logprob: float | None
    unknown: tuple[str, ...] = ()


def _pool(view: SentenceView) -> tuple[list[frozenset], np.ndarray, int | None]:
    """The candidates and gold as sets of entities with their log-probabilities, gold added when
    the list lacks it; and gold's place in the pool (``None``: gold cannot be scored)."""
    sets = [frozenset(c) for c in view.candidates]
    lps = [float(x) for x in view.logprobs]
    gold = frozenset(view.gold)
    if gold in sets:
        k = sets.index(gold)
        if view.gold_logprob is not None:
            lps[k] = view.gold_logprob  # exact either way; forced decoding has no beam
        return sets, np.array(lps), k
    if view.gold_logprob is None:
        return sets, np.array(lps), None
    return [*sets, gold], np.array([*lps, view.gold_logprob]), len(sets)


def _shares(lps: np.ndarray) -> np.ndarray:
    w = np.exp(lps - lps.max())
    return w / w.sum()


#: the measures the benchmark compares; ``ratio`` is the one find_suspects uses
MEASURES = ("ratio", "mass", "region")


def judge(k: int, view: SentenceView, measure: str = "ratio") -> Suspect:
    """Sentence ``k``'s :class:`Suspect` under ``measure`` (see the module docstring and
    :data:`MEASURES`)."""
    sets, lps, g = _pool(view)
    gold = frozenset(view.gold)
    alt = next((j for j in range(len(sets)) if sets[j] != gold), None)
    if alt is None:  # the model sees nothing but gold
        return Suspect(k, -math.inf, 0, 0, (), (), "the model proposes nothing but gold")
    sugg = sorted(sets[alt])
    start, end = region(view.gold, sugg)
    gold_in, sugg_in = inside(view.gold, start, end), inside(sugg, start, end)
    w = _shares(lps)
    here_gold = _restricted(view.gold, start, end)
    here_sugg = _restricted(sugg, start, end)
    p_gold_here = float(
        sum(w[j] for j in range(len(sets)) if _restricted(sets[j], start, end) == here_gold)
    )
    p_sugg_here = float(
        sum(w[j] for j in range(len(sets)) if _restricted(sets[j], start, end) == here_sugg)
    )
    if g is None:
        score = math.inf
    elif measure == "ratio":
        score = float(lps[alt] - lps[g])
    elif measure == "mass":
        score = 1.0 - float(w[g])
    elif measure == "region":
        score = math.log(max(p_sugg_here, 1e-300)) - math.log(max(p_gold_here, 1e-300))
    else:
        raise ValueError(f"unknown measure {measure!r}")
    text = _evidence(view, gold_in, sugg_in, p_gold_here, p_sugg_here, lps, alt, g)
    return Suspect(k, round(score, 4), start, end, gold_in, sugg_in, text)


def describe(spans: Sequence[Span], words: Sequence[str]) -> str:
    """Entities in words: ``ORG 'Leeds United', LOC 'Yorkshire'``; ``no entity`` for none."""
    if not spans:
        return "no entity"
    return ", ".join(f"{s.label} '{s.text(words)}'" for s in spans)


def _percent(p: float) -> str:
    if p >= 0.995:
        return "over 99%" if p < 1 else "all"
    if p < 0.005:
        return "under 1%" if p > 0 else "none"
    return f"{100 * p:.0f}%"


def _evidence(view, gold_in, sugg_in, p_gold, p_sugg, lps, alt, g) -> str:
    """One sentence for the annotator: what the model prefers here, and how strongly."""
    words = view.words
    if g is None:
        types = ", ".join(view.unknown)
        return f"the model knows no type {types}; it proposes {describe(sugg_in, words)} here"
    head = (
        f"the model puts {_percent(p_sugg)} of its belief on {describe(sugg_in, words)} "
        f"(gold: {describe(gold_in, words)}, {_percent(p_gold)})"
    )
    ratio = float(lps[alt] - lps[g])
    if ratio > 0:
        times = math.exp(min(ratio, 700.0))
        how = f"{times:,.0f} times" if times < 1e6 else "over a million times"
        return f"{head}; it finds its tagging {how} as probable as gold's"
    return f"{head}; the model's own best tagging is gold's"
