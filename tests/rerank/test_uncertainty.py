"""Annotation order by uncertainty (nerstudio.rerank.uncertainty, ``nerstudio rank-uncertain``) on a
hand-made list whose probabilities, and so whose orderings, are known."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nerstudio.cli import main
from nerstudio.nbest import NBestList
from nerstudio.rerank.uncertainty import top_probabilities, uncertainty, uncertainty_order

# per sentence, the candidates' probabilities (best first): mass = the first, margin = first − second
PROBS = [
    [0.45, 0.45, 0.10],  # s1: mass .45, margin 0   (a tie)
    [0.90, 0.10],  # s2: mass .90, margin .80
    [0.40, 0.35, 0.25],  # s3: mass .40, margin .05 (the lowest mass)
    [1.00],
]  # s4: one candidate: mass 1, margin 1


def _list() -> NBestList:
    tagset = ["N", "S-PER", "S-LOC"]
    cands = [np.array([[k] for k in range(len(p))], dtype=np.int16) for p in PROBS]
    # unnormalised log-probabilities (a constant shift changes no softmax)
    logprobs = [np.log(np.array(p)) - 3.0 for p in PROBS]
    return NBestList(tagset, [("Linz",)] * 4, cands, logprobs, ids=["s1", "s2", "s3", "s4"])


class _Reranker:
    """Stands in for a RerankerModel: picks candidate 2 of s2, the tagger's top elsewhere."""

    def rerank(self, nb):
        return None, np.array([0, 1, 0, 0])


def test_measures_are_the_softmax_of_L():
    u = uncertainty(_list())
    assert u.mass == pytest.approx([0.45, 0.90, 0.40, 1.0])
    assert u.margin == pytest.approx([0.0, 0.80, 0.05, 1.0])
    assert u.choice is None and u.disagreement is None
    assert top_probabilities(np.zeros(0)) == (1.0, 0.0)


def test_orderings_most_uncertain_first():
    u = uncertainty(_list(), _Reranker())
    assert uncertainty_order(u, "mass").tolist() == [2, 0, 1, 3]
    assert uncertainty_order(u, "margin").tolist() == [0, 2, 1, 3]
    # the sentence the reranker overrules first, then the others by mass
    assert u.disagreement.tolist() == [False, True, False, False]
    assert uncertainty_order(u, "disagreement").tolist() == [1, 2, 0, 3]
    with pytest.raises(ValueError, match="needs a reranker"):
        uncertainty_order(uncertainty(_list()), "disagreement")


def test_cli_rank_uncertain(tmp_path, capsys):
    path = tmp_path / "hand.npz"
    _list().save(path)
    assert main(["rank-uncertain", str(path), "--by", "margin", "--top", "3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == ["s1", "s3", "s2"]
    assert rows[0]["mass"] == pytest.approx(0.45) and rows[0]["margin"] == pytest.approx(0.0)
    assert main(["rank-uncertain", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[3] for ln in lines[1:]] == ["s3:", "s1:", "s2:", "s4:"]
    assert main(["rank-uncertain", str(path), "--by", "disagreement"]) == 1
    assert "needs a reranker" in capsys.readouterr().err


def test_cli_rank_uncertain_with_the_demo_reranker(capsys):
    from nerstudio.demo import DEMO_MODEL_DIR
    from nerstudio.rerank.model import RerankerModel

    nb_path, model_path = DEMO_MODEL_DIR / "dev.nbest.npz", DEMO_MODEL_DIR / "reranker.npz"
    assert (
        main(
            [
                "rank-uncertain",
                str(nb_path),
                "--model",
                str(model_path),
                "--by",
                "disagreement",
                "--top",
                "0",
                "--json",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    nb = NBestList.load(nb_path)
    _, choice = RerankerModel.load(model_path).rerank(nb)
    assert len(rows) == len(nb)
    n_dis = int((choice != 0).sum())
    assert 0 < n_dis < len(nb)
    assert all(r["disagreement"] for r in rows[:n_dis]) and not any(
        r["disagreement"] for r in rows[n_dis:]
    )
    assert {r["index"] for r in rows[:n_dis]} == set(np.flatnonzero(choice).tolist())
    masses = [r["mass"] for r in rows[:n_dis]]
    assert masses == sorted(masses)
