#!/usr/bin/env python3
"""Benchmark: time to the application's first window, and until it is ready, next to a bare
PySide6 window.

    python bench/startup.py [--runs 7] [--corpus FILE] [--before DIR]

Each run starts a fresh interpreter from this one and times, from just before the process is
spawned, until the first window is *exposed* (Qt's Expose event: on screen), measured the same
way for ``python main.py`` (the bundled demo, or ``--corpus``) and for a bare PySide6
``QMainWindow``, alternately, in the same run. It prints the median of each, every run's figure,
the ratio of the medians (target ≤ 2×), the same for the CPU time the process used until then
(steadier than wall time on a loaded machine), and the heavy modules loaded when the application's window
appeared (none expected: numpy, the document model, the controllers, matplotlib, scipy, numba and
the learners load after the window's shell is on screen).

The application's first window is its shell (``MainWindow(shell=True)``); the run goes on until
the window is *ready*: built (its controllers and menus: everything works), and the corpus's
first sentence shown (polled every 5 ms: the window has a sentence cursor at a sentence). That
time and CPU are printed too, beside the bare window's first expose (a bare window is ready when
it is on screen). The CPU until ready counts every thread of the process: the worker reading the
corpus included.

For the demo the run also times the moment the *N-best is shown*: the Inspect N-best table paints
its rows holding the first sentence's candidates (the demo's list, with the reranker's scores
shipped beside it) — a Paint event of the table's viewport while its model has rows; the
window's first screen (``MainWindow.first_screen``) shows them before the window is built.
That time and CPU (all threads) are printed beside the bare window's, with the heavy modules
loaded by then (expected: none; numpy, the document model and the controllers load once the
first screen is painted, matplotlib, scipy and the demo's tagger once the built window has
painted the demo again, the Comparison tab's view when its tab first comes forward).

The probe watches the application's events only until the main window exists, then the window,
its native window and the N-best table's viewport: an application-wide event filter makes
PySide6 load classes the application never uses, a cost the application does not pay.

``--before DIR`` adds a checkout of an earlier commit (``git archive COMMIT | tar -x -C DIR``),
measured the same way in the same run, alternating with the others.

The first run of each is a warm-up (bytecode and the file cache) and is not counted; the
bytecode is cached (in the temporary folder) even where ``PYTHONDONTWRITEBYTECODE`` is set, as an
installed package's is. Settings, data and
cache folders are fresh temporary ones, so no saved geometry, workspace or recovery file changes
what is measured. The display is ``$DISPLAY`` if set (a real X server with a window manager),
else Qt's offscreen platform.
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEAVY = (
    "numpy",
    "nerstudio.app.document",
    "nerstudio.gui.controllers",
    "nerstudio.gui.views.training_panel",
    "nerstudio.gui.views.comparison",
    "matplotlib",
    "scipy",
    "numba",
    "llvmlite",
    "nerstudio.rerank.model",
    "nerstudio.rerank.boosting",
    "nerstudio.rerank.kernel",
    "nerstudio.tagging.maxent",
    "nerstudio.tagging.perceptron",
    "nerstudio.tagging.joint",
)

CHILD = r"""
import json, os, sys, time
t0 = float(os.environ["NERSTUDIO_BENCH_T0"])
kind, corpus, heavy = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
want_nbest = sys.argv[4] == "1"  # wait for the N-best table's rows (the demo has a list)
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

app = QApplication(sys.argv[:1])
result = {}


def loaded():
    return sorted({h for h in heavy for m in list(sys.modules) if m == h or m.startswith(h + ".")})


def now():
    # wall seconds since the spawn; this process's CPU time since it started, all threads
    return time.time() - t0, time.process_time()


def main_window():
    return next((w for w in app.topLevelWidgets() if w.objectName() == "mainWindow"), None)


def ready():
    win = main_window()
    cursor = getattr(win, "sentence_cursor", None)  # none until the window is built
    built = getattr(win, "built", False)
    if "ready" not in result and built and cursor is not None and cursor.k >= 0:
        result["ready"], result["ready_cpu"] = now()
    if "ready" in result and (not want_nbest or "nbest" in result):
        print("RESULT " + json.dumps(result), flush=True)
        os._exit(0)


def nbest_painted(obj):
    # the Inspect N-best table's rows painted with the first sentence's candidates
    views = getattr(main_window(), "views", None)  # the window's widgets, once built
    if views is None or obj is not views.nbest_view.viewport():
        return False
    return views.nbest_panel.model.rowCount() > 0


class FirstExpose(QObject):
    # Watches the main window, its native window and the N-best table's viewport. It starts
    # application-wide only until the main window shows up, then moves onto those objects: an
    # application-wide filter is handed every object that gets an event, Qt's private ones too,
    # and PySide then loads every lazily loaded class looking for a wrapper (some 70 enums,
    # 10-15 ms), which the application itself does not do.

    def __init__(self):
        super().__init__()
        self.win = None
        self.handle = None
        self.viewport = None

    def attach(self, obj):
        if self.win is None and obj.isWidgetType() and obj.objectName() in ("mainWindow", "bare"):
            self.win = obj
            obj.installEventFilter(self)
        if self.win is not None and self.handle is None and self.win.windowHandle() is not None:
            self.handle = self.win.windowHandle()
            self.handle.installEventFilter(self)
            app.removeEventFilter(self)
        views = getattr(self.win, "views", None)  # the window's widgets, once built
        if want_nbest and self.viewport is None and views is not None:
            self.viewport = views.nbest_view.viewport()
            self.viewport.installEventFilter(self)

    def eventFilter(self, obj, event):
        if self.handle is None or (self.viewport is None and obj is self.win):
            self.attach(obj)
        if want_nbest and event.type() == QEvent.Paint and "nbest" not in result:
            if nbest_painted(obj):
                result["nbest"], result["nbest_cpu"] = now()
                result["nbest_heavy"] = loaded()
        if event.type() == QEvent.Expose and "seconds" not in result and obj is self.handle:
            result["seconds"], result["cpu"] = now()
            result["heavy"] = loaded()
            if kind == "bare":  # on screen is all a bare window does
                result["ready"], result["ready_cpu"] = result["seconds"], result["cpu"]
                result["nbest"], result["nbest_cpu"] = result["seconds"], result["cpu"]
                result["nbest_heavy"] = result["heavy"]
                print("RESULT " + json.dumps(result), flush=True)
                os._exit(0)
            poll.start(5)
        return False


poll = QTimer()
poll.timeout.connect(ready)
watch = FirstExpose()
app.installEventFilter(watch)
if kind == "bare":
    win = QMainWindow()
    win.setObjectName("bare")
    win.resize(1280, 800)
    win.show()
    app.exec()
else:
    from nerstudio.gui.app import main
    main([corpus] if corpus else [])
"""


def once(kind: str, env: dict, corpus: str, before: str = "", nbest: bool = True) -> dict:
    env = dict(env, NERSTUDIO_BENCH_T0=repr(time.time()))
    if kind == "before":
        env["PYTHONPATH"] = before
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            "bare" if kind == "bare" else "app",
            corpus,
            json.dumps(HEAVY),
            "1" if nbest else "0",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=env["HOME_FOR_BENCH"],
    )
    lines = [ln[len("RESULT ") :] for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        raise SystemExit(
            f"start-up child ({kind}) failed (exit {out.returncode}): {out.stderr.strip()[-800:]}"
        )
    return json.loads(lines[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="counted runs of each (default 7)")
    ap.add_argument(
        "--corpus", default="", help="corpus the application opens (default: the bundled demo)"
    )
    ap.add_argument("--before", default="", help="a checkout of an earlier commit, measured too")
    args = ap.parse_args()
    kinds = ("bare", "app") + (("before",) if args.before else ())
    nbest = not args.corpus  # the demo opens with its N-best list; another corpus may have none
    tmp = Path(tempfile.mkdtemp(prefix="nerstudio-bench-startup-"))
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        HOME_FOR_BENCH=str(tmp),
        # bytecode cached as an installed package has it (pip compiles on install): with
        # PYTHONDONTWRITEBYTECODE every run would compile every module again, which is not
        # start-up; kept in the temporary folder, not the checkout
        PYTHONPYCACHEPREFIX=str(tmp / "pycache"),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if os.environ.get("DISPLAY"):
        env.pop("QT_QPA_PLATFORM", None)
        where = f"display {os.environ['DISPLAY']}"
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
        where = "offscreen"
    try:
        for kind in kinds:  # warm-up, not counted
            once(kind, env, args.corpus, args.before, nbest)
        res: dict[str, list[dict]] = {k: [] for k in kinds}
        for _ in range(max(1, args.runs)):
            for kind in kinds:
                res[kind].append(once(kind, env, args.corpus, args.before, nbest))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: statistics.median(x["seconds"] for x in v) for k, v in res.items()}
    print(
        f"time to the first exposed window ({where}; median of {args.runs} runs each, alternating, after a "
        f"warm-up run of each; load average {os.getloadavg()[0]:.1f}):"
    )
    labels = {
        "app": "nerstudio (main.py, " + (args.corpus or "the demo") + ")",
        "before": f"nerstudio before ({args.before})",
        "bare": "bare PySide6 QMainWindow",
    }
    for kind in ("app", "before", "bare"):
        if kind in res:
            runs = ", ".join(f"{x['seconds']:.2f}" for x in res[kind])
            ratio = f"  {med[kind] / med['bare']:.2f}× the bare window" if kind != "bare" else ""
            print(f"  {labels[kind]:<36} {med[kind]:5.2f} s{ratio}  (runs {runs})")
    print("  target: ≤ 2× the bare window")
    # CPU seconds of the child up to that moment: what the start-up costs, whatever else the
    # machine's cores are doing (wall times on a loaded machine move by ±50 % from run to run)
    cpu = {k: statistics.median(x["cpu"] for x in v) for k, v in res.items()}
    print("CPU time of the process until then (median):")
    for kind in ("app", "before", "bare"):
        if kind in res:
            ratio = f"  {cpu[kind] / cpu['bare']:.2f}× the bare window" if kind != "bare" else ""
            print(f"  {labels[kind]:<36} {cpu[kind]:5.2f} s{ratio}")
    print(
        "time until the window is ready (built, the corpus's first sentence shown; the bare "
        "window: on screen), median:"
    )
    ready = {k: statistics.median(x["ready"] for x in v) for k, v in res.items()}
    ready_cpu = {k: statistics.median(x["ready_cpu"] for x in v) for k, v in res.items()}
    for kind in ("app", "before", "bare"):
        if kind in res:
            runs = ", ".join(f"{x['ready']:.2f}" for x in res[kind])
            ratio = (
                f"  {ready[kind] / ready['bare']:.2f}× the bare window" if kind != "bare" else ""
            )
            print(f"  {labels[kind]:<36} {ready[kind]:5.2f} s{ratio}  (runs {runs})")
    print("CPU time of the process until ready (median; all its threads):")
    for kind in ("app", "before", "bare"):
        if kind in res:
            ratio = (
                f"  {ready_cpu[kind] / ready_cpu['bare']:.2f}× the bare window"
                if kind != "bare"
                else ""
            )
            print(f"  {labels[kind]:<36} {ready_cpu[kind]:5.2f} s{ratio}")
    if nbest:
        _nbest_lines(res, labels)
    for kind in ("app", "before"):
        if kind in res:
            heavy = sorted({h for x in res[kind] for h in x["heavy"]})
            print(
                f"heavy modules loaded when the window appeared ({kind}): "
                + (", ".join(heavy) if heavy else "none")
            )
        if nbest and kind in res:
            heavy = sorted({h for x in res[kind] for h in x.get("nbest_heavy", [])})
            print(
                f"heavy modules loaded when the N-best was shown ({kind}): "
                + (", ".join(heavy) if heavy else "none")
            )
    return 0


def _nbest_lines(res: dict[str, list[dict]], labels: dict[str, str]) -> None:
    """N-best shown: until the Inspect N-best table has the first sentence's candidates (the
    bare window: on screen), wall and CPU time, medians, beside the bare window's."""
    wall = {k: statistics.median(x["nbest"] for x in v) for k, v in res.items()}
    cpu = {k: statistics.median(x["nbest_cpu"] for x in v) for k, v in res.items()}
    print(
        "N-best shown (the Inspect N-best table has the first sentence's candidates; the bare "
        "window: on screen), median wall / CPU (all threads):"
    )
    for kind in ("app", "before", "bare"):
        if kind in res:
            runs = ", ".join(f"{x['nbest']:.2f}/{x['nbest_cpu']:.2f}" for x in res[kind])
            ratio = (
                f"  {wall[kind] / wall['bare']:.2f}× / {cpu[kind] / cpu['bare']:.2f}× the bare window"
                if kind != "bare"
                else ""
            )
            print(
                f"  {labels[kind]:<36} {wall[kind]:5.2f} s / {cpu[kind]:5.2f} s CPU{ratio}"
                f"  (runs {runs})"
            )
    print("  target: CPU ≤ 3× the bare window's")


if __name__ == "__main__":
    sys.exit(main())
