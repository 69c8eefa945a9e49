"""The entity types of the open corpus: their order, keys and colours, in one Qt-free place.

The legend, the sentence view, the corpus browser, the Edit menu and the context menu all ask
:func:`document_types` (or a :class:`TypeScheme` built from the same labels), so they agree.

* **Which types, in which order**: the corpus's own labels in the fixed order of their set
  (:mod:`~nerstudio.app.label_keys`: a CoNLL subset is always PER ORG LOC MISC, all four offered;
  a WNUT corpus gets its own six; another set the order remembered for it), whatever the file's
  format or the order its entities come in. A type that appears later (an accepted candidate, a
  pre-annotation) is added at the end, never removed during the session: colours and keys stay
  put.
* **Keys**: each type's first letter not taken by an earlier type (``""``, untyped entities,
  counts as "entity"); digits 1–9 by position.
* **Colours**: a fixed qualitative palette of 12 colours chosen to be told apart (pairwise
  CIE76 distance ≥ 25). The CoNLL types keep their colours (PER blue, ORG orange, LOC green, MISC
  purple; untyped teal); the other types take the unused palette colours in type order, so the
  first 12 types get 12 distinct colours; beyond 12 the palette repeats.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from .label_keys import label_orders

if TYPE_CHECKING:
    from .document import Document

CONLL_TYPES = ("PER", "ORG", "LOC", "MISC")

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#b07aa1",
    "#76b7b2",
    "#edc948",
    "#9c755f",
    "#ff9da7",
    "#e15759",
    "#bab0ac",
    "#393b79",
    "#e7298a",
)
FIXED = {"PER": "#4e79a7", "ORG": "#f28e2b", "LOC": "#59a14f", "MISC": "#b07aa1", "": "#76b7b2"}


def type_keys(labels: Iterable[str]) -> dict[str, str]:
    """Single-letter keys (upper case) → type: each type's first letter not already taken."""
    keys: dict[str, str] = {}
    for lab in labels:
        for ch in (lab or "entity").upper():
            if ch.isalpha() and ch.isascii() and ch not in keys:
                keys[ch] = lab
                break
    return keys


def _assign_colours(labels: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for lab in labels:
        if lab in FIXED:
            out[lab] = FIXED[lab]
    free = [c for c in PALETTE if c not in out.values()]
    k = 0
    for lab in labels:
        if lab not in out:
            out[lab] = free[k] if k < len(free) else PALETTE[(k - len(free)) % len(PALETTE)]
            k += 1
    return out


@dataclass(frozen=True)
class TypeScheme:
    """Types in order, with their keys and colours (hex strings)."""

    labels: tuple[str, ...]
    keys: dict[str, str] = field(compare=False)  # letter → type
    colours: dict[str, str] = field(compare=False)  # type → "#rrggbb"

    @staticmethod
    def of(labels: Iterable[str]) -> TypeScheme:
        return _scheme(tuple(dict.fromkeys(labels)))

    def letter(self, label: str) -> str | None:
        """The letter key of a type (None: it has none)."""
        return next((k for k, lab in self.keys.items() if lab == label), None)

    def digit(self, label: str) -> str | None:
        """The digit key of a type (1–9 by position; None after the ninth)."""
        i = self.labels.index(label) if label in self.labels else -1
        return str(i + 1) if 0 <= i < 9 else None

    def type_for_key(self, ch: str) -> str | None:
        """The type a typed character sets (a letter of either case, or a digit 1–9)."""
        if not ch:
            return None
        if ch.isdigit() and len(ch) == 1 and 1 <= int(ch) <= min(9, len(self.labels)):
            return self.labels[int(ch) - 1]
        return self.keys.get(ch.upper())

    def colour(self, label: str) -> str:
        """The type's colour; a label outside the scheme (e.g. from another list) gets a stable one."""
        c = self.colours.get(label)
        if c is not None:
            return c
        if label.upper() in FIXED:
            return FIXED[label.upper()]
        return PALETTE[zlib.crc32(label.encode("utf-8")) % len(PALETTE)]


@lru_cache(maxsize=32)
def _scheme(labels: tuple[str, ...]) -> TypeScheme:
    return TypeScheme(labels, type_keys(labels), _assign_colours(labels))


def corpus_types(labels: Iterable[str]) -> tuple[str, ...]:
    """The types offered for a corpus with these labels (in this order); see the module doc."""
    labels = list(dict.fromkeys(labels))
    if not labels or all(lab in CONLL_TYPES for lab in labels):
        return tuple(labels + [t for t in CONLL_TYPES if t not in labels])
    return tuple(labels)


_IN_USE: WeakKeyDictionary = WeakKeyDictionary()  # document → (its corpus, the order in use)


def document_types(document: Document) -> TypeScheme:
    """The type scheme of a :class:`~nerstudio.app.document.Document`'s corpus: its labels (those of
    ``Document.type_masks``, none removed during the session) in the fixed order of their set;
    a type that appears during the session is appended to the order in use."""
    if document.corpus is None:
        return TypeScheme.of(CONLL_TYPES)
    corpus, current = _IN_USE.get(document, (None, None))
    order = label_orders().order(
        document.type_masks, current if corpus is document.corpus else None
    )
    _IN_USE[document] = (document.corpus, order)
    return TypeScheme.of(order)
