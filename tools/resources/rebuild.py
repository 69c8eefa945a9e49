"""The command line the resource builders share (``build_gazetteers.py``, ``build_clusters.py``):
write the bundled files into their folder, or ``--check`` that a rebuild in a temporary folder
gives them byte for byte (what CI's ``extras`` step runs)."""

from __future__ import annotations

import argparse
import filecmp
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


def build_main(
    write: Callable[[Path], None], out: Path, description: str, same: str, argv=None
) -> int:
    """``write(folder)`` builds the files; ``same`` is what ``--check`` says when nothing differs."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", type=Path, default=out)
    ap.add_argument(
        "--check", action="store_true", help="rebuild in a temporary folder and compare"
    )
    a = ap.parse_args(argv)
    if not a.check:
        write(a.out)
        print(f"wrote {a.out}", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp))
        names = sorted(os.listdir(tmp))
        _, bad, missing = filecmp.cmpfiles(tmp, a.out, names, shallow=False)
        if bad or missing:
            print(f"differs from {a.out}: {', '.join(bad + missing)}", file=sys.stderr)
            return 1
    print(same, file=sys.stderr)
    return 0
