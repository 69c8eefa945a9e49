"""N-best lists: the candidate segmentations of every sentence, with their log-probabilities.

An :class:`NBestList` holds, per sentence: an id, the tokens, the gold spans when known, and
its candidates (tag-id sequences over the list's ``tagset``, best first) with L(x), the
tagger's log-probability. A list is saved as ``.npz`` (arrays only, no pickle) with a JSON
header carrying a format version; loading checks every declared size before reading an array (see
:mod:`nerstudio.persist`), validates tokens, tag ids and gold spans, and never executes code.

The entities of the candidates (:func:`scn_spans`, :func:`entity_types`, :func:`span_counts`) are
read here, below the taggers and the rerankers that both need them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .corpus.model import Span
from .corpus.schemes import check_spans, decode, encode, parse_tag
from .errors import DataError, FormatError
from .persist import Corrupt, json_array, json_value, load_npz, save_npz

NBEST_FORMAT = "nerstudio-nbest"
NBEST_VERSION = 1


#: start/continue reading of a tag's prefix: a BILOU tagger's B and U open an entity as S does,
#: I and L continue it as C does, so a valid sequence of either alphabet reads the same way
_AS_SCN = {"S": "S", "B": "S", "U": "S", "C": "C", "I": "C", "L": "C"}


def scn_tag(tag: str) -> str:
    """The SCN tag a tag of either alphabet reads as (``B-PER`` → ``S-PER``, ``L-PER`` → ``C-PER``)."""
    prefix, dash, label = tag.partition("-")
    return tag if tag == "N" else _AS_SCN.get(prefix, prefix) + dash + label


@functools.lru_cache(maxsize=64)
def _scn_names(tagset: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(scn_tag(t) for t in tagset)


def tags_to_spans(tag_ids: Sequence[int] | np.ndarray, tagset: Sequence[str]) -> list[Span]:
    """The spans of a valid tag sequence over ``tagset`` (SCN, or a BILOU tagger's tags)."""
    names = _scn_names(tuple(tagset))
    return decode([names[t] for t in tag_ids], "scn")[0]


def spans_to_tag_ids(
    spans: Sequence[Span], n: int, tag_index: dict[str, int], typed: bool, alphabet: str = "scn"
) -> np.ndarray:
    """The ``n`` tag ids of a sentence with ``spans`` in ``tag_index``, whose tags are of
    ``alphabet`` (``scn`` or ``bilou``; see :mod:`nerstudio.tagging.tag_alphabets`)."""
    if not typed:
        spans = [Span(s.start, s.end, "") for s in spans]
    tags = encode(spans, n, alphabet)  # BILOU's outside tag is O, the tag sets' N
    try:
        return np.array([tag_index["N" if t == "O" else t] for t in tags], dtype=np.int16)
    except KeyError as exc:
        raise DataError(f"entity type of tag {exc.args[0]!r} is not in the tag set") from None


def scn_spans(cands: np.ndarray, tagset: Sequence[str]):
    """Entities of every candidate of one sentence, vectorised.

    ``cands`` is an ``(n_c, len)`` array of SCN tag ids (or a BILOU tagger's, read the same
    way). Returns arrays ``(cand, start, end, label)`` with ``end`` exclusive and ``label`` an index into the sorted entity types ('' for
    the untyped task), ordered by candidate then start. Tags are those of a valid SCN sequence
    (a beam never proposes C after N); a stray C starts an entity, as conlleval would.
    """
    kinds, labels = _tag_kinds(tuple(tagset))
    k = kinds[cands]  # 0 = N, 1 = S, 2 = C
    lab = labels[cands]
    n_c, n = cands.shape
    if n == 0 or n_c == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z, z
    inside = k > 0
    prev_inside = np.zeros_like(inside)
    prev_inside[:, 1:] = inside[:, :-1]
    prev_lab = np.full_like(lab, -1)
    prev_lab[:, 1:] = lab[:, :-1]
    start = (k == 1) | ((k == 2) & (~prev_inside | (prev_lab != lab)))
    nxt_cont = np.zeros_like(inside)
    nxt_cont[:, :-1] = (k[:, 1:] == 2) & (lab[:, 1:] == lab[:, :-1])
    end = inside & ~nxt_cont
    sc, ss = np.nonzero(start)
    _, ee = np.nonzero(end)
    return (
        sc.astype(np.int64),
        ss.astype(np.int64),
        ee.astype(np.int64) + 1,
        lab[sc, ss].astype(np.int64),
    )


_KIND_CACHE: dict = {}


def _tag_kinds(tagset: tuple[str, ...]):
    hit = _KIND_CACHE.get(tagset)
    if hit is None:
        types = sorted({t.split("-", 1)[1] for t in tagset if "-" in t})
        tindex = {t: i for i, t in enumerate(types)}
        kinds = np.array(
            [0 if t == "N" else (1 if scn_tag(t)[0] == "S" else 2) for t in tagset], dtype=np.int8
        )
        labels = np.array(
            [tindex[t.split("-", 1)[1]] if "-" in t else 0 for t in tagset], dtype=np.int64
        )
        hit = _KIND_CACHE[tagset] = (kinds, labels, types)
    return hit[0], hit[1]


def entity_types(tagset: Sequence[str]) -> list[str]:
    """The entity types of an SCN tag set, sorted ('' alone for the untyped task)."""
    types = sorted({t.split("-", 1)[1] for t in tagset if "-" in t})
    return types or [""]


@dataclass
class NBestList:
    """Candidates for a list of sentences (see module docstring)."""

    tagset: list[str]
    words: list[tuple[str, ...]]
    candidates: list[np.ndarray]  # per sentence: (n_i, len_i) int16 tag ids, best first
    logprobs: list[np.ndarray]  # per sentence: (n_i,) float64
    gold: Sequence[list[Span]] | None = None  # a list, or an attached list's view of the corpus
    ids: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    _span_cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if not self.ids:
            self.ids = [str(i + 1) for i in range(len(self.words))]
        if not (len(self.words) == len(self.candidates) == len(self.logprobs) == len(self.ids)):
            raise ValueError("words, candidates, logprobs and ids must have one entry per sentence")
        if self.gold is not None and len(self.gold) != len(self.words):
            raise ValueError("gold must have one entry per sentence")

    def __len__(self) -> int:
        return len(self.words)

    @classmethod
    def concatenate(cls, lists: Sequence[NBestList]) -> NBestList:
        """The sentences of ``lists`` (made by one tagger) as one list, in order: their ids
        joined, gold when every list has it, the meta of the first."""
        if len(lists) == 1:
            return lists[0]
        first = lists[0]
        golds = [nb.gold for nb in lists]
        gold = (
            None
            if any(g is None for g in golds)
            else [s for g in golds if g is not None for s in g]
        )
        return cls(
            list(first.tagset),
            [w for nb in lists for w in nb.words],
            [c for nb in lists for c in nb.candidates],
            [lp for nb in lists for lp in nb.logprobs],
            gold,
            [i for nb in lists for i in nb.ids],
            dict(first.meta),
        )

    @property
    def typed(self) -> bool:
        return any("-" in t for t in self.tagset)

    def n_candidates(self, i: int) -> int:
        return int(self.candidates[i].shape[0])

    def spans(self, i: int, j: int) -> list[Span]:
        """Entities of candidate j of sentence i (cached)."""
        key = (i, j)
        hit = self._span_cache.get(key)
        if hit is None:
            hit = self._span_cache[key] = tags_to_spans(self.candidates[i][j], self.tagset)
        return hit

    def candidate_spans(self, i: int, n: int | None = None) -> list[list[Span]]:
        k = self.n_candidates(i) if n is None else min(n, self.n_candidates(i))
        return [self.spans(i, j) for j in range(k)]

    def top(self, choice: Sequence[int] | np.ndarray | None = None) -> list[list[Span]]:
        """Spans of the chosen candidate per sentence (the first by default)."""
        if choice is None:
            return [self.spans(i, 0) if self.n_candidates(i) else [] for i in range(len(self))]
        return [self.spans(i, int(j)) for i, j in enumerate(choice)]

    def gold_tag_ids(self, i: int) -> np.ndarray:
        if self.gold is None:
            raise DataError("the N-best list has no gold spans")
        index = {t: k for k, t in enumerate(self.tagset)}
        return spans_to_tag_ids(self.gold[i], len(self.words[i]), index, self.typed)

    def oracle_indices(self, criterion: str = "tags") -> np.ndarray:
        """Per sentence, the candidate closest to gold: most correct tags (or best span F),
        ties broken by the higher L(x), i.e. the earlier candidate."""
        if self.gold is None:
            raise DataError("the N-best list has no gold spans")
        out = np.zeros(len(self), dtype=np.int64)
        for i in range(len(self)):
            c = self.candidates[i]
            if c.shape[0] == 0:
                continue
            if criterion == "tags":
                g = self.gold_tag_ids(i)
                score = (c == g[None, :]).sum(axis=1).astype(float)
            else:
                gs = set(self.gold[i])
                score = np.array([_f(gs, set(self.spans(i, j))) for j in range(c.shape[0])])
            out[i] = int(np.argmax(score))  # argmax takes the first maximum: the best-ranked
        return out

    # -- persistence ----------------------------------------------------------------------
    def save(self, path) -> None:
        path = os.fspath(path)
        lens = np.array([len(w) for w in self.words], dtype=np.int64)
        ncand = np.array([c.shape[0] for c in self.candidates], dtype=np.int64)
        flat = (
            np.concatenate([c.reshape(-1) for c in self.candidates])
            if len(self)
            else np.zeros(0, np.int16)
        )
        header = {
            "format": NBEST_FORMAT,
            "version": NBEST_VERSION,
            "tagset": list(self.tagset),
            "ids": list(self.ids),
            "meta": self.meta,
            "has_gold": self.gold is not None,
        }
        payload = {
            "words": json_array([list(w) for w in self.words]),
            "lengths": lens,
            "n_candidates": ncand,
            "tags": flat.astype(np.int16),
            "logprobs": np.concatenate(self.logprobs).astype(np.float64)
            if len(self)
            else np.zeros(0),
        }
        if self.gold is not None:
            payload["gold"] = json_array([[list(s) for s in g] for g in self.gold])
            payload["oracle"] = self.oracle_indices()  # for readers of the file; recomputed on load
        save_npz(path, header, payload)

    @classmethod
    def load(cls, path) -> NBestList:
        """Read a file written by :meth:`save`. Everything is checked before use: the arrays'
        declared sizes against the header before they are read, tag ids, gold spans and tokens
        against each other; a bad file is one :class:`FormatError` naming it."""
        path = os.fspath(path)
        header, arrays = load_npz(path, NBEST_FORMAT, NBEST_VERSION, "an N-best file")
        try:  # the checks raise Corrupt; anything else is a bug and propagates
            return cls._from_arrays(header, arrays)
        except Corrupt as exc:
            raise FormatError(path, None, f"corrupt N-best file: {exc}") from None

    @classmethod
    def _from_arrays(cls, header: dict, arrays) -> NBestList:
        """Check and assemble a loaded file, stage by stage (a bad file raises Corrupt)."""
        ids, tagset, meta = _header_fields(header)
        n = len(ids)
        lens, ncand = _sizes(arrays, n)
        words = _words(arrays, n, lens)
        cands, lps = _candidates(arrays, lens, ncand, len(tagset))
        if "oracle" in arrays and arrays.shape("oracle") != (n,):
            raise Corrupt("oracle indices do not match the sentences")
        gold = _gold(arrays, n, lens, tagset) if header.get("has_gold") else None
        return cls(list(tagset), words, cands, lps, gold, [str(i) for i in ids], dict(meta))


def _header_fields(header: dict) -> tuple[list, list[str], dict]:
    """The header's sentence ids, SCN tag set (non-empty, no repeats) and metadata."""
    ids = header["ids"]
    tagset = header["tagset"]
    if (
        not isinstance(ids, list)
        or not isinstance(tagset, list)
        or not all(isinstance(t, str) for t in tagset)
    ):
        raise Corrupt("the header's ids and tag set must be lists")
    if not tagset or len(set(tagset)) != len(tagset):
        raise Corrupt("the tag set is empty or repeats a tag")
    for t in tagset:
        try:
            parse_tag(t, "scn")
        except DataError as exc:  # not an SCN tag
            raise Corrupt(f"the header's tag set: {exc}") from None
    meta = header.get("meta", {})
    if not isinstance(meta, dict):
        raise Corrupt("the header's meta must be an object")
    return ids, tagset, meta


def _sizes(arrays, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sentence lengths and candidate counts, checked against the tag and log-prob arrays'
    declared sizes before those are read."""
    for name in ("lengths", "n_candidates"):
        if arrays.shape(name) != (n,) or arrays.dtype(name).kind not in "iu":
            raise Corrupt(f"{name} must hold one integer per sentence ({n})")
    lens, ncand = arrays["lengths"].astype(np.int64), arrays["n_candidates"].astype(np.int64)
    if n and (lens.min() < 0 or ncand.min() < 0):
        raise Corrupt("negative lengths or candidate counts")
    n_tags, n_cand = int((lens * ncand).sum()), int(ncand.sum())
    if arrays.shape("tags") != (n_tags,) or arrays.dtype("tags").kind not in "iu":
        raise Corrupt(f"tags must hold {n_tags} integers (sentence lengths × candidates)")
    if arrays.shape("logprobs") != (n_cand,) or arrays.dtype("logprobs").kind != "f":
        raise Corrupt(f"logprobs must hold {n_cand} numbers (one per candidate)")
    return lens, ncand


def _words(arrays, n: int, lens: np.ndarray) -> list[tuple[str, ...]]:
    """The tokens of each sentence, as many as its length."""
    words = json_value(arrays["words"])
    if (
        not isinstance(words, list)
        or len(words) != n
        or not all(isinstance(w, list) for w in words)
    ):
        raise Corrupt("words must hold one list of tokens per sentence")
    words = [tuple(w) for w in words]
    if any(
        len(w) != k or not all(isinstance(t, str) for t in w) for w, k in zip(words, lens.tolist())
    ):
        raise Corrupt("the tokens do not match the sentence lengths")
    return words


def _candidates(
    arrays, lens: np.ndarray, ncand: np.ndarray, n_tagset: int
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each sentence's candidates (a candidates × length array of tag ids) and log-probs."""
    tags, lp = arrays["tags"], arrays["logprobs"].astype(np.float64, copy=False)
    if len(tags) and (tags.min() < 0 or tags.max() >= n_tagset):
        raise Corrupt("tag ids out of range")
    tags = tags.astype(np.int16, copy=False)
    cands, lps = [], []
    p = q = 0
    for k, m in zip(lens.tolist(), ncand.tolist()):
        cands.append(tags[p : p + k * m].reshape(m, k))
        lps.append(lp[q : q + m])
        p += k * m
        q += m
    return cands, lps


def _gold(arrays, n: int, lens: np.ndarray, tagset: list[str]) -> list[list[Span]]:
    """Each sentence's gold spans; in a typed tag set, of the set's entity types."""
    gold = [
        _gold_spans(g, k)
        for g, k in zip(_list(json_value(arrays["gold"]), n, "gold"), lens.tolist())
    ]
    typed = any("-" in t for t in tagset)
    labels = {t.partition("-")[2] for t in tagset if "-" in t}
    odd = sorted({sp.label for g in gold for sp in g if typed and sp.label not in labels})
    if odd:
        raise Corrupt(f"gold entity type {odd[0]!r} is not in the tag set")
    return gold


def _list(obj, n: int, what: str) -> list:
    if not isinstance(obj, list) or len(obj) != n:
        raise Corrupt(f"{what} must hold one entry per sentence")
    return obj


def _gold_spans(g, n: int) -> list[Span]:
    """Gold spans of a sentence of ``n`` tokens: whole-number bounds, sorted, inside, disjoint."""
    if not isinstance(g, list) or not all(isinstance(x, list) and len(x) == 3 for x in g):
        raise Corrupt(f"gold spans {g!r:.40} are not a list of [start, end, label]")
    spans = []
    for a, b, c in g:
        if (
            isinstance(a, bool)
            or isinstance(b, bool)
            or not isinstance(a, int)
            or not isinstance(b, int)
            or not isinstance(c, str)
        ):
            raise Corrupt(f"gold span {[a, b, c]!r} is not [start, end, label]")
        spans.append(Span(a, b, c))
    spans.sort()
    try:
        check_spans(spans, n)
    except DataError as exc:
        raise Corrupt(str(exc)) from None
    return spans


def _f(g: set, p: set) -> float:
    c = len(g & p)
    return 2.0 * c / (len(g) + len(p)) if (g or p) else 1.0


def span_counts(nb: NBestList):
    """Per candidate ``(correct, proposed)`` entity counts and per sentence gold counts."""
    S = len(nb)
    sizes = np.array([nb.n_candidates(i) for i in range(S)], dtype=np.int64)
    correct = np.zeros(int(sizes.sum()), dtype=np.int32)
    proposed = np.zeros(int(sizes.sum()), dtype=np.int32)
    n_gold = np.zeros(S, dtype=np.int32)
    types = entity_types(nb.tagset)
    tindex = {t: i for i, t in enumerate(types)}
    typed = nb.typed
    pos = 0
    for i in range(S):
        c = nb.candidates[i]
        m = c.shape[0]
        if m:
            cc, ss, ee, ll = scn_spans(c, nb.tagset)
            proposed[pos : pos + m] = np.bincount(cc, minlength=m)
            if nb.gold is not None:
                gold = {
                    (s.start, s.end, tindex.get(s.label, -1) if typed else 0) for s in nb.gold[i]
                }
                if gold:
                    hit = np.fromiter(
                        (
                            (a, b, lab) in gold
                            for a, b, lab in zip(ss.tolist(), ee.tolist(), ll.tolist())
                        ),
                        dtype=bool,
                        count=len(ss),
                    )
                    correct[pos : pos + m] = np.bincount(cc[hit], minlength=m)
        if nb.gold is not None:
            n_gold[i] = len(nb.gold[i])
        pos += m
    return correct, proposed, n_gold
