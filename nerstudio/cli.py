"""The ``nerstudio`` command line.

Every command reports a user error as one line, ``nerstudio: error: FILE:LINE: message``, and
exits with status 1 (2 for bad usage); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections import Counter

import numpy as np

from . import __version__
from .errors import NerstudioError
from .evaluation import relative_error_reduction


def _add_read_options(p: argparse.ArgumentParser, prefix: str = "", what: str = "input") -> None:
    dest = prefix.replace("-", "_")
    p.add_argument(f"--{prefix}format" if prefix else "--from", dest=f"{dest}format", metavar="FORMAT",
                   help=f"format of the {what} (conll2003, conll2002, columns, tsv, jsonl); detected if omitted")
    p.add_argument(f"--{prefix}scheme" if prefix else "--from-scheme", dest=f"{dest}in_scheme", metavar="SCHEME",
                   help=f"tag scheme of the {what} (iob1, iob2, bioes, bilou, scn); detected if omitted")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nerstudio",
        description="Named-entity annotation and N-best reranking workbench (Collins 2002).")
    parser.add_argument("--version", action="version", version=f"nerstudio {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--encoding", default=None,
                        help="text encoding of input files (default: UTF-8; e.g. latin-1)")
    common.add_argument("--strict", action="store_true",
                        help="reject invalid tag transitions instead of repairing them the conlleval way")
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    p = sub.add_parser("convert", parents=[common], help="convert a corpus between formats and tag schemes",
                       description="Convert IN to OUT. Written atomically; with the same format and scheme the "
                                   "output is byte-identical to the input.")
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    _add_read_options(p)
    p.add_argument("--to", dest="to_format", metavar="FORMAT", help="output format (default: the input's)")
    p.add_argument("--scheme", metavar="SCHEME", help="output tag scheme (default: the input's)")

    p = sub.add_parser("evaluate", parents=[common], help="score a prediction against gold (conlleval spans)",
                       description="Exact-span precision, recall and F1, overall and per type.")
    p.add_argument("gold", metavar="GOLD")
    p.add_argument("pred", metavar="PRED", help="a corpus file, or an N-best file (.npz): then its 1-best "
                                               "and oracle F at N = 1, 5, 10, 20 are reported")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of a table")
    p.add_argument("--mode", choices=("conlleval", "strict"), default="conlleval",
                   help="conlleval: invalid transitions are repaired (= seqeval default); strict: they form "
                        "no entity (= seqeval strict mode for IOB2/BIOES)")
    p.add_argument("--gold-format", metavar="FORMAT")
    p.add_argument("--pred-format", metavar="FORMAT")
    p.add_argument("--gold-scheme", metavar="SCHEME")
    p.add_argument("--pred-scheme", metavar="SCHEME")

    p = sub.add_parser("stats", parents=[common], help="documents, sentences, tokens and entities of a corpus")
    p.add_argument("file", metavar="FILE")
    _add_read_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON object")

    tagger = argparse.ArgumentParser(add_help=False)
    tagger.add_argument("--task", choices=("typed", "scn"), default="typed",
                        help="typed entities (CoNLL types) or the paper's boundary-only SCN task")
    tagger.add_argument("--features", choices=("paper", "conll", "paper+gaz", "conll+gaz", "kt"), default=None,
                        help="paper: Collins 2002's templates (max-ent default); conll: plus POS/chunk, affixes, "
                             "wider window; +gaz: plus the bundled gazetteers; kt: Kazama & Torisawa's Table 1 "
                             "(the perceptron tagger's set)")
    tagger.add_argument("--cutoff", type=int, default=None,
                        help="keep (predicate, tag) pairs seen this often (max-ent, default 5); perceptron: "
                             "surface predicates seen this often (default 2)")
    tagger.add_argument("--cutoff-on", choices=("pair", "predicate"), default=None,
                        help="count (predicate, tag) pairs (the paper; default for --features paper) or "
                             "predicates (default for --features conll)")
    tagger.add_argument("--l2", type=float, default=1.0, help="L2 regularisation strength (L-BFGS)")
    tagger.add_argument("--optimizer", choices=("lbfgs", "gis"), default="lbfgs")
    tagger.add_argument("--max-iter", type=int, default=100, help="optimiser iterations")

    p = sub.add_parser("train-tagger", parents=[common, tagger],
                       help="train the maximum-entropy tagger or the structured perceptron tagger")
    p.add_argument("train", metavar="TRAIN")
    p.add_argument("--model", choices=("maxent", "perceptron"), default="maxent",
                   help="maxent: Collins 2002's tagger (L-BFGS or GIS); perceptron: Collins 2002a / Kazama & "
                        "Torisawa's structured perceptron on document sequences")
    g = p.add_argument_group("perceptron tagger")
    g.add_argument("--variant", choices=("perceptron", "averaged", "margin"), default="margin")
    g.add_argument("--C", dest="C", type=float, default=None, help="margin of the margin variant")
    g.add_argument("--epochs", type=int, default=None, help="at most this many epochs (default 30)")
    g.add_argument("--bpm", type=int, default=0, help="BPM initialisation: number of shuffled single passes")
    g.add_argument("--gazetteer", choices=("none", "train", "lists", "train+lists"), default="none",
                   help="gazetteer features: the training data's entities, the bundled lists, or both")
    g.add_argument("--sentences", action="store_true", help="sentences, not documents, as sequences")
    p.add_argument("--out", required=True, metavar="MODEL", help="model file to write (.npz)")
    p.add_argument("--dev", metavar="DEV", help="development corpus: F reported during and after training")
    p.add_argument("--dev-every", type=int, default=25, help="evaluate on DEV every K iterations (0: only at the end)")

    p = sub.add_parser("nbest", parents=[common], help="decode a corpus into N-best lists (beam search)")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("input", metavar="INPUT")
    p.add_argument("--out", required=True, metavar="NBEST", help="N-best file to write (.npz)")
    p.add_argument("--n", type=int, default=20, help="candidates per sentence")
    p.add_argument("--beam", type=int, default=None, help="beam width (default: N)")
    p.add_argument("--documents", action="store_true",
                   help="perceptron tagger: one list per document (whole-document candidates)")

    p = sub.add_parser("tag", parents=[common], help="tag a corpus with its 1-best analysis, in the input's format")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("input", metavar="INPUT")
    p.add_argument("--out", required=True, metavar="PRED")
    p.add_argument("--beam", type=int, default=20, help="beam width")

    p = sub.add_parser("jackknife", parents=[common, tagger], help="K-fold N-best lists for a training corpus")
    p.add_argument("train", metavar="TRAIN")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--n", type=int, default=20, help="candidates per sentence")
    p.add_argument("--out", required=True, metavar="NBEST", help="jackknifed N-best file for TRAIN (.npz)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    p.add_argument("--model-out", metavar="MODEL", help="also train on all of TRAIN and save that model")
    p.add_argument("--decode", nargs=2, action="append", metavar=("CORPUS", "NBEST"), default=[],
                   help="with the model trained on all of TRAIN, decode CORPUS into NBEST (repeatable)")

    learn = argparse.ArgumentParser(add_help=False)
    g = learn.add_argument_group("reranker settings")
    g.add_argument("--rounds", type=int, default=None, help="boosting rounds (default 10000; experiment 100000)")
    g.add_argument("--epsilon", type=float, default=None, help="boosting smoothing epsilon (default 0.0025)")
    g.add_argument("--eval-every", type=int, default=None, help="boosting: dev F every K rounds")
    g.add_argument("--epochs", type=int, default=None, help="perceptron epochs (default 10)")
    g.add_argument("--beta", type=float, default=None,
                   help="perceptron weight scale of L(x) (default: searched on the dev set)")
    g.add_argument("--C", dest="C", type=float, default=None, help="margin perceptron margin")
    g.add_argument("--bpm", type=int, default=None, help="BPM initialisation: number of shuffled passes")
    g.add_argument("--average", action="store_true", default=None, help="margin perceptron: average weights")
    g.add_argument("--seed", type=int, default=None, help="shuffling seed")
    g.add_argument("--no-shuffle", dest="shuffle", action="store_false", default=None,
                   help="perceptrons: visit sentences in file order")
    g.add_argument("--lam", type=float, default=None, help="kernel perceptron: fragment-length decay (0 < lam <= 1)")
    g.add_argument("--word-features", action="store_true", default=None,
                   help="kernel perceptron: count shared word features, not just equal words")
    g.add_argument("--max-sentences", type=int, default=None, help="kernel perceptron: training sentences used")
    g.add_argument("--min-sentences", type=int, default=5,
                   help="keep global features seen on at least this many training sentences")

    p = sub.add_parser("train-reranker", parents=[learn], help="train a reranker on N-best lists",
                       description="Global features from TRAIN's candidates, then boosting or a perceptron; "
                                   "the dev list picks the best round/epoch and (perceptrons) beta.")
    p.add_argument("--train", required=True, metavar="NBEST", help="(jackknifed) training N-best file")
    p.add_argument("--dev", metavar="NBEST", help="development N-best file")
    p.add_argument("--algo", required=True, choices=("boost", "perceptron", "voted", "averaged", "margin", "kernel"))
    p.add_argument("--out", required=True, metavar="MODEL", help="reranker model to write (.npz)")

    p = sub.add_parser("rerank", help="pick a candidate per sentence with a reranker model",
                       description="Rerank NBEST with MODEL and write the chosen entities as a corpus: in the "
                                   "original corpus's format when it is known (--corpus, or the file the "
                                   "N-best list was decoded from), else two columns (word, IOB2 tag).")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("nbest", metavar="NBEST")
    p.add_argument("--out", required=True, metavar="PRED")
    p.add_argument("--corpus", metavar="CORPUS", help="the corpus NBEST was decoded from")
    p.add_argument("--encoding", default=None, help="text encoding of CORPUS")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")

    p = sub.add_parser("explain-model", help="rank a reranker's features by the decisions they move on an N-best list",
                       description="Which templates and features move the reranker's decisions on NBEST: in every "
                                   "sentence where its pick differs from the tagger's top candidate (or, with "
                                   "--against runner-up, from its own second choice), the features that separate "
                                   "the two, counted and summed by their contribution to the score difference.")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("nbest", metavar="NBEST")
    p.add_argument("--top", type=int, default=30, help="rows per table (default 30)")
    p.add_argument("--against", choices=("baseline", "runner-up"), default="baseline")
    p.add_argument("--sort", choices=("count", "contribution"), default="count",
                   help="rank by decisions moved (default) or by the contribution toward them")
    p.add_argument("--json", action="store_true", help="print the rankings as JSON (every sentence index, 0-based)")

    p = sub.add_parser("experiment", parents=[learn], help="a whole paper's pipeline with a report",
                       description="--suite collins (default): jackknifed N-best lists, a tagger for dev/test, "
                                   "global features, boosting and perceptrons. --suite kazama: structured "
                                   "perceptron taggers (plain, averaged, margin), joint local/non-local training "
                                   "(candidate, proposed) and the re-ranking baselines, on document sequences. "
                                   "Both write report.md, report.json, pred-<system>-test.conll, curves.png and "
                                   "their models to DIR.")
    p.add_argument("--suite", choices=("collins", "kazama"), default="collins")
    p.add_argument("--global-gazetteers", action=argparse.BooleanOptionalAction, default=None,
                   help="collins suite: the bundled gazetteers as global features of the rerankers (default on, "
                        "off in the collins2002 preset)")
    p.add_argument("--context", action=argparse.BooleanOptionalAction, default=None,
                   help="collins suite: document and corpus context of each entity (two-stage) for the rerankers "
                        "(default on, off in the collins2002 preset)")
    p.add_argument("--preset", choices=("collins2002",), default=None,
                   help="collins suite: a named set of defaults (collins2002: the paper's own setting); "
                        "options given explicitly override it")
    p.add_argument("--train", required=True, metavar="T")
    p.add_argument("--dev", required=True, metavar="D")
    p.add_argument("--test", required=True, metavar="E")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--task", choices=("typed", "scn"), default=None, help="default typed")
    p.add_argument("--features", choices=("paper", "conll", "paper+gaz", "conll+gaz"), default=None,
                   help="tagger feature set (default conll; +gaz: with the bundled gazetteers)")
    p.add_argument("--systems", default=None,
                   help="comma-separated systems; collins: boost, voted, averaged, perceptron, margin, kernel "
                        "(default boost,voted,averaged); kazama: perceptron, averaged, margin, candidate, "
                        "proposed, reranking1, reranking2 (default all)")
    k = p.add_argument_group("kazama suite")
    k.add_argument("--C-joint", type=float, default=None, help="margin C of the candidate/proposed algorithms")
    k.add_argument("--C-rerank", type=float, nargs=2, default=None, metavar=("C1", "C2"),
                   help="margin C of re-ranking 1 and 2")
    k.add_argument("--joint-epochs", type=int, default=None, help="at most this many joint-training epochs")
    k.add_argument("--C-grid", action="append", default=None, metavar="SYSTEM=C1,C2,...",
                   help="margins C to try for SYSTEM, the dev F picks one (repeatable)")
    k.add_argument("--n-test", type=int, default=None, help="n' candidates re-scored at test time (default 100)")
    k.add_argument("--n-primes", default=None, help="comma-separated n' values for Table 3 (default 20,100,400)")
    k.add_argument("--gazetteer", choices=("none", "train", "lists", "train+lists"), default="none",
                   help="gazetteer features: the training data's entities, the bundled lists, or both")
    k.add_argument("--edge-templates", default=None, help="which templates get edge features (default all)")
    p.add_argument("--folds", type=int, default=None, help="default 5")
    p.add_argument("--n", type=int, default=None, help="candidates per sentence (default 20)")
    p.add_argument("--workers", type=int, default=None, help="tagger processes (default: one per core)")
    p.add_argument("--encoding", default=None, help="text encoding of the corpora")
    p.add_argument("--json", action="store_true", help="print report.json to stdout")

    p = sub.add_parser("gui", help="open the desktop application")
    p.add_argument("path", nargs="?", metavar="CORPUS", help="corpus to open (default: the bundled demo corpus)")
    p.add_argument("--screenshot", metavar="PNG", help="render the window to PNG after loading and exit")
    return parser


# --------------------------------------------------------------------------------------------


def cmd_convert(args) -> int:
    from .corpus.formats import convert_file
    reader = convert_file(args.input, args.output, from_format=args.format, to_format=args.to_format,
                          scheme=args.scheme, from_scheme=args.in_scheme, encoding=args.encoding,
                          strict=args.strict)
    to = args.to_format or reader.format
    msg = f"wrote {args.output} ({to}, {args.scheme or reader.scheme}) from {args.input} ({reader.format}, {reader.scheme})"
    print(msg, file=sys.stderr)
    _report_repairs(reader)
    return 0


def _report_repairs(reader) -> None:
    if reader.repairs:
        print(f"note: {reader.path}: {reader.repairs} invalid tag transition(s) read the conlleval way "
              f"(use --strict to reject them)", file=sys.stderr)
    if reader.mixed_newlines:
        print(f"note: {reader.path}: mixed line endings; output uses {reader.newline!r}", file=sys.stderr)


def cmd_evaluate(args) -> int:
    from .corpus.formats import Reader
    from .evaluation import evaluate_sentences
    inv = "drop" if args.mode == "strict" else "repair"
    if args.pred.endswith(".npz"):
        return _evaluate_nbest(args, inv)
    gold = Reader(args.gold, args.gold_format, args.gold_scheme, args.encoding, args.strict, inv)
    pred = Reader(args.pred, args.pred_format, args.pred_scheme, args.encoding, args.strict, inv)
    ev = evaluate_sentences(gold.sentences(), pred.sentences(), gold.path, pred.path)
    if args.json:
        out = ev.as_dict()
        out.update({"gold_file": gold.path, "pred_file": pred.path, "mode": args.mode})
        print(json.dumps(out, indent=2))
    else:
        print(ev.table())
    return 0


def _evaluate_nbest(args, inv: str) -> int:
    from .corpus.formats import Reader
    from .corpus.model import Span
    from .evaluation import evaluate_spans, oracle
    from .nbest import NBestList
    nb = NBestList.load(args.pred)
    gold_sents = list(Reader(args.gold, args.gold_format, args.gold_scheme, args.encoding, args.strict,
                             inv).sentences())
    if len(gold_sents) != len(nb):
        raise NerstudioError(f"{args.pred}: {len(nb)} sentences but {args.gold} has {len(gold_sents)}")
    for k, (g, w) in enumerate(zip(gold_sents, nb.words)):
        if len(g.words) != len(w):
            raise NerstudioError(f"{args.gold}:{g.line}: sentence {k + 1} has {len(g.words)} tokens but "
                                 f"{len(w)} in {args.pred}")
    gold = [g.spans if nb.typed else [Span(a, b, "") for a, b, _ in g.spans] for g in gold_sents]
    ev = evaluate_spans(gold, nb.top(), [len(w) for w in nb.words])
    cands = [nb.candidate_spans(i) for i in range(len(nb))]
    ns = sorted({1, 5, 10, 20, max((nb.n_candidates(i) for i in range(len(nb))), default=1)})
    orc = {str(n): oracle(gold, cands, n) for n in ns}
    if args.json:
        out = ev.as_dict()
        out.update({"gold_file": args.gold, "pred_file": args.pred, "mode": args.mode,
                    "oracle": {n: {"precision": o.precision, "recall": o.recall, "f1": o.f1,
                                   "gold_in_list": o.gold_in_list} for n, o in orc.items()}})
        print(json.dumps(out, indent=2))
    else:
        print(f"N-best file {args.pred}: {len(nb)} sentences, task {'typed' if nb.typed else 'SCN'}")
        print("1-best:")
        print(ev.table())
        print("oracle F (best candidate per sentence among the first N):")
        for n, o in orc.items():
            print(f"  N={n:>3}: F {o.f1:6.2f}  P {o.precision:6.2f}  R {o.recall:6.2f}  "
                  f"gold among candidates in {o.gold_in_list}/{len(nb)} sentences")
    return 0


class Progress:
    """A one-line progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, label: str, total: int | None = None):
        self.label, self.total = label, total
        self.tty = sys.stderr.isatty()
        self._last = -1.0

    def update(self, done: int, total: int | None = None, note: str = "") -> None:
        import time as _t
        total = total or self.total
        now = _t.monotonic()
        final = total is not None and done >= total
        if not final and now - self._last < (0.1 if self.tty else 5.0):
            return
        self._last = now
        if total:
            frac = done / total
            bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
            text = f"{self.label} [{bar}] {done}/{total} {note}"
        else:
            text = f"{self.label} {done} {note}"
        if self.tty:
            sys.stderr.write("\r" + text[:160].ljust(80))
            if final:
                sys.stderr.write("\n")
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def message(self, text: str) -> None:
        if self.tty:
            sys.stderr.write("\r" + " " * 80 + "\r")
        sys.stderr.write(f"{self.label}: {text}\n")
        sys.stderr.flush()


def _read(path, args):
    from .corpus.formats import read_corpus
    return read_corpus(path, getattr(args, "format", None), getattr(args, "in_scheme", None), args.encoding,
                       args.strict)


def _tagger_params(args) -> dict:
    features = args.features or "paper"
    if features == "kt":
        raise ValueError("--features kt belongs to the perceptron tagger (--model perceptron)")
    return {"task": args.task, "features": features, "cutoff": 5 if args.cutoff is None else args.cutoff,
            "cutoff_on": args.cutoff_on, "l2": args.l2, "optimizer": args.optimizer, "max_iter": args.max_iter}


def _load_tagger(path):
    from .tagging import load_tagger
    return load_tagger(path)


def _train_perceptron_tagger(args) -> int:
    import time as _t
    from .tagging.perceptron import PerceptronTagger
    if args.features not in (None, "kt"):
        raise ValueError("the perceptron tagger uses the kt feature set (K&T Table 1)")
    t0 = _t.perf_counter()
    train = _read(args.train, args)
    dev = _read(args.dev, args) if args.dev else None
    params = {"task": args.task, "variant": args.variant, "bpm": args.bpm, "documents": not args.sentences,
              "gazetteer": None if args.gazetteer == "none" else args.gazetteer}
    for k in ("C", "epochs", "cutoff"):
        if getattr(args, k) is not None:
            params[k] = getattr(args, k)
    tagger = PerceptronTagger(**params)
    bar = Progress("train-tagger", tagger.epochs)

    def cb(st):
        note = f"{st.phase} pass {st.epoch}: word error {100 * st.word_error:.2f}%"
        if st.dev_f1 is not None:
            note += f", dev F {st.dev_f1:.2f}"
        if st.phase == "bpm":
            bar.message(note)
        else:
            bar.update(st.epoch, note=note)
    tagger.fit(train, dev, callback=cb)
    tagger.save(args.out)
    line = (f"wrote {args.out}: {tagger.n_weights_} weights, {tagger.epochs_run_} epochs"
            + (f" (best dev epoch {tagger.best_epoch_})" if tagger.best_epoch_ else "")
            + f", {_t.perf_counter() - t0:.1f}s")
    print(line, file=sys.stderr)
    if dev:
        ev = tagger.evaluate(dev)
        print(f"dev {args.dev}: F {ev['f1']:.2f} (P {ev['precision']:.2f}, R {ev['recall']:.2f})")
    return 0


def _summary(gold_sents, nb, label: str) -> str:
    from .corpus.model import Span
    from .evaluation import evaluate_spans, oracle
    if not any(s.spans for s in gold_sents):
        return f"{label}: {len(nb)} sentences (no gold entities: F not computed)"
    gold = [s.spans if nb.typed else [Span(a, b, "") for a, b, _ in s.spans] for s in gold_sents]
    f1 = evaluate_spans(gold, nb.top()).f1
    cands = [nb.candidate_spans(i) for i in range(len(nb))]
    n = max((nb.n_candidates(i) for i in range(len(nb))), default=1)
    return f"{label}: 1-best F {f1:.2f}, oracle F at N={n} {oracle(gold, cands).f1:.2f} ({len(nb)} sentences)"


def cmd_train_tagger(args) -> int:
    if args.model == "perceptron":
        return _train_perceptron_tagger(args)
    import time as _t
    from .tagging.maxent import MaxEntTagger
    for opt in ("C", "epochs"):
        if getattr(args, opt) is not None:
            raise ValueError(f"--{opt} belongs to the perceptron tagger (--model perceptron)")
    t0 = _t.perf_counter()
    train = _read(args.train, args)
    dev = _read(args.dev, args) if args.dev else None
    bar = Progress("train-tagger", args.max_iter)

    def cb(st):
        if st.message:
            bar.message(st.message)
        else:
            note = f"objective {st.objective:.1f}" + (f", dev F {st.dev_f1:.2f}" if st.dev_f1 is not None else "")
            bar.update(st.iteration, note=note)
    tagger = MaxEntTagger(dev_every=args.dev_every if dev else 0, **_tagger_params(args))
    tagger.fit(train.sentences, dev=dev.sentences if dev else None, callback=cb)
    bar.update(args.max_iter, note="done")
    tagger.save(args.out)
    line = f"wrote {args.out}: {tagger.n_static_} predicates, {int(tagger.mask_.sum())} parameters, "            f"{tagger.n_iter_} iterations, {_t.perf_counter() - t0:.1f}s"
    print(line, file=sys.stderr)
    if dev:
        nb = tagger.nbest(dev.sentences, n=20)
        print(_summary(dev.sentences, nb, f"dev {args.dev}"))
    return 0


def cmd_nbest(args) -> int:
    from .experiments.pipeline import sentence_ids
    tagger = _load_tagger(args.model)
    corpus = _read(args.input, args)
    if hasattr(tagger, "sentence_nbest"):  # a joint (K&T) tagger: re-scored document candidates
        doc, sent, _ = tagger.sentence_nbest(corpus, n=args.n)
        nb = doc if args.documents else sent
        if not args.documents:
            nb.ids = sentence_ids(corpus)
    elif not hasattr(tagger, "static_scores"):  # the perceptron tagger: exact k-best
        nb = tagger.nbest(corpus, n=args.n, documents=args.documents)
    if not hasattr(tagger, "static_scores"):
        nb.meta["source"] = os.path.abspath(args.input)
        nb.save(args.out)
        print(f"wrote {args.out}", file=sys.stderr)
        if not args.documents:
            print(_summary(corpus.sentences, nb, args.input))
        return 0
    if args.documents:
        raise ValueError("--documents needs a perceptron or joint tagger model")
    bar = Progress("nbest", len(corpus))
    nb = tagger.nbest(corpus.sentences, n=args.n, beam=args.beam, ids=sentence_ids(corpus),
                      progress=lambda d, t: bar.update(d, t))
    nb.meta["source"] = os.path.abspath(args.input)
    nb.save(args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    print(_summary(corpus.sentences, nb, args.input))
    return 0


def cmd_tag(args) -> int:
    from .corpus.formats import write_corpus
    tagger = _load_tagger(args.model)
    corpus = _read(args.input, args)
    bar = Progress("tag", len(corpus))
    if not hasattr(tagger, "static_scores"):  # the perceptron tagger decodes its own sequences
        pred = corpus.with_spans(_typed_for(tagger.predict_spans(corpus)))
        write_corpus(pred, args.out)
        print(f"wrote {args.out} ({corpus.format}, {corpus.scheme})", file=sys.stderr)
        if any(s.spans for s in corpus.sentences):
            from .evaluation import evaluate_sentences
            ev = evaluate_sentences(corpus.sentences, pred.sentences).overall
            print(f"{args.input}: {len(corpus)} sentences, F {ev.f1:.2f} (P {ev.precision:.2f}, "
                  f"R {ev.recall:.2f})")
        return 0
    nb = tagger.nbest(corpus.sentences, n=1, beam=args.beam, progress=lambda d, t: bar.update(d, t))
    pred = corpus.with_spans(nb.top())
    write_corpus(pred, args.out)
    print(f"wrote {args.out} ({corpus.format}, {corpus.scheme})", file=sys.stderr)
    print(_summary(corpus.sentences, nb, args.input))
    return 0


def _typed_for(spans):
    """Untyped (boundary-only) predictions get the placeholder type ENT so the file stays valid."""
    from .experiments.collins import with_placeholder_type
    if any(sp.label for ss in spans for sp in ss):
        return spans
    return [with_placeholder_type(ss) for ss in spans]


def cmd_jackknife(args) -> int:
    from .experiments.pipeline import jackknife, sentence_ids
    train = _read(args.train, args)
    decode = [(src, dst, _read(src, args)) for src, dst in args.decode]  # bad input fails before the work
    bar = Progress("jackknife")
    full = bool(args.model_out or decode)  # the model on all of TRAIN trains alongside the folds
    res = jackknife(train, folds=args.folds, n=args.n, tagger_params=_tagger_params(args), workers=args.workers,
                    progress=lambda p: bar.message(p.message) if p.final else None, full=full,
                    decode={str(k): (c.sentences, sentence_ids(c)) for k, (_, _, c) in enumerate(decode)})
    res.nbest.meta["source"] = os.path.abspath(args.train)
    res.nbest.save(args.out)
    print(f"wrote {args.out} ({args.folds} folds, {res.seconds:.1f}s)", file=sys.stderr)
    print(_summary(train.sentences, res.nbest, f"{args.train} (jackknifed)"))
    if args.model_out:
        res.model.save(args.model_out)
        print(f"wrote {args.model_out}", file=sys.stderr)
    for k, (src, dst, corpus) in enumerate(decode):
        nb = res.decoded[str(k)]
        nb.meta["source"] = os.path.abspath(src)
        nb.save(dst)
        print(f"wrote {dst}", file=sys.stderr)
        print(_summary(corpus.sentences, nb, src))
    return 0


def corpus_stats(reader) -> dict:
    docs = sents = toks = 0
    longest = 0
    in_doc = False
    ents: Counter = Counter()
    for kind, obj in reader.events():
        if kind == "docstart":
            in_doc = False
        elif kind == "sentence":
            if not in_doc:
                docs += 1
                in_doc = True
            sents += 1
            toks += len(obj.words)
            longest = max(longest, len(obj.words))
            ents.update(sp.label for sp in obj.spans)
    return {"file": reader.path, "format": reader.format, "scheme": reader.scheme, "encoding": reader.encoding,
            "documents": docs, "sentences": sents, "tokens": toks, "entities": sum(ents.values()),
            "entities_by_type": dict(sorted(ents.items())), "longest_sentence": longest,
            "repairs": reader.repairs}


def cmd_stats(args) -> int:
    from .corpus.formats import Reader
    reader = Reader(args.file, args.format, args.in_scheme, args.encoding, args.strict)
    st = corpus_stats(reader)
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    print(f"{st['file']}: {st['format']}, {st['scheme'].upper()}, {st['encoding']}")
    for key in ("documents", "sentences", "tokens", "entities"):
        print(f"  {key:<12}{st[key]:>10,d}")
    for lab, n in st["entities_by_type"].items():
        print(f"    {lab or '(untyped)':<10}{n:>10,d}")
    print(f"  longest sentence: {st['longest_sentence']} tokens")
    if st["repairs"]:
        print(f"  invalid transitions repaired: {st['repairs']}")
    return 0


# reranker settings the command line offers (argparse destinations)
_LEARN_OPTIONS = ("rounds", "epsilon", "eval_every", "epochs", "beta", "C", "bpm", "average", "seed", "shuffle",
                  "lam", "word_features", "max_sentences")


def _learner_keys(algo: str) -> set[str]:
    """The command-line settings ``algo`` takes: those its learner's constructor accepts."""
    import inspect
    from .rerank.model import learner_class
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
        opts = ", ".join("--" + ("no-shuffle" if k == "shuffle" else k.replace("_", "-")) for k in unused)
        raise ValueError(f"{opts} {'does' if len(unused) == 1 else 'do'} not apply to {', '.join(algos)}")


def _stats_printer(label: str):
    bar = Progress(label)

    def cb(st):
        parts = [f"{st.unit} {st.step}"]
        if st.loss is not None:
            parts.append(f"loss {st.loss:.1f}")
        if st.mistakes is not None:
            parts.append(f"{st.mistakes} mistakes")
        if st.dev_f1 is not None:
            parts.append(f"dev P/R/F {st.dev_precision:.2f}/{st.dev_recall:.2f}/{st.dev_f1:.2f}" + (" *" if st.best else ""))
        parts.append(f"{st.seconds:.1f}s")
        bar.message(", ".join(parts))
    return cb


def cmd_train_reranker(args) -> int:
    import time as _t
    from .nbest import NBestList
    from .rerank.model import train_reranker
    _check_learner_options(args, [args.algo])
    t0 = _t.perf_counter()
    train = NBestList.load(args.train)
    dev = NBestList.load(args.dev) if args.dev else None
    if train.gold is None:
        raise ValueError(f"{args.train}: the training N-best list has no gold entities")
    if dev is not None and dev.gold is None:
        raise ValueError(f"{args.dev}: the development N-best list has no gold entities")
    bar = Progress("features")
    model = train_reranker(train, dev, args.algo, _learner_params(args, args.algo),
                           {"min_sentences": args.min_sentences}, callback=_stats_printer(args.algo),
                           progress=lambda stage, d, n: bar.update(d, n, stage))
    model.save(args.out)
    lr = model.learner
    best = f", best {lr.unit} {lr.best_step_}" if getattr(lr, "best_step_", None) is not None else ""
    print(f"wrote {args.out}: {args.algo}, {model.features.n_features} features{best}, "
          f"{_t.perf_counter() - t0:.1f}s", file=sys.stderr)
    if dev is not None:
        d = model.data(dev)
        base = d.prf(np.zeros(len(d), dtype=np.int64))
        new = d.prf(model.predict(d))
        print(f"dev {args.dev}: baseline F {base[2]:.2f}, reranked F {new[2]:.2f} "
              f"(P {new[0]:.2f}, R {new[1]:.2f}; relative error reduction "
              f"{relative_error_reduction(base[2], new[2]):.1f}%)")
    return 0


def cmd_rerank(args) -> int:
    from .corpus.formats import read_corpus, write_corpus
    from .corpus.model import Corpus, Document, Sentence
    from .nbest import NBestList
    from .rerank.model import RerankerModel
    model = RerankerModel.load(args.model)
    nb = NBestList.load(args.nbest)
    d, choice = model.rerank(nb)
    spans = nb.top(choice)
    if not nb.typed:
        from .experiments.collins import with_placeholder_type
        spans = [with_placeholder_type(ss) for ss in spans]
    src = args.corpus or nb.meta.get("source")
    corpus = None
    if src and os.path.exists(src):
        corpus = read_corpus(src, encoding=args.encoding)
        if [tuple(s.words) for s in corpus.sentences] != [tuple(w) for w in nb.words]:
            if args.corpus:
                raise ValueError(f"{args.corpus}: its sentences are not those of {args.nbest}")
            corpus = None
    if corpus is None:
        sents = [Sentence(words=tuple(w), spans=list(sp)) for w, sp in zip(nb.words, spans)]
        corpus = Corpus([Document(sents)], format="columns", scheme="iob2")
        write_corpus(corpus, args.out)
    else:
        write_corpus(corpus.with_spans(spans), args.out)
    print(f"wrote {args.out} ({corpus.format}, {corpus.scheme})", file=sys.stderr)
    if d.has_gold:
        base = d.prf(np.zeros(len(d), dtype=np.int64))
        new = d.prf(choice)
        changed = int((choice != 0).sum())
        out = {"baseline": dict(zip(("precision", "recall", "f1"), base)),
               "reranked": dict(zip(("precision", "recall", "f1"), new)),
               "rel_error_reduction": relative_error_reduction(base[2], new[2]), "changed_sentences": changed}
        if args.json:
            print(json.dumps(out, indent=2))
        else:
            print(f"baseline F {base[2]:.2f}, reranked F {new[2]:.2f} (P {new[0]:.2f}, R {new[1]:.2f}); "
                  f"{changed} of {len(d)} sentences changed; relative error reduction "
                  f"{out['rel_error_reduction']:.1f}%")
    return 0


def cmd_explain_model(args) -> int:
    from .nbest import NBestList
    from .rerank.importance import format_table, model_importance
    from .rerank.model import RerankerModel
    if args.top < 1:
        raise ValueError("--top must be at least 1")
    model = RerankerModel.load(args.model)
    nb = NBestList.load(args.nbest)
    result = model_importance(model, model.data(nb), against=args.against, sort=args.sort)
    if args.json:
        print(json.dumps(result.to_dict(args.top), indent=2))
    else:
        print(format_table(result, args.top, nb.ids))
    return 0


def cmd_experiment(args) -> int:
    if args.suite == "kazama":
        if args.preset is not None:
            raise ValueError("--preset applies to the collins suite only")
        for k, v in (("task", "typed"), ("folds", 5), ("n", 20)):
            if getattr(args, k) is None:
                setattr(args, k, v)
        return _kazama_experiment(args)
    from .experiments.collins import ExperimentConfig, run_experiment
    from .rerank.model import ALGORITHMS
    algos = None if not args.systems else tuple(a.strip() for a in args.systems.split(",") if a.strip())
    for a in algos or ():
        if a not in ALGORITHMS:
            raise ValueError(f"unknown system {a!r} (choose from {', '.join(ALGORITHMS)})")
    cfg = ExperimentConfig.from_preset(args.preset, task=args.task, tagger_features=args.features,
                                       folds=args.folds, n=args.n, workers=args.workers,
                                       min_sentences=args.min_sentences, systems=algos, encoding=args.encoding,
                                       reranker_gazetteers=args.global_gazetteers, reranker_context=args.context)
    _check_learner_options(args, list(cfg.systems))
    for k, attr in (("rounds", "boost_rounds"), ("epsilon", "boost_epsilon"), ("eval_every", "boost_eval_every"),
                    ("epochs", "epochs"), ("beta", "beta"), ("C", "margin_C"), ("seed", "seed"),
                    ("max_sentences", "kernel_sentences"), ("word_features", "kernel_word_features")):
        if getattr(args, k, None) is not None:
            setattr(cfg, attr, getattr(args, k))
    bar = Progress("experiment")
    report = run_experiment(args.train, args.dev, args.test, args.out, cfg,
                            progress=lambda stage, msg: bar.message(f"[{stage}] {msg}"))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        from .experiments.collins import report_markdown
        print(report_markdown(report))
    print(f"wrote {args.out}/report.md, report.json, pred-*-test.conll, curves.png "
          f"({report['seconds_total']:.0f}s)", file=sys.stderr)
    return 0


def _kazama_experiment(args) -> int:
    from .experiments.kazama import SYSTEMS, KazamaConfig, report_markdown, run_kazama
    systems = tuple(a.strip() for a in (args.systems or ",".join(SYSTEMS)).split(",") if a.strip())
    bad = [a for a in systems if a not in SYSTEMS]
    if bad:
        raise ValueError(f"unknown system {bad[0]!r} (choose from {', '.join(SYSTEMS)})")
    if args.task != "typed" and args.task != "scn":
        raise ValueError("--task must be typed or scn")
    cfg = KazamaConfig(task=args.task, folds=args.folds, n=args.n, workers=args.workers, systems=systems,
                       encoding=args.encoding, gazetteer=None if args.gazetteer == "none" else args.gazetteer)
    for k, attr in (("epochs", "epochs"), ("C", "C_margin"), ("C_joint", "C_joint"), ("bpm", "bpm"),
                    ("seed", "seed"), ("joint_epochs", "joint_epochs"), ("n_test", "n_test"),
                    ("edge_templates", "edge_templates")):
        if getattr(args, k, None) is not None:
            setattr(cfg, attr, getattr(args, k))
    if args.C_rerank is not None:
        cfg.C_rerank1, cfg.C_rerank2 = args.C_rerank
    for item in args.C_grid or ():
        name, _, values = item.partition("=")
        if name not in ("margin", "candidate", "proposed", "reranking1", "reranking2") or not values:
            raise ValueError(f"--C-grid {item!r}: expected SYSTEM=C1,C2,... with SYSTEM margin, candidate, "
                             "proposed, reranking1 or reranking2")
        cfg.C_grids = dict(cfg.C_grids or {}, **{name: tuple(float(v) for v in values.split(",") if v.strip())})
    if args.n_primes:
        cfg.n_primes = tuple(int(x) for x in args.n_primes.split(",") if x.strip())
    if args.average:
        cfg.average_joint = True
    bar = Progress("experiment")
    report = run_kazama(args.train, args.dev, args.test, args.out, cfg,
                        progress=lambda stage, msg: bar.message(f"[{stage}] {msg}"))
    print(json.dumps(report, indent=2) if args.json else report_markdown(report))
    print(f"wrote {args.out}/report.md, report.json, pred-*-test.conll, curves.png "
          f"({report['seconds_total']:.0f}s)", file=sys.stderr)
    return 0


def cmd_gui(args) -> int:
    from .gui.app import run
    return run(args.path, screenshot=args.screenshot)


COMMANDS = {"convert": cmd_convert, "evaluate": cmd_evaluate, "stats": cmd_stats, "gui": cmd_gui,
            "train-tagger": cmd_train_tagger, "nbest": cmd_nbest, "tag": cmd_tag, "jackknife": cmd_jackknife,
            "train-reranker": cmd_train_reranker, "rerank": cmd_rerank, "experiment": cmd_experiment,
            "explain-model": cmd_explain_model}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    debug = bool(getattr(args, "debug", False)) or os.environ.get("NERSTUDIO_DEBUG") == "1"
    try:
        return COMMANDS[args.command](args) or 0
    except NerstudioError as exc:
        if debug:
            traceback.print_exc()
        print(f"nerstudio: error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # bad option values (unknown scheme or format names, ...)
        if debug:
            traceback.print_exc()
        print(f"nerstudio: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nerstudio: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        if debug:
            traceback.print_exc()
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"nerstudio: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a bug: say so in one line unless --debug
        if debug:
            raise
        print(f"nerstudio: internal error: {type(exc).__name__}: {exc} (run with --debug for details)",
              file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
