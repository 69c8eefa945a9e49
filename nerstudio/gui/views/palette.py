"""Entity-type colours as Qt colours, from the one Qt-free table in :mod:`nerstudio.app.types`.

Every view that colours a type (legend, sentence view, entity table, menus) goes through
:func:`type_color` with the open corpus's :class:`~nerstudio.app.types.TypeScheme`, so they agree.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QIcon, QPixmap

from ...app.types import CONLL_TYPES, TypeScheme

_DEFAULT = TypeScheme.of(CONLL_TYPES)


def type_color(label: str, scheme: TypeScheme | None = None) -> QColor:
    """The colour of a type in ``scheme`` (default: the CoNLL types')."""
    return QColor((scheme or _DEFAULT).colour(label))


def text_color_on(bg: QColor) -> QColor:
    """Black or white, whichever reads better on ``bg`` (relative luminance)."""
    lum = 0.2126 * bg.redF() + 0.7152 * bg.greenF() + 0.0722 * bg.blueF()
    return QColor("#000000") if lum > 0.55 else QColor("#ffffff")


def type_icon(label: str, scheme: TypeScheme | None = None, size: int = 12) -> QIcon:
    """A square swatch of the type's colour (menus)."""
    pm = QPixmap(size, size)
    pm.fill(type_color(label, scheme))
    return QIcon(pm)
