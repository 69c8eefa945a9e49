"""Kazama & Torisawa (2007) on a corpus: local perceptrons, joint training, re-ranking, one report.

Systems (names as in ``report.json``):

``perceptron`` / ``averaged`` / ``margin``
    the structured perceptron tagger with local features only (K&T Table 2, upper half);
``candidate`` / ``proposed``
    Algorithms 4.1 and 4.2 with local and non-local features (Table 2, lower half), evaluated
    with n' = ``n_test`` candidates; ``proposed`` is also evaluated at every n' of ``n_primes``
    (Table 3);
``reranking1`` / ``reranking2``
    the re-ranking baselines (Table 6): a first model (the margin perceptron) makes candidate
    lists, cross-validated over ``folds`` document folds for the training set; the second model
    is trained on them with the first model's score (1) or the full local feature set (2) next to
    the non-local features.

Every system's development F chooses its epoch; test figures are not used for any choice. The
output directory receives ``report.json`` (the layout of :mod:`.collins`: per system
``name``, ``dev``, ``test`` with ``precision``/``recall``/``f1`` and ``rel_error_reduction`` against
the ``margin`` perceptron, ``settings``, ``seconds``; plus ``n_prime`` and the paper's figures),
``report.md`` (tables shaped like the paper's Tables 2, 3, 6 and 7, our figures next to theirs),
``pred-<system>-test.conll``, ``curves.png`` (dev F against epochs), the trained local
taggers ``tagger-<system>.npz`` and the joint models ``joint-<system>.npz`` (the application and
:meth:`nerstudio.tagging.joint.JointTagger.load` open both).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from ..choices import KAZAMA_SYSTEMS
from ..corpus.formats import read_corpus, write_corpus
from ..corpus.model import Corpus, Span
from ..errors import SettingsError
from ..evaluation import evaluate_spans
from ..persist import jsonable
from ..runtime.folds import is_remote, run_folds, split
from ..runtime.work_files import CorpusFile
from ..tagging.joint import JointTagger
from ..tagging.perceptron import PerceptronTagger
from .breakdown import breakdown, breakdown_lines, training_strings
from .collins import (
    plot_curves,
    settings_and_stages,
    stage_helpers,
    system_entry,
    with_placeholder_type,
    write_report,
)
from .kazama_fits import (
    KEPT_FILE,
    LIST_FILES,
    Fit,
    Reranking,
    first_model_fold,
    merge_lists,
    train_all,
)

SYSTEMS = KAZAMA_SYSTEMS

# K&T 2007 on CoNLL-2003 English (dev F, test F, C); Tables 2 and 3 use the CoNLL POS/chunk
# columns, Tables 6 and 7 TagChunk's (a setting we cannot reproduce: see the report).
PAPER = {
    "table2": {
        "perceptron": (89.01, 84.03, None),
        "averaged": (89.32, 84.08, None),
        "margin": (90.98, 85.64, 11313),
        "candidate": (90.71, 84.90, 4000),
        "proposed": (91.95, 86.30, 5657),
    },
    "table3": {
        20: (91.76, 86.19),
        100: (91.95, 86.30),
        400: (92.13, 86.39),
        800: (92.09, 86.39),
        1600: (92.13, 86.46),
        6400: (92.19, 86.38),
    },
    "table6": {
        "margin": (91.06, 86.24, 32000),
        "reranking1": (91.62, 86.57, 4000),
        "reranking2": (92.08, 86.86, 16000),
        "proposed": (92.23, 87.04, 5657),
    },
    "table7_seconds": {
        "margin": 15977,
        "reranking1": 86742,
        "reranking2": 112138,
        "proposed": 28880,
    },
}


@dataclass
class KazamaConfig:
    task: str = "typed"
    # the taggers' local features, chosen on CoNLL-2003 dev (see the README's K&T section): the
    # bundled gazetteer lists (None, "train", "lists" or "train+lists") and the feature set
    # "kt+rich+clusters" ("kt": K&T's Table 1 as printed; "kt+rich": more shape and affix templates;
    # "+clusters": Brown-cluster prefixes in the ±2 window, nerstudio.resources.clusters, which
    # raise the margin perceptron's dev F from 90.63 to 91.33 and the proposed algorithm's from
    # 91.51 to 91.91, docs/results.md; "+biglex": the large-corpus lowercase lexicon)
    gazetteer: str | None = "lists"
    features: str = "kt+rich+clusters"
    cutoff: int = 2
    edge_templates: str = "current"  # the tagger's default (K&T's full set: "all")
    # the taggers' tags: "scn" (Collins') or "bilou" (nerstudio.tagging.tag_alphabets). BILOU raises
    # the margin perceptron's dev F by 0.50 and the proposed algorithm's by 0.76 for 1.7 times the
    # CPU; the suite keeps SCN for its time (docs/results.md, "The K&T suite with BILOU tags")
    alphabet: str = "scn"
    epochs: int = 100  # at most, local taggers (they stop early as K&T do)
    joint_epochs: int = 80  # at most, joint training and re-ranking
    # chosen on CoNLL-2003 dev (--C-grid); with kt+rich+clusters C = 2000 is ahead by 0.01 (margin)
    # and 0.08 (proposed) dev F, less than the 0.1 a default must gain to change (docs/results.md)
    C_margin: float = 1000.0
    C_joint: float = 1000.0
    C_rerank1: float = 100.0
    C_rerank2: float = 200.0
    #: per system, the margins C to try; the development F picks one (K&T tune C per system on
    #: dev); a system without a grid uses its C above
    C_grids: dict | None = None
    n: int = 20
    n_test: int = 100
    n_primes: tuple = (20, 100, 400)
    folds: int = 5
    bpm: int = 0
    average_joint: bool = False
    systems: tuple = SYSTEMS
    workers: int | None = None
    seed: int = 0
    encoding: str | None = None

    def C_values(self, system: str) -> tuple:
        fixed = {
            "margin": self.C_margin,
            "candidate": self.C_joint,
            "proposed": self.C_joint,
            "reranking1": self.C_rerank1,
            "reranking2": self.C_rerank2,
        }[system]
        grid = (self.C_grids or {}).get(system)
        return tuple(float(c) for c in grid) if grid else (float(fixed),)

    def local(self, **kw) -> dict:
        p = {
            "task": self.task,
            "features": self.features,
            "gazetteer": self.gazetteer,
            "cutoff": self.cutoff,
            "edge_templates": self.edge_templates,
            "seed": self.seed,
            "alphabet": self.alphabet,
        }
        p.update(kw)
        return p


def _prf(gold: Corpus, spans, typed: bool) -> tuple[float, float, float]:
    """P/R/F of per-sentence spans against the corpus' gold (its boundaries only when untyped)."""
    g = [s.spans if typed else [Span(a, b, "") for a, b, _ in s.spans] for s in gold.sentences]
    ev = evaluate_spans(g, spans)
    return ev.overall.precision, ev.overall.recall, ev.overall.f1


def cross_validated_lists(
    corpus: Corpus,
    params: dict,
    n: int,
    folds: int,
    workers: int | None = None,
    should_cancel=None,
    progress=None,
    executor=None,
):
    """Per training document (corpus order): candidates, their scores and the gold score from a
    first model trained on the other folds (folds by document, :func:`run_folds`; ``progress``
    gets the message of every fold that finishes; a remote ``executor`` reads the corpus from
    its file)."""
    docs = corpus.documents
    params = dict(params)
    params.setdefault("labels", corpus.labels)
    _, parts = split(corpus, folds, unit="document")

    def said(p):
        if (p.final or p.notice) and progress is not None:
            progress(p.message)

    source = CorpusFile.of(corpus, "documents") if is_remote(executor) else None
    run = run_folds(
        first_model_fold,
        docs,
        parts,
        {"params": params, "n": n},
        done="listed",
        executor=executor,
        workers=workers,
        progress=said,
        should_cancel=should_cancel,
        source=source,
        files=LIST_FILES,
    )
    return merge_lists(parts, run.results, len(docs))


def run_kazama(
    train_path,
    dev_path,
    test_path,
    out_dir,
    config: KazamaConfig | None = None,
    progress: Callable[[str, str], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    executor=None,
) -> dict:
    """Run the suite (see the module docstring); returns report.json's dict. The trainings of
    the systems and of their C values run side by side in up to ``config.workers`` local
    processes (default: the cores; :mod:`.kazama_fits`); a system's ``seconds`` add up its
    trainings. ``executor`` runs the cross-validated folds (default: local processes,
    ``config.workers``)."""
    cfg = config or KazamaConfig()
    bad = sorted(set(cfg.systems) - set(SYSTEMS))
    if bad:
        raise SettingsError(f"unknown system {', '.join(bad)} (choose from {', '.join(SYSTEMS)})")
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    t_all = time.perf_counter()
    suite = _Suite(cfg, out_dir, progress, should_cancel, executor)
    suite.read(train_path, dev_path, test_path)
    trainings = suite.train()
    suite.evaluate(trainings.chosen)
    if suite.rerank:
        suite.rerank_stage(trainings)
    systems = suite.outputs()
    report = {
        "suite": "kazama",
        "task": cfg.task,
        "config": jsonable(asdict(cfg)),
        "data": suite.data_summary(train_path, dev_path, test_path),
        "baseline": "margin" if "margin" in suite.results else None,
        "systems": systems,
        "n_prime": suite.n_prime,
        "paper": jsonable(PAPER),
        "stages": suite.stages,
        "seconds_total": time.perf_counter() - t_all,
    }
    write_report(out_dir, report, report_markdown(report))
    return report


class _Suite:
    """One run of :func:`run_kazama`, stage by stage: read, train every system at once,
    evaluate the local and joint systems, the re-rankers (their folds maybe elsewhere), the
    output files. It owns the run's results as they come."""

    def __init__(self, cfg: KazamaConfig, out_dir: str, progress, should_cancel, executor):
        self.cfg = cfg
        self.out_dir = out_dir
        self.should_cancel = should_cancel
        self.executor = executor
        self.say, self.check = stage_helpers(progress, should_cancel)
        self.typed = cfg.task == "typed"
        self.stages: dict[str, float] = {}
        self.results: dict[str, dict] = {}
        self.curves: dict[str, list] = {}
        self.preds: dict[str, list] = {}
        self.n_prime: list[dict] = []
        self.wanted = set(cfg.systems)
        self.rerank = [a for a in ("reranking1", "reranking2") if a in self.wanted]
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

    def read(self, train_path, dev_path, test_path) -> None:
        t = time.perf_counter()
        self.train_set, self.dev, self.test = (
            read_corpus(p, encoding=self.cfg.encoding) for p in (train_path, dev_path, test_path)
        )
        self.stages["read"] = time.perf_counter() - t
        self.say(
            "read",
            f"{len(self.train_set.documents)} / {len(self.dev.documents)} / "
            f"{len(self.test.documents)} documents",
        )
        self.labels = self.train_set.labels

    def record(self, name, dev_spans, test_spans, settings, seconds, history) -> None:
        """A system's figures, test predictions and dev curve."""
        r = self.results[name] = {
            "dev": _prf(self.dev, dev_spans, self.typed),
            "test": _prf(self.test, test_spans, self.typed),
            "settings": settings,
            "seconds": seconds,
        }
        self.preds[name] = test_spans
        self.curves[name] = [_Point(h) for h in history if _train_phase(h)]
        self.say(name, f"dev F {r['dev'][2]:.2f}, test F {r['test'][2]:.2f} ({seconds:.0f}s)")

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

    def train(self):
        cfg, say = self.cfg, self.say
        fits = self.fits()
        self.check()
        t = time.perf_counter()
        for name in dict.fromkeys(f.system for f in fits):
            say(name, "training")
        for twin in dict.fromkeys(f.twin.system for f in fits if f.twin is not None):
            say(twin, "training (in the averaged perceptron's run)")
        if self.follow:
            say(
                "reranking",
                f"{cfg.folds}-fold candidate lists once the margin perceptron is chosen",
            )
        trainings = train_all(
            fits,
            self.train_set,
            self.dev,
            reranking=Reranking(
                split(self.train_set, cfg.folds, unit="document")[1],
                self.fold_params,
                cfg.n,
                self.rerank_fits,
                lambda m: say("reranking", m),
            )
            if self.follow
            else None,
            workers=cfg.workers,
            out_dir=self.out_dir,
            say=say,
            should_cancel=self.should_cancel,
        )
        self.stages["training"] = time.perf_counter() - t
        return trainings

    def evaluate(self, chosen: dict) -> None:
        """The local taggers, then the joint systems (the proposed one at every n' too)."""
        t = time.perf_counter()
        for variant in ("perceptron", "averaged", "margin"):
            if variant in chosen:
                self.check()
                self.evaluate_local(variant, chosen[variant])
        for algo in ("candidate", "proposed"):
            if algo in chosen:
                self.check()
                self.evaluate_joint(algo, chosen[algo])
        self.stages["evaluation"] = time.perf_counter() - t

    def evaluate_local(self, variant: str, c) -> None:
        tagger = c.model
        assert isinstance(tagger, PerceptronTagger)
        settings = {k: c.fit.params[k] for k in _LOCAL_SETTINGS}
        settings.update(best_epoch=tagger.best_epoch_, epochs_run=tagger.epochs_run_)
        if variant != "margin":
            settings.pop("C")
        elif len(c.tried) > 1:
            settings["C_dev_f1"] = c.tried
        self.record(
            variant,
            tagger.predict_spans(self.dev),
            tagger.predict_spans(self.test),
            settings,
            c.seconds,
            tagger.history_,
        )

    def evaluate_joint(self, algo: str, c) -> None:
        cfg = self.cfg
        jt = c.model
        assert isinstance(jt, JointTagger)
        settings = {
            "C": jt.C,
            "n": cfg.n,
            "n_test": cfg.n_test,
            "best_epoch": jt.best_epoch_,
            "epochs_run": len(jt.history_),
            "average": cfg.average_joint,
            "bpm": cfg.bpm,
        }
        if len(c.tried) > 1:
            settings["C_dev_f1"] = c.tried
        # the dev and test documents once (features, non-local vectors), for every n' below too
        dev_docs, test_docs = jt.documents(self.dev), jt.documents(self.test)
        self.record(
            algo,
            jt.predict_spans(self.dev, docs=dev_docs),
            jt.predict_spans(self.test, docs=test_docs),
            settings,
            c.seconds,
            jt.history_,
        )
        if algo == "proposed":
            self.n_primes(jt, dev_docs, test_docs)

    def n_primes(self, jt: JointTagger, dev_docs, test_docs) -> None:
        """The proposed system evaluated with every n' of ``n_primes`` (K&T Table 3)."""
        for k in self.cfg.n_primes:
            self.check()
            d = _prf(self.dev, jt.predict_spans(self.dev, n_test=k, docs=dev_docs), self.typed)
            te = _prf(self.test, jt.predict_spans(self.test, n_test=k, docs=test_docs), self.typed)
            self.n_prime.append(
                {"system": "proposed", "n_test": int(k), "dev_f1": d[2], "test_f1": te[2]}
            )
            self.say("proposed", f"n'={k}: dev F {d[2]:.2f}, test F {te[2]:.2f}")

    def rerank_stage(self, trainings) -> None:
        """The re-rankers: trained in the same run as the margin perceptron, or here after
        their cross-validated lists are made on the executor's machines."""
        t = time.perf_counter()
        rerankers, cv = trainings.chosen, trainings.fold_seconds  # the folds' seconds added up
        if not self.follow:
            rerankers, cv, t = self.rerank_after_folds(trainings.chosen, t)
        for algo in self.rerank:
            self.check()
            self.evaluate_reranker(algo, rerankers[algo], cv)
        self.stages["reranking"] = time.perf_counter() - t

    def rerank_after_folds(self, chosen: dict, t: float) -> tuple[dict, float, float]:
        """The folds on the executor's machines, then the re-rankers here: the chosen
        re-rankers, the folds' wall time, and when their training started."""
        cfg, say = self.cfg, self.say
        margin = chosen["margin"].model
        assert isinstance(margin, PerceptronTagger)
        self.check()
        say("reranking", f"{cfg.folds}-fold candidate lists from the margin perceptron")
        lists = cross_validated_lists(
            self.train_set,
            self.fold_params(margin),
            cfg.n,
            cfg.folds,
            cfg.workers,
            self.should_cancel,
            lambda m: say("reranking", m),
            executor=self.executor,
        )
        self.stages["cross_validation"] = cv = time.perf_counter() - t  # the wall time
        self.check()
        t = time.perf_counter()
        first = os.path.join(self.out_dir, KEPT_FILE["local"].format("margin"))
        rerankers = train_all(
            self.rerank_fits(first),
            self.train_set,
            self.dev,
            lists=lists,
            workers=cfg.workers,
            out_dir=self.out_dir,
            say=say,
            should_cancel=self.should_cancel,
        ).chosen
        return rerankers, cv, t

    def evaluate_reranker(self, algo: str, c, cv: float) -> None:
        cfg = self.cfg
        jt = c.model
        assert isinstance(jt, JointTagger)
        settings = {
            "C": jt.C,
            "n": cfg.n,
            "n_test": cfg.n_test,
            "folds": cfg.folds,
            "best_epoch": jt.best_epoch_,
            "epochs_run": len(jt.history_),
            "first_model": "margin",
        }
        if len(c.tried) > 1:
            settings["C_dev_f1"] = c.tried
        # the paper's training time of a re-ranker includes making the first models
        self.record(
            algo,
            jt.predict_spans(self.dev),
            jt.predict_spans(self.test),
            settings,
            c.seconds + cv + self.results["margin"]["seconds"],
            jt.history_,
        )

    def outputs(self) -> list[dict]:
        """report.json's systems, with the prediction files and the curves written."""
        t = time.perf_counter()
        base = self.results.get("margin")
        test, out_dir = self.test, self.out_dir
        seen = training_strings(self.train_set.sentences)
        gold_spans = [
            s.spans if self.typed else [Span(a, e, "") for a, e, _ in s.spans]
            for s in test.sentences
        ]
        systems = []
        for name in SYSTEMS:
            if name not in self.results:
                continue
            r = self.results[name]
            b = base or r
            systems.append(
                system_entry(
                    name, r["dev"], r["test"], b["dev"], b["test"], r["settings"], r["seconds"]
                )
            )
            systems[-1]["test_breakdown"] = breakdown(
                [s.words for s in test.sentences], gold_spans, self.preds[name], seen
            )
            spans = self.preds[name]
            if self.cfg.task == "scn":
                spans = [with_placeholder_type(ss) for ss in spans]
            write_corpus(test.with_spans(spans), os.path.join(out_dir, f"pred-{name}-test.conll"))
        if self.cfg.task == "scn":
            write_corpus(
                test.with_spans([with_placeholder_type(s.spans) for s in test.sentences]),
                os.path.join(out_dir, "gold-test-untyped.conll"),
            )
        plot_curves(
            self.curves,
            os.path.join(out_dir, "curves.png"),
            base["dev"][2] if base else None,
            "margin perceptron",
        )
        self.stages["outputs"] = time.perf_counter() - t
        return systems

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


#: A local tagger's settings in report.json, from its fit's parameters.
_LOCAL_SETTINGS = (
    "variant",
    "C",
    "bpm",
    "features",
    "gazetteer",
    "cutoff",
    "edge_templates",
    "alphabet",
)


def _train_phase(h) -> bool:
    return getattr(h, "phase", "train") == "train" and getattr(h, "dev_f1", None) is not None


class _Point:
    """A curve point in the shape :func:`nerstudio.experiments.collins.plot_curves` draws."""

    unit = "epoch"

    def __init__(self, h):
        self.step = getattr(h, "epoch", getattr(h, "step", 0))
        self.dev_f1 = h.dev_f1


def _fmt(x, nd=2):
    return "–" if x is None else (f"{x:.{nd}f}" if isinstance(x, float) else str(x))


def report_markdown(report: dict) -> str:
    by = {s["name"]: s for s in report["systems"]}
    paper = report["paper"]
    d = report["data"]
    lines = [
        f"# Kazama & Torisawa (2007) suite ({report['task']} task)",
        "",
        f"Train {d['train']} ({d['train_documents']} documents), dev {d['dev']} ({d['dev_documents']}), "
        f"test {d['test']} ({d['test_documents']}). Sequences are documents. Paper figures are K&T's "
        "(CoNLL POS/chunk columns for Tables 2–3; TagChunk's tags for Tables 6–7).",
        "",
        "## Table 2: local features, then non-local features",
        "",
        "| system | dev F | test F | C | paper dev | paper test | paper C | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ("perceptron", "averaged", "margin", "candidate", "proposed"):
        if name in by:
            s = by[name]
            p = paper["table2"].get(name, [None, None, None])
            lines.append(
                f"| {name} | {s['dev']['f1']:.2f} | {s['test']['f1']:.2f} | {_fmt(s['settings'].get('C'))} | "
                f"{_fmt(p[0])} | {_fmt(p[1])} | {_fmt(p[2])} | {s['seconds']:.1f} |"
            )
    if report["n_prime"]:
        lines += [
            "",
            "## Table 3: effect of n' (proposed)",
            "",
            "| n' | dev F | test F | paper dev | paper test |",
            "|---|---|---|---|---|",
        ]
        for r in report["n_prime"]:
            p = paper["table3"].get(str(r["n_test"]), [None, None])
            lines.append(
                f"| {r['n_test']} | {r['dev_f1']:.2f} | {r['test_f1']:.2f} | {_fmt(p[0])} | {_fmt(p[1])} |"
            )
    if "reranking1" in by or "reranking2" in by:
        lines += [
            "",
            "## Table 6: re-ranking",
            "",
            "| system | dev F | test F | C | paper dev | paper test | paper C |",
            "|---|---|---|---|---|---|---|",
        ]
        for name in ("margin", "reranking1", "reranking2", "proposed"):
            if name in by:
                s = by[name]
                p = paper["table6"].get(name, [None, None, None])
                lines.append(
                    f"| {name} | {s['dev']['f1']:.2f} | {s['test']['f1']:.2f} | {_fmt(s['settings'].get('C'))} "
                    f"| {_fmt(p[0])} | {_fmt(p[1])} | {_fmt(p[2])} |"
                )
    br = breakdown_lines(report["systems"])
    if br:
        lines += ["", "## By entity type and by entities seen / unseen in training", ""] + br
    lines += [
        "",
        "## Table 7: training time",
        "",
        "| system | seconds here | paper seconds |",
        "|---|---|---|",
    ]
    for name in ("margin", "reranking1", "reranking2", "proposed"):
        if name in by:
            lines.append(
                f"| {name} | {by[name]['seconds']:.1f} | {paper['table7_seconds'].get(name, '–'):,} |"
            )
    lines += [
        "",
        "Re-ranking times include the margin perceptron and the cross-validated first models, as in "
        "the paper. Every system's epoch was chosen on dev.",
        "",
        "Settings:",
        "",
    ]
    return "\n".join(lines + settings_and_stages(report))
