#!/usr/bin/env python3
"""Label all occurrences and adjudication, walked in the real window with real keys (issue 23).

    Xvfb :95 -screen 0 1280x800x24 & DISPLAY=:95 openbox &
    DISPLAY=:95 python tools/walk_issue23.py [--out docs]

* **Label all**: the demo dev corpus with two of the four "Port Albury" LOC entities removed is
  opened; Ctrl+F, "Port Albury", Ctrl+Shift+A opens the preview (two new, two already LOC, two
  inside "Port Albury Rovers" unticked), screenshot-label-all.png, Enter labels the ticked ones as
  one edit, Ctrl+S saves. The saved file must have all four as LOC and the ORG entities intact.
* **Adjudicate**: File ▸ Adjudicate annotations… on the demo corpus (A) and a second annotator's
  copy (B: some entities dropped, some retyped), the names typed in the file dialog; in the
  adjudication window A, B, A take versions, E edits one by hand (Delete, then 1 for PER, Enter),
  S skips one; screenshot-adjudicate.png; Ctrl+S saves merged.jsonl. The saved file and its
  report are checked against the decisions.

Settings and data live in a temporary home (no saved layout, no recovery file). Needs xdotool
and ImageMagick (``import``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from screenshots import ROOT, find_window, key, maximise, shot, xdo  # tools/screenshots.py

sys.path.insert(0, str(ROOT))

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.corpus.writing import write_corpus
from nerstudio.demo import DEMO_DIR

PHRASE = "Port Albury"


def launch(tmp: Path, *args: str) -> tuple[subprocess.Popen, str]:
    env = dict(
        os.environ,
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        HOME=str(tmp),
        NERSTUDIO_LABEL_KEYS=str(tmp / "keys.json"),
        PYTHONPATH=str(ROOT),
    )
    env.pop("QT_QPA_PLATFORM", None)
    proc = subprocess.Popen([sys.executable, str(ROOT / "main.py"), *args], cwd=str(tmp), env=env)
    wid = find_window(proc)
    time.sleep(2.0)
    maximise(wid)
    return proc, wid


def quit_app(proc: subprocess.Popen) -> None:
    key("ctrl+q", pause=1.0)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def label_all(tmp: Path, out: Path) -> None:
    c = read_corpus(DEMO_DIR / "dev.conll")
    seen = 0
    for s in c.sentences:
        keep = []
        for sp in s.spans:
            if " ".join(s.words[sp.start : sp.end]) == PHRASE:
                seen += 1
                if seen % 2:
                    continue  # the annotator missed this one
            keep.append(sp)
        s.spans = keep
    path = tmp / "corpus.conll"
    write_corpus(c, path, c.format)
    orgs = sorted((k, sp) for k, s in enumerate(c.sentences) for sp in s.spans if sp.label == "ORG")
    proc, _wid = launch(tmp, str(path))
    try:
        key("ctrl+1", "ctrl+f")
        xdo("type", "--delay", "40", PHRASE)
        key("ctrl+shift+a", pause=1.5)
        shot(out / "screenshot-label-all.png")
        key("Return", pause=1.0)
        key("ctrl+s", pause=1.0)
    finally:
        quit_app(proc)
    got = read_corpus(path)
    found = [
        (k, a, b, lab)
        for k, s in enumerate(got.sentences)
        for a, b, lab in s.spans
        if " ".join(s.words[a:b]) == PHRASE
    ]
    after = sorted(
        (k, sp) for k, s in enumerate(got.sentences) for sp in s.spans if sp.label == "ORG"
    )
    assert len(found) == 4 and all(x[3] == "LOC" for x in found), found
    assert after == orgs, "an ORG entity changed"
    print(
        f"label all: the 4 “{PHRASE}” entities are LOC in the saved file; the {len(orgs)} ORG ones unchanged"
    )


def second_annotator(src: Path, dst: Path) -> None:
    c = read_corpus(src)
    other = {"PER": "ORG", "ORG": "LOC", "LOC": "MISC", "MISC": "PER"}
    k = 0
    for s in c.sentences:
        keep = []
        for sp in s.spans:
            k += 1
            if k % 9 == 0:
                continue
            keep.append(Span(sp.start, sp.end, other[sp.label]) if k % 7 == 0 else sp)
        s.spans = keep
    write_corpus(c, dst, c.format)


def adjudicate(tmp: Path, out: Path) -> None:
    a, b = tmp / "a.conll", tmp / "b.conll"
    c = read_corpus(DEMO_DIR / "dev.conll")
    write_corpus(c, a, c.format)
    second_annotator(a, b)
    proc, _wid = launch(tmp)
    try:
        key("alt+f", "j", pause=1.5)  # File ▸ Adjudicate annotations…
        xdo("type", "--delay", "20", '"a.conll" "b.conll"')
        key("Return", pause=3.0)
        key("a", "b", "a", pause=0.6)  # take A, take B, take A
        key("e", pause=0.5)  # edit the fourth by hand: clear what is selected, type PER (1), keep
        key("Delete", "1", "Return", pause=0.5)
        key("s", pause=0.5)  # skip the fifth
        shot(out / "screenshot-adjudicate.png")
        key("ctrl+s", pause=1.5)
        xdo("type", "--delay", "20", str(tmp / "merged.jsonl"))
        key("Return", pause=2.0)
        key("Escape", pause=0.5)  # the adjudication window
    finally:
        quit_app(proc)
    rep = json.loads((tmp / "merged.jsonl.report.json").read_text())
    merged = read_corpus(tmp / "merged.jsonl")
    r = rep["regions"]
    assert (r["take"], r["edit"]) == (3, 1) and r["undecided"] == r["disagreements"] - 4, r
    assert sum(len(s.spans) for s in merged.sentences) == rep["merged_entities"]
    print(
        f"adjudicate: {r['disagreements']} disagreements, 3 taken, 1 edited, {r['undecided']} undecided; "
        f"merged.jsonl holds {rep['merged_entities']} entities; agreement before: "
        + "; ".join(
            f"{p['a']}–{p['b']} F1 {p['f1']:.2f}, kappa {p['kappa']:.3f}"
            for p in rep["agreement_before"]
        )
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    ap.add_argument("--only", choices=("label-all", "adjudicate"), action="append")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("DISPLAY"):
        print("walk_issue23.py: no DISPLAY (start Xvfb and openbox)", file=sys.stderr)
        return 1
    for name, fn in (("label-all", label_all), ("adjudicate", adjudicate)):
        if args.only and name not in args.only:
            continue
        fn(Path(tempfile.mkdtemp(prefix=f"nerstudio-{name}-")), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
