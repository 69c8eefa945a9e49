"""The baseline maximum-entropy tagger of Collins 2002 (§2.2) with beam-search N-best.

p(t | h) = exp(Σ_k λ_k f_k(h, t)) / Σ_t' exp(Σ_k λ_k f_k(h, t')), the history h holding the
sentence, the position and the two previous tags. Predicates come from
:mod:`nerstudio.tagging.features`; the previous tag ``t-1`` and the previous two tags
``t-2,t-1`` are *dynamic* predicates whose weights are looked up during decoding. Every
predicate is conjoined with every tag, and only the (predicate, tag) pairs seen at least
``cutoff`` times in training are parameters.

Tags are the SCN encoding of the task: ``N``, ``S``, ``C`` for the boundary-only task (the
paper's), ``N``, ``S-X``, ``C-X`` for the typed task; ``C`` may only follow ``S`` or ``C``
of the same type, which the beam enforces. With ``alphabet="bilou"`` the tagger predicts BILOU
tags instead (:mod:`nerstudio.tagging.tag_alphabets`) and writes its N-best lists in SCN, so
nothing after it sees the difference.

Training maximises the L2-regularised conditional log-likelihood online, with AdaGrad in a few
epochs chosen on development data (:mod:`nerstudio.tagging.online`), or with L-BFGS, or with
Generalized Iterative Scaling, the paper's own choice. ``fit(..., init=tagger)`` warm-starts
from another tagger's weights (the annotation loop retrains on a growing set of sentences):
each (predicate, tag) parameter both models have starts at the old weight, matched by the
predicate's name and the tag's name, the others at zero; the objective is convex, so the
optimum is the cold start's, reached in fewer iterations. The objective and our own L-BFGS are in
:mod:`nerstudio.tagging.maxent_training`.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..choices import TASKS
from ..corpus.model import Sentence, Span
from ..errors import Cancelled, DataError, FormatError, Msg, SettingsError
from ..learners import tagger as tagger_row
from ..nbest import NBestList, spans_to_tag_ids
from ..persist import (
    Corrupt,
    construct,
    header_field,
    json_array,
    json_strings,
    load_npz,
    save_npz,
    scalar,
    vector,
)
from ..resources.clusters import fingerprint as cluster_fingerprint
from .features import FeatureExtractor, _unique_inverse, parse_feature_set
from .maxent_training import Design, Objective, fit_gis, lbfgs
from .online import fit_online
from .tag_alphabets import check_alphabet, is_tagset, make_tagset, rules

MODEL_FORMAT = "nerstudio-maxent"
MODEL_VERSION = 1


@dataclass
class TrainStats:
    """Progress report of one optimiser iteration."""

    iteration: int
    objective: float
    seconds: float
    dev_f1: float | None = None
    message: str = ""


class MaxEntTagger:
    """Maximum-entropy tagger. ``fit`` returns self; learned state ends in ``_``."""

    gis_C_: float  # GIS only: the constant every design row sums to with its slack predicate

    def __init__(
        self,
        task: str = "typed",
        features: str = "paper",
        cutoff: int = 5,
        l2: float = 1.0,
        optimizer: str = "adagrad",
        max_iter: int = 100,
        epochs: int = 5,
        eta: float = 0.05,
        seed: int = 0,
        tol: float = 1e-5,
        dev_every: int = 0,
        labels: Sequence[str] | None = None,
        cutoff_on: str | None = None,
        maxcor: int = 10,
        dtype=np.float32,
        threads: int | None = None,
        alphabet: str = "scn",
    ):
        if task not in TASKS:
            raise SettingsError(Msg.UNKNOWN.format(what="task", name=task, choices=TASKS))
        parse_feature_set(features)  # a SettingsError naming what is wrong
        optimizers = tagger_row("maxent").choices["optimizer"].values
        if optimizer not in optimizers:
            raise SettingsError(
                Msg.UNKNOWN.format(what="optimizer", name=optimizer, choices=optimizers)
            )
        self.task, self.features, self.cutoff, self.l2 = task, features, cutoff, l2
        self.optimizer, self.max_iter, self.tol, self.dev_every = (
            optimizer,
            max_iter,
            tol,
            dev_every,
        )
        # the online optimiser's: at most ``epochs`` passes, step size, order and held-out seed
        self.epochs, self.eta, self.seed = epochs, eta, seed
        self.labels = None if labels is None else list(labels)
        # the paper counts (predicate, tag) pairs; the richer CoNLL set does better counting predicates
        cutoff_on = cutoff_on or ("pair" if str(features).split("+")[0] == "paper" else "predicate")
        if cutoff_on not in ("pair", "predicate"):
            raise SettingsError("cutoff_on must be 'pair' or 'predicate'")
        self.cutoff_on = cutoff_on
        self.maxcor = maxcor
        self.dtype = dtype  # of weights, residuals and L-BFGS history in training; float32 halves memory traffic
        self.threads = threads  # of the L-BFGS objective; None: one per available core (at most 8)
        self.alphabet = check_alphabet(alphabet)  # the tags it predicts; its lists are SCN

    # -- helpers --------------------------------------------------------------------------
    def _threads(self) -> int:
        if self.threads:
            return int(self.threads)
        cores = (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else (os.cpu_count() or 1)
        )
        return max(1, min(cores, 8))

    @property
    def typed(self) -> bool:
        return self.task == "typed"

    def _gold_ids(self, sentences: Sequence[Sentence]) -> np.ndarray:
        idx = {t: k for k, t in enumerate(self.tagset_)}
        parts = [
            spans_to_tag_ids(s.spans, len(s.words), idx, self.typed, self.alphabet)
            for s in sentences
        ]
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)

    def _dynamic_ids(self, y: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gold history: t-1 (T = start) and the (t-2, t-1) pair index, per token."""
        T = len(self.tagset_)
        starts = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        pos = np.arange(len(y)) - np.repeat(starts[:-1], lens)
        p1 = np.full(len(y), T, dtype=np.int64)
        p2 = np.full(len(y), T, dtype=np.int64)
        p1[pos >= 1] = y[np.nonzero(pos >= 1)[0] - 1]
        p2[pos >= 2] = y[np.nonzero(pos >= 2)[0] - 2]
        return p1, p2 * (T + 1) + p1

    # -- training -------------------------------------------------------------------------
    def _training_design(
        self, sentences: Sequence[Sentence]
    ) -> tuple[Design, np.ndarray, np.ndarray]:
        """Features, gold tags, count cut-off and the factored training design.

        Returns (design, y, mask); ``mask[f, t]`` says whether (parameter row f, tag t) is a
        parameter. Templates sharing a source (:meth:`FeatureExtractor.fit_ids`) become keys.
        """
        T = len(self.tagset_)
        self.extractor_ = FeatureExtractor(self.features)
        # a predicate seen fewer than ``cutoff`` times cannot pass either cut-off: never built
        mat, groups = self.extractor_.fit_ids(sentences, min_count=self.cutoff)
        n, K = mat.shape
        Fs = len(self.extractor_.vocab)
        y = self._gold_ids(sentences)
        lens = np.array([len(s.words) for s in sentences], dtype=np.int64)
        p1, pair = self._dynamic_ids(y, lens)
        nd = (T + 1) + (T + 1) ** 2
        dyn = np.stack([p1, (T + 1) + pair], axis=1)  # dynamic rows, counted from the static ones
        seen = mat >= 0
        if (
            self.cutoff_on == "pair"
        ):  # Ratnaparkhi / Collins: the (predicate, tag) pair is the feature
            c_static = np.bincount((mat * T + y[:, None])[seen], minlength=Fs * T).reshape(Fs, T)
            c_dyn = np.bincount((dyn * T + y[:, None]).ravel(), minlength=nd * T).reshape(nd, T)
            mask = np.concatenate([c_static, c_dyn]) >= self.cutoff
        else:  # a frequent predicate gets a weight for every tag (negative evidence too)
            counts = np.concatenate(
                [np.bincount(mat[seen], minlength=Fs), np.bincount(dyn.ravel(), minlength=nd)]
            )
            mask = np.repeat((counts >= self.cutoff)[:, None], T, axis=1)
        keep_static = np.nonzero(mask[:Fs].any(axis=1))[0]
        self.extractor_.restrict(keep_static)
        self.n_static_ = Fs_kept = len(keep_static)
        mask = np.concatenate([mask[keep_static], mask[Fs:]])
        P = Fs_kept + nd
        remap = np.full(Fs + 1, -1, dtype=np.int64)  # the last entry maps −1 (not built) to −1
        remap[keep_static] = np.arange(Fs_kept)
        mat = remap[mat]  # −1: cut off
        grouped = np.zeros(K, dtype=bool)
        token_cols = []
        b_counts, b_ids = [], []
        n_keys = 0
        for cols, codes in groups:
            uniq, inv = _unique_inverse(codes)
            first = np.empty(len(uniq), dtype=np.int64)
            first[inv] = np.arange(n)  # a token of each source value (any will do)
            rows = mat[first][:, cols]  # the group's predicates for each source value
            ok = rows >= 0
            cnt = ok.sum(axis=1)
            used = cnt > 0
            key = np.cumsum(used) - 1
            token_cols.append(np.where(used[inv], P + n_keys + key[inv], -1))
            b_counts.append(cnt[used])
            b_ids.append(rows[used][ok[used]])
            n_keys += int(used.sum())
            grouped[cols] = True
        tok = np.concatenate(
            [mat[:, ~grouped]] + [c[:, None] for c in token_cols] + [dyn + Fs_kept], axis=1
        )
        ok = tok >= 0
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(ok.sum(axis=1), out=indptr[1:])
        indices = tok[ok].astype(np.int32)
        bptr = np.zeros(n_keys + 1, dtype=np.int64)
        if b_counts:
            np.cumsum(np.concatenate(b_counts), out=bptr[1:])
        bind = np.concatenate(b_ids).astype(np.int32) if b_ids else np.zeros(0, dtype=np.int32)
        return Design(indptr, indices, bptr, bind, P, n_keys), y, mask

    def fit(
        self,
        sentences: Sequence[Sentence],
        dev: Sequence[Sentence] | None = None,
        callback: Callable[[TrainStats], None] | None = None,
        should_cancel: Callable[[], bool] | None = None,
        init: MaxEntTagger | None = None,
    ) -> MaxEntTagger:
        t0 = time.perf_counter()
        self.gis_slack_: np.ndarray | None = None  # set by GIS only
        sentences = [s for s in sentences if len(s.words)]
        if not sentences:
            raise DataError("no training sentences")
        labels = (
            self.labels
            if self.labels is not None
            else sorted({sp.label for s in sentences for sp in s.spans})
        )
        labels = labels if self.typed else []
        self.tagset_ = make_tagset(labels, self.task, self.alphabet)
        design, y, mask = self._training_design(sentences)
        self.mask_ = mask
        W0 = None if init is None else self.initial_weights(init, mask)
        if callback:
            callback(
                TrainStats(
                    0,
                    float("nan"),
                    time.perf_counter() - t0,
                    message=f"{len(y)} tokens, {self.n_static_} predicates, "
                    f"{int(mask.sum())} parameters",
                )
            )
        if self.optimizer == "adagrad":
            W = fit_online(self, design, y, mask, sentences, dev, callback, should_cancel, t0, W0)
        elif self.optimizer == "lbfgs":
            W = self._fit_lbfgs(design, y, mask, dev, callback, should_cancel, t0, W0)
        else:
            W = fit_gis(self, design.to_csr(), y, mask, dev, callback, should_cancel, t0, W0)
        self._set_weights(W)
        self.train_seconds_ = time.perf_counter() - t0
        return self

    def initial_weights(self, init: MaxEntTagger, mask: np.ndarray) -> np.ndarray:
        """``init``'s weights laid out as this fit's parameters (``mask``): a static predicate
        and a tag both models know keep their weight; the dynamic rows are matched by the names
        of the previous tags (the sentence start included); everything else is zero."""
        T, To = len(self.tagset_), len(init.tagset_)
        Fs, Fo = self.n_static_, init.n_static_
        W0 = np.zeros(mask.shape)
        old_tag = {t: j for j, t in enumerate(init.tagset_)}
        cols = [j for j, t in enumerate(self.tagset_) if t in old_tag]
        old_cols = [old_tag[self.tagset_[j]] for j in cols]
        old_vocab = init.extractor_.vocab
        pairs = [
            (r, old_vocab[name]) for name, r in self.extractor_.vocab.items() if name in old_vocab
        ]
        if pairs and cols:
            new_rows, old_rows = (np.array(x, dtype=np.int64) for x in zip(*pairs))
            W0[np.ix_(new_rows, np.asarray(cols))] = init.W_[np.ix_(old_rows, np.asarray(old_cols))]
        prev = {
            T: To,
            **{j: old_tag[t] for j, t in enumerate(self.tagset_) if t in old_tag},
        }  # T: start
        for i, oi in prev.items():
            W0[Fs + i, cols] = init.W_[Fo + oi, old_cols]
            for i2, oi2 in prev.items():
                W0[Fs + T + 1 + i2 * (T + 1) + i, cols] = init.W_[
                    Fo + To + 1 + oi2 * (To + 1) + oi, old_cols
                ]
        return np.where(mask, W0, 0.0)

    def _design(self, Xs: sp.csr_matrix, p1: np.ndarray, pair: np.ndarray) -> sp.csr_matrix:
        """Reference (scipy) form of the design: static predicates, then t-1, then t-2 t-1."""
        T = len(self.tagset_)
        n, _Fs = Xs.shape
        nd = (T + 1) + (T + 1) ** 2
        dyn = sp.csr_matrix(
            (
                np.ones(2 * n, dtype=np.float32),
                np.stack([p1, (T + 1) + pair], axis=1).reshape(-1),
                np.arange(0, 2 * n + 1, 2),
            ),
            shape=(n, nd),
        )
        return sp.hstack([Xs, dyn], format="csr", dtype=np.float32)

    def _set_weights(self, W: np.ndarray) -> None:
        T = len(self.tagset_)
        self.W_ = np.ascontiguousarray(W, dtype=np.float64)
        Fs = self.n_static_
        self.Wp1_ = self.W_[Fs : Fs + T + 1]
        self.Wp2_ = self.W_[Fs + T + 1 :]
        r = rules(self.tagset_)  # SCN: C-X only after S-X or C-X; BILOU: no B or I at the end
        self.allowed_, self.to_scn_, self.list_tagset_ = r.allowed, r.to_scn, r.list_tagset
        self.trans_pen_ = np.where(r.allowed, 0.0, -np.inf)
        self.final_pen_ = None if r.final.all() else np.where(r.final, 0.0, -np.inf)

    def _loss_grad(self, X, XT, y, mask, theta):
        """Reference (numpy/scipy) objective: negative penalised log-likelihood and its gradient
        w.r.t. the free weights ``theta``. Training uses :class:`Objective`; tests compare."""
        if mask.all():
            W = theta.reshape(mask.shape).astype(self.dtype, copy=False)
        else:
            W = np.zeros(mask.shape, dtype=self.dtype)
            W[mask] = theta
        S = X @ W
        S -= S.max(axis=1, keepdims=True)
        np.exp(S, out=S)
        S /= S.sum(axis=1, keepdims=True)
        rows = np.arange(len(y))
        ll = np.log(S[rows, y]).sum(dtype=np.float64)
        S[rows, y] -= 1.0
        G = XT @ S
        loss = -ll + 0.5 * self.l2 * float(theta @ theta)
        grad = (G.reshape(-1) if mask.all() else G[mask]).astype(np.float64) + self.l2 * theta
        return float(loss), grad

    def _fit_lbfgs(self, design, y, mask, dev, callback, should_cancel, t0, W0=None):
        obj = Objective(design, y, mask, self.l2, self.dtype, should_cancel, self._threads())

        def cb(it, x, f):
            dev_f = None
            if dev is not None and self.dev_every and it % self.dev_every == 0:
                self._set_weights(x.reshape(mask.shape))
                dev_f = self.evaluate(dev, beam=3)
            if callback:
                callback(TrainStats(it, f, time.perf_counter() - t0, dev_f))
            if should_cancel and should_cancel():
                raise Cancelled("tagger training cancelled")

        try:
            # the (s, y) history in the training dtype: float32 halves the two-loop's memory traffic
            res = lbfgs(
                obj,
                mask.size,
                max_iter=self.max_iter,
                m=self.maxcor,
                ftol=self.tol * 1e-3,
                gtol=self.tol,
                callback=cb,
                history_dtype=self.dtype,
                x0=None if W0 is None else W0.reshape(-1),
            )
        finally:
            obj.close()
        self.n_iter_ = res.n_iter
        self.n_evals_ = res.n_evals
        self.stop_reason_ = res.reason
        return res.x.reshape(mask.shape)

    # -- decoding -------------------------------------------------------------------------
    def static_scores(self, sentences: Sequence[Sentence]) -> np.ndarray:
        """Score of every (token, tag) from the static predicates: (n_tokens, T)."""
        Xs = self.extractor_.transform(sentences)
        S = np.asarray(Xs @ self.W_[: self.n_static_])
        slack_w = getattr(self, "gis_slack_", None)
        if slack_w is not None:
            slack = self.gis_C_ - np.asarray(Xs.sum(axis=1)).ravel() - 2.0
            S = S + slack[:, None] * slack_w[None, :]
        return S

    def nbest(
        self,
        sentences: Sequence[Sentence],
        n: int = 20,
        beam: int | None = None,
        batch_tokens: int = 20000,
        ids: Sequence[str] | None = None,
        with_gold: bool = True,
        progress: Callable[[int, int], None] | None = None,
        should_cancel: Callable[[], bool] | None = None,
        static: np.ndarray | None = None,
    ) -> NBestList:
        """Beam search: the N most probable distinct valid tag sequences per sentence.

        The beam keeps ``beam`` (default ``n``) hypotheses per position. Sentences are decoded in
        batches of similar length, all sentences of a batch advancing together. ``static``: the
        sentences' :meth:`static_scores`, if already computed.
        """
        beam = max(beam or n, n)
        sentences = list(sentences)
        N = len(sentences)
        lens = np.array([len(s.words) for s in sentences], dtype=np.int64)
        cands: list = [None] * N
        logps: list = [None] * N
        order = np.argsort(-lens, kind="stable")
        offsets = np.concatenate([[0], np.cumsum(lens)])
        done = 0
        k = 0
        while k < N:
            if should_cancel and should_cancel():
                raise Cancelled("decoding cancelled")
            tok = 0
            j = k
            while j < N and (tok == 0 or tok + lens[order[j]] <= batch_tokens):
                tok += lens[order[j]]
                j += 1
            idx = order[k:j]
            batch = [sentences[i] for i in idx]
            rows = (
                None
                if static is None
                else static[
                    np.concatenate([np.arange(int(offsets[i]), int(offsets[i + 1])) for i in idx])
                ]
            )
            out = self._beam_batch(batch, lens[idx], n, beam, rows)
            for i, (c, lp) in zip(idx, out):
                cands[i], logps[i] = c, lp
            done += len(idx)
            if progress:
                progress(done, N)
            k = j
        gold = (
            [
                list(s.spans) if self.typed else [Span(a, b, "") for a, b, _ in s.spans]
                for s in sentences
            ]
            if with_gold
            else None
        )
        return NBestList(
            list(self.list_tagset_),
            [s.words for s in sentences],
            cands,
            logps,
            gold,
            list(ids) if ids else [],
            {"task": self.task, "features": self.features, "n": n},
        )

    def _beam_batch(self, batch, lens, n, beam, static=None):
        T = len(self.tagset_)
        B = len(batch)
        if static is None:
            nonempty = [s for s in batch if len(s.words)]
            static = self.static_scores(nonempty) if nonempty else np.zeros((0, T))
        starts = np.zeros(B + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        L = int(lens.max()) if B else 0
        K = beam
        score = np.full((B, K), -np.inf)
        score[:, 0] = 0.0
        t1 = np.full((B, K), T, dtype=np.int64)  # previous tag (T = start)
        t2 = np.full((B, K), T, dtype=np.int64)
        back_parent = np.zeros((L, B, K), dtype=np.int32)
        back_tag = np.zeros((L, B, K), dtype=np.int16)
        Wp1, Wp2, pen = self.Wp1_, self.Wp2_, self.trans_pen_
        for i in range(L):
            act = int((lens > i).sum())  # lens are sorted descending: active rows are a prefix
            if act == 0:
                break
            st = static[starts[:act] + i]  # (act, T)
            a1, a2 = t1[:act], t2[:act]
            local = st[:, None, :] + Wp1[a1] + Wp2[a2 * (T + 1) + a1]  # (act, K, T)
            local -= local.max(axis=2, keepdims=True)
            local -= np.log(np.exp(local).sum(axis=2, keepdims=True))
            cand = score[:act, :, None] + local + pen[a1]
            if self.final_pen_ is not None:  # sentences ending here end on a final tag
                cand[lens[:act] == i + 1] += self.final_pen_
            flat = cand.reshape(act, K * T)
            if K * T > K:
                part = np.argpartition(-flat, K - 1, axis=1)[:, :K]
            else:
                part = np.broadcast_to(np.arange(K * T), (act, K * T))
            vals = np.take_along_axis(flat, part, axis=1)
            o = np.argsort(-vals, axis=1, kind="stable")
            sel = np.take_along_axis(part, o, axis=1)
            newscore = np.take_along_axis(vals, o, axis=1)
            parent = sel // T
            tag = sel % T
            back_parent[i, :act] = parent
            back_tag[i, :act] = tag
            score[:act] = newscore
            t2[:act] = np.take_along_axis(a1, parent, axis=1)
            t1[:act] = tag
        out = []
        for b in range(B):
            m = int(lens[b])
            valid = np.isfinite(score[b])
            kk = min(n, int(valid.sum())) if m else 1
            seqs = np.zeros((kk, m), dtype=np.int16)
            if m:
                ptr = np.arange(kk)
                for i in range(m - 1, -1, -1):
                    seqs[:, i] = back_tag[i, b, ptr]
                    ptr = back_parent[i, b, ptr]
                out.append((self.to_scn_[seqs], score[b, :kk].copy()))
            else:
                out.append((seqs, np.zeros(1)))
        return out

    # -- the Tagger interface (nerstudio.tagging.protocol) ---------------------------------------
    def fit_corpus(self, corpus, dev=None, callback=None, should_cancel=None) -> MaxEntTagger:
        """:meth:`fit` on the sentences of ``corpus`` (and of ``dev``)."""
        return self.fit(
            corpus.sentences,
            dev.sentences if dev is not None else None,
            callback=callback,
            should_cancel=should_cancel,
        )

    def candidate_lists(
        self, corpus, n: int = 20, *, documents: bool = False, with_gold: bool = True
    ) -> NBestList:
        """:meth:`nbest` of the sentences of ``corpus``; it decodes sentences only."""
        if documents:
            raise SettingsError("document lists need a perceptron or joint tagger model")
        return self.nbest(corpus.sentences, n=n, with_gold=with_gold)

    def get_params(self) -> dict:
        """The constructor's settings."""
        import inspect

        sig = inspect.signature(type(self).__init__)
        return {k: getattr(self, k) for k in sig.parameters if k != "self"}

    def predict_spans(self, sentences: Sequence[Sentence], beam: int = 20) -> list[list[Span]]:
        nb = self.nbest(sentences, n=1, beam=beam, with_gold=False)
        return nb.top()

    def evaluate(self, sentences: Sequence[Sentence], beam: int = 20) -> float:
        from ..evaluation import evaluate_spans

        pred = self.predict_spans(sentences, beam=beam)
        gold = [
            list(s.spans) if self.typed else [Span(a, b, "") for a, b, _ in s.spans]
            for s in sentences
        ]
        return evaluate_spans(gold, pred).f1

    def log_prob(self, sentence: Sentence, tag_ids: Sequence[int]) -> float:
        """log p(tags | words) under the model, ``tag_ids`` in its own tag set (not the lists'
        SCN when it predicts BILOU); used by tests against the beam."""
        T = len(self.tagset_)
        st = self.static_scores([sentence])
        lp = 0.0
        a2 = a1 = T
        for i, t in enumerate(tag_ids):
            loc = st[i] + self.Wp1_[a1] + self.Wp2_[a2 * (T + 1) + a1]
            m = loc.max()
            lp += loc[t] - (m + math.log(np.exp(loc - m).sum()))
            a2, a1 = a1, t
        return lp

    # -- persistence ----------------------------------------------------------------------
    def save(self, path) -> None:
        header = {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "task": self.task,
            "features": self.features,
            "cutoff": self.cutoff,
            "cutoff_on": self.cutoff_on,
            "l2": self.l2,
            "optimizer": self.optimizer,
            "max_iter": self.max_iter,
            "epochs": self.epochs,
            "eta": self.eta,
            "seed": self.seed,
            "alphabet": self.alphabet,
            "tagset": self.tagset_,
            "n_static": self.n_static_,
            "n_lexicon": len(self.extractor_.lexicon),
            "train_seconds": getattr(self, "train_seconds_", None),
            "n_iter": getattr(self, "n_iter_", None),
            "n_evals": getattr(self, "n_evals_", None),
            "stop_reason": getattr(self, "stop_reason_", None),
        }
        if self.extractor_.gazetteers is not None:
            header["gazetteers"] = self.extractor_.gazetteers.fingerprint
        if self.extractor_.cluster_bits:
            header["clusters"] = cluster_fingerprint()
        names = self.extractor_.names()
        payload = {
            "predicates": json_array(names),
            "lexicon": json_array(sorted(self.extractor_.lexicon)),
            "W": self.W_.astype(np.float32),
        }
        slack_w = getattr(self, "gis_slack_", None)
        if slack_w is not None:
            payload["gis_slack"] = slack_w
            payload["gis_C"] = np.array([self.gis_C_])
        save_npz(path, header, payload)

    @classmethod
    def load(cls, path) -> MaxEntTagger:
        path = os.fspath(path)
        h, arrays = load_npz(path, MODEL_FORMAT, MODEL_VERSION, "a tagger model")
        try:  # the checks raise Corrupt; anything else is a bug and propagates
            params = {
                k: h[k]
                for k in (
                    "task",
                    "features",
                    "cutoff",
                    "l2",
                    "optimizer",
                    "max_iter",
                    "epochs",
                    "eta",
                    "seed",
                    "alphabet",
                )
                if k in h
            }
            params["cutoff_on"] = h.get("cutoff_on")
            m = construct(cls, params, "header")
            m.tagset_ = list(header_field(h, "tagset", list[str]))
            if not is_tagset(m.tagset_, m.alphabet):
                raise Corrupt(
                    f"header field 'tagset' is not a tag set of the {m.alphabet} alphabet"
                )
            m.n_static_ = header_field(h, "n_static", int)
            names = json_strings(arrays, "predicates", unique=True)
            if len(names) != m.n_static_:
                raise Corrupt("predicate count does not match the weights")
            lexicon = json_strings(arrays, "lexicon")
            n_lexicon = header_field(h, "n_lexicon", int, default=None)
            if n_lexicon is not None and len(lexicon) != n_lexicon:
                raise Corrupt(
                    f"array 'lexicon' holds {len(lexicon)} words, the header says {n_lexicon}"
                )
            m.extractor_ = FeatureExtractor(m.features, set(lexicon))
            gz = m.extractor_.gazetteers
            if gz is not None and h.get("gazetteers") != gz.fingerprint:
                detail = f" ({h.get('gazetteers')} against {gz.fingerprint})"
                raise Corrupt(Msg.OTHER_RESOURCE.format(what="gazetteer lists", detail=detail))
            if m.extractor_.cluster_bits and h.get("clusters") != cluster_fingerprint():
                detail = f" ({h.get('clusters')} against {cluster_fingerprint()})"
                raise Corrupt(Msg.OTHER_RESOURCE.format(what="word clusters", detail=detail))
            m.extractor_.vocab = {k: i for i, k in enumerate(names)}
            T = len(m.tagset_)
            if arrays.shape("W") != (
                m.n_static_ + (T + 1) + (T + 1) ** 2,
                T,
            ):  # checked before it is read
                raise Corrupt(f"weight matrix has shape {arrays.shape('W')}")
            W = arrays["W"].astype(np.float64)
            if "gis_slack" in arrays:
                m.gis_slack_ = vector(arrays, "gis_slack", T)
                m.gis_C_ = scalar(arrays, "gis_C")
            m._set_weights(W)
            m.train_seconds_ = header_field(h, "train_seconds", float | None, default=None)
            m.n_iter_ = header_field(h, "n_iter", int | None, default=None)
            m.n_evals_ = header_field(h, "n_evals", int | None, default=None)
            m.stop_reason_ = header_field(h, "stop_reason", str | None, default=None)
            return m
        except Corrupt as exc:
            raise FormatError(path, None, f"corrupt tagger model: {exc}") from None
