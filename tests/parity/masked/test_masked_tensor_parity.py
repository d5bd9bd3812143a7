"""ember.masked.MaskedTensor against torch.masked.MaskedTensor: construction and its
warnings, repr, elementwise ops, reductions, softmax, where, views, conversions, gradients
reaching a leaf's .grad, and the errors. Results compare masks exactly and data where the
mask is True (torch leaves masked-out data unspecified)."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of MaskedTensors")

DTYPES = [np.float32, np.float64]
TOL = {np.float32: 1e-5, np.float64: 1e-11}


def sample(dtype=np.float32, seed=0, shape=(3, 4)):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    mask = rng.random(shape) < 0.6
    if len(shape) > 1:
        mask[1, :] = False  # a fully masked-out row
        mask[(0,) * len(shape)] = True
    return x, mask


def pair(x, mask, requires_grad=False):
    return (ember.masked.masked_tensor(ember.tensor(x), ember.tensor(mask), requires_grad),
            torch.masked.masked_tensor(torch.tensor(x), torch.tensor(mask), requires_grad))


def host(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def same(e, t, tol=1e-6):
    if not torch.masked.is_masked_tensor(t):
        assert not ember.masked.is_masked_tensor(e)
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(host(e), host(t), rtol=tol, atol=tol, equal_nan=True)
        return
    assert ember.masked.is_masked_tensor(e), type(e)
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    em, tm = e.get_mask(), t.get_mask()
    assert em.tolist() == tm.tolist()
    keep = np.asarray(tm.tolist(), dtype=bool)
    np.testing.assert_allclose(host(e.get_data())[keep], host(t.get_data())[keep],
                               rtol=tol, atol=tol, equal_nan=True)


def test_construction_warnings_and_metadata():
    x, mask = sample()
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.masked.masked_tensor(lib.tensor(x), lib.tensor(mask))
        assert [(w.category, str(w.message)) for w in caught] == [
            (UserWarning, "The PyTorch API of MaskedTensors is in prototype stage and will "
             "change in the near future. Please open a Github issue for features requests "
             "and see our documentation on the torch.masked module for further information "
             "about the project.")]
    messages = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.masked.MaskedTensor(lib.tensor(x, requires_grad=True), lib.tensor(mask))
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1] and len(messages[0]) == 2
    e, t = pair(x, mask)
    assert isinstance(e, ember.Tensor) and isinstance(e, ember.masked.MaskedTensor)
    assert (e.is_sparse, e.requires_grad, e.is_leaf, e.grad, e.dim(), e.numel(), len(e)) == \
        (t.is_sparse, t.requires_grad, t.is_leaf, t.grad, t.dim(), t.numel(), len(t))
    assert tuple(e.shape) == tuple(t.shape) and e.size(1) == t.size(1)
    assert str(e.dtype) == "ember.float32" and str(e.layout) == "strided"
    same(e.get_data(), t.get_data())
    assert e.get_mask().tolist() == t.get_mask().tolist()
    assert not ember.masked.is_masked_tensor(ember.tensor(x))


@pytest.mark.parametrize("shape", [(3, 4), (5,), (2, 2, 3), ()])
@pytest.mark.parametrize("kind", ["float", "int", "bool"])
def test_repr(shape, kind):
    x, mask = sample(shape=shape) if shape else (np.float32(1.5), np.bool_(True))
    x = {"float": x, "int": (np.asarray(x) * 10).astype(np.int64),
         "bool": np.asarray(x) > 0}[kind]
    for m in (np.asarray(mask), ~np.asarray(mask)):
        e, t = pair(np.asarray(x), m)
        assert repr(e) == repr(t)
        assert str(e) == str(t)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary(dtype):
    x, mask = sample(dtype)
    e, t = pair(x, mask)
    for name in ("exp", "sin", "abs", "neg", "tanh", "sigmoid", "floor", "square", "sign",
                 "isnan", "reciprocal"):
        same(getattr(e, name)(), getattr(t, name)(), TOL[dtype])
        same(getattr(ember, name)(e), getattr(torch, name)(t), TOL[dtype])
    same(e.abs().sqrt(), t.abs().sqrt(), TOL[dtype])
    same(e.clamp(-0.5, 0.5), t.clamp(-0.5, 0.5), TOL[dtype])
    same(e.pow(2), t.pow(2), TOL[dtype])
    same(-e, -t, TOL[dtype])
    same(e ** 2, t ** 2, TOL[dtype])
    same(abs(e), abs(t), TOL[dtype])
    e2, t2 = pair(x, mask)
    assert e2.exp_() is e2 and t2.exp_() is t2
    same(e2, t2, TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_binary(dtype):
    x, mask = sample(dtype)
    y, _ = sample(dtype, seed=4)
    e, t = pair(x, mask)
    f, u = pair(y, mask)
    for op in ("add", "sub", "mul", "div", "maximum", "minimum", "atan2", "eq", "lt", "ge"):
        same(getattr(e, op)(f), getattr(t, op)(u), TOL[dtype])
        same(getattr(ember, op)(e, f), getattr(torch, op)(t, u), TOL[dtype])
    same(e + f, t + u, TOL[dtype])
    same(e * 2, t * 2, TOL[dtype])
    same(2 + e, 2 + t, TOL[dtype])
    same(e / 3, t / 3, TOL[dtype])
    same(e > 0, t > 0)
    same(e < f, t < u)
    # a plain tensor combines with a MaskedTensor, keeping its mask
    same(e + ember.tensor(y), t + torch.tensor(y), TOL[dtype])
    same(ember.tensor(y) * e, torch.tensor(y) * t, TOL[dtype])
    e.add_(f)
    t.add_(u)
    same(e, t, TOL[dtype])


def errors_of(call_e, call_t, exact=True):
    with pytest.raises(Exception) as te:
        call_t()
    with pytest.raises(type(te.value)) as ee:
        call_e()
    if exact:
        assert str(ee.value) == str(te.value)
    return ee.value, te.value


def test_binary_errors():
    x, mask = sample()
    e, t = pair(x, mask)
    f, u = pair(x, ~mask)
    errors_of(lambda: e + f, lambda: t + u)
    errors_of(lambda: e.add(e, alpha=2), lambda: t.add(t, alpha=2))
    errors_of(lambda: 2 - e, lambda: 2 - t)
    with pytest.warns(UserWarning, match="is not implemented in __torch_dispatch__"):
        errors_of(lambda: e.cumsum(1), lambda: t.cumsum(1), exact=False)


REDUCTIONS = ["sum", "mean", "amax", "amin", "argmax", "argmin", "prod", "norm", "var", "std"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions(dtype, name):
    x, mask = sample(dtype)
    e, t = pair(x, mask)
    if name == "norm":  # torch's norm passes p on, which torch's MaskedTensor refuses
        errors_of(lambda: ember.norm(e), lambda: torch.norm(t))
        errors_of(lambda: e.norm(), lambda: t.norm())
    else:
        same(getattr(e, name)(), getattr(t, name)(), TOL[dtype])
        same(getattr(ember, name)(e), getattr(torch, name)(t), TOL[dtype])
    if name == "norm":  # torch's MaskedTensor refuses norm with any argument
        errors_of(lambda: e.norm(1), lambda: t.norm(1))
        return
    for dim, keepdim in ((0, False), (1, True), (-1, False)):
        same(getattr(e, name)(dim, keepdim), getattr(t, name)(dim, keepdim), TOL[dtype])
        same(getattr(e, name)(dim=dim), getattr(t, name)(dim=dim), TOL[dtype])
    if name not in ("argmax", "argmin", "prod"):
        same(getattr(e, name)((0, 1), keepdim=True), getattr(t, name)((0, 1), keepdim=True),
             TOL[dtype])
    else:
        errors_of(lambda: getattr(e, name)((0, 1)), lambda: getattr(t, name)((0, 1)),
                  exact=False)
    # a fully masked-out MaskedTensor reduces to a masked-out 0-d one
    e0, t0 = pair(x, np.zeros_like(mask))
    same(getattr(e0, name)(), getattr(t0, name)())
    assert repr(e0.sum()) == repr(t0.sum())


def test_all_any_and_reduction_errors():
    x, mask = sample()
    e, t = pair(x > 0, mask)
    same(e.all(), t.all())
    same(e.all(1), t.all(1))
    same(e.all(0, keepdim=True), t.all(0, keepdim=True))
    assert repr(e.all(1)) == repr(t.all(1))
    with pytest.warns(UserWarning, match="any is not implemented"):
        errors_of(lambda: e.any(), lambda: t.any(), exact=False)
    f, u = pair(x, mask)
    errors_of(lambda: f.norm(p=1), lambda: u.norm(p=1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_where_to_tensor(dtype):
    x, mask = sample(dtype)
    e, t = pair(x, mask)
    for dim in (0, 1, -1):
        same(e.softmax(dim), t.softmax(dim), TOL[dtype])
        same(ember.softmax(e, dim), torch.softmax(t, dim), TOL[dtype])
    cond = x > 0
    same(ember.where(ember.tensor(cond), e, ember.tensor(x) * 2),
         torch.where(torch.tensor(cond), t, torch.tensor(x) * 2), TOL[dtype])
    f, u = pair(x * 3, ~mask)
    same(ember.where(ember.tensor(cond), e, f), torch.where(torch.tensor(cond), t, u),
         TOL[dtype])
    for value in (0.0, -1.5, math.inf):
        same(e.to_tensor(value), t.to_tensor(value))


def test_views_and_conversions():
    x, mask = sample(np.float32, shape=(3, 4))
    e, t = pair(x, mask)
    for fn in (lambda a: a[0], lambda a: a[:, 1:3], lambda a: a[1:, ::2], lambda a: a[0, 1],
               lambda a: a.view(4, 3), lambda a: a.view(-1), lambda a: a.transpose(0, 1),
               lambda a: a.t(), lambda a: a.reshape(2, 6), lambda a: a.unsqueeze(0),
               lambda a: a.flatten(), lambda a: a.expand(2, 3, 4), lambda a: a.select(1, 2),
               lambda a: a.clone(), lambda a: a.detach(), lambda a: a.contiguous(),
               lambda a: a.double(), lambda a: a.float(), lambda a: a[[0, 2]]):
        same(fn(e), fn(t))
    for lib, a, out in ((ember, e, []), (torch, t, [])):
        out.extend(lib.stack([a, a]) for _ in range(1))
    same(ember.stack([e, e]), torch.stack([t, t]))
    same(ember.cat([e, e], 1), torch.cat([t, t], 1))
    for pe, pt in zip(e.split(2), t.split(2)):
        same(pe, pt)
    same(e.to(ember.float64), t.to(torch.float64))
    assert e[0, 0].item() == t[0, 0].item()
    errors_of(lambda: e.T, lambda: t.T, exact=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_reach_the_leaf(dtype):
    x, mask = sample(dtype)
    y, _ = sample(dtype, seed=7)
    programs = [
        lambda a, lib: a.sum(),
        lambda a, lib: (a * a).exp().mean(1).sum(),
        lambda a, lib: a.softmax(1).sum(0).sum() if False else (a.softmax(1) * 3).sum(),
        lambda a, lib: (a.amax(1) + a.amin(1)).sum(),
        lambda a, lib: a[0].prod(),
        lambda a, lib: a.transpose(0, 1).sin().sum(),
        lambda a, lib: a.var(1).sum(),
        lambda a, lib: (a * lib.tensor(y)).sum(),
    ]
    for program in programs:
        e, t = pair(x, mask, requires_grad=True)
        out_e, out_t = program(e, ember), program(t, torch)
        same(out_e, out_t, TOL[dtype])
        out_e.backward()
        out_t.backward()
        assert ember.masked.is_masked_tensor(e.grad)
        same_grad(e.grad, t.grad, mask, 1e-4 if dtype == np.float32 else 1e-10)
        assert e.grad is e.grad
    e, t = pair(x, mask, requires_grad=True)
    out_e, out_t = e.sum(1), t.sum(1)
    errors_of(lambda: out_e.backward(), lambda: out_t.backward())
    g = np.random.default_rng(0).standard_normal(3).astype(dtype)
    gm = np.asarray([True, False, True])
    out_e.backward(ember.masked.masked_tensor(ember.tensor(g), ember.tensor(gm)))
    out_t.backward(torch.masked.masked_tensor(torch.tensor(g), torch.tensor(gm)))
    same_grad(e.grad, t.grad, mask, TOL[dtype])


def same_grad(e, t, leaf_mask, tol):
    """ember's gradient carries the leaf's mask (0 where no gradient came); torch's mask may
    also drop the elements a view did not reach: values agree where torch's mask holds."""
    assert e.get_mask().tolist() == leaf_mask.tolist()
    keep = np.asarray(t.get_mask().tolist(), dtype=bool)
    assert not (keep & ~leaf_mask).any()
    np.testing.assert_allclose(host(e.get_data())[keep], host(t.get_data())[keep],
                               rtol=tol, atol=tol)
    np.testing.assert_array_equal(host(e.get_data())[leaf_mask & ~keep], 0)


def test_as_masked_tensor_keeps_history():
    x, mask = sample(np.float64)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    me = ember.masked.as_masked_tensor(xe * 2, ember.tensor(mask))
    mt = torch.masked.as_masked_tensor(xt * 2, torch.tensor(mask))
    assert me.requires_grad and mt.requires_grad
    me.sum().backward()
    mt.sum().backward()
    # torch's x.grad is a MaskedTensor here; ember's is the plain tensor with 0 masked out
    np.testing.assert_allclose(host(xe.grad), host(mt.grad if False else xt.grad.to_tensor(0)))


def test_constructor_errors():
    x, mask = sample()
    cases = [
        lambda lib: lib.masked.masked_tensor(x, lib.tensor(mask)),
        lambda lib: lib.masked.masked_tensor(lib.tensor(x), mask),
        lambda lib: lib.masked.masked_tensor(lib.tensor(x), lib.tensor(mask).int()),
        lambda lib: lib.masked.masked_tensor(lib.tensor(x), lib.tensor(mask)[0]),
        lambda lib: lib.masked.masked_tensor(lib.tensor(x), lib.tensor(mask).reshape(4, 3)),
        lambda lib: lib.masked.masked_tensor(lib.tensor(x).to(lib.complex64),
                                             lib.tensor(mask)),
        lambda lib: lib.masked.masked_tensor(lib.tensor(x).to(lib.uint8), lib.tensor(mask)),
    ]
    for case in cases:
        ee, te = errors_of(lambda: case(ember), lambda: case(torch), exact=False)
        assert str(ee).replace("ember.", "torch.") == str(te)


def outcome(call):
    """What a call gives, as text: its repr, or its exception's type and message (ember's
    names spelled as torch's)."""
    try:
        result = call()
    except Exception as error:  # noqa: BLE001  (the comparison is of whatever is raised)
        text = f"{type(error).__name__}: {error}"
    else:
        text = result if isinstance(result, str) else repr(result)
    return text.replace("ember.masked.MaskedTensor", "torch.masked.maskedtensor.core."
                        "MaskedTensor").replace("ember.", "torch.")


CALLS = {
    "masked.sum(mt)": lambda lib, mt: lib.masked.sum(mt),
    "masked.mean(mt)": lambda lib, mt: lib.masked.mean(mt),
    "masked.mean(mt, 1)": lambda lib, mt: lib.masked.mean(mt, 1),
    "masked.amax(mt, 1)": lambda lib, mt: lib.masked.amax(mt, 1),
    "masked.softmax(mt, 1)": lambda lib, mt: lib.masked.softmax(mt, 1),
    "masked.median(mt, 1)": lambda lib, mt: lib.masked.median(mt, 1),
    "format": lambda lib, mt: f"{mt}",
    "format 0-d": lambda lib, mt: f"{mt[0, 0]}",
    "format spec": lambda lib, mt: f"{mt:>4}",
    "bool": lambda lib, mt: bool(mt[0, 0]),
    "float": lambda lib, mt: float(mt[0, 2]),
    "tolist": lambda lib, mt: mt.tolist(),
    "numpy": lambda lib, mt: mt.numpy(),
    "item": lambda lib, mt: mt.sum().item(),
    "to_dense": lambda lib, mt: mt.to_dense(),
    "squeeze": lambda lib, mt: mt.squeeze(),
    "permute": lambda lib, mt: mt.permute(1, 0),
    "max": lambda lib, mt: mt.max(),
    "log_softmax": lambda lib, mt: mt.log_softmax(1),
    "F.softmax dtype": lambda lib, mt: lib.nn.functional.softmax(mt, 0, dtype=lib.float64),
    "F.softmin": lambda lib, mt: lib.nn.functional.softmin(mt, 1),
    "mean dtype": lambda lib, mt: mt.mean(dim=1, dtype=lib.float64),
    "var unbiased": lambda lib, mt: mt.var(1, True),
    "std keepdim": lambda lib, mt: mt.std(dim=1, keepdim=True),
    "sum dim=None": lambda lib, mt: mt.sum(dim=None),
    "int sum": lambda lib, mt: lib.masked.masked_tensor(mt.get_data().int(),
                                                        mt.get_mask()).sum(1),
    "int mean": lambda lib, mt: lib.masked.masked_tensor(mt.get_data().int(),
                                                         mt.get_mask()).mean(),
    "half": lambda lib, mt: mt.half(),
    "unary kwargs tensor": lambda lib, mt: mt.clamp(lib.zeros(2, 3)),
}


@pytest.mark.filterwarnings("ignore:.*is not implemented in __torch_dispatch__")
@pytest.mark.parametrize("name", list(CALLS))
def test_calls_give_what_torch_gives(name):
    results = []
    for lib in (ember, torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        mt = lib.masked.masked_tensor(x, lib.tensor([[True, False, True], [False] * 3]))
        results.append(outcome(lambda: CALLS[name](lib, mt)))
    assert results[0] == results[1]
