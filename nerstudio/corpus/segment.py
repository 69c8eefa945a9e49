"""Running text cut into sentences and tokens, each token with its exact character offsets.

Plain text and brat's ``.txt`` files reach nerstudio as running text; the tagger wants sentences
of tokens, and every span must map back to the characters it came from. This module is that one
step, shared by every reader of running text.

**Why syntok.** The candidates were syntok, pysbd, blingfire, NLTK's punkt and segtok. syntok
(MIT, pure Python, ~70 kB, one dependency: ``regex``) is the only one that does both sentence
splitting *and* tokenisation while reporting each token's offset in the input
(``syntok.segmenter.analyze``), so offsets never have to be re-found by searching the text;
it reads about 350,000 characters a second here (this project's README, five times: 1.1 s). pysbd
(MIT) splits sentences only (with ``char_span``) and is several times slower; blingfire ships a
native library and has not been released since 2021; punkt needs NLTK (megabytes) and a model
downloaded at run time, which this project cannot do; segtok is syntok's unmaintained
predecessor and gives no offsets. syntok's last release is 2022, but its rules are stable and the
tests below check every property nerstudio relies on, so a change would be seen.

What nerstudio adds on top of syntok:

* a dot that syntok splits off inside a sentence (``Mr`` ``.`` ``Smith``, ``U.S.A`` ``.`` ``at``)
  is glued back to its word when a word follows, as CoNLL corpora write them (``Mr.``,
  ``U.S.A.``); a dot that ends a sentence stays a token of its own;
* words joined by inner hyphens, which syntok splits (``mother`` ``-`` ``in`` ``-`` ``law``), are
  one token again (``mother-in-law``, ``Smith-Jones``), and so are names with an elided article
  (``O`` ``'Neill`` gives ``O'Neill``, ``D'Alema``), and so are words with a capital inside,
  which syntok cuts before it (``Mc`` ``Donald`` gives ``McDonald``, ``iPhone``, ``eBay``), as
  CoNLL corpora write them, while clitics stay apart (``John`` ``'s``, ``do`` ``n't``: CoNLL-2003
  has ``'s`` as a token of its own); the taggers are trained on such tokens;
* sentences never cross a blank line (syntok's paragraphs), and every non-whitespace character
  of the text belongs to exactly one token (checked by the tests, including tabs, CRLF line ends,
  non-ASCII letters and symbols);
* ``cuts``: character positions where a token must end (entity boundaries inside a word, as
  ``Obama's`` with an entity over ``Obama``): the token is split there, as nerstudio's JSONL does.

Offsets are plain ``(start, end)`` pairs with ``text[start:end] == token``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

_CLOSING = set(".!?")


def _syntok_sentences(text: str) -> list[list[tuple[int, int]]]:
    from syntok.segmenter import analyze  # imported on first use: start-up stays fast

    out = []
    for paragraph in analyze(text):
        for sentence in paragraph:
            spans = []
            for tok in sentence:
                if not tok.value:
                    continue
                spans.append((tok.offset, tok.offset + len(tok.value)))
            if spans:
                out.append(spans)
    return out


def _glue_dots(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``Mr`` ``.`` followed by a word in the same sentence becomes ``Mr.``."""
    out: list[tuple[int, int]] = []
    n = len(spans)
    for i, (a, b) in enumerate(spans):
        if (
            out
            and text[a:b] == "."
            and i + 1 < n
            and out[-1][1] == a
            and text[out[-1][0] : a][-1:].isalnum()
            and text[spans[i + 1][0]].isalnum()
        ):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


_APOSTROPHES = "'\u2019"


def _glue_joins(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``mother`` ``-`` ``in`` ``-`` ``law`` (no spaces) becomes ``mother-in-law``; ``O``
    ``'Neill`` becomes ``O'Neill``; ``Mc`` ``Donald`` becomes ``McDonald``."""
    out: list[tuple[int, int]] = []
    n, i = len(spans), 0
    while i < n:
        a, b = spans[i]
        if (
            out
            and text[a:b] == "-"
            and i + 1 < n
            and out[-1][1] == a
            and spans[i + 1][0] == b
            and text[a - 1].isalnum()
            and text[b].isalnum()
        ):
            out[-1] = (out[-1][0], spans[i + 1][1])  # word-word: the hyphen and the next word join
            i += 2
            continue
        if (
            out
            and out[-1][1] == a
            and b - a > 2
            and text[a] in _APOSTROPHES
            and text[a + 1].isupper()
            and text[a + 1 : b].isalpha()
            and out[-1][1] - out[-1][0] == 1
            and text[a - 1].isalpha()
        ):
            # O'Neill, D'Alema: a one-letter article and a capitalised name
            out[-1] = (
                out[-1][0],
                b,
            )
        elif (
            out
            and out[-1][1] == a
            and text[a - 1].isalpha()
            and text[a].isupper()
            and text[a:b].isalnum()
        ):
            out[-1] = (out[-1][0], b)  # McDonald, iPhone, eBay: syntok cuts before the capital
        else:
            out.append((a, b))
        i += 1
    return out


def _fill(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Whitespace-separated pieces of ``text[start:end]`` (characters syntok left out)."""
    out, i = [], start
    while i < end:
        while i < end and text[i].isspace():
            i += 1
        j = i
        while j < end and not text[j].isspace():
            j += 1
        if j > i:
            out.append((i, j))
        i = j
    return out


def _cover(text: str, sentences: list[list[tuple[int, int]]]) -> list[list[tuple[int, int]]]:
    """Make sure no visible character is left out: any gap holding one becomes tokens of the
    sentence it touches (syntok covers all of them in practice; this is the guarantee)."""
    out: list[list[tuple[int, int]]] = []
    pos = 0
    for sent in sentences:
        fixed: list[tuple[int, int]] = []
        for a, b in sent:
            if a < pos:  # never overlap an earlier token
                a = pos
                if a >= b:
                    continue
            fixed.extend(_fill(text, pos, a))
            fixed.append((a, b))
            pos = b
        if fixed:
            out.append(fixed)
    tail = _fill(text, pos, len(text))
    if tail:
        if out:
            out[-1].extend(tail)
        else:
            out.append(tail)
    return out


def _cut(spans: list[tuple[int, int]], cuts: list[int]) -> list[tuple[int, int]]:
    if not cuts:
        return spans
    out = []
    for a, b in spans:
        i = bisect.bisect_right(cuts, a)
        while i < len(cuts) and cuts[i] < b:
            out.append((a, cuts[i]))
            a = cuts[i]
            i += 1
        out.append((a, b))
    return out


def split(
    text: str, cuts: Iterable[int] = (), merge: Iterable[tuple[int, int]] = ()
) -> list[list[tuple[int, int]]]:
    """Sentences of ``text``, each a list of token ``(start, end)`` offsets.

    ``cuts``: positions where a token must be split (entity boundaries inside words).
    ``merge``: character ranges (entities) that must not be cut by a sentence break; two
    sentences are joined when such a range crosses from one into the next.
    """
    sentences = _cover(text, _syntok_sentences(text))
    sentences = [_glue_joins(text, _glue_dots(text, s)) for s in sentences]
    cut_list = sorted(set(cuts))
    sentences = [_cut(s, cut_list) for s in sentences]
    ranges = sorted((a, e) for a, e in merge if e - a > 1)
    if ranges:
        # sentences come in text order: one sweep over the ranges by start, keeping the furthest
        # end of those that start before the sentence (linear, not sentences × ranges)
        joined: list[list[tuple[int, int]]] = []
        k, reach = 0, -1
        for s in sentences:
            first = s[0][0]
            while k < len(ranges) and ranges[k][0] < first:
                reach = max(reach, ranges[k][1])
                k += 1
            if joined and reach > first:  # an entity crosses the break
                joined[-1].extend(s)
            else:
                joined.append(list(s))
        sentences = joined
    return sentences


def tokens(text: str, cuts: Iterable[int] = ()) -> list[tuple[int, int]]:
    """Every token of ``text`` (all sentences), as offsets; ``cuts`` as for :func:`split`."""
    return [t for s in split(text, cuts) for t in s]
