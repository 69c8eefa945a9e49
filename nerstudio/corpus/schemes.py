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

from collections.abc import Callable, Iterable, Sequence

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


class _Decoder:
    """One left-to-right pass over a tag sequence of one scheme.

    It owns the open entity (``start``/``label``, ``start`` is -1 when none is open), the spans
    found so far and the count of invalid transitions. A subclass says what each kind of tag
    does: how it begins, continues or ends an entity. Reporting an invalid transition, closing
    an entity that a scheme requires to be ended explicitly, and the end of the sentence are
    shared here.
    """

    name = ""
    #: Entities must be ended explicitly (by ``E-``/``S-``); a missing end is invalid.
    closes = False
    #: An inside tag that does not continue an entity is invalid (it is not in IOB1).
    strict_inside = True

    def __init__(self, tags: Sequence[str], on_invalid: str) -> None:
        self.tags = tags
        self.on_invalid = on_invalid
        self.drop = on_invalid == "drop"
        self.spans: list[Span] = []
        self.repairs = 0
        self.start = -1
        self.label = ""

    def handlers(self) -> dict[str, Callable[[int, str, str], None]]:
        """What each canonical kind other than ``O`` does: ``handler(index, tag, label)``."""
        raise NotImplementedError

    def run(self) -> tuple[list[Span], int]:
        known = _kinds.setdefault(self.name, {})  # tag -> (kind, label), without parse_tag
        on = self.handlers()
        for i, tag in enumerate(self.tags):
            hit = known.get(tag)
            if hit is None:
                hit = self._parse(i, tag, known)
            kind, lab = hit
            if kind != "O":
                on[kind](i, tag, lab)
            elif self.start >= 0:
                self.outside(i, tag)
        self.finish()
        return self.spans, self.repairs

    def _parse(self, i: int, tag: str, known: dict[str, tuple[str, str]]) -> tuple[str, str]:
        try:
            hit = parse_tag(tag, self.name)
        except ValueError as exc:
            raise SchemeError(i, str(exc)) from None
        if len(known) < 10_000:
            known[tag] = hit
        return hit

    def flag(self, i: int, what: str) -> None:
        """An invalid transition at token ``i``: raise, or count it."""
        if self.on_invalid == "raise":
            raise SchemeError(i, f"invalid transition: {what}")
        self.repairs += 1

    def emit(self, end: int) -> None:
        self.spans.append(Span(self.start, end, self.label))

    def close_open(self, i: int, tag: str) -> None:
        """End the open entity before token ``i`` (which is not part of it)."""
        if self.closes:
            self.flag(i, f"entity {self.label or 'span'} not closed by E-/S- before {tag!r}")
            if self.drop:
                return
        self.emit(i)

    def outside(self, i: int, tag: str) -> None:
        """An outside tag while an entity is open."""
        self.close_open(i, tag)
        self.start = -1

    def begin(self, i: int, tag: str, lab: str) -> None:
        """A tag that always starts an entity, closing any open one."""
        if self.start >= 0:
            self.close_open(i, tag)
        self.start, self.label = i, lab

    def inside(self, i: int, tag: str, lab: str) -> None:
        """A continuation tag; one that continues nothing starts an entity (repair)."""
        if self.start >= 0 and self.label == lab:
            return
        bad = self.strict_inside
        if bad:
            after = self.tags[i - 1] if i else "sentence start"
            self.flag(i, f"{tag!r} does not continue an entity (after {after!r})")
        if self.start >= 0 and not (self.drop and self.closes):
            self.emit(i)
        self.start, self.label = i, lab
        if self.drop and bad:
            self.start = -1

    def finish(self) -> None:
        if self.start < 0:
            return
        n = len(self.tags)
        if self.closes:
            self.flag(n - 1, f"entity {self.label or 'span'} not closed at sentence end")
            if self.drop:
                return
        self.emit(n)


class _IOB2(_Decoder):
    """``B-X`` begins an entity, ``I-X`` continues it."""

    name = "iob2"

    def handlers(self) -> dict[str, Callable[[int, str, str], None]]:
        return {"B": self.begin, "I": self.inside}


class _IOB1(_IOB2):
    """``I-X`` begins or continues an entity; ``B-X`` only separates two adjacent entities of
    type X, so a ``B-X`` anywhere else is irregular (counted, read as a start)."""

    name = "iob1"
    strict_inside = False

    def __init__(self, tags: Sequence[str], on_invalid: str) -> None:
        super().__init__(tags, on_invalid)
        self.last, self.last_label = -2, ""  # index and label of the last B-/I- tag

    def inside(self, i: int, tag: str, lab: str) -> None:
        super().inside(i, tag, lab)
        self.last, self.last_label = i, lab

    def begin(self, i: int, tag: str, lab: str) -> None:
        bad = not (self.last == i - 1 and self.last_label == lab)
        self.last, self.last_label = i, lab
        if bad:
            self.flag(i, f"B-{lab} does not follow an entity of type {lab} (IOB1)")
        if self.start >= 0:
            self.emit(i)
        self.start, self.label = i, lab
        if self.drop and bad:
            self.start = -1


class _BIOES(_Decoder):
    """``B-X`` begins, ``I-X`` continues, ``E-X`` ends an entity, ``S-X`` is one on its own.

    An entity is open only between its ``B-``/``I-`` tags, so an open entity not ended by
    ``E-`` is invalid.
    """

    name = "bioes"
    closes = True

    def handlers(self) -> dict[str, Callable[[int, str, str], None]]:
        return {"B": self.begin, "I": self.inside, "E": self.end, "S": self.single}

    def end(self, i: int, tag: str, lab: str) -> None:
        if self.start >= 0 and self.label == lab:
            self.emit(i + 1)
        else:
            self.flag(i, f"{tag!r} does not end an open entity")
            if not self.drop:
                if self.start >= 0:
                    self.emit(i)
                self.spans.append(Span(i, i + 1, lab))
        self.start = -1

    def single(self, i: int, tag: str, lab: str) -> None:
        if self.start >= 0:
            self.close_open(i, tag)
            self.start = -1
        self.spans.append(Span(i, i + 1, lab))


class _BILOU(_BIOES):
    """BIOES spelt ``B``/``I``/``L``/``U`` (:func:`parse_tag` maps them to B/I/E/S)."""

    name = "bilou"


class _SCN(_Decoder):
    """The paper's scheme: ``S`` starts an entity, ``C`` continues it, ``N`` is outside."""

    name = "scn"

    def handlers(self) -> dict[str, Callable[[int, str, str], None]]:
        return {"S": self.begin, "C": self.inside}


#: The decoder of each name in :data:`SCHEMES`.
_DECODERS: dict[str, type[_Decoder]] = {
    cls.name: cls for cls in (_IOB1, _IOB2, _BIOES, _BILOU, _SCN)
}


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
    return _DECODERS[scheme](tags, on_invalid).run()


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
