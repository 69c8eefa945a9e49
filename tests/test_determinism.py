"""The same command on the same data gives the same models and predictions, byte for byte,
whatever the number of threads and whatever processor the compiled kernels are built for.

Each configuration runs in a child process (tests/determinism_probe.py): numba reads its thread
count and target processor, and BLAS its thread count, once, when they load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = Path(__file__).with_name("determinism_probe.py")


def probe(threads: int, what: str, **env: str) -> dict[str, str]:
    e = dict(os.environ, **env)
    e.pop("NUMBA_DISABLE_JIT", None)
    e["PYTHONHASHSEED"] = str(1000 + threads)  # and another string hashing in each run
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


def test_tagger_weights_and_lists_do_not_depend_on_the_processor():
    """Compiled for a generic x86-64/ARM processor (no vector units wider than the baseline, no
    fused multiply-add) or for this one, the kernels train the same tagger: before the fix the
    weights and the lists' scores differed."""
    here = probe(2, "tagger")
    generic = probe(2, "tagger", NUMBA_CPU_NAME="generic")
    assert differences(here, generic) == []


def test_tagger_does_not_depend_on_its_thread_count():
    assert differences(probe(1, "tagger"), probe(2, "tagger")) == []


def test_kernel_perceptron_does_not_depend_on_the_blas_kernels():
    """OpenBLAS picks its kernels by processor (``OPENBLAS_CORETYPE`` forces one on x86-64); a
    matrix-vector product summed the averaged model's scores, and they differed between the
    Haswell and Sandybridge kernels before the fix."""
    here = probe(2, "kernel", OPENBLAS_CORETYPE="Haswell")
    older = probe(2, "kernel", OPENBLAS_CORETYPE="Sandybridge")
    assert differences(here, older) == []


def test_kernel_perceptron_does_not_depend_on_thread_counts():
    """Hundreds of stored mistakes, 20 candidates a sentence: the scores' products over the
    mistakes are as large as a real run's."""
    one, two = probe(1, "kernel"), probe(2, "kernel")
    assert int(one["vote:mistakes"]) > 400
    assert differences(one, two) == []


@pytest.mark.slow
def test_experiment_does_not_depend_on_thread_counts(tmp_path):
    """The typed experiment on the demo corpus with one thread of everything (numba, BLAS, one
    core: one L-BFGS thread, one jackknife worker, the rerankers one after the other) and with
    two: every model array, every N-best list and every prediction file identical."""
    one = probe(1, str(tmp_path / "one"))
    two = probe(2, str(tmp_path / "two"))
    assert any(k.startswith("tagger.npz:") for k in one)
    assert any(k.startswith("reranker-kernel.npz:") for k in one)
    assert differences(one, two) == []
