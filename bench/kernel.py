#!/usr/bin/env python3
"""Benchmark: the kernel (dual-form) voted perceptron on CoNLL-2003 N-best lists, next to the
linear learners, with training and test cost.

    python bench/kernel.py --nbest DIR [--sentences 3000] [--lam 0.5] [--word-features]
                           [--raw] [--fixed-beta] [--beta B] [--threads 1] [--global-features] [--resources] [--clusters] [--json]

DIR holds ``train-nbest.npz``, ``dev-nbest.npz`` and ``test-nbest.npz`` as written by
``nerstudio experiment``. Prints, measured in this run: the baseline's dev/test F, the kernel
perceptron's chosen β and its dev-F grid, dev/test F and relative error reduction, training
seconds (β search included), the kernel pairs the β search computed and reused (``kernel_pairs``)
and the seconds to score the test list; and, on the same lists, the
voted and averaged linear perceptrons (global features, 1 epoch, β searched on dev) with the same
measures. Figures vary with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nerstudio.evaluation import relative_error_reduction  # noqa: E402
from nerstudio.nbest import NBestList  # noqa: E402
from nerstudio.rerank.features import GlobalFeatures  # noqa: E402
from nerstudio.rerank.kernel import KernelPerceptron  # noqa: E402
from nerstudio.rerank.perceptron import AveragedPerceptron, VotedPerceptron  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nbest", required=True, type=Path)
    ap.add_argument("--sentences", type=int, default=3000)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lam", type=float, default=0.5)
    ap.add_argument("--word-features", action="store_true")
    ap.add_argument("--raw", action="store_true", help="the unnormalised kernel")
    ap.add_argument("--fixed-beta", action="store_true", help="a fixed weight on L(x), not learnt")
    ap.add_argument("--beta", type=float, default=None)
    ap.add_argument("--mode", default="vote")
    ap.add_argument(
        "--threads", type=int, default=1, help="numba threads for the kernel (same results)"
    )
    ap.add_argument(
        "--global-features",
        action="store_true",
        help="add the cosine of the global-feature vectors to the kernel",
    )
    ap.add_argument(
        "--resources",
        action="store_true",
        help="global features with the bundled gazetteers and the document context, as the typed "
        "experiment's defaults",
    )
    ap.add_argument(
        "--clusters",
        action="store_true",
        help="global features with the Brown-cluster families too (--global-clusters)",
    )
    ap.add_argument("--no-linear", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    nbs = {k: NBestList.load(a.nbest / f"{k}-nbest.npz") for k in ("train", "dev", "test")}
    gf = GlobalFeatures(gazetteers=a.resources, context=a.resources, clusters=a.clusters)
    d = {"train": gf.fit_transform(nbs["train"])}
    d["dev"], d["test"] = gf.transform(nbs["dev"]), gf.transform(nbs["test"])
    base = {k: d[k].prf(np.zeros(len(d[k]), int))[2] for k in ("dev", "test")}
    rows = [{"system": "baseline", "dev": base["dev"], "test": base["test"]}]

    def measure(name, learner, extra):
        t = time.perf_counter()
        learner.fit(d["train"], d["dev"])
        train_s = time.perf_counter() - t
        t = time.perf_counter()
        ct = learner.predict(d["test"])
        test_s = time.perf_counter() - t
        f_dev = d["dev"].prf(learner.predict(d["dev"]))[2]
        f_test = d["test"].prf(ct)[2]
        row = {
            "system": name,
            "dev": f_dev,
            "test": f_test,
            "rel_test": relative_error_reduction(base["test"], f_test),
            "train_s": train_s,
            "test_s": test_s,
            **extra(learner),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)

    kp = KernelPerceptron(
        lam=a.lam,
        word_features=a.word_features,
        epochs=a.epochs,
        beta=a.beta,
        max_sentences=a.sentences,
        normalise=not a.raw,
        learn_beta=not a.fixed_beta,
        mode=a.mode,
        threads=a.threads,
        global_features=a.global_features,
    )
    measure(
        "kernel",
        kp,
        lambda m: {
            "beta": m.beta_,
            "grid": m.beta_grid_,
            "at_edge": m.beta_at_edge_,
            "mistakes": m.n_mistakes_,
            "weight_on_L": m.weight_on_L(),
            "kernel_pairs": m.kernel_pairs_,
        },
    )
    if not a.no_linear:
        for name, cls in (("voted", VotedPerceptron), ("averaged", AveragedPerceptron)):
            measure(name, cls(epochs=a.epochs), lambda m: {"beta": m.beta_})
    if a.json:
        print(json.dumps(rows, indent=2))
    else:
        print("| system | dev F | test F | test rel. error reduction | train s | test s |")
        print("|---|---:|---:|---:|---:|---:|")
        for r in rows:
            print(
                f"| {r['system']} | {r['dev']:.2f} | {r['test']:.2f} | "
                + (
                    f"{r['rel_test']:.1f}% | {r['train_s']:.1f} | {r['test_s']:.1f} |"
                    if "train_s" in r
                    else "| | |"
                )
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
