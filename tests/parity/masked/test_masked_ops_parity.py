"""ember.masked's reductions and normalizations against torch.masked: values and gradients
on random inputs and masks (with fully masked-out slices), float32 and float64, every dim
form, dtype results and the errors."""
import math

import numpy as np
import pytest
import torch

import ember

DTYPES = [np.float32, np.float64]
TOL = {np.float32: 1e-5, np.float64: 1e-11}
SHAPE = (4, 5)


def sample(dtype, seed=0, shape=SHAPE):
    """Random data and a random mask whose row 1 and column 2 are all False."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    mask = rng.random(shape) < 0.6
    mask[1, :] = False
    mask[:, 2] = False
    return x, mask


def both(x, mask, requires_grad=True):
    e = ember.tensor(x, requires_grad=requires_grad)
    t = torch.tensor(x, requires_grad=requires_grad)
    return e, t, ember.tensor(mask), torch.tensor(mask)


def check_same(e, t, tol):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(e.detach().tolist(), dtype=np.float64),
                               np.asarray(t.detach().tolist(), dtype=np.float64),
                               rtol=tol, atol=tol, equal_nan=True)


def run_pair(name, x, mask, args=(), kwargs=None, grad=True, tol=1e-5, seed=1):
    kwargs = kwargs or {}
    e, t, em, tm = both(x, mask, requires_grad=grad)
    out_e = getattr(ember.masked, name)(e, *args, mask=em, **kwargs)
    out_t = getattr(torch.masked, name)(t, *args, mask=tm, **kwargs)
    check_same(out_e, out_t, tol)
    if grad:
        g = np.random.default_rng(seed).standard_normal(tuple(out_t.shape)).astype(x.dtype)
        out_e.backward(ember.tensor(g))
        out_t.backward(torch.tensor(g))
        check_same(e.grad, t.grad, tol)
        # masked-out elements get no gradient (var/std: nan in a fully masked-out slice, as
        # torch's: its mean there is 0/0 and reaches them through input - mean)
        if name not in ("var", "std"):
            assert not np.asarray(e.grad.tolist())[~np.broadcast_to(mask, x.shape)].any()
    return out_e, out_t


REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "norm", "var", "std"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), (-1, False),
                                         ((0, 1), True), ((1, 0), False)])
def test_reductions(name, dtype, dim, keepdim):
    x, mask = sample(dtype)
    if name == "prod":
        x = (x * 0.5 + np.sign(x)).astype(dtype)  # away from zero: a stable gradient
    run_pair(name, x, mask, (), {"dim": dim, "keepdim": keepdim}, tol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_without_mask_and_broadcast_mask(dtype):
    x, mask = sample(dtype)
    for name in REDUCTIONS:
        e, t, _, _ = both(x, mask, requires_grad=False)
        check_same(getattr(ember.masked, name)(e, dim=1), getattr(torch.masked, name)(t, dim=1),
                   TOL[dtype])
        # a row mask broadcast over the rows; a non-bool mask is taken as bool
        row = mask[0]
        check_same(getattr(ember.masked, name)(e, dim=1, mask=ember.tensor(row)),
                   getattr(torch.masked, name)(t, dim=1, mask=torch.tensor(row)), TOL[dtype])
    e, t, _, _ = both(x, mask, requires_grad=False)
    check_same(ember.masked.sum(e, 0, mask=ember.tensor(mask[0].astype(np.int64))),
               torch.masked.sum(t, 0, mask=torch.tensor(mask[0].astype(np.int64))),
               TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_normalizations_and_cumulative(name, dtype, dim):
    x, mask = sample(dtype)
    run_pair(name, x, mask, (dim,), tol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("dim", [0, 1])
def test_norm_orders_and_normalize(dtype, ord, dim):
    x, mask = sample(dtype)
    run_pair("norm", x, mask, (ord, dim), tol=TOL[dtype])
    run_pair("normalize", x, mask, (ord, dim), tol=TOL[dtype])
    run_pair("norm", x, mask, (-math.inf, dim), grad=False, tol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs", [{}, {"unbiased": False}, {"correction": 0},
                                    {"correction": 2}, {"unbiased": True, "keepdim": True}])
def test_var_std_corrections(dtype, kwargs):
    x, mask = sample(dtype)
    for name in ("var", "std"):
        run_pair(name, x, mask, (1,), dict(kwargs), tol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_median_argmax_argmin_values(dtype):
    x, mask = sample(dtype)
    for dim in (0, 1, -1):
        run_pair("median", x, mask, (dim,), tol=TOL[dtype])
        for name in ("argmax", "argmin"):
            run_pair(name, x, mask, (dim,), {"keepdim": dim == 1}, grad=False)
    for name in ("argmax", "argmin"):
        run_pair(name, x, mask, (), grad=False)
    e, t, em, tm = both(x, mask, requires_grad=False)
    check_same(ember.masked.argmax(e, 1, dtype=ember.int64, mask=em),
               torch.masked.argmax(t, 1, dtype=torch.int64, mask=tm), 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_logaddexp(dtype):
    x, mask = sample(dtype)
    y, other = sample(dtype, seed=5)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ey, ty = ember.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    out_e = ember.masked.logaddexp(ex, ey, input_mask=ember.tensor(mask),
                                   other_mask=ember.tensor(other))
    out_t = torch.masked.logaddexp(tx, ty, input_mask=torch.tensor(mask),
                                   other_mask=torch.tensor(other))
    check_same(out_e, out_t, TOL[dtype])
    g = np.random.default_rng(3).standard_normal(x.shape).astype(dtype)
    out_e.backward(ember.tensor(g))
    out_t.backward(torch.tensor(g))
    check_same(ex.grad, tx.grad, TOL[dtype])
    check_same(ey.grad, ty.grad, TOL[dtype])
    check_same(ember.masked.logaddexp(ex, ey), torch.masked.logaddexp(tx, ty), TOL[dtype])


@pytest.mark.parametrize("np_dtype,name", [(np.int64, "sum"), (np.int32, "sum"),
                                           (np.int16, "prod"), (np.int32, "amax"),
                                           (np.int64, "amin"), (np.bool_, "sum"),
                                           (np.int32, "cumsum"), (np.int64, "var"),
                                           (np.int32, "std"), (np.int64, "argmax")])
def test_integer_inputs(np_dtype, name):
    rng = np.random.default_rng(2)
    x = rng.integers(-3, 4, size=SHAPE).astype(np_dtype)
    _, mask = sample(np.float32)
    out_e = getattr(ember.masked, name)(ember.tensor(x), dim=1, mask=ember.tensor(mask))
    out_t = getattr(torch.masked, name)(torch.tensor(x), dim=1, mask=torch.tensor(mask))
    check_same(out_e, out_t, 1e-6)


def test_zero_dim_and_dtype_argument():
    check_same(ember.masked.sum(ember.tensor(3.0), mask=ember.tensor(False)),
               torch.masked.sum(torch.tensor(3.0), mask=torch.tensor(False)), 0)
    check_same(ember.masked.amax(ember.tensor(3.0), mask=ember.tensor(True)),
               torch.masked.amax(torch.tensor(3.0), mask=torch.tensor(True)), 0)
    x, mask = sample(np.float32)
    e, t, em, tm = both(x, mask, requires_grad=False)
    for name in ("sum", "mean", "amax", "logsumexp", "norm", "var"):
        check_same(getattr(ember.masked, name)(e, dim=1, dtype=ember.float64, mask=em),
                   getattr(torch.masked, name)(t, dim=1, dtype=torch.float64, mask=tm), 1e-6)
    check_same(ember.masked.softmax(e, 1, dtype=ember.float64, mask=em),
               torch.masked.softmax(t, 1, dtype=torch.float64, mask=tm), 1e-6)


def errors_of(call_e, call_t):
    with pytest.raises(Exception) as te:
        call_t()
    with pytest.raises(type(te.value)) as ee:
        call_e()
    assert str(ee.value).replace("ember.", "torch.") == str(te.value)


def test_errors():
    x, mask = sample(np.float32)
    e, t, em, tm = both(x, mask, requires_grad=False)
    errors_of(lambda: ember.masked.sum(e, (1, 1), mask=em),
              lambda: torch.masked.sum(t, (1, 1), mask=tm))
    errors_of(lambda: ember.masked.amax(e, 5, mask=em),
              lambda: torch.masked.amax(t, 5, mask=tm))
    errors_of(lambda: ember.masked.sum(e, 1, mask=em[None]),
              lambda: torch.masked.sum(t, 1, mask=tm[None]))
    errors_of(lambda: ember.masked.mean(e.long(), 1, mask=em),
              lambda: torch.masked.mean(t.long(), 1, mask=tm))
    errors_of(lambda: ember.masked.mean(e, 1, dtype=ember.int32, mask=em),
              lambda: torch.masked.mean(t, 1, dtype=torch.int32, mask=tm))
    errors_of(lambda: ember.masked.median(e.long(), 1, mask=em),
              lambda: torch.masked.median(t.long(), 1, mask=tm))
    errors_of(lambda: ember.masked.var(e, 1, True, correction=1, mask=em),
              lambda: torch.masked.var(t, 1, True, correction=1, mask=tm))
