"""The reranker commands: ``train-reranker``, ``rerank``, ``explain-model`` and ``experiment``
(both suites)."""

from __future__ import annotations

import json
import os
import sys

import numpy as np

from ..errors import FormatError, Msg, SettingsError
from ..evaluation import relative_error_reduction
from .common import Progress, _executor

# reranker settings the command line offers (argparse destinations)
_LEARN_OPTIONS = (
    "rounds",
    "epsilon",
    "eval_every",
    "epochs",
    "beta",
    "C",
    "bpm",
    "average",
    "seed",
    "shuffle",
    "lam",
    "word_features",
    "max_sentences",
    "global_features",
)


def _learner_keys(algo: str) -> set[str]:
    """The command-line settings ``algo`` takes: those its learner's constructor accepts."""
    import inspect

    from ..rerank.model import learner_class

    return set(inspect.signature(learner_class(algo).__init__).parameters) & set(_LEARN_OPTIONS)


def _given_options(args) -> dict:
    return {k: getattr(args, k) for k in _LEARN_OPTIONS if getattr(args, k, None) is not None}


def _learner_params(args, algo: str) -> dict:
    """Reranker settings given on the command line that apply to ``algo``."""
    keys = _learner_keys(algo)
    return {k: v for k, v in _given_options(args).items() if k in keys}


def _check_learner_options(args, algos) -> None:
    """Refuse a setting that none of ``algos`` takes."""
    given = set(_given_options(args))
    used = set().union(*(_learner_keys(a) for a in algos)) if algos else set()
    unused = sorted(given - used)
    if unused:
        flags = {"shuffle": "no-shuffle", "global_features": "feature-kernel"}
        opts = ", ".join("--" + flags.get(k, k.replace("_", "-")) for k in unused)
        raise SettingsError(
            f"{opts} {'does' if len(unused) == 1 else 'do'} not apply to {', '.join(algos)}"
        )


def _stats_printer(label: str):
    bar = Progress(label)

    def cb(st):
        parts = [f"{st.unit} {st.step}"]
        if st.loss is not None:
            parts.append(f"loss {st.loss:.1f}")
        if st.mistakes is not None:
            parts.append(f"{st.mistakes} mistakes")
        if st.dev_f1 is not None:
            parts.append(
                f"dev P/R/F {st.dev_precision:.2f}/{st.dev_recall:.2f}/{st.dev_f1:.2f}"
                + (" *" if st.best else "")
            )
        parts.append(f"{st.seconds:.1f}s")
        bar.message(", ".join(parts))

    return cb


def cmd_train_reranker(args) -> int:
    import time as _t

    from ..nbest import NBestList
    from ..rerank.model import train_reranker

    _check_learner_options(args, [args.algo])
    t0 = _t.perf_counter()
    train = NBestList.load(args.train)
    dev = NBestList.load(args.dev) if args.dev else None
    if train.gold is None:
        raise FormatError(args.train, None, "the training N-best list has no gold entities")
    if dev is not None and dev.gold is None:
        raise FormatError(args.dev, None, "the development N-best list has no gold entities")
    bar = Progress("features")
    model = train_reranker(
        train,
        dev,
        args.algo,
        _learner_params(args, args.algo),
        {"min_sentences": args.min_sentences},
        callback=_stats_printer(args.algo),
        progress=lambda stage, d, n: bar.update(d, n, stage),
    )
    model.save(args.out)
    lr = model.learner
    best = (
        f", best {lr.unit} {lr.best_step_}" if getattr(lr, "best_step_", None) is not None else ""
    )
    print(
        f"wrote {args.out}: {args.algo}, {model.features.n_features} features{best}, "
        f"{_t.perf_counter() - t0:.1f}s",
        file=sys.stderr,
    )
    if dev is not None:
        d = model.data(dev)
        base = d.prf(np.zeros(len(d), dtype=np.int64))
        new = d.prf(model.predict(d))
        print(
            f"dev {args.dev}: baseline F {base[2]:.2f}, reranked F {new[2]:.2f} "
            f"(P {new[0]:.2f}, R {new[1]:.2f}; relative error reduction "
            f"{relative_error_reduction(base[2], new[2]):.1f}%)"
        )
    return 0


def cmd_rerank(args) -> int:
    from ..corpus.formats import read_corpus, write_corpus
    from ..corpus.model import Corpus, Document, Sentence
    from ..nbest import NBestList
    from ..rerank.model import RerankerModel

    model = RerankerModel.load(args.model)
    nb = NBestList.load(args.nbest)
    d, choice = model.rerank(nb)
    spans = nb.top(choice)
    if not nb.typed:
        from ..experiments.collins import with_placeholder_type

        spans = [with_placeholder_type(ss) for ss in spans]
    src = args.corpus or nb.meta.get("source")
    corpus = None
    if src and os.path.exists(src):
        corpus = read_corpus(src, encoding=args.encoding)
        if [tuple(s.words) for s in corpus.sentences] != [tuple(w) for w in nb.words]:
            if args.corpus:
                raise FormatError(args.corpus, None, f"its sentences are not those of {args.nbest}")
            corpus = None
    if corpus is None:
        sents = [Sentence(words=tuple(w), spans=list(sp)) for w, sp in zip(nb.words, spans)]
        corpus = Corpus([Document(sents)], path=args.nbest, format="columns", scheme="iob2")
        write_corpus(corpus, args.out)
    else:
        write_corpus(corpus.with_spans(spans), args.out)
    print(f"wrote {args.out} ({corpus.format}, {corpus.scheme})", file=sys.stderr)
    if d.has_gold:
        base = d.prf(np.zeros(len(d), dtype=np.int64))
        new = d.prf(choice)
        changed = int((choice != 0).sum())
        out = {
            "baseline": dict(zip(("precision", "recall", "f1"), base)),
            "reranked": dict(zip(("precision", "recall", "f1"), new)),
            "rel_error_reduction": relative_error_reduction(base[2], new[2]),
            "changed_sentences": changed,
        }
        if args.json:
            print(json.dumps(out, indent=2))
        else:
            print(
                f"baseline F {base[2]:.2f}, reranked F {new[2]:.2f} (P {new[0]:.2f}, R {new[1]:.2f}); "
                f"{changed} of {len(d)} sentences changed; relative error reduction "
                f"{out['rel_error_reduction']:.1f}%"
            )
    return 0


def cmd_explain_model(args) -> int:
    from ..nbest import NBestList
    from ..rerank.importance import format_table, model_importance
    from ..rerank.model import RerankerModel

    if args.top < 1:
        raise SettingsError("--top must be at least 1")
    model = RerankerModel.load(args.model)
    nb = NBestList.load(args.nbest)
    result = model_importance(model, model.data(nb), against=args.against, sort=args.sort)
    if args.json:
        print(json.dumps(result.to_dict(args.top), indent=2))
    else:
        print(format_table(result, args.top, nb.ids))
    return 0


def collins_config(args):
    """The collins suite's settings from the parsed command line: the preset's, then the
    options given (an unknown system, or an option its learner does not take, refused)."""
    from ..experiments.collins import ExperimentConfig
    from ..rerank.model import ALGORITHMS

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
        from ..resources import select_lists

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
    _check_learner_options(args, list(cfg.systems))
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


def cmd_experiment(args) -> int:
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
    from ..experiments.collins import run_experiment

    cfg = collins_config(args)
    bar = Progress("experiment")
    report = run_experiment(
        args.train,
        args.dev,
        args.test,
        args.out,
        cfg,
        progress=lambda stage, msg: bar.message(f"[{stage}] {msg}"),
        executor=_executor(args),
    )
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        from ..experiments.collins import report_markdown

        print(report_markdown(report))
    print(
        f"wrote {args.out}/report.md, report.json, pred-*-test.conll, curves.png "
        f"({report['seconds_total']:.0f}s)",
        file=sys.stderr,
    )
    return 0


def _kazama_experiment(args) -> int:
    from ..experiments.kazama import SYSTEMS, KazamaConfig, report_markdown, run_kazama

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
    bar = Progress("experiment")
    report = run_kazama(
        args.train,
        args.dev,
        args.test,
        args.out,
        cfg,
        progress=lambda stage, msg: bar.message(f"[{stage}] {msg}"),
        executor=_executor(args),
    )
    print(json.dumps(report, indent=2) if args.json else report_markdown(report))
    print(
        f"wrote {args.out}/report.md, report.json, pred-*-test.conll, curves.png "
        f"({report['seconds_total']:.0f}s)",
        file=sys.stderr,
    )
    return 0


def cmd_sweep(args) -> int:
    from ..experiments.sweep import parse_settings, run_sweep, sweep_markdown

    grid = parse_settings(args.algo, args.grid)
    fixed = {k: v[0] for k, v in parse_settings(args.algo, " ".join(args.set), single=True).items()}
    bar = Progress("sweep")
    report = run_sweep(
        args.algo,
        args.train,
        args.dev,
        grid,
        args.out,
        fixed,
        executor=_executor(args),
        workers=args.workers,
        encoding=args.encoding,
        progress=lambda p: bar.message(p.message) if p.final or p.notice else None,
    )
    print(json.dumps(report, indent=2) if args.json else sweep_markdown(report))
    print(
        f"wrote {args.out}/sweep.md, sweep.json, sweep.png ({report['seconds_total']:.0f}s)",
        file=sys.stderr,
    )
    return 0


def _numbers(option: str, text: str, kind) -> tuple:
    """``1,2,3`` as numbers of ``kind``; anything else a :class:`SettingsError` naming ``option``."""
    try:
        return tuple(kind(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise SettingsError(f"{option} {text!r}: expected numbers joined by commas") from None
