"""The resource ablation of the typed Collins experiment: one ``nerstudio experiment`` run per row.

Why a script: the README's ablation table must be reproducible from commands. Each row is one
``nerstudio experiment`` command (printed, and kept with its log and report in OUT/<row>/), and
this script writes the table from the rows' ``report.json`` files. The rerankers' rows change
only the global features, so they take the tagger and N-best lists of the ``default`` row
(``--lists-from``, which checks that the settings and the sentences match: the figures are those
of a full run); a row that changes the tagger (``--features conll+gaz``) makes its own lists.

    python tools/ablation.py --train eng.train --dev eng.testa --test eng.testb --out runs/ablation \
        [--rows default,no-persons,...] [--nice 10] [--options '--folds 3']

Rows already done (their report.json exists) are not run again; ``--table-only`` writes the
table from what is there. The table, ``ablation.md`` and ``ablation.json``, gives per row the
resources on, dev F / test F of the baseline and of each reranker, the test F on entities unseen
in training of the system the dev F picks, and the seconds of the row's own stages.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

SYSTEMS = ("baseline", "boosting", "voted", "averaged")

#: name -> (tagger gazetteers, reranker gazetteer lists, context, extra experiment options). The
#: lists are families of nerstudio.resources.FAMILIES; rows other than ``default`` and
#: ``tagger-gaz`` reuse the ``default`` row's tagger and lists.
ROWS = {
    "default": ("off", "all", "on", []),
    "no-gazetteers": ("off", "none", "on", ["--no-global-gazetteers"]),
    "no-persons": ("off", "all but persons", "on", ["--gazetteer-lists", "all,-persons"]),
    "no-locations": ("off", "all but locations", "on", ["--gazetteer-lists", "all,-locations"]),
    "no-nationalities": (
        "off",
        "all but nationalities/languages",
        "on",
        ["--gazetteer-lists", "all,-nationalities"],
    ),
    "no-organisations": (
        "off",
        "all but organisations (legal suffixes)",
        "on",
        ["--gazetteer-lists", "all,-organisations"],
    ),
    "no-context": ("off", "all", "off", ["--no-context"]),
    "document-context": ("off", "all", "document (DC)", ["--context-scope", "document"]),
    "corpus-context": ("off", "all", "corpus (CC)", ["--context-scope", "corpus"]),
    "nothing": ("off", "none", "off", ["--no-global-gazetteers", "--no-context"]),
    "only-persons": ("off", "persons", "off", ["--gazetteer-lists", "persons", "--no-context"]),
    "only-locations": (
        "off",
        "locations",
        "off",
        ["--gazetteer-lists", "locations", "--no-context"],
    ),
    "only-nationalities": (
        "off",
        "nationalities/languages",
        "off",
        ["--gazetteer-lists", "nationalities", "--no-context"],
    ),
    "only-organisations": (
        "off",
        "organisations",
        "off",
        ["--gazetteer-lists", "organisations", "--no-context"],
    ),
    "tagger-gaz": (
        "on",
        "all",
        "on",
        ["--features", "conll+rich+gaz"],
    ),  # the default tagger plus its gazetteers
}
OWN_LISTS = ("default", "tagger-gaz")  # rows whose tagger runs (the others reuse default's)


def command(row: str, args, out: str) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "nerstudio",
        "experiment",
        "--train",
        args.train,
        "--dev",
        args.dev,
        "--test",
        args.test,
        "--out",
        os.path.join(out, row),
    ] + ROWS[row][3]
    if row not in OWN_LISTS:
        cmd += ["--lists-from", os.path.join(out, "default")]
    # the linear rerankers only, as the README's ablation tables: the kernel perceptron would add
    # a minute and a half to every row (``--options "--systems ..."`` still overrides this)
    cmd += ["--systems", "boost,voted,averaged"]
    cmd += shlex.split(args.options)
    if args.nice:
        cmd = ["nice", "-n", str(args.nice)] + cmd
    return cmd


def run_row(row: str, args, out: str) -> None:
    folder = os.path.join(out, row)
    if os.path.exists(os.path.join(folder, "report.json")):
        print(f"{row}: done already", file=sys.stderr)
        return
    cmd = command(row, args, out)
    os.makedirs(folder, exist_ok=True)
    print(f"{row}: {shlex.join(cmd)}", file=sys.stderr)
    t = time.perf_counter()
    with open(os.path.join(out, f"{row}.log"), "w", encoding="utf-8") as log:
        log.write(shlex.join(cmd) + "\n")
        log.flush()
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        raise SystemExit(f"{row}: exit status {rc}, see {out}/{row}.log")
    print(f"{row}: {time.perf_counter() - t:.0f}s wall", file=sys.stderr)


def row_figures(row: str, out: str) -> dict | None:
    path = os.path.join(out, row, "report.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        rep = json.load(f)
    systems = {s["name"]: s for s in rep["systems"]}
    rerankers = [s for s in rep["systems"] if s["name"] != "baseline"]
    chosen = max(rerankers, key=lambda s: s["dev"]["f1"])  # the dev F picks; test never does
    stages = rep["stages"]
    own = sum(
        v
        for k, v in stages.items()
        if k not in ("read", "outputs") and not (row not in OWN_LISTS and k == "tagger_and_nbest")
    )
    return {
        "row": row,
        "tagger_gazetteers": ROWS[row][0],
        "reranker_gazetteers": ROWS[row][1],
        "context": ROWS[row][2],
        "f1": {
            n: [systems[n]["dev"]["f1"], systems[n]["test"]["f1"]] for n in SYSTEMS if n in systems
        },
        "dev_choice": chosen["name"],
        "dev_choice_unseen_test_f1": chosen["test_breakdown"]["unseen"]["f1"],
        "seconds": own,
        "seconds_total": rep["seconds_total"],
        "features": rep["data"]["features"],
    }


def table(rows: list[dict]) -> str:
    head = (
        "| row | tagger gazetteers | reranker gazetteers | context | "
        + " | ".join(SYSTEMS)
        + " | dev choice: unseen test F | seconds |"
    )
    lines = [head, "|" + "---|" * (len(SYSTEMS) + 6)]
    for r in rows:
        cells = [
            f"{r['f1'][n][0]:.2f} / {r['f1'][n][1]:.2f}" if n in r["f1"] else "" for n in SYSTEMS
        ]
        lines.append(
            f"| {r['row']} | {r['tagger_gazetteers']} | {r['reranker_gazetteers']} | {r['context']} | "
            + " | ".join(cells)
            + f" | {r['dev_choice']}: {r['dev_choice_unseen_test_f1']:.2f} | "
            f"{r['seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", required=True)
    ap.add_argument("--dev", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rows", default=",".join(ROWS), help="comma-separated rows (default all)")
    ap.add_argument(
        "--options", default="", help="more experiment options for every row (e.g. '--rounds 1000')"
    )
    ap.add_argument("--nice", type=int, default=0, help="run each experiment under nice -n K")
    ap.add_argument(
        "--table-only", action="store_true", help="write the table from the rows done, run nothing"
    )
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out)
    for k in ("train", "dev", "test"):
        setattr(args, k, os.path.abspath(getattr(args, k)))
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    bad = [r for r in rows if r not in ROWS]
    if bad:
        ap.error(f"unknown row {bad[0]!r} (choose from {', '.join(ROWS)})")
    os.makedirs(out, exist_ok=True)
    if not args.table_only:
        if any(r not in OWN_LISTS for r in rows) and "default" not in rows:
            rows.insert(0, "default")
        for r in rows:
            run_row(r, args, out)
    figures = [f for f in (row_figures(r, out) for r in rows) if f is not None]
    with open(os.path.join(out, "ablation.json"), "w", encoding="utf-8") as f:
        json.dump(
            {"rows": figures, "commands": {r: shlex.join(command(r, args, out)) for r in rows}},
            f,
            indent=2,
        )
    md = table(figures)
    with open(os.path.join(out, "ablation.md"), "w", encoding="utf-8") as f:
        f.write(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
