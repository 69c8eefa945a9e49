#!/usr/bin/env python3
"""Benchmark: the jackknife and a sweep on the local process pool and on a Dask LocalCluster, same run.

    python bench/cluster.py [--data ../shared/data/conll2003] [--workers 2] [--folds 5]
                            [--grid 'rounds=1e4,3e4,1e5 epsilon=0.001,0.0025'] [--scale 5.4]

On CoNLL-2003 (eng.train, dev eng.testa): a K-fold jackknife of eng.train with the model on the
whole corpus decoding eng.testa alongside the folds (max-ent tagger, ``conll`` features, 100
L-BFGS iterations, 20-best), then a 6-point boosting sweep on the lists it made; each first on the
local process pool (``--executor local:2``), then on a LocalCluster of 2 worker processes
(``--executor dask-local:2``). Prints wall seconds, each job's seconds, peak memory per worker,
whether both executors gave identical lists and scores, and a paper estimate of the
jackknife's wall time on N machines for a corpus ``--scale`` times eng.train's size (OntoNotes
5.0's English training portion, about 1.1M tokens, is 5.4 times eng.train's 203,621), from the
measured per-fold cost. Needs the ``dask`` extra. (Not named distributed.py: run as a script,
that name would shadow the ``distributed`` package.)
"""

from __future__ import annotations

import argparse
import heapq
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nerstudio.corpus.formats import read_corpus  # noqa: E402
from nerstudio.experiments.sweep import parse_settings, run_sweep  # noqa: E402
from nerstudio.runtime.dask_executor import DaskExecutor  # noqa: E402
from nerstudio.runtime.folds import ProcessExecutor  # noqa: E402
from nerstudio.runtime.pipeline import jackknife  # noqa: E402


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu(who=resource.RUSAGE_SELF) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def same_lists(a, b) -> bool:
    return (
        a.tagset == b.tagset
        and a.ids == b.ids
        and a.words == b.words
        and all(np.array_equal(x, y) for x, y in zip(a.candidates, b.candidates))
        and all(np.array_equal(x, y) for x, y in zip(a.logprobs, b.logprobs))
    )


def makespan(jobs: list[float], workers: int) -> float:
    """Wall time of ``jobs`` (seconds) on ``workers``, longest first to the first free worker."""
    free = [0.0] * workers
    for t in sorted(jobs, reverse=True):
        heapq.heapreplace(free, free[0] + t)
    return max(free)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "conll2003"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--grid", default="rounds=1e4,3e4,1e5 epsilon=0.001,0.0025")
    ap.add_argument(
        "--scale", type=float, default=5.4, help="corpus size of the estimate, in eng.trains"
    )
    ap.add_argument(
        "--dask-first", action="store_true", help="run on the cluster first, then locally"
    )
    args = ap.parse_args()
    data = Path(args.data)
    if not (data / "eng.train").exists():
        sys.exit(f"{data}/eng.train not found (see ../shared/data/PROVENANCE.md)")
    t = time.perf_counter()
    train, dev = read_corpus(data / "eng.train"), read_corpus(data / "eng.testa")
    read_s = time.perf_counter() - t
    print(
        f"eng.train: {len(train.documents)} documents, {len(train)} sentences, {train.n_tokens} tokens "
        f"(read in {read_s:.1f}s); {args.folds} folds + the whole-corpus model; {args.workers} workers",
        flush=True,
    )
    params = {"task": "typed", "features": "conll"}
    grid = parse_settings("boost", args.grid)
    fixed = {"eval_every": 1000}
    out = Path(tempfile.mkdtemp(prefix="nerstudio-bench-cluster-"))
    rows: dict[str, dict] = {}

    def run(name: str, executor, peaks, cpu) -> None:
        r: dict = {}
        c0 = cpu()
        t0 = time.perf_counter()
        jk = jackknife(
            train,
            folds=args.folds,
            n=20,
            tagger_params=params,
            executor=executor,
            full=True,
            decode={"dev": dev},
        )
        r["jackknife"] = time.perf_counter() - t0
        r["jk_cpu"] = cpu() - c0
        r["jobs"] = jk.job_seconds
        r["jk_peak"] = peaks()
        r["lists"] = jk
        if not (out / "train.npz").exists():  # the sweep's lists: from the first run
            jk.nbest.save(out / "train.npz")
            jk.decoded["dev"].save(out / "dev.npz")
        print(
            f"{name}: jackknife {r['jackknife']:.1f}s; "
            + ", ".join(f"{k} {v:.1f}s" for k, v in jk.job_seconds.items()),
            flush=True,
        )
        c0 = cpu()
        t0 = time.perf_counter()
        r["sweep"] = run_sweep(
            "boost",
            out / "train.npz",
            out / "dev.npz",
            grid,
            out / f"sweep-{name}",
            fixed,
            executor=executor,
        )
        r["sweep_s"] = time.perf_counter() - t0
        r["sweep_cpu"] = cpu() - c0
        r["peak"] = peaks()
        print(
            f"{name}: sweep of {len(r['sweep']['points'])} points {r['sweep_s']:.1f}s; peak MB per worker "
            f"{r['peak']:.0f}",
            flush=True,
        )
        rows[name] = r

    def local() -> None:
        # the caller's share and its children's
        run(
            "local",
            ProcessExecutor(args.workers),
            lambda: resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0,
            lambda: _cpu() + _cpu(resource.RUSAGE_CHILDREN),
        )

    def dask() -> float:
        t0 = time.perf_counter()
        with DaskExecutor(local_workers=args.workers) as ex:
            ex.client().wait_for_workers(args.workers)
            started = time.perf_counter() - t0
            # the caller's share and the workers'
            run(
                "dask",
                ex,
                lambda: max(ex.client().run(_peak_mb).values()),
                lambda: _cpu() + sum(ex.client().run(_cpu).values()),
            )
        return started

    if args.dask_first:
        start_s = dask()
        local()
    else:
        local()
        start_s = dask()

    loc, dsk = rows["local"], rows["dask"]
    identical = (
        same_lists(loc["lists"].nbest, dsk["lists"].nbest)
        and same_lists(loc["lists"].decoded["dev"], dsk["lists"].decoded["dev"])
        and [p["dev"] for p in loc["sweep"]["points"]] == [p["dev"] for p in dsk["sweep"]["points"]]
    )
    fold_names = [k for k in loc["jobs"] if k.startswith("fold ")]
    full_name = next(k for k in loc["jobs"] if not k.startswith("fold "))

    def mean_fold(r):
        return float(np.mean([r["jobs"][k] for k in fold_names]))

    print()
    print(
        f"| eng.train ({args.folds} folds + model on all; sweep {args.grid!r}) | local pool, {args.workers} "
        f"processes | Dask LocalCluster, {args.workers} workers |"
    )
    print("|---|---:|---:|")
    print(f"| jackknife wall s | {loc['jackknife']:.1f} | {dsk['jackknife']:.1f} |")
    print(f"| jackknife CPU s (every process) | {loc['jk_cpu']:.1f} | {dsk['jk_cpu']:.1f} |")
    print(
        f"| mean fold s / whole-corpus model s | {mean_fold(loc):.1f} / {loc['jobs'][full_name]:.1f} | "
        f"{mean_fold(dsk):.1f} / {dsk['jobs'][full_name]:.1f} |"
    )
    print(
        f"| sweep wall s ({len(loc['sweep']['points'])} points) | {loc['sweep_s']:.1f} | {dsk['sweep_s']:.1f} |"
    )
    print(f"| sweep CPU s | {loc['sweep_cpu']:.1f} | {dsk['sweep_cpu']:.1f} |")
    # the finished cluster's worker processes count among this process's children too
    loc_peak = "–" if args.dask_first else f"{loc['jk_peak']:.0f} / {loc['peak']:.0f}"
    print(
        f"| peak MB per worker (jackknife / whole run) | {loc_peak} | {dsk['jk_peak']:.0f} / {dsk['peak']:.0f} |"
    )
    print(f"| cluster start s | – | {start_s:.1f} |")
    print(
        f"| order | {'second' if args.dask_first else 'first'} | {'first' if args.dask_first else 'second'} |"
    )
    print(f"| identical lists and sweep scores | {'yes' if identical else 'NO'} | |")
    best = dsk["sweep"]["points"][dsk["sweep"]["best"]]
    print(f"\nbest sweep point: {best['settings']} dev F {best['dev']['f1']:.2f}")

    # -- the paper estimate: the jackknife of a corpus args.scale times larger, on N machines
    s = args.scale
    fold, full = mean_fold(dsk), dsk["jobs"][full_name]
    jobs = [s * full] + [s * fold] * args.folds
    print(
        f"\nEstimate for a corpus {s:g}× eng.train (~{s * train.n_tokens / 1e6:.1f}M tokens), assuming cost "
        f"linear in tokens: a fold {s * fold:.0f}s, the whole-corpus model {s * full:.0f}s, "
        f"~{s * dsk['jk_peak'] / 1024:.1f} GB per worker; machines like this one, {args.workers} workers each:"
    )
    print(
        "| machines | workers | jackknife wall (estimate) | 24-point tagger sweep (a point ≈ the whole-corpus model) |"
    )
    print("|---:|---:|---:|---:|")
    for n in (1, 2, 3, 6, 12):
        w = n * args.workers
        print(
            f"| {n} | {w} | {makespan(jobs, w) / 60:.1f} min | {makespan([s * full] * 24, w) / 60:.1f} min |"
        )
    print(f"\n(outputs in {out})")


if __name__ == "__main__":
    main()
