"""What the commands share: the progress line on stderr, reading a corpus with the reading
options, and the one-line summary of an N-best list."""

from __future__ import annotations

import sys


class Progress:
    """A one-line progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, label: str, total: int | None = None):
        self.label, self.total = label, total
        self.tty = sys.stderr.isatty()
        self._last = -1.0

    def update(self, done: int, total: int | None = None, note: str = "") -> None:
        import time as _t

        total = total or self.total
        now = _t.monotonic()
        final = total is not None and done >= total
        if not final and now - self._last < (0.1 if self.tty else 5.0):
            return
        self._last = now
        if total:
            frac = done / total
            bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
            text = f"{self.label} [{bar}] {done}/{total} {note}"
        else:
            text = f"{self.label} {done} {note}"
        if self.tty:
            sys.stderr.write("\r" + text[:160].ljust(80))
            if final:
                sys.stderr.write("\n")
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def message(self, text: str) -> None:
        if self.tty:
            sys.stderr.write("\r" + " " * 80 + "\r")
        sys.stderr.write(f"{self.label}: {text}\n")
        sys.stderr.flush()


class StageLines:
    """``say(line, done, total)`` for a :class:`~nerstudio.app.progress.Reporter`: a line on
    stderr (:meth:`Progress.message`) each time the stage or the count of finished steps
    changes, and in between, on a terminal, the latest report on one line rewritten at most ten
    times a second."""

    def __init__(self, label: str):
        self.bar = Progress(label)
        self._key: tuple | None = None
        self._last = 0.0

    def __call__(self, line: str, done: int = 0, total: int = 0) -> None:
        import time as _t

        key = (line.split(" — ")[0], done)
        now = _t.monotonic()
        if key != self._key:
            self._key, self._last = key, now
            self.bar.message(line)
        elif self.bar.tty and now - self._last >= 0.1:
            self._last = now
            sys.stderr.write("\r" + f"{self.bar.label}: {line}"[:160].ljust(80))
            sys.stderr.flush()


def _read(path, args):
    """The corpus at ``path`` read with the command's reading options; what the reader did not
    keep as it was (its notes, the tag transitions it repaired) is said on stderr, one
    ``note:`` line each, as ``convert`` and ``stats`` say it (``--strict`` refuses them)."""
    from ..corpus.formats import read_corpus

    corpus = read_corpus(
        path,
        getattr(args, "format", None),
        getattr(args, "in_scheme", None),
        args.encoding,
        args.strict,
    )
    for line in corpus.notes:
        print(f"note: {path}: {line}", file=sys.stderr)
    if corpus.repairs:
        print(
            f"note: {path}: {corpus.repairs} invalid tag transition(s) read the conlleval way "
            f"(use --strict to reject them)",
            file=sys.stderr,
        )
    return corpus


def _summary(gold_sents, nb, label: str) -> str:
    from ..corpus.model import Span
    from ..evaluation import evaluate_spans, oracle

    if not any(s.spans for s in gold_sents):
        return f"{label}: {len(nb)} sentences (no gold entities: F not computed)"
    gold = [s.spans if nb.typed else [Span(a, b, "") for a, b, _ in s.spans] for s in gold_sents]
    f1 = evaluate_spans(gold, nb.top()).f1
    cands = [nb.candidate_spans(i) for i in range(len(nb))]
    n = max((nb.n_candidates(i) for i in range(len(nb))), default=1)
    return f"{label}: 1-best F {f1:.2f}, oracle F at N={n} {oracle(gold, cands).f1:.2f} ({len(nb)} sentences)"


def _executor(args):
    """The executor ``--executor`` names (None: the local default), closed when the command exits."""
    import atexit

    from ..runtime.dask_executor import executor_from_setting

    executor = executor_from_setting(args.executor)
    if hasattr(executor, "close"):
        atexit.register(executor.close)
    return executor
