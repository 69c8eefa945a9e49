"""The Collins 2002 experiment's settings (:class:`ExperimentConfig`, the presets) and its
report; :func:`nerstudio.runs.experiment.run_experiment` runs it.

Stages: read the corpora; jackknife the training corpus into N-best lists while a tagger trained
on all of it decodes the development and test corpora (one worker pool); global features; each
reranker trained on the training lists with the development set choosing its round or epoch;
every system evaluated on dev and test. The output directory receives

``report.json``
    ``systems``: one object per system (``baseline``, ``boosting``, ``voted``, …) with ``name``,
    ``dev`` and ``test`` (``precision``, ``recall``, ``f1`` in percent and
    ``rel_error_reduction`` of F against the baseline, in percent), ``settings`` and
    ``seconds``; ``seconds_total`` and ``stages`` (seconds per stage); the data sizes;
``report.md``
    the same as tables;
``pred-<system>-test.conll``
    the test corpus with each system's entities, in the test file's own format (for the
    boundary-only task the entities carry the placeholder type ``ENT`` and
    ``gold-test-untyped.conll`` holds the gold boundaries the same way);
``curves.png``
    development F against boosting rounds and against perceptron epochs;
``tagger.npz``, ``{train,dev,test}-nbest.npz``, ``reranker-<system>.npz``
    every intermediate result, so the GUI or the CLI can resume from any of them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..choices import PRESETS
from ..corpus.formats import atomic_open
from ..corpus.model import Span
from ..errors import Msg, SettingsError
from ..evaluation import relative_error_reduction
from ..learners import DEFAULT_SYSTEMS, TAGGERS, reranker
from ..persist import jsonable
from .breakdown import breakdown_lines

#: Collins (2002), Figure 5: precision, recall and F on the test set, and in parentheses the
#: relative error reductions against the max-ent tagger (his web data, 20-best lists).
COLLINS2002_FIGURE5: dict[str, dict[str, Any]] = {
    "baseline": {"precision": 84.4, "recall": 86.3, "f1": 85.3},
    "boosting": {
        "precision": 87.3,
        "recall": 87.9,
        "f1": 87.6,
        "rel": {"precision": 18.6, "recall": 11.6, "f1": 15.6},
    },
    "voted": {
        "precision": 87.3,
        "recall": 88.6,
        "f1": 87.9,
        "rel": {"precision": 18.6, "recall": 16.8, "f1": 17.7},
    },
}


@dataclass
class ExperimentConfig:
    task: str = "typed"  # typed | scn
    # the max-ent tagger: feature set (paper | conll, +gaz[:LISTS], +rich: nerstudio.tagging.features),
    # L2 penalty, (predicate, tag) cut-off, L-BFGS iterations. Chosen on CoNLL-2003 dev by
    # tools/tagger_grid.py and tools/ablation.py (README, "Closing the typed gap"): conll+rich,
    # cut-off 2 and 300 iterations raise its dev F from 88.95 to 89.98, the gazetteers on top of
    # that to 90.54, and every reranker's dev F rises with each step. The Brown clusters
    # (+clusters, nerstudio.resources.clusters) raise it to 91.43, and the best reranker's from
    # 91.62 to 92.43 (docs/results.md)
    tagger_features: str = "conll+rich+gaz+clusters"
    tagger_l2: float = 1.0
    tagger_cutoff: int = 2
    # how the tagger is trained (nerstudio.learners: the registry row's default): the online
    # optimiser, its epochs chosen on the dev set (the folds' on a held-out tenth of their
    # training sentences), or L-BFGS for tagger_max_iter iterations
    tagger_optimizer: str = TAGGERS["maxent"].defaults["optimizer"]
    tagger_max_iter: int = 300
    tagger_epochs: int = TAGGERS["maxent"].defaults["epochs"]
    # the tags the tagger predicts (scn: Collins'; bilou: nerstudio.tagging.tag_alphabets); its
    # lists are SCN either way. BILOU raises the best reranker's dev F from 92.43 to 92.54 and the
    # tagger's from 91.43 to 91.45 (docs/results.md, "Begin, inside, last, unit")
    tagger_alphabet: str = "bilou"
    folds: int = 5
    n: int = 20
    workers: int | None = None
    min_sentences: int = 5
    # on by default: on CoNLL-2003 both raise every reranker's dev F (README, "Gazetteers")
    # GZ/GZF/GZL global features from the bundled gazetteers: True for every list, or the names of
    # some lists (an ablation's choice; families allowed, see nerstudio.resources.select_lists)
    reranker_gazetteers: bool | tuple = True
    # DC/CC: two-stage document and corpus context (rerank/context.py); "document" or "corpus": one only
    reranker_context: bool | str = True
    # BC/BCL: the Brown clusters of an entity's words (True: prefixes of 4 and 10 bits, or a tuple of
    # prefix lengths), and the g primitive's lowercase lexicon from the large corpus instead of the
    # training list (nerstudio.resources.clusters). On by default: over the cluster tagger's lists
    # they raise the best reranker's dev F from 92.25 to 92.43 (docs/results.md)
    reranker_clusters: bool | tuple = True  # --no-global-clusters turns them off
    reranker_biglex: bool = False
    # EP/ES: how much of the sentence's N-best list holds each entity (rerank/context.py)
    reranker_posterior: bool = False
    # the rerankers' registry rows choose (nerstudio.learners.DEFAULT_SYSTEMS): the kernel
    # perceptron, the slowest, runs only when asked for
    systems: tuple = DEFAULT_SYSTEMS
    boost_rounds: int = 100000
    boost_epsilon: float = 0.0025
    boost_eval_every: int = 1000
    epochs: int = 10
    beta: float | None = None
    margin_C: float = 10.0
    # training sentences of the kernel perceptron: over the cluster tagger's lists 3,000 leave it
    # below the baseline on dev (91.38 against 91.43), 6,000 above it (91.53; bench/kernel.py)
    kernel_sentences: int = 6000
    # word features (lowercase, shape, capital, digit) in the kernel's fragments: on CoNLL-2003
    # typed they raise its dev F (89.09 against 89.04); the preset keeps Collins & Duffy's kernel
    kernel_word_features: bool = True
    # the cosine of the candidates' global-feature vectors added to the tagging kernel: on
    # CoNLL-2003 typed it raises the kernel's dev F from 90.55 to 90.72 (the tagging kernel alone ties
    # the baseline, 90.54); the preset keeps Collins & Duffy's kernel
    kernel_global_features: bool = True
    seed: int = 0
    encoding: str | None = None
    preset: str | None = None  # the name of the preset these settings came from (for the report)
    # an earlier run's output directory whose tagger and N-best lists this run takes instead of
    # making them again (same tagger settings and corpora, checked: experiments/reuse.py)
    lists_from: str | None = None

    @classmethod
    def from_preset(cls, name: str | None, **overrides) -> ExperimentConfig:
        """The preset's settings (see :data:`PRESETS`), then ``overrides`` (``None`` values are
        ignored, so unset command-line options keep the preset's value)."""
        base: dict = {}
        if name is not None:
            if name not in PRESETS:
                raise SettingsError(Msg.UNKNOWN.format(what="preset", name=name, choices=PRESETS))
            base = dict(PRESETS[name], preset=name)
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**base)

    def tagger_params(self) -> dict:
        """The max-ent tagger's settings (:class:`~nerstudio.tagging.maxent.MaxEntTagger`'s
        keywords)."""
        return {
            "task": self.task,
            "features": self.tagger_features,
            "l2": self.tagger_l2,
            "cutoff": self.tagger_cutoff,
            "optimizer": self.tagger_optimizer,
            "max_iter": self.tagger_max_iter,
            "epochs": self.tagger_epochs,
            "alphabet": self.tagger_alphabet,
        }

    def learner_params(self, algo: str) -> dict:
        """The constructor arguments the reranker ``algo`` gets from these settings (which
        settings each learner takes is its registry row's, :mod:`nerstudio.learners`)."""
        return reranker(algo).experiment_params(self)


def with_placeholder_type(spans):
    """Boundary-only spans with the placeholder type ``ENT``, so column files stay valid."""
    return [Span(s[0], s[1], "ENT") for s in spans]


#: the systems that start first when they train side by side: the kernel perceptron takes
#: several times as long as the three others together, so it gets a core from the start
#: (started after boosting, it ran alone for its last minutes with the other core idle)
LONGEST_FIRST = ("kernel",)


def write_report(out_dir: str, report: dict, markdown: str) -> None:
    """report.json and report.md, each written atomically."""
    with atomic_open(os.path.join(out_dir, "report.json"), mode="w", encoding="utf-8") as f:
        json.dump(jsonable(report), f, indent=2)
        f.write("\n")
    with atomic_open(os.path.join(out_dir, "report.md"), mode="w", encoding="utf-8") as f:
        f.write(markdown)


def system_entry(
    name, dev, test, base_dev, base_test, settings, seconds, test_seconds=None
) -> dict:
    """One system's entry of report.json: ``seconds`` to train it (the baseline: the tagger and its
    lists), ``test_seconds`` (when measured) to score the test list with it."""

    def block(prf, base):
        p, r, f = prf
        return {
            "precision": p,
            "recall": r,
            "f1": f,
            "rel_error_reduction": relative_error_reduction(base[2], f),
        }

    out = {
        "name": name,
        "dev": block(dev, base_dev),
        "test": block(test, base_test),
        "settings": jsonable(settings),
        "seconds": seconds,
    }
    if test_seconds is not None:
        out["test_seconds"] = test_seconds
    return out


def report_markdown(report: dict) -> str:
    d = report["data"]
    preset = report["config"].get("preset")
    lines = [
        f"# nerstudio experiment ({report['task']} task"
        + (f", preset {preset}" if preset else "")
        + ")",
        "",
        f"Train {d['train']} ({d['train_sentences']} sentences, {d['candidates_train']} candidates), "
        f"dev {d['dev']} ({d['dev_sentences']}), test {d['test']} ({d['test_sentences']}). "
        f"{d['features']} global features. Oracle F: dev {d['oracle_f1']['dev']:.2f}, "
        f"test {d['oracle_f1']['test']:.2f}.",
        "",
        "| system | dev P | dev R | dev F | test P | test R | test F | test rel. error reduction | "
        "training s | test scoring s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in report["systems"]:
        dv, ts = s["dev"], s["test"]
        test_s = f"{s['test_seconds']:.1f}" if s.get("test_seconds") is not None else ""
        lines.append(
            f"| {s['name']} | {dv['precision']:.2f} | {dv['recall']:.2f} | {dv['f1']:.2f} | "
            f"{ts['precision']:.2f} | {ts['recall']:.2f} | {ts['f1']:.2f} | "
            f"{ts['rel_error_reduction']:.1f}% | {s['seconds']:.1f} | {test_s} |"
        )
    br = breakdown_lines(report["systems"])
    if br:
        lines += [""] + br
    if report["config"].get("preset") == "collins2002":
        lines += [""] + figure5_lines(report)
    lines += [
        "",
        "Settings (the development set chose each reranker's round or epoch, so dev figures are "
        "optimistic; test figures are not):",
        "",
    ]
    return "\n".join(lines + settings_and_stages(report))


def figure5_lines(report: dict) -> list[str]:
    """Our test P/R/F, each with its relative error reduction against our baseline, beside
    Collins (2002) Figure 5 (his web data and his tagger, so the shape compares, not the level)."""

    def rel(base, new):
        return relative_error_reduction(base, new)

    ours = {s["name"]: s["test"] for s in report["systems"]}
    base = ours.get("baseline")
    lines = [
        "Beside Collins (2002), Figure 5 (test set; relative error reduction against the baseline tagger in "
        "parentheses, for P, R and F alike):",
        "",
        "| system | P | R | F | paper P | paper R | paper F |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, label in (
        ("baseline", "max-ent tagger"),
        ("boosting", "boosting"),
        ("voted", "voted perceptron"),
        ("averaged", "averaged perceptron"),
        ("kernel", "kernel voted perceptron"),
    ):
        if name not in ours or base is None:
            continue
        t, ref = ours[name], COLLINS2002_FIGURE5.get(name)
        cells = []
        for k in ("precision", "recall", "f1"):
            cells.append(
                f"{t[k]:.2f}" if name == "baseline" else f"{t[k]:.2f} ({rel(base[k], t[k]):.1f}%)"
            )
        for k in ("precision", "recall", "f1"):
            if ref is None:
                cells.append("")
            else:
                cells.append(f"{ref[k]:.1f}" + (f" ({ref['rel'][k]:.1f}%)" if "rel" in ref else ""))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def settings_and_stages(report: dict) -> list[str]:
    """The end of a report in markdown: each system's settings, then the seconds per stage."""
    lines = [
        f"- **{s['name']}**: " + ", ".join(f"{k}={v}" for k, v in s["settings"].items())
        for s in report["systems"]
    ]
    return lines + [
        "",
        "Seconds per stage: "
        + ", ".join(f"{k} {v:.1f}" for k, v in report["stages"].items())
        + f"; total {report['seconds_total']:.1f}.",
        "",
    ]


def plot_curves(curves: dict, path: str, base_f: float | None, base_name: str = "baseline") -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    rounds = {k: v for k, v in curves.items() if v and v[0].unit == "round"}
    epochs = {k: v for k, v in curves.items() if v and v[0].unit != "round"}
    panels = [(t, c) for t, c in (("boosting rounds", rounds), ("perceptron epochs", epochs)) if c]
    fig = Figure(figsize=(5.2 * max(len(panels), 1), 3.8), dpi=110)
    FigureCanvasAgg(fig)
    for k, (xlabel, group) in enumerate(panels or [("", {})]):
        ax = fig.add_subplot(1, max(len(panels), 1), k + 1)
        for name, hist in group.items():
            xs = [h.step for h in hist if h.dev_f1 is not None]
            ys = [h.dev_f1 for h in hist if h.dev_f1 is not None]
            (line,) = ax.plot(xs, ys, marker="o" if len(xs) < 40 else None, ms=3, label=name)
            if ys:
                b = int(np.argmax(ys))
                ax.plot([xs[b]], [ys[b]], "*", ms=12, color=line.get_color())
        if base_f is not None:
            ax.axhline(base_f, color="grey", ls="--", lw=1, label=f"{base_name} {base_f:.2f}")
        ax.set_xlabel(xlabel)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("dev F (%)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_open(path, mode="wb") as f:
        fig.savefig(f, format="png")
