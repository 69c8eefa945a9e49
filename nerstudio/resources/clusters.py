"""Brown word clusters and a large-corpus lowercase lexicon, bundled (``clusters/``).

Why: 46% of CoNLL-2003's test entities never occur in training, and a word's cluster (the
words that occur in the same contexts in a large unlabelled corpus) says something about an
unseen name that its spelling does not; Collins (2002) takes his lowercase lexicon "from a large
corpus", which the 200k-token training text is not. Both files are built by
``tools/resources/build_clusters.py`` from the ``spacy-lookups-data`` package (MIT; sources and
licence in ``clusters/SOURCES.md``, what is known of the data in docs/clusters.md); no corpus
text of ours went into them.

:func:`cluster_path` gives a word's bit path (``"0110..."``, first decision of the hierarchy
first), or None; :func:`path_prefix` cuts it to a depth (a shorter path is kept whole, the usual
convention: Miller et al. 2004, Ratinov & Roth 2009). :func:`large_lexicon` is the set of
lower-case words seen more often lower-cased than capitalised in the large corpus.
:func:`fingerprint` identifies the files' contents, for models that must refuse other data.
"""

from __future__ import annotations

import json
from functools import lru_cache

from . import FILES_DIR, read_verified

CLUSTERS_DIR = FILES_DIR / "clusters"


@lru_cache(maxsize=1)
def manifest() -> dict:
    with open(CLUSTERS_DIR / "clusters.json", encoding="utf-8") as f:
        return json.load(f)


def _text(name: str) -> str:
    """A bundled file's text, checked against the sha256 ``clusters.json`` records for it."""
    return read_verified(CLUSTERS_DIR / name, manifest()["sha256"][name])


@lru_cache(maxsize=1)
def word_paths() -> dict[str, str]:
    """Every clustered word → its bit path (a path string is shared, not copied, by its words)."""
    out: dict[str, str] = {}
    for line in _text("brown.txt").split("\n"):
        if line:
            path, *words = line.split("\t")
            for w in words:
                out[w] = path
    return out


def cluster_path(word: str) -> str | None:
    """The word's path, looked up as written, else lower-cased (a capitalised word the corpus
    only saw in lower case); None when neither is clustered."""
    paths = word_paths()
    p = paths.get(word)
    return p if p is not None else paths.get(word.lower())


def path_prefix(path: str | None, bits: int) -> str | None:
    return None if path is None else path[:bits]


@lru_cache(maxsize=1)
def large_lexicon() -> frozenset[str]:
    return frozenset(line for line in _text("lowercase.txt").split("\n") if line.strip())


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """The first 16 hex digits of the sha256 of the two files' own sha256s, each file checked
    to hold what its sha256 says (:class:`~nerstudio.errors.ResourceError` if not): a model
    saved or loaded with damaged clusters is refused, not silently worse."""
    import hashlib

    sums = manifest()["sha256"]
    for name in sorted(sums):
        _text(name)
    return hashlib.sha256("".join(f"{k}:{sums[k]};" for k in sorted(sums)).encode()).hexdigest()[
        :16
    ]
