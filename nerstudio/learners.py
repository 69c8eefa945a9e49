"""Every learner nerstudio offers, as data: one row per reranker and per sequence tagger (and
per family of the rerankers' global features).

A row names its class (``module:Class``, imported only by :meth:`Learner.cls`), its title, the
tip the training panel shows, the unit its training curve counts (round, epoch, iteration),
its constructor's defaults and, for a setting that takes one of a few names, those names and
the help of the option. Everything that lists learners derives from these tables: the
command line's choices and help, the training panel's choices, tips and run labels, the
experiment's systems and their names in its report, the sweep's learners.

The window reads this module at start-up, so it imports nothing but the standard library (the
learners pull in numba and scipy when a run starts). ``tests/test_learners.py`` checks every
row against its class: the class exists, its defaults are the constructor's, its unit the one
its curve reports. Adding a learner is its module plus one row here.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .errors import Msg, SettingsError

_NO_SETTINGS: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Choice:
    """A setting that takes one of a few names: the names (in the order offered) and what the
    command line's help says of it. Its default is the row's ``defaults`` entry."""

    values: tuple[str, ...]
    help: str


@dataclass(frozen=True)
class Learner:
    """One learner: what lists, labels and builds it (see the module docstring)."""

    name: str  # the command line's and the model file's name of it
    target: str  # "module:Class", imported when a run starts
    title: str  # what a progress message calls it
    tip: str  # the training panel's tooltip
    unit: str  # what its training curve counts: "round", "epoch" or "iteration"
    defaults: Mapping[str, Any]  # the settings offered, with the constructor's defaults
    system: str = ""  # its name in an experiment's report and files (default: ``name``)
    # constructor arguments that make the class this learner (a tagger's variant)
    fixed: Mapping[str, Any] = field(default_factory=lambda: _NO_SETTINGS)
    # the experiment's settings it takes: constructor argument -> ExperimentConfig field
    experiment: Mapping[str, str] = field(default_factory=lambda: _NO_SETTINGS)
    # and the constructor arguments the experiment always gives it
    experiment_fixed: Mapping[str, Any] = field(default_factory=lambda: _NO_SETTINGS)
    family: str = ""  # taggers: "collins" (the reranking pipeline's), "kazama" (the K&T suite's)
    # the settings among ``defaults`` that take one of a few names, with their help
    choices: Mapping[str, Choice] = field(default_factory=lambda: _NO_SETTINGS)
    # rerankers: one of the systems an experiment runs when ``--systems`` does not choose
    in_default_experiment: bool = False

    @property
    def system_name(self) -> str:
        return self.system or self.name

    def cls(self) -> type:
        """The learner's class (imports its module)."""
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)

    def experiment_params(self, config: Any) -> dict[str, Any]:
        """The constructor arguments an experiment with ``config`` (an ExperimentConfig) gives."""
        out = {k: getattr(config, f) for k, f in self.experiment.items()}
        return {**out, **self.experiment_fixed}


def _perceptron_row(
    name: str, title: str, tip: str, *, default_system: bool = False, **extra: Any
) -> Learner:
    defaults = {
        "epochs": 10,
        **extra,
        "beta": None,
        "shuffle": True,
        "seed": 0,
        "bpm": 0,
        **({"average": False} if name == "margin" else {}),
        "keep_best": True,
        "beta_grid": (0.01, 0.03, 0.1, 0.3, 1.0),
    }
    classes = {
        "perceptron": "Perceptron",
        "voted": "VotedPerceptron",
        "averaged": "AveragedPerceptron",
        "margin": "MarginPerceptron",
    }
    experiment = {"epochs": "epochs", "beta": "beta", "seed": "seed"}
    if name == "margin":
        experiment["C"] = "margin_C"
    return Learner(
        name,
        f"nerstudio.rerank.perceptron:{classes[name]}",
        title,
        tip,
        "epoch",
        MappingProxyType(defaults),
        experiment=MappingProxyType(experiment),
        in_default_experiment=default_system,
    )


#: the rerankers, in the order every list offers them
RERANKERS: Mapping[str, Learner] = MappingProxyType(
    {
        r.name: r
        for r in (
            Learner(
                "boost",
                "nerstudio.rerank.boosting:Boosting",
                "boosting",
                "Boosting on the ranking ExpLoss (Collins 2002, §4.1): one feature weight updated "
                "per round",
                "round",
                MappingProxyType(
                    {"rounds": 10000, "epsilon": 0.0025, "eval_every": 500, "keep_best": True}
                ),
                system="boosting",
                in_default_experiment=True,
                experiment=MappingProxyType(
                    {
                        "rounds": "boost_rounds",
                        "epsilon": "boost_epsilon",
                        "eval_every": "boost_eval_every",
                    }
                ),
            ),
            _perceptron_row(
                "perceptron",
                "perceptron",
                "Perceptron ranking: add the oracle's features, subtract the mistaken pick's",
            ),
            _perceptron_row(
                "voted",
                "voted perceptron",
                "Voted perceptron (Freund & Schapire): every intermediate weight vector votes",
                default_system=True,
            ),
            _perceptron_row(
                "averaged",
                "averaged perceptron",
                "Averaged perceptron: the average of all intermediate weight vectors",
                default_system=True,
            ),
            _perceptron_row(
                "margin", "margin perceptron", "Perceptron with a margin requirement", C=1.0
            ),
            Learner(
                "kernel",
                "nerstudio.rerank.kernel:KernelPerceptron",
                "kernel voted perceptron",
                "Kernel (dual) perceptron over candidate structures (Collins & Duffy 2002)",
                "epoch",
                MappingProxyType(
                    {
                        "lam": 0.5,
                        "word_features": False,
                        "epochs": 1,
                        "beta": None,
                        "seed": 0,
                        "shuffle": True,
                        "max_sentences": None,
                        "mode": "vote",
                        "normalise": True,
                        "learn_beta": True,
                        "threads": 1,
                        "global_features": False,
                    }
                ),
                experiment=MappingProxyType(
                    {
                        "max_sentences": "kernel_sentences",
                        "seed": "seed",
                        "word_features": "kernel_word_features",
                        "global_features": "kernel_global_features",
                    }
                ),
                # one thread: split between two threads on a machine shared with other jobs,
                # each call waited for the slower one and the kernel ran 4x slower
                experiment_fixed=MappingProxyType({"epochs": 1}),
                # only on request (--systems, or the collins2002 preset): on CoNLL-2003 typed it
                # took 418 s of a 1,144 s run and gave the smallest gain (docs/results.md)
                in_default_experiment=False,
            ),
        )
    }
)

#: the systems an experiment runs when ``--systems`` does not choose, in the rerankers' order
DEFAULT_SYSTEMS: tuple[str, ...] = tuple(
    name for name, row in RERANKERS.items() if row.in_default_experiment
)

# the local model's settings every K&T tagger offers (a joint tagger gives them to its local
# model): the perceptron tagger's constructor defaults
_KT_LOCAL = {"cutoff": 2, "edge_templates": "current", "features": "kt", "gazetteer": None}


def _kt_local_row(name: str, tip: str) -> Learner:
    return Learner(
        name,
        "nerstudio.tagging.perceptron:PerceptronTagger",
        f"{name} tagger",
        tip,
        "epoch",
        # n_test: how many candidates of each sentence the window shows
        MappingProxyType({"C": 300.0, "epochs": 100, "bpm": 0, "n_test": 20, **_KT_LOCAL}),
        fixed=MappingProxyType({"variant": name, "documents": True}),
        family="kazama",
    )


def _kt_joint_row(name: str, tip: str) -> Learner:
    return Learner(
        name,
        "nerstudio.tagging.joint:JointTagger",
        f"{name} tagger",
        tip,
        "epoch",
        MappingProxyType({"C": 100.0, "epochs": 10, "bpm": 0, "n": 20, "n_test": 100, **_KT_LOCAL}),
        fixed=MappingProxyType({"algorithm": name}),
        family="kazama",
    )


#: the taggers: the max-ent tagger of the reranking pipeline, then the K&T suite's sequence taggers
TAGGERS: Mapping[str, Learner] = MappingProxyType(
    {
        t.name: t
        for t in (
            Learner(
                "maxent",
                "nerstudio.tagging.maxent:MaxEntTagger",
                "max-ent tagger",
                "Maximum-entropy tagger (Collins 2002's baseline): beam-searched N-best lists",
                "iteration",
                MappingProxyType(
                    {
                        "task": "typed",
                        "features": "paper",
                        "cutoff": 5,
                        "l2": 1.0,
                        "optimizer": "adagrad",
                        "max_iter": 100,
                        "epochs": 5,
                        "alphabet": "scn",
                    }
                ),
                family="collins",
                choices=MappingProxyType(
                    {
                        "optimizer": Choice(
                            ("adagrad", "lbfgs", "gis"),
                            "how the max-ent tagger is trained: adagrad, online in a few epochs "
                            "(their number chosen on the development data or, without it, on a "
                            "tenth of the training sentences held out); lbfgs, batch L-BFGS "
                            "(its iterations); gis, the paper's Generalized Iterative Scaling",
                        )
                    }
                ),
            ),
            _kt_local_row(
                "perceptron", "Structured perceptron (Collins 2002), local features only"
            ),
            _kt_local_row("averaged", "Averaged structured perceptron, local features only"),
            _kt_local_row(
                "margin", "Margin perceptron (K&T Alg. 3.1, margin C), local features only"
            ),
            _kt_joint_row(
                "candidate",
                "K&T Alg. 4.1: local n-best re-scored with local + non-local features, "
                "total-model updates",
            ),
            _kt_joint_row(
                "proposed",
                "K&T Alg. 4.2: as 4.1, plus local updates when the total model has nothing to fix",
            ),
        )
    }
)


@dataclass(frozen=True)
class FeatureFamily:
    """A family of the rerankers' global features that a run switches on or off."""

    keyword: str  # its GlobalFeatures argument
    label: str  # the training panel's name of it
    tip: str  # and its tooltip
    experiment: str  # the ExperimentConfig field that sets it
    window: bool = True  # offered by the training panel


#: the global-feature families that draw on resources or on the rest of the list: on in the
#: typed experiment, off in the paper's features (docs/results.md has what each buys)
FEATURE_FAMILIES: Mapping[str, FeatureFamily] = MappingProxyType(
    {
        f.keyword: f
        for f in (
            FeatureFamily(
                "gazetteers",
                "Gazetteers",
                "GZ, GZF, GZL: which bundled gazetteer lists hold the entity, its first or its "
                "last word",
                "reranker_gazetteers",
            ),
            FeatureFamily(
                "context",
                "Context",
                "DC, CC: the label the tagger's best candidates give the same words elsewhere in "
                "the document and in the rest of the list",
                "reranker_context",
            ),
            FeatureFamily(
                "clusters",
                "Clusters",
                "BC, BCL: the Brown word clusters of the entity's words and of its last word",
                "reranker_clusters",
            ),
            FeatureFamily(
                "biglex",
                "Large lexicon",
                "The g primitive's lowercase lexicon from a large corpus instead of the training "
                "list",
                "reranker_biglex",
                window=False,
            ),
            FeatureFamily(
                "posterior",
                "Posterior",
                "EP, ES: how much of the sentence's N-best list holds each entity",
                "reranker_posterior",
                window=False,
            ),
        )
    }
)


def reranker(name: str) -> Learner:
    """The reranker ``name``'s row; an unknown name raises a :class:`SettingsError` listing them."""
    try:
        return RERANKERS[name]
    except KeyError:
        raise SettingsError(
            Msg.UNKNOWN.format(what="reranking algorithm", name=name, choices=tuple(RERANKERS))
        ) from None


def tagger(name: str) -> Learner:
    """The tagger ``name``'s row (see :data:`TAGGERS`)."""
    try:
        return TAGGERS[name]
    except KeyError:
        raise SettingsError(
            Msg.UNKNOWN.format(what="tagger", name=name, choices=tuple(TAGGERS))
        ) from None


def sequence_taggers() -> tuple[str, ...]:
    """The K&T suite's taggers (what its training panel offers)."""
    return tuple(n for n, t in TAGGERS.items() if t.family == "kazama")
