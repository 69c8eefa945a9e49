"""Pacing a background job so that the window's thread keeps the interpreter when it needs it.

Python runs one thread at a time (the interpreter lock). A worker thread that never blocks, such
as a save formatting a million tokens, shares the lock with the window's thread: the window gets
it only after asking for the switch interval (5 ms), and loses it again whenever it lets go
(painting, waiting for an event), so a key pressed meanwhile takes several times longer to show.

A :class:`Pacer`, called often by the worker (every few hundred lines or sentences), lets go of
the lock for a moment after every few milliseconds of work, and when the process's other threads
worked meanwhile (the window is busy: its processor time grew while this one rested) rests
longer before going on. Processor time, not the clock: on a loaded machine a rest also comes back
late when the system gave the processor to another program, which is no reason to wait more.
With the window idle the job loses about a tenth of its speed (a rest of 0.2 ms per 2 ms slice);
with the window busy the window gets most of the interpreter (bench/save.py measures both).
No Qt here.
"""

from __future__ import annotations

import time


class Pacer:
    """See the module docstring. ``work``: seconds of work between rests; ``rest``: a rest;
    ``busy``: the processor time the process's other threads used during a rest that means
    they are busy; ``backoff``: the extra rest then."""

    def __init__(
        self,
        work: float = 0.002,
        rest: float = 0.0002,
        busy: float = 0.001,
        backoff: float = 0.010,
    ) -> None:
        self.work, self.rest, self.busy, self.backoff = work, rest, busy, backoff
        self.rests = 0  # how many times it rested (for a caller's report)
        self.backoffs = 0  # how many of them found another thread busy
        self._since = time.perf_counter()

    def __call__(self) -> None:
        now = time.perf_counter()
        if now - self._since < self.work:
            return
        process, mine = time.process_time(), time.thread_time()
        time.sleep(self.rest)  # lets go of the interpreter lock: a waiting thread takes it
        self.rests += 1
        if (time.process_time() - process) - (time.thread_time() - mine) > self.busy:
            self.backoffs += 1
            time.sleep(self.backoff)
        self._since = time.perf_counter()
