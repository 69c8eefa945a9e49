#!/usr/bin/env python3
"""Benchmark: K&T joint training with the compiled non-local features against the string form.

    python bench/kazama.py [--docs 200] [--dev-docs 60] [--epochs 3] [--algo candidate]

Trains the same joint tagger (Algorithm 4.1 by default; ``--algo proposed``, ``reranking1`` or
``reranking2`` too) on the first ``--docs`` documents of CoNLL-2003 eng.train, dev F every epoch
on the first ``--dev-docs`` of eng.testa, twice in this process: counting the non-local features
with the string form (``NonLocalFeatures.strings``, the implementation before issue 26) and with
the compiled counts on integer ids. Prints for each the CPU and wall seconds of training (the
local tagger's feature extraction included, the same in both), the seconds spent in the
non-local vectors, and checks that every epoch's dev F, the weights and the vocabulary are
identical. A short warm-up of both comes first (gazetteer lists, numba caches). CPU seconds are
the steadier figure on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from nerstudio.corpus.formats import read_corpus  # noqa: E402
from nerstudio.corpus.model import Corpus  # noqa: E402
from nerstudio.tagging import joint, joint_documents  # noqa: E402
from nerstudio.tagging.joint_local import first_model_lists  # noqa: E402
from nerstudio.tagging.perceptron import PerceptronTagger  # noqa: E402

DATA = Path(os.environ.get("NERSTUDIO_DATA", ROOT.parent / "shared" / "data")) / "conll2003"
if not DATA.exists():
    DATA = Path("/work/shared/data/conll2003")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--dev-docs", type=int, default=60)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--algo", default="candidate", choices=joint.ALGORITHMS)
    args = ap.parse_args()
    if not DATA.exists():
        print(f"needs CoNLL-2003 in {DATA}", file=sys.stderr)
        return 1
    train = Corpus(read_corpus(str(DATA / "eng.train")).documents[: args.docs])
    dev = Corpus(read_corpus(str(DATA / "eng.testa")).documents[: args.dev_docs])
    local = {"features": "kt+rich", "gazetteer": "lists", "labels": train.labels}
    extra = {}
    if args.algo.startswith("reranking"):
        first = PerceptronTagger(variant="margin", C=1000, epochs=5, **local).fit(train)
        extra = {"first": first, "train_lists": first_model_lists(first, first.prepare(train), 20)}
    timed = joint_documents.Documents.nonlocal_vectors
    spent = [0.0]

    def nonlocal_vectors(self, i, Y):
        t = time.process_time()
        try:
            return timed(self, i, Y)
        finally:
            spent[0] += time.process_time() - t

    joint_documents.Documents.nonlocal_vectors = nonlocal_vectors
    print(
        f"K&T {args.algo}, {len(train.documents)} training documents ({sum(len(s) for s in train.sentences)} "
        f"tokens), dev F on {len(dev.documents)} every epoch, {args.epochs} epochs, n = 20, n' = 100, C = 1000:"
    )
    for compiled in (False, True):  # warm-up: gazetteer lists, numba caches, both paths
        joint_documents.Documents.compiled = compiled
        joint.JointTagger(args.algo, n=5, n_test=5, epochs=1, local=None if extra else local).fit(
            Corpus(train.documents[:3]),
            Corpus(dev.documents[:2]),
            **(
                {}
                if not extra
                else {"first": extra["first"], "train_lists": [x[:3] for x in extra["train_lists"]]}
            ),
        )
    runs = {}
    for label, compiled in (("string form (before)", False), ("compiled, integer ids", True)):
        joint_documents.Documents.compiled = compiled
        spent[0] = 0.0
        jt = joint.JointTagger(
            args.algo,
            n=20,
            n_test=100,
            C=1000.0,
            epochs=args.epochs,
            average=False,
            local=None if args.algo.startswith("reranking") else local,
        )
        w0, c0 = time.perf_counter(), time.process_time()
        jt.fit(train, dev, **extra)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        runs[label] = jt
        print(
            f"  {label:<24} CPU {cpu:7.1f} s · wall {wall:7.1f} s · non-local vectors {spent[0]:6.1f} s CPU · "
            f"dev F " + " ".join(f"{h.dev_f1:.2f}" for h in jt.history_)
        )
    a, b = runs.values()
    same = (
        list(a.nl_.vocabulary) == list(b.nl_.vocabulary)
        and np.array_equal(a.wl_, b.wl_)
        and np.array_equal(a.wg_, b.wg_)
        and [h.dev_f1 for h in a.history_] == [h.dev_f1 for h in b.history_]
    )
    print(f"  identical vocabulary, weights and dev F every epoch: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
