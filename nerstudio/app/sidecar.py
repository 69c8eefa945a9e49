"""Where a corpus's review sidecar lives: ``NAME.nerstudio-review.json`` beside the corpus.

A module of its own so that what only needs the name (the fingerprint of a corpus file,
:mod:`.ownership`; the demo's first screen, which is not shown over a sidecar) loads neither the
review code (:mod:`.review`) nor numpy. No Qt here.
"""

from __future__ import annotations

import os

from ..corpus.model import StrPath

SIDECAR_SUFFIX = ".nerstudio-review.json"


def sidecar_path(corpus_path: StrPath) -> str:
    """``NAME.nerstudio-review.json`` beside the corpus file (or folder) ``corpus_path``."""
    return str(os.fspath(corpus_path)).rstrip("/\\") + SIDECAR_SUFFIX
