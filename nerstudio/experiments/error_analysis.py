"""Error analysis a linguist can act on: F by bucket, and the errors by kind.

:func:`bucket_prf` splits the entities into buckets — by their length in words, by the length of
their sentence — and gives precision, recall and F within each bucket (a gold entity and a
proposed one fall in the same bucket when they are the same span, so a correct entity counts in
one bucket on both sides). :func:`error_kinds` names what went wrong with every gold and every
proposed entity, the way nervaluate and the MUC scorer do:

* ``correct`` — a proposed entity with the gold's span and type;
* ``type`` — the gold's span exactly, another type;
* ``boundary`` — overlaps a gold entity of its type, with other boundaries;
* ``boundary+type`` — overlaps a gold entity, other boundaries and another type;
* ``missed`` — a gold entity no proposed entity overlaps;
* ``spurious`` — a proposed entity that overlaps no gold entity.

Each gold entity gets one kind (the best of its overlapping proposals: exact span first, then
same type, then the longest overlap); proposals that overlap a gold entity but are not its best
match are not counted again, so ``correct + type + boundary + boundary+type + missed`` is the
number of gold entities. No Qt here; :func:`analysis_lines` prints the tables for
``nerstudio errors`` and the experiment reports.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..corpus.model import Span
from ..evaluation import PRF

ENTITY_LENGTHS = ((1, 1, "1 word"), (2, 2, "2 words"), (3, 3, "3 words"), (4, 10**9, "4+ words"))
SENTENCE_LENGTHS = ((1, 10, "1–10 words"), (11, 20, "11–20"), (21, 40, "21–40"), (41, 10**9, "41+"))
KINDS = ("correct", "type", "boundary", "boundary+type", "missed", "spurious")


def _bucket(n: int, buckets) -> str:
    return next(name for lo, hi, name in buckets if lo <= n <= hi)


def group_prf(
    words: Sequence[Sequence[str]],
    gold: Sequence[Sequence[Span]],
    pred: Sequence[Sequence[Span]],
    group,
    groups=(),
) -> dict:
    """A :class:`PRF` per group: ``group(words, span)`` names the group of each gold and proposed
    span (a span in both counts as correct in its group); ``groups`` are listed even when empty."""
    out = {g: PRF() for g in groups}
    for ws, g, p in zip(words, gold, pred, strict=True):
        gs, ps = set(g), set(p)
        for sp in gs:
            out.setdefault(group(ws, sp), PRF()).gold += 1
        for sp in ps:
            out.setdefault(group(ws, sp), PRF()).proposed += 1
        for sp in gs & ps:
            out[group(ws, sp)].correct += 1
    return out


def bucket_prf(
    words: Sequence[Sequence[str]],
    gold: Sequence[Sequence[Span]],
    pred: Sequence[Sequence[Span]],
    by: str,
) -> dict[str, dict]:
    """P/R/F per bucket; ``by`` is ``"entity_length"`` or ``"sentence_length"``."""
    buckets = ENTITY_LENGTHS if by == "entity_length" else SENTENCE_LENGTHS

    def key(ws, sp):
        return _bucket(sp.end - sp.start if by == "entity_length" else len(ws), buckets)

    out = group_prf(words, gold, pred, key, [name for _lo, _hi, name in buckets])
    return {k: v.as_dict() for k, v in out.items()}


def _overlap(a: Span, b: Span) -> int:
    return max(0, min(a.end, b.end) - max(a.start, b.start))


def classify(
    gold: Sequence[Span], pred: Sequence[Span]
) -> list[tuple[str, Span | None, Span | None]]:
    """(kind, gold entity, proposed entity) for every gold entity and every spurious proposal of
    one sentence (see the module docstring)."""
    out: list[tuple[str, Span | None, Span | None]] = []
    ps = list(dict.fromkeys(pred))
    for g in sorted(set(gold)):
        over = [p for p in ps if _overlap(g, p)]
        if not over:
            out.append(("missed", g, None))
            continue
        best = max(
            over,
            key=lambda p: (
                (p.start, p.end) == (g.start, g.end),
                p.label == g.label,
                _overlap(g, p),
            ),
        )
        if (best.start, best.end) == (g.start, g.end):
            kind = "correct" if best.label == g.label else "type"
        else:
            kind = "boundary" if best.label == g.label else "boundary+type"
        out.append((kind, g, best))
    for p in ps:
        if not any(_overlap(g, p) for g in gold):
            out.append(("spurious", None, p))
    return out


def error_kinds(gold: Sequence[Sequence[Span]], pred: Sequence[Sequence[Span]]) -> dict[str, int]:
    """How many entities of each kind (:data:`KINDS`) over a corpus."""
    counts = dict.fromkeys(KINDS, 0)
    for g, p in zip(gold, pred, strict=True):
        for kind, _g, _p in classify(g, p):
            counts[kind] += 1
    return counts


def sentences_of_kind(
    gold: Sequence[Sequence[Span]], pred: Sequence[Sequence[Span]], kind: str
) -> list[int]:
    """The sentences with at least one entity of ``kind`` (to list them in a browser)."""
    return [
        k
        for k, (g, p) in enumerate(zip(gold, pred, strict=True))
        if any(c == kind for c, _g, _p in classify(g, p))
    ]


def analysis(words, gold, pred) -> dict:
    """Entity-length and sentence-length buckets and the error kinds of one system."""
    return {
        "entity_length": bucket_prf(words, gold, pred, "entity_length"),
        "sentence_length": bucket_prf(words, gold, pred, "sentence_length"),
        "errors": error_kinds(gold, pred),
    }


def _f_table(title: str, names: list[str], rows: list[str], cell) -> list[str]:
    lines = [
        title,
        "",
        "| | " + " | ".join(f"{n} F" for n in names) + " | gold entities |",
        "|---|" + "---|" * (len(names) + 1),
    ]
    for r in rows:
        lines.append(
            f"| {r} | " + " | ".join(cell(n, r)[0] for n in names) + f" | {cell(names[0], r)[1]} |"
        )
    return lines + [""]


def analysis_lines(systems: dict[str, dict]) -> list[str]:
    """Markdown tables of several systems side by side: ``systems`` maps a name to a breakdown
    (:func:`~nerstudio.experiments.breakdown.breakdown` with the :func:`analysis` keys)."""
    names = list(systems)
    if not names:
        return []
    lines: list[str] = []
    for key, title in (
        ("per_type", "F by entity type:"),
        ("entity_length", "F by entity length:"),
        ("sentence_length", "F by sentence length:"),
    ):
        rows = list(dict.fromkeys(r for n in names for r in systems[n].get(key, {})))

        def cell(n, r, key=key):
            d = systems[n].get(key, {}).get(r)
            return (f"{d['f1']:.2f}" if d and (d["gold"] or d["proposed"]) else "–"), (
                d["gold"] if d else 0
            )

        lines += _f_table(
            title,
            names,
            [r or "(untyped)" for r in rows],
            lambda n, r, c=cell: c(n, "" if r == "(untyped)" else r),
        )
    if all("seen" in systems[n] for n in names):
        lines += _f_table(
            "F over entities seen / unseen in training:",
            names,
            ["seen", "unseen"],
            lambda n, r: (f"{systems[n][r]['f1']:.2f}", systems[n][r]["gold"]),
        )
    if all("errors" in systems[n] for n in names):
        lines += [
            "Entities by kind of error (each gold entity once; spurious: proposals overlapping no gold):",
            "",
            "| | " + " | ".join(names) + " |",
            "|---|" + "---|" * len(names),
        ]
        for kind in KINDS:
            lines.append(
                f"| {kind} | " + " | ".join(str(systems[n]["errors"][kind]) for n in names) + " |"
            )
        lines.append("")
    return lines


def error_sentences(words, gold, pred, seen: set | None = None) -> dict[str, list[int]]:
    """For every row of the tables, the sentences where the system errs there — an entity of
    that bucket missed or wrongly proposed, or an entity of that kind: ``"entity_length:2 words"``,
    ``"sentence_length:11–20"``, ``"seen:unseen"``, ``"errors:boundary"`` → sentence indices."""
    out: dict[str, list[int]] = {}
    for k, (ws, g, p) in enumerate(zip(words, gold, pred, strict=True)):
        wrong = set(g) ^ set(p)
        keys = set()
        for sp in wrong:
            keys.add("entity_length:" + _bucket(sp.end - sp.start, ENTITY_LENGTHS))
            if seen is not None:
                keys.add("seen:" + ("seen" if tuple(ws[sp.start : sp.end]) in seen else "unseen"))
        if wrong:
            keys.add("sentence_length:" + _bucket(len(ws), SENTENCE_LENGTHS))
        keys.update("errors:" + c for c, _g, _p in classify(g, p) if c != "correct")
        for key in keys:
            out.setdefault(key, []).append(k)
    return out
