"""Parity with PyTorch for autograd on complex tensors: values and input gradients (complex
cotangents where the output is complex) of the ops whose backward ember made right for
complex tensors, complex64 and complex128, mixed with real tensors; the errors."""
import numpy as np
import pytest
import torch

import ember

from tests.parity.complex_compare import compare_complex

COMPLEX = [np.complex64, np.complex128]
_rng = np.random.default_rng(7)


def _z(*shape, dtype=np.complex128):
    return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(dtype)


def _r(*shape, dtype=np.float64):
    return _rng.standard_normal(shape).astype(dtype)


ELEMENTWISE = {
    "add": lambda m, a, b: a + b,
    "sub_alpha": lambda m, a, b: m.sub(a, b, alpha=2),
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "neg": lambda m, a, b: -a,
    "conj": lambda m, a, b: a.conj() * b,
    "exp": lambda m, a, b: a.exp(),
    "log": lambda m, a, b: a.log(),
    "sqrt": lambda m, a, b: a.sqrt(),
    "reciprocal": lambda m, a, b: a.reciprocal(),
    "pow_int": lambda m, a, b: a ** 3,
    "pow_float": lambda m, a, b: a.pow(0.5),
    "abs": lambda m, a, b: a.abs(),
    "angle": lambda m, a, b: a.angle(),
    "real_imag": lambda m, a, b: a.real * b.imag,
    "scalar_mul": lambda m, a, b: (2 - 1j) * a + b / (1 + 2j),
    "where": lambda m, a, b: m.where(a.real > 0, a, b),
}


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise(name, dtype):
    compare_complex(ELEMENTWISE[name], _z(3, 4, dtype=dtype), _z(4, dtype=dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_reductions(dtype):
    z = _z(3, 4, dtype=dtype)
    compare_complex(lambda m, a: (a.sum(), a.sum(1, keepdim=True), a.mean(), a.mean(0)), z)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_products(dtype):
    a, b, v = _z(2, 3, 4, dtype=dtype), _z(4, 5, dtype=dtype), _z(4, dtype=dtype)
    compare_complex(lambda m, a, b, v: (a @ b, m.bmm(a, b.expand(2, 4, 5)), m.mm(a[0], b),
                                        m.mv(a[1], v), m.dot(v, v.flip(0)), m.vdot(v, b[:, 0]),
                                        m.outer(v, b[0]), m.matmul(v, b)), a, b, v)


def test_views_and_shapes():
    z = _z(2, 3, 4)
    compare_complex(
        lambda m, a: (a.view(6, 4), a.reshape(4, 6), a.transpose(0, 2), a.permute(2, 0, 1),
                      a[:1].squeeze(0), a.unsqueeze(1), a[:, :1].expand(2, 5, 4),
                      a.flatten(), a[1, ::2], a.select(2, 1), a.narrow(1, 1, 2),
                      m.cat([a, a[:1]]), m.stack([a, a], 1), a.clone(), a.mT.contiguous(),
                      a[[0, 1, 1], [2, 0, 0]]), z)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_view_as_real_and_complex(dtype):
    z = _z(3, 2, dtype=dtype)
    compare_complex(lambda m, a: m.view_as_real(a) * 2, z)
    compare_complex(lambda m, a: m.view_as_complex(a) ** 2,
                    _r(3, 2, dtype=np.float32 if dtype == np.complex64 else np.float64))
    # through a transposed gradient: view_as_complex's stride rule does not reach backward
    compare_complex(lambda m, a: m.view_as_real(a).mT, z)


@pytest.mark.parametrize("real", [np.float32, np.float64])
def test_mixed_real_and_complex(real):
    """Real inputs of complex results receive the real part of their gradient."""
    zdt = np.complex64 if real == np.float32 else np.complex128
    x, y, z = _r(3, 4, dtype=real), _r(4, dtype=real), _z(4, dtype=zdt)
    compare_complex(lambda m, x, y, z: (x * z, z / y, x + z), x, y, z)
    compare_complex(lambda m, x, y: (m.complex(x, y), m.polar(x.abs(), y)), x, _r(3, 4,
                                                                                 dtype=real))
    # (complex -> real casts are checked in tests/autograd: torch warns about them only once
    # per process, which would silence the warning test_tensor_misc expects)
    compare_complex(lambda m, x, z: x.to(z.dtype) * z, x, z)


def test_float32_real_times_complex128_promotes():
    compare_complex(lambda m, x, z: x * z, _r(3, dtype=np.float32), _z(3))


def test_second_order():
    z = _z(4)

    def fn(m, a):
        g, = m.autograd.grad((a * a.exp()).abs().sum(), a, create_graph=True)
        return g.abs().sum() + (g * a).real.sum()
    compare_complex(fn, z)


def test_grad_accumulates_on_complex_leaf():
    for lib in (torch, ember):
        z = lib.tensor([1 + 2j, -1j], requires_grad=True)
        (z * z).abs().sum().backward()
        (z.conj() * 3).real.sum().backward()
        if lib is torch:
            expected = z.grad.numpy()
        else:
            np.testing.assert_allclose(z.grad.numpy(), expected, rtol=1e-6)
            assert z.grad.dtype is ember.complex64


def test_errors_as_torch():
    for lib in (torch, ember):
        z = lib.tensor(1 + 2j, requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for real "
                                               "scalar outputs but got"):
            (z * z).backward()
        with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require"):
            lib.tensor([1, 2]).requires_grad_()
        assert lib.ones(2, dtype=lib.complex64, requires_grad=True).requires_grad


def _inplace_on_part(m, a):
    w = a * 1
    w.real.mul_(2)
    w.imag[1:].mul_(3)
    m.view_as_real(w)[:1, 0].mul_(0.5)
    w[2:].mul_(3j)
    return (w * w).abs()


def test_in_place_ops_through_views_of_parts():
    """CopySlices masks each part of a complex base alone (a view may hold one part)."""
    compare_complex(_inplace_on_part, _z(4))
    compare_complex(lambda m, x: _inplace_on_part(m, m.view_as_complex(x * 1)), _r(4, 2))


def test_setitem_fill_and_copy():
    def fn(m, a, b):
        w = a * 1
        w[0] = b[1]
        w[1:2].fill_(2 - 1j)
        w[2:].copy_(b[2:] * 2)
        return w * a
    compare_complex(fn, _z(4), _z(4))
