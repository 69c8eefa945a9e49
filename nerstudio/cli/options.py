"""The options several commands share, and the parsers that carry them.

Every command module (:mod:`nerstudio.cli.commands`) declares its own options beside what it does;
what more than one command takes is here: the reading options (format, tag scheme, encoding,
``--strict``), the executor, the tagger's settings (``train-tagger``, ``jackknife``) and the
rerankers' settings (``train-reranker``, ``experiment``), each with the function that reads it
back from the parsed command line. The lists in help texts and ``choices=`` come from the
registries (:mod:`nerstudio.corpus.detect`, :mod:`nerstudio.corpus.schemes`,
:mod:`nerstudio.choices`, :mod:`nerstudio.learners`), never typed here. Usage errors exit with
status 1 like every other user error (:class:`ArgumentParser`).
"""

from __future__ import annotations

import argparse
import sys
from typing import NamedTuple, NoReturn

from .. import choices
from ..corpus.detect import FORMATS
from ..corpus.foreign import writable
from ..corpus.schemes import SCHEMES
from ..errors import SettingsError
from ..learners import TAGGERS

USER_ERROR = 1  # every error the user can fix, usage errors included

INTERNAL_ERROR = 3


class ArgumentParser(argparse.ArgumentParser):
    """argparse with our exit status for usage errors (1, like every other user error)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USER_ERROR, f"{self.prog}: error: {message}\n")


def feature_set(text: str) -> str:
    """A tagger feature set: ``kt`` or a max-ent set as :func:`nerstudio.tagging.features.parse_feature_set`
    reads it (``conll``, ``conll+gaz``, ``conll+gaz:persons/locations``, ``conll+rich``, …)."""
    from ..tagging.features import parse_feature_set
    from ..tagging.local_features import parse_kt_features

    try:
        (parse_kt_features if text.split("+")[0] == "kt" else parse_feature_set)(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def format_option(
    p: argparse.ArgumentParser, *names: str, help: str, output: bool = False, **kw
) -> None:
    """A format option whose help lists the format table (corpus.detect.FORMATS: nerstudio's own
    and corpus.foreign's handlers; for an ``output``, those it writes); a name it lacks is
    refused with the same list when read."""
    names_ = [f for f in FORMATS if writable(f)] if output else FORMATS
    p.add_argument(*names, metavar="FORMAT", help=f"{help}: {', '.join(names_)}", **kw)


def scheme_option(p: argparse.ArgumentParser, *names: str, help: str, **kw) -> None:
    """A tag-scheme option whose help lists the schemes registry (corpus.schemes.SCHEMES)."""
    p.add_argument(
        *names,
        metavar="SCHEME",
        help=f"{help}: {', '.join(SCHEMES)}",
        **kw,
    )


def registry_choice(
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


def add_read_options(p: argparse.ArgumentParser, prefix: str = "", what: str = "input") -> None:
    dest = prefix.replace("-", "_")
    format_option(
        p,
        f"--{prefix}format" if prefix else "--from",
        dest=f"{dest}format",
        help=f"format of the {what}, detected if omitted",
    )
    scheme_option(
        p,
        f"--{prefix}scheme" if prefix else "--from-scheme",
        dest=f"{dest}in_scheme",
        help=f"tag scheme of the {what}, detected if omitted",
    )


def add_executor_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--executor",
        default="local",
        metavar="WHERE",
        help="where independent work (folds, grid points) runs: local (processes here, the default), "
        "local:N, dask-local[:N] (a Dask LocalCluster of N workers) or dask://HOST:PORT (a running "
        "Dask scheduler); Dask needs pip install 'nerstudio[dask]'",
    )


class Parents(NamedTuple):
    """The parent parsers a command may take its shared options from."""

    common: argparse.ArgumentParser  # --encoding, --strict (every command that reads a corpus)
    tagger: argparse.ArgumentParser  # the max-ent tagger's settings
    learn: argparse.ArgumentParser  # the rerankers' settings


def parents() -> Parents:
    return Parents(_common(), _tagger(), _learn())


def _common() -> argparse.ArgumentParser:
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
    return common


def _tagger() -> argparse.ArgumentParser:
    tagger = ArgumentParser(add_help=False)
    tagger.add_argument(
        "--task",
        choices=choices.TASKS,
        default="typed",
        help="typed entities (CoNLL types) or the paper's boundary-only SCN task",
    )
    tagger.add_argument(
        "--features",
        type=feature_set,
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
    registry_choice(tagger, "--optimizer", "maxent", "optimizer")
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
        choices=choices.ALPHABETS,
        default="scn",
        help="the tags the tagger predicts: scn (Collins' start/continue) or bilou (begin, inside, "
        "last, unit); its N-best lists are SCN either way",
    )
    return tagger


def _learn() -> argparse.ArgumentParser:
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
    return learn


def tagger_params(args) -> dict:
    features = args.features or "paper"
    if features == "kt":
        raise SettingsError("--features kt belongs to the perceptron tagger (--model perceptron)")
    if args.epochs is not None and args.optimizer != "adagrad":
        raise SettingsError(
            "--epochs counts the passes of --optimizer adagrad (lbfgs and gis: --max-iter)"
        )
    params = {
        "task": args.task,
        "features": features,
        "cutoff": 5 if args.cutoff is None else args.cutoff,
        "cutoff_on": args.cutoff_on,
        "l2": args.l2,
        "optimizer": args.optimizer,
        "max_iter": args.max_iter,
        "alphabet": args.alphabet,
    }
    if args.epochs is not None:
        params["epochs"] = args.epochs
    return params


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


def learner_keys(algo: str) -> set[str]:
    """The command-line settings ``algo`` takes: those its learner's constructor accepts."""
    import inspect

    from ..rerank.model import learner_class

    return set(inspect.signature(learner_class(algo).__init__).parameters) & set(_LEARN_OPTIONS)


def given_options(args) -> dict:
    return {k: getattr(args, k) for k in _LEARN_OPTIONS if getattr(args, k, None) is not None}


def learner_params(args, algo: str) -> dict:
    """Reranker settings given on the command line that apply to ``algo``."""
    keys = learner_keys(algo)
    return {k: v for k, v in given_options(args).items() if k in keys}


def check_learner_options(args, algos) -> None:
    """Refuse a setting that none of ``algos`` takes."""
    given = set(given_options(args))
    used = set().union(*(learner_keys(a) for a in algos)) if algos else set()
    unused: list[str] = sorted(given - used)
    if unused:
        flags: dict[str, str] = {"shuffle": "no-shuffle", "global_features": "feature-kernel"}
        opts = ", ".join("--" + flags.get(k, k.replace("_", "-")) for k in unused)
        raise SettingsError(
            f"{opts} {'does' if len(unused) == 1 else 'do'} not apply to {', '.join(algos)}"
        )
