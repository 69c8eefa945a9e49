"""Models whose content is wrong are refused (issue 22, case 13): every header field given a
value of another type, every array given another length or its JSON another shape, and the
model loaded as ``nerstudio.load`` and the CLI load it. Each must be refused with one error
naming the file (and the field), or load into a model that predicts exactly what the original
predicts: never a model that silently predicts otherwise (a lexicon that is a string, a
reranker whose ``alpha0`` has 3 values).

The models are the bundled demo's (a max-ent tagger and a boosting reranker: what
``nerstudio.load`` loads by default)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import nerstudio
from nerstudio.cli import main
from nerstudio.corpus import read_corpus
from nerstudio.corpus.model import Sentence
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR
from nerstudio.errors import FormatError
from nerstudio.persist import _scan, json_array, read_header, save_npz

pytestmark = pytest.mark.data_integrity

WRONG = ["abc", {}, {"a": 1}, [], [1, 2, 3], 3, -1, 2.5, None, True]


@pytest.fixture(scope="module")
def sentences():
    return [list(s.words) for s in read_corpus(DEMO_DIR / "dev.conll").sentences[:25]]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """The demo model, saved again by this nerstudio (whose headers record the lexicons' sizes)."""
    from nerstudio.rerank.model import RerankerModel
    from nerstudio.tagging.maxent import MaxEntTagger

    folder = tmp_path_factory.mktemp("demo") / "model"
    shutil.copytree(DEMO_MODEL_DIR, folder)
    MaxEntTagger.load(folder / "tagger.npz").save(folder / "tagger.npz")
    RerankerModel.load(folder / "reranker.npz").save(folder / "reranker.npz")
    return folder


@pytest.fixture(scope="module")
def expected(sentences, model_dir):
    pipe = nerstudio.load(model_dir)
    # saved again: the same
    assert _predict(pipe, sentences) == _predict(nerstudio.load(DEMO_MODEL_DIR), sentences)
    return _predict(pipe, sentences)


def _predict(pipe, sentences):
    return [tuple(pipe.predict(w)) for w in sentences]


def _arrays(path) -> dict:
    members = _scan(str(path), "x")
    import zipfile

    out = {}
    with zipfile.ZipFile(path) as z:
        for name in members:
            if name != "header":
                with z.open(name + ".npy") as f:
                    out[name] = np.lib.format.read_array(f)
    return out


def _paths(value, prefix=()):
    """Every key path of a JSON header (dicts entered, lists as a whole)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))


def _set(header, path, value):
    h = json.loads(json.dumps(header))
    node = h
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return h


def _mutants(model_dir, which: str):
    path = model_dir / f"{which}.npz"
    header, arrays = read_header(path), _arrays(path)
    for p in _paths(header):
        if p in (("format",), ("version",)) or p[0] == "history":
            continue
        for v in WRONG:
            yield f"{'.'.join(p)}={json.dumps(v)}", _set(header, p, v), arrays
    for name, arr in arrays.items():
        if arr.dtype == np.uint8:  # JSON stored as bytes
            for v in WRONG:
                yield f"{name}=json:{json.dumps(v)}", header, {**arrays, name: json_array(v)}
        else:
            for n in (0, 3, len(arr) + 1):
                new = np.resize(arr, (n,) + arr.shape[1:]) if n else arr[:0]
                yield f"{name}[{n}]", header, {**arrays, name: new}


def _check(tmp_path, model_dir, which, header, arrays, sentences, expected):
    folder = tmp_path / "model"
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(model_dir, folder)
    target = folder / f"{which}.npz"
    target.unlink()
    save_npz(target, header, arrays)
    try:
        pipe = nerstudio.load(folder)
    except FormatError as exc:
        assert exc.path == str(target), exc
        assert "\n" not in str(exc)
        return "refused"
    got = _predict(pipe, sentences)
    return "same" if got == expected else "accepted and predicts otherwise"


@pytest.fixture(scope="module")
def perceptron_dir(tmp_path_factory):
    """A small structured-perceptron tagger (the other kind ``nerstudio.load`` takes)."""
    from nerstudio.tagging.perceptron import PerceptronTagger

    folder = tmp_path_factory.mktemp("perceptron") / "model"
    folder.mkdir()
    m = PerceptronTagger(epochs=1)
    m.fit(
        [Sentence(s.words, s.spans) for s in read_corpus(DEMO_DIR / "train.conll").sentences[:60]]
    )
    m.save(folder / "tagger.npz")
    return folder


@pytest.mark.slow
def test_a_perceptron_tagger_with_wrong_content_is_refused_or_predicts_the_same(
    tmp_path, perceptron_dir, sentences
):
    expected = _predict(nerstudio.load(perceptron_dir), sentences)
    bad, n = [], 0
    for what, header, arrays in _mutants(perceptron_dir, "tagger"):
        n += 1
        outcome = _check(tmp_path, perceptron_dir, "tagger", header, arrays, sentences, expected)
        if outcome not in ("refused", "same"):
            bad.append(f"{what}: {outcome}")
    assert n > 20
    assert not bad, f"{len(bad)} of {n} wrong perceptron tagger files accepted:\n" + "\n".join(bad)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["tagger", "reranker"])
def test_a_model_with_wrong_content_is_refused_or_predicts_the_same(
    tmp_path, which, model_dir, sentences, expected
):
    bad = []
    n = 0
    for what, header, arrays in _mutants(model_dir, which):
        n += 1
        outcome = _check(tmp_path, model_dir, which, header, arrays, sentences, expected)
        if outcome not in ("refused", "same"):
            bad.append(f"{what}: {outcome}")
    assert n > 20
    assert not bad, f"{len(bad)} of {n} wrong {which} files accepted:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "which,field,value",
    [
        ("tagger", "lexicon", "abc"),
        ("tagger", "lexicon", {"a": 1}),
        ("reranker", "gf_lexicon", {}),
        ("reranker", "learner_alpha0", 3),
        ("reranker", "learner_alpha0", 5_000_000),
    ],
)
def test_the_cases_of_the_issue_are_one_line_errors_naming_the_file_and_field(
    tmp_path, capsys, which, field, value
):
    folder = tmp_path / "model"
    shutil.copytree(DEMO_MODEL_DIR, folder)
    path = folder / f"{which}.npz"
    header, arrays = read_header(path), _arrays(path)
    if field == "learner_alpha0":
        arrays[field] = np.full(value, 0.5)
    else:
        arrays[field] = json_array(value)
    path.unlink()
    save_npz(path, header, arrays)
    with pytest.raises(FormatError) as err:
        nerstudio.load(folder)
    assert err.value.path == str(path) and field.replace("learner_", "") in err.value.message
    if which == "tagger":
        args = ["tag", str(path), str(DEMO_DIR / "dev.conll"), "--out", str(tmp_path / "out.conll")]
    else:
        args = [
            "rerank",
            str(path),
            str(folder / "dev.nbest.npz"),
            "--out",
            str(tmp_path / "out.conll"),
        ]
    assert main(args) == 1
    err_text = capsys.readouterr().err
    assert err_text.count("\n") == 1 and str(path) in err_text
