"""Feature templates in words: one table from template code to a plain one-line description.

Reranker features have terse names (``BO01=said Aa1``, ``TO2110:ORG=…``, ``MJT:PER~ORG``) that a
linguist should not have to decode. :data:`GLOSSARY` maps every template code the feature
extractors can emit — the global features of :mod:`nerstudio.rerank.features` (Collins 2002,
Figure 1), the L(x) term, the kernel perceptron's terms and the non-local families of
:mod:`nerstudio.text.nonlocal_features` (Kazama & Torisawa 2007) — to one line;
:func:`describe` turns any full feature string into ``"CODE: description"`` (with the entity type
of a typed feature and the labels of a non-local one). The feature panel's tooltips and group
headers, the "why" sentence and ``nerstudio explain-model`` all read this one table.

Words used in the descriptions (:data:`LEGEND`): a word's *shape* is its character types with
runs collapsed and a final 1 or 0 — whether the word is usually written in lower case in the
training text (``Aa1``, ``A.A.0``, ``0-0-00``); its *bare shape* is the same without that flag
(``Aa``). The 32 TO/TO2/TE/TE2 variants and the 8 BO/BE variants differ only in which of their
words are given as the word itself (digit 0) or as its shape (digit 1), in order.
"""

from __future__ import annotations

import itertools
import re

from ..text.shapes import describe_shape

LEGEND = (
    "shape = the word's character types with runs collapsed, then 1 if the word is usually written in "
    "lower case (Aa1, A.A.0); bare shape = the same without the final flag (Aa)"
)

FALLBACK = "no description (unknown template)"

# Positions of the windowed templates: (text once the entity has been named, text before).
_POSITIONS = {
    "s-2": ("the word 2 before the entity", "the word 2 before the entity"),
    "s-1": ("the word before the entity", "the word before the entity"),
    "s": ("its first word", "the entity's first word"),
    "s+1": ("the word after its first word", "the word after the entity's first word"),
    "e-2": ("the word 2 before its last word", "the word 2 before the entity's last word"),
    "e-1": ("the word before its last word", "the word before the entity's last word"),
    "e": ("its last word", "the entity's last word"),
    "e+1": ("the word after the entity", "the word after the entity"),
}
_WINDOWS = {
    "BO": ("s-1", "s"),
    "BE": ("e", "e+1"),
    "TO": ("s-2", "s-1", "s"),
    "TO2": ("s-1", "s", "s+1"),
    "TE": ("e-1", "e", "e+1"),
    "TE2": ("e-2", "e-1", "e"),
}


def _window_text(positions: tuple[str, ...], bits: tuple[int, ...]) -> str:
    """``("s-1", "s"), (0, 1)`` → ``"word before the entity + shape of its first word"``."""
    parts, named = [], False
    for pos, bit in zip(positions, bits):
        after, before = _POSITIONS[pos]
        text = after if named else before
        named = named or "entity" in text
        if bit:
            parts.append("shape of " + text)
        else:  # "word before the entity", not "the word before the entity"
            parts.append(text[4:] if text.startswith("the word") else text)
    return " + ".join(parts)


def _windowed() -> dict[str, str]:
    out = {}
    for prefix, positions in _WINDOWS.items():
        for bits in itertools.product((0, 1), repeat=len(positions)):
            out[prefix + "".join(map(str, bits))] = _window_text(positions, bits)
    return out


GLOSSARY: dict[str, str] = {
    # the candidate's log-probability and the kernel perceptron's terms
    "L": "the tagger's log-probability of the whole candidate",
    "K": "kernel perceptron: how much one stored training mistake adds to the score",
    # entity-anchored global features (Collins 2002, Figure 1), one per entity of the candidate
    "WE": "the entity's words",
    "FF": "bare shapes of the entity's words",
    "GF": "shapes of the entity's words",
    "LW": "the entity's last word",
    "LWLC": "whether the entity's last word begins with a lower-case letter",
    **_windowed(),
    "PF": "bare shapes of the entity's first words (one feature per prefix length)",
    "PF2": "shapes of the entity's first words (one feature per prefix length)",
    "SF": "bare shapes of the entity's last words, last first (one feature per suffix length)",
    "SF2": "shapes of the entity's last words, last first (one feature per suffix length)",
    # the bundled gazetteers (nerstudio.resources), one feature per list
    "GZ": "the entity's words are an entry of this gazetteer list",
    "GZF": "the entity's first word alone is an entry of this gazetteer list",
    "GZL": "the entity's last word alone is an entry of this gazetteer list",
    # Brown clusters of the entity's words (nerstudio.resources.clusters), one family per prefix length
    **{
        f"BC{b}": f"the Brown word clusters of the entity's words, each cut to its first {b} branchings "
        "(words used alike in a large corpus share them)"
        for b in (4, 10)
    },
    **{
        f"BCL{b}": f"the Brown word cluster of the entity's last word, cut to its first {b} branchings"
        for b in (4, 10)
    },
    # document context from the tagger's own best candidates (nerstudio.rerank.context)
    "DC": "the label the tagger gives the same words most often elsewhere in the document",
    "CC": "the label the tagger gives the same words most often in the other documents",
    # the tagger's confidence in one entity: its N-best list's probability mass on it
    "EP": "how much of the tagger's N-best list (its candidates' probabilities, summed) holds this "
    "entity with this type, in tenths",
    "ES": "how much of the tagger's N-best list holds these words as an entity of any type, in tenths",
    # quote-anchored global features
    "Q": "a short quotation: shape and tag of every word, quotes included",
    "Q2": "a short quotation with one word on each side: shape and tag of every word",
    "QF": "a quotation: is it tagged as exactly one entity, its capitalised and lower-case word counts, "
    "shapes of its first and last words",
    "QF2": "a quotation: is it tagged as exactly one entity, are most of its words capitalised, "
    "shapes of its first and last words",
    # non-local features of a document labelling (Kazama & Torisawa 2007)
    "PC": "the same phrase as an entity twice in the document (or as an entity and left unlabelled: ~O), "
    "with both labels",
    "SP": "an entity whose words are part of a longer entity elsewhere in the document, with both labels",
    "MJ": "an entity's label with the label most often given to the same phrase elsewhere in the document",
    "MJS": "an entity's label with the label most often given to the longer entities that contain its words",
    "MJT": "an entity's label with the label most often given to the same word inside other entities",
    "CJ": "two entities joined by a comma, 'and' or 'or' (\"U.S., EU, and Japan\"), with both labels",
}


def template_code(name: str) -> str:
    """The template code of a feature string: ``WE:ORG=Acme Corp`` → ``WE``, ``MJT:PER~ORG`` →
    ``MJT``, ``PC=same`` → ``PC``, ``L(x)`` (and the kernel's ``β·L(x) = …``) → ``L``."""
    if name == "L(x)" or name.startswith(("L(x)", "β·L(x)")):
        return "L"
    cut = len(name)
    for sep in (":", "="):
        k = name.find(sep)
        if k >= 0:
            cut = min(cut, k)
    return name[:cut]


def describe_template(code: str) -> str:
    """The one line of a template code (``L(x)`` is accepted for ``L``); :data:`FALLBACK` if unknown.
    A cluster family of another prefix length (``BC6``, ``BCL12``) is described as the bundled ones."""
    text = GLOSSARY.get("L" if code == "L(x)" else code)
    if text is None:
        m = re.fullmatch(r"(BCL?)(\d+)", code)
        if m:
            text = GLOSSARY[m.group(1) + "4"].replace(" 4 ", f" {m.group(2)} ")
    return text or FALLBACK


def is_described(code: str) -> bool:
    return describe_template(code) != FALLBACK


def _labels(detail: str) -> str:
    """``PER~ORG`` → ``PER and ORG``; ``ORG~O`` → ``ORG and unlabelled``; ``PER<ORG`` → ``PER inside ORG``."""

    def lab(x):
        return "unlabelled" if x == "O" else (x or "entity")

    if "<" in detail:
        a, b = detail.split("<", 1)
        return f"{lab(a)} inside {lab(b)}"
    if "~" in detail:
        a, b = detail.split("~", 1)
        return f"{lab(a)} and {lab(b)}"
    return detail


def describe(name: str, template: str | None = None) -> str:
    """``"CODE: description"`` for any feature string the extractors emit.

    Typed global features say their entity type (``BO01:ORG=…`` → ``BO01 (ORG entities): …``);
    non-local features say their labels (``MJT:PER~ORG`` → ``MJT (PER and ORG): …``, ``PC=same``
    → ``PC (same labels): …``). ``template`` overrides the code read from ``name`` (the kernel
    perceptron's terms carry free text as their name).
    """
    code = template if template else template_code(name)
    if code == "L(x)":
        code = "L"
    text = describe_template(code)
    if code in ("L", "K"):
        return f"{'L(x)' if code == 'L' else code}: {text}"
    head, eq, value = name.partition("=")
    qualifier = ""
    if code in ("PC", "SP", "MJ", "MJS", "MJT", "CJ"):
        if ":" in head:
            qualifier = _labels(head.split(":", 1)[1])
        elif eq and value in ("same", "diff"):
            qualifier = "same labels" if value == "same" else "different labels"
    elif ":" in head:
        qualifier = f"{head.split(':', 1)[1]} entities"
    return f"{code} ({qualifier}): {text}" if qualifier else f"{code}: {text}"


def feature_value(name: str) -> str:
    """The value part of a feature string (``BO01=said Aa1`` → ``said Aa1``; ``''`` when none)."""
    return name.partition("=")[2]


# templates whose values are all shapes (``True``: with the lowercase flag) — one per word
_SHAPE_VALUES = {"FF": False, "PF": False, "SF": False, "GF": True, "PF2": True, "SF2": True}


def _window_of(code: str) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    for prefix in ("TO2", "TE2", "TO", "TE", "BO", "BE"):
        bits = code[len(prefix) :]
        if (
            code.startswith(prefix)
            and len(bits) == len(_WINDOWS[prefix])
            and set(bits) <= {"0", "1"}
        ):
            return _WINDOWS[prefix], tuple(int(b) for b in bits)
    return None


def decode_value(name: str) -> str:
    """The value of a feature string in words, shape codes decoded: ``TO101:LOC=A1 IN A0`` →
    ``word 2 before the entity: all capitals; usually written in lower case · word before the
    entity: “IN” · first word: all capitals``; ``GF=Aa1 Aa0`` → ``capitalised; usually … · capitalised``.
    Empty when the value has no codes to decode."""
    code = template_code(name)
    value = feature_value(name)
    if not value:
        return ""
    window = _window_of(code)
    if window is not None:
        positions, bits = window
        words = value.split(" ")
        if len(words) != len(positions):
            return ""
        parts = []
        for pos, bit, w in zip(positions, bits, words):
            where = _POSITIONS[pos][1].removeprefix("the ")
            parts.append(f"{where}: {describe_shape(w) if bit or w == 'NULL' else '“' + w + '”'}")
        return " · ".join(parts)
    if code in _SHAPE_VALUES:
        return " · ".join(describe_shape(w, _SHAPE_VALUES[code]) for w in value.split(" "))
    return ""


def explain_feature(name: str, template: str | None = None) -> str:
    """:func:`describe` and, when the value holds shape codes, the value in words (one line)."""
    text = describe(name, template)
    value = decode_value(name)
    return f"{text} — {value}" if value else text
