"""``nerstudio rerank``: pick a candidate per sentence with a reranker model and write the chosen entities."""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from ...errors import FormatError
from ...evaluation import relative_error_reduction


def add_parser(sub, parents) -> argparse.ArgumentParser:
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
    return p


def run(args) -> int:
    from ...corpus.formats import read_corpus, write_corpus
    from ...corpus.model import Corpus, Document, Sentence
    from ...nbest import NBestList
    from ...rerank.model import RerankerModel

    model = RerankerModel.load(args.model)
    nb = NBestList.load(args.nbest)
    d, choice = model.rerank(nb)
    spans = nb.top(choice)
    if not nb.typed:
        from ...experiments.collins import with_placeholder_type

        spans = [with_placeholder_type(ss) for ss in spans]
    src = args.corpus or nb.meta.get("source")
    corpus = None
    if src and os.path.exists(src):
        corpus = read_corpus(src, encoding=args.encoding)
        if [tuple(s.words) for s in corpus.sentences] != [tuple(w) for w in nb.words]:
            if args.corpus:
                raise FormatError(args.corpus, None, f"its sentences are not those of {args.nbest}")
            corpus = None
    if corpus is None:
        sents = [Sentence(words=tuple(w), spans=list(sp)) for w, sp in zip(nb.words, spans)]
        corpus = Corpus([Document(sents)], path=args.nbest, format="columns", scheme="iob2")
        write_corpus(corpus, args.out)
    else:
        write_corpus(corpus.with_spans(spans), args.out)
    print(f"wrote {args.out} ({corpus.format}, {corpus.scheme})", file=sys.stderr)
    if d.has_gold:
        base = d.prf(np.zeros(len(d), dtype=np.int64))
        new = d.prf(choice)
        changed = int((choice != 0).sum())
        out = {
            "baseline": dict(zip(("precision", "recall", "f1"), base)),
            "reranked": dict(zip(("precision", "recall", "f1"), new)),
            "rel_error_reduction": relative_error_reduction(base[2], new[2]),
            "changed_sentences": changed,
        }
        if args.json:
            print(json.dumps(out, indent=2))
        else:
            print(
                f"baseline F {base[2]:.2f}, reranked F {new[2]:.2f} (P {new[0]:.2f}, R {new[1]:.2f}); "
                f"{changed} of {len(d)} sentences changed; relative error reduction "
                f"{out['rel_error_reduction']:.1f}%"
            )
    return 0
