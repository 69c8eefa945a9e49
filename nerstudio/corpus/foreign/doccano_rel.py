"""doccano's relation-mode JSONL (``entities`` with ``start_offset``/``end_offset``, and
``relations``): the same reader and writer as :mod:`.doccano`, in relation mode. A module of its
own because the table of formats names one module per format, so that a file read in this mode
is written back in it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import Corpus
from . import doccano

if TYPE_CHECKING:
    from ..writing import Losses


def sniff(path: str, head: str) -> bool:
    return doccano.sniff_mode(head) == "rel"


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    return doccano.read_mode(path, encoding, scheme, "rel")


def write(corpus: Corpus, path: str, losses: Losses, scheme: str) -> None:
    doccano.write_mode(corpus, path, losses, scheme, "rel")
