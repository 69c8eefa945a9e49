"""Local features of the structured perceptron tagger: Kazama & Torisawa 2007, Table 1 (``"kt"``).

A *surface predicate* is a template applied to a token in its sequence, e.g. ``wl@-1=paris``
(the lower-cased previous word is "paris"). The tagger conjoins each predicate with the current
tag y0 (a *node* feature) and, for the templates selected by ``edge_templates``, with the tag
pair (y-1, y0) (an *edge* feature). The bias template ``bias`` fires on every token; its node
features are per-tag biases and its edge features are the transition weights.

Surface types x (one value per token; "absent" means no predicate fires):

``w``, ``wl``
    the word and the lower-cased word;
``pos``, ``chk``
    the first and second extra columns (POS and chunk tags in CoNLL-2003), when every training
    sentence has them;
``p1``–``p4``, ``s1``–``s4``
    the first / last n characters; absent when the word is shorter than n;
word-form flags after Bikel et al. (1999); each is a binary predicate that fires (value ``1``)
only when true, and the flags are independent (several may fire on one token). "digit" means an
ASCII digit 0–9, "letter" ``str.isalpha``:

    ``2d``   exactly two characters, both digits ("96");
    ``4d``   exactly four characters, all digits ("1996");
    ``d&a``  contains a digit and a letter ("A8956");
    ``d&-``  contains a digit and ``-`` ("09-96");
    ``d&/``  contains a digit and ``/`` ("11/9");
    ``d&,``  contains a digit and ``,`` ("23,000");
    ``d&.``  contains a digit and ``.`` ("1.00");
    ``n``    non-empty and every character a digit (any length: "7", "1996");
    ``ic``   first character an upper-case letter ("Paris", "EU");
    ``ac``   non-empty, every character an upper-case letter ("EU"; not "U.S.");
    ``l``    non-empty, every character a lower-case letter ("can");
    ``cp``   an upper-case letter followed by a period, nothing else ("M.");

gazetteer features ``go``, ``gp``, ``gm`` (entries of type ORG, PER, MISC; other types of a
user gazetteer get ``g:<TYPE>``)
    the IOB2 tag (``B``, ``I``, ``O``) of the token in the longest-match segmentation of its
    sentence against the entries of that type: scanning left to right, at each position the
    longest entry (a word sequence, matched case-sensitively) starting there is taken, else ``O``.

bundled gazetteers ``g:<list>`` (``lists``: :mod:`nerstudio.resources`, one type per list and
tier, e.g. ``g:per_first``, ``g:loc_city_1m``, ``g:org_suffix``)
    the same longest-match IOB2 tag against that list (the model stores the lists' fingerprint
    and refuses other lists).

``kt+rich`` (a departure from Table 1, offered because CoNLL-2003 dev prefers it; see the README):
the types above plus ``p5``/``s5`` (affixes of five characters), ``sh`` (the full character-type
shape, ``G.M.`` → ``A.A.``), ``csh`` (the collapsed shape, ``Animal`` → ``Aa``), ``fc`` (the type of
the first character) and the flag ``lex`` (the lower-cased word is in the lowercase lexicon of the
training text: seen more often lower-cased than capitalised, sentence starts not counted, see
:func:`nerstudio.text.shapes.build_lexicon`; stored with the model); ``csh`` and ``fc`` also get
bigram templates. These are the shape, affix and lexicon templates of the max-ent tagger's
``rich`` set, in K&T's ±2 window.

``+clusters`` (``kt+clusters``, ``kt+rich+clusters``): the types ``bc<n>`` for n in
:data:`nerstudio.tagging.features.CLUSTER_BITS`, the first n decisions of the word's Brown-cluster
path (:mod:`nerstudio.resources.clusters`; a shorter path whole; absent for an unclustered word),
in the ±2 window like every word type (no bigrams). ``+biglex`` takes the ``lex`` flag's lowercase
lexicon from the large corpus (:func:`nerstudio.resources.clusters.large_lexicon`) instead of the
training text. Both store the resource's fingerprint with the model and refuse other data.

Templates, per surface type x and window offset k:

* unigram ``x@k`` for k in −2..+2: the value of x at position i+k;
* bigram ``x@k,k+1`` for k in −2, −1, 0 (x−2x−1, x−1x0, x0x+1) for x in wl, pos, chk and the
  gazetteer types (and csh, fc in ``kt+rich``);
* ``bias``.

Out-of-sequence positions have the value ``NULL`` (a real value: "w@-1=NULL" says "first token
of the sequence"), except for the word-form flags, which are simply absent there. Sequences are
documents or sentences (see :mod:`nerstudio.tagging.perceptron`); windows and bigrams run across
sentence boundaries inside a document, as in K&T's plain concatenation.

Cut-off: a predicate (template and value) seen fewer than ``cutoff`` times in the training
tokens is dropped (K&T omit surface parts occurring fewer than two times).

Gazetteer from the training data (``gazetteer="train"``): the entries are the gold entity
strings of type ORG, PER and MISC of the *training* corpus, so no development or test label
is ever looked at; the gazetteer is stored with the model and applied unchanged to new text.
Used naively, every gold entity of a training document would match its own entry, making the
features far more reliable on the training text than on new text (the tagger then leans on
them and fails elsewhere: 74 dev F on CoNLL-2003 against 88 without). So on the training text
the match is *leave-one-document-out*: an entry counts for a training document only if it also
occurs in another training document — the situation of a new document.

Representation: per token, the ids of its active predicates, sorted ascending, in a CSR array
(``indptr`` int64 with one row per token, ``ids`` int32); computed once per corpus.

The vocabulary is stored per surface type as the list of its values (value 0 is ``NULL``), and
per template as the sorted ids of the values (unigrams) or value pairs (bigrams, code
``a * V_x + b``) that it kept; predicate ids run template after template, in that order.

The module is long because this docstring is the exact definition of every template (the
contract the tests check), and fitting, transforming and storing the vocabulary share one
layout in one class.
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeGuard

import numpy as np

from ..arrays import sorted_unique
from ..corpus.model import Sentence
from ..errors import Cancelled, DataError, Msg, SettingsError
from ..resources import Gazetteers, gazetteers, longest_match_iob
from ..resources.clusters import cluster_path, large_lexicon, path_prefix
from ..resources.clusters import fingerprint as cluster_fingerprint
from ..text.shapes import build_lexicon, fast_collapsed_shape, fast_shape, first_char_type

NULL = "NULL"
OFFSETS = (-2, -1, 0, 1, 2)
BIGRAM_OFFSETS = (-2, -1, 0)
WORD_TYPES = ("w", "wl", "p1", "p2", "p3", "p4", "s1", "s2", "s3", "s4")
FLAG_TYPES = ("2d", "4d", "d&a", "d&-", "d&/", "d&,", "d&.", "n", "ic", "ac", "l", "cp")
COLUMN_TYPES = ("pos", "chk")
BIGRAM_BASE = ("wl", "pos", "chk")
#: ``kt+rich``: more word types (affixes of 5, full and collapsed shape, first-character type),
#: a lowercase-lexicon flag, and bigrams of the collapsed shapes and first-character types
RICH_WORD_TYPES = ("p5", "s5", "sh", "csh", "fc")
RICH_FLAG_TYPES = ("lex",)
RICH_BIGRAM_BASE = ("csh", "fc")
FEATURE_SET_NAMES = ("kt", "kt+rich", "kt+rich+clusters", "kt+rich+clusters+biglex")
KT_EXTRAS = ("rich", "clusters", "biglex")


def parse_kt_features(name: str) -> tuple[bool, tuple[int, ...], bool]:
    """``(rich, cluster prefix lengths, large lexicon?)`` of a ``kt[+rich][+clusters][+biglex]``
    name, the parts in that order; anything else is a ``ValueError``."""
    from .features import CLUSTER_BITS

    base, *extras = str(name).split("+")
    if (
        base != "kt"
        or any(e not in KT_EXTRAS for e in extras)
        or extras != sorted(set(extras), key=KT_EXTRAS.index)
        or ("biglex" in extras and "rich" not in extras)
    ):
        raise SettingsError(
            f"unknown perceptron feature set {name!r} (kt, then +rich, +clusters, +biglex in that "
            "order; +biglex needs +rich)"
        )
    return "rich" in extras, CLUSTER_BITS if "clusters" in extras else (), "biglex" in extras


LEXICON_KEY = "@lexicon"  # where the model file keeps the rich set's lowercase lexicon
GAZ_NAMES = {"ORG": "go", "PER": "gp", "MISC": "gm"}
GAZ_TRAIN_TYPES = ("ORG", "PER", "MISC")
EDGE_PRESETS = {
    "all": ("*",),
    "none": ("bias",),
    "bias": ("bias",),
    # the edge features of K&T Table 1 restricted to the current token and its neighbours
    "window1": ("bias", "*@-1", "*@0", "*@1", "*@-1,0", "*@0,1"),
    "current": ("bias", "*@0"),
}
_DIGITS = frozenset("0123456789")


def _has_digit(w: str) -> bool:
    return any(c in _DIGITS for c in w)


def word_form(w: str) -> dict[str, bool]:
    """The Bikel-style flags of a word (see the module docstring for their definitions)."""
    digit = _has_digit(w)
    alld = bool(w) and all(c in _DIGITS for c in w)
    return {
        "2d": len(w) == 2 and alld,
        "4d": len(w) == 4 and alld,
        "d&a": digit and any(c.isalpha() for c in w),
        "d&-": digit and "-" in w,
        "d&/": digit and "/" in w,
        "d&,": digit and "," in w,
        "d&.": digit and "." in w,
        "n": alld,
        "ic": bool(w) and w[0].isalpha() and w[0].isupper(),
        "ac": bool(w) and w.isalpha() and w.isupper(),
        "l": bool(w) and w.isalpha() and w.islower(),
        "cp": len(w) == 2 and w[0].isalpha() and w[0].isupper() and w[1] == ".",
    }


def _word_value(x: str, w: str) -> str | None:
    if x == "w":
        return w
    if x == "wl":
        return w.lower()
    if x == "sh":
        return fast_shape(w)
    if x == "csh":
        return fast_collapsed_shape(w)
    if x == "fc":
        return first_char_type(w)
    if x.startswith("bc"):
        return path_prefix(cluster_path(w), int(x[2:]))
    n = int(x[1])
    if len(w) < n:
        return None
    return w[:n] if x[0] == "p" else w[-n:]


class Gazetteer:
    """Entity strings per type, matched by longest match (IOB2), see the module docstring."""

    def __init__(
        self,
        entries: Mapping[str, Iterable[str | Sequence[str]]],
        sources: Mapping[str, Mapping[tuple[str, ...], frozenset]] | None = None,
    ):
        # sources[type][entry]: the training documents an entry comes from (leave-one-out matching)
        self.sources = {t: dict(v) for t, v in sources.items()} if sources else {}
        self.entries: dict[str, set[tuple[str, ...]]] = {}
        for typ, items in entries.items():
            s = set()
            for e in items:
                t = tuple(e.split()) if isinstance(e, str) else tuple(e)
                if t:
                    s.add(t)
            self.entries[str(typ)] = s
        self._index: dict[str, dict[str, list[int]]] = {}
        for typ, s in self.entries.items():
            idx: dict[str, set[int]] = defaultdict(set)
            for t in s:
                idx[t[0]].add(len(t))
            self._index[typ] = {k: sorted(v, reverse=True) for k, v in idx.items()}

    @classmethod
    def from_documents(
        cls, documents: Iterable[Sequence[Sentence]], types: Sequence[str] = GAZ_TRAIN_TYPES
    ) -> Gazetteer:
        """Gold entity strings of the given types; remembers which document (by position) each
        comes from, for leave-one-document-out matching on those documents."""
        src: dict[str, dict[tuple[str, ...], set]] = {t: defaultdict(set) for t in types}
        for d, sents in enumerate(documents):
            for s in sents:
                for sp in s.spans:
                    if sp.label in src:
                        src[sp.label][tuple(s.words[sp.start : sp.end])].add(d)
        return cls(
            {t: list(v) for t, v in src.items()},
            {t: {e: frozenset(ds) for e, ds in v.items()} for t, v in src.items()},
        )

    @classmethod
    def from_sentences(
        cls, sentences: Iterable[Sentence], types: Sequence[str] = GAZ_TRAIN_TYPES
    ) -> Gazetteer:
        return cls.from_documents([[s] for s in sentences], types).without_sources()

    def without_sources(self) -> Gazetteer:
        return Gazetteer(self.entries)

    @property
    def types(self) -> list[str]:
        return sorted(self.entries)

    def feature_name(self, typ: str) -> str:
        return GAZ_NAMES.get(typ, f"g:{typ}")

    def match(self, words: Sequence[str], typ: str, document: int | None = None) -> list[str]:
        """IOB2 tags of the longest-match segmentation of ``words`` against entries of ``typ``.

        With ``document`` (a training document's position), entries found only in that document
        are ignored (leave-one-document-out).
        """
        entries, index = self.entries[typ], self._index[typ]
        src = self.sources.get(typ) if document is not None else None

        def matches(i: int, m: int) -> bool:
            e = tuple(words[i : i + m])
            return e in entries and (src is None or len(src[e]) > 1 or document not in src[e])

        return longest_match_iob(len(words), lambda i: index.get(words[i], ()), matches)

    def to_json(self) -> dict:
        return {t: sorted(list(e) for e in s) for t, s in self.entries.items()}

    def __len__(self) -> int:
        return sum(len(s) for s in self.entries.values())


def _checker(should_cancel):
    if should_cancel is None:
        return None

    def check():
        if should_cancel():
            raise Cancelled("feature extraction cancelled")

    return check


class FeatureRows:
    """Predicate ids per token of a list of sequences (CSR), with sequence and sentence starts."""

    __slots__ = ("ids", "indptr", "seq_ptr", "starts")

    def __init__(
        self, indptr: np.ndarray, ids: np.ndarray, seq_ptr: np.ndarray, starts: np.ndarray
    ):
        self.indptr, self.ids, self.seq_ptr, self.starts = indptr, ids, seq_ptr, starts


def _strings(value: object) -> TypeGuard[list[str]]:
    """Whether a JSON value is a list of strings."""
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


_BIO = {"B": 1, "I": 2, "O": 3}


class _TokenScan:
    """One pass over the tokens of the training or input sequences for
    :meth:`KTFeatures._values`: word ids, sequence starts and lengths, and per token the codes
    of the extra columns, of the gazetteer matches and of the bundled lists."""

    def __init__(self, n_columns: int, gaz_types: list, lists) -> None:
        self.wdict: dict[str, int] = {}
        self.wid: list[int] = []
        self.seq_lens: list[int] = []
        self.starts: list[int] = []
        self.cols: list[list[int]] = [[] for _ in range(n_columns)]
        self.cdicts: list[dict[str, int]] = [{} for _ in range(n_columns)]
        self.gaz_types = gaz_types
        self.gaz_codes: list[list[int]] = [[] for _ in gaz_types]
        self.lists = lists
        self.list_names = lists.names if lists is not None else []
        self.list_codes: dict[str, list[int]] = {n: [] for n in self.list_names}

    def sequence(self, seq: Sequence[Sentence], doc) -> None:
        """Add a sequence's sentences (``doc``: its training document, for the gazetteer)."""
        n = 0
        for s in seq:
            m = len(s.words)
            if m:
                self.sentence(s, m, doc)
                n += m
        self.seq_lens.append(n)

    def sentence(self, s: Sentence, m: int, doc) -> None:
        setdefault = self.wdict.setdefault
        wdict = self.wdict
        self.wid.extend(setdefault(w, len(wdict)) for w in s.words)
        self.starts.append(1)
        self.starts.extend([0] * (m - 1))
        for j, d in enumerate(self.cdicts):
            self.cols[j].extend(d.setdefault(v, len(d) + 1) for v in s.extra[j])
        for j, (g, typ) in enumerate(self.gaz_types):
            self.gaz_codes[j].extend(_BIO[t] for t in g.match(s.words, typ, doc))
        if self.lists is not None and self.list_names:
            for name, tags in self.lists.iob(s.words).items():
                self.list_codes[name].extend(_BIO[t] for t in tags)

    def code_values(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """The values of the extra columns, the gazetteer types and the lists, per token."""
        values: dict[str, tuple[list[str], np.ndarray]] = {}
        for j, d in enumerate(self.cdicts):
            values[COLUMN_TYPES[j]] = ([NULL] + list(d), np.array(self.cols[j], dtype=np.int64))
        for j, (g, typ) in enumerate(self.gaz_types):
            values[g.feature_name(typ)] = (
                [NULL, "B", "I", "O"],
                np.array(self.gaz_codes[j], dtype=np.int64),
            )
        for name in self.list_names:
            values[f"g:{name}"] = (
                [NULL, "B", "I", "O"],
                np.array(self.list_codes[name], dtype=np.int64),
            )
        return values


def _state_gazetteer(gaz) -> Gazetteer | None:
    """The gazetteer of a saved feature set (entity type -> entries), checked."""
    from ..persist import Corrupt

    if gaz is not None and not (
        isinstance(gaz, dict)
        and all(
            isinstance(v, list) and all(isinstance(e, str) or _strings(e) for e in v)
            for v in gaz.values()
        )
    ):
        raise Corrupt("array 'gazetteer' must map entity types to lists of entries")
    return Gazetteer(gaz) if gaz is not None else None


def _state_resources(header: dict, field) -> tuple[Gazetteers | None, list[int] | None, bool]:
    """The bundled resources a saved feature set uses (lists, clusters, the big lexicon):
    they must be the ones installed."""
    from ..persist import Corrupt

    lists = None
    if field("lists", str | None):
        lists = gazetteers()
        if lists.fingerprint != header["lists"]:
            raise Corrupt(Msg.OTHER_RESOURCE.format(what="gazetteer lists", detail=""))
    clusters = field("clusters", list[int] | None)
    biglex = field("biglex", bool, False)
    if (clusters or biglex) and header.get("resource") != cluster_fingerprint():
        raise Corrupt(Msg.OTHER_RESOURCE.format(what="word clusters", detail=""))
    if clusters and min(clusters) < 1:
        raise Corrupt("header field 'feature_set.clusters' must hold positive numbers")
    return lists, clusters, biglex


class KTFeatures:
    """The ``"kt"`` feature set (``"kt+rich"`` with ``rich``, see the module docstring): vocabulary
    fitted on training sequences, then applied to any.

    ``edge_templates``: ``"all"`` (K&T: every template also makes edge features), a preset name
    (``"window1"``, ``"current"``, ``"bias"``/``"none"``, see :data:`EDGE_PRESETS`) or a sequence of
    ``fnmatch`` patterns over template names (``"w@0"``, ``"wl@-1,0"``, ``"pos@*"``). The bias
    template always has edge features (they are the transition weights). The tagger's default is
    ``"current"`` (see :class:`~nerstudio.tagging.perceptron.PerceptronTagger` for why).
    """

    def __init__(
        self,
        cutoff: int = 2,
        gazetteer: Gazetteer | None = None,
        edge_templates="all",
        lists: Gazetteers | None = None,
        rich: bool = False,
        clusters: Sequence[int] = (),
        biglex: bool = False,
    ):
        self.cutoff = int(cutoff)
        self.rich = bool(rich)
        self.clusters = tuple(int(b) for b in clusters)
        self.biglex = bool(biglex)
        self.lexicon_: set[str] = set()  # rich: the lowercase lexicon of the training text
        self.gazetteer = gazetteer
        self.lists = lists  # the bundled gazetteers (nerstudio.resources): types g:<list>
        self.edge_templates = edge_templates
        self.patterns = self._patterns(edge_templates)

    @property
    def name(self) -> str:
        return "+".join(
            ["kt"]
            + (["rich"] if self.rich else [])
            + (["clusters"] if self.clusters else [])
            + (["biglex"] if self.biglex else [])
        )

    @property
    def word_types(self) -> tuple[str, ...]:
        return (
            WORD_TYPES
            + (RICH_WORD_TYPES if self.rich else ())
            + tuple(f"bc{b}" for b in self.clusters)
        )

    @property
    def flag_types(self) -> tuple[str, ...]:
        return FLAG_TYPES + (RICH_FLAG_TYPES if self.rich else ())

    @staticmethod
    def _patterns(spec) -> tuple[str, ...]:
        if isinstance(spec, str):
            if spec not in EDGE_PRESETS:
                raise SettingsError(
                    f"unknown edge_templates preset {spec!r} (choose from {', '.join(EDGE_PRESETS)} "
                    "or give a list of template patterns)"
                )
            return EDGE_PRESETS[spec]
        pats = tuple(str(p) for p in spec)
        return pats if "bias" in pats else ("bias",) + pats

    # -- surface types and templates -------------------------------------------------------
    def _types(self, n_columns: int) -> list[str]:
        types = list(self.word_types) + list(COLUMN_TYPES[:n_columns]) + list(self.flag_types)
        if self.gazetteer is not None:
            types += [self.gazetteer.feature_name(t) for t in self.gazetteer.types]
        if self.lists is not None:
            types += [f"g:{n}" for n in self.lists.names]
        return types

    def _templates(self, types: list[str]) -> list[tuple[str, str, int, bool]]:
        """(name, surface type, offset, is_bigram) in predicate-id order; ``bias`` first."""
        out = [("bias", "bias", 0, False)]
        for x in types:
            for k in OFFSETS:
                out.append((f"{x}@{k}", x, k, False))
        base = BIGRAM_BASE + (RICH_BIGRAM_BASE if self.rich else ())
        bigram_types = [x for x in types if x in base or x.startswith("g")]
        for x in bigram_types:
            for k in BIGRAM_OFFSETS:
                out.append((f"{x}@{k},{k + 1}", x, k, True))
        return out

    def template_names(self) -> list[str]:
        return [t[0] for t in self.templates_]

    # -- per-token values ------------------------------------------------------------------
    def _values(
        self, sequences: Sequence[Sequence[Sentence]], n_columns: int, documents=None, check=None
    ):
        """Per surface type: local value strings (index 0 = NULL) and a value id per token (−1 absent)."""
        gaz = self.gazetteer
        gaz_types = [(gaz, typ) for typ in gaz.types] if gaz is not None else []
        scan = _TokenScan(n_columns, gaz_types, self.lists)
        for si, seq in enumerate(sequences):
            if check is not None and si % 64 == 0:
                check()
            scan.sequence(seq, None if documents is None else documents[si])
        words = list(scan.wdict)
        word_ids = np.array(scan.wid, dtype=np.int64)
        values = self._word_values(words, word_ids, check)
        values.update(self._flag_values(words, word_ids, check))
        values.update(scan.code_values())
        seq_ptr = np.zeros(len(scan.seq_lens) + 1, dtype=np.int64)
        np.cumsum(scan.seq_lens, out=seq_ptr[1:])
        return values, seq_ptr, np.array(scan.starts, dtype=np.uint8)

    def _word_values(
        self, words: list[str], word_ids: np.ndarray, check
    ) -> dict[str, tuple[list[str], np.ndarray]]:
        """The word types' values (affixes, shapes, …) per token, each word computed once."""
        values: dict[str, tuple[list[str], np.ndarray]] = {}
        for x in self.word_types:
            if check is not None:
                check()
            d: dict[str, int] = {}
            arr = np.empty(len(words), dtype=np.int64)
            for i, w in enumerate(words):
                v = _word_value(x, w)
                arr[i] = -1 if v is None else d.setdefault(v, len(d) + 1)
            values[x] = ([NULL] + list(d), arr[word_ids] if len(word_ids) else word_ids)
        return values

    def _flag_values(
        self, words: list[str], word_ids: np.ndarray, check
    ) -> dict[str, tuple[list[str], np.ndarray]]:
        """The flag types' values per token: 1 when the word form has the flag, else −1."""
        forms = []
        for i in range(0, len(words), 8192):
            if check is not None:
                check()
            forms.extend(word_form(w) for w in words[i : i + 8192])
        if self.rich:
            lex = self.lexicon_
            forms = [dict(f, lex=w.lower() in lex) for f, w in zip(forms, words)]
        values: dict[str, tuple[list[str], np.ndarray]] = {}
        for x in self.flag_types:
            arr = np.array([1 if f[x] else -1 for f in forms], dtype=np.int64)
            values[x] = ([NULL, "1"], arr[word_ids] if len(word_ids) else word_ids)
        return values

    @staticmethod
    def _shift_index(seq_ptr: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Index of token i+k and whether it lies in the same sequence."""
        n = int(seq_ptr[-1])
        lens = np.diff(seq_ptr)
        pos = np.arange(n, dtype=np.int64) - np.repeat(seq_ptr[:-1], lens)
        ln = np.repeat(lens, lens)
        ok = (pos + k >= 0) & (pos + k < ln)
        return np.arange(n, dtype=np.int64) + k, ok

    def _codes(self, tmpl, vals: np.ndarray, shifts: dict, V: int) -> np.ndarray:
        """Per token: the value (or value-pair code) of a template, −1 when absent."""
        _, x, k, bigram = tmpl
        null = -1 if x in FLAG_TYPES or x in RICH_FLAG_TYPES else 0

        def at(j):
            if j == 0:
                return vals
            idx, ok = shifts[j]
            out = np.full(len(vals), null, dtype=np.int64)
            out[ok] = vals[idx[ok]]
            return out

        if not bigram:
            return at(k)
        a, b = at(k), at(k + 1)
        return np.where((a >= 0) & (b >= 0), a * V + b, -1)

    # -- fitting and transforming ----------------------------------------------------------
    def fit(
        self,
        sequences: Sequence[Sequence[Sentence]],
        documents: Sequence[int] | None = None,
        should_cancel=None,
    ) -> KTFeatures:
        """Fit the vocabulary on training sequences; ``documents`` gives each sequence's training
        document (for the leave-one-document-out gazetteer match). ``should_cancel()`` is polled
        often; when true, :class:`~nerstudio.errors.Cancelled` is raised."""
        check = _checker(should_cancel)
        sents = [s for seq in sequences for s in seq if len(s.words)]
        self.n_columns_ = min(min((len(s.extra) for s in sents), default=0), 2)
        self.lexicon_ = (
            (set(large_lexicon()) if self.biglex else build_lexicon(sents)) if self.rich else set()
        )
        self.types_ = self._types(self.n_columns_)
        self.templates_ = self._templates(self.types_)
        values, seq_ptr, _ = self._values(sequences, self.n_columns_, documents, check)
        n = int(seq_ptr[-1])
        shifts = {k: self._shift_index(seq_ptr, k) for k in (-2, -1, 1, 2)}
        kept: list[np.ndarray] = []
        used: dict[str, list[np.ndarray]] = defaultdict(list)
        for t in self.templates_:
            if check is not None:
                check()
            if t[0] == "bias":
                kept.append(np.zeros(1, dtype=np.int64))
                continue
            strings, vals = values[t[1]]
            V = len(strings)
            codes = self._codes(t, vals, shifts, V)
            codes = codes[codes >= 0]
            u, c = np.unique(codes, return_counts=True)
            u = u[c >= self.cutoff]
            kept.append(u)
            used[t[1]].append(u // V if t[3] else u)
            if t[3]:
                used[t[1]].append(u % V)
        # keep only the values some predicate uses; renumber them (NULL stays 0)
        self.values_: dict[str, list[str]] = {}
        remap: dict[str, np.ndarray] = {}
        for x in self.types_:
            strings, _ = values[x]
            u = sorted_unique(np.concatenate(used[x] + [np.zeros(1, dtype=np.int64)]))
            r = np.full(len(strings), -1, dtype=np.int64)
            r[u] = np.arange(len(u))
            remap[x] = r
            self.values_[x] = [strings[i] for i in u.tolist()]
        self.kept_: list[np.ndarray] = []
        for t, u in zip(self.templates_, kept):
            if t[0] == "bias":
                self.kept_.append(u)
                continue
            x = t[1]
            Vold = len(values[x][0])
            r = remap[x]
            if t[3]:
                new = r[u // Vold] * len(self.values_[x]) + r[u % Vold]
            else:
                new = r[u]
            self.kept_.append(np.sort(new))
        self._build_tables()
        self.n_tokens_fit_ = n
        return self

    def _build_tables(self) -> None:
        self.value_index_ = {
            x: {v: i for i, v in enumerate(vals) if i > 0} for x, vals in self.values_.items()
        }
        self.offsets_ = np.zeros(len(self.templates_) + 1, dtype=np.int64)
        np.cumsum([len(k) for k in self.kept_], out=self.offsets_[1:])
        self.tables_: list[np.ndarray | None] = []
        for t, u, off in zip(self.templates_, self.kept_, self.offsets_[:-1]):
            if t[0] == "bias" or t[3]:
                self.tables_.append(None)
                continue
            tab = np.full(len(self.values_[t[1]]), -1, dtype=np.int64)
            tab[u] = off + np.arange(len(u))
            self.tables_.append(tab)
        self.n_predicates_ = int(self.offsets_[-1])
        edge = np.zeros(self.n_predicates_, dtype=bool)
        self.edge_template_mask_ = np.zeros(len(self.templates_), dtype=bool)
        for j, t in enumerate(self.templates_):
            if any(fnmatch.fnmatchcase(t[0], p) for p in self.patterns):
                self.edge_template_mask_[j] = True
                edge[self.offsets_[j] : self.offsets_[j + 1]] = True
        self.edge_of_ = np.where(edge, np.cumsum(edge) - 1, -1).astype(np.int64)
        self.n_edge_predicates_ = int(edge.sum())

    def transform(
        self,
        sequences: Sequence[Sequence[Sentence]],
        documents: Sequence[int] | None = None,
        should_cancel=None,
    ) -> FeatureRows:
        """Predicate ids per token (sequences of sentences; empty sentences hold no token).

        ``documents``: for the training text only, each sequence's training document (see
        :meth:`fit`); new text leaves it ``None``. ``should_cancel`` as in :meth:`fit`.
        """
        check = _checker(should_cancel)
        sents = [s for seq in sequences for s in seq if len(s.words)]
        have = min((len(s.extra) for s in sents), default=self.n_columns_)
        if have < self.n_columns_:
            raise DataError(
                f"the model uses {self.n_columns_} extra column(s) (POS/chunk) but the text has "
                f"{have}: read a file with the same columns as the training data"
            )
        values, seq_ptr, starts = self._values(sequences, self.n_columns_, documents, check)
        n = int(seq_ptr[-1])
        shifts = {k: self._shift_index(seq_ptr, k) for k in (-2, -1, 1, 2)}
        gvals: dict[str, np.ndarray] = {}
        for x in self.types_:
            if check is not None:
                check()
            strings, vals = values[x]
            index = self.value_index_[x]
            g = np.array([0] + [index.get(s, -1) for s in strings[1:]], dtype=np.int64)
            gvals[x] = np.where(vals >= 0, g[np.maximum(vals, 0)], -1) if n else vals
        cols = np.full((n, len(self.templates_)), -1, dtype=np.int32)
        for j, t in enumerate(self.templates_):
            if check is not None:
                check()
            if t[0] == "bias":
                cols[:, j] = 0
                continue
            V = len(self.values_[t[1]])
            codes = self._codes(t, gvals[t[1]], shifts, V)
            ok = codes >= 0
            if t[3]:
                keys = self.kept_[j]
                pos = np.searchsorted(keys, codes[ok])
                pos = np.minimum(pos, max(len(keys) - 1, 0))
                hit = keys[pos] == codes[ok] if len(keys) else np.zeros(len(pos), dtype=bool)
                col = np.full(n, -1, dtype=np.int64)
                col[np.nonzero(ok)[0][hit]] = self.offsets_[j] + pos[hit]
                cols[:, j] = col
            else:
                col = np.full(n, -1, dtype=np.int64)
                col[ok] = self.tables_[j][codes[ok]]
                cols[:, j] = col
        mask = cols >= 0
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(mask.sum(axis=1), out=indptr[1:])
        ids = cols[mask].astype(np.int32)
        return FeatureRows(indptr, ids, seq_ptr, starts)

    def predicate_names(self, ids: Iterable[int]) -> list[str]:
        """Readable names (``template=value``) of predicate ids."""
        out = []
        for p in ids:
            j = int(np.searchsorted(self.offsets_, p, side="right") - 1)
            name, x, _, bigram = self.templates_[j]
            code = int(self.kept_[j][p - self.offsets_[j]])
            if name == "bias":
                out.append("bias")
            elif bigram:
                V = len(self.values_[x])
                out.append(f"{name}={self.values_[x][code // V]}|{self.values_[x][code % V]}")
            else:
                out.append(f"{name}={self.values_[x][code]}")
        return out

    # -- persistence ------------------------------------------------------------------------
    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON header part and arrays (see :meth:`from_state`)."""
        header = {
            "name": self.name,
            "cutoff": self.cutoff,
            "n_columns": self.n_columns_,
            "edge_templates": self.edge_templates
            if isinstance(self.edge_templates, str)
            else list(self.edge_templates),
            "types": self.types_,
            "templates": [list(t) for t in self.templates_],
            "n_predicates": self.n_predicates_,
            "rich": self.rich,
            "lists": self.lists.fingerprint if self.lists is not None else None,
        }
        if self.clusters or self.biglex:
            header.update(
                clusters=list(self.clusters), biglex=self.biglex, resource=cluster_fingerprint()
            )
        kept_ptr = np.zeros(len(self.kept_) + 1, dtype=np.int64)
        np.cumsum([len(k) for k in self.kept_], out=kept_ptr[1:])
        arrays = {"kept": np.concatenate(self.kept_).astype(np.int64), "kept_ptr": kept_ptr}
        values = {x: v[1:] for x, v in self.values_.items()}
        if self.rich:
            values[LEXICON_KEY] = sorted(self.lexicon_)
        gaz = self.gazetteer.to_json() if self.gazetteer is not None else None
        return header, arrays, values, gaz

    @classmethod
    def from_state(cls, header: dict, arrays: dict, values, gaz) -> KTFeatures:
        """The inverse of :meth:`state`: every field checked before use (a :class:`Corrupt`
        error says what is wrong)."""
        from ..persist import Corrupt, header_field

        def field(key, hint, default=None):  # absent: ``default``
            return header_field(header, key, hint, f"feature_set.{key}", default)

        def required(key, hint):
            return header_field(header, key, hint, f"feature_set.{key}")

        gazetteer = _state_gazetteer(gaz)
        lists, clusters, biglex = _state_resources(header, field)
        try:
            f = cls(
                required("cutoff", int),
                gazetteer,
                required("edge_templates", str | list[str]),
                lists,
                field("rich", bool, False),
                clusters or (),
                biglex,
            )
        except SettingsError as exc:
            raise Corrupt(f"header field 'feature_set': {exc}") from None
        if f.rich:
            lexicon = values.get(LEXICON_KEY) if isinstance(values, dict) else None
            if not _strings(lexicon):
                raise Corrupt("array 'values' holds no lexicon (a list of strings)")
            f.lexicon_ = set(lexicon)
        f._load_types(required, values)
        f._load_kept(arrays)
        f._build_tables()
        if f.n_predicates_ != required("n_predicates", int):
            raise Corrupt("predicate count does not match")
        return f

    def _load_types(self, required, values) -> None:
        """Feature types, templates and values from a state, checked against this version
        (``required(key, hint)``: a header field that must be present)."""
        from ..persist import Corrupt, distinct

        self.n_columns_ = required("n_columns", int)
        self.types_ = required("types", list[str])
        if not 0 <= self.n_columns_ <= len(self.types_) or self.types_ != self._types(
            self.n_columns_
        ):
            raise Corrupt("feature types do not match this version of the kt feature set")
        self.templates_ = self._templates(self.types_)
        if required("templates", list) != [list(t) for t in self.templates_]:
            raise Corrupt("feature templates do not match this version of the kt feature set")
        if not isinstance(values, dict) or not all(_strings(values.get(x)) for x in self.types_):
            raise Corrupt("array 'values' must hold a list of strings per feature type")
        self.values_ = {
            x: [NULL] + list(distinct(values[x], f"array 'values' ({x})")) for x in self.types_
        }

    def _load_kept(self, arrays: dict) -> None:
        """Each template's kept values from a state: sorted, in range."""
        from ..persist import Corrupt, vector

        kept, ptr = (
            vector(arrays, "kept", dtype=np.int64),
            vector(arrays, "kept_ptr", dtype=np.int64),
        )
        if (
            len(ptr) != len(self.templates_) + 1
            or ptr[0] != 0
            or ptr[-1] != len(kept)
            or np.any(np.diff(ptr) < 0)
        ):
            raise Corrupt("kept-value table does not match the templates")
        self.kept_ = [kept[ptr[j] : ptr[j + 1]] for j in range(len(self.templates_))]
        for t, u in zip(self.templates_, self.kept_):
            V = len(self.values_[t[1]]) if t[0] != "bias" else 1
            lim = V * V if t[3] else V
            if len(u) and (u.min() < 0 or u.max() >= lim or np.any(np.diff(u) <= 0)):
                raise Corrupt(f"template {t[0]} has out-of-range or unsorted values")
