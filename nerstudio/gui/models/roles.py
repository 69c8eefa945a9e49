"""Item-data roles as plain ints.

Item models answer ``data(index, role)`` thousands of times per repaint, and ``role`` arrives
as an int: comparing it with a ``Qt.ItemDataRole`` member costs microseconds in PySide6, with
an int a few nanoseconds. Models compare against these constants.
"""

from PySide6.QtCore import Qt


def _i(v) -> int:
    return int(getattr(v, "value", v))


DISPLAY = _i(Qt.ItemDataRole.DisplayRole)
TOOLTIP = _i(Qt.ItemDataRole.ToolTipRole)
FONT = _i(Qt.ItemDataRole.FontRole)
FOREGROUND = _i(Qt.ItemDataRole.ForegroundRole)
ALIGNMENT = _i(Qt.ItemDataRole.TextAlignmentRole)
USER = _i(Qt.ItemDataRole.UserRole)
HORIZONTAL = Qt.Orientation.Horizontal
ALIGN_RIGHT = _i(Qt.AlignmentFlag.AlignRight) | _i(Qt.AlignmentFlag.AlignVCenter)
