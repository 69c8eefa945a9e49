#!/usr/bin/env python3
"""Benchmark: is the sentence view usable on a 1,000-token sentence?

    python bench/sentence_view.py [--tokens 1000] [--reps 30]

Opens the real main window offscreen on a generated corpus whose one sentence has ``--tokens``
tokens (every fifth token already a gold entity), focuses the sentence view, and times keypresses
until the window has processed its events (the repaint included):

* **caret**: Right (the caret moves one token; the selection is scrolled into view);
* **extend selection**: Shift+Right;
* **label**: a type key on a two-token selection (an undoable edit through the document, the
  browser's counts, the entity table and the sentence view refreshed), then Delete (clear);
* **label from the browser**: the same type key with the focus in the corpus browser.

Prints median / p95 / max per kind (target: well under 50 ms). The corpus is written to a
temporary folder and removed.

On this machine (2 shared cores, offscreen; this script run alternately on the code before issue
14's changes, commit e167b29, and after), medians: caret 7.5 → 0.5 ms, Shift+Right 7.5 → 0.6 ms
(only the rows on screen are painted, a selection change repaints only its tokens, widths are
measured once per sentence), label 16 → 6.8 ms, clear 16 → 6.6 ms (a gold edit no longer lays the
sentence out again), and a type key pressed in the browser: before, it edited nothing (0 of 30);
after, 6.5 ms (30 of 30).
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


def stats_ms(xs) -> str:
    a = np.asarray(xs) * 1000
    return f"median {np.median(a):6.1f} ms · p95 {np.percentile(a, 95):6.1f} ms · max {a.max():6.1f} ms"


def write_corpus(path: Path, n_tokens: int) -> None:
    words = ["Alpha", "beta", "Gamma", "delta", "epsilon", "Zeta", "eta", "theta", "Iota", "kappa"]
    lines = []
    for i in range(n_tokens):
        tag = f"B-{('PER', 'ORG', 'LOC', 'MISC')[i // 5 % 4]}" if i % 5 == 0 else "O"
        lines.append(f"{words[i % len(words)]}{i} {tag}")
    path.write_text("\n".join(lines) + "\n\nshort O\nsentence O\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()

    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    from nerstudio.corpus.model import Span
    from nerstudio.gui.main_window import MainWindow

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "long.conll"
        write_corpus(corpus, args.tokens)
        st = QSettings(str(Path(tmp) / "settings.ini"), QSettings.IniFormat)
        st.setValue("annotation/recoveryDir", str(Path(tmp) / "recovery"))
        win = MainWindow(st)
        win.dialogs.ask_unsaved = lambda: "discard"
        win.resize(1280, 800)
        win.show()
        assert win.load_corpus(str(corpus), attach=False)
        win.jobs.wait(60000)
        win.select_sentence(0)
        view = win.sentence_view
        view.setFocus()
        for _ in range(5):
            app.processEvents()

        def timed(widget, key, mods=Qt.NoModifier) -> float:
            t0 = time.perf_counter()
            QTest.keyClick(widget, key, mods)
            app.processEvents()
            return time.perf_counter() - t0

        caret, extend, label, clear, browser = [], [], [], [], []
        for r in range(args.reps):
            view.select_tokens(3 + 5 * r, 4 + 5 * r)  # a token between two entities
            app.processEvents()
            caret.append(timed(view, Qt.Key_Right))
            extend.append(timed(view, Qt.Key_Right, Qt.ShiftModifier))
            label.append(timed(view, Qt.Key_O))
            clear.append(timed(view, Qt.Key_Delete))
        win.corpus_view.setFocus()
        app.processEvents()
        for r in range(args.reps):
            view.select_tokens(3 + 5 * r, 5 + 5 * r)
            app.processEvents()
            browser.append(timed(win.corpus_view, Qt.Key_L))
        print(
            f"sentence of {args.tokens} tokens, window 1280×800, {args.reps} keypresses of each kind"
        )
        print(f"  caret (Right)              {stats_ms(caret)}")
        print(f"  extend (Shift+Right)       {stats_ms(extend)}")
        print(f"  label (type key)           {stats_ms(label)}")
        print(f"  clear (Delete)             {stats_ms(clear)}")
        print(f"  label, browser focused     {stats_ms(browser)}")
        spans = set(win.corpus.sentences[0].spans)
        made = sum(1 for r in range(args.reps) if Span(3 + 5 * r, 5 + 5 * r, "LOC") in spans)
        print(f"  two-token LOC entities made with the browser focused: {made} of {args.reps}")
        win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
