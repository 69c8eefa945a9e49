"""The checks a saved kernel perceptron's arrays pass before :meth:`KernelPerceptron.set_state`
uses them.

Why a module of its own: reading a model file is where untrusted input meets the learner; each
check names the array it refuses (:class:`~nerstudio.persist.Corrupt`, which the loader reports
as a damaged file naming it), and keeping them together lets the learner's module hold the
algorithm.
"""

from __future__ import annotations

import numpy as np

from ..persist import json_value
from .kernel_scoring import _StoredFeatures


def flag(arrays: dict[str, np.ndarray], name: str) -> bool:
    """A boolean of a saved kernel perceptron; false in files written before it existed."""
    from ..persist import scalar

    return scalar(arrays, name, bool) if name in arrays else False


def mistake_ids(arrays: dict[str, np.ndarray]) -> list[str]:
    """The ids of the sentences a saved kernel perceptron made its mistakes on."""
    from ..persist import Corrupt

    ids = json_value(arrays["mistake_ids"])
    if not isinstance(ids, list) or not all(isinstance(x, (str, int)) for x in ids):
        raise Corrupt("array 'mistake_ids' must hold a list of sentence ids")
    return [str(x) for x in ids]


def stored_features(arrays: dict[str, np.ndarray], n_seqs: int, n_features: int) -> _StoredFeatures:
    """The saved global-feature vectors of the ``n_seqs`` stored sequences, checked."""
    from ..persist import Corrupt, vector

    ptr = vector(arrays, "seq_feat_ptr", dtype=np.int64)
    fidx = vector(arrays, "seq_feat_idx", dtype=np.int64)
    fval = vector(arrays, "seq_feat_val")
    if (
        len(ptr) != n_seqs + 1
        or ptr[0] != 0
        or np.any(np.diff(ptr) < 0)
        or ptr[-1] != len(fidx)
        or len(fval) != len(fidx)
        or (len(fidx) and (fidx.min() < 0 or fidx.max() >= n_features))
        or not np.all(np.isfinite(fval))
    ):
        raise Corrupt("inconsistent global-feature vectors")
    feats = _StoredFeatures(n_features)
    for k in range(len(ptr) - 1):
        feats.indices.append(fidx[ptr[k] : ptr[k + 1]].astype(np.int32))
        feats.values.append(fval[ptr[k] : ptr[k + 1]])
    return feats


def check_sequences(counts, lengths, ids, tags, words, n_vocab: int, seq_L) -> None:
    """The saved mistakes (two sequences each: oracle and prediction) agree with each other."""
    from ..persist import Corrupt

    M = len(counts) - 1
    if (
        M < 0
        or len(lengths) != 2 * M
        or len(ids) != M
        or int(lengths.sum()) != len(tags)
        or len(words) != len(tags)
        or (len(words) and (words.min() < 0 or words.max() >= n_vocab))
        or (len(tags) and tags.min() < 0)
        or (len(lengths) and lengths.min() < 0)
    ):
        raise Corrupt("inconsistent kernel perceptron state")
    if len(seq_L) != len(lengths) or not np.all(np.isfinite(seq_L)):
        raise Corrupt("inconsistent kernel perceptron state")
