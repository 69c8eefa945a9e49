"""``nerstudio experiment`` (the Collins 2002 pipeline, with a report) as a run of the run
service: the stages a window's run goes through, by the same code where they are the same.

The tagger and its N-best lists come from :func:`~nerstudio.runs.stages.tagger_and_lists`, as
in the window's full-pipeline run (the development corpus chooses the tagger's epochs; the test
corpus is decoded by the same tagger); then the global features once, every reranker trained on
them side by side (the development set choosing its round or epoch), every system scored on dev
and test, and the report written (:mod:`nerstudio.experiments.collins` says what the output
directory holds). Progress, stages and cancellation go through a
:class:`~nerstudio.app.progress.Progress`: the command line gives a
:class:`~nerstudio.app.progress.Reporter`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict

import numpy as np

from ..app.progress import Progress, Reporter
from ..corpus.formats import read_corpus, write_corpus
from ..errors import DataError
from ..experiments.breakdown import breakdown, training_strings
from ..experiments.collins import (
    LONGEST_FIRST,
    ExperimentConfig,
    plot_curves,
    report_markdown,
    system_entry,
    with_placeholder_type,
    write_report,
)
from ..experiments.reuse import copy_lists, load_lists, made_by
from ..learners import FEATURE_FAMILIES, reranker
from ..persist import jsonable
from ..rerank.fitting import System, fit_rerankers, system_threads
from ..rerank.model import RerankerModel
from .stages import (
    STAGE_FEATURES,
    STAGE_JACKKNIFE,
    STAGE_OUTPUTS,
    STAGE_READ,
    STAGE_TAGGER,
    tagger_and_lists,
)

STAGE_SYSTEMS = "training the rerankers"


def experiment_stages(cfg: ExperimentConfig) -> list[str]:
    """The stages of an experiment with ``cfg``."""
    lists = [STAGE_TAGGER] if cfg.lists_from is not None else [STAGE_TAGGER, STAGE_JACKKNIFE]
    return [STAGE_READ, *lists, STAGE_FEATURES, STAGE_SYSTEMS, STAGE_OUTPUTS]


def run_experiment(
    train_path,
    dev_path,
    test_path,
    out_dir,
    config: ExperimentConfig | None = None,
    ctx: Progress | None = None,
    on_stats: Callable | None = None,
    executor=None,
) -> dict:
    """Run every stage and write the report; returns report.json's dict. ``ctx`` gets the
    stages and progress and is asked whether to stop (default: a silent one that never stops);
    ``executor`` runs the tagger's jobs (default: local processes, ``config.workers``)."""
    cfg = config or ExperimentConfig()
    ctx = ctx if ctx is not None else Reporter()
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    t_all = time.perf_counter()
    stages: dict[str, float] = {}
    ctx.plan(experiment_stages(cfg))

    # -- corpora ---------------------------------------------------------------------------------
    t = time.perf_counter()
    ctx.stage(STAGE_READ)
    train, dev, test = (
        read_corpus(p, encoding=cfg.encoding) for p in (train_path, dev_path, test_path)
    )
    stages["read"] = time.perf_counter() - t
    ctx.progress(
        f"{len(train.sentences)} / {len(dev.sentences)} / {len(test.sentences)} sentences", 1, 1
    )
    ctx.check()

    # -- tagger, jackknife, N-best -----------------------------------------------------------------
    t = time.perf_counter()
    params = cfg.tagger_params()
    origin = made_by(params, cfg.n, cfg.folds)
    if cfg.lists_from is not None:
        ctx.stage(STAGE_TAGGER, f"taking the tagger and N-best lists from {cfg.lists_from}")
        tagger, lists = load_lists(
            cfg.lists_from, origin, {"train": train, "dev": dev, "test": test}
        )
        nb_train, nb_dev, nb_test = lists["train"], lists["dev"], lists["test"]
    else:
        jk = tagger_and_lists(
            ctx,
            train,
            params,
            cfg.folds,
            cfg.n,
            decode={"dev": dev, "test": test},
            select_on="dev",
            workers=cfg.workers,
            executor=executor,
        )
        decoded = jk.decoded or {}
        assert jk.model is not None  # the stage trains it (full=True)
        tagger, nb_train, nb_dev, nb_test = jk.model, jk.nbest, decoded["dev"], decoded["test"]
        for nb in (nb_train, nb_dev, nb_test):
            nb.meta["made_by"] = origin
    stages["tagger_and_nbest"] = time.perf_counter() - t
    if cfg.lists_from is not None:
        # the files themselves, byte for byte (the tagger's header included)
        copy_lists(cfg.lists_from, out_dir)
    else:
        tagger.save(os.path.join(out_dir, "tagger.npz"))
        for name, nb in (("train", nb_train), ("dev", nb_dev), ("test", nb_test)):
            nb.save(os.path.join(out_dir, f"{name}-nbest.npz"))
    ctx.progress(f"N-best lists ready in {stages['tagger_and_nbest']:.0f}s", 1, 1)
    ctx.check()

    # -- features and rerankers: the reranker stage of every run -----------------------------------
    if nb_dev.gold is None or nb_test.gold is None:  # dev and test F need their gold
        raise DataError("the development and test lists need gold entities")
    systems_of = {reranker(algo).system_name: algo for algo in cfg.systems}
    total = len(systems_of)
    systems = []
    curves = {}
    finished = 0  # systems done (they train in threads: counted under the lock)
    counting = threading.Lock()
    t = time.perf_counter()
    ctx.stage(STAGE_FEATURES, "training, dev and test lists…", 0, 3)

    training = False  # whether the first learner has started (the stage after the features)

    def progress(message: str, done: int, n: int) -> None:
        nonlocal training
        if message.startswith("features"):
            ctx.progress(message, done, n)
            return
        with counting:
            first, training = not training, True
        if first:
            ctx.stage(STAGE_SYSTEMS, ", ".join(systems_of), 0, total)
        ctx.progress(message, finished, total)

    def curve(name: str, st) -> None:
        if on_stats is not None:
            on_stats(name, st)
        if st.dev_f1 is not None:
            ctx.progress(f"{name}: {st.unit} {st.step}: dev F {st.dev_f1:.2f}", finished, total)

    def scored(system: System, model: RerankerModel, data: dict) -> tuple:
        """A trained system scored on dev and test, and saved (in its own thread)."""
        nonlocal finished
        c_dev = model.predict(data["dev"])
        t = time.perf_counter()
        c_test = model.predict(data["test"])
        test_secs = time.perf_counter() - t
        model.save(os.path.join(out_dir, f"reranker-{system.name}.npz"))
        sd, st_ = data["dev"].prf(c_dev), data["test"].prf(c_test)
        with counting:
            finished += 1
            done = finished
        ctx.progress(f"{system.name}: dev F {sd[2]:.2f}, test F {st_[2]:.2f}", done, total)
        return sd, st_, c_test, test_secs

    fitted = fit_rerankers(
        nb_train,
        nb_dev,
        [System(name, algo, cfg.learner_params(algo)) for name, algo in systems_of.items()],
        {
            "min_sentences": cfg.min_sentences,
            **{f.keyword: getattr(cfg, f.experiment) for f in FEATURE_FAMILIES.values()},
        },
        others={"test": nb_test},
        threads=system_threads(len(systems_of), cfg.workers),
        first=LONGEST_FIRST,
        callback=curve,
        should_cancel=ctx.should_cancel,
        progress=progress,
        then=scored,
    )
    gf, d_train, d_dev, d_test = (
        fitted.features,
        fitted.data["train"],
        fitted.data["dev"],
        fitted.data["test"],
    )
    stages["features"] = fitted.seconds["features"]
    stages["systems_wall"] = time.perf_counter() - t - stages["features"]
    base_dev = d_dev.prf(np.zeros(len(d_dev), int))
    base_test = d_test.prf(np.zeros(len(d_test), int))
    systems.append(
        system_entry(
            "baseline",
            base_dev,
            base_test,
            base_dev,
            base_test,
            {"tagger": params, "n": cfg.n, "folds": cfg.folds},
            stages["tagger_and_nbest"],
        )
    )
    choices = {"baseline": np.zeros(len(d_test), dtype=np.int64)}
    for name, model in fitted.models.items():
        sd, st_, c_test, test_secs = fitted.outcomes[name]
        secs = fitted.seconds[name]
        stages[name], stages[name + "_test"] = secs, test_secs
        systems.append(
            system_entry(
                name, sd, st_, base_dev, base_test, learned_settings(model.learner), secs, test_secs
            )
        )
        choices[name] = c_test
        curves[name] = model.learner.history_
    ctx.check()

    # -- outputs -------------------------------------------------------------------------------------
    t = time.perf_counter()
    ctx.stage(STAGE_OUTPUTS, "predictions, curves, report")
    seen = training_strings(train.sentences)
    for sysd in systems:
        sysd["test_breakdown"] = breakdown(
            nb_test.words, nb_test.gold, nb_test.top(choices[sysd["name"]]), seen
        )
    for name, choice in choices.items():
        spans = nb_test.top(choice)
        if cfg.task == "scn":
            spans = [with_placeholder_type(s) for s in spans]
        write_corpus(test.with_spans(spans), os.path.join(out_dir, f"pred-{name}-test.conll"))
    if cfg.task == "scn":
        write_corpus(
            test.with_spans([with_placeholder_type(s.spans) for s in test.sentences]),
            os.path.join(out_dir, "gold-test-untyped.conll"),
        )
    plot_curves(curves, os.path.join(out_dir, "curves.png"), base_dev[2])
    stages["outputs"] = time.perf_counter() - t
    report = {
        "task": cfg.task,
        "config": jsonable(asdict(cfg)),
        "data": {
            "train": os.path.abspath(train_path),
            "dev": os.path.abspath(dev_path),
            "test": os.path.abspath(test_path),
            "train_sentences": len(train.sentences),
            "dev_sentences": len(dev.sentences),
            "test_sentences": len(test.sentences),
            "candidates_train": int(d_train.n_candidates),
            "features": gf.n_features,
            "oracle_f1": {"dev": oracle_f(d_dev), "test": oracle_f(d_test)},
        },
        "systems": systems,
        "stages": stages,
        "seconds_total": time.perf_counter() - t_all,
    }
    write_report(out_dir, report, report_markdown(report))
    return report


def oracle_f(data) -> float:
    """F of the best candidate of every sentence (data with gold: checked before the features)."""
    assert data.oracle is not None
    return data.prf(data.oracle)[2]


#: what a trained learner chose or found, reported beside its settings
LEARNED = (
    "beta_",
    "kept_rounds_",
    "best_step_",
    "alpha0_",
    "beta_grid_",
    "beta_at_edge_",
    "n_mistakes_",
)


def learned_settings(learner) -> dict:
    """A trained reranker's settings and what training chose (its round or epoch, β, …)."""
    settings = dict(learner.get_params())
    for extra in LEARNED:
        if getattr(learner, extra, None) is not None:
            settings[extra.rstrip("_")] = getattr(learner, extra)
    if hasattr(learner, "weight_on_L"):
        settings["weight_on_L"] = learner.weight_on_L()
    return settings
