"""Keystrokes of ten typical corrections, typed into the real window (issue 23, part 5).

A corpus of twelve sentences of the bundled demo dev set is written with ten typical
pre-annotation errors, one in each of the first ten sentences (a wrong type, a missing entity,
a spurious one, an entity one token too short or too long). The application opens it in a real
window (an X display: Xvfb + a window manager at 1280×800), and xdotool types, key by key, the
shortest sequence that makes the ten corrections: Ctrl+Down to the next sentence, the caret and
selection keys, a digit for the type, Delete, Ctrl(+Shift)+arrows for the boundaries, Ctrl+S.
The sequence is planned by a breadth-first search over the caret and selection states the keys
reach, twice: with the next / previous entity keys (Tab / Shift+Tab) and, as the baseline in the
same run, with the arrows only (what the application offered before). Each session is checked:
the saved file must hold exactly the corrected gold, so every key counted did its work, and the
first key typed after the file opens must not be lost.

    Xvfb :95 -screen 0 1280x800x24 & DISPLAY=:95 openbox &
    python bench/keystrokes.py --display :95 [--delay 120] [--keep DIR]

The settings, the remembered label keys and the recovery files live in a temporary home, never
the user's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nerstudio.corpus.formats import read_corpus  # noqa: E402
from nerstudio.corpus.model import Corpus, Document, Span  # noqa: E402
from nerstudio.corpus.writing import write_corpus  # noqa: E402
from nerstudio.demo import DEMO_DIR  # noqa: E402

DIGIT = {"PER": "1", "ORG": "2", "LOC": "3", "MISC": "4"}  # the fixed CoNLL keys
OTHER = {"PER": "ORG", "ORG": "LOC", "LOC": "PER", "MISC": "ORG"}
KINDS = (
    "type",
    "missing",
    "spurious",
    "short",
    "type",
    "long",
    "missing",
    "type",
    "short",
    "spurious",
)


def make_corpus():
    """(pre-annotated corpus, target spans per sentence, kinds): ten sentences with one error each."""
    sents = [
        s for s in read_corpus(DEMO_DIR / "dev.conll").sentences if 8 <= len(s) <= 30 and s.spans
    ]
    picked, errors = [], []
    for s in sents:
        kind = KINDS[len(picked)] if len(picked) < len(KINDS) else None
        if kind is None:
            picked.append(s)
            if len(picked) == 12:
                break
            continue
        spans = sorted(s.spans)
        # a middle entity (not the first): the walk to it is what the navigation keys save
        target = spans[len(spans) // 2]
        if kind == "short" and target.end - target.start < 2:
            continue
        if kind == "long" and (target.end >= len(s) or any(x.start == target.end for x in spans)):
            continue
        if kind == "spurious":  # an entity on a token outside every gold entity
            free = [
                i
                for i in range(len(s))
                if not any(x.start <= i < x.end for x in spans) and s.words[i][:1].isupper()
            ]
            if not free:
                continue
            wrong = spans + [Span(free[len(free) // 2], free[len(free) // 2] + 1, "MISC")]
        elif kind == "type":
            wrong = [x if x != target else Span(x.start, x.end, OTHER[x.label]) for x in spans]
        elif kind == "missing":
            wrong = [x for x in spans if x != target]
        elif kind == "short":
            wrong = [x if x != target else Span(x.start, x.end - 1, x.label) for x in spans]
        else:
            wrong = [x if x != target else Span(x.start, x.end + 1, x.label) for x in spans]
        errors.append((len(picked), kind, sorted(spans), sorted(wrong)))
        picked.append(s)
    target = [sorted(s.spans) for s in picked]
    for k, _kind, _gold, wrong in errors:
        picked[k].spans = wrong
    # as the demo files
    return (
        Corpus([Document(picked)], format="conll2003", scheme="iob1"),
        target,
        errors,
    )


# -- the planner: what the keys do (as nerstudio/gui/views/annotation_view.py does it) ----------
def _select(state, n):
    a, c = state
    return min(a, c), max(a, c) + 1


def _moves(state, spans, n, tab: bool):
    a, c = state
    yield "Right", (min(n - 1, c + 1),) * 2
    yield "Left", (max(0, c - 1),) * 2
    yield "shift+Right", (a, min(n - 1, c + 1))
    yield "shift+Left", (a, max(0, c - 1))
    yield "End", (n - 1, n - 1)
    if tab:
        lo, hi = _select(state, n)
        nxt = [s for s in spans if s.start > lo or (s.start == lo and s.end > hi)]
        if nxt:
            yield "Tab", (nxt[0].start, nxt[0].end - 1)
        prev = [s for s in spans if s.start < lo]
        if prev:
            yield "shift+Tab", (prev[-1].start, prev[-1].end - 1)


def walk(spans, n, goal, tab: bool) -> list[str]:
    """Shortest key sequence from the caret on token 0 to a state where ``goal(lo, hi, caret)``."""
    start = (0, 0)
    seen = {start: []}
    todo = deque([start])
    while todo:
        st = todo.popleft()
        lo, hi = _select(st, n)
        if goal(lo, hi, st[1]):
            return seen[st]
        for key, nxt in _moves(st, spans, n, tab):
            if nxt not in seen:
                seen[nxt] = seen[st] + [key]
                todo.append(nxt)
    raise RuntimeError("unreachable")


def plan(corpus, errors, tab: bool) -> list[str]:
    keys: list[str] = []
    at = 0
    for k, kind, gold, wrong in errors:
        keys += ["ctrl+Down"] * (k - at)
        at = k
        n = len(corpus.sentences[k])
        fixed = {(x.start, x.end, x.label) for x in gold}
        bad = [x for x in wrong if (x.start, x.end, x.label) not in fixed]
        good = [x for x in gold if x not in wrong]
        if kind == "missing":
            t = good[0]
            keys += walk(wrong, n, lambda lo, hi, c: (lo, hi) == (t.start, t.end), tab) + [
                DIGIT[t.label]
            ]
            continue
        s = bad[0]

        def on(lo, hi, c, s=s):
            return (lo, hi) == (s.start, s.end) or (hi - lo == 1 and s.start <= c < s.end)

        keys += walk(wrong, n, on, tab)
        keys.append(
            {
                "type": DIGIT[good[0].label] if good else "",
                "spurious": "Delete",
                "short": "ctrl+Right",
                "long": "ctrl+shift+Left",
            }[kind]
        )
    return keys + ["ctrl+s"]


# -- the real window ------------------------------------------------------------------------
def xdo(display: str, *args: str) -> str:
    return subprocess.run(
        ["xdotool", *args],
        env={**os.environ, "DISPLAY": display},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def session(display: str, path: Path, home: Path, keys: list[str], delay_ms: int) -> float:
    env = {
        **os.environ,
        "DISPLAY": display,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "NERSTUDIO_LABEL_KEYS": str(home / "keys.json"),
        "NERSTUDIO_RECOVERY_DIR": str(home / "recovery"),
        "PYTHONPATH": str(ROOT),
    }
    env.pop("QT_QPA_PLATFORM", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "nerstudio", "gui", str(path)], env=env, cwd=str(home)
    )
    try:
        win = ""
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60 and not win:
            time.sleep(0.2)
            try:
                win = xdo(
                    display, "search", "--onlyvisible", "--name", f"nerstudio — {path.name}"
                ).split("\n")[0]
            except subprocess.CalledProcessError:
                pass
        if not win:
            raise RuntimeError("the window did not open")
        xdo(display, "windowactivate", "--sync", win)
        time.sleep(0.3)
        start = time.monotonic()
        for k in keys:  # one at a time: each is one keystroke
            xdo(display, "key", "--clearmodifiers", k)
            time.sleep(delay_ms / 1000)
        secs = time.monotonic() - start
        time.sleep(1.0)
        xdo(display, "key", "ctrl+q")
        proc.wait(30)
        return secs
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--display", default=os.environ.get("DISPLAY", ":95"))
    ap.add_argument("--delay", type=int, default=150, help="ms between keys")
    ap.add_argument("--keep", help="keep the corpora and settings in this folder")
    ap.add_argument("--plan-only", action="store_true", help="print the planned keys, type nothing")
    args = ap.parse_args()
    corpus, target, errors = make_corpus()
    work = Path(args.keep or tempfile.mkdtemp(prefix="nerstudio-keys-"))
    work.mkdir(parents=True, exist_ok=True)
    print("errors:", ", ".join(f"sentence {k + 1} {kind}" for k, kind, _g, _w in errors))
    results = {}
    for name, tab in (("arrows only (before)", False), ("with Tab / Shift+Tab", True)):
        keys = plan(corpus, errors, tab)
        walks = sum(
            1
            for k in keys
            if k in ("Right", "Left", "shift+Right", "shift+Left", "End", "Tab", "shift+Tab")
        )
        print(
            f"{name}: {len(keys)} keystrokes ({walks} to walk to a token or entity): {' '.join(keys)}"
        )
        if args.plan_only:
            continue
        home = work / ("home-tab" if tab else "home-arrows")
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir()
        path = home / "preannotated.conll"
        write_corpus(corpus, path, "conll2003")
        secs = session(args.display, path, home, keys, args.delay)
        got = [sorted(s.spans) for s in read_corpus(path).sentences]
        wrong = [k + 1 for k, (g, t) in enumerate(zip(got, target)) if g != t]
        if wrong:
            print(
                f"  FAILED: the saved file differs from the corrected gold in sentence(s) {wrong}"
            )
            return 1
        print(
            f"  typed in the real window in {secs:.1f} s; the saved file holds the ten corrections"
        )
        results[name] = len(keys)
    if not args.plan_only:
        print(
            "keystrokes for ten corrections: " + " vs ".join(f"{v} {k}" for k, v in results.items())
        )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
