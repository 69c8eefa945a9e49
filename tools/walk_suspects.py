#!/usr/bin/env python3
"""Suspect annotations walked in the real window with real keys.

    Xvfb :73 -screen 0 1280x800x24 & DISPLAY=:73 openbox &
    DISPLAY=:73 python tools/walk_suspects.py [--out docs/images] [--name screenshot-suspects.png]

The demo corpus with four gold errors planted (Carran Valley PER, Velmir Sporting LOC, Orrin
Express without its MISC, "Alliance" ORG without "Civic") is ranked by the real thing:
``find_suspects`` with 5 folds over it, each sentence judged by a tagger that never saw it. The
six most suspect sentences that have a suggestion are written beside it (``write_tsv``), and the
script says which planted errors are among them. Annotate ▸ Open suspects list… (the name typed
in the file dialog) shows the browser's Suspects filter on the most suspect sentence, where the
screenshot is taken; F9 accepts its suggestion, F7 goes to the next and Shift+F9 dismisses it.
Ctrl+S saves, the window closes, and the saved file and the queue beside it are checked (the
first suggestion in the file, the second suspect dismissed); a second start shows the queue
again (``again.png`` in the temporary folder).

Settings and data live in a temporary home (no saved layout, no recovery file). Needs xdotool
and ImageMagick (``import``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from screenshots import ROOT, key, shot, xdo  # tools/screenshots.py
from walk_issue23 import launch, quit_app

sys.path.insert(0, str(ROOT))

from nerstudio.app import suspects_file
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.corpus.writing import write_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.label_errors import Suspect, find_suspects, write_tsv

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


def make_files(tmp: Path) -> tuple[Path, Path, list[Suspect]]:
    c = read_corpus(DEMO_DIR / "train.conll")
    for k, (planted, _right) in PLANTED.items():
        c.sentences[k].spans = list(planted)
    path = tmp / "news.conll"
    write_corpus(c, path, c.format)
    c = read_corpus(path)
    ranked = find_suspects(c, folds=5)
    suspects = [s for s in ranked if s.suggested != s.gold][:6]
    found = sorted(k for k in PLANTED if any(s.sentence == k for s in suspects))
    print(f"planted errors among the six most suspect: sentences {[k + 1 for k in found]}")
    tsv = tmp / "suspects.tsv"
    write_tsv(tsv, c, suspects)
    return path, tsv, suspects


def open_list(tsv: Path) -> None:
    """Annotate ▸ Open suspects list…, the file's name typed in the dialog."""
    key("alt+a", "i", pause=1.5)
    xdo("type", "--delay", "20", str(tsv))
    key("Return", pause=2.0)


def walk(tmp: Path, out: Path, name: str) -> None:
    path, tsv, suspects = make_files(tmp)
    proc, _wid = launch(tmp, str(path))
    try:
        open_list(tsv)
        shot(out / name)  # the most suspect sentence, gold and suggestion side by side
        key("F9", pause=0.6)  # accepted
        key("F7", "shift+F9", pause=0.6)  # the next one dismissed
        key("ctrl+s", pause=1.5)
    finally:
        quit_app(proc)
    saved = read_corpus(path)
    first = suspects[0]
    assert set(first.suggested) <= set(saved.sentences[first.sentence].spans), first
    assert dismissals(path) == [False, True] + [False] * 4
    proc, _wid = launch(tmp, str(path))  # the queue is there again
    try:
        key("ctrl+1", pause=0.5)
        shot(tmp / "again.png")
    finally:
        quit_app(proc)
    print(f"suspects: the first suggestion saved in {path.name}, the second suspect dismissed")


def dismissals(corpus: Path) -> list[bool]:
    """Whether each suspect is dismissed, as the suspects file beside ``corpus`` says."""
    with open(suspects_file.path_for(corpus), encoding="utf-8") as f:
        return [s["dismissed"] for s in json.load(f)["suspects"]]


def walk_crash(tmp: Path, out: Path) -> None:
    """Decisions, then ``kill -9`` before any save: the next start offers them back, and
    Recover brings the queue back as it was (the first suspect dismissed, the second's
    suggestion accepted)."""
    path, tsv, suspects = make_files(tmp)
    proc, _wid = launch(tmp, str(path))
    try:
        open_list(tsv)
        key("shift+F9", pause=0.6)  # the most suspect dismissed
        key("F7", "F9", pause=0.6)  # the next one's suggestion accepted
        time.sleep(8.0)  # autosave writes within a few seconds of the last decision
    finally:
        proc.kill()  # SIGKILL: nothing saved, nothing cleaned up
        proc.wait()
    assert not any(dismissals(path))  # nothing saved
    proc, _wid = launch(tmp, str(path))
    try:
        time.sleep(1.0)
        shot(out / "walk-suspects-recover-offer.png")  # the question
        key("Return", pause=2.0)  # Recover (the default button)
        key("ctrl+1", pause=0.5)
        shot(out / "walk-suspects-recovered.png")
        key("ctrl+s", pause=1.5)
    finally:
        quit_app(proc)
    saved = read_corpus(path)
    second = suspects[1]
    assert set(second.suggested) <= set(saved.sentences[second.sentence].spans), second
    assert dismissals(path) == [True] + [False] * 5
    print("suspects after kill -9: the dismissal and the accepted suggestion recovered and saved")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    ap.add_argument("--name", default="screenshot-suspects.png")
    ap.add_argument("--crash", action="store_true", help="walk kill -9 and recovery instead")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("DISPLAY"):
        print("walk_suspects.py: no DISPLAY (start Xvfb and openbox)", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="nerstudio-suspects-"))
    if args.crash:
        walk_crash(tmp, args.out)
    else:
        walk(tmp, args.out, args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
