"""Model and N-best files: ``.npz`` archives of plain arrays plus JSON, with a format version.

Loading uses ``allow_pickle=False`` and JSON only, so opening a file never runs code. Writing is
atomic. Every error says which file is wrong and why.
"""

from __future__ import annotations

import json
import os

import numpy as np

from .corpus.formats import atomic_open
from .errors import FormatError


def json_array(obj) -> np.ndarray:
    """A JSON document stored as a uint8 array inside an ``.npz``."""
    return np.frombuffer(json.dumps(obj, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)


def json_value(arr: np.ndarray):
    return json.loads(arr.tobytes().decode("utf-8"))


def jsonable(obj):
    """``obj`` with numpy scalars turned into Python numbers and tuples into lists (for JSON)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    return obj


def save_npz(path, header: dict, arrays: dict) -> None:
    """Write ``header`` (JSON, must hold ``format`` and ``version``) and ``arrays`` atomically."""
    with atomic_open(os.fspath(path), mode="wb") as f:
        np.savez_compressed(f, header=json_array(header), **arrays)


def peek_format(path) -> str | None:
    """The format name in the header of a file written by :func:`save_npz`, or ``None`` when
    the file is missing, unreadable or has no such header (only the header is read)."""
    try:
        with np.load(os.fspath(path), allow_pickle=False) as z:
            if "header" not in z.files:
                return None
            header = json_value(z["header"])
    except Exception:  # noqa: BLE001 - any unreadable file is simply "not ours"
        return None
    fmt = header.get("format") if isinstance(header, dict) else None
    return fmt if isinstance(fmt, str) else None


def load_npz(path, fmt: str, version: int, what: str) -> tuple[dict, dict]:
    """Read an archive written by :func:`save_npz`; check its format name and version.

    ``what`` names the kind of file with its article ("a tagger model"). Returns
    ``(header, arrays)``. Raises :class:`FormatError` naming ``path`` for a missing,
    unreadable, foreign or newer file.
    """
    path = os.fspath(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise FormatError(path, None, "no such file") from None
    except Exception as exc:  # noqa: BLE001 - zip and npz errors of all kinds
        raise FormatError(path, None, f"not {what} (.npz): {exc}") from None
    try:
        header = json_value(arrays.pop("header"))
    except (KeyError, ValueError, UnicodeDecodeError) as exc:
        raise FormatError(path, None, f"not {what}: no readable header ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != fmt:
        got = header.get("format") if isinstance(header, dict) else None
        raise FormatError(path, None, f"not {what}: format is {got!r}, expected {fmt!r}")
    if header.get("version") != version:
        raise FormatError(path, None, f"format version {header.get('version')} is not supported "
                                      f"(this nerstudio reads version {version})")
    return header, arrays
