"""Pacing a background job so that the window's thread keeps the interpreter when it needs it.

Python runs one thread at a time (the interpreter lock). A worker thread that never blocks, such
as a save formatting a million tokens, shares the lock with the window's thread: the window gets
it only after asking for the switch interval (5 ms), and loses it again whenever it lets go
(painting, waiting for an event), so a key pressed meanwhile takes several times longer to show.

A :class:`Pacer`, called often by the worker (every few hundred lines or sentences), lets go of
the lock for a moment after every few milliseconds of work, and when taking it back was slow
(another thread held it meanwhile: the window is busy) rests longer before going on. With the
window idle the job loses about a tenth of its speed (a rest of 0.2 ms per 2 ms slice, and a
longer rest now and then when the machine is loaded); with the window busy the window gets most
of the interpreter (bench/save.py measures both). No Qt here.
"""

from __future__ import annotations

import time


class Pacer:
    """See the module docstring. ``work``: seconds of work between rests; ``rest``: a rest;
    ``busy``: a return from rest this much later than asked means another thread held the lock;
    ``backoff``: the extra rest then."""

    def __init__(
        self,
        work: float = 0.002,
        rest: float = 0.0002,
        busy: float = 0.002,
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
        time.sleep(self.rest)  # lets go of the interpreter lock: a waiting thread takes it
        self.rests += 1
        if time.perf_counter() - now - self.rest > self.busy:
            self.backoffs += 1
            time.sleep(self.backoff)
        self._since = time.perf_counter()
