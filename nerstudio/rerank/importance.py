"""What has this reranker learned? Its features ranked by the decisions they move over a corpus.

The feature panel answers "why this sentence"; this module answers it for a whole N-best list.
A *decision* is a sentence where the reranker's pick is compared with one other candidate:

``against="baseline"`` (default)
    the sentences where the pick differs from the tagger's top candidate (candidate 1): the
    decisions to change the baseline's output;
``against="runner-up"``
    every sentence with at least two candidates, the pick against the candidate the model
    scores second: what keeps the pick on top.

In each decision the terms of F(pick) − F(other) are the L(x) term α0·(L(pick) − L(other)) and
every feature present in exactly one of the two, contributing ±its weight (the same terms as
:meth:`~nerstudio.rerank.model.RerankerModel.compare`). A feature *moves the decision* when its
contribution favours the pick, *resists* it when it favours the other; zero contributions
(zero-weight features, boosting leaves most at zero) count for nothing. A template moves a
decision when the sum of its features' contributions in that sentence favours the pick — the
group total of the feature panel. :func:`model_importance` aggregates by feature and by
template: counts, summed contributions and the sentences, ranked by how many decisions each moves
(ties by the contribution it brings). The voted perceptron picks by votes; its contributions are
those of its final weight vector, as in its explanations. Non-linear models (the kernel
perceptron) have no per-feature weights and are refused with a clear error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..arrays import sorted_unique
from ..choices import AGAINST, SORTS
from ..errors import Cancelled, DataError, Msg, SettingsError
from .data import RankingData, group_argmax
from .glossary import describe, describe_template

L_NAME, L_TEMPLATE = "L(x)", "L"


@dataclass
class Impact:
    """One feature (or template) over all decisions."""

    key: str  # feature string, or template code
    template: str
    n_for: int = 0  # decisions it moves toward the pick
    n_against: int = 0  # decisions it resists
    total_for: float = 0.0  # sum of its contributions in favour of the pick (≥ 0)
    total_against: float = 0.0  # sum of its contributions against (≤ 0)
    sentences_for: list[int] = field(default_factory=list)  # sentence indices, increasing
    sentences_against: list[int] = field(default_factory=list)

    @property
    def net(self) -> float:
        return self.total_for + self.total_against

    @property
    def sentences(self) -> list[int]:
        """Every sentence where it moves or resists the decision, increasing."""
        return sorted(set(self.sentences_for) | set(self.sentences_against))

    def description(self) -> str:
        return (
            describe(self.key, self.template)
            if self.key != self.template
            else f"{'L(x)' if self.key == L_TEMPLATE else self.key}: {describe_template(self.key)}"
        )

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "template": self.template,
            "description": self.description(),
            "n_for": self.n_for,
            "n_against": self.n_against,
            "total_for": self.total_for,
            "total_against": self.total_against,
            "net": self.net,
            "sentences_for": list(self.sentences_for),
            "sentences_against": list(self.sentences_against),
        }


@dataclass
class ModelImportance:
    against: str
    n_sentences: int
    pick: np.ndarray  # per sentence, the reranker's choice (index within the sentence; -1: none)
    other: np.ndarray  # per sentence, the candidate it is compared with (-1: no decision)
    features: list[Impact]
    templates: list[Impact]

    @property
    def decisions(self) -> list[int]:
        """The sentences compared, increasing."""
        return np.flatnonzero(self.other >= 0).tolist()

    def to_dict(self, top: int | None = None) -> dict:
        return {
            "against": self.against,
            "sentences": self.n_sentences,
            "decisions": len(self.decisions),
            "templates": [t.to_dict() for t in self.templates[:top]],
            "features": [f.to_dict() for f in self.features[:top]],
        }


def decisions(
    scores: np.ndarray, offsets: np.ndarray, pick: np.ndarray, against: str
) -> np.ndarray:
    """Per sentence, the candidate the pick is compared with (index within the sentence), or -1."""
    offsets = np.asarray(offsets, dtype=np.int64)
    sizes = np.diff(offsets)
    if against == "baseline":
        return np.where((pick > 0) & (sizes > 0), 0, -1).astype(np.int64)
    if against != "runner-up":
        raise SettingsError(Msg.UNKNOWN.format(what="comparison", name=against, choices=AGAINST))
    masked = np.asarray(scores, dtype=np.float64).copy()
    ok = sizes > 1
    masked[(offsets[:-1] + np.maximum(pick, 0))[ok]] = -np.inf
    second = group_argmax(masked, offsets)
    return np.where(ok, second, -1).astype(np.int64)


def model_importance(
    model,
    data: RankingData,
    against: str = "baseline",
    sort: str = "count",
    should_cancel: Callable[[], bool] | None = None,
) -> ModelImportance:
    """Rank ``model``'s features and templates by the decisions they move on ``data`` (the
    ranking data of an N-best list made with ``model.data``); see the module docstring.
    ``should_cancel`` is polled between the stages (it raises :class:`Cancelled`)."""

    def check():
        if should_cancel is not None and should_cancel():
            raise Cancelled("feature ranking cancelled")

    if sort not in SORTS:
        raise SettingsError(Msg.UNKNOWN.format(what="sort", name=sort, choices=SORTS))
    try:
        a0, w = model.learner.linear_weights()
    except NotImplementedError:
        raise DataError(f"the {model.algo} reranker has no per-feature weights to rank") from None
    w = np.asarray(w, dtype=np.float64)
    scores = model.scores(data)
    pick = data.argmax(scores)  # what model.predict does, without scoring twice
    check()
    other = decisions(scores, data.offsets, pick, against)
    sent = np.flatnonzero(other >= 0)
    rows_p = data.offsets[sent] + pick[sent]
    rows_o = data.offsets[sent] + other[sent]
    names = list(model.features.names_)
    templates = list(model.features.templates_)

    # contributions: one row per decision, one column per feature, ±w where the two differ
    D = (data.X[rows_p].astype(np.float64) - data.X[rows_o].astype(np.float64)).tocsr()
    C = (D @ sp.diags(w)).tocsr()
    C.eliminate_zeros()
    check()
    feats = _aggregate(C, sent, [(n, t) for n, t in zip(names, templates)])
    check()

    codes = sorted(set(templates))
    code_of = {c: k for k, c in enumerate(codes)}
    T = sp.csr_matrix(
        (np.ones(len(templates)), ([code_of[t] for t in templates], np.arange(len(templates)))),
        shape=(len(codes), len(templates)),
    )
    CT = (C @ T.T).tocsr()
    CT.eliminate_zeros()
    temps = _aggregate(CT, sent, [(c, c) for c in codes])

    dl = float(a0) * (data.L[rows_p] - data.L[rows_o])
    lx = _one(L_NAME, L_TEMPLATE, dl, sent)
    lt = _one(L_TEMPLATE, L_TEMPLATE, dl, sent)
    feats = [f for f in feats + [lx] if f.n_for or f.n_against]
    temps = [t for t in temps + [lt] if t.n_for or t.n_against]
    return ModelImportance(against, len(data), pick, other, _rank(feats, sort), _rank(temps, sort))


def _rank(items: list[Impact], sort: str) -> list[Impact]:
    if sort == "count":
        return sorted(items, key=lambda x: (-x.n_for, -x.total_for, x.n_against, x.key))
    return sorted(items, key=lambda x: (-x.total_for, -x.n_for, x.total_against, x.key))


def _aggregate(C: sp.csr_matrix, sent: np.ndarray, keys: list[tuple[str, str]]) -> list[Impact]:
    """Per column of the (decision × column) contribution matrix: counts, sums, sentences."""
    coo = C.tocoo()
    order = np.lexsort((coo.row, coo.col))  # by column, then decision (hence sentence) order
    cols, vals = coo.col[order].astype(np.int64), coo.data[order]
    sents = sent[coo.row[order]]
    used = sorted_unique(cols)
    pos, neg = vals > 0, vals < 0
    m = int(C.shape[1])
    n_for, n_against = np.bincount(cols[pos], minlength=m), np.bincount(cols[neg], minlength=m)
    t_for = np.bincount(cols[pos], weights=vals[pos], minlength=m)
    t_against = np.bincount(cols[neg], weights=vals[neg], minlength=m)
    s_for = np.split(sents[pos], np.cumsum(n_for[used])[:-1]) if len(used) else []
    s_against = np.split(sents[neg], np.cumsum(n_against[used])[:-1]) if len(used) else []
    return [
        Impact(
            keys[j][0],
            keys[j][1],
            int(n_for[j]),
            int(n_against[j]),
            float(t_for[j]),
            float(t_against[j]),
            sf.tolist(),
            sa.tolist(),
        )
        for j, sf, sa in zip(used.tolist(), s_for, s_against)
    ]


def _one(key: str, template: str, v: np.ndarray, sent: np.ndarray) -> Impact:
    pos, neg = v > 0, v < 0
    return Impact(
        key,
        template,
        int(pos.sum()),
        int(neg.sum()),
        float(v[pos].sum()),
        float(v[neg].sum()),
        sent[pos].tolist(),
        sent[neg].tolist(),
    )


def format_table(
    result: ModelImportance, top: int = 30, ids: list[str] | None = None, width: int = 60
) -> str:
    """The two rankings as plain-text tables (what ``nerstudio explain-model`` prints)."""
    from ..numfmt import num

    def where(x: Impact) -> str:
        ss = x.sentences_for[:5]
        shown = ", ".join(ids[s] if ids else str(s + 1) for s in ss)
        return shown + (f", … ({len(x.sentences_for)})" if len(x.sentences_for) > len(ss) else "")

    def clip(s: str) -> str:
        return s if len(s) <= width else s[: width - 1] + "…"

    what = (
        "sentences where the reranker changed the tagger's top candidate"
        if result.against == "baseline"
        else "sentences, the reranker's pick against its runner-up"
    )
    lines = [
        f"{len(result.decisions)} decisions ({what}) of {result.n_sentences} sentences.",
        "moves = decisions a feature pushes toward the pick; resists = decisions it pushes against; "
        "for / against = the summed contributions.",
        "",
    ]
    for title, items, key_w in (
        ("templates", result.templates, 7),
        ("features", result.features, 34),
    ):
        lines.append(f"{title} (top {min(top, len(items))} of {len(items)}):")
        lines.append(
            f"{'':>4} {'moves':>6} {'resists':>7} {'for':>9} {'against':>9}  {title[:-1]:<{key_w}} "
            f"{'meaning':<{width}}  sentences moved"
        )
        for k, x in enumerate(items[:top]):
            key = "L(x)" if x.key == L_TEMPLATE else x.key
            meaning = describe_template(x.template)
            lines.append(
                f"{k + 1:>4} {x.n_for:>6} {x.n_against:>7} {num(x.total_for, sign=True):>9} "
                f"{num(x.total_against, sign=True):>9}  {clip(key) if title == 'templates' else key:<{key_w}} "
                f"{clip(meaning):<{width}}  {where(x)}"
            )
        lines.append("")
    return "\n".join(lines)
