"""Converting one corpus file into another, streamed where the formats allow.

Why a module of its own: reading (:mod:`~nerstudio.corpus.formats`) and writing
(:mod:`~nerstudio.corpus.writing`) each own one direction; :func:`convert_file` joins them, and
with ``strict`` refuses a conversion that would lose anything: the column formats stream line by
line and give up the atomic write at the end, the other tools' formats (read and written whole)
are first written into a scratch folder to learn what the target format would drop
(:func:`refuse_write_losses`, which ``nerstudio preannotate --strict`` uses too).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from ..errors import FormatError
from . import foreign
from . import writing as _writing
from .detect import format_for_output, normalize_format
from .filelock import refuse_if_held
from .formats import Reader, read_corpus
from .model import Corpus, StrPath
from .schemes import normalize_scheme
from .writing import Losses, write_corpus, write_lines

__all__ = ["convert_file", "raise_losses", "refuse_write_losses"]


def convert_file(
    src: StrPath,
    dst: StrPath,
    from_format: str | None = None,
    to_format: str | None = None,
    scheme: str | None = None,
    from_scheme: str | None = None,
    encoding: str | None = None,
    strict: bool = False,
    losses: Losses | None = None,
) -> Reader:
    """Stream ``src`` into ``dst`` (atomic), converting format and/or scheme. Returns the reader.

    Without ``to_format`` the output format is the one ``dst``'s extension names (``.jsonl``,
    ``.tsv``, ``.conll``; see :func:`~nerstudio.corpus.detect.format_for_output`), else the
    input's. What the output format cannot keep is counted in ``losses``.
    """
    refuse_if_held(dst)  # a window of another nerstudio is editing it
    target_scheme = normalize_scheme(scheme) if scheme else None  # bad names fail before any work
    target_format = normalize_format(to_format) if to_format else None
    losses = Losses() if losses is None else losses
    reader = Reader(os.fspath(src), from_format, from_scheme, encoding, strict)
    fmt = target_format or format_for_output(dst, reader.format) or reader.known_format
    if reader.foreign is not None or foreign.handler(fmt) is not None:  # read whole, write whole
        corpus = (
            reader.read_foreign()
            if reader.foreign is not None
            else read_corpus(src, reader.format, from_scheme, encoding, strict)
        )
        if reader.foreign is None:
            reader.scheme, reader.notes = corpus.scheme, list(corpus.notes)
        if strict:  # the losses of the write are known once written: written aside first
            refuse_write_losses(corpus, dst, fmt, target_scheme)
        write_corpus(corpus, dst, fmt, target_scheme, losses=losses)
        return reader
    events = reader.events()
    first = next(events)  # fills in reader.scheme
    sch = target_scheme or reader.known_scheme
    lossless = fmt == reader.format

    def all_events() -> Iterator[tuple[str, object]]:
        yield first
        yield from events

    lines = _writing.render_lines(reader, fmt, sch, all_events(), lossless, losses)
    if strict:
        lines = _strict_lines(lines, losses, dst)
    enc = _writing.output_encoding(fmt, reader.known_encoding)  # JSONL: UTF-8 by definition
    write_lines(
        dst,
        lines,
        enc,
        reader.newline if lossless else "\n",
        reader.bom if lossless and enc == reader.known_encoding else _writing.new_file_bom(enc),
        (lambda: reader.final_newline) if lossless else True,
    )
    return reader


def _strict_lines(lines: Iterable[str], losses: Losses, dst: StrPath) -> Iterator[str]:
    """``lines``, then an error (the atomic write is abandoned) if the conversion lost anything."""
    yield from lines
    raise_losses(losses, dst)


def raise_losses(losses: Losses, dst: StrPath) -> None:
    if losses:
        messages = losses.messages() or [
            f"{sum(losses.counts.values())} loss(es) of kind(s) {', '.join(losses.counts)}"
        ]
        more = f" (and {len(messages) - 1} more)" if len(messages) > 1 else ""
        raise FormatError(dst, None, f"--strict: {messages[0]}{more}; nothing written")


def refuse_write_losses(corpus: Corpus, dst: StrPath, fmt: str, scheme: str | None) -> None:
    """Write ``corpus`` into a scratch folder to learn what ``fmt`` would lose; raise if anything."""
    import tempfile

    trial = Losses()
    with tempfile.TemporaryDirectory(prefix="nerstudio-strict-") as tmp:
        target = os.path.join(tmp, os.path.basename(os.path.normpath(os.fspath(dst))) or "out")
        if os.path.isdir(dst):
            os.mkdir(target)
        write_corpus(corpus, target, fmt, scheme, losses=trial)
    raise_losses(trial, dst)
