"""The max-ent tagger's probabilities beyond its beam: a given tagging's, and each token's tags'.

The beam (:meth:`~nerstudio.tagging.maxent.MaxEntTagger.nbest`) finds the most probable
taggings, but some questions are about a tagging it may not have kept: how probable is the
annotation a corpus *says* a sentence has (:func:`sequence_log_probs`, forced decoding), and
how much of the model's belief lies on each tag of each token (:func:`token_marginals`). The
tagger is locally normalised (a maximum-entropy Markov model: p(t_i | x, t_{i-1}, t_{i-2})), so
a tagging's log-probability is the sum of the local log-probabilities along its tags — the
score the beam gives the same tagging — and the marginals come from a forward–backward pass over
pairs of tags. Both read the tagger's weights only; tests compare them with brute force.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..corpus.model import Sentence, Span
from ..errors import SettingsError
from ..nbest import spans_to_tag_ids


def tag_ids(tagger: Any, spans: Sequence[Span], n: int) -> np.ndarray:
    """The tags of a sentence of ``n`` tokens with ``spans``, as ids of the tagger's own tag
    set (BILOU for a BILOU tagger); a :class:`~nerstudio.errors.DataError` for a type the tagger
    does not know."""
    idx = {t: k for k, t in enumerate(tagger.tagset_)}
    return spans_to_tag_ids(spans, n, idx, tagger.typed, tagger.alphabet)


def _local_logits(tagger: Any, static: np.ndarray, a2: np.ndarray, a1: np.ndarray) -> np.ndarray:
    """The unnormalised local scores of every tag, per token, given its two previous tags."""
    T = len(tagger.tagset_)
    return static + tagger.Wp1_[a1] + tagger.Wp2_[a2 * (T + 1) + a1]


def sequence_log_probs(
    tagger: Any, sentences: Sequence[Sentence], spans: Sequence[Sequence[Span]] | None = None
) -> np.ndarray:
    """log p(tags | words) of each sentence tagged with its ``spans`` (default: its gold), one
    float per sentence: the sum of the local log-probabilities along the tags, which is the
    score :meth:`~nerstudio.tagging.maxent.MaxEntTagger.nbest` gives the same tagging, whether
    or not its beam kept it. An empty sentence has log-probability 0."""
    sentences = list(sentences)
    spans = [s.spans for s in sentences] if spans is None else list(spans)
    out = np.zeros(len(sentences))
    keep = [k for k, s in enumerate(sentences) if len(s.words)]
    if not keep:
        return out
    T = len(tagger.tagset_)
    y = np.concatenate([tag_ids(tagger, spans[k], len(sentences[k].words)) for k in keep])
    y = y.astype(np.int64)
    lens = np.array([len(sentences[k].words) for k in keep], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    pos = np.arange(len(y)) - np.repeat(starts, lens)
    a1 = np.full(len(y), T, dtype=np.int64)
    a2 = np.full(len(y), T, dtype=np.int64)
    a1[pos >= 1] = y[np.nonzero(pos >= 1)[0] - 1]
    a2[pos >= 2] = y[np.nonzero(pos >= 2)[0] - 2]
    logits = _local_logits(tagger, tagger.static_scores([sentences[k] for k in keep]), a2, a1)
    m = logits.max(axis=1)
    lse = m + np.log(np.exp(logits - m[:, None]).sum(axis=1))
    token_lp = logits[np.arange(len(y)), y] - lse
    out[keep] = np.add.reduceat(token_lp, starts)
    return out


def alternatives_log_probs(
    tagger: Any,
    sentence: Sentence,
    taggings: Sequence[Sequence[Span]],
    static: np.ndarray | None = None,
) -> np.ndarray:
    """log p(tags | words) of one sentence under each of ``taggings`` (entity lists), as
    :func:`sequence_log_probs` gives them, reading the sentence's features once (``static``:
    its :meth:`~nerstudio.tagging.maxent.MaxEntTagger.static_scores`, when already known)."""
    n = len(sentence.words)
    if n == 0 or not taggings:
        return np.zeros(len(taggings))
    T = len(tagger.tagset_)
    y = np.stack([tag_ids(tagger, spans, n) for spans in taggings]).astype(np.int64)  # (m, n)
    a1 = np.full_like(y, T)
    a2 = np.full_like(y, T)
    a1[:, 1:] = y[:, :-1]
    a2[:, 2:] = y[:, :-2]
    scores = tagger.static_scores([sentence]) if static is None else static  # (n, T)
    wp1, wp2 = _history_weights(tagger)
    logits = scores[None, :, :] + wp1[a1] + wp2[a2 * (T + 1) + a1]  # (m, n, T)
    m = logits.max(axis=2, keepdims=True)
    lse = m[..., 0] + np.log(np.exp(logits - m).sum(axis=2))
    chosen = np.take_along_axis(logits, y[..., None], axis=2)[..., 0]
    return (chosen - lse).sum(axis=1)


def token_marginals(
    tagger: Any, sentences: Sequence[Sentence], static: np.ndarray | None = None
) -> list[np.ndarray]:
    """Per sentence, an ``(n_tokens, T)`` array: the probability the model gives each tag of its
    own tag set at each token, over the taggings the beam may propose (the tag set's transition
    rules and, for BILOU, its final tags), each weighted by its probability and the whole
    renormalised. Rows sum to 1; an empty sentence gives a ``(0, T)`` array. ``static``: the
    static scores of the non-empty sentences' tokens, when already known."""
    sentences = list(sentences)
    T = len(tagger.tagset_)
    keep = [k for k, s in enumerate(sentences) if len(s.words)]
    out = [np.zeros((0, T)) for _ in sentences]
    if not keep:
        return out
    scores = tagger.static_scores([sentences[k] for k in keep]) if static is None else static
    allowed = tagger.allowed_.astype(np.float64)  # (T + 1, T): row T is the start
    final = (
        np.ones(T) if tagger.final_pen_ is None else np.isfinite(tagger.final_pen_).astype(float)
    )
    # the history part of the local scores, the same at every token: (a2, a1, t)
    wp1, wp2 = _history_weights(tagger)
    hist = wp1[None, :, :] + wp2.reshape(T + 1, T + 1, T)
    pos = 0
    for k in keep:
        n = len(sentences[k].words)
        out[k] = _forward_backward(scores[pos : pos + n], hist, allowed, final)
        pos += n
    return out


def _forward_backward(
    static: np.ndarray, hist: np.ndarray, allowed: np.ndarray, final: np.ndarray
) -> np.ndarray:
    """Tag marginals of one sentence: states are (previous tag, tag), the previous tag of the
    first token is the start (index T); alpha and beta are rescaled at every token."""
    n, T = static.shape
    S = T  # the start symbol
    logits = hist[None, :, :, :] + static[:, None, None, :]  # (n, a2, a1, t)
    logits -= logits.max(axis=3, keepdims=True)
    P = np.exp(logits)
    P /= P.sum(axis=3, keepdims=True)
    P *= allowed[None, None, :, :]  # t must be allowed after a1
    alpha = np.zeros((n, T + 1, T))  # alpha[i, a1, t]
    alpha[0, S] = P[0, S, S]
    alpha[0] /= alpha[0].sum()
    for i in range(1, n):
        # alpha[i, b, c] = sum_a alpha[i - 1, a, b] P[i, a, b, c]
        alpha[i, :T] = np.einsum("ab,abc->bc", alpha[i - 1], P[i, :, :T, :])
        alpha[i] /= alpha[i].sum()
    beta = np.zeros((n, T + 1, T))
    beta[n - 1] = final[None, :]
    for i in range(n - 2, -1, -1):
        # beta[i, b, c] = sum_d P[i + 1, b, c, d] beta[i + 1, c, d]
        beta[i] = np.einsum("bcd,cd->bc", P[i + 1, :, :T, :], beta[i + 1, :T])
        beta[i] /= max(beta[i].max(), 1e-300)
    joint = (alpha * beta).sum(axis=1)  # (n, T)
    joint /= joint.sum(axis=1, keepdims=True)
    return joint


def _history_weights(tagger) -> tuple[np.ndarray, np.ndarray]:
    """The fitted tagger's weights of the previous one and two tags."""
    if tagger.Wp1_ is None or tagger.Wp2_ is None:
        raise SettingsError("the tagger is not trained")
    return tagger.Wp1_, tagger.Wp2_
