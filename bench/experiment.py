#!/usr/bin/env python3
"""A whole experiment, stage by stage, next to an earlier commit run the same way (issue 26).

    python bench/experiment.py [--data ../shared/data/conll2003] [--docs N] [--before DIR]
                               [--suite collins|kazama] [-- EXTRA EXPERIMENT OPTIONS]

Runs ``nerstudio experiment`` on eng.train / eng.testa / eng.testb (``--docs N``: the first N
documents of each, written to a temporary folder, for a quick run) with this checkout and, with
``--before DIR`` (``git archive COMMIT | tar -x -C DIR``), with that checkout, one after the
other in fresh interpreters, and prints for each: wall and CPU seconds (the process and its
children: the fold workers), the seconds of every stage from its ``report.json``, every
system's dev and test F, and whether the two runs' test predictions (``pred-*-test.conll``) are
identical byte for byte. Machine speed varies from day to day and with load, so only figures
measured in one run compare; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "conll2003"


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


def run(checkout: Path, files: list[Path], out: Path, suite: str, extra: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(checkout))
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
    preds = {p.name: p.read_bytes() for p in sorted(out.glob("pred-*-test.conll"))}
    return {
        "wall": wall,
        "cpu": cpu,
        "stages": report["stages"],
        "systems": systems,
        "preds": preds,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder with eng.train/testa/testb")
    ap.add_argument("--docs", type=int, default=0, help="first N documents of each file only")
    ap.add_argument("--before", type=Path, help="a checkout of an earlier commit, run too")
    ap.add_argument("--suite", default="collins", choices=("collins", "kazama"))
    ap.add_argument("extra", nargs="*", help="more `nerstudio experiment` options (after --)")
    args = ap.parse_args()
    names = ("eng.train", "eng.testa", "eng.testb")
    if not all((args.data / n).exists() for n in names):
        print(f"skipped: {args.data} does not hold {', '.join(names)}", file=sys.stderr)
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="nerstudio-bench-experiment-"))
    try:
        files = [args.data / n for n in names]
        if args.docs:
            files = [first_documents(f, args.docs, tmp / f.name) for f in files]
        checkouts = [("this checkout", ROOT)] + ([("before", args.before)] if args.before else [])
        load0 = os.getloadavg()[0]
        res = {}
        for label, path in checkouts:
            res[label] = run(path, files, tmp / label.replace(" ", "_"), args.suite, args.extra)
        load1 = os.getloadavg()[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    what = f"first {args.docs} documents of each file" if args.docs else "the whole files"
    print(
        f"nerstudio experiment --suite {args.suite} {' '.join(args.extra)} on {what}; "
        f"load average {load0:.1f} before, {load1:.1f} after"
    )
    for label, r in res.items():
        print(f"  {label:<14} wall {r['wall']:7.1f} s   CPU {r['cpu']:7.1f} s (with its workers)")
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stages"].items())
        print(f"    stages (s): {stages}")
        figs = ", ".join(f"{k} {d:.2f}/{t:.2f}" for k, (d, t) in r["systems"].items())
        print(f"    dev/test F: {figs}")
    if len(res) == 2:
        a, b = res.values()
        same = a["preds"] == b["preds"] and a["systems"] == b["systems"]
        print(f"  speed-up: wall {b['wall'] / a['wall']:.2f}×, CPU {b['cpu'] / a['cpu']:.2f}×")
        print(
            "  results: "
            + ("identical (every F, every test prediction file)" if same else "DIFFERENT")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
