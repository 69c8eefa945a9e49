#!/usr/bin/env python3
"""Saving a large corpus: does the window keep responding?

    python bench/save.py [--data ../shared/data/conll2003] [--copies 5] [--runs 3]

Writes (in a temporary folder, never in the repository) eng.train repeated ``--copies`` times
(5: about 1.02 million tokens), opens it in the main window (offscreen), and saves it after an
edit, ``--runs`` times each way:

* ``main thread``: the whole save on the main thread (what Ctrl+S did before: the window is
  frozen while the file is written and fingerprinted) — the baseline, measured in the same run;
* ``background``: Ctrl+S takes a snapshot of the spans and the save point on the main thread,
  writes and fingerprints in a thread (:class:`nerstudio.app.saving.PendingSave`), and records
  the result back on the main thread; the thread paces itself
  (:class:`nerstudio.app.pacing.Pacer`) so that the window's thread gets the interpreter;
* ``not paced``: the same thread without the pacing (as before it), for comparison in the
  same run.

A 10 ms QTimer ticks on the main thread during each save (from the key until "Saved", plus
0.3 s); the longest gap between two ticks, minus 10 ms, is the longest main-thread stall
(target ≤ 100 ms). While the background save runs a key (a type's digit on the sentence view,
through the window's key handling) is pressed every 100 ms, and timed from the press until the
window has processed it and what it posted; the same keys are pressed with no save running,
in the same run, as the baseline. The keys' own gaps are left out of the save's stall. The
longest stall of the idle window over 3 s is printed too: on a loaded machine (more runnable
processes than cores) a thread holding the interpreter's lock can be descheduled, so that is
the floor. Then the main-thread steps of a save are timed one by one (the snapshot, the disk
check, the recording).

To measure another checkout (e.g. an older commit), copy this file out of the repository and
run it with ``PYTHONPATH`` pointing at that checkout.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


class Ticker:
    """A 10 ms main-thread timer recording the gaps between its ticks."""

    def __init__(self):
        from PySide6.QtCore import QTimer

        self.gaps: list[float] = []
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)

    def _tick(self):
        now = time.perf_counter()
        self.gaps.append(now - self.last)
        self.ends.append(now)
        self.last = now

    def start(self):
        self.gaps, self.ends = [], []
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self, besides: list[tuple[float, float]] = ()) -> float:
        """Stops; returns the longest stall (ms), leaving out the gaps holding ``besides`` (the
        times of keys, whose own cost is not the save's)."""
        self.timer.stop()
        gaps = [
            g
            for g, end in zip(self.gaps, self.ends)
            if not any(end - g <= b1 and b0 <= end for b0, b1 in besides)
        ]
        return max(0.0, max(gaps, default=0.01) - 0.010) * 1000


def steps(win, owner, repeat: int) -> None:
    """Time each main-thread step of a background save on its own (the longest of ``repeat``)."""
    doc, file = win.document, owner.file
    c = doc.corpus

    def worst(fn) -> float:
        out = 0.0
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            out = max(out, (time.perf_counter() - t0) * 1000)
        return out

    def touched() -> None:
        """Another program touched the file (same bytes, new time): the check hashes it."""
        st = os.stat(file.path)
        os.utime(file.path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        state = file.check()
        assert state is not None and state.same
        file.acknowledge(state)

    parts = {
        "snapshot of the span lists": lambda: [s.spans for s in c.sentences],
        "review states copied": lambda: doc.reviewed.copy(),
        "notes and flags copied": doc.marks,
        "save point": doc.save_point,
        "disk check (file unchanged)": file.check,
        "whole begin_save": lambda: file.begin_save(),
        # a save does this in its thread now; the window still does it when it is activated
        "check of a touched file": touched,
    }
    print("main-thread steps of a save (longest of %d):" % repeat)
    for name, fn in parts.items():
        print(f"  {name:<30} {worst(fn):6.1f} ms")
        if name == "whole begin_save":
            print("and what a save no longer does on the main thread:")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared = (
        os.environ.get("NERSTUDIO_SHARED_DATA")
        or Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    ap.add_argument("--data", default=str(Path(shared) / "conll2003"))
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5, help="times each main-thread step is timed")
    args = ap.parse_args()
    src = Path(args.data) / "eng.train"
    if not src.is_file():
        print(f"{src} not found (--data)", file=sys.stderr)
        return 1
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from nerstudio.corpus.model import Span
    from nerstudio.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    tmp = Path(tempfile.mkdtemp(prefix="nerstudio-bench-save-"))
    atexit.register(shutil.rmtree, tmp, True)  # the 16 MB copy goes, whatever happens
    big = tmp / "eng.big.conll"
    text = src.read_text(encoding="utf-8")
    big.write_text(text * args.copies, encoding="utf-8")
    st = QSettings(str(tmp / "settings.ini"), QSettings.IniFormat)
    st.setValue("annotation/recoveryDir", str(tmp / "recovery"))
    win = MainWindow(st)
    win.dialogs.ask_unsaved = lambda: "discard"
    win.dialogs.ask_recover = lambda *a: False
    t0 = time.perf_counter()
    assert win.load_corpus(str(big), attach=False)
    win.show()
    app.processEvents()
    c = win.corpus
    print(
        f"{big.name}: {c.n_tokens:,} tokens, {len(c):,} sentences, {big.stat().st_size / 1e6:.1f} MB; "
        f"opened in {time.perf_counter() - t0:.1f} s"
    )
    owner = win.annotation.owner
    recorded: list[float] = []
    record = owner._saved

    def timed_record(pending, *rest):  # the main-thread part after a background write
        r0 = time.perf_counter()
        out = record(pending, *rest)
        recorded.append((time.perf_counter() - r0) * 1000)
        return out

    owner._saved = timed_record
    k = next(k for k, s in enumerate(c.sentences) if len(s) >= 3)
    win.annotation.ctx.cursor.go(k)
    view = win.annotation.v.sentence_view
    view.setFocus()
    tick = Ticker()
    from nerstudio.gui.controllers import file_owner

    paced = getattr(file_owner, "Pacer", None)  # None: a checkout from before the pacing
    modes = ["main thread", "background"] + (["not paced"] if paced else [])
    results: dict[str, list] = {how: [] for how in modes}
    key_ms: dict[str, list[float]] = {how: [] for how in modes[1:]}
    presses = [0]

    def key() -> tuple[float, float]:
        """Press a type's digit on the sentence view; (start, end) once the window processed it."""
        for _ in range(2):  # the other type's key when the entity has this one already
            presses[0] += 1
            rev = win.document.revision
            k0 = time.perf_counter()
            QTest.keyClick(view, Qt.Key.Key_1 if presses[0] % 2 else Qt.Key.Key_2)
            app.processEvents()
            k1 = time.perf_counter()
            if win.document.revision != rev:
                return k0, k1
        raise AssertionError("the keys did not edit the sentence")

    def pump(until) -> list[tuple[float, float]]:
        """Process events until ``until()``; a key every 100 ms when ``keys``."""
        keys: list[tuple[float, float]] = []
        t0 = time.perf_counter()
        while not until():
            app.processEvents()
            time.sleep(0.002)
            if with_keys and time.perf_counter() - t0 > 0.05 + 0.1 * len(keys):
                keys.append(key())
        return keys

    def ms(keys) -> list[float]:
        return sorted((b - a) * 1000 for a, b in keys)

    def idle(seconds: float) -> float:
        """The longest stall with nothing to do: what the machine's load alone costs."""
        tick.start()
        end = time.perf_counter() + seconds
        pump(lambda: time.perf_counter() >= end)
        return tick.stop()

    with_keys = False
    print(
        f"  idle window for 3 s: longest main-thread stall {idle(3.0):.0f} ms (the machine's load alone)"
    )
    with_keys = True
    end = time.perf_counter() + 3.0
    base_keys = ms(pump(lambda: time.perf_counter() >= end))
    n = 0

    def save(how: str, typing: bool):
        """One save ``how``, keys pressed meanwhile when ``typing``: (stall, s, keys, Ctrl+S ms)."""
        nonlocal n, with_keys
        owner.background_tokens = 10**12 if how == "main thread" else 0
        if paced:  # the background save as it was before it paced itself
            file_owner.Pacer = (lambda: None) if how == "not paced" else paced
        n += 1
        win.document.set_spans(k, [Span(0, 1 + n % 2, "ORG")])  # an edit to save
        app.processEvents()
        tick.start()
        t0 = time.perf_counter()
        win.annotation.act_save.trigger()
        handler_ms = (time.perf_counter() - t0) * 1000
        with_keys = typing
        keys = pump(lambda: not owner.saving)
        secs = time.perf_counter() - t0
        with_keys = False
        end = time.perf_counter() + 0.3
        pump(lambda: time.perf_counter() >= end)
        stall = tick.stop(besides=keys)
        assert "Saved" in win.statusBar().currentMessage(), win.statusBar().currentMessage()
        assert win.document.is_dirty() == bool(keys), "keys pressed while saving stay unsaved"
        return stall, secs, keys, handler_ms

    for run in range(args.runs):
        for how in modes:
            stall, secs, keys, handler_ms = save(how, how != "main thread")
            results[how].append((stall, secs))
            extra = ""
            if how != "main thread":
                km = ms(keys)
                key_ms[how] += km
                extra = (
                    f"; {len(km)} keys while saving: median {km[len(km) // 2]:.0f} ms, "
                    f"longest {km[-1]:.0f} ms; on the main thread: Ctrl+S {handler_ms:.0f} ms, "
                    f"recording the save {recorded[-1]:.0f} ms"
                )
            print(
                f"  run {run + 1} {how:<12} saved in {secs:5.2f} s, longest main-thread stall {stall:6.0f} ms{extra}"
            )
    for how, rs in results.items():
        print(
            f"{how:<12} longest stall over {len(rs)} run(s): {max(r[0] for r in rs):6.0f} ms "
            f"(median save {sorted(r[1] for r in rs)[len(rs) // 2]:.2f} s)"
        )
    print(
        f"a key with no save running: median {base_keys[len(base_keys) // 2]:.0f} ms, longest "
        f"{base_keys[-1]:.0f} ms ({len(base_keys)} keys)"
    )
    for how, km in key_ms.items():
        km.sort()
        print(
            f"a key while a save runs ({how}): median {km[len(km) // 2]:.0f} ms, longest "
            f"{km[-1]:.0f} ms ({len(km)} keys)"
        )
    quiet = {how: save(how, False)[1] for how in modes[1:]}
    print(
        "with no key pressed while saving, a background save takes "
        + ", ".join(f"{secs:.2f} s ({how})" for how, secs in quiet.items())
    )
    steps(win, owner, args.repeat)
    print("target: no stall over 100 ms while saving")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
