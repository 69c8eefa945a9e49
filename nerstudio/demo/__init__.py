"""The bundled demo: an original CC0 corpus (train/dev/test) and the models trained on it.

It lives inside the package so that an installed nerstudio (a wheel, outside any checkout) can
open it; the files are found with :mod:`importlib.resources`. The scripts that build them are in
a checkout's ``tools/demo/``.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def demo_dir() -> Path:
    """The folder holding ``train.conll``, ``dev.conll``, ``test.conll`` and ``model/``."""
    root = files(__name__)
    if not isinstance(root, Path):  # a zipped install: nerstudio is never installed that way
        raise RuntimeError(f"the demo files are not on the file system ({root!r})")
    return root


DEMO_DIR = demo_dir()
DEMO_CORPUS = DEMO_DIR / "train.conll"
DEMO_MODEL_DIR = DEMO_DIR / "model"
