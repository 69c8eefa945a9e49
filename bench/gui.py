#!/usr/bin/env python3
"""Benchmark: is the desktop application responsive on CoNLL-2003?

    python bench/gui.py [--data ../shared/data/conll2003] [--algo perceptron] [--epochs 3] [--runs 3]
    python bench/gui.py --demo      # what training in a child process costs on the demo corpus
    python bench/gui.py --kt-model runs/joint-proposed.npz [--runs 2]   # File > Open sequence tagger
    python bench/gui.py --startup [--runs 5]   # only the time to the first window

First, **start-up**: seconds from starting ``python main.py`` (the bundled demo) until its window
is on screen (the window system says it is exposed), next to a bare PySide6 ``QMainWindow``
measured the same way in the same run (target ≤ 2 s). Each is a fresh process started by this
one; the clock runs from just before the process is spawned. *Cold* is the first process with
an empty bytecode cache (``PYTHONPYCACHEPREFIX`` and ``NUMBA_CACHE_DIR`` point to new empty
folders, so every Python module is compiled from source and numba's cached machine code is not
there) — dropping the operating system's file cache is not possible here, so files may still be
in memory; *warm* is the median of the runs after it, which reuse that cache. Qt's settings
(``XDG_CONFIG_HOME``) and data folders are fresh temporary ones, so no saved geometry, workspace
or recovery file changes what is measured. The display is ``$DISPLAY`` if set (a real X server
with a window manager), else Qt's offscreen platform.

Then it runs the real main window offscreen and prints:

* **open**: seconds to open eng.train (14k sentences) until the window has processed its events
  (target ≤ 2 s);
* **switch**: per-sentence update of every panel (corpus browser, sentence view, N-best table,
  feature panel), median / 95th percentile / max over 200 random sentences, without an N-best
  list, with one, and with a reranker's scores and explanations (target ≤ 50 ms);
* **filter**: applying the "baseline wrong" filter and a text search on eng.train;
* **stall**: while a reranker trains on the eng.train N-best list (global features and training in
  a child process, relayed by the worker thread) and for 1.5 s after it (installing the model,
  rescoring, refreshing the views), a QTimer ticks every 10 ms on the main thread; the longest
  gap between two ticks, minus 10 ms, is the longest main-thread stall (target ≤ 100 ms).
  Sentence switches are also timed during training; ``--trace-stalls MS`` prints the Python stacks
  of all threads whenever the main thread is late by MS;
* **background views**: the comparison tab and the step-through setup (and three boosting rounds)
  on eng.train, computed in the window's second worker: seconds, and the longest main-thread stall
  meanwhile;
* **K&T model** (``--kt-model PATH``, only this): File ▸ Open sequence tagger (K&T) on eng.train
  with the model's default n' — the path of ``nerstudio.runtime.tagger_process.candidates_in_child``: wall
  time until the candidates are installed, the child's stages, the main-thread handler, the
  longest main-thread stall meanwhile (10 ms ticks, as above) and how many determinate progress
  updates the window got;
* **editing**: an annotation edit (and its undo) until every view is refreshed, median / p95 / max
  over 60 sentences (target ≤ 50 ms), and the atomic save of the whole of eng.train after an edit
  (target ≤ 2 s; written to a temporary file).

The eng.train / eng.testa N-best lists come from a tagger trained on eng.train (``--tagger-iter``
iterations, not jackknifed: this measures the GUI, not accuracy) and are cached in
``$TMPDIR/nerstudio-bench-gui``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

STARTUP_CHILD = r"""
import json, os, sys, time
t0 = float(os.environ["NERSTUDIO_BENCH_T0"])
kind = sys.argv[1]
from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication, QMainWindow

def first_window(app, win):
    while win.windowHandle() is None or not win.windowHandle().isExposed():
        app.processEvents(QEventLoop.AllEvents, 5)
        if time.time() - t0 > 60:
            break
    app.processEvents()  # its first paint
    t = time.time() - t0
    heavy = sorted(m for m in ("matplotlib", "scipy.optimize", "numba", "nerstudio.rerank._compiled",
                               "nerstudio.tagging._viterbi") if m in sys.modules)
    print(json.dumps({"seconds": t, "heavy": heavy}), flush=True)
    return 0

if kind == "bare":
    app = QApplication(sys.argv[:1])
    win = QMainWindow()
    win.resize(1280, 800)
    win.show()
    sys.exit(first_window(app, win))

# the application: main.py's own path, with QApplication.exec replaced by "wait for the window"
def exec_(self=None):
    app = QApplication.instance()
    win = next(w for w in app.topLevelWidgets() if w.objectName() == "mainWindow")
    code = first_window(app, win)
    win.runner.wait(60000)  # what the demo started in the background, then a normal close
    win.close()
    return code

QApplication.exec = exec_
sys.path.insert(0, os.environ["NERSTUDIO_BENCH_ROOT"])
from nerstudio.gui.app import main
sys.exit(main([]))
"""


def startup(runs: int) -> None:
    """Time to the first window of ``python main.py`` (the demo) and of a bare PySide6 window,
    cold then warm (see the module docstring for the definitions)."""
    import json
    import shutil
    import statistics
    import subprocess

    tmp = Path(tempfile.mkdtemp(prefix="nerstudio-bench-start-"))
    env = dict(
        os.environ,
        PYTHONPYCACHEPREFIX=str(tmp / "pycache"),
        NUMBA_CACHE_DIR=str(tmp / "numba"),
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        NERSTUDIO_BENCH_ROOT=str(ROOT),
    )
    if not os.environ.get("DISPLAY"):
        env["QT_QPA_PLATFORM"] = "offscreen"
    else:
        env.pop("QT_QPA_PLATFORM", None)
    where = f"display {env['DISPLAY']}" if "QT_QPA_PLATFORM" not in env else "offscreen"

    def once(kind: str) -> dict:
        env["NERSTUDIO_BENCH_T0"] = repr(time.time())
        out = subprocess.run(
            [sys.executable, "-c", STARTUP_CHILD, kind],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=str(ROOT),
        )
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
        if out.returncode != 0 or not lines:
            raise RuntimeError(f"start-up child ({kind}) failed: {out.stderr.strip()[-500:]}")
        return json.loads(lines[-1])

    try:
        res: dict[str, list[dict]] = {"app": [], "bare": []}
        for _r in range(runs + 1):  # run 0 is cold for both (each has its own modules to compile)
            for kind in ("bare", "app"):
                res[kind].append(once(kind))
        print(
            f"time to first window ({where}; cold = first process with empty bytecode and numba caches, warm = "
            f"median of the {runs} runs after it):"
        )
        for kind, label in (
            ("app", "nerstudio (main.py, the demo)"),
            ("bare", "bare PySide6 QMainWindow"),
        ):
            cold = res[kind][0]["seconds"]
            warm = [x["seconds"] for x in res[kind][1:]]
            print(
                f"  {label:<31} cold {cold:5.2f} s · warm {statistics.median(warm):5.2f} s "
                f"(runs {', '.join(f'{x:.2f}' for x in warm)})"
                + ("  (target ≤ 2 s)" if kind == "app" else "")
            )
        heavy = res["app"][-1]["heavy"]
        print(
            "  heavy modules loaded when the window appeared: "
            + (", ".join(heavy) if heavy else "none")
            + " (matplotlib, scipy.optimize and numba load on first use)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def stats_ms(xs) -> str:
    a = np.asarray(xs) * 1000
    return f"median {np.median(a):6.1f} ms · p95 {np.percentile(a, 95):6.1f} ms · max {a.max():6.1f} ms"


def train_and_measure(win, app, args, picks, run_no: int) -> float:
    """One training run of the reranker panel's settings while a 10 ms main-thread timer ticks;
    prints the longest stalls; returns the longest (ms)."""
    from PySide6.QtCore import QElapsedTimer, QTimer

    panel = win.training_panel
    panel.set_start("reranker")
    panel.set_algorithm(args.algo)
    for name, val in (("epochs", args.epochs), ("rounds", args.epochs * 100)):
        try:
            panel.set_param(name, val)
        except KeyError:
            pass
    panel.dev_path.setText("")
    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.nsecsElapsed()]
    where: list[str] = []

    cpu_last = [time.thread_time(), time.process_time()]

    def tick():
        now = clock.nsecsElapsed()
        gaps.append((now - last[0]) / 1e9)
        # CPU time of the main thread and of this whole process during the gap: a gap much longer
        # than both was spent waiting for a core (other processes), not for the interpreter lock
        th, pr = time.thread_time(), time.process_time()
        cpu = f"main thread ran {(th - cpu_last[0]) * 1000:.0f} ms, the process {(pr - cpu_last[1]) * 1000:.0f} ms"
        cpu_last[:] = [th, pr]
        where.append(
            f"at {now / 1e9:.1f} s, "
            + (
                ("busy: " + win.training_panel.message.text())
                if win.runner.busy
                else "after the job: " + win.training_panel.message.text()[:60]
            )
            + f"; {cpu}"
        )
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    tracer = None
    if args.trace_stalls:
        tracer = StallTracer(args.trace_stalls / 1000)
        timer.timeout.connect(tracer.beat)
        tracer.start()
    t = time.perf_counter()
    assert win.start_training(panel.snapshot())
    timer.start()
    during = []
    k = 0
    while win.runner.busy:
        app.processEvents()
        if (
            len(gaps) and len(gaps) % 50 == 0 and k < min(40, len(picks))
        ):  # a few switches while it trains
            s = time.perf_counter()
            win.select_sentence(int(picks[k]))
            during.append(time.perf_counter() - s)
            k += 1
        time.sleep(0.001)
    secs = time.perf_counter() - t
    # keep ticking a while: the main-thread handler that installs the model and refreshes the
    # views runs after the worker has finished, and its stall counts too
    t_end = time.perf_counter()
    while time.perf_counter() - t_end < 1.5:
        app.processEvents()
        time.sleep(0.001)
    timer.stop()
    win.runner.wait(60000)
    if tracer is not None:
        tracer.stop()
        tracer.report()
    g = np.asarray(gaps[1:]) if len(gaps) > 1 else np.zeros(1)
    run = win.curve_plot.runs[-1]
    longest = max(0.0, g.max() - 0.010) * 1000
    print(
        f"[run {run_no + 1}] train {args.algo} on eng.train N-best: {secs:.1f} s ({run.state}), "
        f"{len(run.steps)} curve points, {win.curve_plot.draws} redraw requests"
    )
    print(
        f"main-thread stall while training: max {longest:.0f} ms, "
        f"p99 gap {np.percentile(g, 99) * 1000:.0f} ms over {len(g):,} ticks of 10 ms  (target ≤ 100 ms)"
    )
    for j in np.argsort(-g)[:3]:
        print(f"   gap {g[j] * 1000:5.0f} ms  ({where[j + 1]})")
    tm = getattr(win, "last_run_timings", None) or {}
    if tm:
        print("training process: " + ", ".join(f"{k} {v:.2f} s" for k, v in tm.items()))
    if getattr(win, "last_install_ms", None) is not None:
        print(
            f"main-thread handler after training (install model, scores, refresh): {win.last_install_ms:.0f} ms"
        )
    if during:
        print(f"switch sentence during training:   {stats_ms(during)}")
    return longest


def demo_spawn_cost(runs: int) -> int:
    """Train the demo's reranker (perceptron, 4 epochs) from the window, alternately in a child
    process and in the window's own process; print wall times and the child's start-up."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from nerstudio.gui.main_window import MainWindow

    _app = QApplication.instance() or QApplication([])
    tmp = Path(tempfile.mkdtemp(prefix="nerstudio-bench-demo-"))
    settings = QSettings(str(tmp / "settings.ini"), QSettings.IniFormat)
    settings.setValue("annotation/recoveryDir", str(tmp / "recovery"))
    win = MainWindow(settings)
    win.load_demo()
    win.runner.wait(60000)
    panel = win.training_panel
    panel.set_start("reranker")
    panel.set_algorithm("perceptron")
    panel.set_param("epochs", 4)
    times: dict[bool, list[float]] = {True: [], False: []}
    starts = []
    for r in range(2 * runs):
        child = r % 2 == 0
        win.train_in_child = child
        t = time.perf_counter()
        win.start_training(panel.snapshot())
        win.runner.wait(120000)
        times[child].append(time.perf_counter() - t)
        if child:
            starts.append(win.last_run_timings.get("start_up", float("nan")))
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(
        f"demo training (perceptron, 4 epochs, {runs} runs each): in a child process median {med[True]:.2f} s "
        f"({', '.join(f'{x:.2f}' for x in times[True])}), in the window's process median {med[False]:.2f} s "
        f"({', '.join(f'{x:.2f}' for x in times[False])}); difference {med[True] - med[False]:+.2f} s; the "
        f"child's start-up (spawn to its first message) median {float(np.median(starts)):.2f} s (the child then "
        f"saves the second feature pass over the training list that scoring it in this process makes)"
    )
    win.close()
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    return 0


class Ticker:
    """A 10 ms main-thread timer recording the gaps between its ticks."""

    def __init__(self):
        from PySide6.QtCore import QTimer

        self.gaps: list[float] = []
        self.last = time.perf_counter()
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)

    def _tick(self):
        now = time.perf_counter()
        self.gaps.append(now - self.last)
        self.last = now

    def start(self):
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self) -> float:
        """Stops; returns the longest stall (ms)."""
        self.timer.stop()
        return max(0.0, max(self.gaps[1:], default=0.01) - 0.010) * 1000


def background_views(win, app) -> None:
    """The comparison over eng.train and the step-through setup on it, both computed in the
    window's second worker: how long they take and the longest main-thread stall meanwhile."""

    def run(label, start, done):
        tick = Ticker()
        tick.start()
        t = time.perf_counter()
        start()
        while not done():
            app.processEvents()
            time.sleep(0.001)
        secs = time.perf_counter() - t
        for _ in range(20):  # the handlers that show the result
            app.processEvents()
            time.sleep(0.002)
        print(
            f"{label:<34} {secs:6.2f} s in the worker, longest main-thread stall {tick.stop():.0f} ms "
            f"(target ≤ 100 ms)"
        )

    view = win.comparison_view
    run(
        "comparison tab on eng.train:",
        lambda: win.tabs.setCurrentWidget(view),
        lambda: view.result is not None and not view.busy,
    )
    teach = win.stepper  # the Teach controller: the stepper and its steps
    run(
        "step-through setup on eng.train:",
        lambda: win.stepper_dock.show(),
        lambda: teach.learner is not None and not teach.busy,
    )
    for _ in range(3):
        run("  one boosting round:", teach.step, lambda: not teach.busy)
    win.stepper_dock.hide()
    win.tabs.setCurrentWidget(win.curve_plot)


def edits(win, picks, settle, tmp: Path) -> None:
    """Annotation on eng.train with its N-best list and reranker attached: one edit command (as a
    key press in the sentence view makes it) until every view has caught up, its undo, and the
    atomic save of the whole corpus after an edit (to a temporary file, never the original)."""
    t_edit, t_undo = [], []
    view = win.sentence_view
    for k in picks[:60]:
        k = int(k)
        if len(win.corpus.sentences[k]) < 2:
            continue
        win.select_sentence(k)
        settle()
        old = list(win.corpus.sentences[k].spans)
        t = time.perf_counter()
        view.select_tokens(0, 2)
        view.set_type(
            "PER"
            if any(sp.start == 0 and sp.end == 2 and sp.label == "MISC" for sp in old)
            else "MISC"
        )
        settle()
        t_edit.append(time.perf_counter() - t)
        assert win.corpus.sentences[k].spans != old
        t = time.perf_counter()
        win.act_undo.trigger()
        settle()
        t_undo.append(time.perf_counter() - t)
        assert win.corpus.sentences[k].spans == old
    print(f"edit (set a type) and refresh:     {stats_ms(t_edit)}  (target ≤ 50 ms)")
    print(f"undo and refresh:                  {stats_ms(t_undo)}  (target ≤ 50 ms)")
    win.act_redo.trigger()  # one edit left unsaved
    settle()
    out = tmp / "eng.train.saved"
    t = time.perf_counter()
    # the whole save (else in the background: bench/save.py)
    ok = win.save_corpus(str(out), wait=True)
    secs = time.perf_counter() - t
    print(
        f"save eng.train after an edit:       {secs:.2f} s ({out.stat().st_size / 1e6:.1f} MB, atomic)  "
        f"(target ≤ 2 s)" + ("" if ok else "  FAILED")
    )
    out.unlink(missing_ok=True)


class StallTracer:
    """A watchdog thread: when the main thread's timer has not ticked for ``limit`` seconds, it
    records the Python stack of every thread (once per stall), to see who holds things up."""

    def __init__(self, limit: float):
        import threading

        self.limit = limit
        self.last = time.perf_counter()
        self.stalls: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._in_stall = False

    def beat(self) -> None:
        self.last = time.perf_counter()
        self._in_stall = False

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        import threading
        import traceback

        while not self._stop.wait(0.005):
            late = time.perf_counter() - self.last
            if late > self.limit and not self._in_stall:
                self._in_stall = True
                names = {t.ident: t.name for t in threading.enumerate()}
                parts = []
                for ident, frame in sys._current_frames().items():
                    if ident == threading.get_ident():
                        continue
                    stack = "".join(traceback.format_stack(frame, limit=8)[-8:])
                    parts.append(f"  -- thread {names.get(ident, ident)}:\n{stack}")
                self.stalls.append((late, "\n".join(parts)))

    def report(self) -> None:
        for late, text in self.stalls:
            print(f"== main thread late by {late * 1000:.0f} ms when sampled:\n{text}")


def kt_open_cost(model: Path, data: Path, runs: int) -> int:
    """File > Open sequence tagger on eng.train: wall time, the child's stages, the longest
    main-thread stall and the progress updates while the candidates are computed."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from nerstudio.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    tmp = Path(tempfile.mkdtemp(prefix="nerstudio-bench-kt-"))
    settings = QSettings(str(tmp / "settings.ini"), QSettings.IniFormat)
    settings.setValue("annotation/recoveryDir", str(tmp / "recovery"))
    win = MainWindow(settings)
    win.dialogs.ask_unsaved = lambda: "discard"
    win.dialogs.ask_recover = lambda path, summary="": False
    win.dialogs.ask_unsaved_models = lambda what: "discard"  # trained here to be measured, not kept
    win.resize(1280, 800)
    win.show()
    win.load_corpus(str(data / "eng.train"), attach=False)
    win.runner.wait(60000)
    for _ in range(5):
        app.processEvents()
    win.select_sentence(3)
    print(
        f"File > Open sequence tagger (K&T) {model} on eng.train ({len(win.corpus):,} sentences), "
        f"default n':"
    )
    updates: list[tuple[int, int]] = []
    win.runner.progress.connect(lambda m, d, n: updates.append((d, n)))
    worst = []
    for r in range(runs):
        updates.clear()
        tick = Ticker()
        tick.start()
        t = time.perf_counter()
        if not win.load_kt_model(str(model)):
            print("  could not start", file=sys.stderr)
            return 1
        while win.runner.busy:
            app.processEvents()
            time.sleep(0.001)
        wall = time.perf_counter() - t
        # the handler that installs the lists, and the panels after it
        end = time.perf_counter() + 1.5
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.002)
        stall = tick.stop()
        worst.append(stall)
        if win.last_error:
            print(f"  failed: {win.last_error}", file=sys.stderr)
            return 1
        tm = win.last_run_timings
        det = sum(1 for d, n in updates if n > 0)
        nd = win.document.kt.doc_nbest
        print(
            f"  run {r + 1}: {wall:.1f} s until installed (child: start-up {tm.get('start_up', 0):.2f} s, read "
            f"corpus {tm.get('read', 0):.1f} s, candidates {tm.get('candidates', 0):.1f} s, read back "
            f"{tm.get('read_back', 0):.1f} s; main-thread handler {getattr(win, 'last_install_ms', 0):.0f} ms); "
            f"longest main-thread stall {stall:.0f} ms over {len(tick.gaps):,} ticks; {det} determinate "
            f"progress updates; n' = {max(nd.n_candidates(d) for d in range(len(nd)))}"
        )
    print(f"  longest stall over {runs} run(s): {max(worst):.0f} ms  (target ≤ 100 ms)")
    win.close()
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "conll2003"))
    ap.add_argument("--algo", default="perceptron")
    ap.add_argument(
        "--epochs", type=int, default=3, help="epochs (perceptrons) or rounds/100 (boosting)"
    )
    ap.add_argument("--tagger-iter", type=int, default=40)
    ap.add_argument("--switches", type=int, default=200)
    ap.add_argument(
        "--runs", type=int, default=1, help="training runs (stall measurements) in a row"
    )
    ap.add_argument("--no-train", action="store_true", help="skip the training (stall) part")
    ap.add_argument(
        "--trace-stalls",
        type=float,
        default=0,
        metavar="MS",
        help="print the Python stacks of every thread when the main thread misses its tick by MS",
    )
    ap.add_argument(
        "--demo",
        action="store_true",
        help="only measure what the child process costs on the bundled demo (spawn start-up, "
        "training in a child against training in the window's process)",
    )
    ap.add_argument(
        "--startup", action="store_true", help="only measure the time to the first window"
    )
    ap.add_argument(
        "--kt-model",
        type=Path,
        metavar="PATH",
        help="only measure File > Open sequence tagger (K&T) of this saved perceptron / joint "
        "model on eng.train (wall time, the child's stages, main-thread stall)",
    )
    args = ap.parse_args()
    if args.startup:
        startup(max(args.runs, 3))
        return 0
    if args.kt_model is not None:
        if not (Path(args.data) / "eng.train").is_file():
            print(f"no {Path(args.data) / 'eng.train'}: nothing to measure", file=sys.stderr)
            return 1
        return kt_open_cost(args.kt_model, Path(args.data), args.runs)
    if args.demo:
        return demo_spawn_cost(args.runs if args.runs > 1 else 3)
    data = Path(args.data)
    if not (data / "eng.train").is_file():
        print(f"no {data / 'eng.train'}: nothing to measure", file=sys.stderr)
        return 1
    startup(max(args.runs, 3))

    from PySide6.QtCore import QCoreApplication, QSettings
    from PySide6.QtWidgets import QApplication

    from nerstudio.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    tmp = Path(tempfile.gettempdir()) / "nerstudio-bench-gui"
    tmp.mkdir(exist_ok=True)
    settings = QSettings(str(tmp / "settings.ini"), QSettings.IniFormat)
    # never the user's recovery files
    settings.setValue("annotation/recoveryDir", str(tmp / "recovery"))
    win = MainWindow(settings)
    win.dialogs.ask_unsaved = lambda: "discard"  # the edits below are measurements, not work
    win.dialogs.ask_recover = lambda path, summary="": False
    win.dialogs.ask_unsaved_models = lambda what: "discard"  # trained here to be measured, not kept
    win.resize(1280, 800)
    win.show()
    app.processEvents()

    def settle():
        for _ in range(3):
            QCoreApplication.processEvents()

    # -- open ----------------------------------------------------------------------------------
    t0 = time.perf_counter()
    win.load_corpus(str(data / "eng.train"), attach=False)
    settle()
    t_open = time.perf_counter() - t0
    corpus = win.corpus
    print(f"open eng.train ({len(corpus):,} sentences): {t_open:.2f} s  (target ≤ 2 s)")
    rng = np.random.default_rng(0)
    picks = rng.choice(len(corpus), size=min(args.switches, len(corpus)), replace=False)

    def switches(label: str, ks=picks) -> list[float]:
        out = []
        for k in ks:
            t = time.perf_counter()
            win.select_sentence(int(k))
            settle()
            out.append(time.perf_counter() - t)
        print(f"switch sentence, {label:<28} {stats_ms(out)}  (target ≤ 50 ms)")
        return out

    switches("no N-best list:")

    # -- N-best lists (cached) -----------------------------------------------------------------
    train_nb_path, dev_nb_path = tmp / "eng.train.nbest.npz", tmp / "eng.testa.nbest.npz"
    if not (train_nb_path.is_file() and dev_nb_path.is_file()):
        from nerstudio.corpus.formats import read_corpus
        from nerstudio.tagging.maxent import MaxEntTagger

        t = time.perf_counter()
        tagger = MaxEntTagger(max_iter=args.tagger_iter).fit(corpus.sentences)
        tagger.nbest(corpus.sentences, n=20).save(train_nb_path)
        tagger.nbest(read_corpus(data / "eng.testa").sentences, n=20).save(dev_nb_path)
        print(
            f"(built the eng.train / eng.testa 20-best lists in {time.perf_counter() - t:.0f} s, cached in {tmp})"
        )
    t = time.perf_counter()
    win.load_nbest(str(train_nb_path))
    win.runner.wait(600000)
    settle()
    print(
        f"attach the eng.train N-best list (load, line up, count): {time.perf_counter() - t:.2f} s "
        f"(in the worker; the window stays live)"
    )
    win.load_dev_nbest(str(dev_nb_path))
    switches("with N-best:")
    for label, key in (("'baseline wrong' filter:", "error"), ("no filter:", None)):
        t = time.perf_counter()
        win.status_filter.setCurrentIndex(win.status_filter.findData(key))
        settle()
        print(f"filter {label:<28} {time.perf_counter() - t:.3f} s  ({win.filter_count.text()})")
    t = time.perf_counter()
    win.search.setText("germany")
    settle()
    print(
        f"filter text search 'germany':      {time.perf_counter() - t:.3f} s  ({win.filter_count.text()})"
    )
    win.search.setText("")
    settle()

    # -- training: main-thread stall -----------------------------------------------------------
    if not args.no_train:
        maxima = [train_and_measure(win, app, args, picks, r) for r in range(args.runs)]
        if args.runs > 1:
            print(
                f"longest main-thread stall over {args.runs} runs: max {max(maxima):.0f} ms, median "
                f"{float(np.median(maxima)):.0f} ms  (per run: {', '.join(f'{m:.0f}' for m in maxima)} ms)"
            )
    switches("with N-best and reranker:")
    if not args.no_train:
        background_views(win, app)
    edits(win, picks, settle, tmp)
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
