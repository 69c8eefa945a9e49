"""``nerstudio install-desktop``: add nerstudio to the desktop's launcher: .desktop entry, icons, AppStream metainfo."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub, parents) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "install-desktop",
        help="add nerstudio to the desktop's launcher (.desktop entry, icons, AppStream metainfo)",
    )
    p.add_argument(
        "--prefix",
        metavar="DIR",
        help="data folder to install into (default: $XDG_DATA_HOME, else ~/.local/share)",
    )
    p.add_argument(
        "--uninstall", action="store_true", help="remove what an earlier install-desktop wrote"
    )
    return p


def run(args) -> int:
    from ...resources import desktop

    where = desktop.data_home() if args.prefix is None else args.prefix
    if args.uninstall:
        removed = desktop.uninstall(args.prefix)
        print(f"removed {len(removed)} file(s) from {where}", file=sys.stderr)
        return 0
    written = desktop.install(args.prefix)
    print(
        f"installed the launcher entry, {len(desktop.ICON_SIZES) + 1} icons and the metainfo under {where}; "
        f"the launcher runs {' '.join(desktop.gui_command())}",
        file=sys.stderr,
    )
    for path in written:
        print(path)
    return 0
