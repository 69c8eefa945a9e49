"""sorted_unique is np.unique by sorting (numpy >= 2.3 hashes, 15-20x slower in the hot loops)."""

import numpy as np
import pytest

from nerstudio.arrays import sorted_unique


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.float64])
def test_sorted_unique_equals_np_unique(n, dtype):
    rng = np.random.default_rng(n)
    for high in (1, 3, 50, 10**6):
        a = rng.integers(-5 if dtype != np.uint8 else 0, high + 1, n).astype(dtype)
        got = sorted_unique(a)
        want = np.unique(a)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_sorted_unique_keeps_the_argument_and_takes_lists():
    a = np.array([5, 1, 5, 3, 1], dtype=np.int64)
    assert sorted_unique(a).tolist() == [1, 3, 5]
    assert a.tolist() == [5, 1, 5, 3, 1]  # not sorted in place
    assert sorted_unique([2, 2, 1]).tolist() == [1, 2]
    big = (np.arange(40, dtype=np.int64) % 7) << 40 | 3
    assert sorted_unique(big).tolist() == sorted(set(big.tolist()))
