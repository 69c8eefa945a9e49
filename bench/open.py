#!/usr/bin/env python3
"""Opening a 1M-token file: how long until the window shows it? (issue 26, point 2)

    python bench/open.py [--data ../shared/data/conll2003] [--copies 5] [--runs 3] [--before DIR]

Writes (in a temporary folder, never in the repository) eng.train repeated ``--copies`` times
(5: 1,018,105 tokens), then, in a fresh interpreter per run, times:

* ``lines``: the peer baseline — the file read line by line and split into fields, nothing else
  (what any reader of the format must at least do);
* ``read_corpus``: the corpus read (sentences, spans decoded, the file's conventions);
* ``document``: the document built from it (the entity-type index and ``Document.open``);
* ``window``: File ▸ Open in the main window (offscreen) until the corpus is shown — read and
  indexed in the worker, the browser's model and counts, the first sentence drawn (the window
  grabbed to a picture).

``--before DIR`` measures a checkout of an earlier commit (``git archive COMMIT | tar -x -C DIR``)
the same way, alternating with this one, in the same run. Bytecode is cached in the temporary
folder, as an installed package's is. The load average is printed: on 2 shared cores the
figures move with it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, sys, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
path, tmp = sys.argv[1], sys.argv[2]
out = {}
t = time.perf_counter()
n = 0
with open(path, encoding="utf-8") as f:
    for line in f:
        n += len(line.split())
out["lines"] = time.perf_counter() - t

from nerstudio.corpus.formats import read_corpus
from nerstudio.app.document import Document, type_masks_of
t = time.perf_counter()
corpus = read_corpus(path)
out["read_corpus"] = time.perf_counter() - t
t = time.perf_counter()
Document().open(corpus, type_masks=type_masks_of(corpus))
out["document"] = time.perf_counter() - t
out["tokens"], out["sentences"] = corpus.n_tokens, len(corpus)
del corpus

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from nerstudio.gui.main_window import MainWindow

app = QApplication.instance() or QApplication([])
st = QSettings(os.path.join(tmp, "settings.ini"), QSettings.IniFormat)
st.setValue("annotation/recoveryDir", os.path.join(tmp, "recovery"))
win = MainWindow(st)
win.dialogs.ask_unsaved = lambda: "discard"
win.resize(1280, 800)
win.show()
app.processEvents()
t = time.perf_counter()
assert win.load_corpus(path, attach=False)
app.processEvents()
win.grab()
out["window"] = time.perf_counter() - t
out["shown"] = [win.proxy.rowCount(), win.sentence_header.text()[:60]]
print("RESULT " + json.dumps(out), flush=True)
os._exit(0)
"""

STAGES = ("lines", "read_corpus", "document", "window")


def once(root: Path, big: Path, tmp: Path, env: dict) -> dict:
    env = dict(env, PYTHONPATH=str(root))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(big), str(tmp)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=str(tmp),
    )
    lines = [ln[7:] for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        raise SystemExit(f"the child failed (exit {out.returncode}): {out.stderr.strip()[-800:]}")
    return json.loads(lines[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared = os.environ.get("NERSTUDIO_SHARED_DATA") or ROOT.parent / "shared" / "data"
    ap.add_argument("--data", default=str(Path(shared) / "conll2003"))
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--before", default="", help="a checkout of an earlier commit, measured too")
    args = ap.parse_args()
    src = Path(args.data) / "eng.train"
    if not src.is_file():
        print(f"{src} not found (--data)", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="nerstudio-bench-open-"))
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        PYTHONPYCACHEPREFIX=str(tmp / "pycache"),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    kinds = {"now": ROOT}
    if args.before:
        kinds["before"] = Path(args.before).resolve()
    try:
        big = tmp / "eng.big.conll"
        big.write_text(src.read_text(encoding="utf-8") * args.copies, encoding="utf-8")
        res: dict[str, list[dict]] = {k: [] for k in kinds}
        loads = []
        for _ in range(max(1, args.runs)):
            for kind, root in kinds.items():
                loads.append(os.getloadavg()[0])
                res[kind].append(once(root, big, tmp, env))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    first = res["now"][0]
    print(
        f"opening {big.name} ({first['tokens']:,} tokens, {first['sentences']:,} sentences, "
        f"eng.train × {args.copies}); median of {args.runs} run(s), a fresh interpreter each; "
        f"load average {min(loads):.1f}–{max(loads):.1f}:"
    )
    for kind, runs in res.items():
        label = "this checkout" if kind == "now" else f"before ({args.before})"
        print(f"  {label}")
        for stage in STAGES:
            xs = [r[stage] for r in runs]
            every = ", ".join(f"{x:.2f}" for x in xs)
            print(f"    {stage:<12} {statistics.median(xs):6.2f} s  (runs {every})")
        print(f"    shown: {runs[-1]['shown'][0]:,} rows in the browser; {runs[-1]['shown'][1]!r}")
    print("  target: the window shows the file in ≤ 8 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
