"""``nerstudio suspects``: the sentences of a corpus ranked by the evidence that their gold is
wrong, each with the model's suggested fix, as a TSV file (:mod:`nerstudio.label_errors`)."""

from __future__ import annotations

import argparse
import sys

from ...errors import SettingsError
from ..common import Progress, _executor, _read
from ..options import add_executor_option


def add_parser(sub, parents) -> argparse.ArgumentParser:
    """The ``suspects`` subcommand and its options."""
    p = sub.add_parser(
        "suspects",
        parents=[parents.common],
        help="rank a corpus's sentences by the evidence that their gold annotation is wrong",
        description="Judge every sentence of CORPUS with a max-ent tagger that never trained on "
        "it (K folds over CORPUS, the --with corpora added to every fold's training data; or "
        "--model) and write them to a TSV file, most suspect first: rank, sentence (its number "
        "in the file, -DOCSTART- lines not counted), score (the natural log of how many times "
        "more probable the model finds its suggestion than gold), the span where they differ, "
        "gold's and the suggested entities there, the text and the evidence in words.",
    )
    p.add_argument("corpus", metavar="CORPUS")
    p.add_argument(
        "--with",
        dest="more",
        action="append",
        default=[],
        metavar="MORE_TRAINING",
        help="another corpus added to every fold's training data (repeatable)",
    )
    p.add_argument("--folds", type=int, default=5, help="folds over CORPUS (default 5)")
    p.add_argument(
        "--model",
        metavar="DIR",
        help="judge with this model instead of folds: a model folder (tagger.npz) or a max-ent "
        "tagger file, trained without CORPUS",
    )
    p.add_argument("--n", type=int, default=20, help="taggings listed per sentence (default 20)")
    p.add_argument(
        "--max-iter",
        type=int,
        default=None,
        help="the folds' tagger: optimiser iterations (default: nerstudio experiment's, 300)",
    )
    p.add_argument("--out", required=True, metavar="FILE.tsv", help="the ranking to write")
    p.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    add_executor_option(p)
    return p


def run(args) -> int:
    from ...label_errors import find_suspects, load_tagger_model, write_tsv

    if args.n < 1:
        raise SettingsError("--n must be at least 1")
    if args.model and args.more:
        raise SettingsError("--with adds training data to the folds; with --model there are none")
    if args.max_iter is not None and args.max_iter < 1:
        raise SettingsError("--max-iter must be at least 1")
    model = load_tagger_model(args.model) if args.model else None  # a wrong model fails first
    corpus = _read(args.corpus, args)
    more = [_read(path, args) for path in args.more]
    bar = Progress("suspects")
    finished = [0]

    def progress(done: int, total: int, text: str) -> None:
        if model is not None:
            bar.update(done, total)
        elif done != finished[0]:  # a fold has finished
            finished[0] = done
            bar.message(text)

    suspects = find_suspects(
        corpus,
        more=more,
        folds=args.folds,
        model=model,
        n=args.n,
        executor=None if model is not None else _executor(args),
        workers=args.workers,
        progress=progress,
        tagger_params={"max_iter": args.max_iter} if args.max_iter else None,
    )
    write_tsv(args.out, corpus, suspects)
    unknown = sum(1 for s in suspects if s.score == float("inf"))
    if unknown:
        print(
            f"note: {unknown:,} sentence(s) hold entity types the model does not know; they rank first",
            file=sys.stderr,
        )
    how = f"model {args.model}" if args.model else f"{args.folds} folds"
    print(f"wrote {args.out}: {len(suspects):,} sentences ranked ({how})", file=sys.stderr)
    return 0
