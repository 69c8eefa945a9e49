"""The ``nerstudio`` command line.

Exit status: 0 on success; 1 for every error the user can fix — a bad input file (reported as
one line, ``nerstudio: error: FILE:LINE: message``), an output that cannot be written, a bad
option value, and a command line argparse cannot parse (its usage line comes first) — that is,
a :class:`~nerstudio.errors.NerstudioError` or an ``OSError``; 3 for an internal error, any other
exception (a bug: one line saying so, never ``error:``, so a stray ``ValueError`` cannot pass for
bad input); 130 when interrupted, 143 when terminated (SIGTERM: the worker processes a command
started are stopped first, as on Ctrl+C). Every error is also recorded,
with its traceback, in the log file (:mod:`nerstudio.logs`); ``--debug`` (or
``NERSTUDIO_DEBUG=1``) shows the same on stderr.

The package: :mod:`.commands` (one module per command: its options and what it does),
:mod:`.options` (the options several commands share), :mod:`.parser` (the grammar built from
them) and :mod:`.common` (progress, reading a corpus); here, the dispatch with its exit statuses
and logging.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .. import __version__, logs  # noqa: F401 (the version is part of the command line's API)
from ..errors import NerstudioError
from . import commands
from .parser import INTERNAL_ERROR, USER_ERROR, build_parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = logs.is_debug(getattr(args, "debug", False))
    logs.setup(debug=debug)
    if not args.command:
        parser.print_help()
        return USER_ERROR
    log = logs.logger("cli")
    command = " ".join(["nerstudio", *(argv if argv is not None else sys.argv[1:])])
    try:
        # not for the window: Qt's event loop would hold the exception back, and SIGTERM must
        # end it at once as before (its recovery file is already on disk)
        with _terminate_as_exception(args.command != "gui"):
            return commands.module(args.command).run(args) or 0
    except Terminated:
        print("nerstudio: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("nerstudio: interrupted", file=sys.stderr)
        return 130
    except (
        BrokenPipeError
    ):  # the reader of our output has gone (`nerstudio stats … | head`): no error
        _silence_stdout()
        return 141  # what a shell reports for a process ended by SIGPIPE, as `yes | head` gives
    except MemoryError:
        log.error("out of memory (%s)", command, exc_info=True)
        print("nerstudio: error: out of memory", file=sys.stderr)
        return USER_ERROR
    except (NerstudioError, OSError) as exc:  # the user's input, options or files
        message = _user_message(exc)
        log.error("%s (%s)", message, command, exc_info=True)
        print(f"nerstudio: error: {message}", file=sys.stderr)
        return USER_ERROR
    except Exception as exc:
        log.error("internal error: %s: %s (%s)", type(exc).__name__, exc, command, exc_info=True)
        where = "above" if debug else f"in {logs.log_path()}"
        print(
            f"nerstudio: internal error: {type(exc).__name__}: {exc} (a bug; the details are {where})",
            file=sys.stderr,
        )
        return INTERNAL_ERROR


class Terminated(BaseException):
    """SIGTERM reached the command: unwound like Ctrl+C, so every ``finally`` runs (the fold
    driver's stops its worker processes, which would otherwise run on, orphaned)."""


@contextmanager
def _terminate_as_exception(wanted: bool = True) -> Iterator[None]:
    """While a command runs in the main thread, SIGTERM raises :class:`Terminated`."""
    if not wanted or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    before = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _user_message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, NerstudioError):
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return f"{where}{exc.strerror or exc}"
    return str(exc)
