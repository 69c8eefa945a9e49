"""Where a system gains or loses: test F by entity type and by seen / unseen entity.

An entity is *seen* when its exact word sequence is the string of some gold entity of the
training corpus (of any type), else *unseen*; gold entities are classed by their own string, and
so are a system's proposed entities, so precision, recall and F are defined within each class
(a correct entity is in the same class on both sides). Unseen entities are where gazetteers and
document context can help: a linguist reads this table to see which resource or learner helps
where. The same dict also holds F by entity length and by sentence length and the errors by kind
(:mod:`.error_analysis`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..corpus.model import Span
from ..evaluation import evaluate_spans
from .error_analysis import analysis, analysis_lines, group_prf


def training_strings(sentences) -> set[tuple[str, ...]]:
    """The word sequences of the gold entities of a corpus's sentences."""
    return {tuple(s.words[sp.start : sp.end]) for s in sentences for sp in s.spans}


def breakdown(
    words: Sequence[Sequence[str]],
    gold: Sequence[Sequence[Span]],
    pred: Sequence[Sequence[Span]],
    seen: set[tuple[str, ...]],
) -> dict:
    """``per_type`` (P/R/F and counts per entity type) and ``seen`` / ``unseen`` (the same over
    each class of entities), as plain dicts."""
    ev = evaluate_spans(gold, pred)
    cls = group_prf(
        words, gold, pred, lambda ws, sp: tuple(ws[sp.start : sp.end]) in seen, (True, False)
    )
    return {
        "per_type": {k: v.as_dict() for k, v in sorted(ev.per_type.items())},
        "seen": cls[True].as_dict(),
        "unseen": cls[False].as_dict(),
        **analysis(words, gold, pred),
    }


def breakdown_lines(systems: Iterable[dict]) -> list[str]:
    """A markdown table: per system, test F by type and over seen / unseen entities."""
    systems = [s for s in systems if s.get("test_breakdown")]
    if not systems:
        return []
    types = sorted({t for s in systems for t in s["test_breakdown"]["per_type"]})
    first = systems[0]["test_breakdown"]
    n_seen, n_unseen = first["seen"]["gold"], first["unseen"]["gold"]
    share = 100.0 * n_unseen / max(n_seen + n_unseen, 1)
    lines = [
        f"Test F by entity type and by entities seen / unseen in training ({share:.1f}% of the "
        f"{n_seen + n_unseen} test entities are unseen):",
        "",
        "| system | "
        + " | ".join(t or "(untyped)" for t in types)
        + " | seen F | unseen F | unseen P / R |",
        "|---|" + "---|" * (len(types) + 3),
    ]
    for s in systems:
        b = s["test_breakdown"]
        cells = [f"{b['per_type'].get(t, {}).get('f1', 0.0):.2f}" for t in types]
        lines.append(
            f"| {s['name']} | "
            + " | ".join(cells)
            + f" | {b['seen']['f1']:.2f} | {b['unseen']['f1']:.2f} | "
            f"{b['unseen']['precision']:.2f} / {b['unseen']['recall']:.2f} |"
        )
    detail = {s["name"]: s["test_breakdown"] for s in systems if "errors" in s["test_breakdown"]}
    if detail:  # the systems side by side: F by entity and sentence length, the errors by kind
        lines += ["", "Test F in detail (as `nerstudio errors` prints it):", ""] + analysis_lines(
            detail
        )
    return lines
