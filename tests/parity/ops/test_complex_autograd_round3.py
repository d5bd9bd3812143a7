"""Parity with PyTorch for the third round of complex autograd: values and input gradients
(complex cotangents where an output is complex) in complex64 and complex128 of the inverse
trigonometric functions, sinc, exp2, logsumexp/logaddexp/logcumsumexp, lerp,
addcmul/addcdiv, linear, index_put, dist, the shape and product ops, the complex linalg
(forward and backward; eig, LU), nan_to_num's complex values, the refusals of
jacfwd/jacrev, the phase errors of complex SVD/eigh/eig, and forward-mode tangents of
complex duals. (Finite-difference checks of the same ops: tests/autograd/test_complex_round3.py.)
"""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember
import ember.autograd.forward_ad as efw
from tests.parity.complex_compare import compare_complex

COMPLEX = [np.complex64, np.complex128]
_rng = np.random.default_rng(11)


def _z(*shape, dtype=np.complex128):
    return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(dtype)


def _loose(dtype):
    """Tolerances for matrix functions in complex64 (their gradients amplify rounding)."""
    return dict(rtol=2e-3, atol=2e-4) if dtype == np.complex64 else {}


UNARY = {
    "asin": lambda m, a: a.asin(), "acos": lambda m, a: a.acos(), "atan": lambda m, a: a.atan(),
    "asinh": lambda m, a: a.asinh(), "acosh": lambda m, a: a.acosh(),
    "atanh": lambda m, a: a.atanh(),
    "aliases": lambda m, a: (m.arcsin(a), m.arccos(a), m.arctanh(a), m.arccosh(a)),
    "sinc": lambda m, a: m.sinc(a), "exp2": lambda m, a: m.exp2(a),
    "logsumexp": lambda m, a: (m.logsumexp(a, 1), m.logsumexp(a, (0, 1), keepdim=True)),
    "logcumsumexp": lambda m, a: (m.logcumsumexp(a, 1), m.logcumsumexp(a, 0)),
}


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    z = _z(3, 4, dtype=dtype)
    compare_complex(UNARY[name], z)
    compare_complex(lambda m, a: UNARY[name](m, a.mT[::2]), z)  # non-contiguous


def test_logcumsumexp_zero_cotangents_and_large_values():
    z = np.array([[1 + 2j, 0.5 - 1j, -1 + 0.3j], [1e4 + 0.5j, 1e4 - 2j, -1000 + 1j]])
    compare_complex(lambda m, a: m.logcumsumexp(a, 1) * m.tensor([[0, 1, 0], [1, 1, 1]]), z)


def test_sinc_at_zero_and_real_inputs_of_complex_results():
    compare_complex(lambda m, a: m.sinc(a), np.array([0j, 1e-3 + 0j, 0.5 - 2j]))
    compare_complex(lambda m, x, b: (m.lerp(x.to(b.dtype), b, 0.25), m.logaddexp(x * 1j, b),
                                     (x * (1 - 1j)).asinh()),
                    _rng.standard_normal(3), _z(3))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_logaddexp(dtype):
    a, b = _z(3, 4, dtype=dtype), _z(4, dtype=dtype)
    compare_complex(lambda m, a, b: (m.logaddexp(a, b), m.logaddexp(b[::2], a[:, ::2])), a, b)
    # the larger real part leads (values only: the result is not wrapped into (-pi, pi])
    big = np.array([50 + 2j, 1 - 3j, 0.5j], dtype=dtype)
    compare_complex(lambda m, a, b: m.logaddexp(a, b), big, np.array([1 + 1j, 2 + 3j, 0j],
                                                                     dtype=dtype))


def test_nan_to_num_of_complex_values():
    # each part replaced; no gradient (PyTorch has none for complex nan_to_num either)
    z = np.array([complex(np.nan, 2), complex(np.inf, -np.inf), complex(1, np.nan), 3 + 4j])
    for dtype in COMPLEX:
        compare_complex(lambda m, a: (m.nan_to_num(a), m.nan_to_num(a, 1.5, 9.0, -9.0)),
                        z.astype(dtype), grad=False)


def test_forward_errors_of_complex_binary_math():
    a = np.array([1 + 1j])
    for name in ("atan2", "hypot"):
        msgs = []
        for lib in (torch, ember):
            with pytest.raises(NotImplementedError) as err:
                getattr(lib, name)(lib.tensor(a), lib.tensor(a))
            msgs.append(str(err.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_lerp_addcmul_addcdiv(dtype):
    a, b, w = _z(3, 4, dtype=dtype), _z(4, dtype=dtype), _z(3, 1, dtype=dtype)
    compare_complex(lambda m, a, b, w: (m.lerp(a, b.expand(3, 4), 0.3), m.lerp(a, b, w),
                                        m.lerp(a[:, ::2], b[::2], 0.8),
                                        m.addcmul(a, a, b, value=2 - 1j), m.addcmul(a, w, b),
                                        m.addcdiv(a, w, b, value=0.5j), m.addcdiv(a, a, b)),
                    a, b, w)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_linear(dtype):
    x, w, b = _z(3, 4, dtype=dtype), _z(5, 4, dtype=dtype), _z(5, dtype=dtype)
    compare_complex(lambda m, x, w, b: (m.nn.functional.linear(x, w, b),
                                        m.nn.functional.linear(x, w),
                                        m.nn.functional.linear(x[None], w.mT.mT[::2], b[::2])),
                    x, w, b)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_index_put_and_views(dtype):
    z, v = _z(4, 3, dtype=dtype), _z(3, dtype=dtype)

    def fn(m, a, v):
        i = m.tensor([0, 2])
        w = a.clone()
        w[m.tensor([1, 3])] = v * 2
        return (a.index_put((i,), v), a.index_put((m.tensor([1, 1]),), v, accumulate=True),
                a.masked_scatter(m.tensor([[True, False, True]]), v.repeat(4)), w,
                a.take(m.tensor([0, 5, 5])), a.put(m.tensor([1, 4]), v[:2]),
                a.as_strided((2, 2), (1, 3), 1), a.unfold(0, 2, 1), a.index_fill(0, i, 1j),
                a.index_copy(0, i, v[None].expand(2, 3)))
    compare_complex(fn, z, v)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_shape_and_product_ops(dtype):
    a, b, v = _z(3, 3, dtype=dtype), _z(3, 3, dtype=dtype), _z(3, dtype=dtype)
    compare_complex(lambda m, a, b, v: (
        a.flip(0), a.roll(1, 1), m.cat([a, b]), m.stack([a, b], 2), a.repeat(2, 1),
        v.expand(2, 3), m.nn.functional.pad(a, (1, 2)), m.kron(a, b), m.linalg.cross(a, b),
        m.linalg.vecdot(a, b), m.linalg.vecdot(v, a, dim=0), m.addmm(a, a, b, beta=1 + 1j,
                                                                   alpha=2 - 1j),
        m.baddbmm(a[None], a[None], b[None], alpha=1j), m.addmv(v, a, v, beta=0.5),
        m.addr(a, v, v.flip(0), alpha=-1j), m.addbmm(a, a[None], b[None]), a.clone(),
        m.diff(a), m.diff(a, dim=0, prepend=b[:1]), m.fft.fft(a), m.fft.ifft2(a),
        m.fft.hfft(a), m.fft.fftshift(a), m.fft.rfft(a.real * a.imag), m.fft.irfft(a, 4),
        m.fft.ihfft(a.abs()), m.fft.fftn(a, norm="ortho"), m.fft.irfftn(a)), a, b, v)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_dist(dtype):
    compare_complex(lambda m, a, b: (m.dist(a, b), m.dist(a, b, 1), m.dist(a, b[0], 3),
                                     m.dist(a, b, float("inf")), m.dist(a.mT, b.mT, 0.5)),
                    _z(3, 4, dtype=dtype), _z(3, 4, dtype=dtype))


# ---- linalg --------------------------------------------------------------------------------
def _hermitian(m, a):
    return a @ a.mH + 3 * m.eye(a.shape[-2], dtype=a.dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_inverse_determinants_solves(dtype):
    a, b = _z(2, 3, 3, dtype=dtype), _z(3, 2, dtype=dtype)
    compare_complex(lambda m, a, b: (
        m.linalg.inv(a), m.linalg.det(a), *m.linalg.slogdet(a), m.logdet(a[0]),
        m.linalg.solve(a, b), m.linalg.solve(a[0], b[:, 0]),
        m.linalg.solve(a, b.mT[None], left=False),
        m.linalg.inv_ex(a).inverse, m.linalg.solve_triangular(a.triu() + 3 * m.eye(3), b,
                                                              upper=True),
        m.cholesky_solve(b, m.linalg.cholesky(_hermitian(m, a[1]))),
        m.linalg.matrix_exp(a * 0.5), m.linalg.matrix_power(a, -2)), a, b, **_loose(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_singular_determinant(dtype):
    a = _z(3, 3, dtype=dtype)
    a[1] = 0  # singular: the gradient is the adjugate, through the SVD

    def adjugate(m, a):  # torch's graph-free backward gives 0 here (as for real matrices)
        a = a.requires_grad_()  # values only: the second derivative here is unreliable
        return m.autograd.grad(m.linalg.det(a), a, torch.tensor(1 - 2j) if m is torch else
                               ember.tensor(1 - 2j), create_graph=True)[0]
    compare_complex(adjugate, a, grad=False, **_loose(dtype))
    # nearly singular (det about 1e-15): A's own LU keeps the adjugate accurate
    b = _z(3, 3)
    b[2] = b[0] * (1 - 2j)
    compare_complex(lambda m, a: m.linalg.det(a), b)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_factorizations(dtype):
    a, tall, wide = _z(3, 3, dtype=dtype), _z(4, 3, dtype=dtype), _z(2, 4, dtype=dtype)

    def fn(m, a, tall, wide):
        h = _hermitian(m, a)
        low = m.linalg.cholesky(h)
        q, r = m.linalg.qr(tall)
        q2, r2 = m.linalg.qr(wide)
        w, v = m.linalg.eigh(h)
        u, s, vh = m.linalg.svd(tall, full_matrices=False)
        u2, s2, vh2 = m.linalg.svd(wide)
        # phase-invariant functions of the vectors only (LAPACK picks the phases)
        return (low, m.linalg.cholesky(h, upper=True), q @ r, r.abs(), q2.abs(), r2.abs(),
                w, v.abs(), v[:, :1] @ v[:, :1].mH, m.linalg.eigvalsh(h, UPLO="U"),
                s, u.abs(), vh.abs(), u @ vh, s2, vh2[:2].abs(), m.linalg.svdvals(wide))
    compare_complex(fn, a, tall, wide, **_loose(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_norms_pinv_lstsq(dtype):
    a, b = _z(4, 3, dtype=dtype), _z(4, 2, dtype=dtype)
    compare_complex(lambda m, a, b: (
        m.linalg.matrix_norm(a, "nuc"), m.linalg.matrix_norm(a, 2), m.linalg.matrix_norm(a, -2),
        m.linalg.norm(a, 2), m.linalg.cond(a), m.linalg.pinv(a), m.linalg.pinv(a.mT),
        m.linalg.pinv(_hermitian(m, a.mT), hermitian=True), m.linalg.lstsq(a, b).solution),
        a, b, **_loose(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_lu(dtype):
    a, tall, wide, b = (_z(3, 3, dtype=dtype), _z(4, 2, dtype=dtype), _z(2, 4, dtype=dtype),
                        _z(3, 2, dtype=dtype))

    def fn(m, a, tall, wide, b):
        lu, piv = m.linalg.lu_factor(a)
        return (lu, *m.linalg.lu(tall)[1:], *m.linalg.lu(wide)[1:], m.linalg.lu_solve(lu, piv, b),
                m.linalg.lu_solve(lu, piv, b, adjoint=True),
                m.linalg.lu_solve(lu, piv, b.mT, left=False),
                m.linalg.lu_solve(lu, piv, b.mT, left=False, adjoint=True))
    compare_complex(fn, a, tall, wide, b, **_loose(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_eig(dtype):
    real = np.float32 if dtype == np.complex64 else np.float64

    def fn(m, a, r):  # phase-invariant functions of the eigenvectors
        w, v = m.linalg.eig(a)
        w2, v2 = m.linalg.eig(r)
        return (w, v.abs(), v[:, :1] @ v[:, :1].mH, m.linalg.eigvals(a), w2, v2.abs(),
                m.linalg.eigvals(r))
    compare_complex(fn, _z(3, 3, dtype=dtype), _rng.standard_normal((3, 3)).astype(real),
                    **_loose(dtype))


def test_phase_dependent_losses_raise_as_torch():
    a = _z(3, 3)
    for which, fn in (("svd", lambda m, x: m.linalg.svd(x)[0].real.sum()),
                      ("eig", lambda m, x: m.linalg.eig(x)[1].real.sum()),
                      ("eigh", lambda m, x: m.linalg.eigh(_hermitian(m, x))[1].imag.sum())):
        msgs = []
        for lib in (torch, ember):
            x = lib.tensor(a, requires_grad=True)
            with pytest.raises(RuntimeError) as err:
                fn(lib, x).backward()
            msgs.append(str(err.value))
        assert msgs[0] == msgs[1], which


def test_forward_errors_match():
    a = _z(2, 3)
    for fn in (lambda m, x: m.linalg.inv(x), lambda m, x: m.linalg.cholesky(x),
               lambda m, x: m.linalg.vecdot(x.real, x)):
        msgs = []
        for lib in (torch, ember):
            with pytest.raises(RuntimeError) as err:
                fn(lib, lib.tensor(a))
            msgs.append(str(err.value))
        assert msgs[0] == msgs[1]


# ---- forward mode --------------------------------------------------------------------------
TANGENTS = {
    "holomorphic": lambda m, a, b: (a.sin(), a.exp(), a.log(), a.sqrt(), a.tanh(), a.sigmoid(),
                                    a.asin(), a.acosh(), m.sinc(a), m.exp2(a), a.reciprocal(),
                                    a ** 3, a ** b, m.logaddexp(a, b)),
    "not_holomorphic": lambda m, a, b: (a.abs(), a.real, a.imag, a.conj(), a.angle(), a.sgn(),
                                        m.linalg.vector_norm(a), a.var(1), a.mH),
    "products": lambda m, a, b: (a * b, a / b, a - 2 * b, a @ b, m.einsum("ij,jk->ik", a, b),
                                 m.nn.functional.linear(a, b), m.addcmul(a, a, b, value=0.5),
                                 m.lerp(a, b, 0.3)),
    "linear_maps": lambda m, a, b: (a.sum(0), a.mean(), a.cumsum(1), a.prod(1), a.flip(0),
                                    m.cat([a, b]), a[[0, 2]], a.trace(), a.tril(),
                                    m.fft.fft(a), m.view_as_real(a), m.logsumexp(a, 1)),
    "linalg": lambda m, a, b: (m.linalg.inv(a), m.linalg.det(a), m.linalg.solve(a, b),
                               m.linalg.matrix_exp(a), m.linalg.slogdet(a)[1],
                               m.linalg.eigvalsh(a + a.mH), m.linalg.svdvals(a),
                               m.linalg.pinv(a)),
}


def _tangents(lib, fw, fn, arrays):
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(p), lib.tensor(t)) for p, t in arrays]
        outs = fn(lib, *duals)
        return [fw.unpack_dual(o).tangent for o in outs]


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(TANGENTS))
def test_forward_mode_tangents(name, dtype):
    arrays = [(_z(3, 3, dtype=dtype), _z(3, 3, dtype=dtype)) for _ in range(2)]
    expected = _tangents(torch, tfw, TANGENTS[name], arrays)
    got = _tangents(ember, efw, TANGENTS[name], arrays)
    tol = dict(rtol=1e-3, atol=1e-4) if dtype == np.complex64 else dict(rtol=1e-7, atol=1e-9)
    for e, g in zip(expected, got):
        assert str(g.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
        np.testing.assert_allclose(g.numpy(), e.resolve_conj().numpy(), **tol)


def test_forward_mode_complex_primal_real_tangent():
    z, t = _z(3), _rng.standard_normal(3)
    expected = _tangents(torch, tfw, lambda m, a: (a.sin(), a.abs(), a * 2j), [(z, t)])
    got = _tangents(ember, efw, lambda m, a: (a.sin(), a.abs(), a * 2j), [(z, t)])
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-7, atol=1e-9)


def test_jacobian_transforms_refuse_complex_as_torch():
    z, x = np.array([1 + 2j, 0.5 - 1j]), np.array([1.0, 2.0])
    cases = [lambda m: m.func.jacfwd(lambda a: a.abs())(m.tensor(z)),
             lambda m: m.func.jacfwd(lambda a: a * 1j)(m.tensor(x)),
             lambda m: m.func.jacrev(lambda a: a.abs())(m.tensor(z)),
             lambda m: m.func.jacrev(lambda a: a * 1j)(m.tensor(x)),
             lambda m: m.func.hessian(lambda a: a.abs().sum())(m.tensor(z))]
    for case in cases:
        msgs = []
        for lib in (torch, ember):
            with pytest.raises(RuntimeError) as err:
                case(lib)
            msgs.append(str(err.value))
        assert msgs[0] == msgs[1]
    # func.jvp takes complex primals and tangents
    t = np.array([0.3 - 1j, 2 + 0.5j])
    out = [lib.func.jvp(lambda a: (a.sin() * a).sum(), (lib.tensor(z),), (lib.tensor(t),))[1]
           for lib in (torch, ember)]
    np.testing.assert_allclose(out[1].numpy(), out[0].numpy(), rtol=1e-7, atol=1e-9)
