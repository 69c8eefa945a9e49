"""The same command on the same data gives the same models and predictions, byte for byte,
whatever the number of threads and whatever processor the compiled kernels are built for.

Each configuration runs in a child process (tests/determinism_probe.py): numba reads its thread
count and target processor, and BLAS its thread count, once, when they load.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # whole experiments, each run in child processes

PROBE = Path(__file__).with_name("determinism_probe.py")


def probe(threads: int, what: str, **env: str) -> dict[str, str]:
    e = dict(os.environ, **env)
    e.pop("NUMBA_DISABLE_JIT", None)
    e["PYTHONHASHSEED"] = str(1000 + threads + 10 * len(env))  # another string hashing each time
    proc = subprocess.run(
        [sys.executable, str(PROBE), str(threads), what],
        env=e,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def differences(a: dict, b: dict) -> list[str]:
    assert a.keys() == b.keys()
    return sorted(k for k in a if a[k] != b[k])


@functools.cache
def tagger_and_kernel(threads: int, machine: tuple = ()) -> dict[str, str]:
    """The max-ent tagger on the demo corpus and its N-best lists, and the kernel perceptron
    on random lists with hundreds of stored mistakes, 20 candidates a sentence (its scores'
    products over the mistakes as large as a real run's)."""
    res = probe(threads, "tagger,kernel", **dict(machine))
    assert int(res["kernel vote:mistakes"]) > 400
    return res


def test_tagger_and_kernel_perceptron_do_not_depend_on_thread_counts():
    """numba and BLAS on one thread and on two, the L-BFGS passes on one core and on two."""
    assert differences(tagger_and_kernel(1), tagger_and_kernel(2)) == []


def test_tagger_and_kernel_perceptron_do_not_depend_on_the_processor():
    """As if on another machine: numba's kernels compiled for a generic processor (no vector
    units beyond the baseline, no fused multiply-add) and OpenBLAS's kernels for an older one
    (``OPENBLAS_CORETYPE``, x86-64 only). Before the fix the tagger's weights and lists differed
    (fastmath), and so did the averaged kernel perceptron's scores (BLAS products)."""
    other = (("NUMBA_CPU_NAME", "generic"), ("OPENBLAS_CORETYPE", "Sandybridge"))
    assert differences(tagger_and_kernel(2), tagger_and_kernel(2, other)) == []


def test_experiment_does_not_depend_on_thread_counts(tmp_path):
    """The typed experiment on the demo corpus with one thread of everything (numba, BLAS, one
    core: one L-BFGS thread, one jackknife worker, the rerankers one after the other) and with
    two: every model array, every N-best list and every prediction file identical."""
    one = probe(1, str(tmp_path / "one"))
    two = probe(2, str(tmp_path / "two"))
    assert any(k.startswith("tagger.npz:") for k in one)
    assert any(k.startswith("reranker-kernel.npz:") for k in one)
    assert differences(one, two) == []
