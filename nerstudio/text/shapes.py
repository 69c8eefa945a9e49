"""Word shapes and the lowercase lexicon: how a word looks, for the taggers and the rerankers alike.

Collins (2002) describes words by their character types (``G.M.`` → ``A.A.``), the same types
with runs collapsed (``Animal`` → ``Aa``) and whether a word is more often seen lower-cased; the
max-ent tagger's templates (:mod:`nerstudio.tagging.features`) and the global features of the
rerankers (:mod:`nerstudio.rerank.features`) use the same definitions, so they live here, below
both.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

from ..corpus.model import Sentence


def char_type(c: str) -> str:
    if c.isupper():
        return "A"
    if c.islower():
        return "a"
    if c.isdigit():
        return "0"
    return c


def shape(word: str) -> str:
    """Full character-type mapping: ``G.M.`` → ``A.A.``, ``Animal`` → ``Aaaaaa``."""
    return "".join(char_type(c) for c in word)


def collapsed_shape(word: str) -> str:
    """Character types with runs collapsed: ``Animal`` → ``Aa``, ``1996-08-30`` → ``0-0-0``."""
    out: list[str] = []
    for c in word:
        t = char_type(c)
        if not out or out[-1] != t:
            out.append(t)
    return "".join(out)


_ASCII_TYPES = str.maketrans({c: char_type(c) for c in map(chr, range(128)) if char_type(c) != c})
_RUNS = re.compile(r"(.)\1+", re.DOTALL)


def fast_shape(word: str) -> str:
    """:func:`shape`, by a translation table for ASCII words."""
    return word.translate(_ASCII_TYPES) if word.isascii() else shape(word)


def fast_collapsed_shape(word: str) -> str:
    """:func:`collapsed_shape`: runs of one type are runs of one character in the shape (a
    character that is its own type is neither a letter nor a digit)."""
    return _RUNS.sub(r"\1", fast_shape(word))


def first_char_type(word: str) -> str:
    return char_type(word[0]) if word else "_"


def build_lexicon(sentences: Sequence[Sentence] | Sequence[Sequence[str]]) -> set[str]:
    """The lowercase lexicon: words seen more often lower-cased than capitalised.

    Sentence-initial occurrences are not counted (their capital says nothing). Keys are
    lower-cased words.
    """
    lower: Counter = Counter()
    upper: Counter = Counter()
    for s in sentences:
        words = s.words if isinstance(s, Sentence) else s
        for w in words[1:]:
            if not w or not w[0].isalpha():
                continue
            if w[0].islower():
                lower[w.lower()] += 1
            else:
                upper[w.lower()] += 1
    return {w for w, n in lower.items() if n > upper.get(w, 0)}
