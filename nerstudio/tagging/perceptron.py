"""Structured perceptron tagger (Collins 2002a; Kazama & Torisawa 2007 §2–3, §4.3; SPEC §6).

Score(x, y) = Φ(x, y)·w with the local features of :mod:`nerstudio.tagging.local_features`
(K&T Table 1): node features (predicate × y0) and edge features (predicate × y−1 × y0).
Decoding is a first-order Viterbi; the k best taggings come from an exact list-Viterbi search
(:mod:`nerstudio.tagging._viterbi`). Tags are the SCN encoding of
:func:`nerstudio.tagging.tag_alphabets.make_tagset` (``N``, ``S-X``, ``C-X``); a ``C-X`` tag may
follow only ``S-X`` or ``C-X`` and never opens a sequence or a sentence (hard constraints, so
every output is a valid tagging of every sentence). ``alphabet="bilou"`` uses BILOU tags instead
(``I-X``/``L-X`` only after ``B-X``/``I-X``, which must go on and may not end a sequence); its
N-best lists are written in SCN tags all the same.

Sequences (``documents=True``, K&T §6.1): the sentences of a document are concatenated into one
sequence, plainly, as K&T do: feature windows, bigrams and tag transitions run across sentence
boundaries inside a document (only the "no C-X at a sentence start" constraint knows where
sentences begin). :class:`Sequences` keeps the sentence offsets, so predictions come back per
sentence. ``documents=False`` makes every sentence its own sequence.

Training variants (``variant``):

``perceptron``
    Collins' perceptron: decode each training sequence; if the best tagging y' is wrong,
    w += Φ(x, y*) − Φ(x, y'). The last weights are the model (``average=False``).
``averaged``
    the same updates; the model is the average of the weight vectors after every example of
    every epoch (Collins 2002a), see :class:`AveragedWeights` (``average=True``).
``margin``
    K&T Algorithm 3.1 with parameter ``C``: with y' the best and y'' the second best tagging
    (exact 2-best search), update with y' when y' ≠ y*; otherwise, when
    Φ(x, y*)·w − Φ(x, y'')·w ≤ C, update with y''. K&T's margin perceptron outputs the last
    weights, not an average, and so does ``average=None`` (the default) here; ``average=True``
    averages it like the averaged perceptron.

``bpm`` = K > 0 (K&T §4.3, BPM initialisation): K single passes over differently shuffled
training sequences, each from zero with the variant's own update rule; the mean of their output
vectors (averaged outputs when ``average``) is the starting point of training.

Epochs: at most ``epochs`` passes, over the sequences shuffled anew each epoch (seeded by
``seed``; ``shuffle=False`` keeps file order). Training stops early as in K&T §6.1 when the
relative change of the per-word training error (tokens whose best tag was wrong during the
pass, over all tokens) stays below ``tol`` (1e-4) for ``patience`` (3) epochs in a row, or when an
epoch makes no update. With a development set each epoch is scored on it (P/R/F) and with
``keep_best`` the model keeps the weights of the best dev epoch.

Cancellation: ``should_cancel()`` is polled between chunks of sequences sized to take about
0.1 s; when it turns true, training stops and the model keeps the best weights seen so far (the
best dev epoch, else the current weights, averaged if averaging): ``cancelled_`` is then true.
During feature extraction (before any weight exists) it is polled every few dozen documents or
per template, and :class:`~nerstudio.errors.Cancelled` is raised.

Weights: one flat float64 vector, layout in :mod:`nerstudio.tagging._viterbi` (node block
predicate × T, edge block edge-predicate × T × T; the bias predicate's edge block is the
transition matrix).

The module is long because it is one class: preparing a corpus, decoding, the training variants
and the model file share one weight layout and one set of search buffers. What the joint trainer
shares with it lives apart (:mod:`.sequences`, :mod:`.weights`, the search in :mod:`._viterbi`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ..choices import TASKS, VARIANTS
from ..corpus.model import Sentence, Span
from ..errors import Cancelled, DataError, FormatError, Msg, SettingsError
from ..nbest import NBestList, spans_to_tag_ids, tags_to_spans
from ..persist import (
    Corrupt,
    check_params,
    construct,
    header_field,
    json_array,
    json_value,
    jsonable,
    load_npz,
    records,
    save_npz,
)
from ..resources import gazetteers
from .lazy import LazyModule
from .local_features import FEATURE_SET_NAMES, Gazetteer, KTFeatures, parse_kt_features
from .sequences import Sequences, as_units
from .tag_alphabets import check_alphabet, is_tagset, make_tagset, rules
from .weights import AveragedWeights, shuffled_order, sparse_weights

if TYPE_CHECKING:
    from ._viterbi import Buffers

#: ``gazetteer`` settings by name: entities of the training data, the bundled lists, or both.
GAZETTEER_SPECS = ("train", "lists", "train+lists")

K = LazyModule(__package__ + "._viterbi")  # numba kernels, imported on first use

MODEL_FORMAT = "nerstudio-perceptron-tagger"
MODEL_VERSION = 1
FEATURE_SETS = (
    FEATURE_SET_NAMES  # "kt" (K&T Table 1), "kt+rich", with +clusters, +biglex: see local_features
)
CHUNK_SECONDS = 0.1  # target work between two looks at the cancel flag


# ------------------------------------------------------------------------------------------
# data


@dataclass
class EpochStats:
    """One training pass (a BPM pass has ``phase="bpm"``)."""

    epoch: int
    phase: str
    seconds: float  # of this pass
    elapsed: float  # since fit started
    sequences: int
    tokens: int
    mistakes: int  # sequences whose best tagging was wrong
    updates: int
    margin_updates: int  # updates with the second best (margin variant)
    word_error: float  # fraction of tokens whose best tag was wrong during the pass
    dev_precision: float | None = None
    dev_recall: float | None = None
    dev_f1: float | None = None
    best: bool = False
    cancelled: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


#: what each of the heads of one training run (:meth:`PerceptronTagger.fit` with ``plain``) has
#: of its own; the rest of the fitted state is the run's
_HEAD_STATE = frozenset(
    {
        "history_",
        "best_epoch_",
        "best_dev_f1_",
        "weights_",
        "epochs_run_",
        "cancelled_",
    }
)


class _Head:
    """One model a training run makes: the tagger, whether its weights are the average, its
    epochs' callback, history and best dev epoch."""

    def __init__(self, tagger: PerceptronTagger, averaged: bool, callback) -> None:
        self.tagger, self.averaged, self.callback = tagger, averaged, callback
        self.history: list[EpochStats] = []
        tagger.history_ = self.history  # the epochs so far, while it trains
        self.best_f: float | None = None
        self.best_w: np.ndarray | None = None
        self.best_epoch: int | None = None

    def said(self, st: EpochStats) -> None:
        self.history.append(st)
        if self.callback:
            self.callback(st)

    def finish(self, aw: AveragedWeights, cancelled: bool) -> None:
        t = self.tagger
        t.history_ = self.history
        t.cancelled_ = cancelled
        t.epochs_run_ = sum(1 for h in self.history if h.phase == "train" and not h.cancelled)
        t.best_epoch_ = self.best_epoch
        t.best_dev_f1_ = self.best_f
        if self.best_w is not None:
            t.weights_ = self.best_w
        else:
            t.weights_ = aw.averaged() if self.averaged else aw.w.copy()


# ------------------------------------------------------------------------------------------
# the tagger


class PerceptronTagger:
    """Structured perceptron tagger; ``fit`` returns self, learned state ends in ``_``.

    See the module docstring for the variants, ``bpm``, stopping and cancellation. ``C`` is the
    margin of the ``margin`` variant; ``average=None`` means the variant's own choice (averaged
    only for ``averaged``). ``gazetteer``: ``None`` (no gazetteer features), ``"train"`` (ORG,
    PER and MISC entity strings of the training data), ``"lists"`` (the bundled gazetteers of
    :mod:`nerstudio.resources`), ``"train+lists"`` (both) or a mapping type → entity strings.
    ``edge_templates``: which templates get edge features (see
    :class:`~nerstudio.tagging.local_features.KTFeatures`).

    Defaults, from CoNLL-2003 dev (typed, documents; see ``bench/perceptron_tagger.py``):

    * ``edge_templates="current"``: edge features for the bias and the templates of the current
      token (``*@0``) only. K&T's Table 1 gives every template edge features (``"all"``): 27.9 M
      weights instead of 6.5 M, peak memory 1.0 GB instead of 0.5 GB, about 5 times the time per
      epoch, and no better F (margin, C = 300, 100 epochs: dev 89.07 / test 83.08 against
      89.23 / 83.11; at C = 100 the full set stopped at epoch 39 with 87.74 dev against 89.20).
    * ``C=300``: the margin is not scale-free (it grows with the weights, i.e. with the number of
      updates, and with the number of active features); here K&T's values (500–32000) make every
      document a margin update at every one of the first 30 epochs (C = 1000, 8000 and 32000 gave
      identical 30-epoch runs). Over 100 epochs, C = 30 / 100 / 300 / 1000 gave dev
      88.20 / 89.20 / 89.23 / 88.45 (test 81.17 / 82.10 / 83.11 / 82.72).
    * ``epochs=100``: the margin perceptron keeps improving for 50–90 epochs (K&T's stopping rule
      or the epoch cap ends it; the best dev epoch is kept).
    * ``features="kt"``: K&T's Table 1 as printed. ``"kt+rich"`` (more shape and affix templates
      and a lowercase lexicon) does better on CoNLL-2003 dev (margin, C chosen on dev: 89.93
      against 89.23 without gazetteers, 90.63 against 90.10 with the bundled lists) and is the
      K&T suite's default (:mod:`nerstudio.experiments.kazama`).
    * ``average=None``: the margin variant is not averaged, as in K&T (averaging it gave the same
      dev F, 89.1 against 89.2, with a smoother curve: use it when no dev set picks the epoch).
    """

    # what a training run leaves in each model it makes (:class:`_Head`)
    history_: list[EpochStats]
    best_epoch_: int | None
    best_dev_f1_: float | None
    weights_: np.ndarray
    epochs_run_: int
    cancelled_: bool
    train_seconds_: float

    def __init__(
        self,
        task: str = "typed",
        features: str = "kt",
        cutoff: int = 2,
        variant: str = "margin",
        C: float = 300.0,
        average: bool | None = None,
        bpm: int = 0,
        epochs: int = 100,
        documents: bool = True,
        gazetteer=None,
        seed: int = 0,
        keep_best: bool = True,
        labels: Sequence[str] | None = None,
        shuffle: bool = True,
        tol: float = 1e-4,
        patience: int = 3,
        edge_templates: str | Sequence[str] = "current",
        alphabet: str = "scn",
    ):
        if task not in TASKS:
            raise SettingsError(Msg.UNKNOWN.format(what="task", name=task, choices=TASKS))
        parse_kt_features(features)  # a SettingsError naming what is wrong
        if variant not in VARIANTS:
            raise SettingsError(Msg.UNKNOWN.format(what="variant", name=variant, choices=VARIANTS))
        if gazetteer is not None and not (
            gazetteer in GAZETTEER_SPECS or isinstance(gazetteer, (Mapping, Gazetteer))
        ):
            raise SettingsError(
                "gazetteer must be None, 'train', 'lists', 'train+lists' or a mapping type → entity strings"
            )
        if epochs < 0 or bpm < 0 or cutoff < 1:
            raise SettingsError("epochs and bpm must be ≥ 0 and cutoff ≥ 1")
        KTFeatures._patterns(edge_templates)  # validates
        self.task, self.features, self.cutoff, self.variant = task, features, int(cutoff), variant
        self.C, self.average, self.bpm, self.epochs = float(C), average, int(bpm), int(epochs)
        self.documents, self.gazetteer, self.seed, self.keep_best = (
            bool(documents),
            gazetteer,
            int(seed),
            keep_best,
        )
        self.labels = None if labels is None else list(labels)
        self.shuffle, self.tol, self.patience = bool(shuffle), float(tol), int(patience)
        self.edge_templates = edge_templates
        self.alphabet = check_alphabet(alphabet)

    def __getstate__(self):  # copy.deepcopy: the per-thread search buffers are not copied
        return {k: v for k, v in self.__dict__.items() if k != "_tls"}

    # -- properties ------------------------------------------------------------------------
    @property
    def typed(self) -> bool:
        return self.task == "typed"

    @property
    def averaging(self) -> bool:
        return self.variant == "averaged" if self.average is None else bool(self.average)

    @property
    def n_tags(self) -> int:
        return len(self.tagset_)

    @property
    def vocabulary(self) -> KTFeatures:
        """The fitted feature vocabulary (stored with the model)."""
        return self.features_

    def _layout(self) -> None:
        T = len(self.tagset_)
        f = self.features_
        self.E0_ = f.n_predicates_ * T
        self.n_weights_ = self.E0_ + f.n_edge_predicates_ * T * T
        self.edge_of_ = f.edge_of_
        r = rules(self.tagset_)  # r.allowed's last row: the start of a sequence
        # flags for the compiled search: 1 may not start a sentence, 2 may not end a sequence
        is_c = np.where(r.allowed[T], 0, 1) + np.where(r.final, 0, 2)
        self.is_c_, self.allowed_ = is_c.astype(np.int8), np.ascontiguousarray(r.allowed[:T])
        self.to_scn_, self.list_tagset_ = r.to_scn, r.list_tagset

    def _weights(self, weights) -> np.ndarray:
        """The local weights: ``weights_``, or the first ``n_weights_`` entries of ``weights``
        (a longer vector, e.g. local then non-local weights, is accepted; the rest is ignored)."""
        w = self.weights_ if weights is None else weights
        w = np.asarray(w)
        if w.ndim != 1 or w.shape[0] < self.n_weights_:
            raise ValueError(
                f"weight vector has shape {w.shape}, expected at least ({self.n_weights_},)"
            )
        return np.ascontiguousarray(w[: self.n_weights_], dtype=np.float64)

    def _buffers(self, L: int, k: int) -> Buffers:
        """Search buffers for sequences up to L tokens, reused per thread (``kbest`` is called once
        per document and epoch by joint training)."""
        local = self.__dict__.setdefault("_tls", threading.local())
        T = len(self.tagset_)
        b = getattr(local, "buf", None)
        if b is None or b.L < L or b.k != k or b.T != T:
            b = local.buf = K.Buffers(L, T, k)
        return b

    # -- preparing text --------------------------------------------------------------------
    def _units(self, data, documents: bool) -> tuple[list[tuple[str, list[Sentence]]], list[int]]:
        """Sequences as (name, sentences), and the position of the document each comes from."""
        units = as_units(data)
        if documents:
            return units, list(range(len(units)))
        out, doc = [], []
        k = 0
        for d, (_, sents) in enumerate(units):
            for s in sents:
                k += 1
                out.append((str(k), [s]))
                doc.append(d)
        return out, doc

    def _gold_spans(self, s: Sentence) -> list[Span]:
        return list(s.spans) if self.typed else [Span(a, b, "") for a, b, _ in s.spans]

    def prepare(
        self,
        corpus,
        documents: bool | None = None,
        strict_gold: bool = False,
        should_cancel: Callable[[], bool] | None = None,
        _training: bool = False,
    ) -> Sequences:
        """Features of a corpus under the fitted vocabulary (computed once, reused every epoch).

        ``documents`` overrides the tagger's sequence unit. Gold tags are computed from the spans;
        entities of a type the tagger does not know are left out of the gold tags (an error with
        ``strict_gold``, which training uses). ``should_cancel()`` true raises
        :class:`~nerstudio.errors.Cancelled`.
        """
        documents = self.documents if documents is None else bool(documents)
        units, doc_of = self._units(corpus, documents)
        rows = self.features_.transform(
            [u for _, u in units], doc_of if _training else None, should_cancel
        )
        index = {t: k for k, t in enumerate(self.tagset_)}
        words, offsets, sidx, gold_spans, gold_parts = [], [], [], [], []
        k = 0
        for ui, (_, sents) in enumerate(units):
            if should_cancel is not None and ui % 256 == 0 and should_cancel():
                raise Cancelled("feature extraction cancelled")
            lens = [len(s.words) for s in sents]
            off = np.zeros(len(sents) + 1, dtype=np.int64)
            np.cumsum(lens, out=off[1:])
            offsets.append(off)
            sidx.append(np.arange(k, k + len(sents), dtype=np.int64))
            k += len(sents)
            words.append(tuple(w for s in sents for w in s.words))
            for s in sents:
                spans = self._gold_spans(s)
                gold_spans.append(spans)
                try:
                    gold_parts.append(
                        spans_to_tag_ids(spans, len(s.words), index, self.typed, self.alphabet)
                    )
                except ValueError as exc:
                    if strict_gold:
                        raise DataError(f"training sentence {s.text()[:60]!r}: {exc}") from None
                    types = {t.partition("-")[2] for t in self.tagset_}
                    known = [sp for sp in spans if (sp.label if self.typed else "") in types]
                    gold_parts.append(
                        spans_to_tag_ids(known, len(s.words), index, self.typed, self.alphabet)
                    )
        gold_flat = (
            np.concatenate(gold_parts).astype(np.int16) if gold_parts else np.zeros(0, np.int16)
        )
        seq_ptr = rows.seq_ptr
        gold = [gold_flat[seq_ptr[i] : seq_ptr[i + 1]] for i in range(len(seq_ptr) - 1)]
        return Sequences(
            rows.indptr,
            rows.ids,
            seq_ptr,
            rows.starts,
            gold,
            words,
            offsets,
            sidx,
            gold_spans,
            [u[0] for u in units],
            documents,
            gold_flat,
        )

    # -- decoding --------------------------------------------------------------------------
    def decode(self, seqs: Sequences, weights=None) -> list[np.ndarray]:
        """Viterbi: the best valid tagging of every sequence (int16 tag ids)."""
        w = self._weights(weights)
        out, _ = self._viterbi(seqs, w)
        return [out[seqs.seq_ptr[i] : seqs.seq_ptr[i + 1]] for i in range(len(seqs))]

    def _viterbi(self, seqs: Sequences, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        T = len(self.tagset_)
        L = int(np.diff(seqs.seq_ptr).max(initial=1))
        b = K.Buffers(L, T, 1)
        out = np.zeros(seqs.n_tokens, dtype=np.int16)
        scores = np.zeros(len(seqs))
        K.viterbi_all(
            seqs.seq_ptr,
            seqs.indptr,
            seqs.ids,
            self.edge_of_,
            w,
            T,
            self.E0_,
            self.allowed_,
            self.is_c_,
            seqs.starts,
            out,
            scores,
            b.node,
            b.edge,
            b.delta,
            b.back,
        )
        return out, scores

    def kbest(self, seqs: Sequences, i: int, k: int, weights=None) -> tuple[np.ndarray, np.ndarray]:
        """The k best valid taggings of sequence i, best first, distinct: ((k', L) int16 tags,
        (k',) float64 scores) with k' = min(k, number of valid taggings)."""
        w = self._weights(weights)
        _a, L = seqs.bounds(i)
        return self._kbest_with(seqs, i, self._buffers(L, max(int(k), 1)), w)

    def _kbest_with(self, seqs: Sequences, i: int, b: Buffers, w: np.ndarray):
        a, L = seqs.bounds(i)
        T = len(self.tagset_)
        n = K.kbest_one(
            a,
            L,
            seqs.indptr,
            seqs.ids,
            self.edge_of_,
            w,
            T,
            self.E0_,
            self.allowed_,
            self.is_c_,
            seqs.starts,
            b.k,
            b.node,
            b.edge,
            *b.lazy(),
            b.kt,
            b.ks,
        )
        return b.kt[:n, :L].copy(), b.ks[:n].copy()

    def _kbest_reference(self, seqs: Sequences, i: int, k: int, weights=None):
        """k-best by the list Viterbi (every position keeps its k best): the tests' reference."""
        w = self._weights(weights)
        a, L = seqs.bounds(i)
        T = len(self.tagset_)
        Lb, k = max(L, 1), max(int(k), 1)
        out_t, out_s = np.zeros((k, Lb), dtype=np.int16), np.zeros(k)
        n = K.kbest_list(
            a,
            L,
            seqs.indptr,
            seqs.ids,
            self.edge_of_,
            w,
            T,
            self.E0_,
            self.allowed_,
            self.is_c_,
            seqs.starts,
            k,
            np.zeros((Lb, T)),
            np.zeros((Lb, T * T)),
            np.zeros((2, T, k)),
            np.zeros((2, T), dtype=np.int64),
            np.zeros((Lb, T, k), dtype=np.int16),
            np.zeros((Lb, T, k), dtype=np.int32),
            np.zeros(T, dtype=np.int64),
            np.zeros(T),
            out_t,
            out_s,
        )
        return out_t[:n, :L].copy(), out_s[:n].copy()

    def score(self, seqs: Sequences, i: int, tags, weights=None) -> float:
        """The local score Φ^l(x, y)·w of a tagging of sequence i (constraints not checked)."""
        w = self._weights(weights)
        a, L = seqs.bounds(i)
        tags = np.ascontiguousarray(tags, dtype=np.int16)
        if tags.shape != (L,):
            raise ValueError(f"tagging has length {tags.shape}, sequence {i} has {L} tokens")
        return float(
            K.score_seq(
                a, L, tags, seqs.indptr, seqs.ids, self.edge_of_, w, len(self.tagset_), self.E0_
            )
        )

    def score_many(self, seqs: Sequences, i: int, Y, weights=None) -> np.ndarray:
        """:meth:`score` of every row of ``Y`` (taggings of sequence i), the same numbers."""
        w = self._weights(weights)
        a, L = seqs.bounds(i)
        Y = np.ascontiguousarray(Y, dtype=np.int16)
        if Y.ndim != 2 or Y.shape[1] != L:
            raise ValueError(f"taggings of shape {Y.shape}, sequence {i} has {L} tokens")
        T = len(self.tagset_)
        out = np.zeros(len(Y))
        K.score_many(
            a,
            L,
            Y,
            seqs.indptr,
            seqs.ids,
            self.edge_of_,
            w,
            T,
            self.E0_,
            np.zeros((max(L, 1), T)),
            np.zeros((max(L, 1), T * T)),
            out,
        )
        return out

    def update(
        self, aw: AveragedWeights, seqs: Sequences, i: int, good, bad, scale: float = 1.0
    ) -> None:
        """aw += scale · (Φ^l(x_i, good) − Φ^l(x_i, bad)), compiled and sparse, time-stamped with
        the example being seen (``aw.c + 1``); the local weights are the first ``n_weights_``
        entries of ``aw`` (which may be longer). Positions where both taggings agree cost nothing."""
        a, L = seqs.bounds(i)
        good = np.ascontiguousarray(good, dtype=np.int16)
        bad = np.ascontiguousarray(bad, dtype=np.int16)
        if good.shape != (L,) or bad.shape != (L,):
            raise ValueError(f"taggings must have the {L} tokens of sequence {i}")
        if len(aw) < self.n_weights_:
            raise ValueError(
                f"weight vector has {len(aw)} entries, fewer than the {self.n_weights_} local ones"
            )
        K.add_update(
            a,
            L,
            good,
            bad,
            seqs.indptr,
            seqs.ids,
            self.edge_of_,
            aw.w,
            aw.u,
            aw.track,
            aw.c + 1.0,
            float(scale),
            len(self.tagset_),
            self.E0_,
        )

    def phi(self, seqs: Sequences, i: int, tags) -> tuple[np.ndarray, np.ndarray]:
        """Sparse Φ^l(x, y): (sorted unique int64 indices into the flat weights, float64 counts)."""
        a, L = seqs.bounds(i)
        tags = np.ascontiguousarray(tags, dtype=np.int16)
        if tags.shape != (L,):
            raise ValueError(f"tagging has length {tags.shape}, sequence {i} has {L} tokens")
        nnz = int(seqs.indptr[a + L] - seqs.indptr[a])
        buf = np.zeros(2 * nnz, dtype=np.int64)
        n = K.phi_indices(
            a, L, tags, seqs.indptr, seqs.ids, self.edge_of_, len(self.tagset_), self.E0_, buf
        )
        idx, counts = np.unique(buf[:n], return_counts=True)
        return idx, counts.astype(np.float64)

    def _sentence_spans(
        self, seqs: Sequences, tags_per_seq: Sequence[np.ndarray], should_cancel=None
    ) -> list[list[Span]] | None:
        out: list[list[Span]] = [[] for _ in range(seqs.n_sentences)]
        for i, tags in enumerate(tags_per_seq):
            if should_cancel is not None and i % 64 == 0 and should_cancel():
                return None
            for j, part in zip(seqs.sentence_index[i], seqs.split(i, tags)):
                out[j] = tags_to_spans(part, self.tagset_) if len(part) else []
        return out

    # -- the Tagger interface (nerstudio.tagging.protocol) ---------------------------------------
    def fit_corpus(self, corpus, dev=None, callback=None, should_cancel=None) -> PerceptronTagger:
        """:meth:`fit` on ``corpus`` (its documents)."""
        return self.fit(corpus, dev, callback=callback, should_cancel=should_cancel)

    def candidate_lists(
        self, corpus, n: int = 20, *, documents: bool = False, with_gold: bool = True
    ) -> NBestList:
        """:meth:`nbest` of ``corpus``'s sentences (``documents``: of its documents)."""
        nb = self.nbest(corpus, n=n, documents=documents)
        if not with_gold:
            nb.gold = None
        return nb

    def predict_spans(self, corpus, weights=None) -> list[list[Span]]:
        """Predicted spans per sentence (corpus sentence order)."""
        seqs = self.prepare(corpus)
        return self._sentence_spans(seqs, self.decode(seqs, weights))

    def _evaluate_seqs(self, seqs: Sequences, w: np.ndarray, should_cancel=None):
        """Overall P/R/F of the Viterbi output; ``None`` if cancelled on the way."""
        from ..evaluation import evaluate_spans

        if should_cancel is not None and should_cancel():
            return None
        pred = self._sentence_spans(seqs, self.decode(seqs, w), should_cancel)
        return None if pred is None else evaluate_spans(seqs.gold_spans, pred).overall

    def evaluate(self, corpus, weights=None) -> dict:
        """Exact-span precision, recall and F (percent) against the corpus' gold spans."""
        seqs = self.prepare(corpus)
        prf = self._evaluate_seqs(seqs, self._weights(weights))
        return {"precision": prf.precision, "recall": prf.recall, "f1": prf.f1}

    def nbest(self, corpus, n: int = 20, documents: bool | None = None, weights=None) -> NBestList:
        """k-best lists with the local scores Φ·w in place of log-probabilities.

        ``documents=False``: one entry per sentence, each sentence decoded as its own sequence
        (the features then see no neighbouring sentence, even for a model trained on documents).
        ``documents=True`` (default for a document model): one entry per *document*; its words
        are the concatenated words, its gold the concatenated spans shifted by the sentence
        offsets, which ``meta["sentence_offsets"]`` lists per document (ids are document ids).
        """
        documents = self.documents if documents is None else bool(documents)
        w = self._weights(weights)
        seqs = self.prepare(corpus, documents=documents)
        b = self._buffers(int(np.diff(seqs.seq_ptr).max(initial=1)), max(int(n), 1))
        cands, scores = [], []
        for i in range(len(seqs)):
            t, s = self._kbest_with(seqs, i, b, w)
            cands.append(t)
            scores.append(s)
        meta = {
            "source": "perceptron-tagger",
            "variant": self.variant,
            "n": int(n),
            "scores": "local score (features · weights), not a log-probability",
            "unit": "document" if documents else "sentence",
            "task": self.task,
        }
        if documents:
            gold = []
            for i in range(len(seqs)):
                off = seqs.sentence_offsets[i]
                g = []
                for j, sj in enumerate(seqs.sentence_index[i]):
                    g.extend(
                        Span(sp.start + int(off[j]), sp.end + int(off[j]), sp.label)
                        for sp in seqs.gold_spans[sj]
                    )
                gold.append(g)
            meta["sentence_offsets"] = [o.tolist() for o in seqs.sentence_offsets]
            ids = list(seqs.names)
        else:
            gold = list(seqs.gold_spans)
            ids = list(seqs.names)
        cands = [self.to_scn_[c] for c in cands]  # the lists are SCN whatever the tagger's tags
        return NBestList(list(self.list_tagset_), list(seqs.words), cands, scores, gold, ids, meta)

    # -- training --------------------------------------------------------------------------
    def _order(self, n: int, tag: int) -> np.ndarray:
        if not self.shuffle:
            return np.arange(n, dtype=np.int64)
        return shuffled_order(n, self.seed, tag)

    def _run_pass(
        self, seqs: Sequences, aw: AveragedWeights, order: np.ndarray, buf: Buffers, should_cancel
    ) -> tuple[np.ndarray, bool]:
        """One pass over ``order``; returns (stats, cancelled)."""
        T = len(self.tagset_)
        stats = np.zeros(5, dtype=np.int64)
        margin = self.variant == "margin"
        chunk = 1
        lo = 0
        n = len(order)
        while lo < n:
            if should_cancel is not None and should_cancel():
                return stats, True
            hi = min(n, lo + chunk)
            t0 = time.perf_counter()
            K.train_chunk(
                order,
                lo,
                hi,
                seqs.seq_ptr,
                seqs.indptr,
                seqs.ids,
                self.edge_of_,
                seqs.gold_flat,
                aw.w,
                aw.u,
                aw.track,
                aw.counter,
                T,
                self.E0_,
                self.allowed_,
                self.is_c_,
                seqs.starts,
                margin,
                self.C,
                buf.node,
                buf.edge,
                *buf.lazy(),
                buf.kt,
                buf.ks,
                stats,
            )
            dt = time.perf_counter() - t0
            lo = hi
            chunk = int(max(1, min(chunk * 4, chunk * CHUNK_SECONDS / max(dt, 1e-6))))
        return stats, False

    def _stats(self, epoch, phase, t_pass, t_fit, stats, cancelled) -> EpochStats:
        tokens = int(stats[4])
        return EpochStats(
            epoch=epoch,
            phase=phase,
            seconds=time.perf_counter() - t_pass,
            elapsed=time.perf_counter() - t_fit,
            sequences=0,
            tokens=tokens,
            mistakes=int(stats[1]),
            updates=int(stats[2]),
            margin_updates=int(stats[3]),
            word_error=float(stats[0]) / tokens if tokens else 0.0,
            cancelled=cancelled,
        )

    def one_pass(
        self, seqs: Sequences, order: np.ndarray, buf: Buffers | None = None, should_cancel=None
    ) -> tuple[np.ndarray, np.ndarray, bool]:
        """A single pass from zero over ``order`` with this tagger's update rule (a BPM run).

        Returns (its output weights — averaged when averaging —, pass statistics, cancelled).
        """
        buf = buf or K.Buffers(int(np.diff(seqs.seq_ptr).max(initial=1)), len(self.tagset_), 2)
        aw = AveragedWeights(self.n_weights_, track=self.averaging)
        stats, cancelled = self._run_pass(
            seqs, aw, np.asarray(order, dtype=np.int64), buf, should_cancel
        )
        return aw.averaged() if self.averaging else aw.w, stats, cancelled

    def fit(
        self,
        corpus_or_documents,
        dev=None,
        callback: Callable[[EpochStats], None] | None = None,
        should_cancel: Callable[[], bool] | None = None,
        *,
        plain: PerceptronTagger | None = None,
        plain_callback: Callable[[EpochStats], None] | None = None,
    ) -> PerceptronTagger:
        """Train on a Corpus (its documents), a list of Documents or a list of Sentences.

        ``dev`` (same kinds) is scored after every epoch. Returns self.

        ``plain``: for an averaging tagger, an unfitted tagger with the same settings but no
        averaging (the plain perceptron beside the averaged one), fitted by the same run. Both
        make the same updates in the same order, so one pass serves both: each epoch's dev F is
        measured for each, each keeps its own best epoch, and each ends exactly as fitted alone
        (tests/tagging/test_perceptron_twins.py); ``plain_callback`` hears its epochs.
        """
        if plain is not None:
            self._check_twin(plain)
        t_fit = time.perf_counter()
        self.cancelled_ = False
        self._fit_features(corpus_or_documents, should_cancel)
        train = self.prepare(
            corpus_or_documents, strict_gold=True, should_cancel=should_cancel, _training=True
        )
        dev_seqs = self.prepare(dev, should_cancel=should_cancel) if dev is not None else None
        self.feature_seconds_ = time.perf_counter() - t_fit
        buf = K.Buffers(int(np.diff(train.seq_ptr).max(initial=1)), len(self.tagset_), 2)
        heads = [_Head(self, self.averaging, callback)]
        if plain is not None:
            heads.append(_Head(plain, False, plain_callback))
        self.bpm_init_: np.ndarray | None = None  # BPM: the starting weights
        aw = AveragedWeights(self.n_weights_, track=self.averaging)
        cancelled = False
        if self.bpm:
            cancelled = self._bpm_start(train, aw, buf, heads, t_fit, should_cancel)
        if not cancelled:
            cancelled = self._epochs(train, dev_seqs, aw, buf, heads, t_fit, should_cancel)
        for head in heads:
            if head.tagger is not self:  # the twin: this run's fitted state, its own weights
                self._fitted_into(head.tagger)
            head.finish(aw, cancelled)
            head.tagger.train_seconds_ = time.perf_counter() - t_fit
        return self

    def _fit_features(self, corpus_or_documents, should_cancel) -> None:
        """The tag set, the gazetteers and the feature vocabulary of the training data."""
        units = as_units(corpus_or_documents)
        sentences = [s for _, ss in units for s in ss]
        if not any(len(s.words) for s in sentences):
            raise DataError("no training tokens")
        labels = (
            self.labels
            if self.labels is not None
            else sorted({sp.label for s in sentences for sp in s.spans})
        )
        self.tagset_ = make_tagset(labels if self.typed else [], self.task, self.alphabet)
        gaz, lists = self.gazetteer, None
        if isinstance(gaz, str) and "lists" in gaz.split("+"):  # the bundled gazetteers
            lists = gazetteers()
            gaz = "train" if gaz == "train+lists" else None
        if gaz == "train":  # leave-one-document-out on the training text, see local_features
            gaz = Gazetteer.from_documents([ss for _, ss in units])
        elif isinstance(gaz, Mapping):
            gaz = Gazetteer(gaz)
        rich, clusters, biglex = parse_kt_features(self.features)
        self.features_ = KTFeatures(
            self.cutoff,
            gaz,
            self.edge_templates,
            lists,
            rich=rich,
            clusters=clusters,
            biglex=biglex,
        )
        seq_units, doc_of = self._units(corpus_or_documents, self.documents)
        self.features_.fit([u for _, u in seq_units], doc_of, should_cancel)
        self._layout()

    def _bpm_start(self, train, aw, buf, heads, t_fit, should_cancel) -> bool:
        """BPM: start from the mean of ``bpm`` passes from zero over shuffled orders. Returns
        whether it was cancelled."""
        n = len(train)
        acc = np.zeros(self.n_weights_)
        done = 0
        cancelled = False
        for r in range(self.bpm):
            t_pass = time.perf_counter()
            out, stats, cancelled = self.one_pass(
                train, shuffled_order(n, self.seed, 1000 + r), buf, should_cancel
            )
            acc += out
            done += 1
            st = self._stats(r + 1, "bpm", t_pass, t_fit, stats, cancelled)
            st.sequences = n
            for head in heads:
                head.said(replace(st))
            if cancelled:
                break
        w0 = acc / done
        self.bpm_init_ = w0
        aw.w[:] = w0
        if self.averaging:
            aw.u[:] = w0  # the starting vector counts as an update at time 1
        return cancelled

    def _epochs(self, train, dev_seqs, aw, buf, heads, t_fit, should_cancel) -> bool:
        """The training epochs, each scored on dev for every head, until K&T's stopping rule
        on the per-word training error, an epoch without update, or ``epochs``. Returns
        whether it was cancelled."""
        n = len(train)
        errors: list[float] = []
        quiet = 0
        for epoch in range(1, self.epochs + 1):
            t_pass = time.perf_counter()
            order = self._order(n, epoch)
            stats, cancelled = self._run_pass(train, aw, order, buf, should_cancel)
            pass_stats = self._stats(epoch, "train", t_pass, t_fit, stats, cancelled)
            pass_stats.sequences = int(n if not cancelled else 0)
            for head in heads:
                cancelled = self._score_head(
                    head, epoch, pass_stats, aw, dev_seqs, cancelled, should_cancel
                )
                if cancelled:
                    break
            if cancelled:
                return True
            e = pass_stats.word_error
            if errors:
                prev = errors[-1]
                change = abs(e - prev) / prev if prev > 0 else (0.0 if e == 0 else np.inf)
                quiet = quiet + 1 if change < self.tol else 0
            errors.append(e)
            if pass_stats.updates == 0 or quiet >= self.patience:
                break
        return False

    def _score_head(
        self, head: _Head, epoch: int, pass_stats, aw, dev_seqs, cancelled: bool, should_cancel
    ) -> bool:
        """One head's view of an epoch: its weights scored on dev (its best epoch kept), its
        callback told. Returns whether the run is cancelled."""
        t_head = time.perf_counter()
        st = replace(pass_stats)
        cur, prf = None, None
        if not cancelled and dev_seqs is not None:
            cur = aw.averaged() if head.averaged else aw.w
            prf = self._evaluate_seqs(dev_seqs, cur, should_cancel)
            # None: cancelled while scoring dev, the epoch's weights stay unscored
            if prf is None:
                cancelled = st.cancelled = True
        if prf is not None:
            st.dev_precision, st.dev_recall, st.dev_f1 = prf.precision, prf.recall, prf.f1
            if head.best_f is None or prf.f1 > head.best_f:
                st.best = True
                head.best_f, head.best_epoch = prf.f1, epoch
                if self.keep_best:
                    head.best_w = cur.copy() if cur is aw.w else cur
        st.seconds = pass_stats.seconds + time.perf_counter() - t_head
        head.said(st)
        return cancelled

    def _check_twin(self, plain: PerceptronTagger) -> None:
        """``plain`` must make this tagger's updates without averaging (see :meth:`fit`)."""

        def settings(t: PerceptronTagger) -> dict:  # the constructor's, not a fitted state
            skip = {"variant", "average", "C"}
            return {
                k: v for k, v in vars(t).items() if k[0] != "_" and k[-1] != "_" and k not in skip
            }

        mine, theirs = settings(self), settings(plain)
        same_rule = (self.variant == "margin") == (plain.variant == "margin") and (
            self.variant != "margin" or self.C == plain.C
        )
        # BPM starts each from its own kind of weights: their runs part from the first epoch
        if not (self.averaging and not plain.averaging and same_rule and not self.bpm) or (
            mine != theirs
        ):
            raise SettingsError(
                "fit(plain=...) needs this tagger averaging and the plain one not, with the "
                "same update rule, no BPM and otherwise the same settings"
            )

    def _fitted_into(self, other: PerceptronTagger) -> None:
        """Give ``other`` this tagger's fitted state (vocabulary, layout), copied where mutable."""
        import copy

        for k, v in vars(self).items():
            if k.endswith("_") and k not in _HEAD_STATE:
                setattr(other, k, copy.deepcopy(v))

    def learn(
        self,
        sentences: Sequence[Sentence],
        passes: int = 1,
        should_cancel: Callable[[], bool] | None = None,
    ) -> int:
        """Online learning from corrected sentences (the annotation loop): ``passes`` passes over
        ``sentences``, each its own sequence, in order, with this tagger's update rule, starting
        from the current weights, which become the last weights (no averaging: an averaged
        model continues from its average). The feature vocabulary stays the one fitted: a
        predicate never seen in training has no weight to learn (:meth:`fit` again, e.g. on the
        seed and the corrected sentences, to grow it). Entities of a type the tagger does not
        know are left out. Returns the number of updates made."""
        seqs = self.prepare(list(sentences), documents=False)
        if not len(seqs):
            return 0
        aw = AveragedWeights(self.n_weights_, track=False)
        aw.w[:] = self.weights_[: self.n_weights_]
        buf = K.Buffers(int(np.diff(seqs.seq_ptr).max(initial=1)), len(self.tagset_), 2)
        updates = 0
        for _ in range(int(passes)):
            stats, cancelled = self._run_pass(
                seqs, aw, np.arange(len(seqs), dtype=np.int64), buf, should_cancel
            )
            updates += int(stats[2])
            if cancelled:
                raise Cancelled("learning cancelled")
        self.weights_ = aw.w
        return updates

    # -- persistence -----------------------------------------------------------------------
    def get_params(self) -> dict:
        gaz = self.gazetteer
        return {
            "task": self.task,
            "features": self.features,
            "cutoff": self.cutoff,
            "variant": self.variant,
            "C": self.C,
            "average": self.average,
            "bpm": self.bpm,
            "epochs": self.epochs,
            "documents": self.documents,
            "gazetteer": gaz if gaz is None or isinstance(gaz, str) else "custom",
            "seed": self.seed,
            "keep_best": self.keep_best,
            "labels": self.labels,
            "shuffle": self.shuffle,
            "tol": self.tol,
            "patience": self.patience,
            "edge_templates": self.edge_templates
            if isinstance(self.edge_templates, str)
            else list(self.edge_templates),
            "alphabet": self.alphabet,
        }

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The model as a JSON-able header and plain arrays (what :meth:`save` writes; the
        joint tagger embeds it in its own file)."""
        fh, farrays, values, gaz = self.features_.state()
        w = self.weights_
        nz = np.flatnonzero(w)
        header = {
            "params": self.get_params(),
            "tagset": list(self.tagset_),
            "feature_set": fh,
            "n_weights": int(self.n_weights_),
            "epochs_run": getattr(self, "epochs_run_", None),
            "best_epoch": getattr(self, "best_epoch_", None),
            "train_seconds": getattr(self, "train_seconds_", None),
            "history": [h.as_dict() for h in getattr(self, "history_", [])],
        }
        arrays = {
            "kept": farrays["kept"],
            "kept_ptr": farrays["kept_ptr"],
            "values": json_array(values),
            "w_index": nz.astype(np.int64),
            "w_value": w[nz].astype(np.float64),
        }
        if gaz is not None:
            arrays["gazetteer"] = json_array(gaz)
        return jsonable(header), arrays

    def save(self, path) -> None:
        header, arrays = self.state()
        save_npz(path, {"format": MODEL_FORMAT, "version": MODEL_VERSION, **header}, arrays)

    @classmethod
    def load(cls, path) -> PerceptronTagger:
        path = os.fspath(path)
        h, arrays = load_npz(path, MODEL_FORMAT, MODEL_VERSION, "a perceptron tagger model")
        try:  # the checks raise Corrupt; anything else is a bug and propagates
            return cls.from_state(h, arrays)
        except Corrupt as exc:
            raise FormatError(path, None, f"corrupt perceptron tagger model: {exc}") from None

    @classmethod
    def from_state(cls, h: dict, arrays) -> PerceptronTagger:
        """The inverse of :meth:`state`; raises :class:`~nerstudio.persist.Corrupt` on bad
        input (``arrays``: a :class:`~nerstudio.persist.NpzArrays`)."""
        p = dict(check_params(cls, h.get("params")))
        if "gazetteer" not in p:
            raise Corrupt("header field 'params.gazetteer' is missing")
        gaz_spec = p.pop("gazetteer")
        m = construct(cls, p)
        gaz = json_value(arrays["gazetteer"]) if "gazetteer" in arrays else None
        m.gazetteer = gaz_spec if gaz_spec is None or gaz_spec in GAZETTEER_SPECS else gaz
        m.tagset_ = list(header_field(h, "tagset", list[str]))
        if not is_tagset(m.tagset_, m.alphabet):
            raise Corrupt(f"header field 'tagset' is not a tag set of the {m.alphabet} alphabet")
        m.features_ = KTFeatures.from_state(
            header_field(h, "feature_set", dict), arrays, json_value(arrays["values"]), gaz
        )
        if m.features_.name != m.features:
            raise Corrupt(
                f"feature set {m.features_.name!r} stored, the parameters say {m.features!r}"
            )
        m._layout()
        if m.n_weights_ != header_field(h, "n_weights", int):
            raise Corrupt(f"{h['n_weights']} weights declared, the layout has {m.n_weights_}")
        m.weights_ = sparse_weights(arrays, "w_index", "w_value", m.n_weights_)
        m.epochs_run_ = header_field(h, "epochs_run", int | None, default=None)
        m.best_epoch_ = header_field(h, "best_epoch", int | None, default=None)
        m.train_seconds_ = header_field(h, "train_seconds", float | None, default=None)
        m.history_ = records(h, "history", EpochStats)
        m.cancelled_ = False
        return m
