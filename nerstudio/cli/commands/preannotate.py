"""``nerstudio preannotate``: a model's entities written into a corpus as its starting gold,
for annotators who correct rather than start from nothing (see :mod:`nerstudio.app.preannotate`).
"""

from __future__ import annotations

import argparse
import sys

from ..common import Progress, _read
from ..options import add_read_options


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
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
    add_read_options(p)
    return p


def run(args) -> int:
    from ...app.preannotate import apply, load_model, preannotate
    from ...corpus.detect import format_for_output
    from ...corpus.writing import Losses, write_corpus

    # first: a wrong folder is reported before a long read
    model = load_model(args.model, args.system)
    corpus = _read(args.input, args)
    bar = Progress("preannotate")
    res = preannotate(corpus, model, replace=args.replace, progress=bar.update)
    apply(corpus, res)
    fmt = format_for_output(args.out, corpus.format) or corpus.format
    if args.strict:  # what the output format would not keep is an error, nothing written
        from ...corpus.convert import refuse_write_losses

        refuse_write_losses(corpus, args.out, fmt, None)
    losses = Losses()
    write_corpus(corpus, args.out, fmt, losses=losses)
    print(
        f"wrote {args.out} ({losses.target or fmt}): {res.summary()} by {res.model}",
        file=sys.stderr,
    )
    for line in losses.messages():
        print(f"note: {args.out}: {line}", file=sys.stderr)
    return 0
