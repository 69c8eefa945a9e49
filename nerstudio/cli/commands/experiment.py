"""``nerstudio experiment``: a whole paper's pipeline with a report: the collins suite or the kazama suite."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ... import choices
from ...errors import Msg, SettingsError
from ...learners import DEFAULT_SYSTEMS, RERANKERS, TAGGERS
from ..common import StageLines, _executor
from ..options import add_executor_option, check_learner_options, feature_set, registry_choice


def add_parser(sub, parents) -> argparse.ArgumentParser:
    learn = parents.learn
    p = sub.add_parser(
        "experiment",
        parents=[learn],
        help="a whole paper's pipeline with a report",
        description="--suite collins (default): jackknifed N-best lists, a tagger for dev/test, "
        "global features, boosting and perceptrons. --suite kazama: structured "
        "perceptron taggers (plain, averaged, margin), joint local/non-local training "
        "(candidate, proposed) and the re-ranking baselines, on document sequences. "
        "Both write report.md, report.json, pred-<system>-test.conll, curves.png and "
        "their models to DIR.",
    )
    p.add_argument("--suite", choices=("collins", "kazama"), default="collins")
    p.add_argument(
        "--global-gazetteers",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="collins suite: the bundled gazetteers as global features of the rerankers (default on, "
        "off in the collins2002 preset)",
    )
    p.add_argument(
        "--global-clusters",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="collins suite: the Brown clusters of an entity's words (BC/BCL) as global features of the "
        "rerankers (default on; off in the collins2002 preset; docs/results.md)",
    )
    p.add_argument(
        "--global-posterior",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="collins suite: how much of the tagger's N-best list holds each entity (EP/ES) as "
        "global features of the rerankers (default off; docs/results.md)",
    )
    p.add_argument(
        "--global-biglex",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="collins suite: the rerankers' lowercase lexicon from the large corpus instead of the "
        "training text (default off; the collins2002 preset keeps the training text's)",
    )
    p.add_argument(
        "--context",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="collins suite: document and corpus context of each entity (two-stage) for the rerankers "
        "(default on, off in the collins2002 preset)",
    )
    p.add_argument(
        "--context-scope",
        choices=choices.SCOPES,
        default=None,
        help="collins suite: which context the rerankers get: both (default), the document's only "
        "(DC) or the other documents' only (CC)",
    )
    p.add_argument(
        "--gazetteer-lists",
        default=None,
        metavar="LISTS",
        help="collins suite: which gazetteer lists the rerankers use: comma-separated list names or "
        "families (persons, locations, nationalities, organisations), 'all', '-NAME' to take one "
        "away (e.g. all,-persons); default all",
    )
    p.add_argument(
        "--lists-from",
        default=None,
        metavar="DIR",
        help="collins suite: take the tagger and N-best lists from an earlier experiment's DIR (same "
        "corpora and tagger settings, checked) instead of making them again",
    )
    p.add_argument(
        "--preset",
        choices=tuple(choices.PRESETS),
        default=None,
        help="collins suite: a named set of defaults (collins2002: the paper's own setting); "
        "options given explicitly override it",
    )
    p.add_argument("--train", required=True, metavar="T")
    p.add_argument("--dev", required=True, metavar="D")
    p.add_argument("--test", required=True, metavar="E")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument(
        "--task",
        choices=choices.TASKS,
        default=None,
        help="default typed",
    )
    p.add_argument(
        "--features",
        type=feature_set,
        default=None,
        metavar="SET",
        help="tagger feature set (collins: default conll+rich+gaz+clusters; +gaz: with the bundled gazetteers, "
        "+gaz:LISTS some of them, e.g. +gaz:locations/nationalities; +rich: more shape and affix "
        "templates; +clusters: Brown-cluster prefixes; +biglex: large-corpus lowercase lexicon; kazama: "
        "kt (K&T Table 1), kt+rich, kt+rich+clusters (default)[+biglex])",
    )
    p.add_argument(
        "--tagger-l2",
        type=float,
        default=None,
        help="collins suite: the max-ent tagger's L2 penalty (default 1)",
    )
    p.add_argument(
        "--tagger-cutoff",
        type=int,
        default=None,
        help="collins suite: the max-ent tagger's (predicate, tag) cut-off (default 2; the preset: 5)",
    )
    p.add_argument(
        "--tagger-alphabet",
        choices=choices.ALPHABETS,
        default=None,
        help="the tags the taggers predict: bilou (begin, inside, last, unit) or scn (Collins' "
        "start/continue); collins suite: the max-ent tagger's, default bilou (the preset: scn), "
        "its N-best lists are SCN either way; kazama suite: the perceptron taggers', default scn",
    )
    registry_choice(
        p, "--tagger-optimizer", "maxent", "optimizer", dest="tagger_optimizer", given_only=True
    )
    p.add_argument(
        "--tagger-max-iter",
        type=int,
        default=None,
        help="collins suite: the max-ent tagger's L-BFGS iterations (default 300; the preset: 100)",
    )
    p.add_argument(
        "--tagger-epochs",
        type=int,
        default=None,
        help="collins suite: at most this many epochs of the max-ent tagger's online optimiser "
        f"(default {TAGGERS['maxent'].defaults['epochs']})",
    )
    p.add_argument(
        "--systems",
        default=None,
        help=f"comma-separated systems; collins: {', '.join(RERANKERS)} "
        f"(default {','.join(DEFAULT_SYSTEMS)}; kernel only when named here or by the "
        f"collins2002 preset); kazama: {', '.join(choices.KAZAMA_SYSTEMS)} "
        "(default all)",
    )
    k = p.add_argument_group("kazama suite")
    k.add_argument(
        "--C-joint",
        type=float,
        default=None,
        help="margin C of the candidate/proposed algorithms (default 1000)",
    )
    k.add_argument(
        "--C-rerank",
        type=float,
        nargs=2,
        default=None,
        metavar=("C1", "C2"),
        help="margin C of re-ranking 1 and 2",
    )
    k.add_argument(
        "--joint-epochs", type=int, default=None, help="at most this many joint-training epochs"
    )
    k.add_argument(
        "--C-grid",
        action="append",
        default=None,
        metavar="SYSTEM=C1,C2,...",
        help="margins C to try for SYSTEM, the dev F picks one (repeatable)",
    )
    k.add_argument(
        "--n-test",
        type=int,
        default=None,
        help="n' candidates re-scored at test time (default 100)",
    )
    k.add_argument(
        "--n-primes",
        default=None,
        help="comma-separated n' values for Table 3 (default 20,100,400)",
    )
    k.add_argument(
        "--gazetteer",
        choices=("none", "train", "lists", "train+lists"),
        default=None,
        help="gazetteer features of the taggers: the training data's entities, the bundled lists "
        "(the default, chosen on CoNLL-2003 dev), both, or none (K&T's Table 1 without them)",
    )
    k.add_argument(
        "--edge-templates",
        default=None,
        help="which templates get edge features (default current; K&T's Table 1: all)",
    )
    p.add_argument("--folds", type=int, default=None, help="default 5")
    p.add_argument("--n", type=int, default=None, help="candidates per sentence (default 20)")
    p.add_argument(
        "--workers", type=int, default=None, help="tagger processes (default: one per core)"
    )
    add_executor_option(p)
    p.add_argument("--encoding", default=None, help="text encoding of the corpora")
    p.add_argument("--json", action="store_true", help="print report.json to stdout")
    return p


def collins_config(args):
    """The collins suite's settings from the parsed command line: the preset's, then the
    options given (an unknown system, or an option its learner does not take, refused)."""
    from ...experiments.collins import ExperimentConfig
    from ...rerank.model import ALGORITHMS

    algos = (
        None if not args.systems else tuple(a.strip() for a in args.systems.split(",") if a.strip())
    )
    for a in algos or ():
        if a not in ALGORITHMS:
            raise SettingsError(Msg.UNKNOWN.format(what="system", name=a, choices=ALGORITHMS))
    gazetteers = args.global_gazetteers
    if args.gazetteer_lists is not None:
        if gazetteers is False:
            raise SettingsError(
                "--gazetteer-lists chooses the lists of --global-gazetteers: drop --no-global-gazetteers"
            )
        from ...resources import select_lists

        gazetteers = select_lists(args.gazetteer_lists)
    context = args.context
    if args.context_scope is not None:
        if context is False:
            raise SettingsError(
                "--context-scope chooses the context of --context: drop --no-context"
            )
        context = True if args.context_scope == "both" else args.context_scope
    cfg = ExperimentConfig.from_preset(
        args.preset,
        task=args.task,
        tagger_features=args.features,
        tagger_l2=args.tagger_l2,
        tagger_cutoff=args.tagger_cutoff,
        tagger_optimizer=args.tagger_optimizer,
        tagger_max_iter=args.tagger_max_iter,
        tagger_epochs=args.tagger_epochs,
        tagger_alphabet=args.tagger_alphabet,
        folds=args.folds,
        n=args.n,
        workers=args.workers,
        min_sentences=args.min_sentences,
        systems=algos,
        encoding=args.encoding,
        reranker_gazetteers=gazetteers,
        reranker_context=context,
        reranker_clusters=args.global_clusters,
        reranker_biglex=args.global_biglex,
        reranker_posterior=args.global_posterior,
        lists_from=None if args.lists_from is None else os.path.abspath(args.lists_from),
    )
    check_learner_options(args, list(cfg.systems))
    for k, attr in (
        ("rounds", "boost_rounds"),
        ("epsilon", "boost_epsilon"),
        ("eval_every", "boost_eval_every"),
        ("epochs", "epochs"),
        ("beta", "beta"),
        ("C", "margin_C"),
        ("seed", "seed"),
        ("max_sentences", "kernel_sentences"),
        ("word_features", "kernel_word_features"),
        ("global_features", "kernel_global_features"),
    ):
        if getattr(args, k, None) is not None:
            setattr(cfg, attr, getattr(args, k))
    return cfg


def run(args) -> int:
    if args.suite == "kazama":
        for opt in (
            "preset",
            "gazetteer_lists",
            "lists_from",
            "context_scope",
            "tagger_l2",
            "tagger_cutoff",
            "tagger_optimizer",
            "tagger_max_iter",
            "tagger_epochs",
            "global_clusters",
            "global_biglex",
            "global_posterior",
        ):
            if getattr(args, opt) is not None:
                raise SettingsError(f"--{opt.replace('_', '-')} applies to the collins suite only")
        for k, v in (("task", "typed"), ("folds", 5), ("n", 20)):
            if getattr(args, k) is None:
                setattr(args, k, v)
        return _kazama_experiment(args)
    from ...app.progress import Reporter
    from ...runs.experiment import run_experiment

    cfg = collins_config(args)
    report = run_experiment(
        args.train,
        args.dev,
        args.test,
        args.out,
        cfg,
        Reporter(StageLines("experiment")),
        executor=_executor(args),
    )
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        from ...experiments.collins import report_markdown

        print(report_markdown(report))
    print(
        f"wrote {args.out}/report.md, report.json, pred-*-test.conll, curves.png "
        f"({report['seconds_total']:.0f}s)",
        file=sys.stderr,
    )
    return 0


def _kazama_experiment(args) -> int:
    from ...app.progress import Reporter
    from ...experiments.kazama import SYSTEMS, KazamaConfig, report_markdown
    from ...runs.kazama_suite import run_kazama

    systems = tuple(a.strip() for a in (args.systems or ",".join(SYSTEMS)).split(",") if a.strip())
    bad = [a for a in systems if a not in SYSTEMS]
    if bad:
        raise SettingsError(Msg.UNKNOWN.format(what="system", name=bad[0], choices=SYSTEMS))
    if args.task != "typed" and args.task != "scn":
        raise SettingsError("--task must be typed or scn")
    cfg = KazamaConfig(
        task=args.task,
        folds=args.folds,
        n=args.n,
        workers=args.workers,
        systems=systems,
        encoding=args.encoding,
    )
    if args.gazetteer is not None:
        cfg.gazetteer = None if args.gazetteer == "none" else args.gazetteer
    if args.features is not None:
        if args.features.split("+")[0] != "kt":
            raise SettingsError(
                f"--features {args.features}: the kazama suite's taggers use kt[+rich][+clusters][+biglex]"
            )
        cfg.features = args.features
    for k, attr in (
        ("epochs", "epochs"),
        ("C", "C_margin"),
        ("C_joint", "C_joint"),
        ("bpm", "bpm"),
        ("seed", "seed"),
        ("joint_epochs", "joint_epochs"),
        ("n_test", "n_test"),
        ("edge_templates", "edge_templates"),
        ("tagger_alphabet", "alphabet"),
    ):
        if getattr(args, k, None) is not None:
            setattr(cfg, attr, getattr(args, k))
    if args.C_rerank is not None:
        cfg.C_rerank1, cfg.C_rerank2 = args.C_rerank
    for item in args.C_grid or ():
        name, _, values = item.partition("=")
        if (
            name not in ("margin", "candidate", "proposed", "reranking1", "reranking2")
            or not values
        ):
            raise SettingsError(
                f"--C-grid {item!r}: expected SYSTEM=C1,C2,... with SYSTEM margin, candidate, "
                "proposed, reranking1 or reranking2"
            )
        cfg.C_grids = dict(cfg.C_grids or {}, **{name: _numbers("--C-grid", values, float)})
    if args.n_primes:
        cfg.n_primes = _numbers("--n-primes", args.n_primes, int)
    if args.average:
        cfg.average_joint = True
    report = run_kazama(
        args.train,
        args.dev,
        args.test,
        args.out,
        cfg,
        Reporter(StageLines("experiment")),
        executor=_executor(args),
    )
    print(json.dumps(report, indent=2) if args.json else report_markdown(report))
    print(
        f"wrote {args.out}/report.md, report.json, pred-*-test.conll, curves.png "
        f"({report['seconds_total']:.0f}s)",
        file=sys.stderr,
    )
    return 0


def _numbers(option: str, text: str, kind) -> tuple:
    """``1,2,3`` as numbers of ``kind``; anything else a :class:`SettingsError` naming ``option``."""
    try:
        return tuple(kind(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise SettingsError(f"{option} {text!r}: expected numbers joined by commas") from None
