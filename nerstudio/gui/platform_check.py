"""Say which system packages to install when Qt's X11 platform plugin cannot load.

Without them Qt prints a paragraph about "xcb" and aborts the process, which tells a new user
nothing about what to do. Before the application object is created, :func:`xcb_problem` tries to
load the shared libraries the PySide6 wheels' xcb plugin needs but do not ship, and names the
Debian/Ubuntu packages that provide the missing ones. It only applies on Linux when Qt would
pick the xcb plugin (no ``QT_QPA_PLATFORM`` other than ``xcb``); it imports no Qt.
"""

from __future__ import annotations

import os
import sys

#: shared library the xcb plugin loads -> the Debian/Ubuntu package providing it
XCB_LIBRARIES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
}


def _loads(soname: str) -> bool:
    import ctypes  # only where Qt would use xcb

    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def uses_xcb(environ=None, platform: str | None = None) -> bool:
    """Whether Qt will try the xcb plugin in this environment."""
    env = os.environ if environ is None else environ
    if (platform or sys.platform) != "linux":
        return False
    choice = env.get("QT_QPA_PLATFORM", "")
    if choice:
        return choice.split(":")[0] == "xcb"
    return not env.get("WAYLAND_DISPLAY")


def missing_packages(loads=_loads) -> list[str]:
    """Packages whose library the xcb plugin needs and the loader cannot find."""
    return sorted({pkg for lib, pkg in XCB_LIBRARIES.items() if not loads(lib)})


def xcb_problem(environ=None, platform: str | None = None, loads=_loads) -> str | None:
    """One message naming the packages to install, or ``None`` when nothing is missing."""
    if not uses_xcb(environ, platform):
        return None
    missing = missing_packages(loads)
    if not missing:
        return None
    return (
        "Qt's X11 platform plugin cannot load: system libraries are missing. On Debian/Ubuntu: "
        f"sudo apt install {' '.join(missing)}  (or run offscreen: QT_QPA_PLATFORM=offscreen)"
    )
