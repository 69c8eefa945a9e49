"""What keeps the document's state honest: attributes the outside reads and never assigns,
arrays only the document's own methods write, and the one check of every span it takes.

:class:`~nerstudio.app.document.Document` declares its state with :class:`ReadOnly` (assigning
raises AttributeError and points at its methods), keeps its per-sentence arrays
:func:`frozen` (written by :func:`write` alone), and passes every span it is given through
:func:`checked_spans` — as does a pre-annotation written straight into a corpus
(:func:`~nerstudio.app.preannotate.apply`).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any, Generic, NoReturn, TypeVar, overload

import numpy as np

from ..corpus.model import Corpus, Span

T = TypeVar("T")


class ReadOnly(Generic[T]):
    """A document attribute the outside reads and never assigns: the value lives in ``_name``
    and only the document's own methods (which validate and emit the change) set it."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.private = name, "_" + name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> ReadOnly[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj, self.private)

    def __set__(self, obj: object, value: NoReturn) -> NoReturn:
        raise AttributeError(
            f"Document.{self.name} is read-only: change it through a Document method"
        )


def checked_spans(corpus: Corpus | None, k: int, spans: Iterable[Any]) -> list[Span]:
    """``spans`` as the sorted gold of sentence ``k`` of ``corpus``, checked: the one check of
    every span the document (or a pre-annotation written into a corpus) takes. Each must be
    ``(start, end, label)`` with integer bounds, ``0 <= start < end <=`` the sentence's length
    and a non-empty string label; raises IndexError (no sentence ``k``) or ValueError."""
    if corpus is None or not 0 <= k < len(corpus):
        raise IndexError(f"no sentence {k}")
    n = len(corpus.sentences[k])
    out = []
    for s in spans:
        try:
            start, end, label = s
            sp = Span(operator.index(start), operator.index(end), label)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"sentence {k}: {s!r} is not a span (start, end, label)") from exc
        if not 0 <= sp.start < sp.end <= n:
            raise ValueError(f"span {tuple(sp)} outside sentence {k}")
        if not isinstance(sp.label, str) or not sp.label:
            raise ValueError(f"span {tuple(sp)} of sentence {k} has no label")
        out.append(sp)
    return sorted(out)


def frozen(a: np.ndarray) -> np.ndarray:
    """``a``, which only :func:`write` changes from now on."""
    a.flags.writeable = False
    return a


def write(a: np.ndarray, index: Any, value: Any) -> None:
    """``a[index] = value`` in an array made read-only by :func:`frozen`."""
    a.flags.writeable = True
    try:
        a[index] = value
    finally:
        a.flags.writeable = False
