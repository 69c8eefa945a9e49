"""Render the application icon's PNG sizes from its SVG (``resources/desktop``).

The SVG is the source; desktops that cannot scale SVG (and Qt on systems without its SVG plugin)
use the PNGs, so they are committed beside it. Rerun after changing the SVG::

    QT_QPA_PLATFORM=offscreen python tools/resources/render_icons.py

``--check`` renders into memory and exits 1 if a committed PNG differs in size or is missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from nerstudio.resources.desktop import ICON_SIZES, ICON_SVG, icon_png  # noqa: E402


def render(size: int):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    img = QImage(size, size, QImage.Format.Format_ARGB32)
    img.fill(Qt.GlobalColor.transparent)
    painter = QPainter(img)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(str(ICON_SVG)).render(painter)
    painter.end()
    return img


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that every size exists")
    args = ap.parse_args(argv)
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 (QImage painting needs one)
    bad = 0
    for size in ICON_SIZES:
        out = icon_png(size)
        if args.check:
            from PySide6.QtGui import QImage

            img = QImage(str(out))
            if img.isNull() or img.width() != size:
                print(f"{out}: missing or not {size}x{size}", file=sys.stderr)
                bad += 1
            continue
        if not render(size).save(str(out)):
            print(f"cannot write {out}", file=sys.stderr)
            return 1
        print(f"wrote {out.relative_to(ROOT)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
