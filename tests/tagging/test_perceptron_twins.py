"""One training run fits the averaged perceptron and the plain one beside it
(``PerceptronTagger.fit(plain=...)``): each ends exactly as it would fitted alone."""

from __future__ import annotations

import numpy as np
import pytest

from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import SettingsError
from nerstudio.tagging.perceptron import PerceptronTagger


@pytest.fixture(scope="module")
def demo():
    return read_corpus(DEMO_DIR / "train.conll"), read_corpus(DEMO_DIR / "dev.conll")


def _settings(**kw):
    return {"features": "kt+rich", "gazetteer": "lists", "epochs": 6, "patience": 2, **kw}


def _same(a: PerceptronTagger, b: PerceptronTagger, dev) -> None:
    np.testing.assert_array_equal(a.weights_, b.weights_)
    assert (a.best_epoch_, a.best_dev_f1_, a.epochs_run_) == (
        b.best_epoch_,
        b.best_dev_f1_,
        b.epochs_run_,
    )
    strip = [(h.epoch, h.phase, h.updates, h.word_error, h.dev_f1, h.best) for h in a.history_]
    assert strip == [
        (h.epoch, h.phase, h.updates, h.word_error, h.dev_f1, h.best) for h in b.history_
    ]
    assert a.predict_spans(dev) == b.predict_spans(dev)


@pytest.mark.slow
@pytest.mark.parametrize(
    "averaged, plain",
    [
        ({"variant": "averaged"}, {"variant": "perceptron"}),
        ({"variant": "margin", "C": 50.0, "average": True}, {"variant": "margin", "C": 50.0}),
    ],
    ids=["perceptron", "margin"],
)
def test_twins_end_as_each_fitted_alone(demo, averaged, plain):
    train, dev = demo
    alone_avg = PerceptronTagger(**_settings(**averaged)).fit(train, dev)
    alone_plain = PerceptronTagger(**_settings(**plain)).fit(train, dev)
    heard = []
    twin = PerceptronTagger(**_settings(**plain))
    avg = PerceptronTagger(**_settings(**averaged)).fit(
        train, dev, plain=twin, plain_callback=heard.append
    )
    _same(avg, alone_avg, dev)
    _same(twin, alone_plain, dev)
    assert [h.dev_f1 for h in heard] == [h.dev_f1 for h in twin.history_]
    # the two dev curves are not the same curve: the test can tell the heads apart
    assert [h.dev_f1 for h in avg.history_] != [h.dev_f1 for h in twin.history_]
    # the twin saves and loads as a model of its own
    assert twin.variant == plain["variant"] and twin.features_ is not avg.features_


@pytest.mark.parametrize(
    "averaged, plain",
    [
        ({"variant": "averaged", "bpm": 1}, {"variant": "perceptron", "bpm": 1}),
        ({"variant": "averaged"}, {"variant": "perceptron", "cutoff": 3}),
        ({"variant": "averaged"}, {"variant": "margin"}),
        ({"variant": "perceptron"}, {"variant": "perceptron"}),
    ],
    ids=["bpm", "other-settings", "other-rule", "not-averaging"],
)
def test_twins_that_would_part_are_refused(demo, averaged, plain):
    train, dev = demo
    with pytest.raises(SettingsError, match="plain="):
        PerceptronTagger(**_settings(**averaged)).fit(
            train, dev, plain=PerceptronTagger(**_settings(**plain))
        )


@pytest.mark.slow
def test_a_fitted_tagger_can_be_fitted_again_with_a_twin(demo):
    """The settings compared are the constructor's, not what an earlier fit left behind."""
    train, dev = demo
    avg = PerceptronTagger(**_settings(variant="averaged")).fit(train, dev)
    twin = PerceptronTagger(**_settings(variant="perceptron"))
    avg.fit(train, dev, plain=twin)
    assert twin.best_epoch_ is not None
