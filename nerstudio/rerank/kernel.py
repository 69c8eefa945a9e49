"""Kernel (dual-form) voted perceptron with the Collins & Duffy (2002) tagging kernel.

The kernel itself, ``K(x, y)`` between two tagged sentences, is in
:mod:`nerstudio.rerank.tagging_kernel`; how a dual model's stored mistakes score candidates (the
kernel's parts, incremental voting over a data set) in :mod:`nerstudio.rerank.kernel_scoring`.

:class:`KernelPerceptron` is the dual form of the ranking perceptron (Collins & Duffy 2002,
Figure 1(b), with the voting of Figure 4). Instead of a weight vector it keeps the list of its
mistakes: on a training sentence whose top-scoring candidate ``x_ij`` is not ``x_i1`` (the
oracle) it stores the pair ``(x_i1, x_ij)``. With ``β`` the weight on the tagger's
log-probability ``L(x)``, the t-th intermediate model scores

    F_t(x) = β · L(x) + Σ_{m < t} [K(gold_m, x) − K(pred_m, x)].

Two choices make the kernel one that can help (both on by default):

* ``normalise``: K is replaced by ``K(x, y) / sqrt(K(x, x) K(y, y))`` (see
  :func:`~nerstudio.rerank.tagging_kernel.normalised`), bounded whatever λ and the word features;
* ``learn_beta``: the weight on L(x) is learnt as part of the representation, as the linear
  perceptron learns it: every candidate carries L(x) as one more coordinate, so the kernel
  becomes ``K(a, b) + β · L(a) · L(b)`` and the scores start at zero (ties go to the tagger's
  top candidate). Then ``F_t(x) = w_L,t · L(x) + Σ_{m<t} [K(gold_m, x) − K(pred_m, x)]`` with
  ``w_L,t = β Σ_{m<t} [L(gold_m) − L(pred_m)]``, and β only sets how fast that weight moves
  against the fragment weights. Without it β is a fixed weight on L(x), as in Collins & Duffy.

``beta=None`` chooses β on the whole development set: a full training run per value of a
geometric grid (factor 2) that is widened while its best value is at an edge (up to
:data:`BETA_LIMIT` steps out); the best run is the model (``beta_grid_`` lists every value with
its dev F and ``beta_at_edge_`` says when the limit stopped the widening). The runs share their
kernel values (:class:`~nerstudio.rerank.kernel_cache.KernelCache`: neighbouring β make mostly
the same mistakes), and ``predict`` on the development set of ``fit`` returns the kept run's
scores from training instead of computing them again; neither changes a result.

``c_t`` counts the training sentences processed while ``F_t`` was the current model (its
survival; the sentence on which a model is created counts for the new model, as in Freund &
Schapire's voted perceptron), so Σ c_t is the number of training sentences visited. The voted
prediction lets every ``F_t`` vote, with weight ``c_t``, for its own top candidate; the
averaged prediction ranks by ``Σ_t c_t F_t(x) / Σ_t c_t``. Both come from one pass over the
mistakes per test sentence: successive models differ by one mistake, so a running score per
candidate is updated by that mistake's kernel difference. Ties (in scores or in votes) go to
the earlier candidate, the one the tagger ranked higher.

Training keeps, per training sentence, the kernel part of its candidates' scores and the number
of mistakes it covers; when the sentence comes round again only the mistakes stored since are
evaluated, so every (training sentence, mistake) pair is computed once however many epochs
run. The development curve is built the same way, one epoch's new mistakes at a time.
"""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from ..arrays import dot, rows_dot
from ..errors import DataError, Msg, SettingsError
from ..persist import json_array
from .base import Callback, CancelCheck, Reranker
from .data import RankingData
from .kernel_cache import KernelCache
from .kernel_scoring import _MistakeKernel, _require_nbest, _StoredFeatures, _Tracker, unit_rows
from .kernel_state import check_sequences, flag, mistake_ids, stored_features
from .tagging_kernel import SequenceStore, candidate_self_kernels, normalised

#: The first β values tried on dev, in units of :func:`beta_scale`; the grid grows by factors of 2
#: past whichever edge is best, at most :data:`BETA_LIMIT` steps beyond it. The values lie on the
#: same factor-2 lattice as the first start grid (0.5, 1, 2), two steps lower: on CoNLL-2003 both
#: settings' best value is 0.125 units (typed and SCN), which the search now reaches in 4 runs
#: instead of 6, ending on the same value.
BETA_GRID = (0.125, 0.25, 0.5)
BETA_LIMIT = 6
#: β in units of :func:`beta_scale` when it is neither given nor tunable on a development set.
DEFAULT_BETA = 1.0
MODES = ("vote", "average", "last")

CANCEL_EVERY = 0.1  # seconds between two looks at the cancel flag


class _Ticker:
    """Calls the cancel check at most every :data:`CANCEL_EVERY` seconds (the first time at once)."""

    def __init__(self, should_cancel: CancelCheck):
        self.should_cancel = should_cancel
        self.every = CANCEL_EVERY
        self._last = -float("inf")  # the first call always checks

    def __call__(self) -> None:
        if self.should_cancel is None:
            return
        now = time.perf_counter()
        if now - self._last >= self.every:
            self._last = now
            Reranker._check_cancel(self.should_cancel)


class KernelPerceptron(Reranker):
    """Dual-form (kernel) voted perceptron with the tagging kernel (see the module docstring).

    Parameters
    ----------
    lam:
        λ in (0, 1]: a common fragment of ``n`` states counts ``λ^(n-1)``.
    word_features:
        ``False``: states match on the word itself only; ``True``: also on lowercase form, shape,
        initial capital and digits (:data:`WORD_FEATURE_SLOTS`).
    epochs:
        Passes over the training sentences.
    beta:
        With ``learn_beta`` the weight γ of ``L(a)·L(b)`` in the kernel, else the fixed weight on
        L(x). ``None``: chosen on the development set (see the module docstring) in units of
        :func:`beta_scale`, measured on the training data, or :data:`DEFAULT_BETA` units without
        a development set. The value used ends up in ``beta_``.
    normalise, learn_beta:
        See the module docstring (both default to on).
    seed, shuffle:
        Order of the training sentences in each epoch (a fresh permutation per epoch).
    max_sentences:
        Train on at most this many informative sentences (a random subset chosen with ``seed``).
    mode:
        Prediction: ``"vote"`` (Figure 4 voting), ``"average"`` (survival-weighted average of
        the intermediate models' scores) or ``"last"`` (the final model).
    threads:
        Threads that share the stored sequences when the kernel is evaluated (the values do not
        depend on it).
    global_features:
        Add to the kernel the cosine of the two candidates' global-feature vectors h(x) (the
        linear rerankers' features, :mod:`nerstudio.rerank.features`): a sum of two kernels
        bounded by 1 each.
    """

    algo = "kernel"
    unit = "epoch"

    def __init__(
        self,
        lam: float = 0.5,
        word_features: bool = False,
        epochs: int = 1,
        beta: float | None = None,
        seed: int = 0,
        shuffle: bool = True,
        max_sentences: int | None = None,
        mode: str = "vote",
        normalise: bool = True,
        learn_beta: bool = True,
        threads: int = 1,
        global_features: bool = False,
    ):
        self.lam = lam
        self.word_features = word_features
        self.epochs = epochs
        self.beta = beta
        self.seed = seed
        self.shuffle = shuffle
        self.max_sentences = max_sentences
        self.mode = mode
        self.normalise = normalise
        self.learn_beta = learn_beta
        self.threads = threads
        self.global_features = global_features

    # -- training ------------------------------------------------------------------------------
    def _validate(self) -> None:
        if not 0.0 < float(self.lam) <= 1.0:
            raise SettingsError(f"lam must be in (0, 1], got {self.lam}")
        if int(self.epochs) < 1:
            raise SettingsError(f"epochs must be at least 1, got {self.epochs}")
        if self.mode not in MODES:
            raise SettingsError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.max_sentences is not None and int(self.max_sentences) < 1:
            raise SettingsError(f"max_sentences must be at least 1, got {self.max_sentences}")
        if self.beta is not None and float(self.beta) < 0:
            raise SettingsError(f"beta must be at least 0, got {self.beta}")

    def _training_sentences(self, train: RankingData) -> np.ndarray:
        if train.oracle is None or train.quality is None:
            raise DataError(Msg.TRAINING_NEEDS_GOLD.format())
        idx = np.flatnonzero(train.informative())
        if self.max_sentences is not None and len(idx) > int(self.max_sentences):
            rng = np.random.default_rng(self.seed)
            idx = np.sort(rng.choice(idx, size=int(self.max_sentences), replace=False))
        return idx

    @property
    def _base(self) -> float:
        """The fixed weight on L(x) in the scores (0 when it is learnt through the kernel)."""
        return 0.0 if self.learn_beta else self.beta_

    @property
    def _gamma(self) -> float:
        return self.beta_ if self.learn_beta else 0.0

    def _kernel(self, pool_ids: list | None = None) -> _MistakeKernel:
        cache = getattr(self, "_kernel_cache", None) if pool_ids is not None else None
        return _MistakeKernel(
            self.store_,
            float(self.lam),
            bool(self.normalise),
            self._gamma,
            self.stored_L_,
            getattr(self, "_norm_cache", None),
            cache,
            pool_ids,
            self._feats(),
        )

    def _unit_rows_of(self, data: RankingData) -> sp.csr_matrix:
        """``unit_rows(data.X)``, kept across the runs of a β search."""
        cache = getattr(self, "_norm_cache", None)
        key = ("unit rows", id(data.X))
        if cache is not None and key in cache:
            return cache[key][1]
        unit = unit_rows(data.X)
        if cache is not None:
            cache[key] = (data.X, unit)
        return unit

    def _feats(self) -> _StoredFeatures | None:
        return getattr(self, "stored_feats_", None) if self.global_features else None

    def fit(
        self,
        train: RankingData,
        dev: RankingData | None = None,
        callback: Callback = None,
        should_cancel: CancelCheck = None,
    ) -> KernelPerceptron:
        self._validate()
        _require_nbest(train)
        if dev is not None:
            _require_nbest(dev)
        tick = _Ticker(should_cancel)
        self._start()
        self._norm_cache: (
            dict | None
        ) = {}  # candidates' self-kernels, shared by the runs of the β search
        self._kernel_cache = None  # raw kernel values, shared by the runs of the β search
        t0 = time.perf_counter()
        idx = self._training_sentences(train)
        use_dev = dev is not None and dev.has_gold
        self.beta_grid_: list[tuple[float, float]] = []
        self.beta_scale_, self.beta_at_edge_ = None, False
        if self.beta is not None:
            self._train(
                train,
                idx,
                dev if use_dev else None,
                float(self.beta),
                int(self.epochs),
                callback,
                tick,
            )
        else:
            self.beta_scale_ = scale = beta_scale(
                train,
                idx,
                float(self.lam),
                bool(self.word_features),
                tick,
                normalise=bool(self.normalise),
                learned=bool(self.learn_beta),
            )
            if use_dev and len(idx):
                self._kernel_cache = KernelCache(
                    bool(self.word_features), float(self.lam), int(self.threads)
                )
                self._tune_beta(train, idx, dev, scale, tick)
                if callback is not None:
                    for h in self.history_:
                        callback(h)
            else:
                self._train(
                    train, idx, None, DEFAULT_BETA * scale, int(self.epochs), callback, tick
                )
        self.seconds_ = time.perf_counter() - t0
        cache, self._norm_cache, self._kernel_cache = self._kernel_cache, None, None
        self.kernel_pairs_ = (
            None if cache is None else {"computed": cache.computed, "reused": cache.reused}
        )
        return self

    def _tune_beta(self, train, idx, dev, scale, tick) -> None:
        """One full run per grid value, judged by its best dev F; the grid grows by factors of 2
        past its best edge (at most BETA_LIMIT steps); the best run becomes the model."""
        runs: dict[float, tuple[float, dict]] = {}

        def run(g: float) -> None:
            self._start()
            self._train(train, idx, dev, g * scale, int(self.epochs), None, tick)
            f = max((h.dev_f1 for h in self.history_ if h.dev_f1 is not None), default=-1.0)
            runs[g] = (
                f,
                {
                    k: getattr(self, k)
                    for k in (
                        "store_",
                        "stored_L_",
                        "mistake_ids_",
                        "counts_",
                        "beta_",
                        "history_",
                        "best_step_",
                        "_dev_memo",
                        "stored_feats_",
                    )
                },
            )

        for g in BETA_GRID:
            run(g)
        lo, hi = min(BETA_GRID), max(BETA_GRID)
        while True:
            best = max(sorted(runs), key=lambda g: runs[g][0])  # ties: the smaller β
            if best == min(runs) and min(runs) > lo / 2**BETA_LIMIT:
                run(min(runs) / 2)
            elif best == max(runs) and max(runs) < hi * 2**BETA_LIMIT:
                run(max(runs) * 2)
            else:
                break
        self.beta_grid_ = [(g * scale, runs[g][0]) for g in sorted(runs)]
        self.beta_at_edge_ = best in (min(runs), max(runs))
        for k, v in runs[best][1].items():
            setattr(self, k, v)

    def _train(self, train, idx, dev, beta, epochs, callback, tick) -> None:
        float(self.lam)
        nb = _require_nbest(train)
        store = SequenceStore(bool(self.word_features), threads=int(self.threads))
        mistake_sent: list[int] = []
        stored_L: list[float] = []
        pool_ids: list[int] = []  # with a kernel cache: its number of each stored sequence
        cache = getattr(self, "_kernel_cache", None)
        feats = _StoredFeatures(train.n_features) if self.global_features else None
        self.stored_feats_ = feats
        if (
            feats is not None
        ):  # the global-feature part of the scores: unit(x) · Σ_m (unit(gold_m) − unit(pred_m))
            unit = self._unit_rows_of(train)
            w_lin = np.zeros(train.n_features)
        counts = [0]
        self._set_learned(store, stored_L, mistake_sent, counts, beta, nb.ids)
        kern = self._kernel(pool_ids if cache is not None else None)
        base = self._base
        seen = {int(i): 0 for i in idx}  # mistakes already folded into part[i]
        part = {int(i): np.zeros(train.sizes[int(i)]) for i in idx}
        qnorm: dict[int, np.ndarray | None] = {}
        tracker = _Tracker(dev, base) if dev is not None else None
        rng = np.random.default_rng(self.seed)
        snapshots = {}
        dev_scores: dict[int, np.ndarray] = {}  # per epoch: the dev scores its dev F comes from
        for epoch in range(1, epochs + 1):
            order = rng.permutation(idx) if self.shuffle else idx
            made = 0
            for i in order.tolist():
                tick()
                M = len(mistake_sent)
                rows = train.rows(i)
                if seen[i] < M:
                    if i not in qnorm:
                        qnorm[i] = kern.query_norms(nb.words[i], nb.candidates[i])
                    K = kern(
                        nb.words[i],
                        nb.candidates[i],
                        train.L[rows],
                        2 * seen[i],
                        2 * M,
                        tick,
                        qnorm[i],
                        linear=False,
                    )
                    part[i] += K[:, 0::2].sum(axis=1) - K[:, 1::2].sum(axis=1)
                    seen[i] = M
                score = base * train.L[rows] + part[i]
                if feats is not None:
                    score = score + unit[rows] @ w_lin
                top = int(np.argmax(score))
                gold = int(train.oracle[i])
                if top != gold:
                    store.add(nb.words[i], nb.candidates[i][gold])
                    store.add(nb.words[i], nb.candidates[i][top])
                    if cache is not None:
                        pool_ids += [
                            cache.sequence((i, gold), nb.words[i], nb.candidates[i][gold]),
                            cache.sequence((i, top), nb.words[i], nb.candidates[i][top]),
                        ]
                    if feats is not None:
                        feats.add(unit, rows.start + gold)
                        feats.add(unit, rows.start + top)
                        for r, sign in ((rows.start + gold, 1.0), (rows.start + top, -1.0)):
                            a, b = unit.indptr[r], unit.indptr[r + 1]
                            np.add.at(w_lin, unit.indices[a:b], sign * unit.data[a:b])
                    stored_L += [float(train.L[rows][gold]), float(train.L[rows][top])]
                    mistake_sent.append(i)
                    counts.append(0)
                    made += 1
                counts[-1] += 1
            snapshots[epoch] = (len(mistake_sent), counts[-1])
            self._set_learned(store, stored_L, mistake_sent, counts, beta, nb.ids)
            score_fn = None
            if tracker is not None:
                tracker.advance(kern, len(mistake_sent), np.asarray(counts), tick)
                dev_scores[epoch] = tracker.scores(self.mode, counts[-1])
                score_fn = functools.partial(_fixed_scores, dev_scores[epoch])
            self._record(epoch, dev, callback, score_fn=score_fn, mistakes=made)
        if dev is not None and self.best_step_ is not None and self.best_step_ != epochs:
            M, last = snapshots[self.best_step_]
            store.truncate(2 * M)
            del mistake_sent[M:], stored_L[2 * M :], pool_ids[2 * M :]
            if feats is not None:
                feats.truncate(2 * M)
            counts = counts[: M + 1]
            counts[-1] = last
        self._set_learned(store, stored_L, mistake_sent, counts, beta, nb.ids)
        if dev is not None and self.best_step_ is not None:
            self._dev_memo: tuple[weakref.ref, str, np.ndarray] | None = (
                weakref.ref(dev),
                self.mode,
                dev_scores[self.best_step_],
            )

    def _set_learned(self, store, stored_L, mistake_sent, counts, beta, ids) -> None:
        self._dev_memo = None
        self.store_ = store
        self.stored_L_ = stored_L
        self.mistake_ids_ = [str(ids[i]) for i in mistake_sent]
        self.counts_ = np.asarray(counts, dtype=np.int64).copy()
        self.beta_ = float(beta)

    @property
    def n_mistakes_(self) -> int:
        return len(self.counts_) - 1

    # -- scoring -------------------------------------------------------------------------------
    def mistake_weights(self) -> np.ndarray:
        """Weight of each stored mistake in the ``average`` (Σ_{t>m} c_t / Σ_t c_t) or ``last``
        (all 1) model. Voting has no single weight vector."""
        c = self.counts_.astype(np.float64)
        if self.mode == "last":
            return np.ones(len(c) - 1)
        total = c.sum()
        if total <= 0:
            return np.zeros(len(c) - 1)
        after = np.cumsum(c[::-1])[::-1]  # Σ_{t >= i} c_t
        return after[1:] / total

    def decision_function(self, data: RankingData, tick=None) -> np.ndarray:
        """Per candidate: votes (``mode="vote"``), or the averaged / last model's score; the
        highest value in each sentence is the model's choice (``data.argmax``)."""
        _require_nbest(data)
        memo = getattr(self, "_dev_memo", None)
        if memo is not None and memo[0]() is data and memo[1] == self.mode:
            return memo[
                2
            ].copy()  # the development set of fit: the kept epoch's scores, as measured
        tick = tick if tick is not None else (lambda: None)
        M = self.n_mistakes_
        kern = self._kernel()
        if self.mode == "vote":
            tr = _Tracker(data, self._base)
            tr.advance(kern, M, self.counts_, tick)
            return tr.scores("vote", float(self.counts_[-1]))
        w = self.mistake_weights()
        out = self._base * data.L.copy()
        if M == 0:
            return out
        nb = _require_nbest(data)
        for s in np.flatnonzero(data.sizes > 1).tolist():
            rows = data.rows(s)
            K = kern(
                nb.words[s],
                nb.candidates[s],
                data.L[rows],
                0,
                2 * M,
                tick,
                None,
                data.X[rows] if kern.feats is not None else None,
            )
            out[rows] += rows_dot(K[:, 0::2] - K[:, 1::2], w)
        return out

    def weight_on_L(self) -> float:
        """The weight on L(x) of the final (``last``/``vote``) or averaged model."""
        M = self.n_mistakes_
        if not self.learn_beta or M == 0:
            return self._base
        w = np.ones(M) if self.mode != "average" else self.mistake_weights()
        L = np.asarray(self.stored_L_, dtype=np.float64)
        return float(self._gamma * dot(w, L[0::2] - L[1::2]))

    def explain_row(self, data: RankingData, row: int, top: int = 20) -> list[tuple[str, float]]:
        """Terms of candidate ``row``'s score: the weight on L(x) times L(x), and the largest
        mistake contributions (their fragment part; a learnt weight on L(x) gathers the L part).

        Voting has no single score, so with ``mode="vote"`` (and ``"last"``) the terms are those
        of the final model; with ``"average"`` each mistake's term carries its average weight.
        The remaining mistakes are summed in one last term, so the terms add up to the score.
        """
        _require_nbest(data)
        row = int(row)
        s = int(np.searchsorted(data.offsets, row, side="right") - 1)
        j = row - int(data.offsets[s])
        nb = _require_nbest(data)
        wL = self.weight_on_L()
        out = [(f"β·L(x) = {wL:.4g} × {data.L[row]:.4g}", float(wL * data.L[row]))]
        M = self.n_mistakes_
        if M == 0:
            return out
        kern = _MistakeKernel(
            self.store_,
            float(self.lam),
            bool(self.normalise),
            0.0,
            self.stored_L_,
            feats=self._feats(),
        )
        qn = kern.query_norms(nb.words[s], nb.candidates[s])
        K = kern(
            nb.words[s],
            nb.candidates[s],
            data.L[data.rows(s)],
            0,
            2 * M,
            None,
            qn,
            data.X[data.rows(s)] if kern.feats is not None else None,
        )[j]
        kg, kp = K[0::2], K[1::2]
        w = np.ones(M) if self.mode != "average" else self.mistake_weights()
        contrib = w * (kg - kp)
        order = np.argsort(-np.abs(contrib), kind="stable")
        shown = [m for m in order[: max(int(top), 0)].tolist() if contrib[m] != 0]
        for m in shown:
            desc = f"mistake on sentence {self.mistake_ids_[m]}: +K(gold) − K(pred) = {kg[m]:.4g} − {kp[m]:.4g}"
            if self.mode == "average":
                desc += f" (weight {w[m]:.3g})"
            out.append((desc, float(contrib[m])))
        rest = np.delete(contrib, shown)
        if len(rest) and np.any(rest != 0):
            out.append((f"other {len(rest)} mistakes", float(rest.sum())))
        return out

    # -- persistence ---------------------------------------------------------------------------
    def state(self) -> dict[str, np.ndarray]:
        st = self.store_
        vocab: dict[str, int] = {}
        seq_words = [vocab.setdefault(w, len(vocab)) for ws in st.words for w in ws]
        return {
            "beta": np.array([self.beta_], dtype=np.float64),
            "lam": np.array([float(self.lam)], dtype=np.float64),
            "word_features": np.array([1 if self.word_features else 0], dtype=np.int8),
            "normalise": np.array([1 if self.normalise else 0], dtype=np.int8),
            "learn_beta": np.array([1 if self.learn_beta else 0], dtype=np.int8),
            "seq_L": np.asarray(self.stored_L_, dtype=np.float64),
            "counts": self.counts_.astype(np.int64),
            "seq_lengths": np.array([len(ws) for ws in st.words], dtype=np.int64),
            "seq_tags": (
                np.concatenate([st.tags_of(k) for k in range(len(st))])
                if len(st)
                else np.zeros(0, dtype=np.int16)
            ).astype(np.int16),
            "seq_words": np.array(seq_words, dtype=np.int32),
            "vocab": json_array(list(vocab)),
            "mistake_ids": json_array(list(self.mistake_ids_)),
            **self._feature_state(),
        }

    def _feature_state(self) -> dict[str, np.ndarray]:
        feats = self._feats()
        if feats is None:
            return {"global_features": np.array([0], dtype=np.int8)}
        S = feats.matrix()
        return {
            "global_features": np.array([1], dtype=np.int8),
            "seq_feat_ptr": S.indptr.astype(np.int64),
            "seq_feat_idx": S.indices.astype(np.int32),
            "seq_feat_val": S.data.astype(np.float64),
        }

    def set_state(self, arrays: dict[str, np.ndarray], n_features: int) -> None:
        """Restore from :meth:`state` arrays (``n_features``: the width of the global-feature
        vectors, used when the kernel has a global-feature part)."""
        from ..persist import json_strings, scalar, vector

        counts = vector(arrays, "counts", dtype=np.int64)
        lengths = vector(arrays, "seq_lengths", dtype=np.int64)
        tags = vector(arrays, "seq_tags", dtype=np.int16)
        words = vector(arrays, "seq_words", dtype=np.int64)
        vocab = json_strings(arrays, "vocab")
        ids = mistake_ids(arrays)
        beta = scalar(arrays, "beta")
        lam = scalar(arrays, "lam")
        wf = scalar(arrays, "word_features", bool)
        # files written before normalisation and the learnt L weight: the raw kernel, fixed β
        norm = flag(arrays, "normalise")
        learn = flag(arrays, "learn_beta")
        seq_L = (
            vector(arrays, "seq_L") if "seq_L" in arrays else np.zeros(len(arrays["seq_lengths"]))
        )
        gf = flag(arrays, "global_features")
        feats = stored_features(arrays, len(lengths), n_features) if gf else None
        check_sequences(counts, lengths, ids, tags, words, len(vocab), seq_L)
        self.lam, self.word_features, self.normalise, self.learn_beta = lam, wf, norm, learn
        self.global_features, self.stored_feats_ = gf, feats
        self.stored_L_ = seq_L.tolist()
        store = SequenceStore(wf)
        p = 0
        for n in lengths.tolist():
            store.add([vocab[k] for k in words[p : p + n].tolist()], tags[p : p + n])
            p += n
        self.store_ = store
        self.counts_ = counts
        self.mistake_ids_ = ids
        self.beta_ = beta
        self._dev_memo = None


def beta_scale(
    train: RankingData,
    idx: np.ndarray,
    lam: float,
    word_features: bool = False,
    tick: Callable[[], None] | None = None,
    sample: int = 200,
    normalise: bool = True,
    learned: bool = True,
) -> float:
    """Units for β, so that one step of its grid means the same whatever λ and the kernel.

    Over a sample of informative training sentences whose oracle ``o`` is not their first
    candidate ``x_1``: ``k`` = the median |K(o, o) − K(o, x_1)| (normalised or not, as the model
    uses it) and ``l`` = the median |L(o) − L(x_1)|. A mistake on such a sentence moves its own
    scores by about ``k`` through the fragments; a fixed weight β on L(x) moves them by ``β·l``
    (unit ``k / l``), a learnt one through the kernel term ``β·L(a)·L(b)`` by about ``β·l²``
    (unit ``k / l²``)."""
    nb = _require_nbest(train)
    sel = [int(i) for i in idx if int(train.oracle[int(i)]) != 0][:sample]
    if not sel:
        return 1.0
    store = SequenceStore(word_features)
    kd, ld = [], []
    for i in sel:
        o = int(train.oracle[i])
        store.add(nb.words[i], nb.candidates[i][o])
        pair = nb.candidates[i][[o, 0]]
        K = store.kernel(nb.words[i], pair, lam, len(store) - 1, len(store))[:, 0]
        if normalise:
            qn = candidate_self_kernels(nb.words[i], pair, lam, word_features)
            K = normalised(K[:, None], qn, qn[:1])[:, 0]
        kd.append(abs(K[0] - K[1]))
        r = train.rows(i)
        ld.append(abs(train.L[r][o] - train.L[r][0]))
        if tick is not None:
            tick()
    k, l_ = float(np.median(kd)), float(np.median(ld))
    if k <= 0 or l_ <= 0:
        return 1.0
    return k / l_**2 if learned else k / l_


def _fixed_scores(scores, _dev):
    """The dev scores already computed for an epoch, whatever list is passed."""
    return scores
