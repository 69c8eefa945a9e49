"""The bundled demo: an original CC0 corpus (train/dev/test) and the models trained on it.

It lives inside the package so that an installed nerstudio (a wheel, outside any checkout) can
open it; the files are found beside this module (nerstudio is installed on the file system, never
zipped; :mod:`importlib.resources` would find the same folder for 10 ms of the window's start).
The scripts that build them are in a checkout's ``tools/demo/``.
"""

from __future__ import annotations

from pathlib import Path


def demo_dir() -> Path:
    """The folder holding ``train.conll``, ``dev.conll``, ``test.conll`` and ``model/``."""
    return Path(__file__).parent


DEMO_DIR = demo_dir()
DEMO_CORPUS = DEMO_DIR / "train.conll"
DEMO_MODEL_DIR = DEMO_DIR / "model"
