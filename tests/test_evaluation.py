"""Span evaluation, relative error reduction and the N-best oracle."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nerstudio.corpus import Sentence, Span
from nerstudio.errors import FormatError
from nerstudio.evaluation import (
    PRF,
    evaluate_sentences,
    evaluate_spans,
    oracle,
    relative_error_reduction,
)

GOLD = [[Span(0, 2, "PER"), Span(3, 4, "LOC")], [Span(1, 2, "ORG")]]
PRED = [[Span(0, 2, "PER"), Span(3, 5, "LOC")], [Span(1, 2, "ORG"), Span(0, 1, "MISC")]]


def test_hand_computed_scores():
    ev = evaluate_spans(GOLD, PRED, [5, 3])
    # correct 2 (PER, ORG), proposed 4, gold 3
    assert (ev.overall.correct, ev.overall.proposed, ev.overall.gold) == (2, 4, 3)
    assert ev.precision == pytest.approx(50.0)
    assert ev.recall == pytest.approx(200 / 3)
    assert ev.f1 == pytest.approx(2 * 50 * (200 / 3) / (50 + 200 / 3))
    assert ev.f1 == pytest.approx(100 * 2 * 2 / (3 + 4))  # F = 2C / (G + P)
    per = ev.per_type
    assert sorted(per) == ["LOC", "MISC", "ORG", "PER"]
    assert (per["PER"].precision, per["PER"].recall, per["PER"].f1) == (100.0, 100.0, 100.0)
    assert (per["LOC"].correct, per["LOC"].proposed, per["LOC"].gold) == (0, 1, 1)
    assert per["LOC"].f1 == 0.0
    assert (per["MISC"].proposed, per["MISC"].gold, per["MISC"].recall, per["MISC"].f1) == (
        1,
        0,
        0.0,
        0.0,
    )
    # token accuracy over IOB2 tags: sentence 1 has 4/5 right (I-LOC vs O), sentence 2 has 2/3 (B-MISC vs O)
    assert (ev.tokens, ev.tokens_correct) == (8, 6)
    assert ev.token_accuracy == pytest.approx(75.0)
    assert ev.sentences == 2


def test_per_type_sums_to_overall():
    ev = evaluate_spans(GOLD, PRED)
    total = PRF()
    for m in ev.per_type.values():
        total.add(m)
    assert (total.correct, total.proposed, total.gold) == (
        ev.overall.correct,
        ev.overall.proposed,
        ev.overall.gold,
    )
    assert ev.tokens == 0 and ev.token_accuracy == 0.0  # no lengths given


def test_as_dict_and_table():
    ev = evaluate_spans(GOLD, PRED, [5, 3])
    d = ev.as_dict()
    assert {
        "precision",
        "recall",
        "f1",
        "correct",
        "proposed",
        "gold",
        "token_accuracy",
        "sentences",
        "tokens",
        "per_type",
    } <= set(d)
    assert d["per_type"]["PER"] == {
        "precision": 100.0,
        "recall": 100.0,
        "f1": 100.0,
        "correct": 1,
        "proposed": 1,
        "gold": 1,
    }
    assert list(d["per_type"]) == sorted(d["per_type"])
    table = ev.table()
    assert "token accuracy:  75.00%" in table
    last = table.splitlines()[-1].split()
    assert last[0] == "overall" and float(last[1]) == pytest.approx(50.0)
    assert float(last[3]) == pytest.approx(57.14, abs=0.01)


def test_untyped_entities_in_table():
    ev = evaluate_spans([[Span(0, 1, "")]], [[Span(0, 1, "")]])
    assert ev.f1 == 100.0 and "(untyped)" in ev.table()


def test_perfect_and_empty():
    ev = evaluate_spans(GOLD, GOLD, [5, 3])
    assert (ev.precision, ev.recall, ev.f1, ev.token_accuracy) == (100.0, 100.0, 100.0, 100.0)
    ev = evaluate_spans([[], []], [[], []], [2, 2])
    assert (ev.precision, ev.recall, ev.f1) == (0.0, 0.0, 0.0)
    assert ev.token_accuracy == 100.0
    ev = evaluate_spans([[Span(0, 1, "X")]], [[]])
    assert (ev.precision, ev.recall, ev.f1) == (0.0, 0.0, 0.0)


def test_duplicate_spans_count_once():
    ev = evaluate_spans([[Span(0, 1, "X")]], [[Span(0, 1, "X"), Span(0, 1, "X")]])
    assert (ev.overall.correct, ev.overall.proposed) == (1, 1)


def test_evaluate_spans_length_mismatch():
    with pytest.raises(ValueError):
        evaluate_spans(GOLD, PRED[:1])


def test_relative_error_reduction():
    # Collins 2002, Fig. 5: 85.3 -> 87.6 removes 15.6% of the baseline's errors
    assert relative_error_reduction(85.3, 87.6) == pytest.approx(15.646, abs=1e-3)
    assert round(relative_error_reduction(85.3, 87.6), 1) == 15.6
    assert relative_error_reduction(90.0, 95.0) == pytest.approx(50.0)
    assert relative_error_reduction(90.0, 85.0) == pytest.approx(-50.0)
    assert relative_error_reduction(100.0, 100.0) == 0.0


# --------------------------------------------------------------------------------------------
# evaluate_sentences: aligned streams


def _sents(spec):
    return [Sentence([f"w{i}" for i in range(n)], spans, line=line) for n, spans, line in spec]


def test_evaluate_sentences_matches_evaluate_spans():
    gold = _sents([(5, GOLD[0], 1), (3, GOLD[1], 7)])
    pred = _sents([(5, PRED[0], 1), (3, PRED[1], 7)])
    a = evaluate_sentences(iter(gold), iter(pred)).as_dict()
    b = evaluate_spans(GOLD, PRED, [5, 3]).as_dict()
    assert a == b


def test_evaluate_sentences_token_mismatch():
    gold = _sents([(5, [], 1), (3, [], 7)])
    pred = _sents([(5, [], 1), (4, [], 7)])
    with pytest.raises(FormatError) as info:
        evaluate_sentences(gold, pred, "gold.txt", "pred.txt")
    assert info.value.path == "pred.txt" and info.value.line == 7
    assert "sentence 2 has 4 tokens but the gold sentence at gold.txt:7 has 3" in str(info.value)


@pytest.mark.parametrize("longer", ["gold", "pred"])
def test_evaluate_sentences_sentence_count_mismatch(longer):
    short = _sents([(2, [], 1)])
    long = _sents([(2, [], 1), (1, [], 4)])
    gold, pred = (long, short) if longer == "gold" else (short, long)
    with pytest.raises(FormatError) as info:
        evaluate_sentences(gold, pred, "gold.txt", "pred.txt")
    other = "pred.txt" if longer == "gold" else "gold.txt"
    assert (
        str(info.value) == f"{longer}.txt:4: has more sentences than {other} (which ends after 1)"
    )


def test_evaluate_sentences_without_paths():
    with pytest.raises(FormatError, match="the other file"):
        evaluate_sentences(_sents([(1, [], 0)]), [])


# --------------------------------------------------------------------------------------------
# Oracle


def _brute_force(gold, candidates, n=None):
    G = sum(len(set(g)) for g in gold)
    rows = []
    for g, cands in zip(gold, candidates):
        cs = list(cands[:n] if n else cands) or [[]]
        rows.append([(len(set(g) & set(c)), len(set(c))) for c in cs])
    best = 0.0
    for choice in itertools.product(*[range(len(r)) for r in rows]):
        C = sum(rows[i][j][0] for i, j in enumerate(choice))
        P = sum(rows[i][j][1] for i, j in enumerate(choice))
        best = max(best, 100.0 * 2 * C / (G + P) if G + P else 0.0)
    return best


def _f_of_choice(gold, candidates, choice):
    C = P = G = 0
    for g, cands, j in zip(gold, candidates, choice):
        c = set(cands[j]) if cands else set()
        C += len(set(g) & c)
        P += len(c)
        G += len(set(g))
    return C, P, G


SPAN_POOL = [
    Span(0, 1, "A"),
    Span(0, 1, "B"),
    Span(0, 2, "A"),
    Span(1, 2, "A"),
    Span(2, 3, "B"),
    Span(3, 4, "A"),
]
span_sets = st.lists(st.sampled_from(SPAN_POOL), max_size=3, unique=True)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(st.tuples(span_sets, st.lists(span_sets, max_size=4)), min_size=1, max_size=4),
    n=st.sampled_from([None, 1, 2, 3]),
)
def test_property_oracle_is_exact_maximum(data, n):
    gold = [g for g, _ in data]
    cands = [c for _, c in data]
    res = oracle(gold, cands, n=n)
    assert res.f1 == pytest.approx(_brute_force(gold, cands, n), abs=1e-9)
    # the reported choice achieves the reported scores
    assert len(res.choice) == len(gold)
    C, P, G = _f_of_choice(gold, cands, res.choice)
    assert all(0 <= j < max(1, len(c[:n] if n else c)) for j, c in zip(res.choice, cands))
    assert res.f1 == pytest.approx(100.0 * 2 * C / (G + P) if G + P else 0.0, abs=1e-9)
    assert res.precision == pytest.approx(100.0 * C / P if P else 0.0, abs=1e-9)
    assert res.recall == pytest.approx(100.0 * C / G if G else 0.0, abs=1e-9)
    # the oracle is never worse than the top-ranked candidates
    top = [c[:1] for c in cands]
    assert res.f1 >= _brute_force(gold, top, None) - 1e-9


def test_oracle_beats_per_sentence_greedy():
    """Maximising each sentence's own F is not the corpus optimum; the oracle finds the latter."""
    gold = [[Span(0, 1, "A")], [Span(0, 1, "A"), Span(1, 2, "A"), Span(2, 3, "A")]]
    cands = [
        [[Span(0, 1, "A"), Span(1, 2, "B"), Span(2, 3, "B"), Span(3, 4, "B")], []],  # F 0.4 vs 0
        [[Span(0, 1, "A"), Span(1, 2, "A"), Span(2, 3, "A")]],
    ]
    res = oracle(gold, cands)
    assert res.f1 == pytest.approx(_brute_force(gold, cands))
    # greedy takes candidate 0 in sentence 1 (F 40 > 0): corpus F = 2*4 / (4 + 7) = 72.7;
    # dropping its three wrong entities is better for the corpus: 2*3 / (4 + 3) = 85.7
    assert res.f1 == pytest.approx(100 * 2 * 3 / (4 + 3))
    assert res.choice == [1, 0]


def test_oracle_gold_in_list_and_truncation():
    g = [Span(0, 1, "A")]
    gold = [g, g, g]
    cands = [
        [[], g],  # gold second
        [g],  # gold first
        [[Span(0, 1, "B")]],  # gold absent
    ]
    res = oracle(gold, cands)
    assert res.gold_in_list == 2
    assert res.choice[:2] == [1, 0]
    assert res.f1 == pytest.approx(100 * 2 * 2 / (3 + 3))
    top1 = oracle(gold, cands, n=1)
    assert top1.gold_in_list == 1
    assert top1.choice == [0, 0, 0]
    assert top1.f1 == pytest.approx(100 * 2 * 1 / (3 + 2))
    assert oracle(gold, cands, n=2).f1 == pytest.approx(res.f1)


def test_oracle_ties_go_to_better_rank():
    g = [Span(0, 1, "A")]
    res = oracle([g, []], [[g, list(g)], [[], []]])
    assert res.choice == [0, 0] and res.f1 == 100.0


def test_oracle_no_entities_anywhere():
    res = oracle([[], []], [[[]], [[], []]])
    assert (res.f1, res.precision, res.recall) == (0.0, 0.0, 0.0)
    assert res.gold_in_list == 2


def test_oracle_mismatched_lengths():
    with pytest.raises(ValueError):
        oracle([[]], [])


def test_oracle_larger_random_instances_against_brute_force():
    import random

    rng = random.Random(7)
    for _ in range(30):
        k = rng.randint(2, 6)
        gold = [rng.sample(SPAN_POOL, rng.randint(0, 3)) for _ in range(k)]
        cands = [
            [rng.sample(SPAN_POOL, rng.randint(0, 4)) for _ in range(rng.randint(1, 4))]
            for _ in range(k)
        ]
        res = oracle(gold, cands)
        assert math.isclose(res.f1, _brute_force(gold, cands), abs_tol=1e-9)
