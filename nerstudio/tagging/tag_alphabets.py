"""The maximum-entropy tagger's tag alphabets: Collins' SCN, and BILOU.

Why this exists: the tagger may predict its segmentation in either of two encodings, and
everything after the tagger (N-best lists, rerankers, the window) reads SCN. Here is all that
differs between them: the tag set, the gold tags of a sentence, which tag may follow which, which
tags may end a sentence, and the map from the tagger's tags to the SCN tags its lists are written
in.

``scn`` (Collins 2002, the paper's)
    ``N``, ``S-X`` (first word of an entity of type X), ``C-X`` (a later word); ``C-X`` only after
    ``S-X`` or ``C-X``.
``bilou`` (Ratinov & Roth 2009 found it better than BIO for CoNLL-2003)
    ``N``, ``B-X`` (first word of a longer entity), ``I-X`` (inside), ``L-X`` (last word),
    ``U-X`` (a one-word entity). ``I-X`` and ``L-X`` only after ``B-X`` or ``I-X``; after ``B-X``
    or ``I-X`` only ``I-X`` or ``L-X``; a sentence cannot end on ``B`` or ``I``. The local model
    thus decides, word by word, where an entity ends as well as where it starts.

A valid sequence of either alphabet stands for exactly one segmentation and back, so mapping a
BILOU candidate to SCN (``B``, ``U`` → ``S``; ``I``, ``L`` → ``C``) keeps the candidates of an
N-best list distinct. The untyped task uses the bare prefixes (``N``, ``S``, ``C`` or ``N``,
``B``, ``I``, ``L``, ``U``). Gold tags come from :func:`nerstudio.nbest.spans_to_tag_ids` with the
alphabet, and a tag's SCN reading from :func:`nerstudio.nbest.scn_tag`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..choices import ALPHABETS
from ..errors import Msg, SettingsError
from ..nbest import scn_tag

_PREFIXES = {"scn": ("S", "C"), "bilou": ("B", "I", "L", "U")}
_OPEN = ("B", "I")  # BILOU tags after which the entity goes on


def check_alphabet(name: str) -> str:
    if name not in ALPHABETS:
        raise SettingsError(Msg.UNKNOWN.format(what="tag alphabet", name=name, choices=ALPHABETS))
    return name


def _tag(prefix: str, label: str) -> str:
    return f"{prefix}-{label}" if label else prefix


def _split(tag: str) -> tuple[str, str]:
    prefix, _, label = tag.partition("-")
    return prefix, label


def is_tagset(tags: Sequence[str], alphabet: str) -> bool:
    """Whether ``tags`` is exactly a tag set :func:`make_tagset` makes in ``alphabet`` (a model
    file's tag set, checked: no tag repeated, none missing, none foreign, in order)."""
    if alphabet not in ALPHABETS:
        return False
    labels = sorted({_split(t)[1] for t in tags[1:]})
    if labels == [""]:
        return list(tags) == make_tagset([], "scn", alphabet)
    return list(tags) == make_tagset(labels, "typed", alphabet)


def make_tagset(labels: Sequence[str], task: str, alphabet: str = "scn") -> list[str]:
    """``N`` then, per entity type in sorted order, its tags (bare prefixes for ``scn`` task)."""
    prefixes = _PREFIXES[check_alphabet(alphabet)]
    if task == "scn":
        return ["N", *prefixes]
    return ["N"] + [_tag(p, lab) for lab in sorted(labels) for p in prefixes]


def alphabet_of(tagset: Sequence[str]) -> str:
    """The alphabet a saved tag set is written in."""
    return "bilou" if any(_split(t)[0] in ("B", "I", "L", "U") for t in tagset) else "scn"


def allowed_transitions(tagset: Sequence[str]) -> np.ndarray:
    """``allowed[i, j]``: tag j may follow tag i; row ``len(tagset)`` is the sentence start."""
    T = len(tagset)
    allowed = np.ones((T + 1, T), dtype=bool)
    prev_tags = [_split(t) for t in tagset] + [("<s>", "")]
    for j, tag in enumerate(tagset):
        p, lab = _split(tag)
        for i, (pp, plab) in enumerate(prev_tags):
            if p in ("C", "I", "L"):  # continues an entity of its own type
                allowed[i, j] = pp in (("S", "C") if p == "C" else _OPEN) and plab == lab
            elif pp in _OPEN:  # an open BILOU entity must go on
                allowed[i, j] = False
    return allowed


def final_allowed(tagset: Sequence[str]) -> np.ndarray:
    """Which tags may end a sentence (all but BILOU's ``B`` and ``I``)."""
    return np.array([_split(t)[0] not in _OPEN for t in tagset], dtype=bool)


def scn_tagset(tagset: Sequence[str]) -> list[str]:
    """The SCN tag set of the same task and entity types."""
    labels = sorted({_split(t)[1] for t in tagset if t != "N"})
    return make_tagset(labels, "typed" if any(labels) else "scn", "scn")


def to_scn(tagset: Sequence[str]) -> np.ndarray:
    """Tag id in ``tagset`` → tag id in :func:`scn_tagset` (the identity for an SCN tag set)."""
    index = {t: k for k, t in enumerate(scn_tagset(tagset))}
    return np.array([index[scn_tag(t)] for t in tagset], dtype=np.int16)


class TagRules(NamedTuple):
    """What a tagger's search and lists need to know of its tag set."""

    allowed: np.ndarray  # (T + 1, T): allowed[i, j], tag j after tag i; row T: the start
    final: np.ndarray  # (T,): which tags may end a sentence
    to_scn: np.ndarray  # (T,): the tag's id in list_tagset
    list_tagset: list[str]  # the SCN tag set its N-best lists are written in


def rules(tagset: Sequence[str]) -> TagRules:
    return TagRules(
        allowed_transitions(tagset), final_allowed(tagset), to_scn(tagset), scn_tagset(tagset)
    )
