"""A command that runs worker processes and is terminated (SIGTERM: a job scheduler, ``kill``, a
closed session) stops its workers before it exits, as on Ctrl+C, and says so: exit status 143."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from nerstudio.demo import DEMO_DIR


def _children(pid: int) -> list[int]:
    path = f"/proc/{pid}/task/{pid}/children"
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            state = next(line for line in f if line.startswith("State:"))
    except (OSError, StopIteration):
        return False
    return "Z" not in state.split()[1]  # a zombie has stopped


@pytest.mark.slow
@pytest.mark.skipif(
    not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"),
    reason="needs Linux /proc to see a process's children",
)
def test_sigterm_stops_the_fold_workers_and_exits_143(tmp_path):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nerstudio",
            "jackknife",
            str(DEMO_DIR / "train.conll"),
            "--folds",
            "4",
            "--workers",
            "2",
            "--optimizer",
            "lbfgs",
            "--max-iter",
            "100000",
            "--out",
            str(tmp_path / "out.npz"),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
            workers = _children(proc.pid)
        assert len(workers) == 2, "the command never started its two workers"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143
    assert err.strip().endswith("nerstudio: terminated")
    time.sleep(0.5)
    assert not [w for w in workers if _alive(w)], "workers outlived the command"


def test_the_window_keeps_the_default_sigterm(monkeypatch):
    """``nerstudio gui`` hands over to Qt's event loop, which would hold an exception back:
    SIGTERM keeps ending it at once, as before."""
    from nerstudio import cli
    from nerstudio.cli.commands import gui

    seen = []
    monkeypatch.setattr(gui, "run", lambda args: seen.append(signal.getsignal(signal.SIGTERM)) or 0)
    assert cli.main(["gui"]) == 0
    assert seen == [signal.SIG_DFL]
    monkeypatch.setattr(
        cli.commands.module("stats"),
        "run",
        lambda args: seen.append(signal.getsignal(signal.SIGTERM)) or 0,
    )
    assert cli.main(["stats", str(DEMO_DIR / "dev.conll")]) == 0
    assert seen[-1] not in (signal.SIG_DFL, signal.SIG_IGN)
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # put back after the command
