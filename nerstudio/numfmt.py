"""One way to print scores, weights and contributions: never ``-0.000``.

Python prints a negative number that rounds to zero, and IEEE negative zero itself, with a minus
sign (``f"{-0.0001:.3f}"`` is ``-0.000``), which reads as a real negative score. Every place that
shows a reranker score, L(x), a weight or a contribution formats it through :func:`num`, which
prints such values as plain zero. Qt-free: the CLI and the GUI share it.
"""

from __future__ import annotations

import math


def num(x, digits: int | None = 3, sign: bool = False, spec: str = "f") -> str:
    """``x`` with ``digits`` decimals (``spec="g"``: that many significant digits, default 6 when
    ``digits`` is None); ``sign`` adds ``+`` to positive values. A value that prints as zero is
    printed without a sign (``0.000``); ``None`` prints as ``''``; NaN as ``nan``."""
    if x is None:
        return ""
    x = float(x)
    if math.isnan(x):
        return "nan"
    fmt = ("+" if sign else "") + ("" if digits is None else f".{digits}") + spec
    s = format(x, fmt)
    if math.isfinite(x) and float(s) == 0.0:
        return format(0.0, fmt.lstrip("+"))
    return s
