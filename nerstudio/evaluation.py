"""Span evaluation with conlleval semantics, relative error reduction, and N-best oracle F.

An entity is correct when its type, first and last token all match a gold entity (exact span
match). Precision = correct / proposed, recall = correct / gold, F = 2PR / (P + R), all in
percent. Spans come from the tags with conlleval's reading (see :mod:`nerstudio.corpus.schemes`);
these numbers equal ``seqeval`` in its default mode, and in ``mode="strict"`` (where invalid
transitions form no entity) seqeval's strict mode for IOB2 and BIOES.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .corpus.model import Sentence, Span
from .corpus.schemes import encode
from .errors import FormatError


@dataclass
class PRF:
    """Counts and scores for one entity type (or all of them)."""

    correct: int = 0
    proposed: int = 0
    gold: int = 0

    @property
    def precision(self) -> float:
        return 100.0 * self.correct / self.proposed if self.proposed else 0.0

    @property
    def recall(self) -> float:
        return 100.0 * self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, other: PRF) -> None:
        self.correct += other.correct
        self.proposed += other.proposed
        self.gold += other.gold

    def as_dict(self) -> dict:
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "correct": self.correct,
            "proposed": self.proposed,
            "gold": self.gold,
        }


@dataclass
class Evaluation:
    """Overall and per-type scores, plus token accuracy."""

    overall: PRF = field(default_factory=PRF)
    per_type: dict[str, PRF] = field(default_factory=dict)
    tokens: int = 0
    tokens_correct: int = 0
    sentences: int = 0

    @property
    def precision(self) -> float:
        return self.overall.precision

    @property
    def recall(self) -> float:
        return self.overall.recall

    @property
    def f1(self) -> float:
        return self.overall.f1

    @property
    def token_accuracy(self) -> float:
        """Percentage of tokens whose IOB2 tag (derived from the spans) is right."""
        return 100.0 * self.tokens_correct / self.tokens if self.tokens else 0.0

    def add_sentence(
        self, gold: Sequence[Span], pred: Sequence[Span], n_tokens: int | None = None
    ) -> None:
        self.sentences += 1
        gset, pset = set(gold), set(pred)
        for sp in gset:
            self.per_type.setdefault(sp.label, PRF()).gold += 1
        for sp in pset:
            self.per_type.setdefault(sp.label, PRF()).proposed += 1
        for sp in gset & pset:
            self.per_type[sp.label].correct += 1
        self.overall.gold += len(gset)
        self.overall.proposed += len(pset)
        self.overall.correct += len(gset & pset)
        if n_tokens is not None:
            self.tokens += n_tokens
            g = encode(gold, n_tokens, "iob2")
            p = encode(pred, n_tokens, "iob2")
            self.tokens_correct += sum(a == b for a, b in zip(g, p))

    def as_dict(self) -> dict:
        d = {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "correct": self.overall.correct,
            "proposed": self.overall.proposed,
            "gold": self.overall.gold,
            "token_accuracy": self.token_accuracy,
            "sentences": self.sentences,
            "tokens": self.tokens,
            "per_type": {k: v.as_dict() for k, v in sorted(self.per_type.items())},
        }
        return d

    def table(self) -> str:
        """A conlleval-like text table."""
        lines = [
            f"sentences: {self.sentences}; tokens: {self.tokens}; gold entities: {self.overall.gold}; "
            f"proposed: {self.overall.proposed}; correct: {self.overall.correct}",
            f"token accuracy: {self.token_accuracy:6.2f}%",
            f"{'type':<16}{'precision':>10}{'recall':>10}{'F1':>10}{'gold':>8}{'proposed':>10}",
        ]
        rows = sorted(self.per_type.items()) + [("overall", self.overall)]
        for name, m in rows:
            lines.append(
                f"{name or '(untyped)':<16}{m.precision:10.2f}{m.recall:10.2f}{m.f1:10.2f}"
                f"{m.gold:8d}{m.proposed:10d}"
            )
        return "\n".join(lines)


def evaluate_spans(
    gold: Iterable[Sequence[Span]],
    pred: Iterable[Sequence[Span]],
    lengths: Iterable[int] | None = None,
) -> Evaluation:
    """Evaluate parallel sequences of span lists (one list per sentence)."""
    ev = Evaluation()
    if lengths is None:
        for g, p in zip(gold, pred, strict=True):
            ev.add_sentence(g, p)
    else:
        for g, p, n in zip(gold, pred, lengths, strict=True):
            ev.add_sentence(g, p, n)
    return ev


def evaluate_sentences(
    gold: Iterable[Sentence],
    pred: Iterable[Sentence],
    gold_path: str | None = None,
    pred_path: str | None = None,
) -> Evaluation:
    """Evaluate two aligned streams of sentences; their tokens must match one to one.

    A prediction whose tokens differ from the gold ones (other sentences, shuffled or shifted
    ones) raises :class:`FormatError` at the first differing line of the prediction file, naming
    the gold line too: scoring misaligned files would give a wrong F without a word.
    """
    ev = Evaluation()
    gi, pi = iter(gold), iter(pred)
    k = 0
    while True:
        g = next(gi, None)
        p = next(pi, None)
        if g is None and p is None:
            break
        k += 1
        if g is None or p is None:
            longer, path = (p, pred_path) if g is None else (g, gold_path)
            other = gold_path if g is None else pred_path
            raise FormatError(
                path,
                (longer.line or None) if longer is not None else None,
                f"has more sentences than {other or 'the other file'} (which ends after {k - 1})",
            )
        check_aligned(g, p, k, gold_path, pred_path)
        ev.add_sentence(g.spans, p.spans, len(g.words))
    return ev


def _token_line(s, i: int) -> int | None:
    """The line of token ``i`` of ``s``: its own line in a column file, the record's in JSONL."""
    if not getattr(s, "line", 0):
        return None
    return s.line if getattr(s, "raw", None) is not None else s.line + i


def check_aligned(g, p, k: int, gold_path, pred_path) -> None:
    """Raise :class:`FormatError` unless sentence ``k`` has the same tokens in the gold sentence
    ``g`` and the predicted one ``p`` (naming the first differing line of both files)."""
    if tuple(g.words) == tuple(p.words):
        return
    for i, (a, b) in enumerate(zip(g.words, p.words)):
        if a != b:
            gl = _token_line(g, i)
            where = f"{gold_path or 'the gold file'}" + (f":{gl}" if gl else "")
            raise FormatError(
                pred_path,
                _token_line(p, i),
                f"token {b!r} differs from the gold token {a!r} at {where} (sentence {k}, token "
                f"{i + 1}): the files are not aligned",
            )
    where = f" at {gold_path}:{g.line}" if gold_path and g.line else ""
    raise FormatError(
        pred_path,
        p.line or None,
        f"sentence {k} has {len(p.words)} tokens but the gold sentence{where} has {len(g.words)}",
    )


def relative_error_reduction(base: float, new: float) -> float:
    """Collins 2002 Fig. 5: (new − base) / (100 − base), in percent of the baseline's error."""
    if base >= 100.0:
        return 0.0
    return 100.0 * (new - base) / (100.0 - base)


# --------------------------------------------------------------------------------------------
# N-best oracle


@dataclass
class OracleResult:
    f1: float
    precision: float
    recall: float
    choice: list[int]  # chosen candidate per sentence
    gold_in_list: int  # sentences whose exact gold analysis is among the candidates


def oracle(
    gold: Sequence[Sequence[Span]],
    candidates: Sequence[Sequence[Sequence[Span]]],
    n: int | None = None,
) -> OracleResult:
    """The best corpus F reachable by picking one of the first ``n`` candidates per sentence.

    Maximises F = 2C / (G + P) exactly (not a per-sentence approximation) with Dinkelbach's
    method: for a ratio λ, each sentence independently takes the candidate maximising
    2·correct − λ·proposed; λ is raised to the resulting F until it stops changing. Ties go to
    the better-ranked candidate.
    """
    stats = []  # per sentence: list of (correct, proposed)
    G = 0
    gold_in = 0
    for g, cands in zip(gold, candidates, strict=True):
        gs = set(g)
        G += len(gs)
        cs = list(cands[:n] if n else cands)
        if not cs:
            cs = [[]]
        row = [(len(gs & set(c)), len(set(c))) for c in cs]
        stats.append(row)
        if any(set(c) == gs for c in cs):
            gold_in += 1
    choice = [0] * len(stats)
    lam = -1.0
    for _ in range(100):
        C = P = 0
        for i, row in enumerate(stats):
            best, best_v = 0, -math.inf
            for j, (c, p) in enumerate(row):
                v = 2 * c - max(lam, 0.0) * p
                if v > best_v + 1e-12:
                    best, best_v = j, v
            choice[i] = best
            C += row[best][0]
            P += row[best][1]
        f_new = 2 * C / (G + P) if G + P else 0.0
        if f_new <= lam + 1e-15:
            break
        lam = f_new
    C = sum(stats[i][j][0] for i, j in enumerate(choice))
    P = sum(stats[i][j][1] for i, j in enumerate(choice))
    prec = 100.0 * C / P if P else 0.0
    rec = 100.0 * C / G if G else 0.0
    return OracleResult(
        100.0 * (2 * C / (G + P) if G + P else 0.0), prec, rec, list(choice), gold_in
    )
