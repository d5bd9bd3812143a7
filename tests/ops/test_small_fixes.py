"""Ember-only checks of small PyTorch-parity fixes (the parity tests compare them with
PyTorch itself: tests/parity/ops/test_small_parity_fixes.py). The messages are PyTorch's
2.x CPU ones; values are computed independently with NumPy."""
import warnings

import numpy as np
import pytest

import ember


# ---- bool products are refused, integer ones computed ---------------------------------------
@pytest.mark.parametrize("call,kernel", [
    (lambda b: ember.mm(b(2, 3), b(3, 2)), "addmm_impl_cpu_"),
    (lambda b: b(2, 3) @ b(3, 2), "addmm_impl_cpu_"),
    (lambda b: ember.bmm(b(2, 2, 3), b(2, 3, 2)), "bmm"),
    (lambda b: ember.bmm(b(1, 8, 8), b(1, 8, 8)), "addmm_impl_cpu_"),  # 512 terms a matrix
    (lambda b: ember.dot(b(0), b(0)), "dot"),  # even empty
    (lambda b: ember.mv(b(2, 3), b(3)), "addmv_impl_cpu"),
    (lambda b: ember.matmul(b(2, 2, 3), b(3)), "addmv_impl_cpu"),  # the batch folded
    (lambda b: ember.matmul(b(3), b(2, 3, 2)), "bmm"),
    (lambda b: ember.nn.functional.linear(b(4, 3), b(2, 3)), "addmm_impl_cpu_"),
    (lambda b: ember.tensordot(b(2, 3), b(2, 3), dims=2), "dot"),
])
def test_bool_products_are_refused(call, kernel):
    def b(*shape):
        return ember.ones(*shape, dtype=ember.bool)
    with pytest.raises(NotImplementedError) as info:
        call(b)
    assert str(info.value) == f"\"{kernel}\" not implemented for 'Bool'"


def test_empty_bool_products_are_computed():
    b = ember.ones(0, 3, dtype=ember.bool)
    assert ember.mm(b, ember.ones(3, 2, dtype=ember.bool)).shape == (0, 2)
    out = ember.mm(ember.ones(2, 0, dtype=ember.bool), ember.ones(0, 2, dtype=ember.bool))
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 2), bool))


def test_integer_products():
    a = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    b = np.arange(8, dtype=np.int64).reshape(4, 2) - 3
    got = ember.matmul(ember.tensor(a), ember.tensor(b))
    assert got.dtype is ember.int64
    np.testing.assert_array_equal(got.numpy(), a @ b)


def test_matmul_shape_error_of_a_folded_batch():
    with pytest.raises(RuntimeError) as info:
        ember.matmul(ember.ones(2, 2, 3), ember.ones(4, 2))
    assert str(info.value) == "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x2)"


# ---- ger ------------------------------------------------------------------------------------
def test_ger():
    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0, 0.5])
    np.testing.assert_allclose(ember.ger(ember.tensor(x), ember.tensor(y)).numpy(),
                               np.outer(x, y))
    np.testing.assert_allclose(ember.tensor(x).ger(vec2=ember.tensor(y)).numpy(),
                               np.outer(x, y))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning without out=
        ember.ger(ember.tensor(x), ember.tensor(y))
    out = ember.empty(2, 3, dtype=ember.float64)
    with pytest.warns(UserWarning, match="torch.ger is deprecated"):
        ember.ger(ember.tensor(x), ember.tensor(y), out=out)
    np.testing.assert_allclose(out.numpy(), np.outer(x, y))
    assert not hasattr(ember.Tensor, "ger_")


# ---- layer_norm, size/stride of 0-d, random dtypes -----------------------------------------
def test_layer_norm_normalized_shape_is_a_sequence():
    x = ember.ones(2, 4)
    with pytest.raises(TypeError, match=r"layer_norm\(\): argument 'normalized_shape' "
                                        r"\(position 2\) must be tuple of ints, not int"):
        ember.nn.functional.layer_norm(x, 4)
    with pytest.raises(RuntimeError, match="Expected normalized_shape to be at least "
                                           "1-dimensional"):
        ember.nn.functional.layer_norm(x, [])
    assert ember.nn.LayerNorm(4)(x).shape == (2, 4)


@pytest.mark.parametrize("what", ["size", "stride"])
@pytest.mark.parametrize("dim", [0, -1, 2])
def test_dim_of_a_0d_tensor(what, dim):
    with pytest.raises(IndexError) as info:
        getattr(ember.tensor(1.0), what)(dim)
    assert str(info.value) == f"Dimension specified as {dim} but tensor has no dimensions"


@pytest.mark.parametrize("fn,kernel", [
    (lambda d: ember.rand(2, dtype=d), "check_uniform_bounds"),
    (lambda d: ember.randn(2, dtype=d), "normal_kernel_cpu"),
    (lambda d: ember.ones(2, dtype=d).uniform_(), "check_uniform_bounds"),
    (lambda d: ember.ones(2, dtype=d).normal_(), "normal_kernel_cpu"),
])
@pytest.mark.parametrize("dtype,name", [(ember.int64, "Long"), (ember.int32, "Int"),
                                        (ember.uint8, "Byte"), (ember.bool, "Bool")])
def test_random_floats_name_dtypes_as_torch(fn, kernel, dtype, name):
    with pytest.raises(NotImplementedError) as info:
        fn(dtype)
    assert str(info.value) == f"\"{kernel}\" not implemented for '{name}'"


def test_random_bool():
    values = ember.zeros(200, dtype=ember.bool).random_()
    assert set(values.numpy().tolist()) == {False, True}
    with pytest.raises(RuntimeError, match="^to - 1 is out of bounds for bool$"):
        ember.zeros(2, dtype=ember.bool).random_(3)
