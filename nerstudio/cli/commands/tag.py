"""``nerstudio tag``: tag a corpus with a tagger's 1-best analysis, in the input's format."""

from __future__ import annotations

import argparse
import sys

from ..common import Progress, _read, _summary


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
    p = sub.add_parser(
        "tag", parents=[common], help="tag a corpus with its 1-best analysis, in the input's format"
    )
    p.add_argument("model", metavar="MODEL")
    p.add_argument("input", metavar="INPUT")
    p.add_argument("--out", required=True, metavar="PRED")
    p.add_argument("--beam", type=int, default=20, help="beam width")
    return p


def run(args) -> int:
    from ...corpus.formats import write_corpus
    from ...tagging import load_tagger

    tagger = load_tagger(args.model)
    corpus = _read(args.input, args)
    bar = Progress("tag", len(corpus))
    if not hasattr(tagger, "static_scores"):  # the perceptron tagger decodes its own sequences
        pred = corpus.with_spans(_typed_for(tagger.predict_spans(corpus)))
        write_corpus(pred, args.out)
        print(f"wrote {args.out} ({corpus.format}, {corpus.scheme})", file=sys.stderr)
        if any(s.spans for s in corpus.sentences):
            from ...evaluation import evaluate_sentences

            ev = evaluate_sentences(corpus.sentences, pred.sentences).overall
            print(
                f"{args.input}: {len(corpus)} sentences, F {ev.f1:.2f} (P {ev.precision:.2f}, "
                f"R {ev.recall:.2f})"
            )
        return 0
    nb = tagger.nbest(corpus.sentences, n=1, beam=args.beam, progress=lambda d, t: bar.update(d, t))
    pred = corpus.with_spans(nb.top())
    write_corpus(pred, args.out)
    print(f"wrote {args.out} ({corpus.format}, {corpus.scheme})", file=sys.stderr)
    print(_summary(corpus.sentences, nb, args.input))
    return 0


def _typed_for(spans):
    """Untyped (boundary-only) predictions get the placeholder type ENT so the file stays valid."""
    from ...experiments.collins import with_placeholder_type

    if any(sp.label for ss in spans for sp in ss):
        return spans
    return [with_placeholder_type(ss) for ss in spans]
