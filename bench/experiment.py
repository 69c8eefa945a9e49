#!/usr/bin/env python3
"""A whole experiment, stage by stage, next to an earlier commit run the same way (issue 26).

    python bench/experiment.py [--data ../shared/data/conll2003] [--docs N|N,N,N] [--before DIR]
                               [--twice] [--threads A,B]
                               [--suite collins|kazama] [-- EXTRA EXPERIMENT OPTIONS]

Runs ``nerstudio experiment`` on eng.train / eng.testa / eng.testb (``--docs N``: the first N
documents of each, written to a temporary folder, for a quick run; ``--docs 150,50,50``: of each
its own number) with this checkout and, with
``--before DIR`` (``git archive COMMIT | tar -x -C DIR``), with that checkout, one after the
other in fresh interpreters, and prints for each: wall and CPU seconds (the process and its
children: the fold workers), the seconds of every stage from its ``report.json``, every
system's dev and test F, and whether the two runs' results are identical: every array of every
model and N-best file (a header's wall-clock seconds left out) and every test prediction file
(``pred-*-test.conll``), byte for byte, with a SHA-256 over them all. ``--twice`` runs this
checkout a second time instead (is the same command reproducible?); ``--threads A,B`` gives
the first run A and the second B threads of numba, OpenBLAS and OpenMP (e.g. ``1,2``). Machine
speed varies from day to day and with load, so only figures measured in one run compare; the
load average is printed before and after.

Before its timed run, each checkout runs the same command once, untimed, on the first
:data:`WARM_UP_DOCS` documents of each file: numba compiles a kernel the first time a checkout
calls it and caches it beside its source (``__pycache__/*.nbi``, ``*.nbc``), some ten seconds
that every later run of that checkout skips. The timed run then measures the experiment, not
the compiler (``--cold``: no warm-up, to time a first run).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "conll2003"
WARM_UP_DOCS = (10, 2, 2)  # documents of train, dev and test in the untimed warm-up run


def first_documents(src: Path, n: int, dst: Path) -> Path:
    """The first ``n`` -DOCSTART- documents of a CoNLL file (the whole file if it has fewer)."""
    out, docs = [], 0
    with open(src, encoding="utf-8") as f:
        for line in f:
            if line.startswith("-DOCSTART-"):
                docs += 1
                if docs > n:
                    break
            out.append(line)
    dst.write_text("".join(out), encoding="utf-8")
    return dst


def untimed(value):
    """A model header without its wall-clock fields (seconds differ from run to run)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def output_digests(out: Path) -> dict[str, str]:
    """A SHA-256 of every array of every model and N-best file (``.npz``; their headers without
    wall-clock seconds) and of every prediction file (``.conll``) in an experiment's folder."""
    res = {}
    for f in sorted(out.iterdir()):
        if f.suffix == ".npz":
            with np.load(f, allow_pickle=False) as z:
                for k in sorted(z.files):
                    a = np.ascontiguousarray(z[k])
                    if k == "header":
                        text = a.tobytes().decode() if a.dtype == np.uint8 else str(a)
                        data = json.dumps(untimed(json.loads(text)), sort_keys=True).encode()
                    else:
                        data = f"{a.dtype}{a.shape}".encode() + a.tobytes()
                    res[f"{f.name}:{k}"] = hashlib.sha256(data).hexdigest()
        elif f.suffix == ".conll":
            res[f.name] = hashlib.sha256(f.read_bytes()).hexdigest()
    return res


def run(
    checkout: Path,
    files: list[Path],
    out: Path,
    suite: str,
    extra: list[str],
    threads: int | None = None,
) -> dict:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    if threads is not None:
        for var in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
            env[var] = str(threads)
    cmd = [sys.executable, "-m", "nerstudio", "experiment", "--suite", suite]
    cmd += ["--train", str(files[0]), "--dev", str(files[1]), "--test", str(files[2])]
    cmd += ["--out", str(out), *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=out.parent)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"experiment failed ({checkout}): {proc.stderr.strip()[-1500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    systems = {
        s["name"]: (s["dev"]["f1"], s["test"]["f1"]) for s in report["systems"] if "dev" in s
    }
    return {
        "wall": wall,
        "cpu": cpu,
        "stages": report["stages"],
        "systems": systems,
        "digests": output_digests(out),
        "threads": threads,
    }


def warm_up(checkout: Path, files: list[Path], out: Path, suite: str, extra: list[str], label):
    """One untimed run of ``checkout`` on ``files`` (see the module docstring); a failure is
    reported and the timed run then compiles what it needs."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    try:
        run(checkout, files, out, suite, extra)
    except SystemExit as exc:
        print(f"warm-up of {label} failed, timing it cold: {exc}", file=sys.stderr)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder with eng.train/testa/testb")
    ap.add_argument(
        "--docs",
        default="0",
        help="first N documents of each file only, or N_TRAIN,N_DEV,N_TEST (0: the whole file)",
    )
    ap.add_argument("--before", type=Path, help="a checkout of an earlier commit, run too")
    ap.add_argument("--twice", action="store_true", help="run this checkout a second time")
    ap.add_argument("--threads", help="A,B: numba/BLAS threads of the first and second run")
    ap.add_argument("--suite", default="collins", choices=("collins", "kazama"))
    ap.add_argument(
        "--cold",
        action="store_true",
        help="no untimed warm-up run (numba compiles in the timed one)",
    )
    ap.add_argument("extra", nargs="*", help="more `nerstudio experiment` options (after --)")
    args = ap.parse_args()
    try:
        counts = [int(n) for n in args.docs.split(",")]
    except ValueError:
        ap.error("--docs takes a number of documents, or three joined by commas")
    counts = counts * 3 if len(counts) == 1 else counts
    if len(counts) != 3 or min(counts) < 0:
        ap.error("--docs takes a number of documents, or three joined by commas")
    threads = [None, None]
    if args.threads:
        threads = [int(t) for t in args.threads.split(",")]
        if len(threads) != 2 or min(threads) < 1:
            ap.error("--threads takes two thread counts, e.g. 1,2")
    if args.twice and args.before:
        ap.error("--twice and --before compare this checkout with different things: give one")
    names = ("eng.train", "eng.testa", "eng.testb")
    if not all((args.data / n).exists() for n in names):
        print(f"skipped: {args.data} does not hold {', '.join(names)}", file=sys.stderr)
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="nerstudio-bench-experiment-"))
    try:
        files = [args.data / n for n in names]
        files = [first_documents(f, n, tmp / f.name) if n else f for f, n in zip(files, counts)]
        checkouts = [("this checkout", ROOT)]
        if args.before:
            checkouts.append(("before", args.before))
        elif args.twice:
            checkouts = [("first run", ROOT), ("second run", ROOT)]
        if not args.cold:
            small = [
                first_documents(f, min(w, n) if n else w, tmp / f"warm-up-{f.name}")
                for f, n, w in zip(files, counts, WARM_UP_DOCS)
            ]
            for path, label in {path: label for label, path in reversed(checkouts)}.items():
                warm_up(path, small, tmp / "warm-up", args.suite, args.extra, label)
        load0 = os.getloadavg()[0]
        res = {}
        for (label, path), th in zip(checkouts, threads):
            out = tmp / label.replace(" ", "_")
            res[label] = run(path, files, out, args.suite, args.extra, th)
        load1 = os.getloadavg()[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    what = (
        "the first "
        + ", ".join(f"{n} documents of {f}" if n else f"all of {f}" for f, n in zip(names, counts))
        if any(counts)
        else "the whole files"
    )
    print(
        f"nerstudio experiment --suite {args.suite} {' '.join(args.extra)} on {what}; "
        f"load average {load0:.1f} before, {load1:.1f} after"
    )
    for label, r in res.items():
        th = "" if r["threads"] is None else f", {r['threads']} numba/BLAS thread(s)"
        print(
            f"  {label:<14} wall {r['wall']:7.1f} s   CPU {r['cpu']:7.1f} s (with its workers{th})"
        )
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stages"].items())
        print(f"    stages (s): {stages}")
        figs = ", ".join(f"{k} {d:.2f}/{t:.2f}" for k, (d, t) in r["systems"].items())
        print(f"    dev/test F: {figs}")
        whole = hashlib.sha256(json.dumps(r["digests"], sort_keys=True).encode()).hexdigest()
        print(f"    models, lists and predictions: {len(r['digests'])} items, sha256 {whole[:16]}")
    if len(res) == 2:
        a, b = res.values()
        differ = sorted(
            k
            for k in a["digests"].keys() | b["digests"].keys()
            if a["digests"].get(k) != b["digests"].get(k)
        )
        same = not differ and a["systems"] == b["systems"]
        print(f"  speed-up: wall {b['wall'] / a['wall']:.2f}×, CPU {b['cpu'] / a['cpu']:.2f}×")
        print(
            "  identical: "
            + ("yes (every F, model array, N-best list and test prediction file)" if same else "no")
        )
        if differ:
            print(f"    differing: {', '.join(differ[:20])}" + (" …" if len(differ) > 20 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
