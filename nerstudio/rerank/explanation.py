"""The one order of an explanation's terms, and the "why" sentence that reads it out.

The feature panel lists the terms of a score (or of a difference of two scores) grouped by
template, groups by |sum of their contributions|, features by |contribution|; the sentence that
answers "why does the reranker prefer A to B?" must name the same things in the same order, or
it contradicts the table under it. Both take their order from here: :func:`rank_terms` and
:func:`group_terms` for the table, :func:`why_sentence` for the sentence, which names the top
rows of that order in words (:mod:`.glossary`), each with the candidate it favours.

A *term* is anything with ``name``, ``template`` and ``contribution`` attributes (the core's
:class:`~nerstudio.rerank.model.Term`, the GUI's rows). Qt-free.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from ..numfmt import num
from .glossary import describe_template, feature_value


@dataclass
class Group:
    template: str
    terms: list  # ranked by rank_terms
    total: float  # sum of the terms' contributions


def rank_terms(terms: Sequence) -> list:
    """Largest |contribution| first; ties by name (a stable, readable order)."""
    return sorted(terms, key=lambda t: (-abs(t.contribution), t.name))


def group_terms(terms: Sequence) -> list[Group]:
    """Terms by template: groups by largest |total| first (ties by template code), each group's
    terms ranked by :func:`rank_terms`."""
    by: dict[str, list] = {}
    for t in rank_terms(terms):
        by.setdefault(t.template, []).append(t)
    groups = [Group(k, v, float(sum(t.contribution for t in v))) for k, v in by.items()]
    groups.sort(key=lambda g: (-abs(g.total), g.template))
    return groups


def _code(template: str) -> str:
    return "L" if template in ("L", "L(x)") else template


def _what(template: str) -> str:
    """A template as words plus its code in brackets: "word before the entity + … (BO01)"."""
    code = _code(template)
    words = describe_template(code)
    return f"{words} ({'L(x)' if code == 'L' else code})"


def why_sentence(
    terms: Sequence,
    delta: float,
    a: str,
    b: str,
    grouped: bool = True,
    top: int = 2,
    rich: bool = True,
    breakdown: Sequence[tuple[str, float]] | None = None,
    who: str = "the reranker",
) -> str:
    """The answer to "why does the reranker prefer one of A and B?".

    ``terms`` are the terms of F(A) − F(B) (contribution > 0 favours A), ``delta`` that
    difference, ``a``/``b`` the names of the candidates ("candidate 3"). The sentence names the
    ``top`` first rows of the table's own order — template groups when ``grouped``, features
    otherwise — in words, each with its share of the difference and the candidate it favours.
    ``rich`` adds HTML emphasis (the feature panel's header); otherwise plain text.
    ``breakdown`` splits the difference into named parts, ``[(what, amount), …]`` (a joint
    tagger's local and non-local scores, only the latter listed): the sentence states them next
    to it. ``who`` is the model.
    """

    def em(s):
        return f"<b>{s}</b>" if rich else s

    def esc(s):
        return html.escape(s) if rich else s

    a, b = esc(a), esc(b)
    winner, loser = (a, b) if delta >= 0 else (b, a)
    if delta == 0:
        head = f"{who[:1].upper()}{who[1:]} scores {a} and {b} the same (score A − B = {num(0.0)}"
    else:
        head = f"{who[:1].upper()}{who[1:]} prefers {winner} to {loser} (score A − B = {em(num(delta, sign=True))}"
    if breakdown:
        head += " = " + " + ".join(f"{esc(k)} {num(v, sign=True)}" for k, v in breakdown)
    head += ")"
    parts = []
    if grouped:
        for g in group_terms(terms)[:top]:
            if g.total == 0:
                break
            n = len(g.terms)
            count = f", {n} features" if n > 1 else ""
            side = a if g.total > 0 else b
            parts.append(f"{esc(_what(g.template))}{count}: {num(g.total, sign=True)}, for {side}")
    else:
        for t in rank_terms(terms)[:top]:
            if t.contribution == 0:
                break
            value = feature_value(t.name) if _code(t.template) != "L" else ""
            shown = f" “{esc(value)}”" if value else ""
            side = a if t.contribution > 0 else b
            parts.append(
                f"{esc(_what(t.template))}{shown}: {num(t.contribution, sign=True)}, for {side}"
            )
    if not parts:
        return head + "; no feature separates them."
    return head + ". What moves the difference most: " + "; ".join(parts) + "."
