"""What a training run does, as plain data: the learners on offer with their defaults and tips,
the settings of one run (:class:`RunSettings`, the training panel's frozen snapshot) and the
short labels that name a run in the curve legend. No widgets here (the window's panel is
:mod:`nerstudio.gui.views.training_panel`); :mod:`.training` runs it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from ..choices import ALPHABET_ROWS
from ..learners import FEATURE_FAMILIES, RERANKERS, TAGGERS

#: the taggers' tag alphabets as the panel offers them (name, label, tip)
ALPHABET_CHOICES = tuple((c.name, c.label, c.tip) for c in ALPHABET_ROWS)

#: the max-ent tagger's feature sets the panel offers (name, tip): Collins' set, the richer CoNLL
#: set, and the typed experiment's default with the bundled resources (a test checks each is a
#: set the core reads; ``nerstudio train-tagger --features`` takes every other combination)
TAGGER_FEATURE_CHOICES = (
    ("paper", "Collins 2002's templates (the demo model's)"),
    (
        "conll",
        "The paper's templates and what CoNLL-2003 offers: a ±2 window, affixes, POS and chunks",
    ),
    (
        "conll+rich+gaz+clusters",
        "The typed experiment's default: the CoNLL set, more shapes and affixes, the bundled "
        "gazetteers and Brown word clusters (CoNLL-2003 dev F 91.4, against 90.5 without the "
        "clusters)",
    ),
)

#: the rerankers' resource families the panel offers (GlobalFeatures keyword, label, tip),
#: from the registry
RERANK_RESOURCES = tuple((f.keyword, f.label, f.tip) for f in FEATURE_FAMILIES.values() if f.window)

#: the perceptron taggers' local feature sets and gazetteers (K&T 2007; the suite's default is
#: kt+rich+clusters with the gazetteer lists; a test checks them against the core's names)
KT_FEATURE_CHOICES = (
    ("kt", "K&T Table 1 as printed"),
    ("kt+rich", "Table 1 with more shape and affix templates"),
    ("kt+rich+clusters", "kt+rich with Brown word clusters (the K&T suite's default)"),
)
KT_GAZETTEER_CHOICES = (  # (value, label, tip)
    (None, "none", "No gazetteer features"),
    ("train", "train", "Entity names of the training text, each document left out of its own"),
    ("lists", "lists", "The bundled gazetteer lists (the K&T suite's default)"),
    ("train+lists", "train+lists", "Both"),
)


def algorithms() -> tuple[str, ...]:
    """The reranking learners, from the registry (:mod:`nerstudio.learners`: data only, the
    learners and scipy load when a run starts)."""
    return tuple(RERANKERS)


def algorithm_tip(algo: str) -> str:
    """The panel's tooltip for the reranker ``algo``."""
    row = RERANKERS.get(algo)
    return row.tip if row is not None else algo


def learner_defaults(algo: str) -> dict:
    """Hyper-parameters of the reranker ``algo`` with their defaults ({} if there is none:
    a run label of another kind of learner)."""
    row = RERANKERS.get(algo)
    return dict(row.defaults) if row is not None else {}


def short_label(algo: str, params: dict) -> str:
    """``algo(k=v, …)`` naming only the settings that differ from the learner's defaults
    (the number of rounds / epochs always)."""
    defaults = learner_defaults(algo)
    keep = {"rounds", "epochs"}
    parts = []
    for k, v in params.items():
        if k in keep or k not in defaults or defaults[k] != v:
            if isinstance(v, (list, tuple)):
                continue
            parts.append(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}")
    return f"{algo}(" + ", ".join(parts) + ")"


# what tools/demo/build_model.py used; folds and N are not recorded in the model files
DEMO_FALLBACK: dict[str, Any] = {
    "task": "typed",
    "alphabet": "scn",
    "tagger_features": "paper",
    "tagger_iter": 100,
    "tagger_cutoff": 5,
    "tagger_optimizer": "lbfgs",
    "folds": 5,
    "n": 20,
    "algo": "boost",
    "params": {"rounds": 3000, "eval_every": 100},
    "min_sentences": 2,
    "resources": (),  # the rerankers' resource families (RERANK_RESOURCES) switched on
}


@functools.lru_cache(maxsize=1)
def demo_settings() -> dict:
    """The settings the bundled demo model was built with — the training panel's defaults —
    read from the headers of its tagger and reranker files (the build script's values where a
    file is missing or says nothing)."""
    from ..demo import DEMO_MODEL_DIR
    from ..errors import FormatError
    from ..persist import read_header

    out = {**DEMO_FALLBACK, "params": dict(DEMO_FALLBACK["params"])}

    def header(name: str) -> dict:
        try:
            return read_header(DEMO_MODEL_DIR / name)
        except FormatError:  # a missing or unreadable demo: the build script's values
            return {}

    t = header("tagger.npz")
    for key, hk in (
        ("task", "task"),
        ("alphabet", "alphabet"),  # absent from models made before there was a choice: SCN
        ("tagger_features", "features"),
        ("tagger_iter", "max_iter"),
        ("tagger_cutoff", "cutoff"),
        ("tagger_optimizer", "optimizer"),
    ):
        if t.get(hk) is not None:
            out[key] = t[hk]
    r = header("reranker.npz")
    if isinstance(r.get("algo"), str) and isinstance(r.get("params"), dict):
        out["algo"], out["params"] = r["algo"], dict(r["params"])
    fp = (r.get("features") or {}).get("params") or {}
    if fp.get("min_sentences") is not None:
        out["min_sentences"] = int(fp["min_sentences"])
    if fp:
        out["resources"] = tuple(name for name, _, _ in RERANK_RESOURCES if fp.get(name))
    return out


KT_NAMES = {
    "C": "C",
    "epochs": "epochs",
    "bpm": "BPM",
    "n": "n",
    "n_test": "n'",
    "cutoff": "cut-off",
    "edge_templates": "edges",
    "features": "features",
    "gazetteer": "gazetteer",
}
KT_LOCAL_DEFAULTS = {
    "cutoff": 2,
    "edge_templates": "current",
    "features": "kt",
    "gazetteer": None,
}  # shown in a run's label only when changed


def kt_defaults(kind: str) -> dict:
    """The panel's settings for the sequence tagger ``kind`` ({} if there is none)."""
    from ..errors import SettingsError
    from ..runtime.tagger_process import default_params

    try:
        return default_params(kind)
    except SettingsError:
        return {}


def kt_label(kind: str, params: dict, task: str = "typed") -> str:
    """``proposed(C=100, epochs=2, n=3, n'=5)``: a K&T run's settings (BPM only when used;
    n' only for the joint trainers, where it is a model setting)."""
    parts = []
    for k in KT_NAMES:
        if (
            k not in params
            or (k == "bpm" and not params[k])
            or params[k] == KT_LOCAL_DEFAULTS.get(k, object())
        ):
            continue
        if k == "n_test" and kind not in ("candidate", "proposed"):
            continue
        v = params[k]
        parts.append(f"{KT_NAMES[k]}={v:g}" if isinstance(v, float) else f"{KT_NAMES[k]}={v}")
    return f"{kind}(" + ", ".join(parts) + ")" + ("" if task == "typed" else f" · {task}")


@dataclass(frozen=True)
class RunSettings:
    """A snapshot of the panel: what one run does."""

    start: str = "reranker"  # "tagger": tagger + jackknife + reranker; "reranker": reranker only
    task: str = "typed"
    alphabet: str = "scn"  # the tagger's tags (full pipeline and sequence taggers): "scn", "bilou"
    tagger_features: str = "paper"
    tagger_iter: int = 100  # L-BFGS iterations
    tagger_cutoff: int = 5  # the tagger's feature cut-off (the typed experiment's: 2)
    # how the max-ent tagger is trained, and the online optimiser's epochs (the registry's)
    tagger_optimizer: str = TAGGERS["maxent"].defaults["optimizer"]
    tagger_epochs: int = TAGGERS["maxent"].defaults["epochs"]
    folds: int = 5
    n: int = 20
    algo: str = "perceptron"
    params: dict = field(default_factory=dict)
    feature_params: dict = field(default_factory=dict)
    dev_path: str = ""  # dev corpus (decoded by the tagger) or dev N-best list (.npz)
    kt_algo: str = "proposed"  # start == "kt": one of nerstudio.runtime.tagger_process.KINDS
    kt_params: dict = field(default_factory=dict)  # C, epochs, bpm, n, n_test

    def label(self) -> str:
        tags = "" if self.alphabet == "scn" else f" · {self.alphabet}"
        if self.start == "kt":
            return kt_label(self.kt_algo, self.kt_params, self.task) + tags
        base = short_label(self.algo, self.params)
        fs = ", ".join(
            k if v is True else f"{k}={v}"
            for k, v in self.feature_params.items()
            if (k, v) != ("min_sentences", 5) and v is not False
        )
        if fs:
            base += f" feats({fs})"
        if self.start == "tagger":
            cut = (
                ""
                if self.tagger_cutoff == RunSettings.tagger_cutoff  # the field's default
                else f", cut-off {self.tagger_cutoff}"
            )
            base += f" · tagger {self.task}/{self.tagger_features}{cut}, {self.folds} folds" + tags
        return base

    def tagger_params(self, labels) -> dict:
        """The max-ent tagger's settings (:class:`~nerstudio.tagging.maxent.MaxEntTagger`'s
        keywords) for a full-pipeline run over a corpus whose entity types are ``labels``."""
        return {
            "task": self.task,
            "alphabet": self.alphabet,
            "features": self.tagger_features,
            "max_iter": self.tagger_iter,
            "optimizer": self.tagger_optimizer,
            "epochs": self.tagger_epochs,
            "cutoff": self.tagger_cutoff,
            "labels": labels,
        }

    def kt_model_params(self) -> dict:
        """The sequence tagger's settings as :func:`~nerstudio.runtime.tagger_process.make_model`
        takes them: the panel's K&T settings and the tag alphabet."""
        return {**self.kt_params, "alphabet": self.alphabet}
