"""A compiled-kernel module imported on first use.

The taggers' numba kernels (``_maxent_compiled``, ``_viterbi``) take about a second to import,
with numba itself; reading settings or a model file (what the application does at start-up) needs
none of them. Both taggers hold their kernels through :class:`LazyModule`.
"""

from __future__ import annotations

import importlib


class LazyModule:
    """Stands for the module ``name`` and imports it at the first attribute read; later reads
    are plain attribute lookups."""

    def __init__(self, name: str):
        self.__dict__["_name"] = name

    def __getattr__(self, attr):
        module = importlib.import_module(self.__dict__["_name"])
        self.__dict__.update(vars(module))
        return getattr(module, attr)
