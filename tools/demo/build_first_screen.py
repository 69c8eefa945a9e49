#!/usr/bin/env python3
"""Build the demo's first screen: what the window shows once it has opened the demo, which the
application then shows before numpy, the document model and the controllers have loaded
(nerstudio.gui.views.screen).

    python tools/demo/build_first_screen.py             # nerstudio/demo/model/train.first.json
    python tools/demo/build_first_screen.py --out FILE  # elsewhere (the test compares the two)

It opens a fresh copy of the demo in the window (offscreen, fresh settings) the way the
application does, waits for its jobs, and saves what the views show with the SHA-256 of the
corpus, the N-best list, the reranker and its saved scores. Deterministic: same files and code,
same bytes. Run it again whenever ``build_model.py`` or ``build_scored.py`` rebuilt the models, or
the window shows the demo differently (tests/demo/test_first_screen.py says so).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # run from a checkout without installing

from nerstudio.app.first_screen import SHIPPED  # noqa: E402

DEMO = HERE.parents[1] / "nerstudio" / "demo"


def build(out: Path) -> None:
    """Open a copy of the bundled demo in a window as the application does; write what it shows
    to ``out``."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from nerstudio.app import first_screen
    from nerstudio.app.demo_copy import prepare
    from nerstudio.demo import DEMO_DIR
    from nerstudio.gui.main_window import MainWindow
    from nerstudio.gui.views.screen import capture

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory(prefix="nerstudio-first-screen-") as tmp:
        settings = QSettings(os.path.join(tmp, "settings.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings)
        try:
            if not win.load_demo(prepare(Path(tmp) / "demo")):
                raise SystemExit("build_first_screen.py: the window could not open the demo")
            win.jobs.wait(120000)
            for _ in range(3):
                app.processEvents()
            screen = capture(win)
        finally:
            win.close()
            win.deleteLater()
    first_screen.save(out, screen, DEMO_DIR)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEMO / SHIPPED)
    args = ap.parse_args()
    build(args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
