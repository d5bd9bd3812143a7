"""Autograd on complex tensors (PyTorch's convention: a real loss sends ``dL/dx + i dL/dy``
to ``z = x + iy``): finite-difference checks of every op opted in (gradcheck realifies
complex inputs and outputs), values from calculus, the refusal of ops not opted in, and
the engine's rules (real inputs get the real part, implicit gradients need real scalars)."""
import math

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember._ops import primitive
from ember._ops.primitive import Primitive


def _z(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.standard_normal(shape) + 1j * rng.standard_normal(shape),
                        dtype=ember.complex128, requires_grad=True)


def _r(*shape, seed=1):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.standard_normal(shape), dtype=ember.float64, requires_grad=True)


UNARY = {
    "neg": lambda a: -a, "conj": lambda a: a.conj(), "exp": lambda a: a.exp(),
    "log": lambda a: a.log(), "sqrt": lambda a: a.sqrt(), "reciprocal": lambda a: a.reciprocal(),
    "pow": lambda a: a ** 3 + a.pow(-1.5), "abs": lambda a: a.abs(), "angle": lambda a: a.angle(),
    "real": lambda a: a.real, "imag": lambda a: a.imag, "sum": lambda a: a.sum(1),
    "mean": lambda a: a.mean(), "view_as_real": lambda a: ember.view_as_real(a),
    "views": lambda a: (a.t().reshape(6), a.unsqueeze(0).expand(2, 2, 3).flatten(),
                        a[:, 1:].transpose(0, 1), a.select(1, 2), a.narrow(1, 0, 2),
                        a.permute(1, 0).contiguous(), a.squeeze(), a.clone()),
    "joins": lambda a: (ember.cat([a, a.flip(0)], 1), ember.stack([a, a * 2])),
    "to_real": lambda a: a.to(ember.float64),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradcheck(name):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real casts warn, as in PyTorch
        assert gradcheck(UNARY[name], (_z(2, 3),))


BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: ember.sub(a, b, alpha=3),
    "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "matmul": lambda a, b: a @ b.t(), "mm": lambda a, b: ember.mm(a, b.mT),
    "bmm": lambda a, b: ember.bmm(a.unsqueeze(0), b.t().unsqueeze(0)),
    "mv": lambda a, b: ember.mv(a, b[0]), "dot": lambda a, b: ember.dot(a[0], b[1]),
    "vdot": lambda a, b: ember.vdot(a[0], b[1]), "outer": lambda a, b: ember.outer(a[0], b[1]),
    "where": lambda a, b: ember.where(a.real > 0, a, b),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_gradcheck(name):
    assert gradcheck(BINARY[name], (_z(2, 3), _z(2, 3, seed=5)))


def test_mixed_real_and_complex_gradcheck():
    x, z = _r(2, 3), _z(3)
    assert gradcheck(lambda x, z: (x * z, z / x, x - z), (x, z))
    assert gradcheck(lambda x, y: ember.complex(x, y) * ember.polar(x.abs() + 1, y), (x, _r(2, 3)))
    assert gradcheck(lambda x: ember.view_as_complex(x) ** 2, (_r(3, 2),))
    assert gradcheck(lambda x: x.to(ember.complex128) * 1j, (x,))


def test_second_order():
    assert gradgradcheck(lambda a, b: (a * b).exp() / b, (_z(3), _z(3, seed=4)))
    assert gradgradcheck(lambda a: (a @ a.t()).abs(), (_z(2, 2),))


def test_values_from_calculus():
    """|z|^2 = x^2 + y^2: the gradient is 2x + 2iy = 2z; real(z^2) = x^2 - y^2: 2x - 2iy."""
    z = ember.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
    (z.abs() ** 2).sum().backward()
    assert np.allclose(z.grad.numpy(), 2 * np.array([1 + 2j, -3 + 0.5j]))
    z.grad = None
    (z * z).real.sum().backward()
    assert np.allclose(z.grad.numpy(), 2 * np.conj([1 + 2j, -3 + 0.5j]))
    assert z.grad.dtype is ember.complex64


def test_real_input_gets_the_real_part():
    x = ember.tensor([2.0, 3.0], requires_grad=True)
    (x * ember.tensor([1j, 1 + 1j])).imag.sum().backward()  # imag(x * c) = x * imag(c)
    assert x.grad.dtype is ember.float32
    assert x.grad.tolist() == [1.0, 1.0]


def test_leaves_and_errors():
    z = ember.tensor([1j], requires_grad=True)
    assert z.requires_grad and z.is_leaf
    assert ember.zeros(2, dtype=ember.complex128).requires_grad_().requires_grad
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar "
                                           "outputs but got ember.complex64"):
        (z * 2).sum().backward()
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        ember.tensor([1, 2]).requires_grad_()


def test_ops_not_opted_in_refuse():
    z = _z(3)
    # (nan_to_num: PyTorch has no complex gradient for it either)
    with pytest.raises(NotImplementedError, match="autograd for NanToNum on complex tensors yet"):
        z.nan_to_num()
    # a complex result needing a gradient, from real inputs, is refused too
    x = _r(3)
    with pytest.raises(NotImplementedError, match="autograd for NanToNum on complex tensors yet"):
        (x * 1j).nan_to_num()
    # without a gradient wanted the op runs
    with ember.no_grad():
        assert z.nan_to_num().dtype is ember.complex128
    assert _z(2).detach().nan_to_num().dtype is ember.complex128


def test_opt_in_is_a_class_attribute():
    assert Primitive.complex_grad is False
    assert ember._ops.elementwise.Mul.complex_grad
    assert not ember._ops.trig.NanToNum.complex_grad


def test_gradcheck_catches_a_missing_conjugate():
    c = ember.tensor([1 + 2j, -1j, 0.5 + 0.5j], dtype=ember.complex128)

    class NoConj(ember.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            return z * c

        @staticmethod
        def backward(ctx, grad):
            return grad * c  # should be grad * conj(c)

    class Right(NoConj):
        @staticmethod
        def backward(ctx, grad):
            return grad * c.conj()
    assert gradcheck(Right.apply, (_z(3),))
    assert not gradcheck(NoConj.apply, (_z(3),), raise_exception=False)


def test_angle_at_zero_has_zero_gradient():
    z = ember.tensor([0j, 1j], dtype=ember.complex128, requires_grad=True)
    z.angle().sum().backward()
    assert z.grad.tolist() == [0j, pytest.approx(-1 + 0j)]
    assert math.isclose(ember.tensor(1j).angle().item(), math.pi / 2, rel_tol=1e-7)


@pytest.mark.parametrize("native", [True, False])
def test_compiled_and_python_apply_agree(native):
    """Complex results leave the compiled apply for the Python _connect, which checks the
    opt-in: both paths record the same nodes and refuse the same ops."""
    previous = primitive.set_native_apply(native)
    try:
        z = ember.tensor([1 + 2j, 3 - 1j], dtype=ember.complex128, requires_grad=True)
        y = z * z
        assert type(y.grad_fn).__name__ == "MulBackward0"
        y.abs().sum().backward()
        assert np.allclose(z.grad.numpy(), [2 + 4j, 6 - 2j])  # |z * z| = |z|^2: 2z
        with pytest.raises(NotImplementedError, match="NanToNum on complex"):
            z.nan_to_num()
    finally:
        primitive.set_native_apply(previous)


def test_forward_mode_refuses_complex_tangents_it_cannot_derive():
    import ember.autograd.forward_ad as fwAD
    x, t = ember.tensor([1.0, 2.0, 3.0]), ember.tensor([0.3, -1.0, 2.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        # a linear map's tangent is the map of the tangent (derived from the backward)
        tangent = fwAD.unpack_dual(ember.fft.fft(dual)).tangent
        assert np.allclose(tangent.numpy(), ember.fft.fft(t).numpy())
        # complex tangents through ops opted in (tests/autograd/test_complex_round3.py)
        assert np.allclose(fwAD.unpack_dual(dual * 1j).tangent.numpy(), t.numpy() * 1j)
        back = fwAD.unpack_dual(ember.fft.irfft(ember.fft.rfft(dual), 3)).tangent
        assert np.allclose(back.numpy(), t.numpy())
        with pytest.raises(NotImplementedError, match="forward-mode AD for NanToNum on complex"):
            (dual * 1j).nan_to_num()


# ---- ops opted in later: holomorphic functions, sgn, pow with tensor exponents, reductions,
# real results of complex inputs, matrix parts, masks, index ops, einsum
MORE = {
    "sin_cos_tan": lambda a: (a.sin(), a.cos(), a.tan()),
    "sinh_cosh_tanh": lambda a: (a.sinh(), a.cosh(), a.tanh()),
    "sigmoid": lambda a: a.sigmoid(),
    "logs": lambda a: (a.log1p(), a.log2(), a.log10()),
    "expm1_rsqrt": lambda a: (a.expm1(), a.rsqrt()),
    "square_sgn": lambda a: (a.square(), a.sgn()),
    "pow_tensor": lambda a: (a ** a.flip(0), a.real.abs() ** a, a ** a.imag, 1.5 ** a,
                             (-2) ** a, (1 - 1j) ** a),
    "prod_cumsum_cumprod": lambda a: (a.prod(), a.prod(1), a.cumsum(0), a.cumprod(1)),
    "mean_sum_dims": lambda a: (a.mean(0), a.mean((0, 1), keepdim=True),
                                a.sum(1, dtype=ember.complex128)),
    "var_std": lambda a: (a.var(), a.var(1), a.std(0), a.std(correction=0)),
    "norms": lambda a: (ember.linalg.vector_norm(a), ember.linalg.vector_norm(a, 1, 1),
                        ember.linalg.vector_norm(a, 3, 0), ember.linalg.vector_norm(a, 0.5),
                        ember.linalg.vector_norm(a, float("inf")), a.norm(),
                        ember.linalg.norm(a, "fro"), ember.linalg.matrix_norm(a, 1)),
    "matrix_parts": lambda a: (a.trace(), a.diagonal(1), ember.diag(a), ember.diag(a[0]),
                               ember.diag_embed(a), a.tril(), a.triu(-1)),
    "masked_fill": lambda a: (a.masked_fill(a.real > 0, 1j), a.masked_fill(a.imag > 0, a[0, 0])),
    "index_ops": lambda a: (
        a.index_select(1, ember.tensor([2, 0])),
        a.gather(1, ember.tensor([[0, 2], [1, 1]])),
        a.scatter(1, ember.tensor([[2], [0]]), a[:, :1] * 2),
        a.scatter_add(1, ember.tensor([[0, 0], [2, 1]]), a[:, 1:]),
        a.index_add(1, ember.tensor([1, 1]), a[:, :2], alpha=2 - 1j)),
    "einsum": lambda a: (ember.einsum("ij,kj->ik", a, a), ember.einsum("ij,j->i", a, a[1]),
                         ember.einsum("ii->", a[:, :2])),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_ops_gradcheck(name):
    assert gradcheck(MORE[name], (_z(2, 3),))


@pytest.mark.parametrize("name", ["sin_cos_tan", "sinh_cosh_tanh", "sigmoid", "pow_tensor",
                                  "prod_cumsum_cumprod"])
def test_more_ops_gradgradcheck(name):
    assert gradgradcheck(MORE[name], (_z(2, 3),))


def test_zeros_in_prod_cumprod_and_norms():
    z = _z(2, 3).detach()
    z[0, 1] = 0
    z[1] = 0
    z.requires_grad_()
    assert gradcheck(lambda a: (a.prod(1), a.prod(), a.cumprod(1), a.cumprod(0)), (z,))
    # norms are not differentiable at 0: their subgradient there is not checked
    assert gradcheck(lambda a: ember.linalg.vector_norm(a[0], 2), (z,))


def test_values_from_calculus_more():
    z = ember.tensor([0.5 + 1j], dtype=ember.complex128, requires_grad=True)
    z.sin().real.sum().backward()  # d Re(sin z) = Re(cos(z) dz): gradient conj(cos z)
    assert np.allclose(z.grad.numpy(), np.conj(np.cos(0.5 + 1j)))
    z.grad = None
    # |z|^2 = vector_norm(z)^2, gradient 2z
    (ember.linalg.vector_norm(z) ** 2).backward()
    assert np.allclose(z.grad.numpy(), 2 * (0.5 + 1j))
