"""``nerstudio gui``: open the desktop application (the only command that loads Qt)."""

from __future__ import annotations

import argparse


def add_parser(sub, parents) -> argparse.ArgumentParser:
    p = sub.add_parser("gui", help="open the desktop application")
    p.add_argument(
        "path",
        nargs="?",
        metavar="CORPUS",
        help="corpus to open (default: the bundled demo corpus)",
    )
    p.add_argument(
        "--screenshot", metavar="PNG", help="render the window to PNG after loading and exit"
    )
    return p


def run(args) -> int:
    from ...gui.app import run as run_window

    return run_window(args.path, screenshot=args.screenshot)
