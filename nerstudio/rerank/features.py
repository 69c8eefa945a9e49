"""Global features of a candidate segmentation (Collins 2002 §3, Figure 1; SPEC §3).

The generator describes a whole tagged sentence with readable feature strings
``TYPE=v1 v2 …``: the entity-anchored templates of Figure 1 (WE, FF, GF, LW, LWLC, BO00–BO11,
BE00–BE11, TO000–TO111, TO2000–TO2111, TE000–TE111, TE2000–TE2111, PF/PF2, SF/SF2) for every
entity of the candidate, and the quote-anchored templates (Q, Q2, QF, QF2). For the typed task
every entity-anchored feature also appears with the entity's type (``WE:ORG=…``) besides its
untyped form. Values are joined by single spaces.

Primitives of word i: ``w`` the word; ``l`` 1 if it begins with a lower-case letter; ``f`` its
collapsed character-type shape (``Animal`` → ``Aa``); ``g`` = ``f`` followed by 1 or 0, whether
the word is in the lowercase lexicon; outside the sentence all are ``NULL``.

Quote pairs: quote tokens (``"``, ``“``, ``”``, ````` `` `````, ``''``) are paired in order, the
first with the second, the third with the fourth, and so on; s and e are the indices of the two
quotes of a pair, and e' the last word between them that begins with a letter or a digit.
Q and Q2 are generated only when ``e − s ≤ quote_max``; QF and QF2 only when e' exists.

With ``gazetteers=True`` every entity also gets the bundled gazetteers' view of it
(:mod:`nerstudio.resources`): ``GZ=<list>`` for each list that holds the entity's words as one
whole entry, ``GZF=<list>`` for each list that holds its first word alone, ``GZL=<list>`` its last
word alone (typed copies as for the other entity features); ``gazetteers`` may instead name
lists or families of lists (:func:`nerstudio.resources.select_lists`), to use those only. With
``context=True`` every entity
also gets ``DC`` / ``CC``, the label the tagger's best candidates give the same words elsewhere in
the document and in the rest of the list (:mod:`nerstudio.rerank.context`; the list's
``meta["documents"]`` gives each sentence's document); ``context="document"`` or ``"corpus"``
gives only DC or only CC. With ``posterior=True`` every entity also gets ``EP`` / ``ES``, the
share of its sentence's N-best list that holds it with its type / as an entity of any type, in
tenths (:func:`~nerstudio.rerank.context.entity_posteriors`).

With ``clusters=True`` (or a tuple of prefix lengths, default :data:`RERANK_CLUSTER_BITS`) every
entity also gets its words' Brown clusters (:mod:`nerstudio.resources.clusters`), for each
prefix length n: ``BC<n>`` the first n decisions of each word's path, joined by spaces
(``BC4=0110 0101`` for "New York"; an unclustered word is ``NULL``), and ``BCL<n>`` the last
word's alone (typed copies as for the other entity features). With ``biglex=True`` the
lowercase lexicon of the ``g`` primitive comes from the large corpus
(:func:`nerstudio.resources.clusters.large_lexicon`) instead of the training list's words.

Sharing work: a feature depends on the words and on one entity (its start, its end, its type),
or on a quote pair and the tags inside it. Start-side templates (BO, TO, TO2) are built once per
start position of a sentence, end-side ones (LW, LWLC, BE, TE, TE2) once per end position, the
prefix and suffix features once per (boundary, k), and each distinct entity once, whichever
candidates contain it. Strings become integer *keys*: ``base_id · (T + 1) + c`` where base_id
numbers the untyped string and c is 0 for the untyped feature or 1 + the index of the entity
type. :meth:`GlobalFeatures.fit` keeps the keys seen on at least ``min_sentences`` distinct
training sentences and numbers them; :meth:`GlobalFeatures.transform` turns any N-best list into
:class:`~nerstudio.rerank.data.RankingData`.

The module is long because it keeps the readable string path and the optimised integer path of
the same templates side by side, so that a change to one is seen next to the other (a test checks
that they agree).
"""

from __future__ import annotations

import gc
import itertools
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..arrays import sorted_unique
from ..errors import Cancelled, DataError, Msg, SettingsError
from ..nbest import NBestList, entity_types, scn_spans, span_counts
from ..resources.clusters import cluster_path, large_lexicon
from ..resources.clusters import fingerprint as cluster_fingerprint
from ..text.shapes import build_lexicon, collapsed_shape
from .context import (
    DocumentContext,
    entity_posteriors,
    gazetteer_strings,
    posterior_strings,
    resource_options,
)
from .data import RankingData, RowsData

NULL = "NULL"
_ROW_SHIFT = 40  # a sentence's (candidate, key) pairs are coded as candidate << 40 | key
_KEY_MASK = (1 << _ROW_SHIFT) - 1
_CHUNK_CODES = 1 << 19  # (candidate, key) codes looked up in the feature table at once
_DIRECT_KEYS = 1 << 24  # the largest key table looked up by index (4 bytes per key below it)
QUOTES = frozenset({'"', "“", "”", "``", "''", "„"})
_BITS2 = list(itertools.product((0, 1), repeat=2))
_BITS3 = list(itertools.product((0, 1), repeat=3))

START_TEMPLATES = tuple(
    [f"BO{a}{b}" for a, b in _BITS2]
    + [f"TO{a}{b}{c}" for a, b, c in _BITS3]
    + [f"TO2{a}{b}{c}" for a, b, c in _BITS3]
)
END_TEMPLATES = tuple(
    ["LW", "LWLC"]
    + [f"BE{a}{b}" for a, b in _BITS2]
    + [f"TE{a}{b}{c}" for a, b, c in _BITS3]
    + [f"TE2{a}{b}{c}" for a, b, c in _BITS3]
)
SPAN_TEMPLATES = ("WE", "FF", "GF", "PF", "PF2", "SF", "SF2")
GAZETTEER_TEMPLATES = ("GZ", "GZF", "GZL")  # with gazetteers=True only
CONTEXT_TEMPLATES = ("DC", "CC")  # with context=True only (nerstudio.rerank.context)
POSTERIOR_TEMPLATES = ("EP", "ES")  # with posterior=True only (nerstudio.rerank.context)
CLUSTER_TEMPLATES = ("BC", "BCL")  # with clusters=True only: BC<n>, BCL<n> per prefix length n
RERANK_CLUSTER_BITS = (4, 10)
QUOTE_TEMPLATES = ("Q", "Q2", "QF", "QF2")
TEMPLATES = START_TEMPLATES + END_TEMPLATES + SPAN_TEMPLATES + QUOTE_TEMPLATES


def template_of(name: str) -> str:
    """``'WE:ORG=Dougherty Arts Center'`` → ``'WE'``."""
    head = name.split("=", 1)[0]
    return head.split(":", 1)[0]


def type_of(name: str) -> str:
    """The entity type of a typed feature (``''`` for untyped ones)."""
    head = name.split("=", 1)[0]
    return head.split(":", 1)[1] if ":" in head else ""


def is_quote(word: str) -> bool:
    return word in QUOTES


class _Prims:
    """Per-word primitives (w, g, f, l) with NULL padding; word types are cached across sentences."""

    def __init__(self, lexicon: set[str]):
        self.lexicon = lexicon
        self.cache: dict[str, tuple[str, str, str]] = {}

    def of(self, word: str) -> tuple[str, str, str]:
        hit = self.cache.get(word)
        if hit is None:
            f = collapsed_shape(word)
            g = f + ("1" if word.lower() in self.lexicon else "0")
            lc = "1" if word[:1].islower() else "0"
            hit = self.cache[word] = (f, g, lc)
        return hit


class GlobalFeatures:
    """Global feature generator and feature index (see the module docstring).

    Parameters: ``min_sentences`` — keep a feature seen on at least this many distinct training
    sentences; ``typed`` — add typed copies of entity-anchored features (``None``: when the
    tag set is typed); ``quote_max`` — longest quoted stretch (e − s) given Q/Q2 features;
    ``quotes`` — generate the quote templates at all; ``oracle`` — how x_i1 is chosen in data
    with gold (:func:`set_oracle`).
    """

    def __init__(
        self,
        min_sentences: int = 5,
        typed: bool | None = None,
        quote_max: int = 10,
        quotes: bool = True,
        oracle: str = "tags",
        gazetteers: bool | Sequence[str] = False,
        context: bool | str = False,
        clusters: bool | Sequence[int] = False,
        biglex: bool = False,
        posterior: bool = False,
    ):
        self.posterior = bool(posterior)
        self.gazetteers, self.context, self._gz = resource_options(gazetteers, context)
        if clusters is True:
            clusters = RERANK_CLUSTER_BITS
        self.clusters = [int(b) for b in clusters] if clusters else False
        self.biglex = bool(biglex)
        self._bc_cache: dict[str, list[str]] = {}
        self._by_words: dict[tuple[str, ...], list[int]] = {}  # while a list is read
        self.min_sentences = min_sentences
        self.typed = typed
        self.quote_max = quote_max
        self.quotes = quotes
        self.oracle = oracle

    def get_params(self) -> dict:
        return {
            "min_sentences": self.min_sentences,
            "typed": self.typed,
            "quote_max": self.quote_max,
            "quotes": self.quotes,
            "oracle": self.oracle,
            "gazetteers": self.gazetteers,
            "context": self.context,
            "clusters": self.clusters,
            "biglex": self.biglex,
            "posterior": self.posterior,
        }

    def _cluster_strings(self, words: Sequence[str], s: int, e1: int) -> list[str]:
        """BC<n> / BCL<n> strings of the entity ``words[s:e1]`` (module docstring)."""
        if not self.clusters:
            return []
        cache = self._bc_cache
        per = []
        for w in words[s:e1]:
            hit = cache.get(w)
            if hit is None:
                path = cluster_path(w)
                hit = cache[w] = [NULL if path is None else path[:b] for b in self.clusters]
            per.append(hit)
        out = []
        for j, b in enumerate(self.clusters):
            out.append(f"BC{b}=" + " ".join(p[j] for p in per))
            out.append(f"BCL{b}={per[-1][j]}")
        return out

    def _context_strings(self, words: Sequence[str], s: int, e1: int) -> list[str]:
        ctx = getattr(self, "_ctx", None)
        return [] if ctx is None else ctx.strings(self._ctx_i, words[s:e1])

    def _posterior_strings(self, s: int, e1: int, label: str) -> list[str]:
        post = getattr(self, "_post", None) if self.posterior else None
        return [] if post is None else posterior_strings(post, s, e1, label)

    def _gazetteer_strings(
        self, words: Sequence[str], s: int, e1: int, single: dict | None = None
    ) -> list[str]:
        return [] if self._gz is None else gazetteer_strings(self._gz, words, s, e1, single)

    # -- readable strings (one candidate) ----------------------------------------------------
    def candidate_strings(
        self,
        words: Sequence[str],
        tags: Sequence[str],
        lexicon: set[str] | None = None,
        context: DocumentContext | None = None,
        sentence: int | None = None,
        posteriors: dict | None = None,
    ) -> list[str]:
        """All feature strings of one candidate tagging (SCN tags), before selection, sorted;
        ``context`` and ``sentence`` (the sentence's index in the context's list) give the DC/CC
        features, ``posteriors`` (:func:`~nerstudio.rerank.context.entity_posteriors` of the
        sentence's N-best list) the EP/ES features.

        This is the readable, unoptimised path: it builds every string directly from the
        templates. The integer path used for training must agree with it (a test checks).
        """
        saved = (
            getattr(self, "_ctx", None),
            getattr(self, "_ctx_i", None),
            getattr(self, "_post", None),
        )
        self._ctx, self._ctx_i, self._post = context, sentence, posteriors
        try:
            return self._candidate_strings(words, tags, lexicon)
        finally:
            self._ctx, self._ctx_i, self._post = saved

    def _candidate_strings(
        self, words: Sequence[str], tags: Sequence[str], lexicon: set[str] | None = None
    ) -> list[str]:
        lex = lexicon if lexicon is not None else getattr(self, "lexicon_", set())
        pr = _Prims(lex)
        n = len(words)
        P = [pr.of(w) for w in words]

        def w(i):
            return words[i] if 0 <= i < n else NULL

        def g(i):
            return P[i][1] if 0 <= i < n else NULL

        def f(i):
            return P[i][0] if 0 <= i < n else NULL

        def wg(i, bit):
            return g(i) if bit else w(i)

        tagset = sorted(set(tags) | {"N"})
        tag_ids = np.array([[tagset.index(t) for t in tags]], dtype=np.int64)
        _, ss, ee, ll = scn_spans(tag_ids, tagset)
        types = entity_types(tagset)
        typed = self._typed_for(tagset)
        out: list[str] = []
        for s, e1, lab in zip(ss.tolist(), ee.tolist(), ll.tolist()):
            e = e1 - 1
            feats = [
                f"WE={' '.join(w(i) for i in range(s, e + 1))}",
                f"FF={' '.join(f(i) for i in range(s, e + 1))}",
                f"GF={' '.join(g(i) for i in range(s, e + 1))}",
                f"LW={w(e)}",
                f"LWLC={P[e][2]}",
            ]
            feats += [f"BO{a}{b}={wg(s - 1, a)} {wg(s, b)}" for a, b in _BITS2]
            feats += [f"BE{a}{b}={wg(e, a)} {wg(e + 1, b)}" for a, b in _BITS2]
            feats += [f"TO{a}{b}{c}={wg(s - 2, a)} {wg(s - 1, b)} {wg(s, c)}" for a, b, c in _BITS3]
            feats += [
                f"TO2{a}{b}{c}={wg(s - 1, a)} {wg(s, b)} {wg(s + 1, c)}" for a, b, c in _BITS3
            ]
            feats += [f"TE{a}{b}{c}={wg(e - 1, a)} {wg(e, b)} {wg(e + 1, c)}" for a, b, c in _BITS3]
            feats += [
                f"TE2{a}{b}{c}={wg(e - 2, a)} {wg(e - 1, b)} {wg(e, c)}" for a, b, c in _BITS3
            ]
            for k in range(s, e + 1):
                feats.append(f"PF={' '.join(f(i) for i in range(s, k + 1))}")
                feats.append(f"PF2={' '.join(g(i) for i in range(s, k + 1))}")
            for k in range(e, s - 1, -1):
                feats.append(f"SF={' '.join(f(i) for i in range(e, k - 1, -1))}")
                feats.append(f"SF2={' '.join(g(i) for i in range(e, k - 1, -1))}")
            feats += self._gazetteer_strings(list(words), s, e + 1)
            feats += self._cluster_strings(list(words), s, e + 1)
            feats += self._context_strings(list(words), s, e + 1)
            feats += self._posterior_strings(s, e + 1, types[lab])
            out += feats
            if typed:
                t = types[lab]
                out += [_with_type(x, t) for x in feats]
        if self.quotes:
            out += _quote_strings(list(words), list(tags), [p[1] for p in P], self.quote_max)
        return sorted(set(out))

    def _typed_for(self, tagset: Sequence[str]) -> bool:
        if self.typed is None:
            return any("-" in t for t in tagset)
        return bool(self.typed) and any("-" in t for t in tagset)

    # -- fitting and transforming -------------------------------------------------------------
    def fit(
        self,
        nbest: NBestList,
        progress: Callable[[int, int], None] | None = None,
        should_cancel: Callable[[], bool] | None = None,
        lexicon: set[str] | None = None,
    ) -> GlobalFeatures:
        """Build the lexicon and the feature index from a (jackknifed) training N-best list."""
        self.fit_transform(nbest, progress, should_cancel, lexicon)
        return self

    def fit_transform(
        self, nbest: NBestList, progress=None, should_cancel=None, lexicon: set[str] | None = None
    ) -> RankingData:
        t0 = time.perf_counter()
        if lexicon is not None:
            self.lexicon_ = set(lexicon)
        else:
            self.lexicon_ = set(large_lexicon()) if self.biglex else build_lexicon(nbest.words)
        self.types_ = entity_types(nbest.tagset)
        self.typed_ = self._typed_for(nbest.tagset)
        self._base = _ShardedIndex()
        self._base_names: list[str] = []
        per_sentence, sent_keys = self._all_keys(
            nbest, grow=True, progress=progress, should_cancel=should_cancel
        )
        # selection: distinct training sentences per key
        allk = np.concatenate(sent_keys) if sent_keys else np.zeros(0, np.int64)
        del sent_keys
        uniq, counts = np.unique(allk, return_counts=True)
        del allk
        kept = uniq[counts >= self.min_sentences]
        del uniq, counts
        self._finish_index(kept)
        # the training keys use the base numbering before pruning; renumbering keeps their order,
        # so the position of a key in `kept` is its column
        data = self._to_data(nbest, per_sentence, kept)
        self.fit_seconds_ = time.perf_counter() - t0
        return data

    def _finish_index(self, kept: np.ndarray) -> None:
        T1 = len(self.types_) + 1
        base_ids = kept // T1
        codes = kept % T1
        names = []
        for b, c in zip(base_ids.tolist(), codes.tolist()):
            s = self._base_names[b]
            names.append(s if c == 0 else _with_type(s, self.types_[c - 1]))
        # renumber the base vocabulary to the bases still in use; keys change accordingly
        used = sorted_unique(base_ids)
        remap = {int(old): new for new, old in enumerate(used.tolist())}
        old_index, old_names = self._base, self._base_names
        self._base = _ShardedIndex((old_names[old], new) for old, new in remap.items())
        self._base_names = [old_names[old] for old in used.tolist()]
        old_index.release()
        _release_list(old_names)
        del old_index, old_names
        new_keys = np.array([remap[int(b)] for b in base_ids.tolist()], dtype=np.int64) * T1 + codes
        assert np.all(np.diff(new_keys) > 0), "renumbering must keep the key order"
        self.keys_ = new_keys
        self.names_ = names
        self.templates_ = [template_of(x) for x in self.names_]

    def transform(self, nbest: NBestList, progress=None, should_cancel=None) -> RankingData:
        """Ranking data of an N-best list with the fitted feature index (unknown features dropped)."""
        self._check_fitted()
        if entity_types(nbest.tagset) != self.types_:
            raise DataError(
                f"the N-best list's entity types {entity_types(nbest.tagset)} differ from the "
                f"features' {self.types_}"
            )
        per_sentence, _ = self._all_keys(
            nbest, grow=False, progress=progress, should_cancel=should_cancel
        )
        return self._to_data(nbest, per_sentence, self.keys_)

    def _check_fitted(self) -> None:
        if not hasattr(self, "keys_"):
            raise ValueError("the global features are not fitted")

    @property
    def n_features(self) -> int:
        return len(self.keys_)

    def _to_data(self, nbest: NBestList, per_sentence: list, table: np.ndarray) -> RankingData:
        """CSR rows from each sentence's sorted (candidate, key) codes; a key's column is its
        position in the sorted ``table`` (keys not in it are dropped)."""
        sizes = [nbest.n_candidates(i) for i in range(len(nbest))]
        n = sum(sizes)
        first = np.cumsum([0] + sizes)  # the global row of each sentence's first candidate
        counts = np.zeros(n, dtype=np.int64)
        parts = []
        columns = _Columns(table)
        # sentences a few hundred thousand codes at a time: few numpy calls, little memory
        chunk: list[np.ndarray] = []
        rows0: list[np.ndarray] = []
        held = 0
        for i, comb in enumerate([*per_sentence, None]):
            if comb is not None and len(comb):
                chunk.append(comb)
                rows0.append(np.full(len(comb), first[i], dtype=np.int64))
                held += len(comb)
            if chunk and (held >= _CHUNK_CODES or i == len(per_sentence)):
                codes = np.concatenate(chunk)
                cols = columns(codes & _KEY_MASK)
                ok = cols >= 0
                parts.append(cols[ok].astype(np.int32))
                rows = np.concatenate(rows0)[ok] + (codes[ok] >> _ROW_SHIFT)
                counts += np.bincount(rows, minlength=n)
                chunk, rows0, held = [], [], 0
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        indices = np.concatenate(parts) if parts else np.zeros(0, np.int32)
        return self.data_from_rows(nbest, indices, indptr, len(table))

    def data_from_rows(
        self, nbest: NBestList, indices: np.ndarray, indptr: np.ndarray, n_columns: int
    ) -> RankingData:
        """The ranking data of ``nbest`` whose candidates' feature columns are the CSR rows
        ``indices``/``indptr`` (what :meth:`transform` computes, or a saved copy of it)."""
        n = sum(nbest.n_candidates(i) for i in range(len(nbest)))
        if len(indptr) != n + 1:
            raise ValueError(f"{len(indptr) - 1} feature rows for {n} candidates")
        offsets = np.zeros(len(nbest) + 1, dtype=np.int64)
        np.cumsum([nbest.n_candidates(i) for i in range(len(nbest))], out=offsets[1:])
        L = np.concatenate(nbest.logprobs) if len(nbest) else np.zeros(0)
        # X is made (scipy) when a learner first reads it: shown and explained, none is needed
        data = RowsData(
            indices, indptr, n_columns, L, offsets, nbest=nbest, feature_names=self.names_
        )
        if nbest.gold is not None:
            data.correct, data.proposed, data.n_gold = span_counts(nbest)
            set_oracle(data, self.oracle)
        return data

    # -- the integer path --------------------------------------------------------------------
    def _all_keys(self, nbest: NBestList, grow: bool, progress=None, should_cancel=None):
        """Per sentence, the sorted unique codes ``candidate << 40 | key`` of all its candidates'
        features (``None`` for a sentence without candidates); with ``grow``, also each
        sentence's distinct keys (for the selection count).

        The cyclic garbage collector is paused meanwhile: this loop makes millions of small
        objects and no reference cycles, and a full collection in the middle of it would hold
        the interpreter lock for a long time (a GUI thread would freeze)."""
        enabled = gc.isenabled()
        gc.disable()
        self._by_words = {}
        try:
            return self._all_keys_loop(nbest, grow, progress, should_cancel)
        finally:
            self._by_words = {}
            if enabled:
                gc.enable()

    def _all_keys_loop(self, nbest: NBestList, grow: bool, progress, should_cancel):
        prims = _Prims(self.lexicon_)
        T1 = len(self.types_) + 1
        typed = self.typed_
        per_sentence, sent_keys = [], []
        S = len(nbest)
        last = time.perf_counter()
        self._ctx = None
        if self.context:
            docs = nbest.meta.get("documents")
            if docs is None:
                raise DataError(
                    "context features need the document of every sentence (meta 'documents' of the "
                    "N-best list)"
                )
            self._ctx = DocumentContext(
                nbest, docs, "both" if self.context is True else self.context
            )
        for i in range(S):
            self._ctx_i = i
            cands = nbest.candidates[i]
            comb = None
            if cands.shape[0]:
                r, k = self._sentence_keys(
                    nbest.words[i], cands, nbest.tagset, prims, T1, typed, grow, nbest.logprobs[i]
                )
                comb = sorted_unique((r << _ROW_SHIFT) | k)
                if grow:
                    sent_keys.append(sorted_unique(comb & _KEY_MASK))
            per_sentence.append(comb)
            if (i & 127) == 127:
                if should_cancel is not None and should_cancel():
                    raise Cancelled("feature extraction cancelled")
                now = time.perf_counter()
                if progress is not None and now - last > 0.1:
                    progress(i + 1, S)
                    last = now
        if progress is not None:
            progress(S, S)
        self._ctx = None
        return per_sentence, sent_keys

    def _id(self, s: str, grow: bool) -> int:
        shard = self._base.shards[hash(s) & _ShardedIndex.MASK]
        b = shard.get(s)
        if b is None:
            if not grow:
                return -1
            b = shard[s] = len(self._base_names)
            self._base_names.append(s)
        return b

    def _ids(self, names: Iterable[str], grow: bool) -> list[int]:
        """``[self._id(s, grow) for s in names]``, in one loop (the hottest of the extraction)."""
        shards, mask, out = self._base.shards, _ShardedIndex.MASK, []
        for s in names:
            shard = shards[hash(s) & mask]
            b = shard.get(s)
            if b is None:
                if grow:
                    b = shard[s] = len(self._base_names)
                    self._base_names.append(s)
                else:
                    b = -1
            out.append(b)
        return out

    def _sentence_keys(
        self,
        words,
        cands: np.ndarray,
        tagset,
        prims: _Prims,
        T1: int,
        typed: bool,
        grow: bool,
        logprobs=None,
    ):
        spans = _SpanIds(words, prims, self._ids, grow)
        cc, ss, ee, ll = scn_spans(cands, tagset)
        post = (
            entity_posteriors(logprobs, cands, tagset, (cc, ss, ee, ll)) if self.posterior else None
        )
        type_names = entity_types(tagset)
        single: dict[int, list[str]] = {}
        # a span's features but EP/ES depend on its words and position, not on its type: the
        # candidates of an N-best list give the same span several types, the typed copies are
        # made for all the sentence's spans at once at the end
        span_ids: dict[tuple[int, int], list[int]] = {}
        span_keys: dict[tuple, np.ndarray] = {}  # untyped keys by (s, e1) (and type, with EP/ES)
        rows: list[int] = []  # per entity of every candidate: its candidate, type, keys
        labs: list[int] = []
        keys: list[np.ndarray] = []
        for c, s, e1, lab in zip(cc.tolist(), ss.tolist(), ee.tolist(), ll.tolist()):
            key = (s, e1) if post is None else (s, e1, lab)
            b = span_keys.get(key)
            if b is None:
                ids = span_ids.get((s, e1))
                if ids is None:
                    ids = spans.bounds(s, e1)
                    ids += self._words_ids(words, s, e1, spans, single, grow)
                    ids += self._ids(self._context_strings(words, s, e1), grow)
                    span_ids[(s, e1)] = ids
                if post is not None:
                    ids = ids + self._ids(posterior_strings(post, s, e1, type_names[lab]), grow)
                b = span_keys[key] = _base_keys(ids, T1)
            rows.append(c)
            labs.append(lab + 1)
            keys.append(b)
        n_entities = len(keys)
        if self.quotes:  # untyped: the quote features are not an entity's
            self._quote_keys(words, cands, tagset, spans.G[: len(words)], T1, grow, rows, keys)
        if not keys:
            z = np.zeros(0, dtype=np.int64)
            return z, z
        sizes = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
        r = np.repeat(np.array(rows, dtype=np.int64), sizes)
        k = np.concatenate(keys)
        if typed and n_entities:
            m = int(sizes[:n_entities].sum())  # the entities' keys come first
            r = np.concatenate([r, r[:m]])
            k = np.concatenate(
                [k, k[:m] + np.repeat(np.array(labs, dtype=np.int64), sizes[:n_entities])]
            )
        return r, k

    def _words_ids(
        self, words, s: int, e1: int, spans: _SpanIds, single: dict, grow: bool
    ) -> list[int]:
        """Ids of the features of span [s, e1) that depend on its words alone (WE, FF, GF,
        prefixes and suffixes, gazetteers, clusters): the same for the same words in any
        sentence of the list, so kept by words while a list is read (names the first time
        they are met, so the numbering is that of building them every time)."""
        key = tuple(words[s:e1])
        ids = self._by_words.get(key)
        if ids is None:
            ids = self._by_words[key] = spans.inner(s, e1) + self._ids(
                self._gazetteer_strings(words, s, e1, single) + self._cluster_strings(words, s, e1),
                grow,
            )
        return ids

    def _quote_keys(self, words, cands, tagset, G, T1: int, grow: bool, rows, keys) -> None:
        """Each candidate's quote features (when the sentence has two quotes or more), added
        to ``keys`` (an array of keys per candidate) and ``rows`` (the candidate's index)."""
        qpos = [i for i, x in enumerate(words) if x in QUOTES]
        if len(qpos) < 2:
            return
        for c in range(cands.shape[0]):
            tags = [tagset[t] for t in cands[c]]
            ids = self._ids(_quote_strings(list(words), tags, G, self.quote_max, qpos), grow)
            b = np.array([x for x in ids if x >= 0], dtype=np.int64) * T1
            keys.append(b)
            rows.append(c)

    # -- persistence -------------------------------------------------------------------------
    def state(self) -> tuple[dict, dict]:
        """JSON-able settings and arrays for a model file."""
        self._check_fitted()
        head = {
            "params": self.get_params(),
            "types": self.types_,
            "typed": self.typed_,
            "gazetteers": self._gz.fingerprint if self._gz is not None else None,
            "n_lexicon": len(self.lexicon_),
        }
        if self.clusters or self.biglex:
            head["clusters"] = cluster_fingerprint()
        from ..persist import json_array

        arrays = {
            "gf_keys": self.keys_,
            "gf_base": json_array(self._base_names),
            "gf_lexicon": json_array(sorted(self.lexicon_)),
        }
        return head, arrays

    @classmethod
    def from_state(cls, head: dict, arrays: dict) -> GlobalFeatures:
        from ..persist import Corrupt, construct, distinct, header_field, json_strings, vector

        self = construct(cls, head.get("params"), "features.params")
        if self._gz is not None and head.get("gazetteers") != self._gz.fingerprint:
            raise Corrupt(Msg.OTHER_RESOURCE.format(what="gazetteer lists", detail=""))
        if (self.clusters or self.biglex) and head.get("clusters") != cluster_fingerprint():
            raise Corrupt(Msg.OTHER_RESOURCE.format(what="word clusters", detail=""))
        self.types_ = list(
            distinct(header_field(head, "types", list[str], "features.types"), "features.types")
        )
        self.typed_ = header_field(head, "typed", bool, "features.typed")
        self.lexicon_ = set(json_strings(arrays, "gf_lexicon"))
        n_lexicon = header_field(head, "n_lexicon", int, "features.n_lexicon", None)
        if n_lexicon is not None and len(self.lexicon_) != n_lexicon:
            raise Corrupt(
                f"array 'gf_lexicon' holds {len(self.lexicon_)} words, the header says {n_lexicon}"
            )
        self._base_names = json_strings(arrays, "gf_base", unique=True)
        self._base = _ShardedIndex((s, i) for i, s in enumerate(self._base_names))
        keys = vector(arrays, "gf_keys", dtype=np.int64)
        T1 = len(self.types_) + 1
        if len(keys) and (
            keys.min() < 0
            or keys.max() // T1 >= len(self._base_names)
            or np.any(np.diff(keys) <= 0)
        ):
            raise Corrupt("feature keys out of range or unsorted")
        self.keys_ = keys
        self.names_ = [
            self._base_names[k // T1]
            if k % T1 == 0
            else _with_type(self._base_names[k // T1], self.types_[k % T1 - 1])
            for k in keys.tolist()
        ]
        self.templates_ = [template_of(x) for x in self.names_]
        return self


class _SpanIds:
    """The base-feature ids of one sentence's spans from its words alone (boundary n-grams,
    the words, forms and shapes within, prefixes and suffixes). A span's start, end, prefix
    and suffix features are computed once for all the spans that share them; ids are asked
    of ``ids_of(names, grow)`` in the order the features are listed (it numbers new ones)."""

    def __init__(
        self, words, prims: _Prims, ids_of: Callable[[Iterable[str], bool], list[int]], grow: bool
    ):
        self.n = len(words)
        self.P = P = [prims.of(x) for x in words]
        self.W = list(words) + [NULL, NULL]  # index -1 and -2 wrap to NULL
        self.G = [p[1] for p in P] + [NULL, NULL]
        self.Fs = [p[0] for p in P] + [NULL, NULL]
        self.ids_of, self.grow = ids_of, grow
        self.start_cache: dict[int, list[int]] = {}
        self.end_cache: dict[int, list[int]] = {}
        self.pre_cache: dict[tuple[int, int], list[int]] = {}
        self.suf_cache: dict[tuple[int, int], list[int]] = {}

    def at(self, i: int) -> int:  # map out-of-range to the NULL slots
        return i if 0 <= i < self.n else self.n

    def bounds(self, s: int, e1: int) -> list[int]:
        """The ids of the start- and end-side features of span [s, e1) (a new list)."""
        return self.start(s) + self.end(e1 - 1)

    def inner(self, s: int, e1: int) -> list[int]:
        """The ids of the features of span [s, e1) within it (WE, FF, GF, prefixes, suffixes;
        a new list)."""
        W, G, Fs = self.W, self.G, self.Fs
        ids = self.ids_of(
            (
                "WE=" + " ".join(W[s:e1]),
                "FF=" + " ".join(Fs[s:e1]),
                "GF=" + " ".join(G[s:e1]),
            ),
            self.grow,
        )
        for k in range(s, e1):
            ids += self.prefix(s, k)
            ids += self.suffix(e1, k)
        return ids

    def start(self, s: int) -> list[int]:
        st = self.start_cache.get(s)
        if st is None:
            at, W, G = self.at, self.W, self.G
            p2, p1, p0, q1 = at(s - 2), at(s - 1), s, at(s + 1)
            names = _start_names(W[p2], W[p1], W[p0], W[q1], G[p2], G[p1], G[p0], G[q1])
            st = self.start_cache[s] = self.ids_of(names, self.grow)
        return st

    def end(self, e: int) -> list[int]:
        en = self.end_cache.get(e)
        if en is None:
            at, W, G = self.at, self.W, self.G
            m2, m1, m0, n1 = at(e - 2), at(e - 1), e, at(e + 1)
            names = _end_names(W[m2], W[m1], W[m0], W[n1], G[m2], G[m1], G[m0], G[n1], self.P[e][2])
            en = self.end_cache[e] = self.ids_of(names, self.grow)
        return en

    def prefix(self, s: int, k: int) -> list[int]:
        pk = self.pre_cache.get((s, k))
        if pk is None:
            pk = self.pre_cache[(s, k)] = self.ids_of(
                ("PF=" + " ".join(self.Fs[s : k + 1]), "PF2=" + " ".join(self.G[s : k + 1])),
                self.grow,
            )
        return pk

    def suffix(self, e1: int, k: int) -> list[int]:
        # keyed by the span's last token, as the span [s, e1) ends there
        e = e1 - 1
        sk = self.suf_cache.get((e, k))
        if sk is None:
            sk = self.suf_cache[(e, k)] = self.ids_of(
                (
                    "SF=" + " ".join(reversed(self.Fs[k:e1])),
                    "SF2=" + " ".join(reversed(self.G[k:e1])),
                ),
                self.grow,
            )
        return sk


def _start_names(w2, w1, w0, x1, g2, g1, g0, y1) -> tuple[str, ...]:
    """BO, TO and TO2 of an entity starting at word 0 (words w, their ``g`` forms g at offsets
    −2, −1, 0 and +1 as w2, w1, w0, x1): the templates of :data:`START_TEMPLATES`, in that
    order, written out (the digits say which of w and g each position takes)."""
    return (
        f"BO00={w1} {w0}",
        f"BO01={w1} {g0}",
        f"BO10={g1} {w0}",
        f"BO11={g1} {g0}",
        f"TO000={w2} {w1} {w0}",
        f"TO001={w2} {w1} {g0}",
        f"TO010={w2} {g1} {w0}",
        f"TO011={w2} {g1} {g0}",
        f"TO100={g2} {w1} {w0}",
        f"TO101={g2} {w1} {g0}",
        f"TO110={g2} {g1} {w0}",
        f"TO111={g2} {g1} {g0}",
        f"TO2000={w1} {w0} {x1}",
        f"TO2001={w1} {w0} {y1}",
        f"TO2010={w1} {g0} {x1}",
        f"TO2011={w1} {g0} {y1}",
        f"TO2100={g1} {w0} {x1}",
        f"TO2101={g1} {w0} {y1}",
        f"TO2110={g1} {g0} {x1}",
        f"TO2111={g1} {g0} {y1}",
    )


def _end_names(w2, w1, w0, x1, g2, g1, g0, y1, lc) -> tuple[str, ...]:
    """LW, LWLC, BE, TE and TE2 of an entity ending at word 0 (as :func:`_start_names`; ``lc``
    the last word's lowercase flag): the templates of :data:`END_TEMPLATES`, in that order."""
    return (
        f"LW={w0}",
        f"LWLC={lc}",
        f"BE00={w0} {x1}",
        f"BE01={w0} {y1}",
        f"BE10={g0} {x1}",
        f"BE11={g0} {y1}",
        f"TE000={w1} {w0} {x1}",
        f"TE001={w1} {w0} {y1}",
        f"TE010={w1} {g0} {x1}",
        f"TE011={w1} {g0} {y1}",
        f"TE100={g1} {w0} {x1}",
        f"TE101={g1} {w0} {y1}",
        f"TE110={g1} {g0} {x1}",
        f"TE111={g1} {g0} {y1}",
        f"TE2000={w2} {w1} {w0}",
        f"TE2001={w2} {w1} {g0}",
        f"TE2010={w2} {g1} {w0}",
        f"TE2011={w2} {g1} {g0}",
        f"TE2100={g2} {w1} {w0}",
        f"TE2101={g2} {w1} {g0}",
        f"TE2110={g2} {g1} {w0}",
        f"TE2111={g2} {g1} {g0}",
    )


class _ShardedIndex:
    """A str → int mapping split over 64 dicts by hash. Training grows it to millions of
    strings; one dict that size would, on each doubling, rehash everything in a single C call
    that holds the interpreter lock for tens of milliseconds (a GUI thread would stutter)."""

    N = 64
    MASK = N - 1  # a key's shard: ``shards[hash(key) & MASK]``

    def __init__(self, items=()):
        self.shards: list[dict[str, int]] = [{} for _ in range(self.N)]
        for k, v in items:
            self.shards[hash(k) & self.MASK][k] = v

    def shard(self, key: str) -> dict[str, int]:
        return self.shards[hash(key) & self.MASK]

    def __len__(self) -> int:
        return sum(len(d) for d in self.shards)

    def release(self) -> None:
        """Empty the shards one by one (each a short C call, not one long one)."""
        for d in self.shards:
            d.clear()


def _release_list(items: list, chunk: int = 65536) -> None:
    """Empty a long list a slice at a time, so freeing its items never holds the interpreter
    lock for long (freeing a million strings in one call takes ~100 ms)."""
    while items:
        del items[-chunk:]


def _base_keys(ids: list[int], T1: int) -> np.ndarray:
    """The untyped keys of the known ids among ``ids`` (−1: unknown), in order."""
    b = np.array(ids, dtype=np.int64)
    return b[b >= 0] * T1


def _lookup(table: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Position of each key in the sorted ``table``, or -1 when absent."""
    if len(table) == 0:
        return np.full(len(keys), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(table, keys), len(table) - 1)
    return np.where(table[pos] == keys, pos, -1).astype(np.int64)


class _Columns:
    """Position of keys in a sorted table of distinct non-negative keys, or −1 when absent
    (:func:`_lookup`), by one array read per key when the largest key is small enough for a
    table indexed by key (at most :data:`_DIRECT_KEYS` entries), else by binary search."""

    def __init__(self, table: np.ndarray):
        self.table = table
        self.direct: np.ndarray | None = None
        top = int(table[-1]) + 1 if len(table) else 0
        if 0 < top <= _DIRECT_KEYS:
            self.direct = np.full(top, -1, dtype=np.int32)
            self.direct[table] = np.arange(len(table), dtype=np.int32)

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        d = self.direct
        if d is None:
            return _lookup(self.table, keys)
        inside = keys < len(d)
        return np.where(inside, d[np.where(inside, keys, 0)], -1)


def _with_type(name: str, t: str) -> str:
    head, _, val = name.partition("=")
    return f"{head}:{t}={val}"


def _quote_strings(
    words: list[str], tags: list[str], g: list[str], quote_max: int, qpos: list[int] | None = None
) -> list[str]:
    """Q, Q2, QF, QF2 for every quote pair of one candidate (see the module docstring)."""
    n = len(words)
    if qpos is None:
        qpos = [i for i, x in enumerate(words) if x in QUOTES]

    def gg(i):
        return g[i] if 0 <= i < n else NULL

    def tt(i):
        return tags[i] if 0 <= i < n else NULL

    out = []
    for a in range(0, len(qpos) - 1, 2):
        s, e = qpos[a], qpos[a + 1]
        if e - s <= quote_max:
            out.append("Q=" + " ".join(f"{gg(i)} {tt(i)}" for i in range(s, e + 1)))
            out.append("Q2=" + " ".join(f"{gg(i)} {tt(i)}" for i in range(s - 1, e + 2)))
        inner = [i for i in range(s + 1, e) if words[i][:1].isalnum()]
        if not inner:
            continue
        ep = inner[-1]
        first = tags[s + 1]
        bprime = int(
            first.startswith("S") and all(tags[i].startswith("C") for i in range(s + 2, ep + 1))
        )
        u = sum(1 for i in range(s + 1, e) if words[i][:1].isupper())
        lo = sum(1 for i in range(s + 1, e) if words[i][:1].islower())
        b = int(u > lo)
        out.append(f"QF={bprime} {u} {lo} {gg(s + 1)} {gg(ep)}")
        out.append(f"QF2={bprime} {b} {gg(s + 1)} {gg(ep)}")
    return out


def set_oracle(data: RankingData, criterion: str = "tags") -> RankingData:
    """Choose x_i1 and the candidate quality by ``criterion``: ``tags`` (most correct tags, the
    paper's choice) or ``f`` (best sentence-level span F; ties by correct tags). Ties left go to the
    higher L(x), i.e. the earlier candidate."""
    nb = data.nbest
    tags = _tag_quality(nb)
    if criterion == "tags":
        q = tags
    elif criterion == "f":
        g = data.n_gold[data.group].astype(np.float64)
        denom = g + data.proposed
        f = np.where(denom > 0, 2.0 * data.correct / np.maximum(denom, 1), 1.0)
        # F first; among equal F, more correct tags (tags ≤ sentence length < 10^4)
        q = np.round(f, 9) * 1e4 + tags
    else:
        raise SettingsError(f"unknown oracle criterion {criterion!r} (tags or f)")
    data.quality = q
    data.oracle = data.argmax(q)
    return data


def _tag_quality(nb: NBestList) -> np.ndarray:
    """Per candidate, the number of correct tags (the paper's oracle criterion)."""
    out = []
    for i in range(len(nb)):
        c = nb.candidates[i]
        if c.shape[0] == 0:
            continue
        g = nb.gold_tag_ids(i)
        out.append((c == g[None, :]).sum(axis=1))
    return np.concatenate(out).astype(np.float64) if out else np.zeros(0)
