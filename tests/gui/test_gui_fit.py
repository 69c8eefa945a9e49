"""The window fits its screen (issue 24, point 3): at 1024×768 (scale 1), 1280×800 and 1920×1080
with ``QT_SCALE_FACTOR=2`` every workspace and Inspect tab is walked (by fit_probe.py, beside this file, in a
child process with that offscreen screen) and checked: the window's frame never leaves the
screen (so the status bar is visible), no page needs sideways scrolling, no table column is
narrower than its header's text, and the N-best table shows its "Differs" column."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

pytest.importorskip("PySide6")

from nerstudio.demo import DEMO_MODEL_DIR

pytestmark = [
    pytest.mark.slow,  # a child process per screen, every workspace walked
    pytest.mark.ux,
    pytest.mark.skipif(
        not (DEMO_MODEL_DIR / "train.nbest.npz").exists(),
        reason="demo model not built (tools/demo/build_model.py)",
    ),
]

PROBE = Path(__file__).with_name("fit_probe.py")
SCREENS = {
    "1024x768": (1024, 768, "1"),
    "1280x800": (1280, 800, "1"),
    "1920x1080@2": (1920, 1080, "2"),
}


def probe(tmp_path, width: int, height: int, scale: str) -> dict:
    cfg = tmp_path / "screen.json"
    cfg.write_text(
        json.dumps(
            {
                "screens": [
                    {
                        "name": "s",
                        "x": 0,
                        "y": 0,
                        "width": width,
                        "height": height,
                        "logicalDpi": 96,
                        "logicalBaseDpi": 96,
                        "dpr": 1,
                    }
                ]
            }
        )
    )
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=f"offscreen:configfile={cfg}",
        QT_SCALE_FACTOR=scale,
        PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    out = subprocess.run(
        [sys.executable, str(PROBE)], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_workspace_fits_the_screen(tmp_path, screen):
    width, height, scale = SCREENS[screen]
    r = probe(tmp_path, width, height, scale)
    sx, sy, sw, sh = r["screen"]
    assert (sw, sh) == (width // int(scale), height // int(scale))  # the screen the child saw
    stops = {(v["workspace"], v["tab"]) for v in r["views"]}
    assert {
        ("annotate", ""),
        ("inspect", "featurePanel"),
        ("inspect", "comparisonView"),
        ("inspect", "modelFeaturesView"),
        ("inspect", "whatIfView"),
        ("train", ""),
        ("teach", ""),
    } <= stops
    for v in r["views"]:
        where = f"{screen} {v['workspace']} {v['tab']}"
        x, y, w, h = v["frame"]
        assert x >= sx and y >= sy and x + w <= sx + sw and y + h <= sy + sh, (
            f"{where}: frame {v['frame']} off screen"
        )
        assert v["status_visible"], where
        assert not v["scrolls"][0], (
            f"{where}: the page needs sideways scrolling ({v['page_min']} in {v['viewport']})"
        )
        for t in v["tables"]:
            for c in t["columns"]:
                assert c["width"] >= c["text_width"] + 6, (
                    f"{where}: {t['name']} column {c['text']!r} is {c['width']} px"
                )
        nb = [t for t in v["tables"] if t["name"] == "nbestView"]
        for t in nb:
            diff = t["columns"][-1]
            assert diff["text"].startswith("Differs") and diff["right"] <= diff["viewport"] + 1, (
                where
            )
            assert diff["width"] >= 150, f"{where}: the Differs column is {diff['width']} px"
