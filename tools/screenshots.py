#!/usr/bin/env python3
"""Screenshots of the four workspaces, taken from the real application under X.

    DISPLAY=:99 python tools/screenshots.py [--out docs] [--python PYTHON]

Starts ``python main.py`` (the bundled demo) on the X display in ``$DISPLAY`` — an Xvfb screen of
1280×800 with a window manager (openbox), as the README's pictures need — maximises the window by
double-clicking its title bar, then does each user's task with real key presses and clicks sent
by ``xdotool``, and saves the whole screen with ImageMagick's ``import`` after each:

* **Annotate**: a sentence picked in the browser with the arrow keys; in the sentence view an
  entity is selected with Shift+Right, cleared with Delete and typed again with its type key;
* **Inspect**: Next change by the reranker (Shift+F8), then the reranker's pick compared with the
  tagger's top candidate (Ctrl+D); ``--inspect-as screenshot-1024.png`` takes only this one, for
  the small screens (Xvfb at 1024×768, or 1920×1080 with ``QT_SCALE_FACTOR=2``);
* **Train**: the perceptron chosen in the training panel, 8 epochs, F5, and the curve waited for;
* **Teach**: five boosting rounds stepped with F10;
* **Uncertain**: View ▸ Most uncertain first, Home, then F7 (the next most uncertain sentence);
* **Agreement**: File ▸ Compare annotations… of the demo corpus (A) against a second annotator's
  copy (B, written by this script: some entities dropped, some retyped), a difference clicked;
* **Pre-annotate**: a plain-text file (written by this script) opened from the command line,
  Annotate ▸ Pre-annotate with model… with the bundled demo model.

The application's settings and data folders are fresh temporary ones (no saved layout, no
recovery file), so the pictures do not depend on who runs it. Needs xdotool and ImageMagick;
Xvfb and openbox can be started with ``Xvfb :99 -screen 0 1280x800x24 &`` and
``DISPLAY=:99 openbox &``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAIN_WAIT = 25.0  # seconds
INSPECT_PNG = "screenshot-inspect.png"


def xdo(*args: str) -> str:
    return subprocess.run(
        ["xdotool", *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def key(*keys: str, pause: float = 0.15) -> None:
    for k in keys:
        xdo("key", "--clearmodifiers", k)
        time.sleep(pause)


def click(wid: str, x: int, y: int, pause: float = 0.4) -> None:
    """A left click at (x, y) of the window's client area."""
    xdo("mousemove", "--window", wid, str(x), str(y))
    time.sleep(0.1)
    xdo("click", "1")
    time.sleep(pause)


def shot(path: Path) -> None:
    time.sleep(1.0)  # the last repaint, and the curves' render thread
    subprocess.run(["import", "-window", "root", str(path)], check=True)
    print(f"wrote {path}")


def find_window(proc: subprocess.Popen, timeout: float = 60) -> str:
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the application exited with status {proc.returncode}")
        out = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", "^nerstudio"],
            capture_output=True,
            text=True,
        ).stdout.split()
        if out:
            return out[-1]
        time.sleep(0.2)
    raise SystemExit("no nerstudio window appeared")


def _geometry(wid: str) -> tuple[int, int, int, int]:
    """The window's absolute x, y, width and height (xwininfo; xdotool's position counts the
    window manager's frame twice)."""
    out = subprocess.run(["xwininfo", "-id", wid], capture_output=True, text=True).stdout
    field = {
        line.split(":")[0].strip(): line.split(":")[1].strip()
        for line in out.splitlines()
        if ":" in line
    }
    return (
        int(field["Absolute upper-left X"]),
        int(field["Absolute upper-left Y"]),
        int(field["Width"]),
        int(field["Height"]),
    )


def _screen() -> tuple[int, int]:
    out = subprocess.run(["xdotool", "getdisplaygeometry"], capture_output=True, text=True)
    w, h = out.stdout.split()
    return int(w), int(h)


def maximise(wid: str) -> None:
    """Double-click the title bar (openbox maximises), unless the window already fills the
    screen below a visible title bar (as the application sizes itself on a small screen)."""
    xdo("windowactivate", "--sync", wid)
    x, y, w, h = _geometry(wid)
    sw, sh = _screen()
    if x <= 8 and 16 <= y <= 40 and w >= sw - 16 and y + h >= sh - 16:
        return
    xdo("windowmove", "--sync", wid, "0", "40")  # the title bar on the screen, above the window
    time.sleep(0.3)
    _x, top, _w, _h = _geometry(wid)
    xdo("mousemove", "400", str(max(2, top - 10)))
    xdo("click", "--repeat", "2", "--delay", "80", "1")
    time.sleep(1.0)
    xdo("windowactivate", "--sync", wid)


def annotate(wid: str, out: Path) -> None:
    key("ctrl+1", "alt+1")  # the Annotate workspace, focus in the browser on sentence 1
    # sentence 17 ("Passenger numbers rose … between Kessel and Port Albury"): 16 sentences and one
    # document row further down
    key(*["Down"] * 17, pause=0.05)
    key("alt+s")  # to the sentence view (Tab there and in the browser goes to the next entity)
    key("End", "Left", "Left", "shift+Right")  # "Port Albury" (the two tokens before the final ".")
    key("Delete")
    key("Left", "shift+Right")  # select it again with Shift+Right …
    key("l")  # … and type it: LOC
    shot(out / "screenshot-annotate.png")


def inspect(wid: str, out: Path) -> None:
    key("ctrl+2", "alt+1")
    # sentence 1, then the second sentence after it the reranker changed
    key("Home", "Down", pause=0.3)
    key("shift+F8", "shift+F8", pause=0.6)
    key("alt+2", "ctrl+d", pause=0.6)  # its pick against the tagger's top candidate
    shot(out / INSPECT_PNG)


def train(wid: str, out: Path, pos: dict) -> None:
    key("ctrl+3", pause=4.0)  # the first visit draws the curves (seconds on a busy machine)
    click(wid, *pos["algorithm"], pause=2.0)  # the Algorithm list …
    key("p", "Return", pause=1.0)  # … perceptron
    click(wid, *pos["epochs"])
    key("ctrl+a")
    xdo("type", "8")
    key("Tab", "F5")
    time.sleep(TRAIN_WAIT)  # the run (a few seconds on the demo), installing the model, the curve
    shot(out / "screenshot-train.png")


def teach(wid: str, out: Path) -> None:
    # entering Teach computes the training list's features (seconds on a busy machine)
    key("ctrl+4", pause=5.0)
    for _ in range(5):
        key("F10", pause=0.5)
    time.sleep(1.5)
    shot(out / "screenshot-teach.png")


SECOND_ANNOTATOR = """
import sys
from nerstudio.corpus import read_corpus, write_corpus
from nerstudio.corpus.model import Span
from nerstudio.demo import DEMO_CORPUS
c = read_corpus(DEMO_CORPUS)
other = {"PER": "ORG", "ORG": "LOC", "LOC": "MISC", "MISC": "PER"}
spans, k = [], 0
for s in c.sentences:
    out = []
    for sp in s.spans:
        k += 1
        if k % 9 == 0:
            continue  # B missed this one
        out.append(Span(sp.start, sp.end, other.get(sp.label, sp.label)) if k % 7 == 0 else sp)
    spans.append(out)
write_corpus(c.with_spans(spans), sys.argv[1])
"""

PLAIN_TEXT = (
    "Passenger numbers at Kessel Airport rose again in March, the Harbour Authority said on Tuesday.\n\n"
    "Maria Lindqvist, who runs the ferry line between Kessel and Port Albury, expects a busy summer. "
    "The Albury Times reported that Nordvik Shipping will add two boats.\n"
)


def uncertain(wid: str, out: Path) -> None:
    key("ctrl+1", "alt+1")
    key("alt+v", "Up", "Return", pause=0.8)  # View ▸ Most uncertain first (the menu's last item)
    key("alt+1", "Home", pause=0.4)  # the most uncertain sentence …
    key("F7", pause=0.6)  # … and the next one
    shot(out / "screenshot-uncertain.png")


def agreement(wid: str, out: Path, other: Path) -> None:
    key("ctrl+1", "alt+1", "Home")
    # File ▸ Compare annotations… (above Quit): A is the open corpus
    key("alt+f", "Up", "Up", "Return", pause=1.0)
    key("Tab", "Tab")  # to B
    xdo("type", "--delay", "5", str(other))
    key("Return", pause=4.0)  # Compare; the result shows in the Agreement tab
    # the second sentence that differs: both annotations, and the browser moves there
    click(wid, 950, 336)
    shot(out / "screenshot-agreement.png")


def preannotate(wid: str, out: Path) -> None:
    key("ctrl+1")
    # Annotate ▸ Pre-annotate with model…: the demo model folder is offered
    key("alt+a", "Return", pause=1.5)
    key("Return", pause=6.0)
    key("alt+1", "Down", "Down", pause=0.5)
    shot(out / "screenshot-preannotate.png")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument(
        "--only",
        choices=("annotate", "inspect", "train", "teach", "uncertain", "agreement", "preannotate"),
        action="append",
    )
    ap.add_argument(
        "--inspect-as",
        metavar="PNG",
        help="only the Inspect task, saved under this name: the "
        "small-screen pictures (an Xvfb of 1024×768, or 1920×1080 with QT_SCALE_FACTOR=2)",
    )
    args = ap.parse_args()
    if not os.environ.get("DISPLAY"):
        print(
            "screenshots.py: no DISPLAY (start Xvfb :99 and openbox, then DISPLAY=:99)",
            file=sys.stderr,
        )
        return 1
    for tool in ("xdotool", "import"):
        if shutil.which(tool) is None:
            print(f"screenshots.py: {tool} is not installed", file=sys.stderr)
            return 1
    tmp = Path(tempfile.mkdtemp(prefix="nerstudio-shots-"))
    env = dict(
        os.environ,
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        XDG_CACHE_HOME=str(tmp / "cache"),
    )
    env.pop("QT_QPA_PLATFORM", None)
    todo = args.only or [
        "annotate",
        "inspect",
        "train",
        "teach",
        "uncertain",
        "agreement",
        "preannotate",
    ]
    if args.inspect_as:
        global INSPECT_PNG
        INSPECT_PNG, todo = args.inspect_as, ["inspect"]
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        demo_shots = [t for t in todo if t != "preannotate"]
        if demo_shots:
            other = tmp / "second-annotator.conll"
            subprocess.run(
                [args.python, "-c", SECOND_ANNOTATOR, str(other)], check=True, cwd=str(ROOT)
            )
            run_app(args.python, [], env, lambda wid: _demo_tasks(wid, args.out, demo_shots, other))
        if "preannotate" in todo:
            text = tmp / "harbour-news.txt"
            text.write_text(PLAIN_TEXT, encoding="utf-8")
            run_app(args.python, [str(text)], env, lambda wid: preannotate(wid, args.out))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _demo_tasks(wid: str, out: Path, todo: list[str], other: Path) -> None:
    # training panel widgets, in the window's client coordinates at 1280×800 maximised
    pos = {"algorithm": (325, 342), "epochs": (320, 452)}
    for name in todo:
        xdo("windowactivate", "--sync", wid)
        if name == "train":
            train(wid, out, pos)
        elif name == "agreement":
            agreement(wid, out, other)
        else:
            globals()[name](wid, out)


def run_app(python: str, argv: list[str], env: dict, tasks) -> None:
    """Start ``main.py argv``, maximise its window, run ``tasks(wid)``, close it."""
    proc = subprocess.Popen([python, str(ROOT / "main.py"), *argv], cwd=str(ROOT), env=env)
    try:
        wid = find_window(proc)
        time.sleep(2.0)  # the demo's scores, computed in the background
        maximise(wid)
        tasks(wid)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    sys.exit(main())
