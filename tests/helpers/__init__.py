"""What tests in several folders share: data, small functions and the repository's root.

Imported as ``helpers`` (``from helpers.changed_on_disk import CONLL``): pytest puts ``tests/``
on ``sys.path`` for its conftest.py. Tests import from here, never from another test module.
"""

from __future__ import annotations

from pathlib import Path

#: the repository's top folder (README.md, docs/, tools/, bench/, nerstudio/)
ROOT = Path(__file__).resolve().parents[2]
