"""The Qt-free comparison of baseline and reranked output (nerstudio.experiments.compare)."""

from __future__ import annotations

import numpy as np
import pytest

from nerstudio.corpus.model import Span
from nerstudio.experiments.compare import compare_outputs
from nerstudio.nbest import NBestList

TAGSET = ["N", "S-PER", "C-PER", "S-LOC", "C-LOC"]


def _list():
    # three sentences of three tokens; ids: N=0, S-PER=1, C-PER=2, S-LOC=3
    words = [("a", "b", "c")] * 3
    cands = [
        np.array([[1, 0, 0], [3, 0, 0], [0, 0, 0]], dtype=np.int16),  # gold PER(0,1): top right
        np.array([[3, 0, 0], [1, 2, 0]], dtype=np.int16),  # gold PER(0,2): second
        np.array([[0, 0, 3], [0, 3, 0]], dtype=np.int16),
    ]  # gold LOC(1,2)? absent -> second
    lps = [np.array([-1.0, -2.0, -3.0]), np.array([-1.0, -2.0]), np.array([-1.0, -2.0])]
    gold = [[Span(0, 1, "PER")], [Span(0, 2, "PER")], [Span(1, 3, "LOC")]]
    return NBestList(TAGSET, words, cands, lps, gold)


def test_fixed_broken_ranks_and_scores():
    nb = _list()
    cmp_ = compare_outputs(nb, [1, 1, 0])
    v = [s.verdict for s in cmp_.sentences]
    assert v == ["broken", "fixed", "same"]
    assert cmp_.fixed == [1] and cmp_.broken == [0]
    assert [s.gold_rank for s in cmp_.sentences] == [1, 2, 0]
    assert cmp_.gold_in_list == 2 and cmp_.changed == 2
    # baseline: PER(0,1) ok, LOC(0,1) wrong, LOC(2,3) wrong -> 1 correct of 3 proposed, 3 gold
    assert cmp_.baseline.overall.correct == 1 and cmp_.baseline.overall.proposed == 3
    assert cmp_.reranked.overall.correct == 1
    assert cmp_.baseline.per_type["PER"].correct == 1 and cmp_.reranked.per_type["PER"].correct == 1
    # the oracle reaches the two gold analyses in the list
    assert cmp_.oracle.overall.correct == 2
    assert cmp_.oracle.f1 >= max(cmp_.baseline.f1, cmp_.reranked.f1)
    assert cmp_.types() == ["LOC", "PER"]


def test_better_and_worse_and_errors():
    nb = _list()
    nb.gold[2] = [Span(2, 3, "LOC"), Span(0, 1, "PER")]
    cmp_ = compare_outputs(nb, [0, 0, 1])
    assert cmp_.sentences[2].verdict == "worse"
    assert compare_outputs(nb, [0, 0, 0]).sentences[2].verdict == "same"
    with pytest.raises(ValueError):
        compare_outputs(nb, [0, 0])
    nb.gold = None
    with pytest.raises(ValueError):
        compare_outputs(nb, [0, 0, 0])
