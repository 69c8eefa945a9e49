"""Local feature templates of the maximum-entropy tagger (Collins 2002 §2.2; SPEC §2).

A template maps a token in context to a *predicate* string such as ``w-1=Mr.``; the model
conjoins every predicate with every tag (the weight matrix has one row per predicate and one
column per tag), and the trainer keeps only the (predicate, tag) pairs seen at least ``cutoff``
times.

Two named feature sets:

``paper``
    exactly Collins' templates: the current, previous and next word; the previous tag and the
    previous two tags (dynamic, see :mod:`nerstudio.tagging.maxent`); the compound
    ``first-word / in-lowercase-lexicon / first-character-type`` feature; the full and the
    collapsed character-type mappings of the word.
``conll``
    the paper's set plus what CoNLL-2003 offers: lower-cased words and collapsed shapes in a ±2
    window, prefixes and suffixes of 1–4 characters, word bigrams, and the POS and chunk columns
    (±1 window, POS bigrams) when the corpus has them.

Either set with ``+gaz`` (``paper+gaz``, ``conll+gaz``) adds the bundled gazetteers
(:mod:`nerstudio.resources`): per list, the IOB2 tag of the token and of its neighbours (±1) in
the list's longest-match segmentation of the sentence (templates ``gz:<list>``, ``gz:<list>-1``,
``gz:<list>+1``; one family per list, each tier of a tiered list apart).

Extras are joined with ``+`` and may be combined (``conll+gaz+rich``):

``gaz`` or ``gaz:<lists>``
    the gazetteer templates above, of every list or of some (``<lists>``: list or family names
    joined by ``/``, as :func:`nerstudio.resources.select_lists` reads them with commas, e.g.
    ``conll+gaz:locations/nationalities``), so an ablation can keep only the families dev agrees with;
``rich``
    more word-shape and affix templates: prefixes and suffixes of 5 characters, the full shape
    of the previous and next word, their lowercase-lexicon flags, and the first-character types
    of the previous, current and next word as one pattern (``Aa|A|a``: capitalisation in context).

``clusters`` or ``clusters:<bits>``
    Brown-cluster path prefixes (:mod:`nerstudio.resources.clusters`) of the words at offsets
    −2..+2: templates ``bc<n><k>`` for each prefix length n (default :data:`CLUSTER_BITS`, or
    lengths joined by ``/``: ``clusters:4/8/12``) and offset k, e.g. ``bc10-1=0110010101`` (the
    first 10 decisions of the previous word's path; a shorter path whole; an unclustered word or
    a position outside the sentence has ``NULL``);
``biglex``
    the lowercase lexicon of the ``cmp``, ``lex`` and ``rich`` templates from the large corpus
    (:func:`nerstudio.resources.clusters.large_lexicon`) instead of from the training text: the
    templates keep their names, only the lexicon they look up changes. Without it ``paper`` is
    exactly Collins' set as the paper's experiments used it (lexicon from the training text).

Extraction is vectorised per template: each template yields one integer code per token, the
distinct codes are turned into strings once, and strings map to predicate ids through the
vocabulary. Words are handled per *type*, so a corpus of 200k tokens costs a few hundred
thousand dictionary look-ups, not millions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from ..corpus.model import Sentence
from ..errors import SettingsError
from ..resources import gazetteers
from ..resources.clusters import cluster_path, large_lexicon, path_prefix
from ..text.shapes import build_lexicon, fast_collapsed_shape, fast_shape, first_char_type

NULL = "NULL"
BASE_SETS = ("paper", "conll")
#: the named sets the command line offers; :func:`parse_feature_set` reads every combination
FEATURE_SETS = BASE_SETS + tuple(f"{b}+gaz" for b in BASE_SETS)
GAZ_VALUES = [NULL, "O", "B", "I"]


#: the Brown-cluster prefix lengths of ``+clusters`` (on CoNLL-2003 dev none of five other sets
#: gains 0.1 F over these, docs/results.md)
CLUSTER_BITS = (4, 6, 10, 20)
CLUSTER_OFFSETS = (-2, -1, 0, 1, 2)


def parse_feature_set(name: str) -> tuple[str, tuple[str, ...] | None, bool]:
    """``(base set, gazetteer list names or None, rich)`` of a feature-set name (module
    docstring); an unknown part is a ``ValueError`` naming it. :func:`parse_resources` reads the
    cluster and lexicon parts of the same name."""
    base, lists, rich, _, _ = _parse(name)
    return base, lists, rich


def parse_resources(name: str) -> tuple[tuple[int, ...], bool]:
    """``(cluster prefix lengths, () without +clusters; large lexicon?)`` of a feature-set name."""
    return _parse(name)[3:]


def _parse(name: str):
    from ..resources import list_names, select_lists

    base, *extras = name.split("+")
    if base not in BASE_SETS:
        raise SettingsError(
            f"unknown feature set {name!r} (choose from {', '.join(FEATURE_SETS)}, "
            "with +gaz[:LISTS], +rich, +clusters[:BITS] and +biglex)"
        )
    lists, rich, bits, biglex = None, False, None, False
    for extra in extras:
        kind, _, spec = extra.partition(":")
        if kind == "gaz" and lists is None:
            lists = tuple(list_names()) if not spec else select_lists(spec.replace("/", ","))
        elif extra == "rich" and not rich:
            rich = True
        elif kind == "clusters" and bits is None:
            try:
                bits = tuple(sorted({int(b) for b in spec.split("/")})) if spec else CLUSTER_BITS
            except ValueError:
                bits = ()
            if not bits or min(bits) < 1:
                raise SettingsError(
                    f"feature set {name!r}: clusters:BITS takes prefix lengths joined by /, "
                    "e.g. clusters:4/6/10/20"
                )
        elif extra == "biglex" and not biglex:
            biglex = True
        else:
            raise SettingsError(
                f"feature set {name!r}: unknown or repeated part {extra!r} "
                "(gaz, gaz:LISTS, rich, clusters, clusters:BITS, biglex)"
            )
    return base, lists, rich, bits or (), biglex


class _Template:
    """One template: ``codes(ctx)`` gives an int code per token; ``value(code)`` its string.

    ``source`` names the context variable the template is a function of (``("w", k)``: the word
    at offset k, at offset 0 together with the first-in-sentence flag; ``("col", j)``: the
    column-j values at offsets −1, 0, +1), or is None. Templates sharing a source take the same
    predicates on every token with the same source value, which the trainer exploits.
    """

    def __init__(
        self,
        name: str,
        codes: Callable,
        value: Callable,
        source: tuple | None = None,
        values: Callable | None = None,
        injective: bool = False,
    ):
        self.name = name
        self.codes = codes
        self.value = value
        self.source = source
        # many codes at once
        self.values = values or (lambda codes: [value(c) for c in codes.tolist()])
        self.injective = injective  # distinct codes have distinct values


def _intern(values: list, first: str | None = NULL) -> tuple[list, np.ndarray]:
    """Distinct values in order of first occurrence (``first``, unless None, gets id 0) and the id
    of each value."""
    index = dict.fromkeys([first] if first is not None else [])
    index.update(dict.fromkeys(values))
    for i, v in enumerate(index):
        index[v] = i
    ids = np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
    return list(index), ids


def _unique_inverse(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for non-negative codes, by counting when they are
    small (word and column ids) instead of sorting."""
    n = len(codes)
    if n and codes.min() >= 0 and codes.max() < 4 * n + 1024:
        present = np.zeros(int(codes.max()) + 1, dtype=bool)
        present[codes] = True
        uniq = np.flatnonzero(present)
        return uniq, (np.cumsum(present) - 1)[codes]
    uniq, inv = np.unique(codes, return_inverse=True)
    return uniq, inv.reshape(-1)


class FeatureExtractor:
    """Maps sentences to a sparse binary matrix of predicates (one row per token)."""

    def __init__(self, feature_set: str = "paper", lexicon: set[str] | None = None):
        self.base_set, lists, self.rich, self.cluster_bits, self.biglex = _parse(feature_set)
        self.feature_set = feature_set
        self.gazetteers = gazetteers(lists) if lists is not None else None
        self.lexicon: set[str] = set(lexicon or ())
        if self.biglex and not self.lexicon:
            self.lexicon = set(large_lexicon())
        self.vocab: dict[str, int] = {}
        self.frozen = False

    # -- context arrays --------------------------------------------------------------------
    def _context(self, sentences: Sequence[Sentence]) -> dict:
        """Per-token integer arrays shared by the templates (types of words and columns)."""
        lens = np.fromiter((len(s.words) for s in sentences), dtype=np.int64, count=len(sentences))
        n = int(lens.sum())
        types, word_ids = _intern([w for s in sentences for w in s.words])
        starts = np.zeros(len(sentences) + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        pos_in_sent = np.arange(n, dtype=np.int64) - np.repeat(starts[:-1], lens)
        len_of_tok = np.repeat(lens, lens)
        ctx = {
            "types": types,
            "word_ids": word_ids,
            "pos": pos_in_sent,
            "len": len_of_tok,
            "n": n,
            "starts": starts,
            "cols": [],
        }
        if self.gazetteers is not None:
            code = {"O": 1, "B": 2, "I": 3}
            per_list = {name: np.empty(n, dtype=np.int64) for name in self.gazetteers.names}
            for s, a in zip(sentences, starts[:-1].tolist()):
                for name, tags in self.gazetteers.iob(s.words).items():
                    per_list[name][a : a + len(tags)] = [code[t] for t in tags]
            ctx["gaz"] = per_list
        ncols = min((len(s.extra) for s in sentences), default=0)
        for j in range(ncols):
            ctx["cols"].append(_intern([v for s in sentences for v in s.extra[j]]))
        return ctx

    @staticmethod
    def _shift(arr: np.ndarray, ctx: dict, k: int) -> np.ndarray:
        """Values at offset k inside the sentence, 0 (NULL) outside it (kept for reuse in ctx:
        several templates look at the same array at the same offset)."""
        if k == 0:
            return arr
        cache = ctx.setdefault("shifted", {})
        key = (id(arr), k)
        if key not in cache:
            n = ctx["n"]
            ok = (ctx["pos"] + k >= 0) & (ctx["pos"] + k < ctx["len"])
            out = np.zeros(n, dtype=arr.dtype)
            out[ok] = arr[np.flatnonzero(ok) + k]
            cache[key] = (arr, out)  # holding arr keeps its id unique
        return cache[key][1]

    def _templates(self, ctx: dict) -> list[_Template]:
        types = ctx["types"]
        lex = self.lexicon
        T: list[_Template] = []
        tables: dict = {}

        def ident(w: str) -> str:
            return w

        def table(f: Callable[[str], str]) -> list[str]:
            """f of every word type (NULL for the NULL code), computed once per function."""
            if f not in tables:
                tables[f] = [NULL] + [f(w) for w in types[1:]]
            return tables[f]

        def lookup(tab: list) -> Callable:
            return lambda codes: [tab[c] for c in codes.tolist()]

        def word_t(name: str, k: int, f: Callable[[str], str]):
            tab = table(f)
            T.append(
                _Template(
                    name,
                    lambda c, k=k: self._shift(c["word_ids"], c, k),
                    tab.__getitem__,
                    ("w", k),
                    lookup(tab),
                    injective=f is ident,
                )
            )

        # the paper's templates
        word_t("w", 0, ident)
        word_t("w-1", -1, ident)
        word_t("w+1", 1, ident)
        word_t("shape", 0, fast_shape)
        word_t("cshape", 0, fast_collapsed_shape)
        # compound: first word of sentence / in lowercase lexicon / type of first character
        first_type = {"A": 1, "a": 2, "0": 3}

        def compound_codes(c):
            wid = c["word_ids"]
            inlex = np.fromiter(
                (1 if w.lower() in lex else 0 for w in types), dtype=np.int64, count=len(types)
            )
            extra_chars: dict[str, int] = {}
            fct = np.fromiter(
                (
                    first_type.get(ft) or (10 + extra_chars.setdefault(ft, len(extra_chars)))
                    for ft in map(first_char_type, types)
                ),
                dtype=np.int64,
                count=len(types),
            )
            self._compound_chars = {v + 10: k for k, v in extra_chars.items()}
            first = (c["pos"] == 0).astype(np.int64)
            return first * 2 + inlex[wid] + 4 * fct[wid]

        def compound_value(code: int) -> str:
            first, inlex, fct = (code % 4) // 2, code % 2, code // 4
            ch = {1: "A", 2: "a", 3: "0"}.get(fct) or self._compound_chars.get(fct, "_")
            return f"{first}-{inlex}-{ch}"

        T.append(_Template("cmp", compound_codes, compound_value, ("w", 0)))
        for bits in self.cluster_bits:
            # one function per prefix length: the offsets share its table of word types

            def prefix(w: str, bits: int = bits) -> str:
                return path_prefix(cluster_path(w), bits) or NULL

            for k in CLUSTER_OFFSETS:
                word_t(f"bc{bits}{k:+d}" if k else f"bc{bits}", k, prefix)
        for name in self.gazetteers.names if self.gazetteers is not None else ():
            for k in (0, -1, 1):
                T.append(
                    _Template(
                        f"gz:{name}" + (f"{k:+d}" if k else ""),
                        lambda c, name=name, k=k: self._shift(c["gaz"][name], c, k),
                        GAZ_VALUES.__getitem__,
                        None,
                        lookup(GAZ_VALUES),
                        injective=True,
                    )
                )
        if self.base_set == "paper":
            return T

        # the CoNLL set
        low = str.lower
        for k in (-2, 2):
            word_t(f"w{k:+d}", k, ident)
        for k in (-2, -1, 0, 1, 2):
            word_t(f"lw{k:+d}", k, low)
        for k in (-1, 1):
            word_t(f"cshape{k:+d}", k, fast_collapsed_shape)
        for m in (1, 2, 3, 4):
            word_t(f"p{m}", 0, lambda w, m=m: w[:m] if len(w) >= m else NULL)
            word_t(f"s{m}", 0, lambda w, m=m: w[-m:] if len(w) >= m else NULL)

        def in_lex(w: str) -> str:
            return "1" if w.lower() in lex else "0"

        word_t("lex", 0, in_lex)
        word_t("hyph", 0, lambda w: "1" if "-" in w[1:] else "0")
        if self.rich:
            word_t("p5", 0, lambda w: w[:5] if len(w) >= 5 else NULL)
            word_t("s5", 0, lambda w: w[-5:] if len(w) >= 5 else NULL)
            for k in (-1, 1):
                word_t(f"shape{k:+d}", k, fast_shape)
                word_t(f"lex{k:+d}", k, in_lex)
            fct = table(first_char_type)

            def cap_codes(c):
                ids = [
                    c["word_ids"],
                    self._shift(c["word_ids"], c, -1),
                    self._shift(c["word_ids"], c, 1),
                ]
                kinds, kind_of = _intern(fct, first=None)  # the distinct first-character types
                m = len(kinds)
                self._cap_kinds = kinds
                return (kind_of[ids[1]] * m + kind_of[ids[0]]) * m + kind_of[ids[2]]

            def cap_value(code: int) -> str:
                kinds, m = self._cap_kinds, len(self._cap_kinds)
                return f"{kinds[code // (m * m)]}|{kinds[(code // m) % m]}|{kinds[code % m]}"

            T.append(_Template("cap3", cap_codes, cap_value, None, injective=True))

        def pair_t(name: str, a: Callable, b: Callable, va: list, vb: list, source=None):
            """Template on a pair of codes; ``va``/``vb`` the distinct strings of each side by code."""

            def codes(c):
                x, y = a(c), b(c)
                m = int(max(x.max(initial=0), y.max(initial=0))) + 1
                self._pair_m[name] = m
                return x * m + y

            def value(code: int) -> str:
                m = self._pair_m[name]
                return va[code // m] + "|" + vb[code % m]

            def values(codes: np.ndarray) -> list[str]:
                m = self._pair_m[name]
                return [
                    va[x] + "|" + vb[y] for x, y in zip((codes // m).tolist(), (codes % m).tolist())
                ]

            T.append(
                _Template(
                    name,
                    codes,
                    value,
                    source,
                    values,
                    injective=not any("|" in v for v in va) and not any("|" in v for v in vb),
                )
            )

        self._pair_m: dict[str, int] = {}
        wv = types  # types[0] is NULL
        pair_t(
            "w-1|w", lambda c: self._shift(c["word_ids"], c, -1), lambda c: c["word_ids"], wv, wv
        )
        pair_t("w|w+1", lambda c: c["word_ids"], lambda c: self._shift(c["word_ids"], c, 1), wv, wv)
        for j, (names, _arr) in enumerate(ctx["cols"][:2]):
            tag = "pos" if j == 0 else "chk"
            cv = names  # names[0] is NULL
            for k in (-1, 0, 1):
                T.append(
                    _Template(
                        f"{tag}{k:+d}",
                        lambda c, j=j, k=k: self._shift(c["cols"][j][1], c, k),
                        cv.__getitem__,
                        ("col", j),
                        lookup(cv),
                        injective=True,
                    )
                )
            if j == 0:
                pair_t(
                    "pos-1|pos",
                    lambda c: self._shift(c["cols"][0][1], c, -1),
                    lambda c: c["cols"][0][1],
                    cv,
                    cv,
                    ("col", 0),
                )
                pair_t(
                    "pos|pos+1",
                    lambda c: c["cols"][0][1],
                    lambda c: self._shift(c["cols"][0][1], c, 1),
                    cv,
                    cv,
                    ("col", 0),
                )
        return T

    # -- matrix ---------------------------------------------------------------------------
    def _source_codes(self, ctx: dict, source: tuple) -> np.ndarray:
        kind, k = source
        if kind == "w":
            if k == 0:
                return ctx["word_ids"] * 2 + (ctx["pos"] == 0)
            return self._shift(ctx["word_ids"], ctx, k)
        arr = ctx["cols"][k][1]
        m = len(ctx["cols"][k][0])
        return (self._shift(arr, ctx, -1) * m + arr) * m + self._shift(arr, ctx, 1)

    def _id_matrix(
        self, sentences: Sequence[Sentence], grow: bool, min_count: int = 1
    ) -> tuple[np.ndarray, list, dict]:
        """Predicate id of every (token, template), −1 where unknown: (n_tokens, n_templates).

        Growing with ``min_count`` > 1, predicates seen fewer times are neither added nor given
        an id (their strings are not even built when the template is injective); the others get
        ids in the same relative order as without the threshold.
        """
        ctx = self._context(sentences)
        n = ctx["n"]
        templates = self._templates(ctx)
        mat = np.empty((n, len(templates)), dtype=np.int64)
        vocab = self.vocab
        setdefault, get = vocab.setdefault, vocab.get
        for j, t in enumerate(templates):
            uniq, inv = _unique_inverse(t.codes(ctx))
            prefix = t.name + "="
            if grow and min_count > 1:
                cnt = np.bincount(inv, minlength=len(uniq))
                if t.injective:
                    kept = np.flatnonzero(cnt >= min_count)
                    values = t.values(uniq[kept])
                    value_of = np.full(len(uniq), -1, dtype=np.int64)
                    value_of[kept] = np.arange(len(kept))
                else:  # several codes may share a string: count strings
                    distinct, vid = _intern(t.values(uniq), first=None)
                    kept = np.flatnonzero(
                        np.bincount(vid, weights=cnt, minlength=len(distinct)) >= min_count
                    )
                    values = [distinct[i] for i in kept.tolist()]
                    renum = np.full(len(distinct), -1, dtype=np.int64)
                    renum[kept] = np.arange(len(kept))
                    value_of = renum[vid]
                ids = np.fromiter(
                    (setdefault(prefix + v, len(vocab)) for v in values),
                    dtype=np.int64,
                    count=len(values),
                )
                ids = np.where(value_of >= 0, ids[np.maximum(value_of, 0)] if len(ids) else -1, -1)
            elif grow:
                ids = np.fromiter(
                    (setdefault(prefix + v, len(vocab)) for v in t.values(uniq)),
                    dtype=np.int64,
                    count=len(uniq),
                )
            else:
                ids = np.fromiter(
                    (get(prefix + v, -1) for v in t.values(uniq)), dtype=np.int64, count=len(uniq)
                )
            mat[:, j] = ids[inv]
        return mat, templates, ctx

    def transform(self, sentences: Sequence[Sentence], grow: bool = False) -> sp.csr_matrix:
        """Binary predicate matrix, one row per token in sentence order.

        With ``grow=True`` (training) unseen predicates are added to the vocabulary; otherwise
        they are ignored.
        """
        mat, templates, ctx = self._id_matrix(sentences, grow)
        n = ctx["n"]
        if not templates:
            return sp.csr_matrix((n, len(self.vocab)))
        ok = mat >= 0
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(ok.sum(axis=1), out=indptr[1:])
        indices = mat[ok].astype(np.int32)
        data = np.ones(len(indices), dtype=np.float32)
        return sp.csr_matrix((data, indices, indptr), shape=(n, len(self.vocab)))

    def fit_ids(
        self, sentences: Sequence[Sentence], min_count: int = 1
    ) -> tuple[np.ndarray, list[tuple[list[int], np.ndarray]]]:
        """Training: build the lexicon (unless given) and the vocabulary of the predicates seen at
        least ``min_count`` times; return the id matrix (n_tokens, n_templates; −1 for rarer
        predicates) and the groups of templates sharing a source, each as (template columns,
        source code per token): on two tokens with the same code, the group's templates give
        the same predicates.
        """
        if not self.lexicon:
            self.lexicon = build_lexicon(sentences)
        self.vocab = {}
        mat, templates, ctx = self._id_matrix(sentences, grow=True, min_count=min_count)
        by_source: dict = {}
        for j, t in enumerate(templates):
            if t.source is not None:
                by_source.setdefault(t.source, []).append(j)
        groups = [
            (cols, self._source_codes(ctx, src)) for src, cols in by_source.items() if len(cols) > 1
        ]
        return mat, groups

    def fit_transform(self, sentences: Sequence[Sentence]) -> sp.csr_matrix:
        if not self.lexicon:
            self.lexicon = build_lexicon(sentences)
        self.vocab = {}
        X = self.transform(sentences, grow=True)
        return X

    def names(self) -> list[str]:
        out = [""] * len(self.vocab)
        for k, v in self.vocab.items():
            out[v] = k
        return out

    def restrict(self, keep: np.ndarray) -> np.ndarray:
        """Keep only predicates whose id is in ``keep`` (sorted); returns the old→new id map."""
        remap = np.full(len(self.vocab), -1, dtype=np.int64)
        remap[keep] = np.arange(len(keep))
        new = remap.tolist()
        self.vocab = {k: r for k, v in self.vocab.items() if (r := new[v]) >= 0}
        return remap
