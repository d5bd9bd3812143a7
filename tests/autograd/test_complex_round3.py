"""Complex autograd, third round: finite-difference checks (complex128, backward and forward
mode) of the ops opted in -- inverse trigonometric functions, sinc, exp2, logsumexp,
logaddexp, logcumsumexp, lerp, addcmul/addcdiv, linear, index_put, as_strided/unfold, dist,
the complex linalg (eig and LU included) -- values from calculus, the phase errors of
complex SVD/eigh/eig, and forward-mode AD with complex tangents (its tangents checked
against finite differences, and its refusals). PyTorch parity of the same ops:
tests/parity/ops/test_complex_autograd_round3.py.
"""
import cmath

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from ember.autograd import gradcheck, gradgradcheck

L = ember.linalg


def _z(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.standard_normal(shape) + 1j * rng.standard_normal(shape),
                        dtype=ember.complex128, requires_grad=True)


def _hermitian(a):
    return a @ a.mH + 3 * ember.eye(a.shape[-2], dtype=a.dtype)


ELEMENTWISE = {
    "asin_acos_atan": lambda a: (a.asin(), a.acos(), a.atan()),
    "asinh_acosh_atanh": lambda a: (a.asinh(), a.acosh(), a.atanh()),
    "sinc_exp2": lambda a: (ember.sinc(a), ember.exp2(a)),
    "logsumexp": lambda a: (ember.logsumexp(a, 1), ember.logsumexp(a, (0, 1))),
    "logaddexp": lambda a: ember.logaddexp(a, a.flip(1) * 2),
    "logcumsumexp": lambda a: (ember.logcumsumexp(a, 1), ember.logcumsumexp(a, 0)),
    "lerp": lambda a: (ember.lerp(a, a.flip(0), 0.3 - 0.2j), ember.lerp(a, a * 1j, a[:, :1])),
    "addcmul_addcdiv": lambda a: (ember.addcmul(a, a, a.flip(1), value=1 - 1j),
                                  ember.addcdiv(a, a.flip(0), a + 3, value=0.5j)),
    "linear": lambda a: (ember.nn.functional.linear(a, a.flip(0) * 1j, a[0, :2]),
                         ember.nn.functional.linear(a, a.flip(0))),
    "index_put": lambda a: (a.index_put((ember.tensor([1]),), a[0]),
                            a.index_put((ember.tensor([0, 0]),), a[1], accumulate=True),
                            a.masked_scatter(ember.tensor([[True, False, True]]), a.flip(0))),
    "strided_views": lambda a: (a.as_strided((2, 2), (1, 3)), a.unfold(1, 2, 1)),
    "dist": lambda a: (ember.dist(a, a.flip(0)), ember.dist(a, a[0] * 1j, 1),
                       ember.dist(a, a.flip(1), 3)),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_gradcheck(name):
    # forward mode too: complex tangents through the same ops
    assert gradcheck(ELEMENTWISE[name], (_z(2, 3),), check_forward_ad=True)


@pytest.mark.parametrize("name", ["asin_acos_atan", "asinh_acosh_atanh", "sinc_exp2",
                                  "logaddexp", "logcumsumexp", "linear"])
def test_gradgradcheck(name):
    assert gradgradcheck(ELEMENTWISE[name], (_z(2, 3),))


LINALG = {
    "inv_det": lambda a: (L.inv(a), L.det(a), ember.logdet(a)),
    "slogdet": lambda a: L.slogdet(a),
    "solve": lambda a: (L.solve(a, a[:, :2] * 1j), L.solve(a, a.flip(0), left=False),
                        L.solve_triangular(a.triu() + 3 * ember.eye(3), a.flip(0), upper=True)),
    "cholesky": lambda a: (L.cholesky(_hermitian(a)), L.cholesky(_hermitian(a), upper=True),
                           ember.cholesky_solve(a, L.cholesky(_hermitian(a.flip(0))))),
    "qr": lambda a: (L.qr(a), L.qr(a[:, :2]), L.qr(a[:2])),
    # phase-invariant functions of the vectors
    "eigh": lambda a: (lambda w, v: (w, v.abs(), v @ v.mH[:, :1]))(*L.eigh(_hermitian(a))),
    "svd": lambda a: tuple((lambda u, s, vh: (s, u.abs(), vh.abs(), u @ vh))(
        *L.svd(m, full_matrices=False)) for m in (a, a[:, :2], a[:2])),
    "matrix_norms": lambda a: (L.matrix_norm(a, "nuc"), L.matrix_norm(a, 2),
                               L.matrix_norm(a[:, :2], -2), L.svdvals(a[:2])),
    "pinv_lstsq": lambda a: (L.pinv(a[:, :2]), L.pinv(a[:2]), L.pinv(_hermitian(a), hermitian=True),
                             L.lstsq(a[:, :2], a).solution),
    "matrix_exp": lambda a: L.matrix_exp(a),
    # eigenvectors through phase-invariant functions; a real input's eigenvalues too
    "eig": lambda a: (lambda w, v: (w, v.abs(), (v * w.unsqueeze(-2)) @ L.inv(v),
                                    L.eigvals(a.real)))(*L.eig(a)),
    "lu": lambda a: (L.lu_factor(a).LU, L.lu(a[:, :2])[1:], L.lu(a[:2])[1:],
                     L.lu_solve(*L.lu_factor(a), a.flip(0), adjoint=True),
                     L.lu_solve(*L.lu_factor(a), a.flip(1), left=False)),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_gradcheck(name):
    assert gradcheck(LINALG[name], (_z(3, 3, seed=2),), check_forward_ad=True)


def test_linalg_gradgradcheck():
    assert gradgradcheck(lambda a: (L.inv(a), L.det(a), L.solve(a, a.flip(1))), (_z(3, 3),))


def test_nearly_singular_determinant():
    # numerically singular (det about 1e-15): the gradient is still the adjugate's
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    a[2] = a[0] * (1 - 2j)
    assert gradcheck(lambda x: L.det(x), (ember.tensor(a, requires_grad=True),))


def test_values_from_calculus():
    z = ember.tensor([0.3 + 0.4j], requires_grad=True)
    z.asin().real.sum().backward()  # gradient conj(1 / sqrt(1 - z^2))
    assert np.allclose(z.grad.numpy(), np.conj(1 / cmath.sqrt(1 - (0.3 + 0.4j) ** 2)))
    # d log det A = tr(A^-1 dA): the gradient of Re log det is A^-H
    a = _z(3, 3)
    ember.logdet(a).real.backward()
    assert np.allclose(a.grad.numpy(), np.linalg.inv(a.detach().numpy()).conj().T)
    # slogdet's sign is a phase: Im log det moves it, e^{i theta} -> i e^{i theta} d theta
    a.grad = None
    sign, _ = L.slogdet(a)
    (sign.conj() * sign.detach() * 1j).real.backward()  # sin(theta - theta0): d theta
    assert np.allclose(a.grad.numpy(), 1j * np.linalg.inv(a.detach().numpy()).conj().T)


def test_phase_dependent_losses_raise():
    a = _z(3, 3)
    u, s, vh = L.svd(a)
    with pytest.raises(RuntimeError, match=r"svd_backward: The singular vectors in the complex "
                                           r"case are specified up to multiplication by e\^"):
        u.real.sum().backward()
    w, v = L.eigh(_hermitian(a))
    with pytest.raises(RuntimeError, match=r"linalg_eigh_backward: The eigenvectors in the "
                                           r"complex case are specified up to multiplication"):
        v.sum().abs().backward()
    w, v = L.eig(a)
    with pytest.raises(RuntimeError, match=r"linalg_eig_backward: The eigenvectors in the "
                                           r"complex case are specified up to multiplication"):
        v.real.sum().backward()
    # phase-invariant losses have gradients
    u, s, vh = L.svd(a)
    (u @ vh).abs().sum().backward()
    assert a.grad is not None


def test_complex_forward_results():
    a = _z(3, 3).detach()
    h = _hermitian(a)
    assert np.allclose((L.cholesky(h) @ L.cholesky(h).mH).numpy(), h.numpy())
    assert np.allclose(L.cholesky(h, upper=True).numpy(), L.cholesky(h).mH.numpy())
    q, r = L.qr(a)
    assert np.allclose((q @ r).numpy(), a.numpy())
    assert np.allclose(L.pinv(a).numpy(), np.linalg.pinv(a.numpy()))
    assert np.allclose(L.vecdot(a, a.flip(0)).numpy(),
                       (a.numpy().conj() * a.flip(0).numpy()).sum(-1))
    assert np.allclose(ember.logdet(a).numpy(), np.log(np.linalg.det(a.numpy())))
    x = L.lstsq(a[:, :2], a[:, 2:]).solution
    assert np.allclose(x.numpy(), np.linalg.lstsq(a.numpy()[:, :2], a.numpy()[:, 2:],
                                                  rcond=None)[0])
    b = ember.tensor([50 + 2j, 1 - 3j])
    c = ember.tensor([1 + 1j, 2 + 3j])
    assert np.allclose(ember.logaddexp(b, c).numpy(),
                       np.log(np.exp(b.numpy()) + np.exp(c.numpy())))
    with pytest.raises(NotImplementedError, match="\"atan2_cpu\" not implemented for "
                                                  "'ComplexFloat'"):
        ember.atan2(b, c)


# ---- forward mode --------------------------------------------------------------------------
def _tangent(fn, z, t):
    with fwAD.dual_level():
        return fwAD.unpack_dual(fn(fwAD.make_dual(z, t))).tangent


FORWARD = {
    "holomorphic": lambda a: a.sin() * a.exp() + a.asin() + ember.sinc(a) + a.tanh() / a,
    "abs": lambda a: a.abs(), "real_imag": lambda a: a.real * 2 + a.imag,
    "conj_angle": lambda a: a.conj() + a.angle(), "sgn_norm": lambda a: a.sgn() * a.norm(),
    "products": lambda a: a @ a.mH + ember.nn.functional.linear(a, a) * 1j,
    "reductions": lambda a: (a.sum(0) + a.prod(1) + a.cumsum(1)[:, 0] + a.var(1)),
    "linalg": lambda a: L.inv(a) + L.det(a) + L.solve(a, a.flip(0)) + L.matrix_exp(a * 0.1),
    "eigvalsh_svdvals": lambda a: L.eigvalsh(a + a.mH) + L.svdvals(a),
}


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_tangents_match_finite_differences(name):
    """The tangent of a complex dual along a complex direction ``t``: ``(f(z + ht) -
    f(z - ht)) / 2h``, non-holomorphic functions included."""
    fn = FORWARD[name]
    z, t = _z(3, 3).detach(), _z(3, 3, seed=5).detach()
    h = 1e-6
    numeric = (fn(z + h * t) - fn(z - h * t)) / (2 * h)
    got = _tangent(fn, z, t)
    assert got.dtype is numeric.dtype
    assert np.allclose(got.numpy(), numeric.numpy(), rtol=1e-5, atol=1e-6)


def test_forward_mode_complex_primal_real_tangent():
    z, t = _z(3).detach(), ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64)
    assert np.allclose(_tangent(lambda a: a * a, z, t).numpy(), 2 * z.numpy() * t.numpy())
    assert np.allclose(_tangent(lambda a: a.abs(), z, t).numpy(),
                       (np.conj(z.numpy()) / np.abs(z.numpy()) * t.numpy()).real)


def test_forward_mode_refusals():
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="complex tangent of a real tensor"):
            fwAD.make_dual(ember.ones(2), ember.ones(2, dtype=ember.complex64))
        dual = fwAD.make_dual(_z(3).detach(), _z(3, seed=1).detach())
        # ops whose backward is not complex-aware, and rules not checked for complex
        with pytest.raises(NotImplementedError, match="forward-mode AD for NanToNum on "
                                                      "complex tensors yet"):
            dual.nan_to_num()
        with pytest.raises(NotImplementedError, match="forward-mode AD for Relu on complex"):
            ember.relu(dual)
        # a real dual into a complex result: the tangent becomes complex
        real = fwAD.make_dual(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 0.0]))
        assert np.allclose(fwAD.unpack_dual((real * (1 + 1j)).exp()).tangent.numpy(),
                           np.exp(np.array([1.0, 2.0]) * (1 + 1j)) * (1 + 1j) * [1, 0])


def test_forward_over_reverse_with_complex_tangents():
    z, t = _z(3).detach(), _z(3, seed=4).detach()
    with fwAD.dual_level():
        dual = fwAD.make_dual(z.clone().requires_grad_(), t)
        g, = ember.autograd.grad((dual.sin() * dual).abs().sum(), dual, create_graph=True)
        hvp = fwAD.unpack_dual(g).tangent.detach()
    h = 1e-6

    def grad_at(x):
        x = x.clone().requires_grad_()
        return ember.autograd.grad((x.sin() * x).abs().sum(), x)[0]
    numeric = (grad_at(z + h * t) - grad_at(z - h * t)) / (2 * h)
    assert np.allclose(hvp.numpy(), numeric.numpy(), rtol=1e-5, atol=1e-6)
