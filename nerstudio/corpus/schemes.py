"""Tag schemes: IOB1, IOB2, BIOES (and its BILOU spelling) and the paper's SCN.

Every scheme converts a tag sequence to spans and back. Decoding follows conlleval: an entity
starts at a begin tag, or at an inside/continuation tag that does not continue an entity of the
same type (which is an invalid transition in IOB2, BIOES and SCN: it is *repaired* by starting a
new entity, and counted). In strict mode an invalid transition raises :class:`SchemeError`.

Spans are ``Span(start, end, label)`` with ``end`` exclusive. Untyped entities (the
boundary-only task of Collins 2002) have the label ``""`` and are written as bare prefixes
(``S``/``C`` in SCN, ``B``/``I`` in IOB).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import DataError, Msg, SettingsError
from .model import Span

#: Canonical scheme names. ``bio`` is accepted for IOB2, ``iobes`` for BIOES.
SCHEMES = ("iob1", "iob2", "bioes", "bilou", "scn")
ALIASES = {"bio": "iob2", "iob": "iob2", "iobes": "bioes", "bmes": "bioes", "bilou": "bilou"}

_PREFIXES = {
    "iob1": {"B": "B", "I": "I"},
    "iob2": {"B": "B", "I": "I"},
    "bioes": {"B": "B", "I": "I", "E": "E", "S": "S"},
    "bilou": {"B": "B", "I": "I", "L": "E", "U": "S"},
    "scn": {"S": "S", "C": "C"},
}
_OUTSIDE = {"iob1": "O", "iob2": "O", "bioes": "O", "bilou": "O", "scn": "N"}


class SchemeError(DataError):
    """A tag that the scheme does not know, or (strict mode) an invalid transition.

    ``index`` is the position of the offending token within its sentence.
    """

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index
        self.message = message


def normalize_scheme(name: str) -> str:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in SCHEMES:
        raise SettingsError(Msg.UNKNOWN.format(what="tag scheme", name=name, choices=SCHEMES))
    return key


_parse_cache: dict[tuple[str, str], tuple[str, str]] = {}
_kinds: dict[str, dict[str, tuple[str, str]]] = {}  # decode's own cache, one per scheme


def parse_tag(tag: str, scheme: str) -> tuple[str, str]:
    """Return ``(kind, label)`` where kind is ``O`` (outside) or a canonical prefix.

    Canonical prefixes: ``B``/``I`` (IOB), ``B``/``I``/``E``/``S`` (BIOES, BILOU), ``S``/``C``
    (SCN). Raises :class:`ValueError` for a tag the scheme does not know.
    """
    key = (tag, scheme)
    hit = _parse_cache.get(key)
    if hit is not None:
        return hit
    if tag == _OUTSIDE[scheme]:
        result = ("O", "")
    else:
        prefix, sep, label = tag.partition("-")
        kind = _PREFIXES[scheme].get(prefix)
        if kind is None or (sep and not label):
            expected = {
                "iob1": "O, I-X, B-X",
                "iob2": "O, B-X, I-X",
                "bioes": "O, B-X, I-X, E-X, S-X",
                "bilou": "O, B-X, I-X, L-X, U-X",
                "scn": "N, S, C, S-X, C-X",
            }[scheme]
            raise DataError(
                f"unknown tag {tag!r} for scheme {scheme.upper()} (expected {expected})"
            )
        result = (kind, label)
    if len(_parse_cache) < 100_000:
        _parse_cache[key] = result
    return result


def decode(
    tags: Sequence[str], scheme: str, strict: bool = False, on_invalid: str = "repair"
) -> tuple[list[Span], int]:
    """Convert tags to spans. Returns ``(spans, n_invalid)``.

    ``on_invalid`` says what happens at an invalid transition:

    * ``"repair"`` (default, conlleval and seqeval's default mode): an inside tag that does not
      continue an entity starts one; an unclosed BIOES entity is closed; for IOB1 a ``B-X`` that
      does not follow an entity of type X is counted as irregular but read as a start;
    * ``"drop"`` (seqeval's strict mode): the offending tokens belong to no entity, and a BIOES
      entity that is not closed by ``E-``/``S-`` is discarded;
    * ``"raise"`` (or ``strict=True``): raise :class:`SchemeError` at the first one.
    """
    if strict:
        on_invalid = "raise"
    drop = on_invalid == "drop"
    spans: list[Span] = []
    repairs = 0
    start = -1  # start of the open entity, -1 if none
    label = ""
    prev, prev_label = "O", ""  # canonical kind and label of the previous tag
    known = _kinds.setdefault(scheme, {})  # tag -> (kind, label), without parse_tag's call
    bioes = scheme in ("bioes", "bilou")
    for i, tag in enumerate(tags):
        hit = known.get(tag)
        if hit is None:
            try:
                hit = parse_tag(tag, scheme)
            except ValueError as exc:
                raise SchemeError(i, str(exc)) from None
            if len(known) < 10_000:
                known[tag] = hit
        kind, lab = hit
        if kind == "O" and start < 0:  # outside, nothing open: the common case
            prev, prev_label = kind, lab
            continue
        bad = None
        if kind == "O":
            if start >= 0:
                if bioes and prev in ("B", "I"):
                    bad = f"entity {label or 'span'} not closed by E-/S- before {tag!r}"
                if not (drop and bad):
                    spans.append(Span(start, i, label))
                start = -1
        elif kind == "B":
            unclosed = False
            if scheme == "iob1" and not (prev in ("B", "I") and prev_label == lab):
                bad = f"B-{lab} does not follow an entity of type {lab} (IOB1)"
            if start >= 0:
                if bioes and prev in ("B", "I"):
                    bad = f"entity {label or 'span'} not closed by E-/S- before {tag!r}"
                    unclosed = True
                if not (drop and unclosed):
                    spans.append(Span(start, i, label))
            start, label = i, lab
            if drop and scheme == "iob1" and bad:
                start = -1
        elif kind in ("I", "C"):
            continues = start >= 0 and label == lab and (not bioes or prev in ("B", "I"))
            if not continues:
                if scheme != "iob1":
                    bad = f"{tag!r} does not continue an entity (after {tags[i - 1] if i else 'sentence start'!r})"
                if start >= 0 and not (drop and bioes and prev in ("B", "I")):
                    spans.append(Span(start, i, label))
                start, label = i, lab
                if drop and bad:
                    start = -1
        elif kind == "E":
            if start >= 0 and label == lab and prev in ("B", "I"):
                spans.append(Span(start, i + 1, label))
            else:
                bad = f"{tag!r} does not end an open entity"
                if not drop:
                    if start >= 0:
                        spans.append(Span(start, i, label))
                    spans.append(Span(i, i + 1, lab))
            start = -1
        elif kind == "S":
            if scheme == "scn":
                if start >= 0:
                    spans.append(Span(start, i, label))
                start, label = i, lab
            else:
                if start >= 0:
                    if prev in ("B", "I"):
                        bad = f"entity {label or 'span'} not closed by E-/S- before {tag!r}"
                    if not (drop and bad):
                        spans.append(Span(start, i, label))
                    start = -1
                spans.append(Span(i, i + 1, lab))
        if bad:
            if on_invalid == "raise":
                raise SchemeError(i, f"invalid transition: {bad}")
            repairs += 1
        prev, prev_label = kind, lab
    if start >= 0:
        if scheme in ("bioes", "bilou") and prev in ("B", "I"):
            if on_invalid == "raise":
                raise SchemeError(
                    len(tags) - 1,
                    f"invalid transition: entity {label or 'span'} not closed at sentence end",
                )
            repairs += 1
            if drop:
                return spans, repairs
        spans.append(Span(start, len(tags), label))
    return spans, repairs


def _tag(prefix: str, label: str) -> str:
    return f"{prefix}-{label}" if label else prefix


def check_spans(spans: Sequence[Span], n: int) -> None:
    """Raise ValueError unless spans are sorted, non-empty, non-overlapping and inside [0, n)."""
    last = 0
    for sp in spans:
        if not (0 <= sp.start < sp.end <= n) or sp.start < last:
            raise DataError(f"invalid or overlapping span {sp} in a sentence of {n} tokens")
        last = sp.end


def encode(spans: Iterable[Span], n: int, scheme: str) -> list[str]:
    """Convert spans to ``n`` tags of the given scheme (spans must not overlap)."""
    spans = sorted(spans)
    check_spans(spans, n)
    out = [_OUTSIDE[scheme]] * n
    prev_end, prev_label = -1, None
    for sp in spans:
        s, e, lab = sp.start, sp.end, sp.label
        if scheme == "iob2":
            out[s] = _tag("B", lab)
            for k in range(s + 1, e):
                out[k] = _tag("I", lab)
        elif scheme == "iob1":
            first = "B" if (prev_end == s and prev_label == lab) else "I"
            out[s] = _tag(first, lab)
            for k in range(s + 1, e):
                out[k] = _tag("I", lab)
        elif scheme in ("bioes", "bilou"):
            b, i_, e_, s_ = ("B", "I", "E", "S") if scheme == "bioes" else ("B", "I", "L", "U")
            if e - s == 1:
                out[s] = _tag(s_, lab)
            else:
                out[s] = _tag(b, lab)
                for k in range(s + 1, e - 1):
                    out[k] = _tag(i_, lab)
                out[e - 1] = _tag(e_, lab)
        elif scheme == "scn":
            out[s] = _tag("S", lab)
            for k in range(s + 1, e):
                out[k] = _tag("C", lab)
        else:  # pragma: no cover - normalize_scheme guards this
            raise ValueError(scheme)
        prev_end, prev_label = e, lab
    return out


class SchemeDetector:
    """Evidence for :func:`detect_scheme`, gathered one tag sequence at a time (so that a
    streamed file and the same file read whole are judged on the same evidence)."""

    def __init__(self) -> None:
        self.prefixes: set[str] = set()
        self.has_o = self.has_n = False
        self.b_starts = self.i_starts = 0

    def add(self, tags: Sequence[str]) -> None:
        prefixes = self.prefixes
        prev_p, prev_l = "O", ""
        for tag in tags:
            if tag == "O":
                self.has_o = True
                prev_p, prev_l = "O", ""
                continue
            if tag == "N":
                self.has_n = True
                prev_p, prev_l = "O", ""
                continue
            p, _, lab = tag.partition("-")
            prefixes.add(p)
            if p == "B" and not (prev_p in ("B", "I") and prev_l == lab):
                self.b_starts += 1
            elif p == "I" and not (prev_p in ("B", "I") and prev_l == lab):
                self.i_starts += 1
            prev_p, prev_l = p, lab

    def result(self) -> str:
        if "C" in self.prefixes or (self.has_n and not self.has_o):
            return "scn"
        if self.prefixes & {"L", "U"}:
            return "bilou"
        if self.prefixes & {"E", "S"}:
            return "bioes"
        if self.i_starts > self.b_starts:
            return "iob1"
        return "iob2"


def detect_scheme(tag_sequences: Iterable[Sequence[str]]) -> str:
    """Guess the scheme of a corpus from its tag sequences.

    SCN if ``N``/``C`` tags occur (and ``O`` does not); BILOU/BIOES if L/U or E/S prefixes occur;
    otherwise IOB1 when more entities start with ``I-`` than with a ``B-`` that a strict IOB1
    reading would not need, else IOB2.
    """
    det = SchemeDetector()
    for tags in tag_sequences:
        det.add(tags)
    return det.result()


def convert_tags(tags: Sequence[str], src: str, dst: str) -> list[str]:
    """Re-encode one tag sequence from scheme ``src`` to ``dst`` (conlleval repair applied)."""
    spans, _ = decode(tags, src)
    return encode(spans, len(tags), dst)
