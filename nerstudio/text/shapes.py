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
from collections.abc import Sequence

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


_TYPE_WORDS = {"A": "capitals", "a": "lower case", "0": "digits"}
_WHOLE = {
    "A": "all capitals",
    "a": "lower case",
    "0": "a number",
    "Aa": "capitalised",
    "aA": "lower case, then capitals",
    "0a": "digits, then lower case",
    "A0": "capitals, then digits",
}


def describe_shape(code: str, flagged: bool = True) -> str:
    """A collapsed shape in words: ``Aa1`` → ``capitalised; a word usually written in lower case``,
    ``A.A.0`` → ``capitals “.” capitals “.”``, ``0-0-0`` (bare) → ``digits “-” digits “-” digits``.
    ``flagged``: the code ends with the lowercase-lexicon digit (a *shape*, not a *bare shape*);
    ``NULL`` is outside the sentence."""
    if code == "NULL":
        return "none (outside the sentence)"
    flag = ""
    if flagged and len(code) >= 2 and code[-1] in "01":
        code, bit = code[:-1], code[-1]
        flag = "; a word usually written in lower case" if bit == "1" else ""
    if code in _WHOLE:
        return _WHOLE[code] + flag
    parts = [_TYPE_WORDS.get(c, f"“{c}”") for c in code]
    return " ".join(parts) + flag
