"""Non-local (document-level) features of a candidate labelling (Kazama & Torisawa 2007 §5; SPEC §7).

A candidate labelling of a whole document is seen through its entities: (start, end, label)
over the document's concatenated tokens, with the entity's *string* being its word tuple
(case-sensitive, exactly as written). Four families, after Finkel et al. (2005), Krishnan &
Manning (2006) and K&T's own conjunction feature; each feature is a string, its value a count.
Labels of a pair are written in sorted order, so a pair feature does not depend on which entity
comes first, and each pair family also fires a label-free ``=same`` / ``=diff`` summary.

``PC`` — phrase consistency
    For every unordered pair of entities with the same string: ``PC:a~b`` (and ``PC=same`` or
    ``PC=diff``). For every entity and every other occurrence of its string in the document that
    lies wholly outside all entities of the candidate: ``PC:a~O`` (the same phrase left
    unlabelled elsewhere).
``SP`` — sub-phrase consistency
    For every ordered pair (e, f) of entities where e's string is a proper contiguous
    sub-sequence of f's string (``Clinton`` in ``Bill Clinton``) and e is not inside f:
    ``SP:a<b`` with a the label of e and b the label of f (and ``SP=same``/``SP=diff``).
``MJ`` — majority versions
    For every entity e: ``MJ:a~m`` with m the majority label of the *other* entities with e's
    string (if any); ``MJS:a~m`` with m the majority label of the entities whose string contains
    e's string as a proper sub-sequence (if any); and for every token of e, ``MJT:a~m`` with m
    the majority label of the other entity tokens with the same word elsewhere in the document
    (tokens of e itself excluded). Ties go to the alphabetically first label.
``CJ`` — conjunction consistency
    For every two consecutive entities whose gap is exactly one of ``,`` / ``and`` / ``or`` /
    ``, and`` / ``, or`` (lower-cased), as in "U.S., EU, and Japan": ``CJ:a~b``
    (and ``CJ=same``/``CJ=diff``).

For the boundary-only task every label is the empty string, so the label pairs collapse to one
feature per family (plus the ``~O`` one), which still tells a consistent segmentation from an
inconsistent one.

:class:`NonLocalFeatures` maps the strings to integer ids (a vocabulary grown while training,
fixed afterwards) and gives each candidate a sparse count vector. Documents are indexed once
(:class:`DocumentIndex`) and reused for all candidates of the document.

:meth:`NonLocalFeatures.strings` is the readable definition. Training and decoding count the
same features with compiled code over integer ids instead (:meth:`NonLocalFeatures.code_vectors`,
:mod:`._nonlocal_compiled`): all candidates of a document in one call, the same counts, ids and
vocabulary order (tests/text/test_nonlocal_compiled.py checks them against the strings).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..arrays import sorted_unique
from ..corpus.model import Span
from ..errors import SettingsError

TEMPLATES = ("phrase", "subphrase", "majority", "conjunction")
COORDINATIONS = frozenset({(",",), ("and",), ("or",), (",", "and"), (",", "or")})
MAX_SUBPHRASE = 12  # entities longer than this are not searched for sub-phrases


def _pair(a: str, b: str) -> str:
    return f"{a}~{b}" if a <= b else f"{b}~{a}"


def _majority_of(labels: Iterable[str]) -> str:
    """The most frequent of a non-empty run of labels (ties: the alphabetically first)."""
    counts: dict[str, int] = {}
    for lab in labels:
        counts[lab] = counts.get(lab, 0) + 1
    best = max(counts.values())
    return min(k for k, v in counts.items() if v == best)


class DocumentIndex:
    """Where each word (and each multi-word string, looked up lazily) occurs in one document."""

    __slots__ = ("_first", "_found", "_ints", "lower", "words")

    def __init__(self, words: Sequence[str]):
        self.words = tuple(words)
        self.lower = tuple(w.lower() for w in self.words)
        first: dict[str, list[int]] = defaultdict(list)
        for i, w in enumerate(self.words):
            first[w].append(i)
        self._first = first
        self._found: dict[tuple, list[int]] = {}
        self._ints: tuple | None = None

    def integer_form(self, longest: int) -> tuple:
        """The document as the compiled counts read it (:mod:`._nonlocal_compiled`): string ids
        ``sid[n, i]`` of every ``words[i:i + n]`` for n up to at least ``longest``, where each
        string id occurs (``occ_ptr``, ``occ_pos``), the number of distinct words, and the
        coordination flags. Made once, and again only for a longer entity."""
        if self._ints is not None and self._ints[0].shape[0] > longest:
            return self._ints
        n_max = max(longest, MAX_SUBPHRASE)
        N = len(self.words)
        ids: dict[str, int] = {}
        wid = np.array([ids.setdefault(w, len(ids)) for w in self.words], dtype=np.int64)
        sid = np.full((n_max + 1, N), -1, dtype=np.int64)
        local = wid  # ids of the strings of the current length, from 0
        sid[1] = wid
        offset = len(ids)
        for n in range(2, n_max + 1):
            if N - n + 1 <= 0:
                break
            pairs = local[: N - n + 1] * (len(ids) + 1) + wid[n - 1 :]
            uniq, local = np.unique(pairs, return_inverse=True)
            sid[n, : N - n + 1] = local + offset
            offset += len(uniq)
        flat = sid[1:].reshape(-1)
        pos = np.tile(np.arange(N, dtype=np.int64), n_max)
        ok = flat >= 0
        flat, pos = flat[ok], pos[ok]
        order = np.argsort(flat, kind="stable")
        occ_pos = pos[order]
        occ_ptr = np.zeros(offset + 1, dtype=np.int64)
        np.cumsum(np.bincount(flat, minlength=offset), out=occ_ptr[1:])
        low = self.lower
        coord1 = np.array([(w,) in COORDINATIONS for w in low], dtype=np.bool_)
        coord2 = np.array(
            [i + 1 < N and (low[i], low[i + 1]) in COORDINATIONS for i in range(N)], dtype=np.bool_
        )
        self._ints = (sid, occ_ptr, occ_pos, len(ids), coord1, coord2)
        return self._ints

    def occurrences(self, key: tuple) -> list[int]:
        """Start positions of every occurrence of the word tuple ``key``."""
        hit = self._found.get(key)
        if hit is None:
            n = len(key)
            w = self.words
            hit = [i for i in self._first.get(key[0], ()) if w[i : i + n] == key]
            self._found[key] = hit
        return hit


class NonLocalFeatures:
    """The feature map Φ^g over a candidate's entities (see the module docstring)."""

    def __init__(self, templates: Sequence[str] = TEMPLATES):
        bad = sorted(set(templates) - set(TEMPLATES))
        if bad:
            raise SettingsError(
                f"unknown non-local template {', '.join(bad)} (choose from {', '.join(TEMPLATES)})"
            )
        self.templates = tuple(t for t in TEMPLATES if t in templates)
        self.vocabulary: dict[str, int] = {}
        self.frozen = False
        self._tables: dict[tuple, dict] = {}  # see _table

    # -- readable features ----------------------------------------------------------------
    def strings(self, doc: DocumentIndex | Sequence[str], spans: Iterable[Span]) -> Counter:
        """The features of one candidate labelling of a document, as ``{string: count}`` (in
        the order the families are listed: :meth:`vector` numbers new strings in this order)."""
        if not isinstance(doc, DocumentIndex):
            doc = DocumentIndex(doc)
        words = doc.words
        ents = sorted((int(s[0]), int(s[1]), str(s[2])) for s in spans)
        out: Counter = Counter()
        if not ents:
            return out
        keys = [words[a:b] for a, b, _ in ents]
        by_key: dict[tuple, list[int]] = defaultdict(list)
        for k, key in enumerate(keys):
            by_key[key].append(k)
        want = self.templates
        if "phrase" in want:
            _phrase_features(out, doc, ents, by_key)
        # entity -> entities whose string contains it
        contains: dict[int, list[int]] = defaultdict(list)
        if "subphrase" in want or "majority" in want:
            contains = _containing(ents, keys, by_key)
        if "subphrase" in want:
            _subphrase_features(out, ents, contains)
        if "majority" in want:
            _majority_features(out, words, ents, keys, by_key, contains)
        if "conjunction" in want:
            _conjunction_features(out, doc, ents)
        return out

    # -- integer vectors ------------------------------------------------------------------
    @property
    def n_features(self) -> int:
        return len(self.vocabulary)

    def vector(
        self, doc: DocumentIndex | Sequence[str], spans: Iterable[Span], grow: bool | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sorted feature ids and their counts. New strings get ids while ``grow`` (default: not
        frozen); otherwise unknown strings are dropped."""
        grow = (not self.frozen) if grow is None else grow
        voc = self.vocabulary
        ids, vals = [], []
        for s, c in self.strings(doc, spans).items():
            j = voc.get(s)
            if j is None:
                if not grow:
                    continue
                j = voc[s] = len(voc)
            ids.append(j)
            vals.append(c)
        idx = np.array(ids, dtype=np.int64)
        order = np.argsort(idx, kind="stable")
        return idx[order], np.array(vals, dtype=np.float64)[order]

    # -- compiled counts over integer ids (the same vectors, much faster) -----------------------
    def code_vectors(
        self,
        doc: DocumentIndex,
        cptr: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
        label: np.ndarray,
        labels: Sequence[str],
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """The features of many candidate labellings of one document at once, as (feature codes,
        counts) per candidate, counted by compiled code (:mod:`._nonlocal_compiled`) on integer ids.
        Candidate c's entities are ``start/end/label[cptr[c]:cptr[c + 1]]``, ordered by (start,
        end), ``label`` indexing ``labels``. :meth:`ids_of` turns a pair into :meth:`vector`'s
        result; the counts are exactly those of :meth:`strings` (tests/text/test_nonlocal_compiled.py)."""
        from . import _nonlocal_compiled as nc

        table = self._table(tuple(labels))
        start = np.asarray(start, dtype=np.int64)
        end = np.asarray(end, dtype=np.int64)
        longest = int((end - start).max()) if len(start) else 1
        sid, occ_ptr, occ_pos, n_words, coord1, coord2 = doc.integer_form(longest)
        want = self.templates
        counts = nc.feature_counts(
            np.asarray(cptr, dtype=np.int64),
            start,
            end,
            table["rank"][np.asarray(label, dtype=np.int64)],
            len(labels),
            sid,
            occ_ptr,
            occ_pos,
            n_words,
            coord1,
            coord2,
            "phrase" in want,
            "subphrase" in want,
            "majority" in want,
            "conjunction" in want,
        )
        cand, codes = np.nonzero(counts)
        values = counts[cand, codes]
        cut = np.searchsorted(cand, np.arange(len(counts) + 1))
        return [(codes[p:q], values[p:q]) for p, q in zip(cut[:-1].tolist(), cut[1:].tolist())]

    def ids_of(
        self,
        codes: np.ndarray,
        counts: np.ndarray,
        labels: Sequence[str],
        grow: bool | None = None,
        doc: DocumentIndex | None = None,
        spans: Callable[[], list] | None = None,
    ):
        """:meth:`vector`'s (sorted ids, values) from a pair of :meth:`code_vectors`. Unknown
        strings are dropped unless growing; a candidate with a new string while growing is passed
        to :meth:`vector` (``doc`` and ``spans()``, its entities), so that new strings get their
        ids in the order the string form meets them, as they always have."""
        grow = (not self.frozen) if grow is None else grow
        table = self._table(tuple(labels))
        ids = table["ids"][codes]
        if grow and (ids < 0).any():
            return self.vector(doc, spans(), grow=True)
        keep = ids >= 0
        ids, vals = ids[keep], counts[keep].astype(np.float64)
        if table["shared"]:  # two codes with one string (label names such as "O"): add them up
            ids, inv = np.unique(ids, return_inverse=True)
            summed = np.zeros(len(ids))
            np.add.at(summed, inv, vals)
            return ids, summed
        order = np.argsort(ids, kind="stable")
        return ids[order], vals[order]

    def _table(self, labels: tuple) -> dict:
        """Per label list: the labels' ranks, every feature code's string, and the code → id map
        under the vocabulary as it is now (renewed when it has grown or been replaced)."""
        tables = self._tables
        t = tables.get(labels)
        if t is None:
            ranked = sorted(labels)
            t = tables[labels] = {
                "rank": np.array([ranked.index(x) for x in labels], dtype=np.int64),
                "names": _code_names(ranked),
                "stamp": None,
            }
        voc = self.vocabulary
        stamp = (id(voc), len(voc))
        if t["stamp"] != stamp:
            t["ids"] = ids = np.array(
                [voc.get(n, -1) if n is not None else -1 for n in t["names"]], dtype=np.int64
            )
            known = ids[ids >= 0]
            t["shared"] = len(sorted_unique(known)) < len(known)
            t["stamp"] = stamp
        return t

    def names(self) -> list[str]:
        out = [""] * len(self.vocabulary)
        for s, j in self.vocabulary.items():
            out[j] = s
        return out

    def state(self) -> dict:
        return {"templates": list(self.templates), "names": self.names()}

    @classmethod
    def from_state(cls, d: dict) -> NonLocalFeatures:
        nl = cls(d["templates"])
        nl.vocabulary = {s: j for j, s in enumerate(d["names"])}
        nl.frozen = True
        return nl


# The families of NonLocalFeatures.strings. ``ents``: the candidate's (start, end, label)
# sorted; ``keys[k]``: entity k's string; ``by_key``: string -> its entities, in order.
_Ents = list[tuple[int, int, str]]


def _phrase_features(out: Counter, doc: DocumentIndex, ents: _Ents, by_key: dict) -> None:
    """PC: pairs of entities with the same string, and the string left unlabelled elsewhere."""
    words = doc.words
    covered = np.zeros(len(words) + 1, dtype=np.int32)  # prefix count of entity tokens
    inside = np.zeros(len(words), dtype=np.int8)
    for a, b, _ in ents:
        inside[a:b] = 1
    np.cumsum(inside, out=covered[1:])
    for key, members in by_key.items():
        labels = [ents[k][2] for k in members]
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                out["PC:" + _pair(labels[x], labels[y])] += 1
                out["PC=same" if labels[x] == labels[y] else "PC=diff"] += 1
        n = len(key)
        free = sum(1 for i in doc.occurrences(key) if covered[i + n] == covered[i])
        if free:
            for lab in labels:
                out[f"PC:{lab}~O"] += free


def _containing(ents: _Ents, keys: list[tuple], by_key: dict) -> dict[int, list[int]]:
    """Entity -> the entities whose string contains its string as a proper sub-sequence
    (other mentions only: not the entities it lies inside)."""
    contains: dict[int, list[int]] = defaultdict(list)
    for f, key in enumerate(keys):
        n = len(key)
        if n < 2 or n > MAX_SUBPHRASE:
            continue
        seen = set()
        for m in range(1, n):
            for i in range(n - m + 1):
                sub = key[i : i + m]
                if sub in seen or sub not in by_key:
                    continue
                seen.add(sub)
                fa, fb, _ = ents[f]
                for e in by_key[sub]:
                    ea, eb, _ = ents[e]
                    if fa <= ea and eb <= fb:
                        continue  # e lies inside f: the same mention, not another one
                    contains[e].append(f)
    return contains


def _subphrase_features(out: Counter, ents: _Ents, contains: dict[int, list[int]]) -> None:
    """SP: an entity's string inside another entity's string."""
    for e, fs in contains.items():
        inner = ents[e][2]
        for f in fs:
            outer = ents[f][2]
            out[f"SP:{inner}<{outer}"] += 1
            out["SP=same" if inner == outer else "SP=diff"] += 1


def _majority_features(
    out: Counter,
    words: Sequence[str],
    ents: _Ents,
    keys: list[tuple],
    by_key: dict,
    contains: dict[int, list[int]],
) -> None:
    """MJ, MJS and MJT: an entity's label against the majority label of the other entities
    with its string, of the entities containing its string, and of its words elsewhere."""
    token_labels: dict[str, dict[str, int]] = {}
    for a, b, lab in ents:
        for i in range(a, b):
            d = token_labels.setdefault(words[i], {})
            d[lab] = d.get(lab, 0) + 1
    for k, (a, b, lab) in enumerate(ents):
        members = by_key[keys[k]]
        if len(members) > 1:
            maj = _majority_of(ents[j][2] for j in members if j != k)
            out[f"MJ:{lab}~{maj}"] += 1
        sup = contains.get(k)
        if sup:
            out[f"MJS:{lab}~{_majority_of(ents[f][2] for f in sup)}"] += 1
        _token_majority(out, words[a:b], lab, token_labels)


def _token_majority(
    out: Counter, span_words: Sequence[str], lab: str, token_labels: dict[str, dict[str, int]]
) -> None:
    """MJT for one entity: per word, the majority label of its other entity tokens (the
    entity's own tokens not counted; ties to the alphabetically first label)."""
    own: dict[str, int] = {}
    for w in span_words:
        own[w] = own.get(w, 0) + 1
    for w, n_own in own.items():
        best_n, best = 0, None
        for l2, c in token_labels[w].items():
            if l2 == lab:
                c -= n_own
            if c > best_n or (c == best_n and c > 0 and best is not None and l2 < best):
                best_n, best = c, l2
        if best is not None:
            out[f"MJT:{lab}~{best}"] += n_own


def _conjunction_features(out: Counter, doc: DocumentIndex, ents: _Ents) -> None:
    """CJ: consecutive entities joined by a coordination."""
    lower = doc.lower
    for k in range(len(ents) - 1):
        _a0, a1, la = ents[k]
        b0, _b1, lb = ents[k + 1]
        gap = b0 - a1
        if 1 <= gap <= 2 and lower[a1:b0] in COORDINATIONS:
            out["CJ:" + _pair(la, lb)] += 1
            out["CJ=same" if la == lb else "CJ=diff"] += 1


def _code_names(labels: Sequence[str]) -> list[str]:
    """The string of every feature code of :mod:`._nonlocal_compiled` (labels sorted)."""
    from . import _nonlocal_compiled as nc

    forms = {
        nc.PC_PAIR: "PC:{}~{}",
        nc.PC_SAME: "PC=same",
        nc.PC_DIFF: "PC=diff",
        nc.PC_O: "PC:{}~O",
        nc.SP: "SP:{}<{}",
        nc.SP_SAME: "SP=same",
        nc.SP_DIFF: "SP=diff",
        nc.MJ: "MJ:{}~{}",
        nc.MJS: "MJS:{}~{}",
        nc.MJT: "MJT:{}~{}",
        nc.CJ_PAIR: "CJ:{}~{}",
        nc.CJ_SAME: "CJ=same",
        nc.CJ_DIFF: "CJ=diff",
    }
    label_free = {nc.PC_SAME, nc.PC_DIFF, nc.SP_SAME, nc.SP_DIFF, nc.CJ_SAME, nc.CJ_DIFF}
    pairs = {nc.PC_PAIR, nc.CJ_PAIR}  # written with the smaller label first
    first = labels[0] if labels else None
    return [
        None
        if (f in label_free and (a, b) != (first, first))
        or (f in pairs and a > b)
        or (f == nc.PC_O and b != first)
        else forms[f].format(a, b)
        for f in range(nc.N_FAMILIES)
        for a in labels
        for b in labels
    ]


def template_of(name: str) -> str:
    """The family of a feature string (``PC``, ``SP``, ``MJ``, ``MJS``, ``MJT`` or ``CJ``)."""
    for sep in (":", "="):
        if sep in name:
            return name.split(sep, 1)[0]
    return name
