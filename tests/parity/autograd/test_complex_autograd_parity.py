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


# ---- elementwise functions opted in later: holomorphic ones, sgn, pow with a tensor exponent
UNARY_MORE = {
    "sin": lambda m, a: a.sin(), "cos": lambda m, a: a.cos(), "tan": lambda m, a: a.tan(),
    "sinh": lambda m, a: a.sinh(), "cosh": lambda m, a: a.cosh(), "tanh": lambda m, a: a.tanh(),
    "sigmoid": lambda m, a: a.sigmoid(), "log1p": lambda m, a: a.log1p(),
    "expm1": lambda m, a: a.expm1(), "log2": lambda m, a: a.log2(),
    "log10": lambda m, a: a.log10(), "rsqrt": lambda m, a: a.rsqrt(),
    "square": lambda m, a: a.square(), "sgn": lambda m, a: a.sgn(),
    "functions": lambda m, a: (m.sin(a), m.tanh(a), m.sigmoid(a), m.square(a), m.sgn(a)),
}


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(UNARY_MORE))
def test_unary_more(name, dtype):
    z = _z(3, 4, dtype=dtype)
    compare_complex(UNARY_MORE[name], z)
    # non-contiguous input
    compare_complex(lambda m, a: UNARY_MORE[name](m, a.mT[::2]), z)


def test_sgn_at_zero_and_second_order_of_tanh_sigmoid():
    compare_complex(lambda m, a: a.sgn(), np.array([0j, 1 + 1j, -2j, 3 + 0j]))

    def fn(m, a):
        g, = m.autograd.grad((a.tanh() * a.sigmoid()).abs().sum(), a, create_graph=True)
        return (g * a).real.sum() + g.abs().sum()
    compare_complex(fn, _z(4))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_pow_tensor_exponent(dtype):
    real = np.float32 if dtype == np.complex64 else np.float64
    a, b = _z(3, 4, dtype=dtype), _z(4, dtype=dtype)
    compare_complex(lambda m, a, b: (a ** b, m.pow(a, b.real), a.mT[::2] ** b[:2, None]), a, b)
    # a real base (negative ones included) or a real exponent against a complex one
    compare_complex(lambda m, x, b: (x ** b, b ** x), _r(3, 4, dtype=real), b)
    compare_complex(lambda m, b: (2.5 ** b, (-1.5) ** b, (1 + 1j) ** b), b)
    # zero base: no gradient for a real exponent >= 0 (PyTorch's choice)
    compare_complex(lambda m, a, b: a ** b, np.array([0j, 0j, 0j, 1j], dtype=dtype),
                    np.array([2 + 0j, 1 + 1j, 3 + 0j, 2j], dtype=dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_reductions_more(dtype):
    z = _z(3, 4, dtype=dtype)
    compare_complex(lambda m, a: (a.prod(), a.prod(1), a.prod(0, keepdim=True),
                                  a.cumsum(1), a.mT.cumsum(0), a.cumprod(1), a.mT[::2].cumprod(1),
                                  a.mean((0, 1)), a.mean(-1, keepdim=True), a.mT[1:].mean(0),
                                  a.sum(1, dtype=m.complex128), a.sum(dtype=m.complex128)), z)
    # zeros take the product-of-others paths
    w = z.copy()
    w[1, 2] = 0
    w[2, 0] = w[2, 3] = 0
    compare_complex(lambda m, a: (a.prod(), a.prod(1), a.cumprod(1), a.cumprod(0)), w)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_real_results_of_complex_inputs(dtype):
    z = _z(3, 4, dtype=dtype)
    compare_complex(lambda m, a: (a.var(), a.var(1), a.std(0, keepdim=True),
                                  m.std(a.mT[::2], 1, correction=0), m.var(a, (0, 1))), z)
    for p in (2, 1, 3, 0.5, float("inf"), -float("inf")):
        compare_complex(lambda m, a: (m.linalg.vector_norm(a, p), m.linalg.vector_norm(a, p, 1),
                                      m.linalg.vector_norm(a.mT[::2], p, 0, keepdim=True)), z)
    compare_complex(lambda m, a: (a.norm(), m.norm(a, dim=1), m.linalg.norm(a),
                                  m.linalg.norm(a, "fro"), m.linalg.norm(a, 1),
                                  m.linalg.matrix_norm(a, -float("inf"))), z)
    # a zero entry and a zero norm get PyTorch's subgradients
    compare_complex(lambda m, a: (m.linalg.vector_norm(a, 2, 1), m.linalg.vector_norm(a, 1, 1),
                                  m.linalg.vector_norm(a, 0.5, 1)),
                    np.array([[0j, 0j], [1 - 1j, 0j]], dtype=dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_matrix_parts_and_masks(dtype):
    z, v = _z(3, 4, dtype=dtype), _z(4, dtype=dtype)
    mask = np.array([True, False, True, False])
    compare_complex(lambda m, a, v: (a.trace(), m.trace(a.mT), a.diagonal(), a.diagonal(1),
                                     m.diagonal(a[None], 0, 1, 2), m.diag(v, 1), m.diag(a, -1),
                                     m.diag_embed(a), a.tril(), a.triu(1), a.mT.tril(-1),
                                     a.masked_fill(m.tensor(mask), 2 - 1j),
                                     a.masked_fill(m.tensor(mask), v[0]),
                                     a.mT.masked_fill(m.tensor(mask[:3]), 0)), z, v)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_index_ops(dtype):
    z, s = _z(3, 4, dtype=dtype), _z(2, 4, dtype=dtype)
    idx = np.array([2, 0])
    gidx = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])

    def fn(m, a, s):
        i, g = m.tensor(idx), m.tensor(gidx)
        return (a.index_select(0, i), a.mT.index_select(1, i), a.gather(0, g),
                a.scatter(0, g[:, :3], s[:, :3]), a.scatter(1, g[:, :2] % 2, 1j),
                a.scatter_add(0, g, s), a.index_add(0, i, s),
                a.index_add(0, i, s, alpha=-2), a.mT.gather(1, g.mT[:, :1]))
    # (a complex alpha: PyTorch 2.13 sends grad * alpha to source, not grad * conj(alpha);
    # ember's conjugate is checked by gradcheck in tests/autograd)
    compare_complex(fn, z, s)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_einsum(dtype):
    a, b, v = _z(2, 3, 4, dtype=dtype), _z(4, 5, dtype=dtype), _z(4, dtype=dtype)
    compare_complex(lambda m, a, b, v: (m.einsum("bij,jk->bik", a, b), m.einsum("ii->i", b[:, :4]),
                                        m.einsum("bij,j,jk->bk", a, v, b),
                                        m.einsum("ij,ij->", a[0], a[1].conj()),
                                        m.einsum("i,j->ij", v, b.mT[::2, 0])), a, b, v)
