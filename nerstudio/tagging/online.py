"""The max-ent tagger's online optimiser, and how it chooses its number of epochs.

L-BFGS (:mod:`.maxent_training`) needs a few hundred passes over the training data to reach the
optimum of the L2-penalised log-likelihood; an online optimiser, updating the weights after each
token, gets a tagger as good in a few passes. This one is AdaGrad with one step size per
predicate row (:mod:`._online_compiled`: the kernels, and how the penalty is applied lazily, only
to the rows a token reads, yet with the same weights as if applied to every row at every step).
Tokens are visited in a new seeded random order each epoch; one thread does the work, so the
weights are the same whatever the machine's threads.

How many epochs (at most ``epochs``; :func:`fit_online`):

* with development sentences, F of the tagger's 1-best on them after every epoch, and the
  weights of the best epoch are kept (the latest of equals);
* without, one training sentence in ten (a seeded random choice) is held out: the tagger trains
  on the rest, F on the held-out sentences after every epoch picks the number of epochs, and the
  tagger then trains that many epochs on all the sentences;
* with fewer than 200 training sentences and no development sentences, all ``epochs`` epochs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import Cancelled
from .lazy import LazyModule

_oc = LazyModule(f"{__package__}._online_compiled")  # numba kernels, imported on first use

G0 = 0.01  # every row's squared-gradient sum starts here: the first step is at most η/√G0
CHUNK = 20_000  # tokens per kernel call; cancellation is looked at between two
HOLD_OUT = 10  # without development data, one training sentence in HOLD_OUT is held out
MIN_HELD_OUT = 20  # ... when that makes at least this many sentences
SELECTION_BEAM = 3  # the beam of the 1-best decoding that scores an epoch


@dataclass
class Epochs:
    """What :func:`run_epochs` did: the weights kept, the epoch they are from, every epoch's
    selection F (empty without a selection set) and its objective estimate."""

    W: np.ndarray
    best: int
    scores: list[float] = field(default_factory=list)
    objectives: list[float] = field(default_factory=list)


def run_epochs(
    design,
    y: np.ndarray,
    mask: np.ndarray,
    tokens: np.ndarray,
    *,
    l2: float,
    eta: float,
    epochs: int,
    seed: int,
    dtype=np.float32,
    W0: np.ndarray | None = None,
    select: Callable[[np.ndarray], float] | None = None,
    report: Callable[[int, float, float | None], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> Epochs:
    """``epochs`` passes of AdaGrad over the design rows ``tokens`` (a token may be left out:
    the held-out ones), minimising Σ log-loss + l2/2·‖W‖² over them; W starts at ``W0`` (or 0).

    After each epoch ``select(W)`` (if given) scores the weights; the best epoch's weights are
    returned (the latest of equals: with no entity to find, all the epochs), else the last. ``report(epoch, objective, score)`` after
    each epoch, the objective being the epoch's log-loss summed as it went (each token at the
    weights it met) plus the penalty at the end of the epoch.
    """
    P, T = mask.shape
    W = np.zeros((P, T), dtype=dtype)
    if W0 is not None:
        W[...] = np.where(mask, W0, 0.0)
    Q = np.zeros((P, 2))  # per row: squared-gradient sum, step its shrinking is applied through
    Q[:, 0] = G0
    row_n = mask.sum(axis=1).astype(np.int64)
    tokens = np.asarray(tokens, dtype=np.int64)
    n = len(tokens)
    c = eta * l2 / max(n, 1)
    rng = np.random.default_rng(seed)
    clock = 0
    out = Epochs(W, epochs)
    best_score = -np.inf
    for epoch in range(1, epochs + 1):
        order = tokens[rng.permutation(n)]
        loss = 0.0
        for lo in range(0, n, CHUNK):
            if should_cancel and should_cancel():
                raise Cancelled("tagger training cancelled")
            part, clock = _oc.adagrad_epoch(
                design.indptr,
                design.indices,
                design.bptr,
                design.bind,
                design.n_params,
                y,
                order[lo : lo + CHUNK],
                W,
                Q,
                mask,
                row_n,
                eta,
                c,
                clock,
            )
            loss += part
        _oc.catch_up(W, Q, c, clock)
        objective = loss + 0.5 * l2 * float(np.square(W, dtype=np.float64).sum())
        out.objectives.append(objective)
        score = None
        if select is not None:
            score = float(select(W))
            out.scores.append(score)
            if score >= best_score:  # the later of equals: nearer the optimum
                best_score, out.best, out.W = score, epoch, W.copy()
        if report:
            report(epoch, objective, score)
    if select is None:
        out.W = W
    return out


class Selection:
    """F (in percent) of the tagger's 1-best analyses of ``sentences`` under given weights, the
    sentences' static predicates extracted once (the tagger's extractor must be fitted)."""

    def __init__(self, tagger, sentences: Sequence):
        from ..corpus.model import Span

        self.tagger = tagger
        self.sentences = [s for s in sentences if len(s.words)]
        self.X = tagger.extractor_.transform(self.sentences)
        self.gold = [
            list(s.spans) if tagger.typed else [Span(a, b, "") for a, b, _ in s.spans]
            for s in self.sentences
        ]

    def __call__(self, W: np.ndarray) -> float:
        from ..evaluation import evaluate_spans

        t = self.tagger
        t._set_weights(W)
        static = np.asarray(self.X @ t.W_[: t.n_static_])
        nb = t.nbest(self.sentences, n=1, beam=SELECTION_BEAM, with_gold=False, static=static)
        return evaluate_spans(self.gold, nb.top()).f1


def held_out(n_sentences: int, seed: int) -> np.ndarray | None:
    """The training sentences held out to choose the number of epochs (sorted indices), or
    None when that would be fewer than :data:`MIN_HELD_OUT`."""
    k = n_sentences // HOLD_OUT
    if k < MIN_HELD_OUT:
        return None
    return np.sort(np.random.default_rng(seed).permutation(n_sentences)[:k])


def fit_online(tagger, design, y, mask, sentences, dev, callback, should_cancel, t0, W0=None):
    """The tagger's weights (``optimizer="adagrad"``), the number of epochs chosen as the module
    docstring says; sets ``n_iter_`` (the epochs of the weights returned), ``n_evals_`` (all
    the epochs run) and ``stop_reason_`` (how the number was chosen)."""
    from .maxent import TrainStats

    lens = np.array([len(s.words) for s in sentences], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)])
    every = np.arange(len(y), dtype=np.int64)

    def say(message: str) -> None:
        if callback:
            callback(TrainStats(0, float("nan"), time.perf_counter() - t0, message=message))

    def report(epoch: int, objective: float, score: float | None) -> None:
        if callback:
            callback(TrainStats(epoch, objective, time.perf_counter() - t0, score))

    def run(tokens, epochs, select=None) -> Epochs:
        return run_epochs(
            design,
            y,
            mask,
            tokens,
            l2=tagger.l2,
            eta=tagger.eta,
            epochs=epochs,
            seed=tagger.seed,
            dtype=tagger.dtype,
            W0=W0,
            select=select,
            report=report,
            should_cancel=should_cancel,
        )

    dev = [s for s in dev if len(s.words)] if dev is not None else []
    held = None if dev else held_out(len(sentences), tagger.seed)
    if dev:
        res = run(every, tagger.epochs, Selection(tagger, dev))
        total, reason, scores = tagger.epochs, "best on dev", res.scores
    elif held is not None:
        say(f"choosing the number of epochs on {len(held)} held-out training sentences")
        keep = np.ones(len(sentences), dtype=bool)
        keep[held] = False
        kept = np.concatenate([every[starts[i] : starts[i + 1]] for i in np.nonzero(keep)[0]])
        choice = run(kept, tagger.epochs, Selection(tagger, [sentences[i] for i in held]))
        say(f"{choice.best} epochs on all the training sentences")
        res = run(every, choice.best)
        total, reason, scores = tagger.epochs + choice.best, "best on held-out", choice.scores
    else:
        res = run(every, tagger.epochs)
        total, reason, scores = tagger.epochs, "epochs", []
    tagger.n_iter_, tagger.n_evals_, tagger.stop_reason_ = res.best, total, reason
    tagger.epoch_scores_ = scores
    return res.W
