"""``nerstudio nbest``: decode a corpus into N-best lists with a tagger (beam search)."""

from __future__ import annotations

import argparse
import os
import sys

from ...errors import SettingsError
from ..common import Progress, _read, _summary


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
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
    return p


def run(args) -> int:
    from ...runtime.pipeline import sentence_ids
    from ...tagging import load_tagger

    tagger = load_tagger(args.model)
    corpus = _read(args.input, args)
    if not hasattr(tagger, "static_scores"):  # the perceptron and joint taggers: exact k-best
        nb = tagger.candidate_lists(corpus, n=args.n, documents=args.documents)
        if not args.documents and not nb.ids:  # the joint tagger's split names no sentences
            nb.ids = sentence_ids(corpus)
        nb.meta["source"] = os.path.abspath(args.input)
        nb.save(args.out)
        print(f"wrote {args.out}", file=sys.stderr)
        if not args.documents:
            print(_summary(corpus.sentences, nb, args.input))
        return 0
    if args.documents:
        raise SettingsError("--documents needs a perceptron or joint tagger model")
    bar = Progress("nbest", len(corpus))
    nb = tagger.nbest(
        corpus.sentences,
        n=args.n,
        beam=args.beam,
        ids=sentence_ids(corpus),
        progress=lambda d, t: bar.update(d, t),
    )
    nb.meta["source"] = os.path.abspath(args.input)
    nb.save(args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    print(_summary(corpus.sentences, nb, args.input))
    return 0
