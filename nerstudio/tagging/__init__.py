"""Taggers that propose candidate segmentations (no Qt)."""

from __future__ import annotations

from ..errors import FormatError
from ..persist import read_header

KINDS = {
    "maxent": "a max-ent tagger",
    "perceptron": "a perceptron tagger",
    "joint": "a joint (K&T) tagger",
}


def load_tagger(path, kinds=tuple(KINDS), what: str | None = None):
    """Load whichever tagger model ``path`` holds, told apart by the format in its header.

    ``kinds`` limits what is accepted; anything else raises one :class:`FormatError` line
    naming the file and what it is instead (``what`` names the accepted kinds in that message).
    """
    from .joint import MODEL_FORMAT as JOINT
    from .joint import JointTagger
    from .maxent import MODEL_FORMAT as MAXENT
    from .maxent import MaxEntTagger
    from .perceptron import MODEL_FORMAT as PERCEPTRON
    from .perceptron import PerceptronTagger

    by_format = {
        MAXENT: ("maxent", MaxEntTagger),
        PERCEPTRON: ("perceptron", PerceptronTagger),
        JOINT: ("joint", JointTagger),
    }
    wanted = what or " or ".join(KINDS[k] for k in kinds) + " model"
    fmt = read_header(path, wanted).get("format")  # a missing or unreadable file: its own error
    if not isinstance(fmt, str):
        raise FormatError(str(path), None, f"not {wanted}: its header names no format")
    hit = by_format.get(fmt)
    if hit is not None and hit[0] in kinds:
        return hit[1].load(path)
    found = KINDS[hit[0]] + " model" if hit else f"a {fmt!r} file"
    raise FormatError(str(path), None, f"not {wanted}: it is {found}")
