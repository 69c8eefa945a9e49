#!/usr/bin/env python3
"""The model in the annotation loop, simulated: do corrections make the next suggestions better?

    python bench/annotation_loop.py --corpus ../shared/data/conll2003/eng.testa --batches 10
        [--batch-size 50] [--every N] [--n 10] [--no-seed] [--model nerstudio/demo/model]
        [--reranker averaged|voted|perceptron|margin|FILE]

A simulated annotator corrects a corpus pre-annotated by a model (default: the bundled demo
model, a max-ent tagger trained on the demo corpus), most uncertain sentences first, in batches
of ``--batch-size``: each sentence of the batch is set to its gold (the corpus file's entities),
which makes it reviewed. Two runs start from the same pre-annotation:

* ``static``: the model never changes; the uncertainty order is the starting one;
* ``loop``: after each batch the model in the loop (:mod:`nerstudio.app.loop`, the code the
  application runs) learns from the reviewed sentences — the max-ent tagger is trained again,
  warm-started, on the seed corpus (default: the demo training corpus the model was trained on;
  ``--no-seed`` for none) plus every reviewed sentence, every ``--every`` reviewed sentences
  (default: each batch) — then re-predicts the sentences not reviewed yet and re-orders them by
  uncertainty.

With ``--reranker`` a third run, ``rerank``, is the loop with a reranker of the perceptron
family (:mod:`nerstudio.app.loop_rerank`): its choice among the tagger's ``--n`` candidates is
the suggestion, and it is warm-started on the reviewed sentences' N-best lists whenever the
tagger trains. An algorithm name trains one (hyper-parameters as ``nerstudio rerank``'s, β chosen
on the development list) on the N-best lists beside the model (``train.nbest.npz``,
``dev.nbest.npz``: the demo model's are jackknifed on its training corpus); a file is a
reranker model.

"Most uncertain" is the lowest probability of the top candidate in the tagger's ``--n``-best
list (:func:`nerstudio.rerank.uncertainty.uncertainty`, ``mass``).

Printed per batch, for each run:

* ``F``: entity F (percent, exact span and type) of the suggestions the annotator found in the
  batch's sentences against the gold they kept;
* ``edits``: the entity-level corrections those suggestions needed
  (:func:`nerstudio.app.loop.corrections`): per sentence, a gold entity whose boundaries no
  suggested entity has is one *added* span, a suggested entity whose boundaries no gold entity
  has is one *removed* span, a suggested entity with the boundaries of a gold entity and another
  type is one *relabelled* span; edits = added + removed + relabelled (a boundary fix is a
  removal plus an addition: 2);
* ``rest F``: entity F of the current suggestions on every sentence not reviewed yet (the same
  measure on a set that does not depend on the order the run chose: the batches of the two runs
  are different sentences after the first).

The last line is ``loop F <x> vs static F <y>; edits <a> vs <b>`` for the last batch (the
tagger-only loop: with ``--reranker`` the line before it gives the reranker loop's figures). Times are
wall-clock seconds of each run (training and decoding included) on this machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from nerstudio.app.document import Document
from nerstudio.app.loop import OnlineLearner, apply, batch_scores, snapshot
from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_CORPUS, DEMO_MODEL_DIR
from nerstudio.evaluation import evaluate_spans
from nerstudio.nbest import NBestList
from nerstudio.rerank.model import RerankerModel, train_reranker
from nerstudio.rerank.uncertainty import uncertainty
from nerstudio.runtime.predictor import load_model_folder


def most_uncertain(doc: Document, size: int) -> list[int]:
    """The ``size`` unreviewed sentences with the least probable top candidate."""
    ix = doc.nbest_index
    mass = uncertainty(ix.nbest).mass
    ks = np.flatnonzero((ix.row_of >= 0) & ~doc.reviewed)
    order = ks[np.argsort(mass[ix.row_of[ks]], kind="stable")]
    return [int(k) for k in order[:size]]


def load_reranker(args):
    """The reranker of ``--reranker`` (see the module docstring), or None."""
    if not args.reranker:
        return None
    if os.path.isfile(args.reranker):
        return RerankerModel.load(args.reranker)
    folder = args.model if os.path.isdir(args.model) else os.path.dirname(args.model)
    lists = [os.path.join(folder, f"{part}.nbest.npz") for part in ("train", "dev")]
    if not os.path.isfile(lists[0]):
        raise SystemExit(f"annotation_loop: {lists[0]}: no such file (to train the reranker on)")
    dev = NBestList.load(lists[1]) if os.path.isfile(lists[1]) else None
    return train_reranker(NBestList.load(lists[0]), dev, args.reranker)


def simulate(args, loop: bool, reranker=None) -> tuple[list, list[float], float]:
    t0 = time.perf_counter()
    corpus = read_corpus(args.corpus)
    gold = [list(s.spans) for s in corpus.sentences]
    for s in corpus.sentences:
        s.spans = []
    tagger, _ = load_model_folder(args.model)
    seed = [] if args.no_seed else read_corpus(args.seed).sentences
    learner = OnlineLearner(
        tagger, seed, every=args.every or args.batch_size, n=args.n, reranker=reranker
    )
    if reranker is not None and learner.reranker is None:
        raise SystemExit(f"annotation_loop: {learner.reranker_note}")
    doc = Document()
    doc.open(corpus, reviewed=np.zeros(len(corpus), dtype=bool))
    first = learner.run(snapshot(doc), train=False)  # the pre-annotation
    apply(doc, first, "pre-annotation")
    learner.adopt(first)
    rest = []
    for b in range(args.batches):
        todo = np.flatnonzero(~doc.reviewed)
        rest.append(
            evaluate_spans([gold[k] for k in todo], [doc.spans(k) for k in todo]).overall.f1
        )
        batch = most_uncertain(doc, args.batch_size)
        if not batch:
            break
        for k in batch:  # corrected, then left (or accepted as it is): reviewed
            doc.set_spans(k, gold[k], "correct")
            doc.set_reviewed([k])
        if loop and b + 1 < args.batches:
            rnd = snapshot(doc)
            if learner.due(rnd):
                res = learner.run(rnd)
                apply(doc, res)
                learner.adopt(res)
    return batch_scores(doc, args.batch_size), rest, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--corpus", required=True, help="the corpus to annotate (its entities are the gold)"
    )
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=50)
    ap.add_argument(
        "--every",
        type=int,
        default=0,
        help="max-ent: reviewed sentences between trainings (default: the batch size)",
    )
    ap.add_argument("--n", type=int, default=10, help="N-best size for the uncertainty order")
    ap.add_argument(
        "--model", default=str(DEMO_MODEL_DIR), help="model folder or tagger file to start from"
    )
    ap.add_argument(
        "--seed",
        default=str(DEMO_CORPUS),
        help="seed corpus trained on with the reviewed sentences",
    )
    ap.add_argument("--no-seed", action="store_true", help="train on the reviewed sentences only")
    ap.add_argument(
        "--reranker",
        default="",
        help="also run the loop with a reranker: a perceptron-family algorithm to train on the "
        "model's train.nbest.npz, or a reranker file",
    )
    args = ap.parse_args(argv)
    if not os.path.exists(args.corpus):
        print(f"annotation_loop: {args.corpus}: no such file", file=sys.stderr)
        return 1
    if args.batches < 1 or args.batch_size < 1:
        print("annotation_loop: --batches and --batch-size must be at least 1", file=sys.stderr)
        return 1
    reranker = load_reranker(args)
    static, static_rest, t_static = simulate(args, loop=False)
    looped, loop_rest, t_loop = simulate(args, loop=True)
    if reranker is not None:
        rr, rr_rest, t_rr = simulate(args, loop=True, reranker=reranker)
    print(
        f"corpus {args.corpus}; batches of {args.batch_size}, most uncertain first; model {args.model}; "
        f"seed {'none' if args.no_seed else args.seed}"
        + (f"; reranker {reranker.algo} ({args.reranker})" if reranker is not None else "")
    )
    head = f"{'batch':>5}  {'loop F':>7} {'edits':>5} {'rest F':>7}  {'static F':>8} {'edits':>5} {'rest F':>7}"
    if reranker is not None:
        head += f"  {'rerank F':>8} {'edits':>5} {'rest F':>7}"
    print(head)
    for b, (lp, st) in enumerate(zip(looped, static)):
        line = (
            f"{b + 1:>5}  {lp.f1:7.2f} {lp.edits:>5} {loop_rest[b]:7.2f}  {st.f1:8.2f} {st.edits:>5} "
            f"{static_rest[b]:7.2f}"
        )
        if reranker is not None and b < len(rr):
            line += f"  {rr[b].f1:8.2f} {rr[b].edits:>5} {rr_rest[b]:7.2f}"
        print(line)
    tot_l, tot_s = sum(x.edits for x in looped), sum(x.edits for x in static)
    print(
        f"edits over all batches: loop {tot_l} vs static {tot_s}"
        + (f" (rerank loop {sum(x.edits for x in rr)})" if reranker is not None else "")
    )
    print(
        f"seconds: loop {t_loop:.1f} vs static {t_static:.1f}"
        + (f" (rerank loop {t_rr:.1f})" if reranker is not None else "")
    )
    lp, st = looped[-1], static[-1]
    if reranker is not None:
        print(f"rerank loop F {rr[-1].f1:.2f}; edits {rr[-1].edits}")
    print(f"loop F {lp.f1:.2f} vs static F {st.f1:.2f}; edits {lp.edits} vs {st.edits}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
