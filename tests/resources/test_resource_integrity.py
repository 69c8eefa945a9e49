"""The bundled resources are checked by their content, not by the checksums they record.

A damaged ``brown.txt`` (one cluster line lost, one word moved to another cluster) used to load
without a word, and a model with cluster features then scored far worse on the same data: the
fingerprint hashed the manifest's recorded sha256s, never the files. Now reading a resource
compares its bytes with its recorded sha256: the damaged file is one error naming it, before any
feature is made from it. The same holds for the gazetteer lists."""

from __future__ import annotations

import shutil

import pytest

import nerstudio.resources as resources
import nerstudio.resources.clusters as clusters
from nerstudio.errors import NerstudioError, ResourceError


def _clear():
    for f in (clusters.manifest, clusters.word_paths, clusters.large_lexicon, clusters.fingerprint):
        getattr(f, "cache_clear", lambda: None)()
    resources.manifest.cache_clear()
    resources._entries.cache_clear()


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """A copy of the bundled clusters and lists that the test may damage; the caches are
    emptied before and after, so that no other test sees the damage."""
    cdir, ldir = tmp_path / "clusters", tmp_path / "lists"
    shutil.copytree(clusters.CLUSTERS_DIR, cdir)
    shutil.copytree(resources.LISTS_DIR, ldir)
    monkeypatch.setattr(clusters, "CLUSTERS_DIR", cdir)
    monkeypatch.setattr(resources, "LISTS_DIR", ldir)
    _clear()
    yield cdir, ldir
    _clear()


def _damage(path):
    lines = path.read_text(encoding="utf-8").split("\n")
    path.write_text("\n".join(lines[:5] + lines[6:]), encoding="utf-8")  # one line lost


def test_intact_copies_read_as_the_bundle(copy):
    assert len(clusters.word_paths()) == clusters.manifest()["clustered_words"]
    assert clusters.fingerprint()
    assert resources.Gazetteers().names == resources.list_names()


@pytest.mark.parametrize("use", ["word_paths", "fingerprint", "large_lexicon"])
def test_a_damaged_cluster_file_is_refused_naming_it(copy, use):
    cdir, _ = copy
    name = "lowercase.txt" if use == "large_lexicon" else "brown.txt"
    _damage(cdir / name)
    with pytest.raises(ResourceError) as err:
        getattr(clusters, use)()
    assert isinstance(err.value, NerstudioError)
    assert err.value.path == str(cdir / name) and "damaged" in err.value.message


def test_a_damaged_gazetteer_list_is_refused_naming_it(copy):
    _, ldir = copy
    _damage(ldir / "loc_country.txt")
    with pytest.raises(ResourceError) as err:
        resources.Gazetteers()
    assert err.value.path == str(ldir / "loc_country.txt")


def test_a_cluster_feature_tagger_refuses_damaged_clusters(copy):
    """The end of the story: a tagger whose features use the clusters is not trained (or
    applied) on damaged ones."""
    from nerstudio.corpus import read_corpus
    from nerstudio.demo import DEMO_DIR
    from nerstudio.tagging.maxent import MaxEntTagger

    cdir, _ = copy
    _damage(cdir / "brown.txt")
    train = read_corpus(DEMO_DIR / "train.conll").sentences[:20]
    with pytest.raises(ResourceError):
        MaxEntTagger(features="paper+clusters", max_iter=2).fit(train)
