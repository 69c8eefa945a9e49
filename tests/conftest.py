"""Shared test configuration.

Real corpora live next to the repository, in ``../shared/data`` (never committed); point
``NERSTUDIO_SHARED_DATA`` elsewhere to use another copy. Tests that need them skip when absent.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before anything can import Qt

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

SKIP_REASON = "../shared/data not present: real-corpus tests skipped"


def shared_data_dir() -> Path | None:
    """The real-corpus folder, or ``None`` if it is not there."""
    env = os.environ.get("NERSTUDIO_SHARED_DATA")
    path = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ``../shared/data``; skips the test when it is absent."""
    path = shared_data_dir()
    if path is None:
        pytest.skip(SKIP_REASON)
    return path
