import numpy as np

from tests.parity.compare import compare


def test_compare_catches_broadcast_add():
    rng = np.random.default_rng(0)
    compare(lambda lib, a, b: a * b + 1.5, rng.standard_normal((3, 4)), rng.standard_normal(4))


def test_compare_noncontiguous_matmul():
    rng = np.random.default_rng(1)
    compare(lambda lib, a, b: a @ b, rng.standard_normal((3, 4)).astype(np.float32),
            rng.standard_normal((4, 5)).astype(np.float32), noncontiguous=True)
