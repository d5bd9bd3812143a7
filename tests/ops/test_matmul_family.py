"""The matmul family (baddbmm, addbmm, addmv, addr, addmm, chain_matmul, tensordot, inner,
kron) with ember and NumPy only: values against NumPy, gradients and second derivatives by
``ember.autograd.gradcheck``/``gradgradcheck`` in float64, ``beta=0`` ignoring NaN and inf,
integer tensors, the in-place forms, ``out=``, forward-mode AD, the declarations (overridable
functions, the Tensor stub) and error paths in PyTorch's words (texts taken from PyTorch 2.x)."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.overrides import get_overridable_functions


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def t(a, grad=False):
    return ember.tensor(a, requires_grad=grad)


# ---- values against NumPy -------------------------------------------------------------------
def test_baddbmm_values():
    i, a, b = randn(3, 1, seed=1), randn(2, 3, 4, seed=2), randn(2, 4, 5, seed=3)
    got = ember.baddbmm(t(i), t(a), t(b), beta=0.5, alpha=-2)
    np.testing.assert_allclose(got.numpy(), 0.5 * i + -2 * (a @ b))
    assert got.shape == (2, 3, 5)


def test_addbmm_values():
    i, a, b = randn(5, seed=1), randn(3, 2, 4, seed=2), randn(3, 4, 5, seed=3)
    got = ember.addbmm(t(i), t(a), t(b), beta=2, alpha=0.25)
    np.testing.assert_allclose(got.numpy(), 2 * i + 0.25 * np.einsum("bij,bjk->ik", a, b))
    empty = ember.addbmm(t(i), t(np.zeros((0, 2, 4))), t(np.zeros((0, 4, 5))), beta=3)
    np.testing.assert_allclose(empty.numpy(), np.broadcast_to(3 * i, (2, 5)))


def test_addmv_values():
    i, m, v = randn(3, seed=1), randn(3, 4, seed=2), randn(4, seed=3)
    np.testing.assert_allclose(ember.addmv(t(i), t(m), t(v), alpha=3).numpy(), i + 3 * (m @ v))
    one = ember.addmv(t(np.array(2.0)), t(m), t(v), beta=-1)  # a 0-d input broadcasts
    np.testing.assert_allclose(one.numpy(), -2.0 + m @ v)


def test_addr_values():
    i, v1, v2 = randn(4, seed=1), randn(3, seed=2), randn(4, seed=3)
    got = ember.addr(t(i), t(v1), t(v2), beta=-1, alpha=0.5)
    np.testing.assert_allclose(got.numpy(), -i + 0.5 * np.outer(v1, v2))


def test_addr_of_booleans_is_logical():
    i = np.array([[True, False], [False, False]])
    v1, v2 = np.array([True, False]), np.array([False, True])
    expected = i | np.outer(v1, v2)
    np.testing.assert_array_equal(ember.addr(t(i), t(v1), t(v2)).numpy(), expected)
    np.testing.assert_array_equal(ember.addr(t(i), t(v1), t(v2), beta=0).numpy(),
                                  np.outer(v1, v2))
    np.testing.assert_array_equal(ember.addr(t(i), t(v1), t(v2), alpha=0).numpy(), i)


def test_addmm_broadcasts_input():
    i, a, b = randn(1, 5, seed=1), randn(3, 4, seed=2), randn(4, 5, seed=3)
    np.testing.assert_allclose(ember.addmm(t(i), t(a), t(b)).numpy(), i + a @ b)
    np.testing.assert_allclose(ember.addmm(t(i[0, 0]), t(a), t(b), beta=2).numpy(),
                               2 * i[0, 0] + a @ b)


def test_chain_matmul_values():
    ms = [randn(2, 3, seed=1), randn(3, 4, seed=2), randn(4, 5, seed=3), randn(5, 1, seed=4)]
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
        got = ember.chain_matmul(*[t(m) for m in ms])
    np.testing.assert_allclose(got.numpy(), np.linalg.multi_dot(ms))


@pytest.mark.parametrize("sa,sb,dims", [
    ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (4, 5), 0), ((2, 3), (3, 5), 1),
    ((3, 4, 5), (4, 3, 2), ([1, 0], [0, 1])), ((3, 4, 5), (4, 3, 2), [[-2, 0], [0, -2]]),
    ((3, 5, 4, 6), (6, 4, 5, 3), ([2, 1, 3], [1, 2, 0])), ((3, 4), (2,), ([], [])),
], ids=str)
def test_tensordot_values(sa, sb, dims):
    a, b = randn(*sa, seed=1), randn(*sb, seed=2)
    np.testing.assert_allclose(ember.tensordot(t(a), t(b), dims).numpy(),
                               np.tensordot(a, b, dims), rtol=1e-12, atol=1e-12)


def test_tensordot_sums_size_one_dimensions_first():
    a, b = randn(3, 1, 5, seed=1), randn(4, 3, 2, seed=2)
    expected = np.einsum("ij,il->jl", a[:, 0, :], b.sum(0))
    got = ember.tensordot(t(a), t(b), ([0, 1], [1, 0]))
    np.testing.assert_allclose(got.numpy(), expected)


def test_tensordot_dims_as_tensor():
    a, b = randn(2, 3, 4, seed=1), randn(3, 4, 5, seed=2)
    expected = np.tensordot(a, b, 2)
    for dims in (ember.tensor(2), ember.tensor([2]), ember.tensor([[1, 2], [0, 1]])):
        np.testing.assert_allclose(ember.tensordot(t(a), t(b), dims).numpy(), expected)


def test_inner_and_kron_values():
    a, b = randn(2, 3, 4, seed=1), randn(5, 4, seed=2)
    np.testing.assert_allclose(ember.inner(t(a), t(b)).numpy(), np.inner(a, b))
    np.testing.assert_allclose(ember.inner(t(np.array(3.0)), t(b)).numpy(), 3 * b)
    for sa, sb in [((2, 3), (4, 5)), ((2, 3, 4), (4, 5)), ((3,), (4, 5)), ((), (2, 2))]:
        x, y = randn(*sa, seed=3), randn(*sb, seed=4)
        np.testing.assert_allclose(ember.kron(t(x), t(y)).numpy(), np.kron(x, y))


def test_kron_of_non_contiguous_inputs():
    """PyTorch's kron views its inputs and refuses some transposed ones; ember reshapes."""
    x, y = randn(3, 2, seed=1), randn(5, 4, seed=2)
    got = ember.kron(t(x).t(), t(y).t())
    np.testing.assert_allclose(got.numpy(), np.kron(x.T, y.T))
    np.testing.assert_allclose(ember.kron(t(x).t(), t(y)).numpy(), np.kron(x.T, y))


def test_methods_match_functions():
    i, a, b = t(randn(2, 3, 5)), t(randn(2, 3, 4, seed=1)), t(randn(2, 4, 5, seed=2))
    assert ember.equal(i.baddbmm(a, b, beta=2), ember.baddbmm(i, a, b, beta=2))
    assert ember.equal(i[0].addbmm(a, b, alpha=3), ember.addbmm(i[0], a, b, alpha=3))
    assert ember.equal(a[0].inner(b[0].t()), ember.inner(a[0], b[0].t()))
    assert ember.equal(a[0].kron(b[0]), ember.kron(a[0], b[0]))
    m, v = t(randn(3, 4)), t(randn(4))
    assert ember.equal(i[0, :, 0].addmv(m, v), ember.addmv(i[0, :, 0], m, v))
    assert ember.equal(m.addr(i[0, :, 0], v), ember.addr(m, i[0, :, 0], v))
    for name in ("tensordot", "chain_matmul"):
        assert not hasattr(ember.Tensor, name)  # functions only, as in PyTorch


# ---- gradients ------------------------------------------------------------------------------
GRADS = {
    "baddbmm": (lambda i, a, b: ember.baddbmm(i, a, b, beta=0.5, alpha=2),
                [(3, 1), (2, 3, 4), (2, 4, 5)]),
    "baddbmm_full": (lambda i, a, b: ember.baddbmm(i, a, b), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "addbmm": (lambda i, a, b: ember.addbmm(i, a, b, beta=-1, alpha=0.5),
               [(5,), (3, 2, 4), (3, 4, 5)]),
    "addmv": (lambda i, m, v: ember.addmv(i, m, v, beta=2, alpha=-1), [(3,), (3, 4), (4,)]),
    "addmv_0d": (lambda i, m, v: ember.addmv(i, m, v), [(), (3, 4), (4,)]),
    "addr": (lambda i, x, y: ember.addr(i, x, y, beta=3, alpha=0.5), [(3, 4), (3,), (4,)]),
    "addr_broadcast": (lambda i, x, y: ember.addr(i, x, y), [(4,), (3,), (4,)]),
    "addmm": (lambda i, x, y: ember.addmm(i, x, y, beta=0.5, alpha=2), [(1, 5), (3, 4), (4, 5)]),
    "chain_matmul": (lambda x, y, z: ember.chain_matmul(x, y, z), [(2, 3), (3, 4), (4, 2)]),
    "tensordot": (lambda a, b: ember.tensordot(a, b, ([1, 0], [0, 1])), [(3, 4, 2), (4, 3, 5)]),
    "tensordot_broadcast": (lambda a, b: ember.tensordot(a, b, ([0, 1], [1, 0])),
                            [(3, 1, 2), (4, 3, 5)]),
    "inner": (lambda a, b: ember.inner(a, b), [(2, 3), (4, 3)]),
    "inner_0d": (lambda a, b: ember.inner(a, b), [(), (4, 3)]),
    "kron": (lambda a, b: ember.kron(a, b), [(2, 3), (3, 2)]),
    "kron_ranks": (lambda a, b: ember.kron(a, b), [(2,), (2, 3, 2)]),
    "baddbmm_inplace": (lambda i, a, b: (i * 1).baddbmm_(a, b, beta=2, alpha=-1),
                        [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "addmv_inplace": (lambda i, m, v: (i * 1).addmv_(m, v, alpha=3), [(3,), (3, 4), (4,)]),
    "addr_inplace": (lambda i, x, y: (i * 1).addr_(x, y, beta=0.5), [(3, 4), (3,), (4,)]),
    "addbmm_inplace": (lambda i, a, b: (i * 1).addbmm_(a, b), [(2, 5), (3, 2, 4), (3, 4, 5)]),
    "addmm_inplace": (lambda i, x, y: (i * 1).addmm_(x, y, beta=0), [(3, 5), (3, 4), (4, 5)]),
}


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("name", list(GRADS))
def test_gradcheck(name):
    fn, shapes = GRADS[name]
    inputs = [t(randn(*s, seed=k), grad=True) for k, s in enumerate(shapes)]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_beta_zero_ignores_nan_and_inf_and_gives_a_zero_gradient():
    bad = np.array([np.nan, np.inf, -np.inf])
    cases = [
        (lambda i, a, b: ember.baddbmm(i, a, b, beta=0), np.resize(bad, (2, 3, 3)),
         randn(2, 3, 4), randn(2, 4, 3)),
        (lambda i, a, b: ember.addbmm(i, a, b, beta=0), np.resize(bad, (3, 3)),
         randn(2, 3, 4), randn(2, 4, 3)),
        (lambda i, a, b: ember.addmv(i, a, b, beta=0), bad, randn(3, 4), randn(4)),
        (lambda i, a, b: ember.addr(i, a, b, beta=0), np.resize(bad, (3, 4)), randn(3),
         randn(4)),
        (lambda i, a, b: ember.addmm(i, a, b, beta=0), bad, randn(2, 4), randn(4, 3)),
    ]
    for fn, i, a, b in cases:
        inputs = [t(i, grad=True), t(a, grad=True), t(b, grad=True)]
        out = fn(*inputs)
        with ember.no_grad():
            expected = fn(t(np.zeros_like(i)), t(a), t(b))
        assert np.isfinite(out.detach().numpy()).all()
        np.testing.assert_array_equal(out.detach().numpy(), expected.numpy())
        out.sum().backward()
        np.testing.assert_array_equal(inputs[0].grad.numpy(), np.zeros_like(i))
        assert np.isfinite(inputs[1].grad.numpy()).all()


def test_beta_zero_without_gradient_reads_nothing_of_input():
    junk = t(np.full((2, 3, 3), np.nan))
    a, b = t(randn(2, 3, 4)), t(randn(2, 4, 3))
    out = ember.baddbmm(junk, a, b, beta=0, alpha=0.5)
    np.testing.assert_allclose(out.numpy(), 0.5 * (a.numpy() @ b.numpy()))
    assert not out.requires_grad


def test_forward_mode_ad():
    i, a, b = t(randn(3, 1)), t(randn(2, 3, 4, seed=1)), t(randn(2, 4, 5, seed=2))
    ti, ta, tb = t(randn(3, 1, seed=3)), t(randn(2, 3, 4, seed=4)), t(randn(2, 4, 5, seed=5))
    _, tangent = ember.func.jvp(lambda i, a, b: ember.baddbmm(i, a, b, beta=2, alpha=3),
                                (i, a, b), (ti, ta, tb))
    expected = 2 * ti.numpy() + 3 * (ta.numpy() @ b.numpy() + a.numpy() @ tb.numpy())
    np.testing.assert_allclose(tangent.numpy(), expected)
    c, tc = t(randn(3, 4, 2, seed=6)), t(randn(3, 4, 2, seed=7))
    _, tangent = ember.func.jvp(lambda x, y: ember.tensordot(x, y, ([1, 2], [0, 1])),
                                (a, c), (ta, tc))
    dims = ([1, 2], [0, 1])
    expected = (np.tensordot(ta.numpy(), c.numpy(), dims)
                + np.tensordot(a.numpy(), tc.numpy(), dims))
    np.testing.assert_allclose(tangent.numpy(), expected)


def test_vmap():
    i, a, b = randn(4, 5), randn(4, 2, 3, 4, seed=1), randn(4, 2, 4, 5, seed=2)
    got = ember.func.vmap(lambda i, a, b: ember.baddbmm(i, a, b, alpha=2))(t(i), t(a), t(b))
    np.testing.assert_allclose(got.numpy(), i[:, None, None, :] + 2 * (a @ b))


# ---- integer tensors ------------------------------------------------------------------------
def test_integer_tensors_truncate_beta_and_alpha():
    rng = np.random.default_rng(7)
    i, a, b = rng.integers(-5, 6, (2, 3)), rng.integers(-5, 6, (2, 4)), rng.integers(-5, 6, (4, 3))
    got = ember.addmm(t(i), t(a), t(b), beta=1.9, alpha=-2.5)
    assert got.dtype is ember.int64
    np.testing.assert_array_equal(got.numpy(), 1 * i + -2 * (a @ b))
    v = rng.integers(-5, 6, 4)
    got = ember.addmv(t(i[:, 0]), t(a), t(v), beta=0.5, alpha=3.7)
    np.testing.assert_array_equal(got.numpy(), 3 * (a @ v))
    got = ember.baddbmm(t(i), t(a[None]), t(b[None]), beta=2.2)
    np.testing.assert_array_equal(got.numpy(), (2 * i + a @ b)[None])


def test_addr_refuses_float_scalars_for_integers():
    x = ember.ones(3, dtype=ember.int64)
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not "
                                           "be a floating point number."):
        ember.addr(ember.ones(3, 3, dtype=ember.int64), x, x, alpha=0.5)
    with pytest.raises(RuntimeError, match="Boolean beta only supported for Boolean results."):
        ember.addr(ember.ones(3, 3), ember.ones(3), ember.ones(3), beta=True)


# ---- in-place forms -------------------------------------------------------------------------
def test_inplace_forms_write_into_self():
    x = t(randn(2, 3, 5))
    version = x._version
    a, b = t(randn(2, 3, 4, seed=1)), t(randn(2, 4, 5, seed=2))
    expected = ember.baddbmm(x, a, b, beta=2, alpha=0.5)
    assert x.baddbmm_(a, b, beta=2, alpha=0.5) is x
    assert x._version > version
    assert ember.equal(x, expected)


def test_inplace_on_a_view_reaches_the_base():
    base = t(randn(4, 3), grad=True)
    work = base * 1
    m, v = t(randn(3, 5, seed=1), grad=True), t(randn(5, seed=2))
    work[1].addmv_(m, v, beta=2)
    work.sum().backward()
    expected = np.ones((4, 3))
    expected[1] = 2
    np.testing.assert_allclose(base.grad.numpy(), expected)
    np.testing.assert_allclose(m.grad.numpy(), np.outer(np.ones(3), v.numpy()))


def test_inplace_on_a_leaf_requiring_grad_fails():
    x = t(randn(3, 4), grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.addr_(ember.ones(3, dtype=ember.float64), ember.ones(4, dtype=ember.float64))


@pytest.mark.parametrize("call,message", [
    (lambda: ember.ones(1, 3, 5).baddbmm_(ember.ones(2, 3, 4), ember.ones(2, 4, 5)),
     "Bad in-place call: input tensor size [1, 3, 5] and output tensor size [2, 3, 5] should "
     "match"),
    (lambda: ember.ones(1).addmv_(ember.ones(3, 4), ember.ones(4)),
     "Bad in-place call: input tensor size [1] and output tensor size [3] should match"),
    (lambda: ember.ones(3).addmm_(ember.ones(2, 4), ember.ones(4, 3)),
     "Bad in-place call: input tensor size [3] and output tensor size [2, 3] should match"),
    (lambda: ember.ones(1, 4).addr_(ember.ones(3), ember.ones(4)),
     "size mismatch, input: [1, 4], v1: [3], v2: [4]"),
    (lambda: ember.ones(4).addr_(ember.ones(3), ember.ones(4)),
     "2D tensor expected, got 1D tensor for input"),
    (lambda: ember.ones(3, 4, dtype=ember.int64).addr_(ember.ones(3), ember.ones(4)),
     "result type Float can't be cast to the desired output type Long"),
])
def test_inplace_errors(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert str(info.value) == message


# ---- out= -----------------------------------------------------------------------------------
def test_out():
    out = ember.empty(2, 3, 5)
    i, a, b = ember.ones(5), ember.ones(2, 3, 4), ember.ones(2, 4, 5)
    assert ember.baddbmm(i, a, b, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3, 5), 5.0))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got "
                                           "double instead"):
        ember.baddbmm(i, a, b, out=ember.empty(2, 3, 5, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="tensordot: Expected the output tensor to have dtype "
                                           "Float, but got an output tensor with dtype Double"):
        ember.tensordot(a, b[0], 1, out=ember.empty(2, 3, 5, dtype=ember.float64))
    resized = ember.empty(7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyTorch's addbmm resizes out without its warning
        ember.addbmm(i, a, b, out=resized)
    assert resized.shape == (3, 5)
    with pytest.warns(UserWarning, match="was resized"):
        ember.addmv(ember.ones(3), ember.ones(3, 4), ember.ones(4), out=ember.empty(7))


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("call,error,message", [
    (lambda: ember.baddbmm(ember.ones(4), ember.ones(2, 3, 4), ember.ones(2, 4, 5)),
     RuntimeError, "The expanded size of the tensor (5) must match the existing size (4) at "
     "non-singleton dimension 2.  Target sizes: [2, 3, 5].  Tensor sizes: [4]"),
    (lambda: ember.baddbmm(ember.ones(2, 3, 5), ember.ones(2, 3, 4), ember.ones(3, 4, 5)),
     RuntimeError, "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but "
     "got: [3, 4]."),
    (lambda: ember.baddbmm(ember.ones(2, 3, 5, dtype=ember.float64), ember.ones(2, 3, 4),
                           ember.ones(2, 4, 5)),
     RuntimeError, "Input dtypes must be the same, got: input double, batch1: float, batch2: "
     "float"),
    (lambda: ember.baddbmm(ember.ones(2, 3, 5), ember.ones(2, 3, 4),
                           ember.ones(2, 4, 5, dtype=ember.int64)),
     RuntimeError, "expected scalar type Float but found Long"),
    (lambda: ember.baddbmm(ember.ones(2, 3, 5), ember.ones(2, 3, 4), ember.ones(4, 5)),
     IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: ember.addbmm(ember.ones(3, 5), ember.ones(2, 3, 4), ember.ones(3, 4, 5)),
     RuntimeError, "batch1 and batch2 must have same number of batches, got 2 and 3"),
    (lambda: ember.addbmm(ember.ones(3, 5), ember.ones(2, 3, 4), ember.ones(2, 3, 5)),
     RuntimeError, "Incompatible matrix sizes for bmm (3x4 and 3x5)"),
    (lambda: ember.addmv(ember.ones(3), ember.ones(3, 4), ember.ones(5)),
     RuntimeError, "size mismatch, got input (3), mat (3x4), vec (5)"),
    (lambda: ember.addmv(ember.ones(1, 3), ember.ones(3, 4), ember.ones(4)),
     RuntimeError, "vector + matrix @ vector expected, got 2, 2, 1"),
    (lambda: ember.addmv(ember.ones(3), ember.ones(3, 4), ember.ones(4, dtype=ember.float64)),
     RuntimeError, "addmv input tensors must have the same dtype, but got Float, Float, and "
     "Double"),
    (lambda: ember.addr(ember.ones(3, 4), ember.ones(3, 1), ember.ones(4)),
     RuntimeError, "addr: Expected 1-D argument vec1, but got 2-D"),
    (lambda: ember.addmm(ember.ones(2, 3), ember.ones(4), ember.ones(4, 3)),
     RuntimeError, "mat1 must be a matrix, got 1-D tensor"),
    (lambda: ember.addmm(ember.ones(2, 3, dtype=ember.bool), ember.ones(2, 4, dtype=ember.bool),
                         ember.ones(4, 3, dtype=ember.bool)),
     NotImplementedError, "\"addmm_impl_cpu_\" not implemented for 'Bool'"),
    (lambda: ember.chain_matmul(),
     RuntimeError, "chain_matmul(): Expected one or more matrices"),
    (lambda: ember.chain_matmul(ember.ones(3), ember.ones(3, 4)),
     RuntimeError, "Tensor dimension is 1, expected 2 instead."),
    (lambda: ember.chain_matmul(ember.ones(2, 3), ember.ones(3, 4, dtype=ember.float64)),
     RuntimeError, "multi_dot(): all tensors must have be the same dtype but tensor 0 is float "
     "and tensor 1 double"),
    (lambda: ember.tensordot(ember.ones(2, 3), ember.ones(3, 5), dims=-1),
     RuntimeError, "tensordot expects dims >= 0, but got dims=-1"),
    (lambda: ember.tensordot(ember.ones(2, 3, 4), ember.ones(3, 5, 5)),
     RuntimeError, "contracted dimensions need to match, but first has size 4 in dim -1 and "
     "second has size 5 in dim 1"),
    (lambda: ember.tensordot(ember.ones(3, 3, 5), ember.ones(3, 3, 2), dims=([0, 0], [0, 1])),
     RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda: ember.tensordot(ember.ones(3, 4), ember.ones(4, 3), dims=([1], 0)),
     TypeError, "tensordot(): argument 'dims_other' (position 4) must be tuple of ints, not int"),
    (lambda: ember.tensordot(ember.ones(2, 3), ember.ones(3, 5, dtype=ember.float64), dims=1),
     RuntimeError, "both inputs should have same dtype"),
    (lambda: ember.inner(ember.ones(2, 3), ember.ones(5, 4)),
     RuntimeError, "inner() the last dimension must match on both input tensors but got shapes "
     "[2, 3] and [5, 4]"),
    (lambda: ember.kron(ember.ones(2), 2.0),
     TypeError, "kron(): argument 'other' (position 2) must be Tensor, not float"),
])
def test_errors(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as info:
            call()
    assert str(info.value) == message


def test_linalg_multi_dot_checks_dtypes():
    with pytest.raises(RuntimeError, match="tensor 0 is float and tensor 2 long int"):
        ember.linalg.multi_dot([ember.ones(2, 3), ember.ones(3, 4),
                                ember.ones(4, dtype=ember.int64)])


# ---- declarations ---------------------------------------------------------------------------
FUNCTIONS = ["baddbmm", "addbmm", "addmv", "addr", "addmm", "chain_matmul", "tensordot",
             "inner", "kron"]
METHODS = ["baddbmm", "baddbmm_", "addbmm", "addbmm_", "addmv", "addmv_", "addr", "addr_",
           "addmm", "addmm_", "inner", "kron"]


def test_listed_as_public_and_overridable():
    overridable = get_overridable_functions()
    for name in FUNCTIONS:
        assert name in ember._functions.__all__
        assert getattr(ember, name) in overridable[ember], name
    tensor_names = {getattr(fn, "__name__", None) for fn in overridable[ember.Tensor]}
    for name in METHODS:
        assert name in tensor_names, name


def test_stub_lists_the_methods():
    from pathlib import Path
    stub = (Path(ember.__file__).parent / "_tensor.pyi").read_text()
    for name in METHODS:
        assert f"    def {name}(self, " in stub, name


def test_torch_function_sees_the_public_functions():
    seen = []

    class Logged(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = ember.ones(2, 3).as_subclass(Logged)
    out = ember.kron(x, ember.ones(2, 2))
    assert isinstance(out, Logged)
    assert seen[0] is ember.kron
    seen.clear()
    x.addr_(ember.ones(2), ember.ones(3))
    assert seen[0] is ember.Tensor.addr_
    seen.clear()
    ember.tensordot(x, ember.ones(3, 4), 1)
    assert seen[0] is ember.tensordot
