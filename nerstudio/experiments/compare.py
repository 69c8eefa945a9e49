"""Baseline against reranked output over a whole N-best list, with the N-best oracle (no Qt).

:func:`compare_outputs` takes an N-best list with gold and the reranker's pick per sentence and
returns the overall and per-type P/R/F of the tagger's top candidate, of the reranked output and
of the corpus oracle (the best reachable F, :func:`nerstudio.evaluation.oracle`), plus per
sentence: whether the reranker changed the candidate, whether each output is exactly the gold,
the rank of the gold analysis among the candidates (0 when absent) and the sentence's verdict:

``fixed``   the baseline was wrong, the reranked output is exactly the gold;
``broken``  the baseline was exactly the gold, the reranked output is not;
``better`` / ``worse``  both wrong, but the reranked output has more / fewer correct entities
            minus wrong ones (2·correct − proposed);
``same``    anything else (including changes that neither help nor hurt).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import Cancelled, DataError
from ..evaluation import Evaluation, evaluate_spans, oracle
from ..nbest import NBestList

VERDICTS = ("fixed", "broken", "better", "worse", "same")


@dataclass
class SentenceComparison:
    index: int  # N-best sentence
    choice: int  # reranker's pick (0 = the tagger's top)
    baseline_exact: bool
    reranked_exact: bool
    gold_rank: int  # 1-based rank of the exact gold among the candidates, 0 if absent
    verdict: str
    baseline_f: float  # sentence span F (percent)
    reranked_f: float


@dataclass
class OutputComparison:
    baseline: Evaluation
    reranked: Evaluation
    oracle: Evaluation
    sentences: list[SentenceComparison] = field(default_factory=list)

    def of(self, verdict: str) -> list[SentenceComparison]:
        return [s for s in self.sentences if s.verdict == verdict]

    @property
    def fixed(self) -> list[int]:
        return [s.index for s in self.sentences if s.verdict == "fixed"]

    @property
    def broken(self) -> list[int]:
        return [s.index for s in self.sentences if s.verdict == "broken"]

    @property
    def changed(self) -> int:
        return sum(1 for s in self.sentences if s.choice > 0)

    @property
    def gold_in_list(self) -> int:
        return sum(1 for s in self.sentences if s.gold_rank > 0)

    def types(self) -> list[str]:
        return sorted(
            set(self.baseline.per_type) | set(self.reranked.per_type) | set(self.oracle.per_type)
        )


def _f(gold: set, pred: set) -> float:
    if not gold and not pred:
        return 100.0
    return 200.0 * len(gold & pred) / (len(gold) + len(pred))


def compare_outputs(
    nbest: NBestList, choice, should_cancel=None, progress=None
) -> OutputComparison:
    """Compare the top candidate with ``choice`` (one candidate index per sentence).

    ``should_cancel()`` is checked every 512 sentences (raises
    :class:`~nerstudio.errors.Cancelled`); ``progress(done, total)`` reports the sentences done."""
    if nbest.gold is None:
        raise DataError("the N-best list has no gold entities: nothing to compare against")
    choice = np.asarray(choice, dtype=np.int64)
    if len(choice) != len(nbest):
        raise ValueError(f"{len(choice)} choices for {len(nbest)} sentences")
    S = len(nbest)

    def check(i: int) -> None:
        if (i & 511) == 511:
            if should_cancel is not None and should_cancel():
                raise Cancelled("comparison cancelled")
            if progress is not None:
                progress(i + 1, 2 * S)

    gold = [list(g) for g in nbest.gold]
    n_c = [nbest.n_candidates(i) for i in range(S)]
    base = [nbest.spans(i, 0) if n_c[i] else [] for i in range(S)]
    rer = [nbest.spans(i, int(c)) if n_c[i] and c >= 0 else [] for i, c in enumerate(choice)]
    cands = []
    for i in range(S):
        check(i)
        cands.append(nbest.candidate_spans(i))
    if should_cancel is not None and should_cancel():
        raise Cancelled("comparison cancelled")
    orc = oracle(gold, cands)
    orc_spans = [cands[i][j] if cands[i] else [] for i, j in enumerate(orc.choice)]
    out = OutputComparison(
        evaluate_spans(gold, base), evaluate_spans(gold, rer), evaluate_spans(gold, orc_spans)
    )
    for i in range(S):
        check(S + i)
        g = set(gold[i])
        b, r = set(base[i]), set(rer[i])
        rank = next((j + 1 for j, c in enumerate(cands[i]) if set(c) == g), 0)
        be, re_ = b == g, r == g
        if not be and re_:
            verdict = "fixed"
        elif be and not re_:
            verdict = "broken"
        else:
            sb = 2 * len(g & b) - len(b)
            sr = 2 * len(g & r) - len(r)
            verdict = "better" if sr > sb else ("worse" if sr < sb else "same")
        out.sentences.append(
            SentenceComparison(i, int(choice[i]), be, re_, rank, verdict, _f(g, b), _f(g, r))
        )
    return out
