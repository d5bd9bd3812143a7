"""ember.backend.ranges.linspace_array: PyTorch's linspace rounding (counting up from start
in the first half, down from end in the second), checked against exact rational values."""
from fractions import Fraction

import numpy as np
import pytest

import ember
from ember.backend.ranges import linspace_array, _fma64


def test_fma64_rounds_once():
    # a * b + c with one rounding: the exact value, rounded to the nearest double
    rs = np.random.RandomState(0)
    a, b, c = rs.randn(3, 2000)
    got = _fma64(a, b, c)
    exact = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)]
    assert (got == np.array(exact)).mean() > 0.999


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_points_are_one_rounding_from_their_end(dtype):
    steps, start, end = 173, -1.0, 1.0
    got = linspace_array(np, start, end, steps, np.dtype(dtype))
    step = float(dtype(dtype(end) - dtype(start)) / dtype(steps - 1))
    for i in (0, 5, 85, 86, 100, 172):
        exact = (Fraction(start) + Fraction(step) * i if i < steps // 2
                 else Fraction(end) - Fraction(step) * (steps - 1 - i))
        assert got[i] == dtype(float(exact))
    assert got[0] == start and got[-1] == end and got.dtype == dtype


def test_symmetric_halves_and_ends():
    got = linspace_array(np, -1, 1, 20, np.dtype(np.float32))
    assert got[0] == -1 and got[-1] == 1
    np.testing.assert_array_equal(got, -got[::-1])


def test_integers_truncate_a_double_step():
    np.testing.assert_array_equal(linspace_array(np, -5, 100, 8, np.dtype(np.int64)),
                                  [-5, 10, 25, 40, 55, 70, 85, 100])
    np.testing.assert_array_equal(linspace_array(np, 0.7, 3.9, 4, np.dtype(np.int32)),
                                  [0, 1, 2, 3])


def test_other_kinds_and_short_ranges():
    assert linspace_array(np, 0, 1, 0, np.dtype(np.float32)).shape == (0,)
    np.testing.assert_array_equal(linspace_array(np, 2.5, 9, 1, np.dtype(np.float64)), [2.5])
    np.testing.assert_allclose(linspace_array(np, 0, 1, 3, np.dtype(np.complex64)),
                               [0, 0.5, 1])
    half = ember.linspace(0.3, 7.9, 5, dtype=ember.bfloat16).float().tolist()
    assert half == [0.30078125, 2.203125, 4.125, 6.0, 7.90625]
