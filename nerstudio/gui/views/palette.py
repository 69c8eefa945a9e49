"""Entity-type colours shared by every view (stable across runs)."""

from __future__ import annotations

import zlib

from PySide6.QtGui import QColor

_FIXED = {
    "PER": "#4e79a7", "ORG": "#f28e2b", "LOC": "#59a14f", "MISC": "#b07aa1",
    "": "#76b7b2",
}
_CYCLE = ["#e15759", "#edc948", "#9c755f", "#ff9da7", "#76b7b2", "#bab0ac", "#8cd17d", "#499894"]


def type_color(label: str) -> QColor:
    key = label.upper() if label.upper() in _FIXED else label
    if key in _FIXED:
        return QColor(_FIXED[key])
    return QColor(_CYCLE[zlib.crc32(label.encode("utf-8")) % len(_CYCLE)])
