"""Loaders refuse what their own checks find wrong in a file, and nothing else.

A model or N-best file that fails a loader's check (a missing field or array, a value of the
wrong type, a shape, a range, a repeated name) is one line naming the file (CLI exit status 1).
A bug in nerstudio met while loading (an ``AttributeError``, a ``KeyError`` in a learner's own
code) is not the user's file's fault: it propagates, and the CLI reports an internal error
(exit status 3) instead of blaming the file. The bugs are planted by replacing a learner's or a
loader's step with one that fails as a typo would.
"""

from __future__ import annotations

import shutil
import zipfile

import numpy as np
import pytest

import nerstudio
from nerstudio import cli
from nerstudio.cli import main
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR
from nerstudio.errors import FormatError
from nerstudio.persist import json_array, json_value, read_header, save_npz

pytestmark = pytest.mark.data_integrity


@pytest.fixture
def model(tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(DEMO_MODEL_DIR, folder)
    return folder


def _arrays(path) -> dict:
    out = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name != "header.npy":
                with z.open(name) as f:
                    out[name[:-4]] = np.lib.format.read_array(f)
    return out


def _rewrite(path, edit_header=None, edit_arrays=None) -> None:
    header, arrays = read_header(path), _arrays(path)
    if edit_header is not None:
        edit_header(header)
    if edit_arrays is not None:
        edit_arrays(arrays)
    path.unlink()
    save_npz(path, header, arrays)


def _rerank(model, tmp_path):
    return [
        "rerank",
        str(model / "reranker.npz"),
        str(model / "dev.nbest.npz"),
        "--out",
        str(tmp_path / "out.conll"),
    ]


def _tag(model, tmp_path):
    return [
        "tag",
        str(model / "tagger.npz"),
        str(DEMO_DIR / "dev.conll"),
        "--out",
        str(tmp_path / "out.conll"),
    ]


def _fails(exc):
    def broken(*args, **kwargs):
        raise exc

    return broken


# -- a bug while loading is a bug --------------------------------------------------------------


@pytest.mark.parametrize(
    "exc", [AttributeError("'Boosting' has no attribute 'alpah_'"), KeyError("alpah"), TypeError()]
)
def test_a_bug_in_a_learners_set_state_is_an_internal_error(
    model, tmp_path, capsys, monkeypatch, exc
):
    from nerstudio.rerank.boosting import Boosting
    from nerstudio.rerank.model import RerankerModel

    monkeypatch.setattr(Boosting, "set_state", _fails(exc))
    monkeypatch.delenv("NERSTUDIO_DEBUG", raising=False)
    with pytest.raises(type(exc)):
        RerankerModel.load(model / "reranker.npz")
    assert main(_rerank(model, tmp_path)) == cli.INTERNAL_ERROR == 3
    err = capsys.readouterr().err
    assert err.startswith(f"nerstudio: internal error: {type(exc).__name__}")
    assert "corrupt" not in err


@pytest.mark.parametrize(
    "target,attr,which",
    [
        ("nerstudio.tagging.maxent.MaxEntTagger", "_set_weights", "tagger"),
        ("nerstudio.rerank.features.GlobalFeatures", "from_state", "reranker"),
        ("nerstudio.nbest.NBestList", "_from_arrays", "nbest"),
    ],
)
def test_a_bug_in_any_loader_step_propagates(
    model, tmp_path, capsys, monkeypatch, target, attr, which
):
    import importlib

    module, cls = target.rsplit(".", 1)
    monkeypatch.setattr(
        getattr(importlib.import_module(module), cls), attr, _fails(IndexError("off by one"))
    )
    monkeypatch.delenv("NERSTUDIO_DEBUG", raising=False)
    args = _tag(model, tmp_path) if which == "tagger" else _rerank(model, tmp_path)
    assert main(args) == 3
    assert capsys.readouterr().err.startswith("nerstudio: internal error: IndexError: off by one")


def test_a_bug_in_the_perceptron_taggers_loader_propagates(tmp_path, monkeypatch):
    from nerstudio.corpus import read_corpus
    from nerstudio.corpus.model import Sentence
    from nerstudio.tagging import local_features
    from nerstudio.tagging.perceptron import PerceptronTagger

    m = PerceptronTagger(epochs=1)
    m.fit(
        [Sentence(s.words, s.spans) for s in read_corpus(DEMO_DIR / "train.conll").sentences[:30]]
    )
    m.save(tmp_path / "p.npz")
    monkeypatch.setattr(local_features.KTFeatures, "_build_tables", _fails(KeyError("bias")))
    with pytest.raises(KeyError):
        PerceptronTagger.load(tmp_path / "p.npz")


# -- what the checks find is the file's fault: one line, exit 1 ---------------------------------


def _pop(key):
    return lambda d: d.pop(key)


@pytest.mark.parametrize(
    "which,edit_header,edit_arrays,words",
    [
        ("reranker", None, _pop("learner_alpha"), "'learner_alpha' is missing"),
        ("reranker", None, _pop("gf_keys"), "'gf_keys' is missing"),
        ("reranker", _pop("algo"), None, "'algo' is missing"),
        ("reranker", lambda h: h["features"].pop("types"), None, "'features.types' is missing"),
        ("reranker", lambda h: h.update(algo="boosting!"), None, "unknown"),
        (
            "reranker",
            None,
            lambda a: a.update(learner_chosen=a["learner_chosen"].astype(np.float64) + 0.5),
            "'learner_chosen' must hold integers",
        ),
        ("tagger", None, _pop("predicates"), "'predicates' is missing"),
        ("tagger", _pop("tagset"), None, "'tagset' is missing"),
        ("tagger", lambda h: h.update(cutoff=-3, optimizer="sgd"), None, "optimizer"),
    ],
)
def test_a_file_that_fails_a_check_is_one_line_exit_1(
    model, tmp_path, capsys, which, edit_header, edit_arrays, words
):
    path = model / f"{which}.npz"
    _rewrite(path, edit_header, edit_arrays)
    with pytest.raises(FormatError) as err:
        nerstudio.load(model)
    assert err.value.path == str(path) and words in err.value.message, err.value.message
    args = _tag(model, tmp_path) if which == "tagger" else _rerank(model, tmp_path)
    assert main(args) == 1
    out = capsys.readouterr().err
    assert out.startswith(f"nerstudio: error: {path}: corrupt") and out.count("\n") == 1


# -- repeated names ------------------------------------------------------------------------------


def _repeat_json(name, i=0, j=1):
    def edit(arrays):
        names = json_value(arrays[name])
        names[j] = names[i]
        arrays[name] = json_array(names)

    return edit


def _repeat_type(h):
    h["features"]["types"][1] = h["features"]["types"][0]


def _repeat_tag(h):
    h["tagset"][2] = h["tagset"][1]


@pytest.mark.parametrize(
    "which,edit_header,edit_arrays,words",
    [
        ("tagger", None, _repeat_json("predicates"), "'predicates' repeats"),
        ("tagger", _repeat_tag, None, "tagset"),
        ("reranker", None, _repeat_json("gf_base"), "'gf_base' repeats"),
        ("reranker", _repeat_type, None, "features.types repeats"),
    ],
)
def test_a_model_that_repeats_a_name_is_refused(
    model, tmp_path, capsys, which, edit_header, edit_arrays, words
):
    """A repeated predicate, tag or feature name would take another's number: the model would
    load and predict otherwise, or fail later as a bug. It is refused, naming the file."""
    path = model / f"{which}.npz"
    _rewrite(path, edit_header, edit_arrays)
    with pytest.raises(FormatError) as err:
        nerstudio.load(model)
    assert err.value.path == str(path) and words in err.value.message, err.value.message
    args = _tag(model, tmp_path) if which == "tagger" else _rerank(model, tmp_path)
    assert main(args) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_a_perceptron_tagger_that_repeats_a_value_is_refused(tmp_path):
    from nerstudio.corpus import read_corpus
    from nerstudio.corpus.model import Sentence
    from nerstudio.tagging.perceptron import PerceptronTagger

    m = PerceptronTagger(epochs=1)
    m.fit(
        [Sentence(s.words, s.spans) for s in read_corpus(DEMO_DIR / "train.conll").sentences[:30]]
    )
    path = tmp_path / "p.npz"
    m.save(path)

    def repeat(arrays):
        values = json_value(arrays["values"])
        values["w"][1] = values["w"][0]
        arrays["values"] = json_array(values)

    _rewrite(path, None, repeat)
    with pytest.raises(FormatError, match="'values' \\(w\\) repeats"):
        PerceptronTagger.load(path)
