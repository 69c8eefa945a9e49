"""One-line descriptions of trained models, for the window's status line and curve legend.

A reranker reads as its learner and settings in the run labels' words
(:func:`~nerstudio.runs.spec.short_label`), a K&T sequence tagger as its kind, a tagger that
predicts BILOU tags says so. No Qt: words only.
"""

from __future__ import annotations


def kt_kind(model) -> str:
    """ "joint proposed", "margin", … for a K&T sequence tagger."""
    from ..runtime.tagger_process import is_joint, model_kind

    return ("joint " if is_joint(model) else "") + model_kind(model)


def tags_note(tagger) -> str:
    """``", BILOU tags"`` for a tagger (max-ent, perceptron or joint: its local model's) that
    predicts BILOU tags, else ``""`` (Collins' SCN tags, the paper's)."""
    local = getattr(tagger, "tagger_", None) or tagger
    return ", BILOU tags" if getattr(local, "alphabet", "scn") == "bilou" else ""


def describe_model(model) -> str:
    """A reranker as its learner and settings, e.g. "boost rounds=300"."""
    learner = getattr(model, "learner", None)
    if learner is not None and hasattr(learner, "get_params"):
        from ..runs.spec import short_label

        try:
            label = short_label(getattr(model, "algo", learner.algo), learner.get_params())
        except Exception:
            label = None
        if label:
            nf = getattr(getattr(model, "features", None), "min_sentences", None)
            return label + (f" feats(min_sentences={nf})" if nf not in (None, 5) else "")
    for attr in ("describe", "label"):
        v = getattr(model, attr, None)
        if callable(v):
            try:
                return str(v())
            except Exception:
                pass
        elif isinstance(v, str):
            return v
    if learner is not None and hasattr(learner, "describe"):
        return learner.describe()
    return type(model).__name__
