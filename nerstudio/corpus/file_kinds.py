"""The kinds of corpus file the readers take, as file dialogs and tooltips name them.

Derived from the tables that decide how a file is read — nerstudio's own extensions
(:func:`~nerstudio.corpus.detect.own_extensions`) and the other tools' handlers
(:data:`~nerstudio.corpus.foreign.HANDLERS`) — so that a format added there is offered by the
application's Open dialog without anyone writing it out again. No Qt here: the application
turns these into its filters.
"""

from __future__ import annotations

import re

from . import foreign
from .detect import own_extensions

#: nerstudio's own formats in words (``conll``: the CoNLL variant an extension leaves open)
OWN_LABELS = {
    "conll": "CoNLL columns",
    "conll2003": "CoNLL columns",
    "conll2002": "CoNLL columns",
    "columns": "CoNLL columns",
    "tsv": "TSV",
    "jsonl": "JSON Lines",
}
#: the file names of the CoNLL shared tasks' distributions (``eng.train``, ``eng.testa`` …),
#: read as CoNLL columns by their content
CONLL_DATASET_SUFFIXES = (".train", ".testa", ".testb", ".dev", ".test")


def handler_label(h: foreign.Handler) -> str:
    """A handler's name in words: its description up to the first ``:``, ``;``, ``,`` or
    ``(`` (``brat standoff``, ``CoNLL-U``, ``spaCy DocBin``)."""
    return re.split(r"[:;,(]", h.description, maxsplit=1)[0].strip() or h.name


def file_kinds() -> list[tuple[str, tuple[str, ...]]]:
    """Every kind of corpus file that has extensions of its own: ``(its name in words, its
    extensions)``, nerstudio's formats first, then the other tools' in the registry's order.
    Formats told only by their content (Prodigy, doccano … in ``.jsonl``/``.json`` files,
    WebAnno TSV) have none: their files are among the others'."""
    kinds: dict[str, list[str]] = {label: [] for label in OWN_LABELS.values()}  # in that order
    for ext, fmt in own_extensions().items():
        kinds.setdefault(OWN_LABELS.get(fmt, fmt), []).append(ext)
    kinds.setdefault(OWN_LABELS["conll"], []).extend(CONLL_DATASET_SUFFIXES)
    for h in foreign.HANDLERS:
        if h.extensions:
            kinds.setdefault(handler_label(h), []).extend(h.extensions)
    return [(label, tuple(dict.fromkeys(exts))) for label, exts in kinds.items() if exts]


def all_extensions() -> tuple[str, ...]:
    """Every extension of :func:`file_kinds`, once, in their order."""
    return tuple(dict.fromkeys(e for _, exts in file_kinds() for e in exts))


def format_names() -> list[str]:
    """Every format the readers take, in words, once each: nerstudio's own, then every
    handler's (those told by content too), for a tooltip."""
    own = list(dict.fromkeys(OWN_LABELS.values()))
    return list(dict.fromkeys(own + [handler_label(h) for h in foreign.HANDLERS]))
