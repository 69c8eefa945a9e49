"""The ``nerstudio`` command line.

Exit status: 0 on success; 1 for every error the user can fix — a bad input file (reported as
one line, ``nerstudio: error: FILE:LINE: message``), an output that cannot be written, a bad
option value, and a command line argparse cannot parse (its usage line comes first) — that is,
a :class:`~nerstudio.errors.NerstudioError` or an ``OSError``; 3 for an internal error, any other
exception (a bug: one line saying so, never ``error:``, so a stray ``ValueError`` cannot pass for
bad input); 130 when interrupted. Every error is also recorded,
with its traceback, in the log file (:mod:`nerstudio.logs`); ``--debug`` (or
``NERSTUDIO_DEBUG=1``) shows the same on stderr.

The package: :mod:`.parser` (the options), :mod:`.corpus_commands`, :mod:`.model_commands`,
:mod:`.reranker_commands`, :mod:`.analysis_commands`, :mod:`.preannotate_command`,
:mod:`.errors_command`, :mod:`.adjudicate_command` (what the commands do) and :mod:`.common`; here, the dispatch with
its exit statuses and logging.
"""

from __future__ import annotations

import os
import sys

from .. import __version__, logs  # noqa: F401 (the version is part of the command line's API)
from ..errors import NerstudioError
from . import suspects_command
from .adjudicate_command import cmd_adjudicate
from .analysis_commands import cmd_agreement, cmd_rank_uncertain
from .corpus_commands import cmd_convert, cmd_evaluate, cmd_stats, corpus_stats  # noqa: F401
from .errors_command import cmd_errors
from .model_commands import cmd_jackknife, cmd_nbest, cmd_tag, cmd_train_tagger
from .parser import INTERNAL_ERROR, USER_ERROR, ArgumentParser, build_parser  # noqa: F401
from .preannotate_command import cmd_preannotate
from .reranker_commands import (
    cmd_experiment,
    cmd_explain_model,
    cmd_rerank,
    cmd_sweep,
    cmd_train_reranker,
)


def cmd_gui(args) -> int:
    from ..gui.app import run

    return run(args.path, screenshot=args.screenshot)


def cmd_install_desktop(args) -> int:
    from ..resources import desktop

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


COMMANDS = {
    "convert": cmd_convert,
    "evaluate": cmd_evaluate,
    "stats": cmd_stats,
    "gui": cmd_gui,
    "train-tagger": cmd_train_tagger,
    "nbest": cmd_nbest,
    "tag": cmd_tag,
    "jackknife": cmd_jackknife,
    "train-reranker": cmd_train_reranker,
    "rerank": cmd_rerank,
    "experiment": cmd_experiment,
    "explain-model": cmd_explain_model,
    "sweep": cmd_sweep,
    "rank-uncertain": cmd_rank_uncertain,
    "agreement": cmd_agreement,
    "preannotate": cmd_preannotate,
    "install-desktop": cmd_install_desktop,
    "errors": cmd_errors,
    "adjudicate": cmd_adjudicate,
    "suspects": suspects_command.run,
}


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
        return COMMANDS[args.command](args) or 0
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
