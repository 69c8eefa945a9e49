"""The registry of learners (nerstudio.learners) agrees with the learners themselves, and costs
nothing to import."""

from __future__ import annotations

import dataclasses
import inspect
import json
import subprocess
import sys

import pytest

from nerstudio.errors import SettingsError
from nerstudio.learners import RERANKERS, TAGGERS, reranker, sequence_taggers, tagger


def _constructor_defaults(cls) -> dict:
    return {
        k: p.default
        for k, p in inspect.signature(cls.__init__).parameters.items()
        if k != "self" and p.default is not inspect.Parameter.empty
    }


@pytest.mark.parametrize("name", list(RERANKERS))
def test_a_reranker_row_is_its_class(name):
    row = RERANKERS[name]
    cls = row.cls()
    learner = cls(**row.fixed)
    assert learner.algo == name
    assert cls.unit == row.unit
    # the offered defaults are what an untrained learner reports, and its constructor's
    assert learner.get_params() == dict(row.defaults)
    assert {k: v for k, v in _constructor_defaults(cls).items() if k in row.defaults} == dict(
        row.defaults
    )


@pytest.mark.parametrize("name", list(TAGGERS))
def test_a_tagger_row_is_its_class(name):
    from nerstudio.tagging.perceptron import PerceptronTagger

    row = TAGGERS[name]
    cls = row.cls()
    own = _constructor_defaults(cls)
    local = _constructor_defaults(PerceptronTagger)  # a joint tagger's local model
    params = cls(**row.fixed).get_params() if hasattr(cls, "get_params") else {}
    for key, value in row.defaults.items():
        if key in own:
            assert own[key] == value, key
            if key in params:
                assert params[key] == value, key
        elif key == "n_test":  # the window's list size for a local tagger: no model setting
            assert row.target.endswith(":PerceptronTagger")
        else:
            assert local[key] == value, key
    for key, value in row.fixed.items():
        assert key in own and params.get(key, value) == value


def test_the_experiment_settings_a_reranker_takes_are_settings_of_both():
    from nerstudio.experiments.collins import ExperimentConfig

    fields = {f.name for f in dataclasses.fields(ExperimentConfig)}
    for row in RERANKERS.values():
        assert set(row.experiment.values()) <= fields, row.name
        assert set(row.experiment) | set(row.experiment_fixed) <= set(row.defaults), row.name


def test_the_experiment_gives_each_reranker_its_settings():
    from nerstudio.experiments.collins import ExperimentConfig

    cfg = ExperimentConfig(boost_rounds=7, epochs=3, margin_C=2.5, kernel_sentences=11, seed=4)
    assert cfg.learner_params("boost") == {"rounds": 7, "epsilon": 0.0025, "eval_every": 1000}
    assert cfg.learner_params("margin") == {"epochs": 3, "beta": None, "seed": 4, "C": 2.5}
    kernel = cfg.learner_params("kernel")
    assert kernel["epochs"] == 1 and kernel["max_sentences"] == 11 and kernel["seed"] == 4


def test_an_unknown_name_is_a_settings_error_naming_the_choices():
    with pytest.raises(SettingsError, match="boost"):
        reranker("nope")
    with pytest.raises(SettingsError, match="maxent"):
        tagger("nope")
    assert sequence_taggers() == ("perceptron", "averaged", "margin", "candidate", "proposed")


def test_the_registry_imports_no_learner():
    code = "import json, sys; import nerstudio.learners; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    heavy = {"numpy", "scipy", "numba", "nerstudio.rerank", "nerstudio.tagging"}
    assert not (heavy & loaded), heavy & loaded


def test_each_feature_family_is_a_global_features_setting_the_experiment_sets():
    from nerstudio.experiments.collins import ExperimentConfig
    from nerstudio.learners import FEATURE_FAMILIES
    from nerstudio.rerank.features import GlobalFeatures

    keywords = set(inspect.signature(GlobalFeatures).parameters)
    fields = {f.name for f in dataclasses.fields(ExperimentConfig)}
    for family in FEATURE_FAMILIES.values():
        assert family.keyword in keywords and family.experiment in fields, family.keyword
        assert getattr(GlobalFeatures(), family.keyword) in (False, None), family.keyword
