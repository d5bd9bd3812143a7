"""Cholesky, triangular solve and Cholesky inverse as ember.distributions uses them (the
public ``ember.linalg.cholesky``, ``ember.linalg.solve_triangular``, ``ember.cholesky_inverse``):
values against NumPy, first and second gradients by finite differences, errors."""
import numpy as np
import pytest

import ember
from ember import cholesky_inverse
from ember.linalg import cholesky, solve_triangular
from tests.helpers import check_grad, check_second_grad

R = np.random.default_rng(0)
M = R.standard_normal((2, 3, 3))
SPD = M @ np.swapaxes(M, -1, -2) + 3 * np.eye(3)
L = np.linalg.cholesky(SPD)


def test_cholesky_values_and_gradients():
    np.testing.assert_allclose(cholesky(ember.tensor(SPD)).numpy(), L, rtol=1e-12)

    def fn(a):  # symmetric input, as the factorization assumes
        return cholesky((a + a.mT) / 2)
    check_grad(fn, SPD)
    check_second_grad(fn, SPD[0])


@pytest.mark.parametrize("upper", [False, True])
def test_solve_triangular_values_and_gradients(upper):
    a = np.ascontiguousarray(np.swapaxes(L, -1, -2)) if upper else L
    junk = np.triu(np.ones((3, 3)), 1) * 7.0  # the other triangle is never read
    a_with_junk = a + (junk.T if upper else junk)
    b = R.standard_normal((4, 1, 3, 2))
    x = solve_triangular(ember.tensor(a_with_junk), ember.tensor(b), upper=upper).numpy()
    np.testing.assert_allclose(a @ x, np.broadcast_to(b, x.shape), rtol=1e-10, atol=1e-12)

    def fn(a, b):
        return solve_triangular(a, b, upper=upper)
    check_grad(fn, a, b)
    check_second_grad(fn, a[0], b[0, 0])


def test_cholesky_inverse_values_and_gradients():
    np.testing.assert_allclose(cholesky_inverse(ember.tensor(L)).numpy(), np.linalg.inv(SPD),
                               rtol=1e-10)
    # the gradient w.r.t. the upper triangle is PyTorch's formula (L read as a full matrix),
    # which finite differences of a function reading the lower triangle cannot see
    def fn(factor):
        return cholesky_inverse(factor.tril())
    check_grad(fn, L)
    check_second_grad(fn, L[0])


def test_not_positive_definite_error():
    bad = np.stack([np.eye(2), np.array([[1.0, 2.0], [2.0, 1.0]])])
    with pytest.raises(ember.linalg.LinAlgError,
                       match=r"\(Batch element 1\): The factorization could not "
                             r"be completed .* leading minor of order 2 "):
        cholesky(ember.tensor(bad))
