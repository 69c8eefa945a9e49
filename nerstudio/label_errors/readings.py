"""What a tagger reads in each sentence about its gold: where it doubts gold most, and which
single fixes it prefers.

Computed where the tagger is (in a fold's job, or beside a given model), into plain JSON-able
values that travel back with the fold's N-best list (:mod:`.views`):

``doubt``
    at the token where the model believes gold's entity type least — the type of the entity
    covering the token, or *outside* — ``−ln`` of that belief: the token's tag marginals
    (:func:`~nerstudio.tagging.maxent_probs.token_marginals`) summed by type. ``token`` is that
    token and ``beliefs`` the model's belief in each type there (outside is ``"O"``);
``fixes``
    single fixes of gold: for each candidate of the N-best list, each stretch where it differs
    from gold taken alone (gold elsewhere), with ``ln p(fixed) − ln p(gold)``, both by forced
    decoding (:func:`~nerstudio.tagging.maxent_probs.alternatives_log_probs`): how many times
    more probable the model finds the sentence with that one fix. The best few are kept, and the
    best that covers the doubted token;
``gold_logprob``
    ``ln p(gold)`` of the whole sentence.

A sentence whose gold holds a type the tagger does not know gets ``None`` for all three.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..corpus.model import Sentence, Span

KEPT_FIXES = 5  # the best fixes kept per sentence (and the best covering the doubted token)
OUTSIDE = "O"


def stretches(gold: Sequence[Span], other: Sequence[Span]) -> list[tuple[int, int]]:
    """The maximal runs of tokens where the entities of ``gold`` and ``other`` differ: each
    ``[start, end)`` covers differing entities that overlap, and no entity of either side
    crosses its ends."""
    g, o = set(gold), set(other)
    out: list[list[int]] = []
    for s in sorted((g - o) | (o - g)):
        if out and s.start < out[-1][1]:
            out[-1][1] = max(out[-1][1], s.end)
        else:
            out.append([s.start, s.end])
    return [(a, b) for a, b in out]


def fixed(gold: Sequence[Span], other: Sequence[Span], start: int, end: int) -> tuple[Span, ...]:
    """``gold`` with ``other``'s entities on ``[start, end)`` instead of its own."""
    keep = [s for s in gold if s.end <= start or s.start >= end]
    return tuple(sorted([*keep, *(s for s in other if start <= s.start and s.end <= end)]))


def type_beliefs(tagger: Any, marginals: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The entity types (``O`` first) and, per token, the model's belief in each."""
    tags = tagger.tagset_
    types = [OUTSIDE, *sorted({t.partition("-")[2] for t in tags if t != "N"})]
    of = [0 if t == "N" else types.index(t.partition("-")[2]) for t in tags]
    M = np.zeros((len(tags), len(types)))
    M[np.arange(len(tags)), of] = 1.0
    return types, marginals @ M


def gold_types(spans: Sequence[Span], n: int) -> list[str]:
    out = [OUTSIDE] * n
    for s in spans:
        out[s.start : s.end] = [s.label] * (s.end - s.start)
    return out


def read_sentence(
    tagger: Any,
    sentence: Sentence,
    candidates: Sequence[Sequence[Span]],
    static: np.ndarray,
    marginals: np.ndarray,
) -> dict:
    """One sentence's reading (see the module docstring) as a JSON-able dict."""
    from ..tagging.maxent_probs import alternatives_log_probs

    gold = tuple(sorted(sentence.spans))
    n = len(sentence.words)
    fixes: dict[tuple, tuple[int, int]] = {}
    for cand in candidates:
        for a, b in stretches(gold, cand):
            fixes.setdefault(fixed(gold, cand, a, b), (a, b))
    taggings = list(fixes)
    lps = alternatives_log_probs(tagger, sentence, [gold, *taggings], static)
    types, beliefs = type_beliefs(tagger, marginals)
    said = gold_types(gold, n)
    p_gold = beliefs[np.arange(n), [types.index(t) for t in said]]
    token = int(np.argmin(p_gold))
    listed = [
        (a, b, [list(s) for s in t if a <= s.start and s.end <= b], float(lp - lps[0]))
        for t, (a, b), lp in zip(taggings, fixes.values(), lps[1:])
    ]
    listed.sort(key=lambda f: -f[3])
    kept = listed[:KEPT_FIXES]
    covering = next((f for f in listed if f[0] <= token < f[1]), None)
    if covering is not None and covering not in kept:
        kept.append(covering)
    return {
        "gold_logprob": float(lps[0]),
        "doubt": -math.log(max(float(p_gold[token]), 1e-300)),
        "token": token,
        "beliefs": {t: round(float(p), 6) for t, p in zip(types, beliefs[token])},
        "fixes": [[a, b, spans, round(r, 6)] for a, b, spans, r in kept],
    }


def read_sentences(
    tagger: Any,
    sentences: Sequence[Sentence],
    candidates: Sequence[Sequence[Sequence[Span]]],
    should_cancel: Any = None,
    progress: Any = None,
) -> list[dict | None]:
    """:func:`read_sentence` for each sentence (``None`` for one whose gold holds a type the
    tagger does not know, or that has no token); ``progress(done, total)`` now and then,
    ``should_cancel()`` polled as often (:class:`~nerstudio.errors.Cancelled`)."""
    from ..errors import Cancelled
    from ..nbest import entity_types
    from ..tagging.maxent_probs import token_marginals

    known = set(entity_types(tagger.list_tagset_))
    keep = [
        k for k, s in enumerate(sentences) if len(s.words) and {sp.label for sp in s.spans} <= known
    ]
    out: list[dict | None] = [None] * len(sentences)
    if not keep:
        return out
    static = tagger.static_scores([sentences[k] for k in keep])
    marginals = token_marginals(tagger, [sentences[k] for k in keep], static)
    pos = 0
    for j, k in enumerate(keep):
        if j % 200 == 0:
            if should_cancel is not None and should_cancel():
                raise Cancelled("cancelled")
            if progress is not None:
                progress(j, len(keep))
        m = len(sentences[k].words)
        out[k] = read_sentence(
            tagger, sentences[k], candidates[k], static[pos : pos + m], marginals[j]
        )
        pos += m
    if progress is not None:
        progress(len(keep), len(keep))
    return out
