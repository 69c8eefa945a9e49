"""Work-around for a reference-counting defect of the Qt binding, applied on import.

PySide6 6.12.0 returns ``None`` from void methods (``setObjectName``, ``processEvents``,
``QTimer.start`` …) and ``True`` from ``Signal.emit`` without taking a reference. On Python
3.12+ these objects are immortal and nothing happens; on Python ≤ 3.11 every such call lowers
their reference count by one, and a long session (a training run reports thousands of points)
ends with CPython aborting: "none_dealloc: deallocating None" or "bool_dealloc". The counts are
also visible to ``sys.getrefcount``.

:func:`guard` probes whether the binding leaks and, if it does on a CPython without immortal
objects, raises the reference counts of ``None``, ``True`` and ``False`` by 2**40 — what Python
3.12 does for them anyway — so no realistic number of leaked references can ever free them.
It runs once, when :mod:`nerstudio.gui` is imported.
"""

from __future__ import annotations

import ctypes
import sys

_BOOST = 1 << 40
_done = False


def _leaks() -> bool:
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        ping = Signal()

    p = _Probe()
    n = 8
    before_none, before_true = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(n):
        p.setObjectName("probe")  # void method
        p.ping.emit()  # returns True
    return sys.getrefcount(None) <= before_none - n or sys.getrefcount(True) <= before_true - n


def guard() -> bool:
    """Apply the work-around if needed; True when it was applied (now or before)."""
    global _done
    if _done:
        return True
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return False  # immortal singletons: the leak is harmless
    if not _leaks():
        return False
    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += _BOOST  # ob_refcnt is the first field
    _done = True
    return True


APPLIED = guard()
