#!/usr/bin/env python3
"""Benchmark: the structured perceptron tagger (plain / averaged / margin) on CoNLL-2003.

    python bench/perceptron_tagger.py [--data ../shared/data/conll2003] [--variants perceptron,averaged,margin]
        [--C 100] [--grid 10,30,100,300] [--epochs 30] [--bpm 0] [--edge-templates all] [--gazetteer lists]
        [--features kt+rich]
        [--crf] [--json out.json]

Typed task, document sequences, trained on eng.train with eng.testa (dev) scored after every
epoch (the best dev epoch is kept), tested on eng.testb. Per variant (each in its own process, so
that peak memory is its own): best dev F, test F, epochs run and best epoch, training seconds
(features included) and seconds per epoch, Viterbi tokens/s and k-best (k = 20, 100) documents/s
on the dev documents, milliseconds per 1,000 tokens of k-best on the long dev documents, peak
memory. ``--grid`` trains the margin variant for each C and keeps the best on dev. ``--crf``
adds sklearn-crfsuite (sentence sequences, the features of bench/tagger.py) in the same run.
Timings depend on what else runs on the machine: compare rows of one run.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAPER = {
    "perceptron": (89.01, 84.03),
    "averaged": (89.32, 84.08),
    "margin": (90.98, 85.64),
    "crf": (91.10, 86.26),
}


def one(data: Path, params: dict) -> dict:
    """Train one configuration and measure it (runs in a child process)."""
    import numpy as np

    from nerstudio.corpus import read_corpus
    from nerstudio.tagging._viterbi import Buffers
    from nerstudio.tagging.perceptron import PerceptronTagger

    train, dev, test = (read_corpus(data / n) for n in ("eng.train", "eng.testa", "eng.testb"))
    curve = []
    t0 = time.perf_counter()
    m = PerceptronTagger(**params).fit(train, dev, callback=lambda s: curve.append(s.as_dict()))
    train_s = time.perf_counter() - t0
    res = {
        "params": params,
        "train_s": train_s,
        "feature_s": m.feature_seconds_,
        "n_weights": m.n_weights_,
        "epochs": m.epochs_run_,
        "best_epoch": m.best_epoch_,
        "dev_f": m.best_dev_f1_,
        "epoch_s": float(np.mean([c["seconds"] for c in curve if c["phase"] == "train"])),
        "curve": [
            (c["phase"], c["epoch"], c["dev_f1"], c["updates"], c["word_error"]) for c in curve
        ],
    }
    res["test_f"] = m.evaluate(test)["f1"]
    seqs = m.prepare(dev)
    m.decode(seqs)
    t = time.perf_counter()
    m.decode(seqs)
    res["viterbi_tok_s"] = seqs.n_tokens / (time.perf_counter() - t)
    lens = np.diff(seqs.seq_ptr)
    long_docs = [i for i in range(len(seqs)) if lens[i] >= 500]
    for k in (20, 100):
        b = Buffers(int(lens.max()), m.n_tags, k)
        m._kbest_with(seqs, 0, b, m.weights_)
        t = time.perf_counter()
        for i in range(len(seqs)):
            m._kbest_with(seqs, i, b, m.weights_)
        res[f"kbest{k}_docs_s"] = len(seqs) / (time.perf_counter() - t)
        t = time.perf_counter()
        for i in long_docs:
            m._kbest_with(seqs, i, b, m.weights_)
        res[f"kbest{k}_ms_per_1000tok"] = (
            1e6 * (time.perf_counter() - t) / max(int(lens[long_docs].sum()), 1)
        )
    res["long_docs"] = len(long_docs)
    res["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return res


def run_child(data: Path, params: dict) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--data", str(data), "--one", json.dumps(params)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"run {params} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def crf(data: Path) -> dict | None:
    sys.path.insert(0, str(ROOT / "bench"))
    import tagger as maxent_bench  # bench/tagger.py: sklearn-crfsuite with comparable features

    r = maxent_bench.crfsuite(data, 100)
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "conll2003")
    ap.add_argument("--variants", default="perceptron,averaged,margin")
    ap.add_argument("--C", type=float, default=None, help="margin C (default: the tagger's)")
    ap.add_argument(
        "--grid",
        default="",
        help="comma-separated C values to search on dev for the margin variant",
    )
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--bpm", type=int, default=None)
    ap.add_argument("--edge-templates", default=None)
    ap.add_argument("--gazetteer", default=None, choices=["train", "lists", "train+lists"])
    ap.add_argument(
        "--features", default=None, choices=["kt", "kt+rich"], help="local feature set (default kt)"
    )
    ap.add_argument(
        "--average", choices=["yes", "no"], default=None, help="average the margin variant"
    )
    ap.add_argument(
        "--crf", action="store_true", help="also train sklearn-crfsuite (about 1 minute)"
    )
    ap.add_argument("--json", type=Path)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.data, json.loads(args.one))))
        return
    if not (args.data / "eng.train").exists():
        sys.exit(f"CoNLL-2003 not found at {args.data} (pass --data); nothing measured")
    common: dict = {}
    for key, val in (
        ("epochs", args.epochs),
        ("bpm", args.bpm),
        ("edge_templates", args.edge_templates),
        ("gazetteer", args.gazetteer),
        ("features", args.features),
    ):
        if val is not None:
            common[key] = val
    rows, grid = [], []
    for v in args.variants.split(","):
        p = dict(common, variant=v)
        if v == "margin":
            if args.C is not None:
                p["C"] = args.C
            if args.average:
                p["average"] = args.average == "yes"
            if args.grid:
                for c in (float(x) for x in args.grid.split(",")):
                    print(f"margin C={c:g}...", file=sys.stderr)
                    grid.append(run_child(args.data, dict(p, C=c)))
                    print(
                        f"  dev {grid[-1]['dev_f']:.2f} test {grid[-1]['test_f']:.2f}",
                        file=sys.stderr,
                    )
                rows.append(max(grid, key=lambda r: r["dev_f"]))
                continue
        print(f"{v}...", file=sys.stderr)
        rows.append(run_child(args.data, p))
    crf_row = crf(args.data) if args.crf else None

    cols = [
        ("dev_f", "dev F", ".2f"),
        ("test_f", "test F", ".2f"),
        ("epochs", "epochs", "d"),
        ("best_epoch", "best ep", "d"),
        ("train_s", "train s", ".1f"),
        ("epoch_s", "s/epoch", ".2f"),
        ("viterbi_tok_s", "Viterbi tok/s", ",.0f"),
        ("kbest20_docs_s", "20-best doc/s", ",.0f"),
        ("kbest100_docs_s", "100-best doc/s", ",.0f"),
        ("kbest100_ms_per_1000tok", "100-best ms/1k tok", ".1f"),
        ("peak_mb", "peak MB", ",.0f"),
    ]

    def fmt(v, spec):
        return format(v, spec) if isinstance(v, (int, float)) and not isinstance(v, bool) else "n/a"

    print("\nCoNLL-2003 English, typed, document sequences (K&T dev / test in brackets)")
    print(f"{'system':<26}" + "".join(f"{h:>19}" for _, h, _ in cols))
    for r in rows:
        v = r["params"]["variant"]
        name = f"{v} (C={r['params']['C']:g})" if v == "margin" and "C" in r["params"] else v
        print(
            f"{name:<26}"
            + "".join(f"{fmt(r.get(k), s):>19}" for k, _, s in cols)
            + f"   [{PAPER[v][0]:.2f} / {PAPER[v][1]:.2f}]"
        )
    if crf_row:
        print(
            f"{'sklearn-crfsuite':<26}"
            + "".join(f"{fmt(crf_row.get(k), s):>19}" for k, _, s in cols)
            + f"   [CRF {PAPER['crf'][0]:.2f} / {PAPER['crf'][1]:.2f}]"
        )
    if grid:
        print(
            "\nmargin C on dev: "
            + ", ".join(
                f"C={r['params']['C']:g}: {r['dev_f']:.2f} (test {r['test_f']:.2f}, "
                f"{r['epochs']} ep)"
                for r in grid
            )
        )
    by = {r["params"]["variant"]: r for r in rows}
    others = [v for v in ("perceptron", "averaged") if v in by]
    if "margin" in by and others:
        verdict = all(by["margin"]["dev_f"] > by[v]["dev_f"] for v in others)
        print(f"margin beats {', '.join(others) or 'nothing'} on dev: {'yes' if verdict else 'NO'}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "grid": grid, "crf": crf_row}, indent=2))


if __name__ == "__main__":
    main()
