"""Agreement between two annotations of the same text (issue 16): span P/R/F, Cohen's kappa.

Two annotators' files of the same tokens are compared sentence by sentence:

* spans: exact-match precision, recall and F1 of B against A (symmetric in F; A plays "gold"),
  overall and per type, counted by :class:`nerstudio.evaluation.Evaluation`;
* tokens: Cohen's kappa on the IOB2 tags derived from the spans,
  ``κ = (p_o − p_e) / (1 − p_e)`` with ``p_o`` the share of tokens given the same tag and
  ``p_e = Σ_t p_A(t) p_B(t)`` the agreement expected by chance from each annotator's own tag
  frequencies. Per type T, the tags of other types count as ``O`` (T's kappa is about T alone).
  When both annotators use a single tag throughout (``p_e = 1``) kappa is undefined: ``None``;
* the sentences that differ, with the spans only one of them has.

Files that do not hold the same tokens are refused at the first differing token, naming both
lines (:func:`nerstudio.evaluation.check_aligned`): comparing shifted files would give wrong
figures without a word. No Qt: the command line and an application view share it; the
application's worker compares two files with :func:`agreement_of_files` (the bytes read as
progress, cancellable, each differing sentence's spans kept for display).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .corpus.model import Sentence, Span
from .corpus.schemes import encode
from .errors import FormatError
from .evaluation import Evaluation, check_aligned


def cohen_kappa(pairs: Counter) -> float | None:
    """Cohen's kappa of a table ``{(category_a, category_b): count}``; ``None`` when undefined
    (no item, or chance agreement 1: both raters used one and the same category throughout)."""
    n = sum(pairs.values())
    if n == 0:
        return None
    observed = sum(c for (a, b), c in pairs.items() if a == b) / n
    freq_a: Counter = Counter()
    freq_b: Counter = Counter()
    for (a, b), c in pairs.items():
        freq_a[a] += c
        freq_b[b] += c
    expected = sum(freq_a[t] * freq_b[t] for t in freq_a) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def _restricted(pairs: Counter, label: str) -> Counter:
    keep = {f"B-{label}", f"I-{label}"}
    out: Counter = Counter()
    for (a, b), c in pairs.items():
        out[(a if a in keep else "O", b if b in keep else "O")] += c
    return out


@dataclass
class Difference:
    """A sentence the annotators labelled differently (``index`` 1-based)."""

    index: int
    line_a: int
    line_b: int
    words: tuple[str, ...]
    only_a: list[Span]
    only_b: list[Span]

    def as_dict(self) -> dict:
        def ents(spans):
            return [
                {
                    "start": s.start,
                    "end": s.end,
                    "label": s.label,
                    "text": " ".join(self.words[s.start : s.end]),
                }
                for s in spans
            ]

        return {
            "sentence": self.index,
            "line_a": self.line_a or None,
            "line_b": self.line_b or None,
            "text": " ".join(self.words),
            "only_a": ents(self.only_a),
            "only_b": ents(self.only_b),
        }


@dataclass
class Agreement:
    """The figures of :func:`agreement` (see the module docstring)."""

    spans: Evaluation = field(default_factory=Evaluation)
    tags: Counter = field(default_factory=Counter)  # (tag in A, tag in B) -> tokens
    differences: list[Difference] = field(default_factory=list)

    @property
    def kappa(self) -> float | None:
        return cohen_kappa(self.tags)

    def kappa_per_type(self) -> dict[str, float | None]:
        return {t: cohen_kappa(_restricted(self.tags, t)) for t in sorted(self.spans.per_type)}

    def as_dict(self, limit: int = 20) -> dict:
        per_kappa = self.kappa_per_type()
        spans = self.spans.as_dict()
        per_type = {t: {**m, "kappa": per_kappa.get(t)} for t, m in spans["per_type"].items()}
        shown = self.differences if limit <= 0 else self.differences[:limit]
        return {
            "sentences": self.spans.sentences,
            "tokens": self.spans.tokens,
            "precision": spans["precision"],
            "recall": spans["recall"],
            "f1": spans["f1"],
            "entities_a": spans["gold"],
            "entities_b": spans["proposed"],
            "matching": spans["correct"],
            "kappa": self.kappa,
            "token_agreement": self.spans.token_accuracy,
            "per_type": per_type,
            "differing_sentences": len(self.differences),
            "differences": [d.as_dict() for d in shown],
        }

    def table(self, limit: int = 20) -> str:
        def k(v):
            return "   n/a" if v is None else f"{v:6.3f}"

        ev, per_kappa = self.spans, self.kappa_per_type()
        lines = [
            f"sentences: {ev.sentences}; tokens: {ev.tokens}; entities in A: {ev.overall.gold}, in B: "
            f"{ev.overall.proposed}, matching: {ev.overall.correct}",
            f"tokens with the same tag: {ev.token_accuracy:.2f}%; Cohen's kappa: {k(self.kappa).strip()}",
            f"{'type':<16}{'P(B|A)':>10}{'R(B|A)':>10}{'F1':>10}{'kappa':>8}{'A':>7}{'B':>7}",
        ]
        for name, m in sorted(ev.per_type.items()):
            lines.append(
                f"{name or '(untyped)':<16}{m.precision:10.2f}{m.recall:10.2f}{m.f1:10.2f}"
                f"{k(per_kappa[name]):>8}{m.gold:7d}{m.proposed:7d}"
            )
        o = ev.overall
        lines.append(
            f"{'overall':<16}{o.precision:10.2f}{o.recall:10.2f}{o.f1:10.2f}{k(self.kappa):>8}"
            f"{o.gold:7d}{o.proposed:7d}"
        )
        n = len(self.differences)
        shown = self.differences if limit <= 0 else self.differences[:limit]
        lines.append(
            f"\n{n} sentence{'s' if n != 1 else ''} differ"
            + (f" (first {len(shown)}):" if shown and len(shown) < n else ":" if n else "")
        )
        for d in shown:
            where = f"A:{d.line_a} B:{d.line_b}" if d.line_a else f"sentence {d.index}"
            lines.append(f"  [{where}] {' '.join(d.words)}")
            for tag, spans in (("A only", d.only_a), ("B only", d.only_b)):
                if spans:
                    lines.append(
                        f"    {tag}: "
                        + ", ".join(
                            f"[{' '.join(d.words[s.start : s.end])}]{s.label}" for s in spans
                        )
                    )
        return "\n".join(lines)


def agreement(
    a: Iterable[Sentence],
    b: Iterable[Sentence],
    a_path: str | None = None,
    b_path: str | None = None,
) -> Agreement:
    """Compare two aligned streams of sentences (A's spans as the reference of P and R)."""
    out = Agreement()
    ai, bi = iter(a), iter(b)
    k = 0
    while True:
        sa, sb = next(ai, None), next(bi, None)
        if sa is None and sb is None:
            return out
        k += 1
        if sa is None or sb is None:
            longer, path, other = (sb, b_path, a_path) if sa is None else (sa, a_path, b_path)
            raise FormatError(
                path,
                (longer.line or None) if longer is not None else None,
                f"has more sentences than {other or 'the other file'} (which ends after {k - 1})",
            )
        check_aligned(sa, sb, k, a_path, b_path)
        n = len(sa.words)
        out.spans.add_sentence(sa.spans, sb.spans, n)
        out.tags.update(zip(encode(sa.spans, n, "iob2"), encode(sb.spans, n, "iob2")))
        set_a, set_b = set(sa.spans), set(sb.spans)
        if set_a != set_b:
            out.differences.append(
                Difference(
                    k,
                    sa.line,
                    sb.line,
                    tuple(sa.words),
                    sorted(set_a - set_b),
                    sorted(set_b - set_a),
                )
            )


@dataclass
class FilesAgreement:
    """Two files compared: the :class:`Agreement`, both files' spans of every differing
    sentence (by 1-based index), and whether A was given as sentences (the open corpus)."""

    result: Agreement
    details: dict[int, tuple[list[Span], list[Span]]]
    path_a: str
    path_b: str
    a_is_corpus: bool


def agreement_of_files(
    ctx: Any, path_a: str, path_b: str, a_sentences: list[Sentence] | None = None
) -> FilesAgreement:
    """Compare the files ``path_a`` and ``path_b`` (or the sentences ``a_sentences`` in place of
    A's file), streamed. ``ctx`` is a job's context: ``check()`` raises when the job is cancelled
    and ``progress(message, done, total)`` hears of the bytes read (in thousandths). A file
    that cannot be read is a :class:`~nerstudio.errors.NerstudioError` naming it."""
    from .corpus.formats import Reader
    from .errors import NerstudioError

    files = [p for p in ((path_a if a_sentences is None else None), path_b) if p]
    try:
        sizes = {p: max(os.path.getsize(p), 1) for p in files}
    except OSError as exc:
        raise NerstudioError(f"{exc.filename}: {exc.strerror}") from None
    read = dict.fromkeys(files, 0)
    total = sum(sizes.values())

    def watcher(path: str):
        def watch(pos: int) -> None:
            ctx.check()
            read[path] = pos
            done = sum(read.values())
            ctx.progress(
                f"{done / 1e6:,.1f} of {total / 1e6:,.1f} MB read", int(done * 1000 / total), 1000
            )

        return watch

    rec_a: dict[int, list[Span]] = {}
    rec_b: dict[int, list[Span]] = {}

    def recorded(sentences: Iterable[Sentence], rec: dict[int, list[Span]]) -> Iterator[Sentence]:
        for k, s in enumerate(sentences, 1):
            rec[k] = s.spans
            if not k & 0x3FF:
                ctx.check()
            yield s

    ctx.progress("comparing…", 0, 1000)
    try:
        a = (
            iter(a_sentences)
            if a_sentences is not None
            else Reader(path_a, watch=watcher(path_a)).sentences()
        )
        b = Reader(path_b, watch=watcher(path_b)).sentences()
        result = agreement(recorded(a, rec_a), recorded(b, rec_b), path_a, path_b)
    except OSError as exc:
        raise NerstudioError(f"{exc.filename or path_b}: {exc.strerror or exc}") from None
    details = {d.index: (rec_a[d.index], rec_b[d.index]) for d in result.differences}
    return FilesAgreement(result, details, path_a, path_b, a_sentences is not None)
