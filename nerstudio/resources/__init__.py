"""External lexical resources: the bundled gazetteers (``lists/``) and their longest-match tags.

Why a package of its own: both the taggers and the rerankers use the lists (the taggers as IOB2
token features, the rerankers as features of whole entities), and those two layers never import
each other; the lists are data shipped with nerstudio, built by
``tools/resources/build_gazetteers.py`` from packages on the package index (sources, licences
and attributions in ``lists/SOURCES.md``; no corpus text, so no test set, went into them).

:class:`Gazetteers` loads some or all lists. :meth:`Gazetteers.iob` gives, per list, the IOB2 tag
of every token in the *longest-match* segmentation of a sentence (scanning left to right, at
each position the longest entry starting there is taken, else ``O``), the form of Kazama &
Torisawa's gazetteer features; lists marked ``fold`` in ``lists/lists.json`` compare lower-cased
words with full stops removed (``Inc.`` = ``inc``), the others compare words exactly.
:meth:`Gazetteers.lists_of` says which lists hold a given word sequence as a whole entry;
:func:`gazetteers` gives the one shared :class:`Gazetteers` of some lists.
:attr:`Gazetteers.fingerprint` identifies the lists' contents, so a model trained with them can
refuse lists that have changed since. :func:`select_lists` turns a user's choice (list names or
the families of :data:`FAMILIES`, e.g. ``persons,locations``) into list names, for ablations that
switch one family of lists off at a time.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from functools import cache, lru_cache
from pathlib import Path

from ..errors import ResourceError, SettingsError


def _files_dir() -> Path:
    """The data files' folder: the package ``nerstudio.resources.files``, which is the source
    tree's top-level ``resources/`` (setup.py maps it; an editable install finds it there, a
    wheel carries it), or that folder itself in a checkout run without installing."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(__name__ + ".files")
    except ImportError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    return Path(__file__).resolve().parents[2] / "resources"


#: the folder of the bundled data files (lists/, clusters/, desktop/)
FILES_DIR = _files_dir()
LISTS_DIR = FILES_DIR / "lists"


def read_verified(path: Path, sha256: str) -> str:
    """The text of a bundled resource file, its bytes checked against the sha256 its manifest
    records (:class:`ResourceError` naming the file when they differ): the checksum vouches for
    the content only when it is compared with the content."""
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ResourceError(
            path,
            None,
            "damaged: its content does not match the checksum recorded for it in "
            f"{path.parent.name}/ (reinstall nerstudio)",
        )
    return data.decode("utf-8")


@lru_cache(maxsize=1)
def manifest() -> dict:
    """``lists.json``: per list its match mode, entry count, sources and sha256."""
    with open(LISTS_DIR / "lists.json", encoding="utf-8") as f:
        return json.load(f)


def list_names() -> list[str]:
    return sorted(manifest()["lists"])


#: The families of lists, by the prefix of their names: what an ablation switches on and off
#: together (a tiered list's tiers belong to one family).
FAMILIES = {
    "persons": "per_",
    "locations": "loc_",
    "nationalities": "misc_",
    "organisations": "org_",
}


def family_of(name: str) -> str:
    for family, prefix in FAMILIES.items():
        if name.startswith(prefix):
            return family
    raise ValueError(f"gazetteer {name!r} belongs to no family")


def select_lists(spec: str | Iterable[str]) -> tuple[str, ...]:
    """The list names a choice stands for: comma-separated (or an iterable of) list names and
    family names (:data:`FAMILIES`), ``all`` for every list; a name prefixed with ``-`` is taken
    away (``all,-persons``: every list but the persons'). Sorted, without repeats; an unknown
    name, or a choice that leaves no list, is a ``ValueError``."""
    items = [x.strip() for x in (spec.split(",") if isinstance(spec, str) else spec) if x.strip()]
    known = list_names()
    chosen: set[str] = set()
    for item in items:
        drop = item.startswith("-")
        key = item[1:] if drop else item
        if key == "all":
            names = set(known)
        elif key in FAMILIES:
            names = {n for n in known if family_of(n) == key}
        elif key in known:
            names = {key}
        else:
            raise SettingsError(
                f"unknown gazetteer or family {key!r} (families: all, {', '.join(FAMILIES)}; "
                f"lists: {', '.join(known)})"
            )
        chosen = chosen - names if drop else chosen | names
    if not chosen:
        raise SettingsError(
            f"the gazetteer choice {spec if isinstance(spec, str) else ','.join(items)!r} "
            "leaves no list"
        )
    return tuple(sorted(chosen))


def longest_match_iob(
    n: int,
    lengths_at: Callable[[int], Iterable[int]],
    matches: Callable[[int, int], bool],
    starts: Iterable[int] | None = None,
) -> list[str]:
    """IOB2 tags (``B``/``I``/``O``) of ``n`` words under longest match, left to right:
    ``lengths_at(i)`` gives the lengths of the entries that may start at word ``i``, longest
    first, and ``matches(i, m)`` whether words ``i .. i+m-1`` are one. ``starts``: the words,
    in increasing order, at which an entry may start at all (default: every word); the others are
    not asked. Shared by the bundled lists and the K&T tagger's gazetteer of training entities."""
    tags = ["O"] * n
    i = 0  # the first word not inside a match
    for s in range(n) if starts is None else starts:
        if s < i:
            continue
        for m in lengths_at(s):
            if s + m <= n and matches(s, m):
                tags[s] = "B"
                for j in range(s + 1, s + m):
                    tags[j] = "I"
                i = s + m
                break
    return tags


def fold(word: str) -> str:
    """The ``fold`` match key of one word: lower case, full stops removed."""
    return word.lower().replace(".", "")


@cache
def _entries(name: str) -> frozenset:
    meta = manifest()["lists"][name]
    mode = meta["match"]
    out = set()
    for line in read_verified(LISTS_DIR / f"{name}.txt", meta["sha256"]).split("\n"):
        words = line.split()
        if words:
            out.add(tuple(fold(w) for w in words) if mode == "fold" else tuple(words))
    return frozenset(out)


class Gazetteers:
    """Some or all of the bundled lists (``names``: list names, default all), matched as the
    module docstring says."""

    def __init__(self, names: Iterable[str] | None = None):
        known = list_names()
        self.names = sorted(known if names is None else set(names))
        bad = [n for n in self.names if n not in known]
        if bad:
            raise SettingsError(f"unknown gazetteer {bad[0]!r} (choose from {', '.join(known)})")
        meta = manifest()["lists"]
        self.fold = {n: meta[n]["match"] == "fold" for n in self.names}
        self.entries = {n: _entries(n) for n in self.names}
        self._lengths: dict[str, dict[str, list[int]]] = {}
        for n, es in self.entries.items():
            idx: dict[str, list[int]] = {}  # most first words start entries of one length
            for e in es:
                have = idx.get(e[0])
                if have is None:
                    idx[e[0]] = [len(e)]
                elif len(e) not in have:
                    have.append(len(e))
            for v in idx.values():
                if len(v) > 1:
                    v.sort(reverse=True)
            self._lengths[n] = idx
        # key -> the lists an entry may start with it, per match mode: one look-up per word
        self._starting: dict[bool, dict[str, list[str]]] = {
            True: defaultdict(list),
            False: defaultdict(list),
        }
        for n in self.names:
            for k in self._lengths[n]:
                self._starting[self.fold[n]][k].append(n)
        digest = hashlib.sha256("".join(f"{n}:{meta[n]['sha256']};" for n in self.names).encode())
        self.fingerprint = digest.hexdigest()[:16]

    def iob(self, words: Sequence[str]) -> dict[str, list[str]]:
        """Per list, the IOB2 tag (``B``/``I``/``O``) of each word under longest match."""
        n = len(words)
        keys = {True: [fold(w) for w in words], False: list(words)}
        starts: dict[str, list[int]] = {name: [] for name in self.names}
        for mode, index in self._starting.items():  # where an entry of each list may start
            for i, k in enumerate(keys[mode]):
                for name in index.get(k, ()):
                    starts[name].append(i)
        out = {}
        for name in self.names:
            ks, entries, lengths = keys[self.fold[name]], self.entries[name], self._lengths[name]
            out[name] = (
                longest_match_iob(
                    n,
                    lambda i: lengths[ks[i]],  # noqa: B023 (called at once)
                    lambda i, m: tuple(ks[i : i + m]) in entries,  # noqa: B023 (called at once)
                    starts[name],
                )
                if starts[name]
                else ["O"] * n
            )
        return out

    def lists_of(self, words: Sequence[str]) -> list[str]:
        """The lists that hold ``words`` as one whole entry."""
        keys = {False: tuple(words)}
        if any(self.fold.values()):
            keys[True] = tuple(fold(w) for w in words)
        return [n for n in self.names if keys[self.fold[n]] in self.entries[n]]


def gazetteers(names: Iterable[str] | None = None) -> Gazetteers:
    """:class:`Gazetteers` of ``names`` (default all), built once per process and shared: a
    :class:`Gazetteers` is never changed once built, and building one (indexing some 100,000
    entries) takes a good part of a second, which every tagger trained and every reranker's
    features would otherwise pay again (and every worker process forked after the first)."""
    return _shared_gazetteers(tuple(sorted(set(list_names() if names is None else names))))


@lru_cache(maxsize=16)
def _shared_gazetteers(names: tuple[str, ...]) -> Gazetteers:
    return Gazetteers(names)
