"""Item-data roles as plain ints.

Item models answer ``data(index, role)`` thousands of times per repaint, and ``role`` arrives
as an int: comparing it with a ``Qt.ItemDataRole`` member costs microseconds in PySide6, with
an int a few nanoseconds. Models compare against these constants.
"""

from PySide6.QtCore import Qt


def _i(v) -> int:
    return int(getattr(v, "value", v))


DISPLAY = _i(Qt.DisplayRole)
TOOLTIP = _i(Qt.ToolTipRole)
FONT = _i(Qt.FontRole)
FOREGROUND = _i(Qt.ForegroundRole)
ALIGNMENT = _i(Qt.TextAlignmentRole)
USER = _i(Qt.UserRole)
HORIZONTAL = Qt.Horizontal
ALIGN_RIGHT = _i(Qt.AlignRight) | _i(Qt.AlignVCenter)
