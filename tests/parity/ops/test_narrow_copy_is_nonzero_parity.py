"""narrow_copy and is_nonzero (and bool() of a tensor) as PyTorch's."""
import numpy as np
import pytest

import ember
from tests.parity.compare import compare, error_of

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("args", [(1, 1, 2), (0, 1, 1), (-1, 0, 2), (1, 0, 0)])
def test_narrow_copy_values_and_gradients(dtype, args):
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(dtype)
    compare(lambda lib, t: t.narrow_copy(*args), x)
    compare(lambda lib, t: lib.narrow_copy(t, *args), x, noncontiguous=True)


def test_narrow_copy_negative_start():
    """Values only: torch 2.13's own backward of a negative start fails (a shape error)."""
    x = np.arange(6.0).reshape(2, 3)
    compare(lambda lib, t: t.narrow_copy(-1, -2, 2), x, grad=False)


def test_narrow_copy_is_a_copy():
    for lib in (torch, ember):
        x = lib.zeros(2, 3)
        x.narrow_copy(1, 0, 2).fill_(1)
        assert x.sum().item() == 0


@pytest.mark.parametrize("make", [lambda lib: lib.tensor([0.0]), lambda lib: lib.tensor([2]),
                                  lambda lib: lib.tensor([]), lambda lib: lib.ones(2, 2),
                                  lambda lib: lib.tensor(True)])
def test_is_nonzero_and_bool(make):
    def outcome(fn, lib):
        try:
            return "value", fn(lib, make(lib))
        except Exception:  # noqa: BLE001 - compared below, type and message
            return "error", error_of(lambda: fn(lib, make(lib)))
    for fn in (lambda lib, t: t.is_nonzero(), lambda lib, t: lib.is_nonzero(t),
               lambda lib, t: bool(t)):
        ours, theirs = outcome(fn, ember), outcome(fn, torch)
        assert ours == theirs
        assert type(ours[1]) is (bool if ours[0] == "value" else tuple)


def test_narrow_and_narrow_copy_errors():
    for case in (lambda lib: lib.zeros(2, 3).narrow_copy(1, 2, 2),
                 lambda lib: lib.zeros(2, 3).narrow_copy(2, 0, 1),
                 lambda lib: lib.zeros(2, 3).narrow_copy(-3, 0, 1),
                 lambda lib: lib.zeros(()).narrow_copy(0, 0, 1),
                 lambda lib: lib.zeros(()).narrow(0, 0, 1),
                 lambda lib: lib.zeros(2, 3).narrow(1, 5, 0),
                 lambda lib: lib.zeros(2, 3).narrow(1, -4, 1),
                 lambda lib: lib.zeros(2, 3).narrow(1, 0, -1),
                 lambda lib: lib.zeros(2, 3).narrow(1, 2, 2)):
        assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))
