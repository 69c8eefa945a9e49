"""Where the real corpora are: ``../shared/data`` beside the repository (never committed), or
the folder ``NERSTUDIO_SHARED_DATA`` names. Tests that need them skip when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import ROOT

#: where the real corpora are expected (the folder may be absent)
SHARED_DATA = Path(os.environ.get("NERSTUDIO_SHARED_DATA") or ROOT.parent / "shared" / "data")

SKIP_REASON = "../shared/data not present: real-corpus tests skipped"


def shared_data_dir() -> Path | None:
    """The real-corpus folder, or ``None`` if it is not there."""
    return SHARED_DATA if SHARED_DATA.is_dir() else None
