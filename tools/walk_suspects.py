#!/usr/bin/env python3
"""Suspect annotations walked in the real window with real keys.

    Xvfb :73 -screen 0 1280x800x24 & DISPLAY=:73 openbox &
    DISPLAY=:73 python tools/walk_suspects.py [--out docs/images] [--name screenshot-suspects.png]

The demo corpus with four gold errors planted (Carran Valley PER, Velmir Sporting LOC, Orrin
Express without its MISC, "Alliance" ORG without "Civic") is opened with a suspects list written
beside it (``write_tsv``: those four with the right suggestion, and two suspects whose gold is
right). Annotate ▸ Open suspects list… (the name typed in the file dialog) shows the browser's
Suspects filter on the most suspect sentence. F9 accepts its suggestion; F7 and F9 twice
more accept the next two; F7 goes to the fourth (two people, "Moro" and "Lamm", whose gold is
right), where the screenshot is taken, and Shift+F9 dismisses it; F7 and F9 accept the fifth.
Ctrl+S saves, the window closes, and the saved file and the queue beside it are checked (the
four planted errors corrected, one suspect dismissed, the sixth still open); a second start
shows the queue again (``again.png`` in the temporary folder).

Settings and data live in a temporary home (no saved layout, no recovery file). Needs xdotool
and ImageMagick (``import``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from screenshots import ROOT, key, shot, xdo  # tools/screenshots.py
from walk_issue23 import launch, quit_app

sys.path.insert(0, str(ROOT))

from nerstudio.app import suspects_file
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.corpus.writing import write_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.label_errors import Suspect, write_tsv

S = Span
PLANTED = {  # sentence: (the planted gold, the right gold)
    10: ([S(0, 4, "ORG"), S(24, 26, "PER")], [S(0, 4, "ORG"), S(24, 26, "LOC")]),
    30: ([S(0, 1, "PER"), S(4, 6, "LOC")], [S(0, 1, "PER"), S(4, 6, "ORG")]),
    16: (
        [S(14, 15, "LOC"), S(16, 18, "LOC")],
        [S(10, 12, "MISC"), S(14, 15, "LOC"), S(16, 18, "LOC")],
    ),
    4: ([S(2, 4, "PER"), S(7, 8, "ORG")], [S(2, 4, "PER"), S(6, 8, "ORG")]),
}


def belief(p: int, label: str, words: str, gold: str, own: float) -> str:
    return (
        f"the model puts {p}% of its belief on {label} for '{words}' (gold: {gold}); "
        f"gold's own probability is {own:.2f}"
    )


def make_files(tmp: Path) -> tuple[Path, Path]:
    c = read_corpus(DEMO_DIR / "train.conll")
    for k, (planted, _right) in PLANTED.items():
        c.sentences[k].spans = list(planted)
    path = tmp / "news.conll"
    write_corpus(c, path, c.format)
    c = read_corpus(path)
    suspects = [
        Suspect(10, 0.97, 24, 26, (S(24, 26, "PER"),), (S(24, 26, "LOC"),),
                belief(97, "LOC", "Carran Valley", "PER", 0.01)),
        Suspect(30, 0.91, 4, 6, (S(4, 6, "LOC"),), (S(4, 6, "ORG"),),
                belief(91, "ORG", "Velmir Sporting", "LOC", 0.04)),
        Suspect(16, 0.84, 10, 12, (), (S(10, 12, "MISC"),),
                "the model finds MISC 'Orrin Express' with 84% of its belief where gold has no "
                "entity; gold's own probability is 0.09"),
        Suspect(33, 0.80, 5, 7, (S(5, 6, "PER"), S(6, 7, "PER")), (S(5, 7, "PER"),),
                "the model puts 80% of its belief on one PER 'Moro Lamm' (gold: PER 'Moro' and "
                "PER 'Lamm'); gold's own probability is 0.15"),
        Suspect(4, 0.77, 6, 8, (S(7, 8, "ORG"),), (S(6, 8, "ORG"),),
                belief(77, "ORG", "Civic Alliance", "ORG 'Alliance'", 0.12)),
        Suspect(38, 0.41, 30, 34, (S(30, 34, "LOC"),), (S(30, 34, "ORG"),),
                belief(41, "ORG", "Duchy de la Roche", "LOC", 0.35)),
    ]  # fmt: skip
    tsv = tmp / "suspects.tsv"
    write_tsv(tsv, c, suspects)
    return path, tsv


def walk(tmp: Path, out: Path, name: str) -> None:
    path, tsv = make_files(tmp)
    proc, _wid = launch(tmp, str(path))
    try:
        key("alt+a", "i", pause=1.5)  # Annotate ▸ Open suspects list…
        xdo("type", "--delay", "20", str(tsv))
        key("Return", pause=2.0)
        key("F9", pause=0.6)  # Carran Valley: LOC
        key("F7", "F9", pause=0.6)  # Velmir Sporting: ORG
        key("F7", "F9", pause=0.6)  # Orrin Express: MISC
        key("F7", pause=0.8)  # Moro Lamm: two people, the gold is right
        shot(out / name)
        key("shift+F9", pause=0.6)  # dismissed
        key("F7", "F9", pause=0.6)  # Civic Alliance
        key("ctrl+s", pause=1.5)
    finally:
        quit_app(proc)
    saved = read_corpus(path)
    for k, (_planted, right) in PLANTED.items():
        assert saved.sentences[k].spans == right, (k, saved.sentences[k].spans)
    with open(suspects_file.path_for(path), encoding="utf-8") as f:
        stored = json.load(f)
    assert [s["dismissed"] for s in stored["suspects"]] == [False] * 3 + [True] + [False] * 2
    proc, _wid = launch(tmp, str(path))  # the queue is there again
    try:
        key("ctrl+1", pause=0.5)
        shot(tmp / "again.png")
    finally:
        quit_app(proc)
    print(f"suspects: the 4 planted errors corrected in {path.name}, 1 dismissed, 1 left open")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    ap.add_argument("--name", default="screenshot-suspects.png")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("DISPLAY"):
        print("walk_suspects.py: no DISPLAY (start Xvfb and openbox)", file=sys.stderr)
        return 1
    walk(Path(tempfile.mkdtemp(prefix="nerstudio-suspects-")), args.out, args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
