"""The demo's first screen, shipped with the demo: what the window shows once it has opened the
demo, so that it can show it before numpy, the document model and the controllers have loaded.

The file (``nerstudio/demo/model/train.first.json``, written by
``tools/demo/build_first_screen.py`` from the window itself, after it opened the demo the usual
way) holds what the views showed — the browser's marks, the first sentence, its candidates with
their scores, the features behind the reranker's pick (:mod:`nerstudio.gui.first_screen` takes
them from the views and gives them back) — and the SHA-256 of the files they were computed
from: the corpus, the N-best list, the reranker and its saved scores. :func:`load` gives it only
for a folder that has exactly those files; otherwise (the user edited their copy of the corpus,
saved another reranker over the demo's, the file is damaged) the window opens the demo as any
corpus; :func:`read` also reads the corpus the screen is shown over. Plain JSON, never pickle.
No Qt, no numpy here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..corpus.atomic import atomic_open
from .digest import digest

if TYPE_CHECKING:
    from ..corpus.model import Corpus
    from .ownership import Fingerprint

FORMAT = "nerstudio-first-screen"
VERSION = 1
#: where the demo's screen is shipped, relative to the bundled demo's folder (it is read there,
#: not copied with the demo's files: it names the files of the copy it may be shown over)
SHIPPED = "model/train.first.json"
#: what the screen was computed from: role -> the file, relative to the demo's folder
SOURCES = {
    "corpus": "train.conll",
    "nbest": "model/train.nbest.npz",
    "model": "model/reranker.npz",
    "scores": "model/train.scored.npz",
}


def sources(folder: Path) -> dict[str, str | None]:
    """The SHA-256 of each of :data:`SOURCES` in ``folder`` (None: not readable)."""
    return {role: digest(folder / rel) for role, rel in SOURCES.items()}


def save(path: str | os.PathLike[str], screen: dict[str, Any], folder: Path) -> None:
    """Write ``screen`` (what the window showed on opening the demo in ``folder``) to ``path``,
    naming the files of ``folder`` it came from. Deterministic: the same screen and files give
    the same bytes."""
    doc = {"format": FORMAT, "version": VERSION, "sources": sources(folder), "screen": screen}
    text = json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True, allow_nan=False)
    with atomic_open(os.fspath(path)) as f:
        f.write(text + "\n")


def load(path: str | os.PathLike[str], folder: Path) -> dict[str, Any] | None:
    """The screen saved in ``path`` when ``folder`` holds the very files it was computed from and
    the file is this format's; else None."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        return None
    saved, screen = doc.get("sources"), doc.get("screen")
    if not isinstance(saved, dict) or not isinstance(screen, dict) or set(saved) != set(SOURCES):
        return None
    if any(saved[role] is None for role in SOURCES) or sources(folder) != saved:
        return None
    return screen


@dataclass
class DemoStart:
    """The demo as the window's start found it: the user's copy (None: no folder could be
    written), and, when its first screen can be shown, that screen and the corpus it is shown
    over (read from the file whose fingerprint ``disk`` was taken just before): the document
    then opens that corpus."""

    folder: Path | None
    screen: dict[str, Any] | None = None
    corpus: Corpus | None = None
    disk: Fingerprint | None = None


def read(folder: Path) -> DemoStart:
    """The demo in ``folder`` (the user's copy) with its shipped screen and its corpus, read,
    when the screen was computed from its very files and no review file lies beside the corpus
    (its notes and flags would show); else only the folder."""
    from ..corpus.formats import read_corpus
    from ..demo import DEMO_DIR
    from ..errors import NerstudioError
    from .ownership import fingerprint
    from .sidecar import sidecar_path

    path = str(folder / SOURCES["corpus"])
    if os.path.lexists(sidecar_path(path)):
        return DemoStart(folder)
    screen = load(DEMO_DIR / SHIPPED, folder)
    if screen is None:
        return DemoStart(folder)
    disk = fingerprint(path)  # before reading, as the document's reader takes it
    try:  # in the format the window found it in (the file is that one): nothing to sniff
        corpus = read_corpus(path, format=str(screen.get("format") or "") or None)
    except (NerstudioError, OSError):  # the document's reader will say why
        return DemoStart(folder)
    return DemoStart(folder, screen, corpus, disk)
