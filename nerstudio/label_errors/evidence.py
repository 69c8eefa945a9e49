"""How suspect one sentence's gold annotation is, given a model that never trained on it.

What the model reads in the sentence (:mod:`.readings`) gives two kinds of evidence, both in
natural-log units ("nats"):

*doubt*
    at the token where the model believes gold least, ``−ln`` of its belief that the token has
    the entity type gold gives it (or is outside every entity, if gold says so): 4.6 means the
    model gives gold's type there 1%. Summed over all taggings, so a model torn between two
    boundaries of an entity still believes in its type on the tokens both include.
*fix*
    the best single fix of gold the model proposes — one stretch of tokens re-annotated as in one
    of its N best taggings, gold elsewhere — and ``ln p(fixed) − ln p(gold)``: how many times more
    probable the model finds the sentence with that fix (forced decoding of both). The fix shown
    is the best one covering the doubted token, else the best one.

The score is ``doubt + ½ · min(max(fix, 0), doubt)``: the doubt ranks; a fix the model prefers
to gold adds half its strength, but never more than half the doubt, so it moves sentences with a
clear correction ahead of equally doubted ones without raising a sentence whose types the model
believes (with a model trained on less data, its exact taggings are the less reliable part). The other measures of
:data:`MEASURES` are what the benchmark (``bench/suspects.py``, docs/benchmarks.md) compared it
with: the doubt alone (what cleanlab computes from token probabilities), the fix alone, and the
whole sentence's ratio (its best tagging against gold). The suspect's *region* is the fix's
stretch; its gold and suggested entities are both sides' entities there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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


def inside(spans: Sequence[Span], start: int, end: int) -> tuple[Span, ...]:
    return tuple(sorted(s for s in spans if start <= s.start and s.end <= end))


@dataclass(frozen=True)
class SentenceView:
    """What the model says about one sentence: its candidates (entity lists, most probable
    first) with their log-probabilities, and its reading of gold (:mod:`.readings`; ``None``
    for a sentence without tokens, or whose gold holds a type the model does not know: then
    ``unknown`` names them)."""

    words: Sequence[str]
    gold: Sequence[Span]
    candidates: Sequence[Sequence[Span]]
    logprobs: np.ndarray
    reading: dict | None
    unknown: tuple[str, ...] = ()


#: the measures the benchmark compares; the first is the one find_suspects uses
MEASURES = ("combined", "doubt", "fix", "ratio")
FIX_WEIGHT = 0.5  # of the fix's strength in the combined score (bench/suspects.py chose it)


def _chosen_fix(reading: dict) -> list | None:
    """The fix covering the doubted token, else the best (``[start, end, spans, ratio]``)."""
    fixes = reading["fixes"]
    token = reading["token"]
    return next((f for f in fixes if f[0] <= token < f[1]), fixes[0] if fixes else None)


def judge(k: int, view: SentenceView, measure: str = MEASURES[0]) -> Suspect:
    """Sentence ``k``'s :class:`Suspect` under ``measure`` (see the module docstring)."""
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}")
    r = view.reading
    if r is None:
        if view.unknown:
            sugg = tuple(view.candidates[0]) if view.candidates else ()
            start, end = _cover([*view.gold, *sugg])
            return Suspect(
                k,
                math.inf,
                start,
                end,
                inside(view.gold, start, end),
                inside(sugg, start, end),
                f"the model knows no type {', '.join(view.unknown)}; it proposes "
                f"{describe(inside(sugg, start, end), view.words)} here",
            )
        return Suspect(k, -math.inf, 0, 0, (), (), "nothing to doubt: the sentence has no token")
    fix = _chosen_fix(r)
    ratio = fix[3] if fix is not None else -math.inf
    if measure == "combined":
        score = r["doubt"] + FIX_WEIGHT * min(max(ratio, 0.0), r["doubt"])
    elif measure == "doubt":
        score = r["doubt"]
    elif measure == "fix":
        score = max((f[3] for f in r["fixes"]), default=-math.inf)
    else:
        top = float(view.logprobs[0]) if len(view.logprobs) else r["gold_logprob"]
        score = top - r["gold_logprob"]
    if fix is None:
        return Suspect(
            k,
            round(score, 4),
            0,
            0,
            (),
            (),
            _doubt_words(view, r) + "; it proposes nothing but gold",
        )
    start, end = fix[0], fix[1]
    gold_in = inside(view.gold, start, end)
    sugg_in = tuple(sorted(Span(a, b, t) for a, b, t in fix[2]))
    text = f"{_doubt_words(view, r)}; {_fix_words(view.words, gold_in, sugg_in, ratio)}"
    return Suspect(k, round(score, 4), start, end, gold_in, sugg_in, text)


def _cover(spans: Sequence[Span]) -> tuple[int, int]:
    return (min(s.start for s in spans), max(s.end for s in spans)) if spans else (0, 0)


def describe(spans: Sequence[Span], words: Sequence[str]) -> str:
    """Entities in words: ``ORG 'Leeds United', LOC 'Yorkshire'``; ``no entity`` for none."""
    if not spans:
        return "no entity"
    return ", ".join(f"{s.label} '{s.text(words)}'" for s in spans)


def percent(p: float) -> str:
    if p >= 0.995:
        return "over 99%" if p < 1 else "100%"
    if p < 0.005:
        return "under 1%" if p > 0 else "0%"
    return f"{100 * p:.0f}%"


def _type_words(t: str) -> str:
    return "outside any entity" if t == "O" else t


def _doubt_words(view: SentenceView, r: dict) -> str:
    """Where the model doubts gold most: the token, gold's type there, and what it believes."""
    token = r["token"]
    said = next((s.label for s in view.gold if s.start <= token < s.end), "O")
    beliefs = r["beliefs"]
    best = max(beliefs, key=lambda t: beliefs[t])
    head = (
        f"the model believes '{view.words[token]}' is {_type_words(said)} at "
        f"{percent(math.exp(-r['doubt']))}"
    )
    if best == said:
        return head
    return f"{head} ({_type_words(best)}: {percent(beliefs[best])})"


def _fix_words(words: Sequence[str], gold_in, sugg_in, ratio: float) -> str:
    change = f"{describe(gold_in, words)} → {describe(sugg_in, words)}"
    if ratio <= 0:
        return f"its best fix, {change}, is no more probable than gold"
    times = math.exp(min(ratio, 700.0))
    how = f"{times:,.0f} times" if times < 1e6 else "over a million times"
    return f"the fix {change} makes the sentence {how} as probable"
