"""Model and N-best files: ``.npz`` archives of plain arrays plus JSON, with a format version.

Writing is atomic (:func:`~nerstudio.corpus.atomic.atomic_open`). Reading trusts nothing in the
file: every problem is a :class:`~nerstudio.errors.FormatError` naming the file, and nothing is
allocated before it is known to be sound:

* arrays are plain numbers (no pickles, no Python objects); loading never runs code;
* before any array is read, the size each one declares (its ``.npy`` header) is checked against
  the size the zip directory records for it, against what decompressing it may plausibly give
  (a member declaring more than :data:`LARGE_MEMBER` bytes must not inflate more than
  :data:`MAX_INFLATION` times: a 1 MB file declaring 1 GiB of zeros is refused, not read), and
  against the memory available; loaders can check declared shapes against the JSON header
  (:meth:`NpzArrays.shape`) before reading an array;
* arrays are read one at a time, when a loader asks for them; floating-point arrays must be
  finite (a NaN or infinite weight would silently wreck every score);
* JSON (the header, and JSON stored in arrays) must decode, and must not be nested deeper than
  the parser allows;
* what a loader reads is checked against what it expects (:func:`check_params`,
  :func:`header_field`, :func:`json_strings`, :func:`scalar`, :func:`vector`): a setting of the
  wrong type, a lexicon that is not a list of strings, a one-number array with 3 values is one
  error naming the file and the field, never a model that silently predicts otherwise;
* an interrupted save of the file (a hard-linked model copied in place) is finished first
  (:func:`~nerstudio.corpus.journal.settle`).
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

import numpy as np
import numpy.lib.format as npformat
from numpy.typing import DTypeLike

from .corpus.atomic import atomic_open
from .corpus.journal import settle
from .errors import FormatError, Msg

_T = TypeVar("_T")

MAX_INFLATION = 100  # declared bytes per stored byte above which a large member is refused
LARGE_MEMBER = 64 << 20  # members declaring less than this are never refused for inflating
MAX_HEADER = 64 << 20  # the JSON header's declared size
MAX_NPY_HEADER = 100_000  # bytes of a member's .npy header (numpy's own default is 10,000)


class Corrupt(ValueError):
    """What a loader's own check finds wrong in a file's content (a missing field, a value of
    the wrong type, an array of the wrong shape, an index out of range).

    Loaders catch exactly this and raise a :class:`FormatError` naming the file: any other
    exception while loading is a bug in nerstudio and propagates as one (CLI exit status 3).
    """


class Missing(Corrupt, KeyError):
    """A header field, JSON key or array that the loader needs is not in the file (a
    ``KeyError`` too, so ``in`` and ``get`` on the mappings below work as on a dict)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "missing"


class Fields(dict):
    """A JSON object read from a file: looking up a key it lacks raises :class:`Missing`
    naming the key, not a bare ``KeyError`` (which would read as a bug)."""

    def __missing__(self, key):
        raise Missing(f"field {key!r} is missing")


def json_array(obj) -> np.ndarray:
    """A JSON document stored as a uint8 array inside an ``.npz``."""
    return np.frombuffer(json.dumps(obj, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)


def json_value(arr: np.ndarray):
    """The JSON document held by a uint8 array, its objects :class:`Fields`; :class:`Corrupt`
    for anything else (too deep too)."""
    if not isinstance(arr, np.ndarray) or arr.dtype != np.uint8 or arr.ndim != 1:
        raise Corrupt("a JSON field is not stored as bytes")
    try:
        return json.loads(arr.tobytes().decode("utf-8"), object_hook=Fields)
    except RecursionError:
        raise Corrupt("JSON nested too deeply") from None
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise Corrupt(f"unreadable JSON ({exc})") from None


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


def read_header(path, what: str = "a nerstudio file") -> dict:
    """The JSON header of a file written by :func:`save_npz` (only the header is read); a
    :class:`FormatError` says precisely why there is none (``what`` names the expected kind)."""
    path = os.fspath(path)
    header = _read_header(path, _scan(path, what))
    if not isinstance(header, dict):
        raise FormatError(path, None, f"not {what}: its header is not a JSON object")
    return header


def peek_format(path) -> str | None:
    """The format name in the header of a file written by :func:`save_npz`, or ``None`` when
    the file is missing, unreadable or has no such header (only the header is read)."""
    try:
        fmt = read_header(path).get("format")
    except FormatError:
        return None
    return fmt if isinstance(fmt, str) else None


# -- reading ------------------------------------------------------------------------------------


class _Member:
    __slots__ = ("dtype", "fortran", "info", "shape")

    def __init__(self, info, shape, dtype, fortran):
        self.info, self.shape, self.dtype, self.fortran = info, shape, dtype, fortran

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * self.dtype.itemsize


def _zip_errors():
    return (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        OSError,
        RuntimeError,
        NotImplementedError,
        ValueError,
        KeyError,
    )


def _npy_header(fp) -> tuple[tuple, np.dtype, bool, int]:
    """Shape, dtype, Fortran order and header length of a ``.npy`` stream (nothing else read)."""
    major, _minor = npformat.read_magic(fp)
    if major not in (1, 2):
        raise ValueError(f".npy format version {major} is not supported")
    read = npformat.read_array_header_1_0 if major == 1 else npformat.read_array_header_2_0
    try:
        shape, fortran, dtype = read(fp, max_header_size=MAX_NPY_HEADER)
    except Exception as exc:
        # literal_eval, whose errors (SyntaxError, TokenError, ...) are not ValueErrors
        raise ValueError(f"an unreadable array header ({type(exc).__name__})") from None
    if dtype.hasobject or dtype.fields is not None or dtype.kind not in "biufc":
        raise ValueError(f"arrays of {dtype} are not plain numbers")
    if not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ValueError(f"bad shape {shape}")
    return tuple(shape), dtype, bool(fortran), fp.tell()


def _available_memory() -> int | None:
    """Bytes of memory available to this process (Linux), ``None`` when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MB" if n < 2**30 else f"{n / 2**30:,.1f} GB"


def _scan(path: str, what: str) -> dict[str, _Member]:
    """Every member's declared shape and type, checked (see the module docstring); no data read."""
    settle(path)  # an interrupted save (a hard-linked model copied in place) is finished first
    if not os.path.exists(path):
        raise FormatError(path, None, Msg.NO_SUCH_FILE.format())
    if os.path.isdir(path):
        raise FormatError(path, None, f"is a folder, not {what}")
    members: dict[str, _Member] = {}
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                name = info.filename
                if not name.endswith(".npy") or name[:-4] in members:
                    raise ValueError(f"unexpected member {name!r}")
                with z.open(info) as fp:
                    shape, dtype, fortran, head = _npy_header(fp)
                m = _Member(info, shape, dtype, fortran)
                if m.nbytes + head != info.file_size:
                    raise ValueError(
                        f"array {name[:-4]!r} declares {m.nbytes + head:,} bytes but the archive "
                        f"holds {info.file_size:,}"
                    )
                members[name[:-4]] = m
    except FormatError:
        raise
    except (zipfile.BadZipFile, EOFError):
        raise FormatError(
            path,
            None,
            f"not {what}: not a readable nerstudio .npz file (truncated, or another kind of file)",
        ) from None
    except OSError as exc:
        if isinstance(exc, PermissionError):
            raise FormatError(path, None, f"cannot read: {exc.strerror}") from None
        raise FormatError(path, None, f"not {what} (.npz): {exc}") from None
    except _zip_errors() as exc:
        raise FormatError(path, None, f"not {what} (.npz): {exc}") from None
    total = 0
    for name, m in members.items():
        stored = max(m.info.compress_size, 1)
        if m.info.file_size > LARGE_MEMBER and m.info.file_size > MAX_INFLATION * stored:
            raise FormatError(
                path,
                None,
                f"corrupt {_kind(what)}: array {name!r} declares "
                f"{_mb(m.info.file_size)} from {_mb(stored)} stored (more than "
                f"{MAX_INFLATION}x): refused",
            )
        total += m.nbytes
    if "header" in members and members["header"].nbytes > MAX_HEADER:
        raise FormatError(
            path, None, f"not {what}: its header declares {_mb(members['header'].nbytes)}"
        )
    avail = _available_memory()
    if avail is not None and total > avail:
        raise FormatError(
            path,
            None,
            f"its arrays need {_mb(total)}, more than the {_mb(avail)} of memory available",
        )
    return members


def _read_member(path: str, m: _Member, what: str) -> np.ndarray:
    try:
        with zipfile.ZipFile(path) as z, z.open(m.info) as fp:
            arr = npformat.read_array(fp, allow_pickle=False, max_header_size=MAX_NPY_HEADER)
    except _zip_errors() as exc:
        raise FormatError(path, None, f"corrupt {what}: {exc}") from None
    if arr.shape != m.shape or arr.dtype != m.dtype:
        raise FormatError(path, None, f"corrupt {what}: the archive changed while it was read")
    return arr


def _read_header(path: str, members: dict[str, _Member]):
    if "header" not in members:
        raise FormatError(path, None, "no header")
    arr = _read_member(path, members["header"], "file")
    try:
        return json_value(arr)
    except Corrupt as exc:
        raise FormatError(path, None, f"no readable header ({exc})") from None


class NpzArrays(Mapping):
    """The arrays of a checked archive (the header excluded), each read when first asked for.

    ``shape(name)`` and ``dtype(name)`` give what an array declares without reading it; a
    missing array is :class:`Missing`. Reading refuses non-finite floating-point values
    (:class:`FormatError` naming the file). :meth:`prefixed` gives the arrays of one part of
    the model (a learner's ``learner_*``) under their short names; messages give full names.
    """

    def __init__(
        self, path: str, members: dict[str, _Member], what: str, nonfinite_ok=(), prefix=""
    ):
        self.path, self._members, self._what = path, members, what
        self._nonfinite_ok = set(nonfinite_ok)
        self._prefix = prefix
        self._cache: dict[str, np.ndarray] = {}

    def full_name(self, name: str) -> str:
        """An array's name in the file."""
        return self._prefix + name

    def _member(self, name: str) -> _Member:
        m = self._members.get(self._prefix + name)
        if m is None:
            raise Missing(f"array {self._prefix + name!r} is missing")
        return m

    def __getitem__(self, name: str) -> np.ndarray:
        hit = self._cache.get(name)
        if hit is not None:
            return hit
        arr = _read_member(self.path, self._member(name), self._what)
        full = self._prefix + name
        if arr.dtype.kind in "fc" and full not in self._nonfinite_ok and not np.isfinite(arr).all():
            raise FormatError(
                self.path,
                None,
                f"corrupt {self._what}: array {full!r} holds NaN or infinite values",
            )
        self._cache[name] = arr
        return arr

    def __iter__(self):
        n = len(self._prefix)
        return (k[n:] for k in self._members if k.startswith(self._prefix))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def shape(self, name: str) -> tuple:
        return self._member(name).shape

    def dtype(self, name: str) -> np.dtype:
        return self._member(name).dtype

    def prefixed(self, prefix: str) -> NpzArrays:
        """The arrays whose names start with ``prefix``, named without it (read when asked)."""
        return NpzArrays(
            self.path, self._members, self._what, self._nonfinite_ok, self._prefix + prefix
        )


def _name(arrays, name: str) -> str:
    """``name`` as the file spells it (``arrays`` may be a prefixed view)."""
    full = getattr(arrays, "full_name", None)
    return full(name) if full is not None else name


def load_npz(path, fmt: str, version: int, what: str, nonfinite_ok=()) -> tuple[dict, NpzArrays]:
    """Read an archive written by :func:`save_npz`; check its format name and version.

    ``what`` names the kind of file with its article ("a tagger model"). Returns
    ``(header, arrays)``, the arrays read lazily (see :class:`NpzArrays`); ``nonfinite_ok``
    names arrays allowed to hold NaN or infinities. Raises :class:`FormatError` naming
    ``path`` for a missing, unreadable, foreign, newer or unsound file.
    """
    path = os.fspath(path)
    members = _scan(path, what)
    if "header" not in members:
        raise FormatError(path, None, f"not {what}: no readable header")
    header = _read_header(path, members)
    if not isinstance(header, dict) or header.get("format") != fmt:
        got = header.get("format") if isinstance(header, dict) else None
        raise FormatError(path, None, f"not {what}: format is {got!r}, expected {fmt!r}")
    if header.get("version") != version:
        raise FormatError(
            path,
            None,
            f"format version {header.get('version')} is not supported "
            f"(this nerstudio reads version {version})",
        )
    rest = {k: v for k, v in members.items() if k != "header"}
    return header, NpzArrays(path, rest, _kind(what), nonfinite_ok)


def _kind(what: str) -> str:
    """``what`` without its article: "an N-best file" -> "N-best file"."""
    for article in ("a ", "an "):
        if what.startswith(article):
            return what[len(article) :]
    return what


# -- checking what a model file holds against what its loader expects ----------------------------
# (a lexicon that is a string, an alpha0 with 3 values, a parameter of the wrong type would
# otherwise load and silently change every prediction). The checks raise :class:`Corrupt`,
# which the loader turns into a FormatError naming the file.


def _describe(hint) -> str:
    import typing

    if hint in (bool, int, float, str):
        return {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}[
            hint
        ]
    if hint is type(None):
        return "null"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " or ".join(_describe(a) for a in args)
    if origin in (list, tuple, typing.Sequence, __import__("collections.abc").abc.Sequence):
        return f"a list of {_describe(args[0])}s" if args and args[0] is not Ellipsis else "a list"
    if origin is typing.Literal:
        return " or ".join(json.dumps(a) for a in args)
    return str(hint)


def conforms(value, hint) -> bool:
    """Whether a JSON value has the type ``hint`` (a constructor's annotation): bool, int,
    float (a whole number too), str, None, unions, literals, lists/sequences/tuples of one type;
    anything else is not checked."""
    import collections.abc
    import typing

    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return (
            isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)
        )
    if hint is str:
        return isinstance(value, str)
    if hint is type(None):
        return value is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return any(conforms(value, a) for a in args)
    if origin is typing.Literal:
        return value in args
    if origin in (list, tuple, collections.abc.Sequence) or hint in (list, tuple):
        if not isinstance(value, (list, tuple)):
            return False
        item = args[0] if args and args[0] is not Ellipsis else None
        return item is None or all(conforms(v, item) for v in value)
    if hint is dict or origin is dict:
        return isinstance(value, dict)
    return True


def check_params(cls, params, field: str = "params") -> dict:
    """``params`` (a header's constructor arguments for ``cls``), each checked against the
    constructor's annotation; a ValueError names the first wrong field."""
    import inspect
    import typing

    if not isinstance(params, dict):
        raise Corrupt(f"header field {field!r} must be an object, not {_show(params)}")
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:
        hints = {}
    names = set(inspect.signature(cls.__init__).parameters) - {"self"}
    for k, v in params.items():
        if k not in names:
            raise Corrupt(f"header field {field}.{k} is not a setting of this model")
        if k in hints and not conforms(v, hints[k]):
            raise Corrupt(f"header field {field}.{k} must be {_describe(hints[k])}, not {_show(v)}")
    return params


_REQUIRED = object()


def header_field(h: dict, key: str, hint, field: str | None = None, default=_REQUIRED):
    """``h[key]`` checked to have the type ``hint`` (see :func:`conforms`); ``default`` when
    given is what an absent field stands for."""
    if key not in h:
        if default is not _REQUIRED:
            return default
        raise Corrupt(f"header field {field or key!r} is missing")
    if not conforms(h[key], hint):
        raise Corrupt(
            f"header field {field or key!r} must be {_describe(hint)}, not {_show(h[key])}"
        )
    return h[key]


def json_strings(arrays, name: str, unique: bool = False) -> list[str]:
    """The JSON list of strings stored in array ``name`` (a lexicon, feature names); with
    ``unique`` no string may be repeated (names that are numbered by their position)."""
    value = json_value(arrays[name])
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise Corrupt(
            f"array {_name(arrays, name)!r} must hold a list of strings, not {_show(value)}"
        )
    if unique:
        distinct(value, f"array {_name(arrays, name)!r}")
    return value


def distinct(names, where: str):
    """``names``, checked to repeat none (a repeated feature, predicate or tag would take
    another's number, silently changing every score)."""
    seen: set = set()
    for x in names:
        if x in seen:
            raise Corrupt(f"{where} repeats {_show(x)}")
        seen.add(x)
    return names


@overload
def scalar(arrays: Any, name: str) -> float: ...
@overload
def scalar(arrays: Any, name: str, kind: Callable[[Any], _T]) -> _T: ...
def scalar(arrays: Any, name: str, kind: Callable[[Any], Any] = float) -> Any:
    """The one number stored in array ``name`` (shape ``(1,)`` or ``()``), as ``kind``."""
    arr = arrays[name]
    if np.shape(arr) not in ((1,), ()):
        raise Corrupt(f"array {_name(arrays, name)!r} must hold one number, not {np.size(arr):,}")
    value = np.asarray(arr).reshape(-1)[0]
    return bool(value) if kind is bool else kind(value)


def vector(
    arrays: Any, name: str, n: int | None = None, dtype: DTypeLike = np.float64
) -> np.ndarray:
    """Array ``name`` as a vector of ``n`` values (any length when ``n`` is None); for an
    integer ``dtype`` the stored values must be integers."""
    arr = np.asarray(arrays[name])
    if arr.ndim != 1 or (n is not None and len(arr) != n):
        raise Corrupt(
            f"array {_name(arrays, name)!r} has shape {arr.shape}, expected ({'any' if n is None else n},)"
        )
    if np.dtype(dtype).kind in "iu" and arr.dtype.kind not in "biu":
        raise Corrupt(f"array {_name(arrays, name)!r} must hold integers, not {arr.dtype}")
    return arr.astype(dtype, copy=False)


def _show(value, limit: int = 40) -> str:
    s = json.dumps(value, default=str)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def construct(cls, params, field: str = "params"):
    """``cls(**params)`` with ``params`` a header's constructor arguments, checked first
    (:func:`check_params`); a setting the constructor refuses is :class:`Corrupt` too."""
    from .errors import SettingsError

    check_params(cls, params, field)
    try:
        return cls(**params)
    except SettingsError as exc:
        raise Corrupt(f"header field {field!r}: {exc}") from None


def records(h: dict, key: str, cls) -> list:
    """The list ``h[key]`` (absent: empty) of JSON objects, each made a ``cls`` (a dataclass:
    a training history), every object checked to hold exactly the fields ``cls`` needs, each
    of its annotated type."""
    import dataclasses
    import typing

    items = h.get(key, [])
    if not isinstance(items, list) or not all(isinstance(d, dict) for d in items):
        raise Corrupt(f"header field {key!r} must be a list of objects")
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    names = {f.name for f in fields}
    required = {
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    out = []
    for d in items:
        if not required <= d.keys() <= names or not all(
            conforms(v, hints[k]) for k, v in d.items()
        ):
            raise Corrupt(f"header field {key!r} holds a record that is not a {cls.__name__}")
        out.append(cls(**d))
    return out
