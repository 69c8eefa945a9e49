"""The command line's grammar: every command, its arguments and options (argparse).

Kept apart from what the commands do (:mod:`.corpus_commands`, :mod:`.model_commands`,
:mod:`.reranker_commands`) because it is read on its own: it is the reference of the options, and
long because it declares every one of them, one argument per line. Usage errors exit with status 1 like every other user error (:class:`ArgumentParser`).
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from .. import __version__
from ..corpus.detect import FORMATS
from ..corpus.foreign import writable
from ..corpus.schemes import SCHEMES
from ..experiments.defaults import kazama_systems, registered
from ..learners import DEFAULT_SYSTEMS, RERANKERS, TAGGERS

USER_ERROR = 1  # every error the user can fix, usage errors included

INTERNAL_ERROR = 3


class ArgumentParser(argparse.ArgumentParser):
    """argparse with our exit status for usage errors (1, like every other user error)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USER_ERROR, f"{self.prog}: error: {message}\n")


def _feature_set(text: str) -> str:
    """A tagger feature set: ``kt`` or a max-ent set as :func:`nerstudio.tagging.features.parse_feature_set`
    reads it (``conll``, ``conll+gaz``, ``conll+gaz:persons/locations``, ``conll+rich``, …)."""
    from ..tagging.features import parse_feature_set
    from ..tagging.local_features import parse_kt_features

    try:
        (parse_kt_features if text.split("+")[0] == "kt" else parse_feature_set)(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _format_option(
    p: argparse.ArgumentParser, *names: str, help: str, output: bool = False, **kw
) -> None:
    """A format option whose help lists the format table (corpus.detect.FORMATS: nerstudio's own
    and corpus.foreign's handlers; for an ``output``, those it writes); a name it lacks is
    refused with the same list when read."""
    names_ = [f for f in FORMATS if writable(f)] if output else FORMATS
    p.add_argument(*names, metavar="FORMAT", help=f"{help}: {', '.join(names_)}", **kw)


def _scheme_option(p: argparse.ArgumentParser, *names: str, help: str, **kw) -> None:
    """A tag-scheme option whose help lists the schemes registry (corpus.schemes.SCHEMES)."""
    p.add_argument(
        *names,
        metavar="SCHEME",
        help=f"{help}: {', '.join(SCHEMES)}",
        **kw,
    )


def _registry_choice(
    p, flag: str, learner: str, key: str, *, dest: str | None = None, given_only: bool = False
) -> None:
    """An option whose names, default and help are the registry row's (:mod:`nerstudio.learners`:
    the tagger ``learner``'s setting ``key``); with ``given_only`` its default is None (a preset
    or a configuration fills it in), the help still naming the row's."""
    row = TAGGERS[learner]
    choice, default = row.choices[key], row.defaults[key]
    p.add_argument(
        flag,
        dest=dest or key,
        choices=choice.values,
        default=None if given_only else default,
        help=f"{choice.help} (default {default})",
    )


def _add_read_options(p: argparse.ArgumentParser, prefix: str = "", what: str = "input") -> None:
    dest = prefix.replace("-", "_")
    _format_option(
        p,
        f"--{prefix}format" if prefix else "--from",
        dest=f"{dest}format",
        help=f"format of the {what}, detected if omitted",
    )
    _scheme_option(
        p,
        f"--{prefix}scheme" if prefix else "--from-scheme",
        dest=f"{dest}in_scheme",
        help=f"tag scheme of the {what}, detected if omitted",
    )


def _add_executor_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--executor",
        default="local",
        metavar="WHERE",
        help="where independent work (folds, grid points) runs: local (processes here, the default), "
        "local:N, dask-local[:N] (a Dask LocalCluster of N workers) or dask://HOST:PORT (a running "
        "Dask scheduler); Dask needs pip install 'nerstudio[dask]'",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="nerstudio",
        description="Named-entity annotation and N-best reranking workbench (Collins 2002).",
    )
    parser.add_argument("--version", action="version", version=f"nerstudio {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    common = ArgumentParser(add_help=False)
    common.add_argument(
        "--encoding",
        default=None,
        help="text encoding of input files (default: UTF-8; e.g. latin-1)",
    )
    common.add_argument(
        "--strict",
        action="store_true",
        help="refuse any loss: invalid tag transitions are errors instead of being repaired "
        "the conlleval way, and whatever a reader or a writer would drop, trim, rewrite "
        "or set aside (a note: line without --strict) is an error; nothing is written",
    )
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )

    p = sub.add_parser(
        "convert",
        parents=[common],
        help="convert a corpus between formats and tag schemes",
        description="Convert IN to OUT. Written atomically; with the same format and scheme the "
        "output is byte-identical to the input.",
    )
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    _add_read_options(p)
    _format_option(
        p, "--to", dest="to_format", output=True, help="output format (default: the input's)"
    )
    _scheme_option(p, "--scheme", help="output tag scheme (default: the input's)")

    p = sub.add_parser(
        "evaluate",
        parents=[common],
        help="score a prediction against gold (conlleval spans)",
        description="Exact-span precision, recall and F1, overall and per type.",
    )
    p.add_argument("gold", metavar="GOLD")
    p.add_argument(
        "pred",
        metavar="PRED",
        help="a corpus file, or an N-best file (.npz): then its 1-best "
        "and oracle F at N = 1, 5, 10, 20 are reported",
    )
    p.add_argument("--json", action="store_true", help="print a JSON object instead of a table")
    p.add_argument(
        "--mode",
        choices=("conlleval", "strict"),
        default="conlleval",
        help="conlleval: invalid transitions are repaired (= seqeval default); strict: they form "
        "no entity (= seqeval strict mode for IOB2/BIOES)",
    )
    _format_option(p, "--gold-format", help="format of GOLD, detected if omitted")
    _format_option(p, "--pred-format", help="format of PRED, detected if omitted")
    _scheme_option(p, "--gold-scheme", help="tag scheme of GOLD, detected if omitted")
    _scheme_option(p, "--pred-scheme", help="tag scheme of PRED, detected if omitted")

    p = sub.add_parser(
        "stats", parents=[common], help="documents, sentences, tokens and entities of a corpus"
    )
    p.add_argument("file", metavar="FILE")
    _add_read_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON object")

    tagger = ArgumentParser(add_help=False)
    tagger.add_argument(
        "--task",
        choices=registered("nerstudio.tagging.maxent", "TASKS"),
        default="typed",
        help="typed entities (CoNLL types) or the paper's boundary-only SCN task",
    )
    tagger.add_argument(
        "--features",
        type=_feature_set,
        default=None,
        metavar="SET",
        help="paper: Collins 2002's templates (max-ent default); conll: plus POS/chunk, affixes, "
        "wider window; +gaz: plus the bundled gazetteers (+gaz:LISTS: some, families or "
        "lists joined by /); +rich: more shape and affix templates; +clusters[:BITS]: Brown-cluster "
        "path prefixes in a ±2 window; +biglex: the lowercase lexicon from a large corpus; kt: "
        "Kazama & Torisawa's Table 1 (the perceptron tagger's set); kt+rich: plus shapes, "
        "5-affixes and a lowercase lexicon (then +clusters, +biglex)",
    )
    tagger.add_argument(
        "--cutoff",
        type=int,
        default=None,
        help="keep (predicate, tag) pairs seen this often (max-ent, default 5); perceptron: "
        "surface predicates seen this often (default 2)",
    )
    tagger.add_argument(
        "--cutoff-on",
        choices=("pair", "predicate"),
        default=None,
        help="count (predicate, tag) pairs (the paper; default for --features paper) or "
        "predicates (default for --features conll)",
    )
    tagger.add_argument(
        "--l2", type=float, default=1.0, help="L2 penalty of the max-ent tagger's objective"
    )
    _registry_choice(tagger, "--optimizer", "maxent", "optimizer")
    tagger.add_argument(
        "--max-iter",
        type=int,
        default=100,
        help="iterations of --optimizer lbfgs or gis (default 100)",
    )
    tagger.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="at most this many epochs: of the max-ent tagger's --optimizer adagrad (default "
        f"{TAGGERS['maxent'].defaults['epochs']}), of the perceptron tagger (default 30)",
    )
    tagger.add_argument(
        "--alphabet",
        choices=registered("nerstudio.tagging.tag_alphabets", "ALPHABETS"),
        default="scn",
        help="the tags the tagger predicts: scn (Collins' start/continue) or bilou (begin, inside, "
        "last, unit); its N-best lists are SCN either way",
    )

    p = sub.add_parser(
        "train-tagger",
        parents=[common, tagger],
        help="train the maximum-entropy tagger or the structured perceptron tagger",
    )
    p.add_argument("train", metavar="TRAIN")
    p.add_argument(
        "--model",
        choices=("maxent", "perceptron"),
        default="maxent",
        help="maxent: Collins 2002's tagger (L-BFGS or GIS); perceptron: Collins 2002a / Kazama & "
        "Torisawa's structured perceptron on document sequences",
    )
    g = p.add_argument_group("perceptron tagger")
    g.add_argument(
        "--variant",
        choices=registered("nerstudio.tagging.perceptron", "VARIANTS"),
        default="margin",
    )
    g.add_argument("--C", dest="C", type=float, default=None, help="margin of the margin variant")
    g.add_argument(
        "--bpm", type=int, default=0, help="BPM initialisation: number of shuffled single passes"
    )
    g.add_argument(
        "--gazetteer",
        choices=("none", "train", "lists", "train+lists"),
        default="none",
        help="gazetteer features: the training data's entities, the bundled lists, or both",
    )
    g.add_argument(
        "--sentences", action="store_true", help="sentences, not documents, as sequences"
    )
    p.add_argument("--out", required=True, metavar="MODEL", help="model file to write (.npz)")
    p.add_argument(
        "--dev", metavar="DEV", help="development corpus: F reported during and after training"
    )
    p.add_argument(
        "--dev-every",
        type=int,
        default=25,
        help="evaluate on DEV every K iterations of lbfgs or gis (0: only at the end; adagrad "
        "evaluates after every epoch)",
    )

    p = sub.add_parser(
        "nbest", parents=[common], help="decode a corpus into N-best lists (beam search)"
    )
    p.add_argument("model", metavar="MODEL")
    p.add_argument("input", metavar="INPUT")
    p.add_argument("--out", required=True, metavar="NBEST", help="N-best file to write (.npz)")
    p.add_argument("--n", type=int, default=20, help="candidates per sentence")
    p.add_argument("--beam", type=int, default=None, help="beam width (default: N)")
    p.add_argument(
        "--documents",
        action="store_true",
        help="perceptron tagger: one list per document (whole-document candidates)",
    )

    p = sub.add_parser(
        "tag", parents=[common], help="tag a corpus with its 1-best analysis, in the input's format"
    )
    p.add_argument("model", metavar="MODEL")
    p.add_argument("input", metavar="INPUT")
    p.add_argument("--out", required=True, metavar="PRED")
    p.add_argument("--beam", type=int, default=20, help="beam width")

    p = sub.add_parser(
        "jackknife", parents=[common, tagger], help="K-fold N-best lists for a training corpus"
    )
    p.add_argument("train", metavar="TRAIN")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--n", type=int, default=20, help="candidates per sentence")
    p.add_argument(
        "--out", required=True, metavar="NBEST", help="jackknifed N-best file for TRAIN (.npz)"
    )
    p.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    _add_executor_option(p)
    p.add_argument(
        "--model-out", metavar="MODEL", help="also train on all of TRAIN and save that model"
    )
    p.add_argument(
        "--decode",
        nargs=2,
        action="append",
        metavar=("CORPUS", "NBEST"),
        default=[],
        help="with the model trained on all of TRAIN, decode CORPUS into NBEST (repeatable)",
    )

    learn = ArgumentParser(add_help=False)
    g = learn.add_argument_group("reranker settings")
    g.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="boosting rounds (default 10000; experiment 100000)",
    )
    g.add_argument(
        "--epsilon", type=float, default=None, help="boosting smoothing epsilon (default 0.0025)"
    )
    g.add_argument("--eval-every", type=int, default=None, help="boosting: dev F every K rounds")
    g.add_argument("--epochs", type=int, default=None, help="perceptron epochs (default 10)")
    g.add_argument(
        "--beta",
        type=float,
        default=None,
        help="perceptron weight scale of L(x) (default: searched on the dev set)",
    )
    g.add_argument("--C", dest="C", type=float, default=None, help="margin perceptron margin")
    g.add_argument(
        "--bpm", type=int, default=None, help="BPM initialisation: number of shuffled passes"
    )
    g.add_argument(
        "--average", action="store_true", default=None, help="margin perceptron: average weights"
    )
    g.add_argument("--seed", type=int, default=None, help="shuffling seed")
    g.add_argument(
        "--no-shuffle",
        dest="shuffle",
        action="store_false",
        default=None,
        help="perceptrons: visit sentences in file order",
    )
    g.add_argument(
        "--lam",
        type=float,
        default=None,
        help="kernel perceptron: fragment-length decay (0 < lam <= 1)",
    )
    g.add_argument(
        "--word-features",
        action="store_true",
        default=None,
        help="kernel perceptron: count shared word features, not just equal words",
    )
    g.add_argument(
        "--max-sentences", type=int, default=None, help="kernel perceptron: training sentences used"
    )
    g.add_argument(
        "--feature-kernel",
        dest="global_features",
        action="store_true",
        default=None,
        help="kernel perceptron: add the cosine of the candidates' global-feature vectors to the "
        "tagging kernel (the typed experiment's default)",
    )
    g.add_argument(
        "--no-feature-kernel",
        dest="global_features",
        action="store_false",
        default=None,
        help="kernel perceptron: the tagging kernel alone (the preset's choice)",
    )
    g.add_argument(
        "--min-sentences",
        type=int,
        default=5,
        help="keep global features seen on at least this many training sentences",
    )

    p = sub.add_parser(
        "train-reranker",
        parents=[learn],
        help="train a reranker on N-best lists",
        description="Global features from TRAIN's candidates, then boosting or a perceptron; "
        "the dev list picks the best round/epoch and (perceptrons) beta.",
    )
    p.add_argument(
        "--train", required=True, metavar="NBEST", help="(jackknifed) training N-best file"
    )
    p.add_argument("--dev", metavar="NBEST", help="development N-best file")
    p.add_argument(
        "--algo",
        required=True,
        choices=tuple(RERANKERS),
        help="; ".join(f"{name}: {row.title}" for name, row in RERANKERS.items()),
    )
    p.add_argument("--out", required=True, metavar="MODEL", help="reranker model to write (.npz)")

    p = sub.add_parser(
        "rerank",
        help="pick a candidate per sentence with a reranker model",
        description="Rerank NBEST with MODEL and write the chosen entities as a corpus: in the "
        "original corpus's format when it is known (--corpus, or the file the "
        "N-best list was decoded from), else two columns (word, IOB2 tag).",
    )
    p.add_argument("model", metavar="MODEL")
    p.add_argument("nbest", metavar="NBEST")
    p.add_argument("--out", required=True, metavar="PRED")
    p.add_argument("--corpus", metavar="CORPUS", help="the corpus NBEST was decoded from")
    p.add_argument("--encoding", default=None, help="text encoding of CORPUS")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")

    p = sub.add_parser(
        "explain-model",
        help="rank a reranker's features by the decisions they move on an N-best list",
        description="Which templates and features move the reranker's decisions on NBEST: in every "
        "sentence where its pick differs from the tagger's top candidate (or, with "
        "--against runner-up, from its own second choice), the features that separate "
        "the two, counted and summed by their contribution to the score difference.",
    )
    p.add_argument("model", metavar="MODEL")
    p.add_argument("nbest", metavar="NBEST")
    p.add_argument("--top", type=int, default=30, help="rows per table (default 30)")
    p.add_argument(
        "--against",
        choices=registered("nerstudio.rerank.importance", "AGAINST"),
        default="baseline",
    )
    p.add_argument(
        "--sort",
        choices=registered("nerstudio.rerank.importance", "SORTS"),
        default="count",
        help="rank by decisions moved (default) or by the contribution toward them",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the rankings as JSON (every sentence index, 0-based)",
    )

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
        choices=registered("nerstudio.rerank.context", "SCOPES"),
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
        choices=registered("nerstudio.experiments.collins", "PRESETS"),
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
        choices=registered("nerstudio.tagging.maxent", "TASKS"),
        default=None,
        help="default typed",
    )
    p.add_argument(
        "--features",
        type=_feature_set,
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
        choices=registered("nerstudio.tagging.tag_alphabets", "ALPHABETS"),
        default=None,
        help="the tags the taggers predict: bilou (begin, inside, last, unit) or scn (Collins' "
        "start/continue); collins suite: the max-ent tagger's, default bilou (the preset: scn), "
        "its N-best lists are SCN either way; kazama suite: the perceptron taggers', default scn",
    )
    _registry_choice(
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
        f"collins2002 preset); kazama: {', '.join(kazama_systems())} "
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
    _add_executor_option(p)
    p.add_argument("--encoding", default=None, help="text encoding of the corpora")
    p.add_argument("--json", action="store_true", help="print report.json to stdout")

    p = sub.add_parser(
        "sweep",
        help="train a learner at every point of a grid of settings: dev F table and plot",
        description="Train ALGO once per point of GRID (every combination of the values) and "
        "score it on DEV; write DIR/sweep.md (the table), sweep.json and sweep.png "
        "(dev F against each setting). A reranker sweeps N-best files (.npz), a tagger "
        "(maxent, perceptron-tagger) corpora.",
    )
    p.add_argument(
        "--algo",
        required=True,
        metavar="ALGO",
        help=f"a reranker ({', '.join(RERANKERS)}) or a tagger (maxent, perceptron-tagger)",
    )
    p.add_argument(
        "--train",
        required=True,
        metavar="TRAIN",
        help="training N-best file (rerankers) or corpus (taggers)",
    )
    p.add_argument("--dev", required=True, metavar="DEV", help="development N-best file or corpus")
    p.add_argument(
        "--grid",
        required=True,
        metavar="GRID",
        help="settings and their values, e.g. 'rounds=1e4,1e5 epsilon=0.001,0.0025' (the learner's "
        "own setting names; rerankers also min_sentences)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting kept fixed at every point (repeatable)",
    )
    p.add_argument("--out", required=True, metavar="DIR")
    _add_executor_option(p)
    p.add_argument(
        "--workers", type=int, default=None, help="local processes (default: one per core)"
    )
    p.add_argument("--encoding", default=None, help="text encoding of the corpora")
    p.add_argument("--json", action="store_true", help="print sweep.json to stdout")

    p = sub.add_parser(
        "rank-uncertain",
        help="the sentences of an N-best list, most uncertain first",
        description="Annotation order by uncertainty. Per sentence: mass, the probability of the "
        "tagger's top candidate (softmax of L(x) over the list); margin, the top "
        "candidate's probability minus the second's; with --model, disagreement: whether "
        "the reranker picks another candidate than the tagger's top.",
    )
    p.add_argument("nbest", metavar="NBEST")
    p.add_argument(
        "--model", metavar="RERANKER", help="a reranker model: adds the disagreement column"
    )
    p.add_argument(
        "--by",
        choices=registered("nerstudio.rerank.uncertainty", "MEASURES"),
        default="mass",
        help="order by (default mass; disagreement needs --model: disagreeing sentences first, "
        "then by mass)",
    )
    p.add_argument(
        "--top", type=int, default=20, metavar="K", help="sentences listed (default 20; 0: all)"
    )
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")

    p = sub.add_parser(
        "agreement",
        parents=[common],
        help="agreement between two annotations of the same text",
        description="Span precision, recall and F1 of B against A (exact match), Cohen's kappa on "
        "the tokens' IOB2 tags, both per type, and the sentences that differ. The files "
        "must hold the same tokens: the first that differs is an error naming both lines.",
    )
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of tables")
    p.add_argument(
        "--list",
        type=int,
        default=20,
        metavar="K",
        help="differing sentences listed (default 20; 0: all)",
    )

    p = sub.add_parser(
        "errors",
        parents=[common],
        help="error analysis of systems' output against gold",
        description="F by entity type, entity length, sentence length and (with --train) entities "
        "seen / unseen in training, and the entities by kind of error (type, boundary, "
        "boundary+type, missed, spurious), the systems side by side.",
    )
    p.add_argument("gold", metavar="GOLD")
    p.add_argument(
        "system", metavar="SYSTEM", nargs="+", help="a system's output: the same sentences, tagged"
    )
    p.add_argument(
        "--train", metavar="TRAIN", help="the training corpus: adds F over seen / unseen entities"
    )
    p.add_argument("--json", action="store_true", help="print a JSON object instead of tables")
    p = sub.add_parser(
        "adjudicate",
        parents=[common],
        help="merge two or more annotations of the same text",
        description="Merge annotators' files of the same tokens (INCEpTION's curation): entities "
        "all annotators agree on are kept; each disagreement (overlapping entities that "
        "differ) is decided by the policy; what no policy decides gets no entity and is "
        "listed. Prints the agreement before and the decisions. The files must hold the "
        "same tokens: the first that differs is an error naming both lines.",
    )
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="two or more annotations (A, B, C … in this order)"
    )
    p.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="OUTPUT",
        help="merged corpus to write; its extension names the format as for convert, else A's",
    )
    p.add_argument(
        "--majority",
        action="store_true",
        help="take the version more than half the annotators hold",
    )
    p.add_argument(
        "--prefer",
        metavar="WHO",
        help="take this annotator's version (A, B, … or 1, 2, … or a file name); after --majority "
        "when both are given",
    )
    p.add_argument("--report", metavar="JSON", help="also write the report as JSON")
    p.add_argument(
        "--list",
        type=int,
        default=20,
        metavar="K",
        help="disagreements listed (default 20; 0: all)",
    )
    _add_read_options(p)

    p = sub.add_parser(
        "preannotate",
        parents=[common],
        help="a model's entities as the starting gold of a corpus",
        description="Predict the entities of INPUT's sentences with a model folder (the tagger's "
        "best candidate, or the reranker's pick among the tagger's 20 best) and write "
        "them as gold to OUTPUT, for an annotator to correct. By default only sentences "
        "with no entity are filled; --replace predicts every sentence.",
    )
    p.add_argument("input", metavar="INPUT")
    p.add_argument(
        "--model",
        required=True,
        metavar="FOLDER",
        help="tagger.npz (or sequence-tagger.npz) and optionally reranker.npz or reranker-<system>.npz, "
        "as the demo model and nerstudio experiment's output hold them; or a tagger file",
    )
    p.add_argument(
        "--system", metavar="NAME", help="the reranker-NAME.npz to use when FOLDER holds several"
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="predict every sentence, replacing its entities (default: only sentences with none)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="OUTPUT",
        help="corpus to write; its extension names the format as for convert, else the input's",
    )
    _add_read_options(p)

    p = sub.add_parser("gui", help="open the desktop application")
    p.add_argument(
        "path",
        nargs="?",
        metavar="CORPUS",
        help="corpus to open (default: the bundled demo corpus)",
    )
    p.add_argument(
        "--screenshot", metavar="PNG", help="render the window to PNG after loading and exit"
    )

    p = sub.add_parser(
        "install-desktop",
        help="add nerstudio to the desktop's launcher (.desktop entry, icons, AppStream metainfo)",
    )
    p.add_argument(
        "--prefix",
        metavar="DIR",
        help="data folder to install into (default: $XDG_DATA_HOME, else ~/.local/share)",
    )
    p.add_argument(
        "--uninstall", action="store_true", help="remove what an earlier install-desktop wrote"
    )
    return parser
