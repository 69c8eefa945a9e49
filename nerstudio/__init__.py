"""nerstudio: named-entity annotation and N-best reranking workbench.

The core (everything outside :mod:`nerstudio.gui`) is free of Qt so that it can be used from
the command line, from tests and from notebooks.
"""

__version__ = "0.1.0"

from pathlib import Path as _Path

#: Folder holding the bundled demo corpus and demo models (a checkout's ``resources/``).
RESOURCES = _Path(__file__).resolve().parent.parent / "resources"
