"""The bundled Brown clusters and large-corpus lexicon (nerstudio.resources.clusters): the path
encoding worked out from the data, the features built on them (max-ent, perceptron, rerankers),
the feature sets they must leave unchanged, and the build script's reproducibility."""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import random
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Sentence
from nerstudio.demo import DEMO_DIR
from nerstudio.resources.clusters import (
    CLUSTERS_DIR,
    cluster_path,
    large_lexicon,
    manifest,
    word_paths,
)

sys.path.insert(0, str(ROOT / "tools" / "resources"))
import build_clusters


def _h(items) -> str:
    return hashlib.sha256("\n".join(items).encode()).hexdigest()[:16]


def _lines():
    return (CLUSTERS_DIR / "brown.txt").read_text(encoding="utf-8").splitlines()


def _children(paths):
    kids: dict[str, set[str]] = {}
    for p in paths:
        for i in range(len(p)):
            kids.setdefault(p[:i], set()).add(p[i])
    return kids


def test_bundled_files_match_their_manifest_and_are_small():
    m = manifest()
    total = 0
    for name, digest in m["sha256"].items():
        data = (CLUSTERS_DIR / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest
        total += len(data)
    assert total < 3_000_000  # "a few MB at most"
    assert len(word_paths()) == m["clustered_words"] and len(large_lexicon()) == m["lexicon_words"]
    sources = (CLUSTERS_DIR / "SOURCES.md").read_text()
    assert "spacy-lookups-data" in sources and "MIT" in sources
    assert (
        "Permission is hereby granted" in (CLUSTERS_DIR / "LICENSE-spacy-lookups-data").read_text()
    )


def test_words_of_one_cluster_share_every_prefix_and_the_hierarchy_is_a_full_binary_tree():
    lines = _lines()
    paths = [line.split("\t", 1)[0] for line in lines]
    assert len(paths) == len(set(paths)) == 999 and all(set(p) <= {"0", "1"} and p for p in paths)
    # every word of a line is looked up to that line's path, so they share every prefix
    for line in lines[::50]:
        path, *words = line.split("\t")
        assert {word_paths()[w] for w in words} == {path}
    # prefix-free: no cluster is an ancestor of another
    ps = sorted(paths)
    assert not any(b.startswith(a) for a, b in itertools.pairwise(ps))
    # the all-zero leaf (stored as 0, like unclustered words) completes a full binary tree of 1,000
    # leaves: every inner node has two children, and the leaves' 2^-depth add up to one
    z = 1
    while any(p.startswith("0" * z) for p in paths):
        z += 1
    leaves = paths + ["0" * z]
    assert all(len(k) == 2 for k in _children(leaves).values())
    assert sum(2.0 ** -len(p) for p in leaves) == 1.0
    assert len(_children(leaves)) == len(leaves) - 1


def test_the_issue_examples_and_the_lookup():
    assert cluster_path("London") == cluster_path("Paris")
    assert cluster_path("Berlin") == cluster_path("Germany") != cluster_path("London")
    # 678 and 934 share their low 8 bits
    assert cluster_path("Berlin")[:8] == cluster_path("London")[:8]
    assert cluster_path("xyzzyq-not-a-word") is None
    # found lower-cased
    lowered = next(w for w in ("Giraffe", "Zebra", "Walrus") if w not in word_paths())
    assert cluster_path(lowered) == cluster_path(lowered.lower()) is not None
    assert "the" in large_lexicon() and "may" in large_lexicon() and "paris" not in large_lexicon()


def test_restore_paths_against_random_trees():
    """Encode random full binary trees the package's way (int of the reversed path) and restore."""
    rng = random.Random(0)
    for _ in range(30):
        leaves = [""]
        while len(leaves) < rng.randint(2, 60):
            p = leaves.pop(rng.randrange(len(leaves)))
            leaves += [p + "0", p + "1"]
        encoded = {p: int(p[::-1], 2) for p in leaves}
        restored = build_clusters.restore_paths(encoded.values())
        zero = [p for p in leaves if set(p) == {"0"}]
        assert len(zero) == 1 and encoded[zero[0]] == 0  # the all-zero leaf is lost
        for p in leaves:
            if p not in zero:
                assert restored[encoded[p]] == p


def test_maxent_cluster_templates_on_a_tiny_sentence_by_hand():
    from nerstudio.tagging.features import FeatureExtractor

    # paths of the bundled file: Paris 01100101010, is 0101111101, in 0011110, France 011001011011
    sent = Sentence(["Paris", "is", "in", "France", "Xyzzyq"])
    f = FeatureExtractor("conll+clusters:2/5")
    f.fit_transform([sent])
    bc = {n for n in f.names() if n.startswith("bc")}
    row = {  # the predicates of "in" (position 2)
        "bc2-2=01",
        "bc2-1=01",
        "bc2=00",
        "bc2+1=01",
        "bc2+2=NULL",
        "bc5-2=01100",
        "bc5-1=01011",
        "bc5=00111",
        "bc5+1=01100",
        "bc5+2=NULL",
    }
    X = f.transform([sent])
    names = f.names()
    got = {names[j] for j in X[2].indices if names[j].startswith("bc")}
    assert got == row
    assert "bc5=NULL" in bc  # the unclustered word, and the sentence edges
    assert "bc2-2=NULL" in bc and "bc2+1=NULL" in bc
    with pytest.raises(ValueError, match="clusters:BITS"):
        FeatureExtractor("conll+clusters:x")


@pytest.mark.slow
def test_feature_sets_without_the_new_parts_are_unchanged():
    """Fingerprints of the predicate names and the token × predicate matrix on the demo training
    text, as the code before the clusters gave them (commit 477b3ee): ``paper`` (Collins' set, the
    collins2002 preset's), ``conll+rich+gaz``, ``kt+rich`` and the rerankers' global features."""
    from nerstudio.nbest import NBestList
    from nerstudio.rerank.features import GlobalFeatures
    from nerstudio.tagging.features import FeatureExtractor
    from nerstudio.tagging.local_features import KTFeatures

    train = read_corpus(f"{DEMO_DIR}/train.conll")
    f = FeatureExtractor("paper")
    X = f.fit_transform(train.sentences)
    assert (_h(f.names()), _h(map(str, X.indices.tolist()))) == (
        "5d9a060dd6f267f9",
        "05df1d68179ebdec",
    )
    f = FeatureExtractor("conll+rich+gaz")
    X = f.fit_transform(train.sentences)
    assert (_h(f.names()), _h(map(str, X.indices.tolist()))) == (
        "e401815530cb1444",
        "e364fb8d49dd0861",
    )
    k = KTFeatures(rich=True).fit([[s] for s in train.sentences])
    rows = k.transform([[s] for s in train.sentences])
    assert (_h(k.predicate_names(range(k.n_predicates_))), _h(map(str, rows.ids.tolist()))) == (
        "b7285df9dacf44cc",
        "cfb91c035770cc80",
    )
    nb = NBestList.load(DEMO_DIR / "model" / "train.nbest.npz")
    g = GlobalFeatures(min_sentences=1)
    d = g.fit_transform(nb)
    assert (_h(g.names_), _h(map(str, d.X.indices.tolist()))) == (
        "5bf64da6d1dc9d9e",
        "6de077073bd6b081",
    )


def test_biglex_changes_only_the_lexicon():
    from nerstudio.tagging.features import FeatureExtractor

    train = read_corpus(f"{DEMO_DIR}/train.conll")
    small = FeatureExtractor("paper")
    small.fit_transform(train.sentences)
    big = FeatureExtractor("paper+biglex")
    big.fit_transform(train.sentences)
    assert big.lexicon == set(large_lexicon()) != small.lexicon
    strip = lambda names: {n.split("=")[0] for n in names}
    assert strip(big.names()) == strip(small.names())  # the same templates, other values


@pytest.mark.slow
def test_perceptron_tagger_with_clusters_round_trips(tmp_path):
    from nerstudio.tagging.local_features import parse_kt_features
    from nerstudio.tagging.perceptron import PerceptronTagger

    train, dev = read_corpus(f"{DEMO_DIR}/train.conll"), read_corpus(f"{DEMO_DIR}/dev.conll")
    t = PerceptronTagger(features="kt+rich+clusters+biglex", C=20, epochs=2).fit(train)
    names = t.features_.template_names()
    assert {"bc4@-2", "bc6@0", "bc10@1", "bc20@2"} <= set(names) and not any(
        n.startswith("bc4@0,") for n in names
    )
    assert t.features_.lexicon_ == set(large_lexicon())
    t.save(tmp_path / "p.npz")
    back = PerceptronTagger.load(tmp_path / "p.npz")
    assert back.features_.name == "kt+rich+clusters+biglex"
    assert back.predict_spans(dev) == t.predict_spans(dev)
    for bad in ("kt+clusters+rich", "kt+biglex", "kt+gaz"):
        with pytest.raises(ValueError, match="perceptron feature set"):
            parse_kt_features(bad)


@pytest.mark.slow
def test_maxent_tagger_with_clusters_round_trips_and_refuses_other_clusters(tmp_path):
    from nerstudio.errors import FormatError
    from nerstudio.persist import json_array, json_value
    from nerstudio.tagging.maxent import MaxEntTagger

    train, dev = read_corpus(f"{DEMO_DIR}/train.conll"), read_corpus(f"{DEMO_DIR}/dev.conll")
    m = MaxEntTagger(features="conll+clusters+biglex", max_iter=20).fit(train.sentences)
    m.save(tmp_path / "t.npz")
    back = MaxEntTagger.load(tmp_path / "t.npz")
    a, b = m.nbest(dev.sentences, n=3), back.nbest(dev.sentences, n=3)
    assert all(np.array_equal(x, y) for x, y in zip(a.candidates, b.candidates))
    z = dict(np.load(tmp_path / "t.npz", allow_pickle=False))
    head = json_value(z["header"])
    head["clusters"] = "0" * 16
    z["header"] = json_array(head)
    np.savez(tmp_path / "bad.npz", **z)
    with pytest.raises(FormatError, match="other word clusters"):
        MaxEntTagger.load(tmp_path / "bad.npz")


def test_reranker_cluster_features_by_hand_and_their_glossary():
    from nerstudio.rerank.features import GlobalFeatures
    from nerstudio.rerank.glossary import FALLBACK, describe

    words = ["Paris", "is", "in", "France", "Xyzzyq"]
    tags = ["B-LOC", "N", "N", "B-LOC", "I-LOC"]
    got = [
        x
        for x in GlobalFeatures(clusters=(2, 5)).candidate_strings(words, tags, set())
        if x.startswith("BC")
    ]
    assert sorted(got) == sorted(
        [
            "BC2=01",
            "BCL2=01",
            "BC5=01100",
            "BCL5=01100",
            "BC2=01 NULL",
            "BCL2=NULL",
            "BC5=01100 NULL",
            "BCL5=NULL",
            "BC2:LOC=01",
            "BCL2:LOC=01",
            "BC5:LOC=01100",
            "BCL5:LOC=01100",
            "BC2:LOC=01 NULL",
            "BCL2:LOC=NULL",
            "BC5:LOC=01100 NULL",
            "BCL5:LOC=NULL",
        ]
    )
    without = GlobalFeatures().candidate_strings(words, tags, set())
    assert not any(x.startswith("BC") for x in without)
    for name in got:
        assert FALLBACK not in describe(name)
    assert "first 5 branchings" in describe("BC5:LOC=01100")


@pytest.mark.skipif(
    importlib.util.find_spec("spacy_lookups_data") is None,
    reason="the resources extra is not installed (pip install -e '.[resources]')",
)
def test_build_script_reproduces_the_clusters():
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools/resources/build_clusters.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
