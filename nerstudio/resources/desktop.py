"""The application's place on a Linux desktop: its icon, its ``.desktop`` entry and its AppStream
metainfo, and :func:`install` / :func:`uninstall` to put them where desktops look.

Why here: the window shows the icon (it must travel in the wheel, so it is package data), and an
installed nerstudio should appear in the desktop's launcher like any other program. A wheel
cannot write into ``~/.local/share`` when pip installs it, so ``nerstudio install-desktop`` does
it on request (the XDG base-directory layout: ``applications/``, ``icons/hicolor/…/apps/``,
``metainfo/``), pointing the entry at the ``nerstudio-gui`` that runs it. The SVG is the source
of the icon; ``tools/resources/render_icons.py`` renders the committed PNG sizes from it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from . import FILES_DIR

HERE = FILES_DIR / "desktop"  # the data files (resources/desktop/ in the source tree)
APP_ID = "io.github.nerstudio.nerstudio"  # reverse-DNS id: the .desktop, icon and metainfo names
ICON_SVG = HERE / "nerstudio.svg"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256)
DESKTOP_FILE = HERE / f"{APP_ID}.desktop"
METAINFO_FILE = HERE / f"{APP_ID}.metainfo.xml"


def icon_png(size: int) -> Path:
    """The committed PNG of the icon at ``size`` × ``size`` pixels."""
    return HERE / f"nerstudio-{size}.png"


def data_home() -> Path:
    """``$XDG_DATA_HOME``, or ``~/.local/share`` where it is unset or not absolute (the spec's rule)."""
    val = os.environ.get("XDG_DATA_HOME", "")
    return Path(val) if os.path.isabs(val) else Path.home() / ".local" / "share"


def gui_command() -> list[str]:
    """The command a launcher runs: the ``nerstudio-gui`` script beside this Python when it exists
    (a virtual environment need not be on the launcher's PATH), else ``python -m nerstudio gui``."""
    script = Path(sys.executable).with_name("nerstudio-gui")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    found = shutil.which("nerstudio-gui")
    if found:
        return [found]
    return [sys.executable, "-m", "nerstudio", "gui"]


def _exec_arg(arg: str) -> str:
    """One argument of a desktop entry's Exec key (the spec's quoting: double quotes, with ``"``,
    `` ` ``, ``$`` and ``\\`` escaped, where the argument holds a reserved character)."""
    if arg and not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`"):
        return arg
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return f'"{escaped}"'


def desktop_entry(command: list[str] | None = None) -> str:
    """The ``.desktop`` file's text with its Exec key pointing at ``command`` (+ ``%f``)."""
    cmd = " ".join(_exec_arg(a) for a in (command or gui_command()))
    lines = []
    for line in DESKTOP_FILE.read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec="):
            line = f"Exec={cmd.replace('%', '%%')} %f"
        lines.append(line)
    return "\n".join(lines) + "\n"


def targets(data_dir: Path | None = None) -> dict[Path, Path | None]:
    """Where each file goes under ``data_dir`` (the XDG data home by default) → its source
    (None for the generated desktop entry)."""
    base = Path(data_dir) if data_dir is not None else data_home()
    out: dict[Path, Path | None] = {
        base / "applications" / f"{APP_ID}.desktop": None,
        base / "metainfo" / f"{APP_ID}.metainfo.xml": METAINFO_FILE,
        base / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg": ICON_SVG,
    }
    for size in ICON_SIZES:
        out[base / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"] = icon_png(
            size
        )
    return out


def install(data_dir: Path | None = None, command: list[str] | None = None) -> list[Path]:
    """Write the entry, the icons and the metainfo (each file atomically); returns the files."""
    from ..corpus.atomic import atomic_open

    written = []
    for target, source in targets(data_dir).items():
        target.parent.mkdir(parents=True, exist_ok=True)
        if source is None:
            with atomic_open(target, encoding="utf-8") as f:
                f.write(desktop_entry(command))
        else:
            with atomic_open(target, mode="wb") as f:
                f.write(source.read_bytes())
        written.append(target)
    return written


def uninstall(data_dir: Path | None = None) -> list[Path]:
    """Remove what :func:`install` wrote; returns the files removed."""
    removed = []
    for target in targets(data_dir):
        if target.is_file():
            target.unlink()
            removed.append(target)
    return removed


def quoted(paths: list[Path]) -> str:
    return " ".join(shlex.quote(str(p)) for p in paths)
