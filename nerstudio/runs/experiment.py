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
    run_side_by_side,
    system_entry,
    system_threads,
    with_placeholder_type,
    write_report,
)
from ..experiments.reuse import copy_lists, load_lists, made_by
from ..learners import FEATURE_FAMILIES, reranker
from ..persist import jsonable
from ..rerank.features import GlobalFeatures
from ..rerank.model import RerankerModel, make_learner
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

    # -- features ----------------------------------------------------------------------------------
    t = time.perf_counter()
    ctx.stage(STAGE_FEATURES, "training, dev and test lists…", 0, 3)
    gf = GlobalFeatures(
        min_sentences=cfg.min_sentences,
        **{f.keyword: getattr(cfg, f.experiment) for f in FEATURE_FAMILIES.values()},
    )
    d_train = gf.fit_transform(nb_train, should_cancel=ctx.should_cancel)
    d_dev = gf.transform(nb_dev, should_cancel=ctx.should_cancel)
    d_test = gf.transform(nb_test, should_cancel=ctx.should_cancel)
    if d_dev.oracle is None or d_test.oracle is None:  # dev and test F need their gold
        raise DataError("the development and test lists need gold entities")
    stages["features"] = time.perf_counter() - t
    ctx.progress(
        f"{gf.n_features:,} global features, {d_train.X.nnz:,} active in training, "
        f"{stages['features']:.1f}s",
        3,
        3,
    )
    ctx.check()

    # -- systems -------------------------------------------------------------------------------------
    def scores_of(choice_dev, choice_test):
        return d_dev.prf(choice_dev), d_test.prf(choice_test)

    base_dev, base_test = scores_of(np.zeros(len(d_dev), int), np.zeros(len(d_test), int))
    systems = [
        system_entry(
            "baseline",
            base_dev,
            base_test,
            base_dev,
            base_test,
            {"tagger": params, "n": cfg.n, "folds": cfg.folds},
            stages["tagger_and_nbest"],
        )
    ]
    choices = {"baseline": np.zeros(len(d_test), dtype=np.int64)}
    curves = {}
    finished = 0  # systems done (they train in threads: counted under the lock)
    counting = threading.Lock()

    def train_system(algo):
        """One reranker: trained, scored on dev and test, saved (run in a thread of its own when
        the systems train side by side; each has its own learner, the data are only read)."""
        ctx.check()
        row = reranker(algo)
        name = row.system_name
        t = time.perf_counter()
        learner = make_learner(algo, **cfg.learner_params(algo))
        ctx.progress(f"{name}: training {row.title}", finished, len(cfg.systems))

        def cb(st, name=name):
            if on_stats is not None:
                on_stats(name, st)
            if st.dev_f1 is not None:
                ctx.progress(
                    f"{name}: {st.unit} {st.step}: dev F {st.dev_f1:.2f}",
                    finished,
                    len(cfg.systems),
                )

        learner.fit(d_train, d_dev, callback=cb, should_cancel=ctx.should_cancel)
        secs = time.perf_counter() - t
        c_dev = learner.predict(d_dev)
        t = time.perf_counter()
        c_test = learner.predict(d_test)
        test_secs = time.perf_counter() - t
        sd, st_ = scores_of(c_dev, c_test)
        RerankerModel(gf, learner, {"system": name}).save(
            os.path.join(out_dir, f"reranker-{name}.npz")
        )
        return (
            name,
            system_entry(
                name, sd, st_, base_dev, base_test, learned_settings(learner), secs, test_secs
            ),
            c_test,
            learner.history_,
            secs,
            test_secs,
        )

    def trained(result):
        nonlocal finished
        with counting:
            finished += 1
            done = finished
        name, sysd, *_ = result
        ctx.progress(
            f"{name}: dev F {sysd['dev']['f1']:.2f}, test F {sysd['test']['f1']:.2f} "
            f"({sysd['seconds']:.1f}s)",
            done,
            len(cfg.systems),
        )
        return result

    t = time.perf_counter()
    ctx.stage(STAGE_SYSTEMS, ", ".join(cfg.systems), 0, len(cfg.systems))
    for name, sysd, c_test, history, secs, test_secs in run_side_by_side(
        lambda algo: trained(train_system(algo)),
        cfg.systems,
        system_threads(cfg),
        first=LONGEST_FIRST,
    ):
        stages[name], stages[name + "_test"] = secs, test_secs
        systems.append(sysd)
        choices[name] = c_test
        curves[name] = history
    stages["systems_wall"] = time.perf_counter() - t

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
            "oracle_f1": {"dev": d_dev.prf(d_dev.oracle)[2], "test": d_test.prf(d_test.oracle)[2]},
        },
        "systems": systems,
        "stages": stages,
        "seconds_total": time.perf_counter() - t_all,
    }
    write_report(out_dir, report, report_markdown(report))
    return report


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
