"""The ``preannotate`` command: a model's entities written into a corpus as its starting gold,
for annotators who correct rather than start from nothing (see :mod:`nerstudio.app.preannotate`)."""

from __future__ import annotations

import sys

from .common import Progress, _read


def cmd_preannotate(args) -> int:
    from ..app.preannotate import apply, load_model, preannotate
    from ..corpus.detect import format_for_output
    from ..corpus.writing import Losses, write_corpus

    # first: a wrong folder is reported before a long read
    model = load_model(args.model, args.system)
    corpus = _read(args.input, args)
    bar = Progress("preannotate")
    res = preannotate(corpus, model, replace=args.replace, progress=bar.update)
    apply(corpus, res)
    fmt = format_for_output(args.out, corpus.format) or corpus.format
    if args.strict:  # what the output format would not keep is an error, nothing written
        from ..corpus.convert import refuse_write_losses

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
