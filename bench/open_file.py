#!/usr/bin/env python3
"""Opening a large file: does the window keep responding?

    python bench/open_file.py [--tokens 1000000] [--file /tmp/x.conll]

Writes (in /tmp, never in the repository) a CoNLL file whose tokens form ONE sentence, as an
export without blank lines does, then opens it in the main window twice:

* ``main thread``: read and indexed on the main thread, as the window did before (``read_corpus``
  then ``set_corpus``): the event loop is blocked for the whole read;
* ``worker``: ``FilesController.open_corpus``, reading and indexing in the worker.

A 10 ms QTimer ticks during each; the report gives the longest gap between two ticks while the
file is read and indexed (how long the window was frozen), the time until the corpus is read,
and the time until it is shown (the sentence view's layout of that sentence is part of the
latter: see the annotation view).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def write_file(path: str, tokens: int) -> None:
    tags = ("O", "O", "O", "B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG", "O")
    with open(path, "w", encoding="utf-8") as f:
        for i in range(tokens):
            f.write(f"w{i % 4999} {tags[i % len(tags)]}\n")


class Ticks:
    def __init__(self):
        from PySide6.QtCore import QTimer

        self.last = time.monotonic()
        self.max_gap = 0.0
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self.tick)

    def tick(self):
        now = time.monotonic()
        self.max_gap = max(self.max_gap, now - self.last)
        self.last = now

    def start(self):
        self.last = time.monotonic()
        self.max_gap = 0.0
        self.timer.start()

    def stop(self) -> float:
        self.tick()
        self.timer.stop()
        return self.max_gap


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=1_000_000)
    ap.add_argument(
        "--file", default=None, help="the file to write (default: a temporary one in /tmp)"
    )
    args = ap.parse_args()
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from nerstudio.corpus.formats import read_corpus
    from nerstudio.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    tmp = tempfile.mkdtemp(prefix="nerstudio-bench-open-")
    path = args.file or os.path.join(tmp, "one-sentence.conll")
    t0 = time.perf_counter()
    write_file(path, args.tokens)
    print(
        f"{path}: {args.tokens:,} tokens in one sentence, {os.path.getsize(path) / 1e6:.1f} MB "
        f"(written in {time.perf_counter() - t0:.1f} s)"
    )

    def window():
        st = QSettings(os.path.join(tmp, "settings.ini"), QSettings.IniFormat)
        st.setValue("annotation/recoveryDir", os.path.join(tmp, "recovery"))
        w = MainWindow(st)
        w.show()
        app.processEvents()
        return w

    ticks = Ticks()
    # before: everything on the main thread
    w = window()
    ticks.start()
    t0 = time.perf_counter()
    corpus = read_corpus(path)  # what load_corpus did on the main thread
    t_read = time.perf_counter() - t0
    gap_read = time.monotonic() - ticks.last
    w.set_corpus(corpus)
    app.processEvents()
    t_shown = time.perf_counter() - t0
    gap_all = ticks.stop()
    print(
        f"main thread: read in {t_read:.1f} s, shown after {t_shown:.1f} s; window frozen {gap_read:.1f} s "
        f"while reading, {gap_all:.1f} s in all"
    )
    w.close()
    del corpus
    # after: reading and indexing in the worker
    w = window()
    done: list = []
    read_at: list = []
    w.jobs.finished.connect(
        lambda name: read_at.append(time.perf_counter()) if name == "open" else None
    )
    ticks.start()
    t0 = time.perf_counter()
    w.files.open_corpus(path, attach=False, then=done.append)
    gaps_during_read = 0.0
    while not done:
        app.processEvents()
        if not read_at:
            gaps_during_read = max(gaps_during_read, time.monotonic() - ticks.last)
        time.sleep(0.002)
    t_shown = time.perf_counter() - t0
    gap_all = ticks.stop()
    t_read = (read_at[0] if read_at else time.perf_counter()) - t0
    print(
        f"worker:      read in {t_read:.1f} s, shown after {t_shown:.1f} s; window frozen at most "
        f"{gaps_during_read * 1000:.0f} ms while reading, {gap_all:.1f} s in all (showing the sentence)"
    )
    w.close()
    if not args.file:
        os.remove(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
