"""What if (issue 24, point 7): an edited sentence decoded, featurised and reranked, and every
score change of a candidate explained exactly by its features and L(x)."""

from __future__ import annotations

import numpy as np
import pytest

from nerstudio.demo import DEMO_MODEL_DIR
from nerstudio.experiments.what_if import analyse, compare
from nerstudio.nbest import NBestList

pytestmark = pytest.mark.skipif(
    not (DEMO_MODEL_DIR / "reranker.npz").exists(), reason="demo model not built"
)


@pytest.fixture(scope="module")
def models():
    from nerstudio.rerank.model import RerankerModel
    from nerstudio.tagging.maxent import MaxEntTagger

    return MaxEntTagger.load(str(DEMO_MODEL_DIR / "tagger.npz")), RerankerModel.load(
        str(DEMO_MODEL_DIR / "reranker.npz")
    )


def test_an_unedited_dev_sentence_gives_the_stored_list_and_choice(models):
    tagger, model = models
    dev = NBestList.load(str(DEMO_MODEL_DIR / "dev.nbest.npz"))
    _d, choice = model.rerank(dev)
    for i in (0, 5, 17):
        w = analyse(tagger, model, list(dev.words[i]), n=dev.n_candidates(i))
        assert [w.nbest.spans(0, j) for j in range(len(w.scores))] == [
            dev.spans(i, j) for j in range(dev.n_candidates(i))
        ]
        assert w.choice == int(choice[i])


@pytest.mark.parametrize(
    "edit",
    [
        lambda ws: [x.lower() if x == "Opposition" else x for x in ws],  # the case of a word
        lambda ws: [x.upper() for x in ws],  # the case of every word
        lambda ws: ws[:2] + ["Northern"] + ws[2:],  # a token inserted
        lambda ws: ws[:-1],  # a token deleted
        lambda ws: [("Estovia" if x == "Meridia" else x) for x in ws],  # a word changed
    ],
)
def test_every_score_change_is_explained(models, edit):
    tagger, model = models
    words = [
        "Opposition",
        "leader",
        "Tomas",
        "Reyes",
        "said",
        "the",
        "vote",
        "in",
        "Meridia",
        "would",
        "come",
        "early",
        ".",
    ]
    old = analyse(tagger, model, words)
    new = analyse(tagger, model, edit(words))
    changes = compare(model, old, new, top=10**6)
    matched = [c for c in changes if c.before is not None]
    assert len(changes) == len(new.scores) and matched
    for c in matched:
        assert new.entities(c.j) == old.entities(c.before)
        assert c.delta == pytest.approx(new.scores[c.j] - old.scores[c.before])
        assert c.delta == pytest.approx(
            c.dL + sum(v for _n, v in c.gained) - sum(v for _n, v in c.lost), abs=1e-9
        )
    assert new.choice == int(np.argmax(new.scores))


def test_an_empty_sentence_is_refused(models):
    with pytest.raises(ValueError):
        analyse(*models, ["", ""])
