"""What tests in several folders share: data, small functions and the repository's root.

Imported as ``helpers`` (``from helpers.changed_on_disk import CONLL``): pytest puts ``tests/``
on ``sys.path`` for its conftest.py. Tests import from here, never from another test module.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

#: the repository's top folder (README.md, docs/, tools/, bench/, nerstudio/)
ROOT = Path(__file__).resolve().parents[2]


def tool(relative: str) -> ModuleType:
    """The script ``relative`` to the repository (``tools/mypy_ratchet.py``) loaded as a module
    named after its file, and registered under that name (a dataclass in it looks itself up in
    ``sys.modules``)."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module
