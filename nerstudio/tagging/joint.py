"""Perceptron training with local and non-local features (Kazama & Torisawa 2007 §4; SPEC §7).

A document's candidates come from the *local* model Φ^l·α (exact k-best of the structured
perceptron tagger, :mod:`nerstudio.tagging.perceptron`); the *total* model Φ^a·α = Φ^l·α + Φ^g·α
adds the non-local features of :mod:`nerstudio.text.nonlocal_features` and re-scores them.

``proposed`` — Algorithm 4.2
    for each document: take the n-best under the local model and re-score them with the total
    model; (A) if the total best y' is wrong and within margin C of gold, update all features
    with it, else if the total second best y'' is within C, update with it; otherwise (B) if the
    local best y¹ is wrong, update the local features with it, or with the local second best y²
    when gold leads it locally by at most C_l.
``candidate`` — Algorithm 4.1
    the same without (B).
``reranking1`` / ``reranking2`` — the paper's re-ranking baselines (§6.4)
    Algorithm 4.1 over *fixed* candidate lists made by a first (local, margin) model with
    cross-validation on the training data: ``reranking1`` has one local feature, the first
    model's score; ``reranking2`` re-trains the full local feature set from zero alongside
    the non-local features.

Updates always move towards the true labelling y*, which need not be among the candidates.
Weights are averaged over every document of every epoch when ``average`` is set (lazy
accumulators); ``bpm`` > 0 starts from the mean of that many single shuffled passes (K&T §4.3).
At test time the n' best (``n_test``) local candidates are re-scored; the paper found a larger n'
than in training helps (its Table 3).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ..corpus.model import Span
from ..errors import DataError, FormatError, Msg, SettingsError
from ..evaluation import evaluate_spans
from ..nbest import NBestList, tags_to_spans
from ..persist import (
    Corrupt,
    check_params,
    construct,
    distinct,
    header_field,
    jsonable,
    load_npz,
    records,
    save_npz,
    scalar,
)
from ..text.nonlocal_features import TEMPLATES, NonLocalFeatures
from .joint_documents import Documents, sentence_spans
from .joint_local import FirstScoreLocal, FixedLocal, KBestLocal, first_model_lists
from .perceptron import PerceptronTagger
from .weights import AveragedWeights, sparse_weights

MODEL_FORMAT = "nerstudio-joint-tagger"
MODEL_VERSION = 1

ALGORITHMS = ("candidate", "proposed", "reranking1", "reranking2")


@dataclass
class JointStats:
    """One epoch of joint training."""

    step: int
    seconds: float
    updates_total: int  # updates of type (A)
    updates_local: int  # updates of type (B)
    gold_in_nbest: float  # share of training documents whose gold labelling was a candidate
    word_error: float | None = (
        None  # tokens the total model's best candidate got wrong during the pass / tokens
    )
    dev_precision: float | None = None
    dev_recall: float | None = None
    dev_f1: float | None = None
    best: bool = False
    unit: str = "epoch"

    @property
    def mistakes(self) -> int:
        return self.updates_total + self.updates_local


def _sparse_diff(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]):
    """a − b for sparse vectors given as (sorted ids, values); zeros dropped."""
    idx = np.concatenate([a[0], b[0]])
    val = np.concatenate([a[1], -b[1]])
    if not len(idx):
        return idx, val
    u, inv = np.unique(idx, return_inverse=True)
    s = np.zeros(len(u))
    np.add.at(s, inv, val)
    keep = s != 0
    return u[keep], s[keep]


def _padded(w: np.ndarray, n: int) -> np.ndarray:
    """``w`` with zeros up to length ``n`` (``w`` itself when it is that long)."""
    return w if len(w) >= n else np.concatenate([w, np.zeros(n - len(w), dtype=w.dtype)])


def _dot(w: np.ndarray, v: tuple[np.ndarray, np.ndarray]) -> float:
    return float(w[v[0]] @ v[1]) if len(v[0]) else 0.0


class JointTagger:
    """Algorithms 4.1/4.2 and the re-ranking baselines (see the module docstring).

    ``fit`` returns self; learned state ends in ``_``. When ``should_cancel()`` turns true, training
    stops within a document and keeps the best (or last completed) epoch's weights, with
    ``cancelled_`` set. ``C`` is K&T's margin (C = C^a = C^l
    unless ``C_local`` is given); ``n`` the size of the training n-best, ``n_test`` the n' used to
    evaluate on dev and at test time.
    """

    def __init__(
        self,
        algorithm: str = "proposed",
        n: int = 20,
        n_test: int = 100,
        C: float = 100.0,
        C_local: float | None = None,
        epochs: int = 10,
        average: bool = True,
        bpm: int = 0,
        shuffle: bool = True,
        seed: int = 0,
        keep_best: bool = True,
        templates: Sequence[str] = TEMPLATES,
        local: dict | None = None,
        tol: float = 1e-4,
        patience: int = 3,
    ):
        if algorithm not in ALGORITHMS:
            raise SettingsError(
                Msg.UNKNOWN.format(what="algorithm", name=algorithm, choices=ALGORITHMS)
            )
        if n < 2 or n_test < 1:
            raise SettingsError("n must be at least 2 and n_test at least 1")
        self.algorithm, self.n, self.n_test, self.C, self.C_local = algorithm, n, n_test, C, C_local
        self.epochs, self.average, self.bpm, self.shuffle, self.seed = (
            epochs,
            average,
            bpm,
            shuffle,
            seed,
        )
        self.keep_best, self.templates = keep_best, tuple(templates)
        self.local = dict(local or {})
        self.tol, self.patience = float(tol), int(patience)

    def get_params(self) -> dict:
        return {
            k: getattr(self, k)
            for k in (
                "algorithm",
                "n",
                "n_test",
                "C",
                "C_local",
                "epochs",
                "average",
                "bpm",
                "shuffle",
                "seed",
                "keep_best",
                "templates",
                "local",
                "tol",
                "patience",
            )
        }

    @property
    def reranking(self) -> bool:
        return self.algorithm.startswith("reranking")

    # -- training ---------------------------------------------------------------------------------
    def fit(
        self,
        corpus,
        dev=None,
        callback: Callable[[JointStats], None] | None = None,
        should_cancel: Callable[[], bool] | None = None,
        first: PerceptronTagger | None = None,
        train_lists: tuple | None = None,
    ) -> JointTagger:
        """Train on ``corpus`` (documents are the sequences). The re-ranking baselines also need
        the ``first`` model (trained on all of ``corpus``; it makes the dev and test lists) and
        ``train_lists`` = (candidates, scores, gold scores), per training document, from a first
        model that did not see it (cross-validation; see :func:`first_model_lists`)."""
        t0 = time.perf_counter()
        self.wl_: np.ndarray | None = None
        self.wg_: np.ndarray | None = None
        self.cancelled_ = False
        self.nl_ = NonLocalFeatures(self.templates)
        self.tagger_ = self._vocabulary_model(corpus, first)
        self.tagset_ = list(self.tagger_.tagset_)
        seqs = self.tagger_.prepare(corpus)
        if seqs.gold is None:
            raise DataError("the training corpus has no gold labels")
        if self.reranking:
            if first is None or train_lists is None or len(train_lists[0]) != len(seqs.words):
                raise ValueError(
                    f"{self.algorithm} needs the first model and one candidate list per training document"
                )
            self.first_ = first
        train = Documents(
            seqs, self._local_part(seqs, train_lists), self.nl_, self.tagset_, grow=True
        )
        dev_docs = None
        if dev is not None:
            dseqs = self.tagger_.prepare(dev)
            dev_docs = Documents(
                dseqs,
                self._local_part(dseqs, self._test_lists(dseqs)),
                self.nl_,
                self.tagset_,
                grow=False,
            )
        rng = np.random.default_rng(self.seed)
        self.history_: list[JointStats] = []
        wl, wg = self._initial_weights(train, rng, should_cancel)
        best_f, best = -1.0, None
        stale = 0
        prev_err: float | None = None
        for epoch in range(1, self.epochs + 1 if not self.cancelled_ else 1):
            t = time.perf_counter()
            order = rng.permutation(len(train)) if self.shuffle else np.arange(len(train))
            a, b, hits, cancelled, wrong, tokens = self._epoch(train, order, wl, wg, should_cancel)
            if cancelled:
                self.cancelled_ = True
                break
            self._set_weights(wl, wg)
            st = JointStats(
                epoch,
                time.perf_counter() - t,
                a,
                b,
                hits / max(len(train), 1),
                wrong / max(tokens, 1),
            )
            if dev_docs is not None:
                p, r, f = self._evaluate(dev_docs)
                st.dev_precision, st.dev_recall, st.dev_f1 = p, r, f
                if f > best_f:
                    best_f, st.best = f, True
                    w_local, w_global = self._fitted()
                    best = (w_local.copy(), w_global.copy(), epoch)
            self.history_.append(st)
            if callback is not None:
                callback(st)
            if a + b == 0:
                break
            # K&T §6.1: stop when the relative change of the per-word labelling error (of the
            # total model's best candidate, during the pass) stays below tol for patience epochs
            err = st.word_error
            if prev_err is not None:
                change = (
                    abs(err - prev_err) / prev_err
                    if prev_err > 0
                    else (0.0 if err == 0 else np.inf)
                )
                stale = stale + 1 if change < self.tol else 0
                if stale >= self.patience:
                    break
            prev_err = err
        if self.wl_ is None:
            self._set_weights(wl, wg)
        self.best_epoch_ = len(self.history_)
        if self.keep_best and best is not None:
            self.wl_, wg_best, self.best_epoch_ = best
            # the non-local vocabulary grows while training (later epochs meet new candidates);
            # the features it gained after the kept epoch had no weight then, and have none now
            self.wg_ = _padded(wg_best, self.nl_.n_features)
        self.nl_.frozen = True
        self.seconds_ = time.perf_counter() - t0
        return self

    def _vocabulary_model(self, corpus, first):
        """The local feature map: the first model's for the re-ranking baselines, else a
        tagger whose vocabulary is built from ``corpus`` (its weights are not used)."""
        if first is not None and self.reranking:
            return first
        params = dict(self.local)
        params["epochs"] = 0  # the feature map only
        return PerceptronTagger(**params).fit(corpus)

    def _local_part(self, seqs, lists):
        if self.algorithm == "reranking1":
            return FirstScoreLocal(lists[0], lists[1], lists[2], seqs.gold)
        if self.algorithm == "reranking2":
            return FixedLocal(self.tagger_, seqs, lists[0])
        return KBestLocal(self.tagger_, seqs)

    def _test_lists(self, seqs, n=None):
        if not self.reranking:
            return None
        return first_model_lists(self.first_, seqs, n or self.n_test)

    def _initial_weights(self, train: Documents, rng, should_cancel):
        n_local = train.local.n
        wl, wg = AveragedWeights(n_local), AveragedWeights(max(self.nl_.n_features, 1024))
        if self.bpm > 0:
            sl, sg = np.zeros(n_local), np.zeros(0)
            for _ in range(self.bpm):  # K&T §4.3: the mean of the outputs of single shuffled passes
                pl, pg = AveragedWeights(n_local), AveragedWeights(max(self.nl_.n_features, 1024))
                if self._epoch(train, rng.permutation(len(train)), pl, pg, should_cancel)[3]:
                    self.cancelled_ = True
                    return AveragedWeights(n_local), AveragedWeights(max(self.nl_.n_features, 1024))
                sl += (pl.averaged() if self.average else pl.w)[:n_local]
                g = (pg.averaged() if self.average else pg.w)[: self.nl_.n_features]
                if len(g) > len(sg):
                    sg = np.concatenate([sg, np.zeros(len(g) - len(sg))])
                sg[: len(g)] += g
            init_l, init_g = sl / self.bpm, sg / self.bpm
            wl.add(np.nonzero(init_l)[0], init_l[init_l != 0])
            self._ensure(wg, len(init_g))
            wg.add(np.nonzero(init_g)[0], init_g[init_g != 0])
        return wl, wg

    def _ensure(self, wg: AveragedWeights, n: int) -> None:
        if n > len(wg.w):
            wg.grow(max(n, 2 * len(wg.w)))

    def _epoch(
        self, docs: Documents, order, wl: AveragedWeights, wg: AveragedWeights, should_cancel
    ):
        """One pass of Algorithm 4.1/4.2 over ``docs`` in ``order``; returns the counts of (A)
        and (B) updates, of documents with gold among the candidates, whether cancelled, and the
        tokens the total model's best candidate got wrong out of the tokens seen."""
        C = self.C
        C_local = self.C if self.C_local is None else self.C_local
        proposed = self.algorithm == "proposed"
        n_a = n_b = hits = wrong = tokens = 0
        last_check = -np.inf
        for i in order:
            i = int(i)
            if should_cancel is not None and time.perf_counter() - last_check > 0.2:
                last_check = time.perf_counter()
                if should_cancel():
                    return n_a, n_b, hits, True, wrong, tokens
            gold, phi_g_gold = docs.gold(i)
            self._ensure(wg, self.nl_.n_features)
            Y, ls = docs.local.candidates(i, self.n, wl.w)
            G = docs.nonlocal_vectors(i, Y)
            self._ensure(wg, self.nl_.n_features)
            total = ls + np.array([_dot(wg.w, g) for g in G])
            s_gold = docs.local.score(i, gold, wl.w) + _dot(wg.w, phi_g_gold)
            is_gold = np.all(gold[None, :] == Y, axis=1) if len(Y) else np.zeros(0, bool)
            hits += bool(is_gold.any())
            rank = np.argsort(-total, kind="stable")
            tokens += len(gold)
            wrong += int(np.count_nonzero(Y[rank[0]] != gold)) if len(rank) else len(gold)
            target = None
            if len(rank) and not is_gold[rank[0]] and s_gold - total[rank[0]] <= C:
                target = rank[0]
            elif len(rank) > 1 and not is_gold[rank[1]] and s_gold - total[rank[1]] <= C:
                target = rank[1]
            if target is not None:  # (A): the total model
                docs.local.update(wl, i, gold, Y[target])
                wg.add(*_sparse_diff(phi_g_gold, G[target]))
                n_a += 1
            elif proposed and len(Y):  # (B): the local model
                y = None
                if not is_gold[0]:
                    y = Y[0]
                elif len(Y) > 1 and docs.local.score(i, gold, wl.w) - ls[1] <= C_local:
                    y = Y[1]
                if y is not None:
                    docs.local.update(wl, i, gold, y)
                    n_b += 1
            wl.tick()
            wg.tick()
        return n_a, n_b, hits, False, wrong, tokens

    def _set_weights(self, wl: AveragedWeights, wg: AveragedWeights) -> None:
        k = self.nl_.n_features
        if self.average:
            self.wl_, self.wg_ = wl.averaged().copy(), wg.averaged()[:k].copy()
        else:
            self.wl_, self.wg_ = wl.w.copy(), wg.w[:k].copy()

    # -- prediction -------------------------------------------------------------------------------
    def _choose(
        self, docs: Documents, i: int, n: int | None = None
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """Candidates of document i, their total scores, and the index of the best."""
        wl, wg = self._fitted()
        Y, ls = docs.local.candidates(i, n or self.n_test, wl)
        total = ls + np.array([_dot(wg, g) for g in docs.nonlocal_vectors(i, Y)])
        return Y, total, int(np.argmax(total)) if len(total) else -1

    def _evaluate(self, docs: Documents) -> tuple[float, float, float]:
        gold, pred = [], []
        for i in range(len(docs)):
            Y, _, j = self._choose(docs, i)
            offs = docs.seqs.sentence_offsets[i]
            pred.extend(sentence_spans(Y[j], offs, self.tagset_))
            gold.extend(sentence_spans(np.asarray(docs.seqs.gold[i]), offs, self.tagset_))
        ev = evaluate_spans(gold, pred)
        return ev.overall.precision, ev.overall.recall, ev.overall.f1

    def documents(self, corpus, n: int | None = None) -> Documents:
        """The documents of a corpus under this model (candidates from its local part)."""
        seqs = self.tagger_.prepare(corpus)
        return Documents(
            seqs,
            self._local_part(seqs, self._test_lists(seqs, n)),
            self.nl_,
            self.tagset_,
            grow=False,
        )

    # -- the Tagger interface (nerstudio.tagging.protocol) ---------------------------------------
    def fit_corpus(self, corpus, dev=None, callback=None, should_cancel=None) -> JointTagger:
        """:meth:`fit` on ``corpus`` (its documents are the sequences)."""
        return self.fit(corpus, dev, callback=callback, should_cancel=should_cancel)

    def candidate_lists(
        self, corpus, n: int = 20, *, documents: bool = False, with_gold: bool = True
    ) -> NBestList:
        """The re-scored candidates of ``corpus``'s documents (:meth:`nbest`), or (without
        ``documents``) their per-sentence split (:meth:`sentence_nbest`)."""
        doc, sent, _ = self.sentence_nbest(corpus, n)
        nb = doc if documents else sent
        if not with_gold:
            nb.gold = None
        return nb

    def predict_spans(
        self, corpus, n_test: int | None = None, docs: Documents | None = None
    ) -> list[list[Span]]:
        """Per sentence of ``corpus``, the spans of the best re-scored candidate. ``docs``:
        :meth:`documents` of ``corpus`` made earlier (its features and non-local vectors are
        reused; for the re-ranking baselines they must have been made with the same n')."""
        docs = self.documents(corpus, n_test) if docs is None else docs
        out: list[list[Span]] = []
        for i in range(len(docs)):
            Y, _, j = self._choose(docs, i, n_test)
            out.extend(sentence_spans(Y[j], docs.seqs.sentence_offsets[i], self.tagset_))
        return out

    def nbest(self, corpus, n: int | None = None) -> NBestList:
        """Document-level candidates ordered by the total score (the score stands in for L(x))."""
        docs = self.documents(corpus, n)
        cands, scores, words, gold = [], [], [], []
        for i in range(len(docs)):
            Y, total, _ = self._choose(docs, i, n)
            order = np.argsort(-total, kind="stable")
            cands.append(self.tagger_.to_scn_[np.asarray(Y[order])])  # the lists are SCN
            scores.append(total[order].astype(np.float64))
            words.append(tuple(docs.seqs.words[i]))
            if docs.seqs.gold is not None:
                gold.append(self.spans_of(docs.seqs.gold[i]))
        meta = {
            "model": f"joint-{self.algorithm}",
            "unit": "document",
            "scores": "total score (local + non-local features · weights)",
            "sentence_offsets": [np.asarray(o).tolist() for o in docs.seqs.sentence_offsets],
        }
        return NBestList(
            list(self.tagger_.list_tagset_),
            words,
            cands,
            scores,
            gold if docs.seqs.gold is not None else None,
            list(docs.seqs.names),
            meta,
        )

    def spans_of(self, tags) -> list[Span]:
        return tags_to_spans(np.asarray(tags), self.tagset_)

    def sentence_nbest(
        self, corpus, n: int | None = None
    ) -> tuple[NBestList, NBestList, list[list[int]]]:
        """The document lists of :meth:`nbest`, their per-sentence split (in the corpus'
        sentence order) and, per sentence candidate, its document candidate (see
        :func:`split_document_lists`) — what the application shows and explains."""
        doc = self.nbest(corpus, n)
        sent, origin = split_document_lists(doc, doc.meta["sentence_offsets"])
        return doc, sent, origin

    def nonlocal_terms(
        self, words: Sequence[str], spans: Sequence[Span]
    ) -> list[tuple[str, float, float]]:
        """The non-local features of one document labelling: (name, count, weight), largest
        contribution first — what the feature panel shows."""
        _, wg = self._fitted()
        out = []
        for s, c in self.nl_.strings(words, spans).items():
            j = self.nl_.vocabulary.get(s)
            w = float(wg[j]) if j is not None else 0.0
            out.append((s, float(c), w))
        out.sort(key=lambda t: -abs(t[1] * t[2]))
        return out

    def _fitted(self) -> tuple[np.ndarray, np.ndarray]:
        """The local and non-local weights (trained or loaded)."""
        if self.wl_ is None or self.wg_ is None:
            raise RuntimeError("the joint tagger has no weights: fit or load it first")
        return self.wl_, self.wg_

    def save(self, path) -> None:
        """``.npz`` + JSON: the local feature map (and the first model's weights for the
        re-ranking baselines), the local and non-local weights, the non-local vocabulary."""
        th, ta = self.tagger_.state()
        wl, wg = self._fitted()
        nl_ids = np.flatnonzero(wl)
        header = {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "params": self.get_params(),
            "local_model": th,
            "nonlocal": self.nl_.state(),
            "best_epoch": self.best_epoch_,
            "seconds": getattr(self, "seconds_", None),
            "history": [asdict(h) for h in self.history_],
        }
        arrays = {f"local.{k}": v for k, v in ta.items()}
        arrays.update(
            {
                "wl_index": nl_ids.astype(np.int64),
                "wl_value": wl[nl_ids].astype(np.float64),
                "n_local": np.array([len(wl)], dtype=np.int64),
                "wg": wg.astype(np.float64),
            }
        )
        save_npz(path, jsonable(header), arrays)

    @classmethod
    def load(cls, path) -> JointTagger:
        path = os.fspath(path)
        h, arrays = load_npz(path, MODEL_FORMAT, MODEL_VERSION, "a joint (K&T) tagger model")
        try:  # the checks raise Corrupt; anything else is a bug and propagates
            p = dict(check_params(cls, h.get("params")))
            if "templates" in p:
                p["templates"] = tuple(p["templates"])
            m = construct(cls, p)
            m.tagger_ = PerceptronTagger.from_state(
                header_field(h, "local_model", dict), arrays.prefixed("local.")
            )
            m.tagset_ = list(m.tagger_.tagset_)
            if m.reranking:
                m.first_ = m.tagger_
            n_local = scalar(arrays, "n_local", int)
            if n_local != (1 if m.algorithm == "reranking1" else m.tagger_.n_weights_):
                raise Corrupt(f"{n_local} local weights do not fit the {m.algorithm} model")
            m.wl_ = sparse_weights(arrays, "wl_index", "wl_value", n_local)
            nl = header_field(h, "nonlocal", dict)
            header_field(nl, "templates", list[str], "nonlocal.templates")
            distinct(header_field(nl, "names", list[str], "nonlocal.names"), "nonlocal.names")
            try:
                m.nl_ = NonLocalFeatures.from_state(nl)
            except SettingsError as exc:
                raise Corrupt(f"header field 'nonlocal': {exc}") from None
            wg = arrays["wg"]
            if (
                wg.ndim != 1
                or wg.dtype != np.float64
                or len(wg) > m.nl_.n_features
                or not np.all(np.isfinite(wg))
            ):
                raise Corrupt("non-local weights do not match the non-local features")
            # fewer weights than features: a model kept from an earlier epoch and saved by a
            # version that did not pad its weights (the features found later weigh nothing)
            m.wg_ = _padded(wg, m.nl_.n_features)
            m.best_epoch_ = header_field(h, "best_epoch", int | None, default=None)
            m.seconds_ = header_field(h, "seconds", float | None, default=None)
            m.history_ = records(h, "history", JointStats)
            return m
        except Corrupt as exc:
            raise FormatError(path, None, f"corrupt joint tagger model: {exc}") from None


def split_document_lists(
    doc_nb: NBestList, offsets: Sequence[Sequence[int]], ids: Sequence[str] | None = None
) -> tuple[NBestList, list[list[int]]]:
    """Per-sentence candidate lists from document-level ones (best first in each document).

    A sentence's candidates are the distinct restrictions of its document's candidates to the
    sentence, in the order of the best document candidate showing each; its score is that
    document candidate's. ``offsets[i]`` are document i's sentence offsets (starts + end).
    Returns the list and, per sentence, the index of the document candidate behind each of its
    candidates (what the non-local features of a sentence candidate are computed on).
    """
    words, cands, scores, gold, origin = [], [], [], [], []
    for i in range(len(doc_nb)):
        Y = np.asarray(doc_nb.candidates[i])
        lp = np.asarray(doc_nb.logprobs[i], dtype=np.float64)
        doc_gold = doc_nb.gold[i] if doc_nb.gold is not None else None
        off = [int(x) for x in offsets[i]]
        for a, b in itertools.pairwise(off):
            seen: dict[bytes, int] = {}
            for j in range(Y.shape[0]):
                seen.setdefault(Y[j, a:b].tobytes(), j)
            keep = sorted(seen.values())
            cands.append(Y[keep, a:b].astype(np.int16).reshape(len(keep), b - a))
            scores.append(lp[keep])
            origin.append(keep)
            words.append(tuple(doc_nb.words[i][a:b]))
            if doc_gold is not None:
                gold.append(
                    [
                        Span(s.start - a, s.end - a, s.label)
                        for s in doc_gold
                        if a <= s.start and s.end <= b
                    ]
                )
    nb = NBestList(
        list(doc_nb.tagset),
        words,
        cands,
        scores,
        gold if doc_nb.gold is not None else None,
        list(ids) if ids is not None else [],
        dict(doc_nb.meta, unit="sentence", split_from="document"),
    )
    return nb, origin
