"""nerstudio: named-entity annotation and N-best reranking workbench.

The core (everything outside :mod:`nerstudio.gui`) is free of Qt so that it can be used from
the command line, from tests and from notebooks.
"""

from importlib.metadata import PackageNotFoundError as _NotFound
from importlib.metadata import version as _version

try:  # one source for the version: pyproject.toml, through the installed metadata
    __version__ = _version("nerstudio")
except _NotFound:  # running from a checkout that was never installed
    __version__ = "0+unknown"
