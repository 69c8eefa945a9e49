"""The Kazama & Torisawa suite's systems scored: each kept model's dev and test figures, its test
predictions and dev curve, and the files made of them.

Why this exists: the suite's run (:mod:`.kazama_suite`) goes through stages; what a stage finds
out about a system (its P/R/F, settings and seconds, the proposed system at every n') is owned
here, in one place, until the output stage turns it into report.json's systems, the
``pred-<system>-test.conll`` files and ``curves.png``. Each system scored is one step of the
current stage's :class:`~nerstudio.app.progress.Progress`.
"""

from __future__ import annotations

import os

from ..app.progress import Progress
from ..corpus.formats import write_corpus
from ..corpus.model import Corpus, Span
from ..evaluation import evaluate_spans
from ..experiments.breakdown import breakdown, training_strings
from ..experiments.collins import plot_curves, system_entry, with_placeholder_type
from ..experiments.kazama import SYSTEMS, KazamaConfig
from ..tagging.joint import JointTagger
from ..tagging.perceptron import PerceptronTagger

#: A local tagger's settings in report.json, from its fit's parameters.
LOCAL_SETTINGS = (
    "variant",
    "C",
    "bpm",
    "features",
    "gazetteer",
    "cutoff",
    "edge_templates",
    "alphabet",
)


def prf(gold: Corpus, spans, typed: bool) -> tuple[float, float, float]:
    """P/R/F of per-sentence spans against the corpus' gold (its boundaries only when untyped)."""
    g = [s.spans if typed else [Span(a, b, "") for a, b, _ in s.spans] for s in gold.sentences]
    ev = evaluate_spans(g, spans)
    return ev.overall.precision, ev.overall.recall, ev.overall.f1


class Scores:
    """The figures of every system scored so far (see the module docstring). :meth:`count`
    starts a stage's count of systems; each system scored reports ``done`` of that count."""

    def __init__(self, cfg: KazamaConfig, train: Corpus, dev: Corpus, test: Corpus, ctx: Progress):
        self.cfg, self.train, self.dev, self.test, self.ctx = cfg, train, dev, test, ctx
        self.typed = cfg.task == "typed"
        self.results: dict[str, dict] = {}
        self.curves: dict[str, list] = {}
        self.preds: dict[str, list] = {}
        self.n_prime: list[dict] = []
        self.done = self.total = 0

    def count(self, total: int) -> None:
        self.done, self.total = 0, total

    def record(self, name, dev_spans, test_spans, settings, seconds, history) -> None:
        """A system's figures, test predictions and dev curve."""
        r = self.results[name] = {
            "dev": prf(self.dev, dev_spans, self.typed),
            "test": prf(self.test, test_spans, self.typed),
            "settings": settings,
            "seconds": seconds,
        }
        self.preds[name] = test_spans
        self.curves[name] = [_Point(h) for h in history if _train_phase(h)]
        self.done += 1
        self.ctx.progress(
            f"{name}: dev F {r['dev'][2]:.2f}, test F {r['test'][2]:.2f} ({seconds:.0f}s)",
            self.done,
            self.total,
        )

    def local(self, variant: str, c) -> None:
        """A local tagger (``c``: its :class:`~nerstudio.experiments.kazama_fits.Chosen`)."""
        tagger = c.model
        assert isinstance(tagger, PerceptronTagger)
        settings = {k: c.fit.params[k] for k in LOCAL_SETTINGS}
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

    def joint(self, algo: str, c) -> None:
        """A joint system; the proposed one at every n' of ``n_primes`` too."""
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
            self.ctx.check()
            d = prf(self.dev, jt.predict_spans(self.dev, n_test=k, docs=dev_docs), self.typed)
            te = prf(self.test, jt.predict_spans(self.test, n_test=k, docs=test_docs), self.typed)
            self.n_prime.append(
                {"system": "proposed", "n_test": int(k), "dev_f1": d[2], "test_f1": te[2]}
            )
            self.ctx.progress(
                f"proposed: n'={k}: dev F {d[2]:.2f}, test F {te[2]:.2f}", self.done, self.total
            )

    def reranker(self, algo: str, c, cv: float) -> None:
        """A re-ranking baseline; its seconds include its first models' (``cv``: the folds') and
        the margin perceptron's, as the paper counts them."""
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
        self.record(
            algo,
            jt.predict_spans(self.dev),
            jt.predict_spans(self.test),
            settings,
            c.seconds + cv + self.results["margin"]["seconds"],
            jt.history_,
        )

    def outputs(self, out_dir: str) -> list[dict]:
        """report.json's systems, with the prediction files and the curves written."""
        base = self.results.get("margin")
        test = self.test
        seen = training_strings(self.train.sentences)
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
        return systems


def _train_phase(h) -> bool:
    return getattr(h, "phase", "train") == "train" and getattr(h, "dev_f1", None) is not None


class _Point:
    """A curve point in the shape :func:`nerstudio.experiments.collins.plot_curves` draws."""

    unit = "epoch"

    def __init__(self, h):
        self.step = getattr(h, "epoch", getattr(h, "step", 0))
        self.dev_f1 = h.dev_f1
