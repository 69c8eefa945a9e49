"""``nerstudio experiment --suite kazama`` (Kazama & Torisawa 2007, with a report) as a run of the
run service: its stages, planned and entered in order, reported to a
:class:`~nerstudio.app.progress.Progress` and stopped between and within them when it asks.

Why this exists: the suite's settings, the paper's figures and the report's layout are the
experiment's (:mod:`nerstudio.experiments.kazama` says what the output directory holds); running
it, stage by stage, is a run like the Collins pipeline (:mod:`.experiment`), reported the same
way to any front end. The stages (:func:`kazama_stages`): the corpora read; every training side
by side (:mod:`nerstudio.experiments.kazama_fits`: the local taggers, the joint systems and, on
local processes, the re-rankers' cross-validated lists and the re-rankers themselves as
follow-ups of the margin perceptron); every system scored on dev and test (:mod:`.kazama_scores`);
with a remote executor the re-rankers' lists jackknifed on its machines and the re-rankers
trained after them; the outputs and the report written. Where a stage is one the other runs have
too, it has their name (:mod:`.stages`).
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, replace

from ..app.progress import Progress, Reporter
from ..corpus.formats import read_corpus
from ..errors import SettingsError
from ..experiments.collins import write_report
from ..experiments.kazama import PAPER, SYSTEMS, KazamaConfig, report_markdown
from ..experiments.kazama_fits import (
    KEPT_FILE,
    Fit,
    Reranking,
    Trainings,
    cross_validated_lists,
    train_all,
)
from ..persist import jsonable
from ..runtime.folds import is_remote, split
from ..tagging.perceptron import PerceptronTagger
from .kazama_scores import Scores
from .stages import STAGE_JACKKNIFE, STAGE_OUTPUTS, STAGE_READ, STAGE_RERANKER

STAGE_TRAINING = "training every system"
STAGE_SCORING = "scoring dev and test"

RERANKING = ("reranking1", "reranking2")  # the re-ranking baselines


def kazama_stages(cfg: KazamaConfig, remote: bool = False) -> list[str]:
    """The stages of the suite with ``cfg``; ``remote``: its folds go to a remote executor (the
    re-rankers then have stages of their own, after the others are scored)."""
    after = (
        [STAGE_JACKKNIFE, STAGE_RERANKER] if remote and set(RERANKING) & set(cfg.systems) else []
    )
    return [STAGE_READ, STAGE_TRAINING, STAGE_SCORING, *after, STAGE_OUTPUTS]


def run_kazama(
    train_path,
    dev_path,
    test_path,
    out_dir,
    config: KazamaConfig | None = None,
    ctx: Progress | None = None,
    executor=None,
) -> dict:
    """Run the suite (see the module docstring); returns report.json's dict. ``ctx`` gets the
    stages and progress and is asked whether to stop (default: a silent one that never stops).
    The trainings of the systems and of their C values run side by side in up to
    ``config.workers`` local processes (default: the cores); a system's ``seconds`` add up its
    trainings. ``executor`` runs the cross-validated folds (default: local processes,
    ``config.workers``)."""
    cfg = config or KazamaConfig()
    ctx = ctx if ctx is not None else Reporter()
    bad = sorted(set(cfg.systems) - set(SYSTEMS))
    if bad:
        raise SettingsError(f"unknown system {', '.join(bad)} (choose from {', '.join(SYSTEMS)})")
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    t_all = time.perf_counter()
    ctx.plan(kazama_stages(cfg, is_remote(executor)))
    suite = _Suite(cfg, out_dir, ctx, executor)
    scores = suite.read(train_path, dev_path, test_path)
    trainings = suite.train()
    suite.score(trainings)
    if suite.rerank and not suite.follow:
        suite.rerank_after_folds(trainings)
    ctx.check()
    t = time.perf_counter()
    ctx.stage(STAGE_OUTPUTS, "predictions, curves, report")
    systems = scores.outputs(out_dir)
    suite.seconds["outputs"] = time.perf_counter() - t
    report = {
        "suite": "kazama",
        "task": cfg.task,
        "config": jsonable(asdict(cfg)),
        "data": suite.data_summary(train_path, dev_path, test_path),
        "baseline": "margin" if "margin" in scores.results else None,
        "systems": systems,
        "n_prime": scores.n_prime,
        "paper": jsonable(PAPER),
        "stages": suite.seconds,
        "seconds_total": time.perf_counter() - t_all,
    }
    write_report(out_dir, report, report_markdown(report))
    return report


class _Suite:
    """One run of :func:`run_kazama`, stage by stage: read, train every system at once, score
    the local and joint systems (and the re-rankers trained with them), the re-rankers after
    their folds on a remote executor. Each stage's seconds are kept for the report; the
    figures belong to its :class:`~.kazama_scores.Scores`."""

    def __init__(self, cfg: KazamaConfig, out_dir: str, ctx: Progress, executor):
        self.cfg = cfg
        self.out_dir = out_dir
        self.ctx = ctx
        self.executor = executor
        self.seconds: dict[str, float] = {}
        self.wanted = set(cfg.systems)
        self.rerank = [a for a in RERANKING if a in self.wanted]
        if self.rerank:
            self.wanted.add("margin")  # the first model
        self.joint_params = {
            "n": cfg.n,
            "n_test": cfg.n_test,
            "epochs": cfg.joint_epochs,
            "average": cfg.average_joint,
            "seed": cfg.seed,
        }
        # the lists follow the margin perceptron in the same run, unless their folds go elsewhere
        self.follow = bool(self.rerank) and not is_remote(executor)

    def read(self, train_path, dev_path, test_path) -> Scores:
        t = time.perf_counter()
        self.ctx.stage(STAGE_READ)
        self.train_set, self.dev, self.test = (
            read_corpus(p, encoding=self.cfg.encoding) for p in (train_path, dev_path, test_path)
        )
        self.seconds["read"] = time.perf_counter() - t
        self.ctx.progress(
            f"{len(self.train_set.documents)} / {len(self.dev.documents)} / "
            f"{len(self.test.documents)} documents",
            1,
            1,
        )
        self.labels = self.train_set.labels
        self.scores = Scores(self.cfg, self.train_set, self.dev, self.test, self.ctx)
        return self.scores

    def fold_params(self, margin: PerceptronTagger) -> dict:
        """The cross-validated first models: the margin perceptron as dev chose it (C, epoch)."""
        cfg = self.cfg
        return cfg.local(
            variant="margin",
            C=margin.C,
            bpm=cfg.bpm,
            epochs=margin.best_epoch_ or cfg.epochs,
            keep_best=False,
            labels=self.labels,
        )

    def rerank_fits(self, first: str) -> list[Fit]:
        # re-ranking 2 (the full local feature set) is the longer: it starts first
        return [
            Fit(algo, C, "joint", dict(self.joint_params, C=C), first=first)
            for algo in sorted(self.rerank, reverse=True)
            for C in self.cfg.C_values(algo)
        ]

    def fits(self) -> list[Fit]:
        """Every training at once (.kazama_fits): the margin perceptron first, whose choice the
        re-rankers' cross-validated lists wait for, then the longest (joint)."""
        cfg, labels = self.cfg, self.labels
        local_fits = {
            v: [
                Fit(
                    v,
                    C,
                    "local",
                    cfg.local(variant=v, C=C, epochs=cfg.epochs, bpm=cfg.bpm, labels=labels),
                )
                for C in (cfg.C_values("margin") if v == "margin" else (cfg.C_margin,))
            ]
            for v in ("perceptron", "averaged", "margin")
            if v in self.wanted
        }
        fits = local_fits.pop("margin", [])
        fits += [
            Fit(
                algo,
                C,
                "joint",
                dict(self.joint_params, C=C, bpm=cfg.bpm, local=cfg.local(labels=labels)),
            )
            for algo in ("candidate", "proposed")
            if algo in self.wanted
            for C in cfg.C_values(algo)
        ]
        if "perceptron" in local_fits and "averaged" in local_fits and not cfg.bpm:
            # the averaged perceptron's run makes the plain one too (the same updates)
            (plain,) = local_fits.pop("perceptron")
            local_fits["averaged"] = [replace(f, twin=plain) for f in local_fits["averaged"]]
        return fits + [f for v in local_fits.values() for f in v]

    def said(self, system: str, message: str, done: int, total: int) -> None:
        """A training's or fold's report (:func:`~nerstudio.experiments.kazama_fits.train_all`)."""
        self.ctx.progress(f"{system}: {message}", done, total)

    def train(self) -> Trainings:
        cfg, ctx = self.cfg, self.ctx
        fits = self.fits()
        ctx.check()
        t = time.perf_counter()
        what = ", ".join(dict.fromkeys(f.system for f in fits))
        twins = list(dict.fromkeys(f.twin.system for f in fits if f.twin is not None))
        if twins:  # the plain perceptron: the averaged perceptron's run trains it too
            what += f"; {', '.join(twins)} trained alongside the averaged perceptron, in its run"
        if self.follow:
            what += f"; {cfg.folds}-fold candidate lists once the margin perceptron is chosen"
        ctx.stage(STAGE_TRAINING, what)
        trainings = train_all(
            fits,
            self.train_set,
            self.dev,
            reranking=Reranking(
                split(self.train_set, cfg.folds, unit="document")[1],
                self.fold_params,
                cfg.n,
                self.rerank_fits,
            )
            if self.follow
            else None,
            workers=cfg.workers,
            out_dir=self.out_dir,
            say=self.said,
            should_cancel=ctx.should_cancel,
        )
        self.seconds["training"] = time.perf_counter() - t
        return trainings

    def score(self, trainings: Trainings) -> None:
        """The local taggers, then the joint systems (the proposed one at every n' too), then the
        re-rankers trained with them."""
        ctx, chosen, scores = self.ctx, trainings.chosen, self.scores
        ctx.check()
        t = time.perf_counter()
        local = [v for v in ("perceptron", "averaged", "margin") if v in chosen]
        joint = [a for a in ("candidate", "proposed") if a in chosen]
        rerank = self.rerank if self.follow else []
        scores.count(len(local) + len(joint) + len(rerank))
        ctx.stage(STAGE_SCORING, ", ".join(local + joint + rerank), 0, scores.total)
        for variant in local:
            ctx.check()
            scores.local(variant, chosen[variant])
        for algo in joint:
            ctx.check()
            scores.joint(algo, chosen[algo])
        self.seconds["evaluation"] = time.perf_counter() - t
        if rerank:
            t = time.perf_counter()
            for reranker in rerank:  # their folds' seconds added up
                ctx.check()
                scores.reranker(reranker, chosen[reranker], trainings.fold_seconds)
            self.seconds["reranking"] = time.perf_counter() - t

    def rerank_after_folds(self, trainings: Trainings) -> None:
        """The re-rankers' folds on the executor's machines, then the re-rankers trained here
        and scored."""
        cfg, ctx = self.cfg, self.ctx
        margin = trainings.chosen["margin"].model
        assert isinstance(margin, PerceptronTagger)
        ctx.check()
        t = time.perf_counter()
        ctx.stage(STAGE_JACKKNIFE, f"{cfg.folds}-fold candidate lists from the margin perceptron")
        lists = cross_validated_lists(
            self.train_set,
            self.fold_params(margin),
            cfg.n,
            cfg.folds,
            cfg.workers,
            ctx.should_cancel,
            ctx.progress,
            executor=self.executor,
        )
        self.seconds["cross_validation"] = cv = time.perf_counter() - t  # the wall time
        ctx.check()
        t = time.perf_counter()
        ctx.stage(STAGE_RERANKER, ", ".join(self.rerank))
        first = os.path.join(self.out_dir, KEPT_FILE["local"].format("margin"))
        rerankers = train_all(
            self.rerank_fits(first),
            self.train_set,
            self.dev,
            lists=lists,
            workers=cfg.workers,
            out_dir=self.out_dir,
            say=self.said,
            should_cancel=ctx.should_cancel,
        ).chosen
        self.scores.count(len(self.rerank))
        for algo in self.rerank:
            ctx.check()
            self.scores.reranker(algo, rerankers[algo], cv)
        self.seconds["reranking"] = time.perf_counter() - t

    def data_summary(self, train_path, dev_path, test_path) -> dict:
        train, dev, test = self.train_set, self.dev, self.test
        return {
            "train": os.path.abspath(train_path),
            "dev": os.path.abspath(dev_path),
            "test": os.path.abspath(test_path),
            "train_documents": len(train.documents),
            "dev_documents": len(dev.documents),
            "test_documents": len(test.documents),
            "train_sentences": len(train.sentences),
            "dev_sentences": len(dev.sentences),
            "test_sentences": len(test.sentences),
        }
