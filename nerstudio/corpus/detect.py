"""Which format a file is in, told from its content (and, for outputs, from its name).

Reading a corpus starts here: :func:`sniff_format` looks at the first lines of a file and names
its corpus format, or refuses it in one line (``unrecognised format``, with the supported ones)
when it is no corpus at all: a nerstudio ``.npz`` file (an N-best list or a model), another
archive or binary file, a JSON array instead of JSON Lines. :func:`is_npz` recognises archives
by their content, whatever their name. :func:`format_for_output` infers the format of a file to
be written from its extension (``convert IN OUT.jsonl``). Kept apart from the readers so that the
rules of detection are in one place.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile

from ..errors import FormatError, Msg, SettingsError
from . import foreign
from .model import StrPath

OWN_FORMATS = ("conll2003", "conll2002", "columns", "tsv", "jsonl")
FORMATS = OWN_FORMATS + tuple(h.name for h in foreign.HANDLERS)
FORMAT_ALIASES = {
    "conll": "conll2003",
    "conll03": "conll2003",
    "conll02": "conll2002",
    "tab": "tsv",
    "wnut": "tsv",
    "json": "jsonl",
    "2col": "columns",
    "plain": "columns",
}
SUPPORTED = (
    "supported corpus formats: conll2003, conll2002, columns (space-separated, tag last), "
    "tsv, jsonl"
    + "".join(f", {h.name}" for h in foreign.HANDLERS)
    + "; N-best lists and models are nerstudio .npz files"
)
DOCSTART = "-DOCSTART-"
SNIFF_BYTES = 1 << 16  # at most this much of a line is looked at
_SNIFF_LINES = 10_000  # blank and -DOCSTART- lines skipped before giving up
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
# the first bytes of binary files, as patterns: the printable ones in full (a bzip2 block
# header, a PDF version), so that a corpus whose first word is "BZh" or "%PDF" is still read
_BINARY_MAGIC = {
    re.compile(rb"\x1f\x8b"): "a gzip-compressed file (decompress it first)",
    re.compile(rb"BZh[1-9]1AY&SY"): "a bzip2-compressed file (decompress it first)",
    re.compile(rb"\xfd7zXZ"): "an xz-compressed file (decompress it first)",
    re.compile(rb"%PDF-\d\.\d"): "a PDF document",
    re.compile(rb"\x7fELF"): "a program",
}

# output extensions that name a format; "conll" keeps a CoNLL-style input's own variant
_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".tsv": "tsv",
    ".conll": "conll",
    ".conll03": "conll2003",
    ".conll2003": "conll2003",
    ".conll02": "conll2002",
    ".conll2002": "conll2002",
}


def own_extensions() -> dict[str, str]:
    """The extensions that name one of nerstudio's own formats, and the format each names
    (``conll``: a CoNLL variant); a copy, to read."""
    return dict(_EXTENSIONS)


def is_docstart(first: str) -> bool:
    """Whether a line whose first field is ``first`` is a ``-DOCSTART-`` line: the field itself,
    or, in a tab-separated file, the whole ``-DOCSTART- -X- -X- O`` kept with its spaces (AllenNLP's
    and other tools' tab-separated CoNLL-2003 copies)."""
    return first == DOCSTART or (
        first.startswith(DOCSTART) and first[len(DOCSTART) : len(DOCSTART) + 1] == " "
    )


def normalize_format(name: str) -> str:
    key = name.strip().lower()
    key = FORMAT_ALIASES.get(key, key)
    h = foreign.handler(key)
    if h is not None:
        return h.name
    if key not in FORMATS:
        raise SettingsError(Msg.UNKNOWN.format(what="format", name=name, choices=FORMATS))
    return key


def format_sep(fmt: str) -> str:
    return "\t" if fmt == "tsv" else " "


def check_regular(path: str) -> None:
    """Refuse what is neither a regular file nor a folder: a FIFO would block a reader forever and
    a device (``/dev/zero``) never ends; nerstudio reads files it can read to their end."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # the open that follows names the problem
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    raise FormatError(
        path, None, f"is {kind}, not a corpus file: save the data to a file and read that"
    )


def check_file(path: str) -> None:
    if not os.path.exists(path):
        raise FormatError(path, None, Msg.NO_SUCH_FILE.format())
    check_regular(path)
    if os.path.isdir(path):
        from .foreign.brat import is_collection

        if not is_collection(path):
            raise FormatError(
                path,
                None,
                "is a folder, not a corpus file (a folder opens as a brat collection "
                "when it holds NAME.txt + NAME.ann pairs)",
            )


def is_npz(path: StrPath) -> bool:
    """Whether ``path`` is a zip archive (what numpy's ``.npz`` files are), whatever its name."""
    try:
        with open(path, "rb") as f:
            return f.read(4) in _ZIP_MAGIC
    except OSError:
        return False


def npz_format(path: StrPath) -> str | None:
    """The ``format`` named in a nerstudio ``.npz`` file's JSON header, read without numpy and
    without trusting the file (``None`` when it has no readable header)."""
    import json

    try:
        with zipfile.ZipFile(path) as z:
            info = z.getinfo("header.npy")
            if info.file_size > SNIFF_BYTES * 16:
                return None
            raw = z.read(info)
    except (
        OSError,
        KeyError,
        ValueError,
        zipfile.BadZipFile,
        EOFError,
        RuntimeError,
        NotImplementedError,
    ):
        return None
    start = raw.find(b"\n", 10)  # the .npy preamble ends with a newline; the JSON bytes follow
    try:
        header = json.loads(raw[start + 1 :].decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    fmt = header.get("format") if isinstance(header, dict) else None
    return fmt if isinstance(fmt, str) else None


def refuse_non_text(path: str, head: bytes) -> None:
    """Raise ``unrecognised format`` for archives and binary files (whatever the reader)."""
    if head[:4] in _ZIP_MAGIC:
        fmt = npz_format(path)
        what = (
            f"a nerstudio .npz file ({fmt}), not a corpus"
            if fmt
            else "a zip archive (or .npz file), not a corpus"
        )
        raise FormatError(path, None, f"unrecognised format: {what}; {SUPPORTED}")
    for magic, what in _BINARY_MAGIC.items():
        if magic.match(head):
            raise FormatError(path, None, f"unrecognised format: {what}; {SUPPORTED}")


_LS_COLUMNS = ("annotation_id", "annotator", "lead_time", "created_at", "updated_at")


def unread_format(head: str) -> str | None:
    """What a file of another tool that nerstudio does not read is, and what to do, from its
    first line (``None`` when it is none of them): such a file would otherwise be misread as a
    broken corpus of nerstudio's own formats."""
    lines = [x.rstrip("\r") for x in head.split("\n")[:200]]
    first = lines[0]
    words = [x for x in lines[:-1] if x.strip() and not x.startswith("#")]
    widths = {len(x.split("\t")) for x in words}
    if (
        first.startswith("#")
        and words
        and all(x.split("\t", 1)[0].isdigit() for x in words)
        and len(widths) == 1
        and 2 < (n := widths.pop()) != 10
    ):
        return (
            f"comment lines and numbered word lines of {n} tab-separated columns: CoNLL-U in "
            "another tool's columns (Flair's five: ID FORM UPOS NER MISC?); nerstudio reads it "
            "as CoNLL-U Plus when a first line names the columns, e.g. "
            "'# global.columns = ID FORM UPOS NER MISC'"
        )
    for sep, name in (("\t", "TSV"), (",", "CSV")):
        cells = {c.strip().strip('"') for c in first.split(sep)}
        if len(cells) > 2 and "annotation_id" in cells and len(cells & set(_LS_COLUMNS)) >= 3:
            return (
                f"Label Studio's {name} export (a header row with annotation_id, annotator, ...; "
                "its regions are JSON text in a column): export the project as JSON from Label "
                "Studio and read that file"
            )
    return None


def _looks_binary(text: str) -> bool:
    return "\x00" in text


def sniff_format(path: StrPath, encoding: str = "utf-8") -> str:
    """The corpus format of ``path`` from its first token line (see the module docstring).

    JSONL when that line is a JSON object; TSV when it holds a tab; else by its number of
    space-separated fields: 4 is conll2003, 3 conll2002, anything else columns. A file of only
    blank and ``-DOCSTART-`` lines is conll2003 (unless they hold a tab). Raises
    :class:`FormatError` (``unrecognised format``) for files that are no corpus.
    """
    path = os.fspath(path)
    check_file(path)
    if os.path.isdir(path):
        return "brat"  # a folder of brat pairs (check_file refuses any other folder)
    seen_tab = False
    with open(path, "rb") as f:
        head = f.read(SNIFF_BYTES)
        decoded = head.decode(encoding, errors="replace").lstrip("\ufeff")
        other = foreign.sniff(path, decoded)
        if other is not None and other != "text":
            return other
        refuse_non_text(path, head)
        unread = unread_format(decoded)  # before plain text: a .txt name says nothing of it
        if unread is not None:
            raise FormatError(path, 1, f"unrecognised format: {unread}")
        if other is not None:
            return other
        f.seek(0)
        first = True
        for _ in range(_SNIFF_LINES):
            chunk = f.readline(SNIFF_BYTES)  # a line, or its first 64 KiB
            if not chunk:
                break
            if first:
                first = False
                if chunk.startswith(b"\xef\xbb\xbf"):
                    chunk = chunk[3:]
            text = chunk.decode(encoding, errors="replace")
            if _looks_binary(text):
                raise FormatError(path, None, f"unrecognised format: binary data; {SUPPORTED}")
            text = text.rstrip("\r\n").lstrip("\ufeff")
            if not text.strip():
                continue
            stripped = text.lstrip()
            if stripped.startswith("{"):
                return "jsonl"
            if stripped == "[" or stripped.startswith(("[{", "[[")):
                whole = head.decode(encoding, errors="replace")
                if '"paragraphs"' in whole and '"orth"' in whole:  # spaCy v2's JSON training format
                    raise FormatError(
                        path,
                        None,
                        "spaCy v2's JSON training format (paragraphs, sentences, "
                        "tokens with orth and ner): nerstudio reads spaCy's .spacy "
                        "files; convert it with `python -m spacy convert FILE.json "
                        "OUTDIR` and read the .spacy file",
                    )
                raise FormatError(
                    path,
                    None,
                    "unrecognised format: a JSON array; nerstudio reads JSON Lines "
                    f"(one JSON object per line); {SUPPORTED}",
                )
            if text.startswith(DOCSTART):
                seen_tab = seen_tab or "\t" in text
                if len(chunk) == SNIFF_BYTES:
                    break
                continue
            tab, spaces = "\t" in text, text.count(" ")
            while not tab and len(chunk) == SNIFF_BYTES and not chunk.endswith(b"\n"):
                # a first token longer than 64 KiB: the rest of its line
                chunk = f.readline(SNIFF_BYTES)
                tab, spaces = b"\t" in chunk, spaces + chunk.rstrip(b"\r\n").count(b" ")
            if tab:
                return "tsv"
            return {3: "conll2003", 2: "conll2002"}.get(spaces, "columns")
    return "tsv" if seen_tab else "conll2003"


def format_for_output(path: StrPath, input_format: str | None = None) -> str | None:
    """The format an output file's extension names (``.jsonl``, ``.tsv``, ``.conll``, ...), or
    ``None`` when it names none. ``.conll`` keeps a CoNLL-style input's own variant (conll2003,
    conll2002 or columns) and means conll2003 otherwise."""
    other = foreign.for_extension(path)
    if other is not None:
        return other
    ext = os.path.splitext(os.fspath(path))[1].lower()
    fmt = _EXTENSIONS.get(ext)
    if fmt == "conll":
        return (
            input_format if input_format in ("conll2003", "conll2002", "columns") else "conll2003"
        )
    return fmt
