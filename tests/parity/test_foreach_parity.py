"""ember._foreach_* against torch._foreach_*: every overload form, in-place forms, gradients
through the out-of-place ones, reductions, and the errors of bad lists."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import error_of

SHAPES = [(2, 3), (4,), ()]


def _lists(dtype, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    if positive:
        arrays = [np.abs(a) + 0.5 for a in arrays]
    return arrays


def _both(arrays, grad=False):
    return ([torch.tensor(a, requires_grad=grad) for a in arrays],
            [ember.tensor(a, requires_grad=grad) for a in arrays])


def _close(e_out, t_out, dtype):
    assert type(e_out) is type(t_out) or isinstance(t_out, (list, tuple))
    assert len(e_out) == len(t_out)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    for e, t in zip(e_out, t_out):
        assert str(t.dtype).split(".")[1] == e.dtype.name
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


BINARY = [("_foreach_add", lambda lib: 1.5, {}), ("_foreach_add", lambda lib: [1, 2.5, -1], {}),
          ("_foreach_add", lambda lib: lib.tensor(2.0), {"alpha": 3}),
          ("_foreach_add", "list", {"alpha": 0.5}), ("_foreach_sub", lambda lib: 2, {}),
          ("_foreach_sub", "list", {"alpha": 2}), ("_foreach_mul", lambda lib: 0.9, {}),
          ("_foreach_mul", "list", {}), ("_foreach_mul", lambda lib: lib.tensor(3.0), {}),
          ("_foreach_div", lambda lib: [2, 4, 8], {}), ("_foreach_div", "list", {}),
          ("_foreach_clamp_min", lambda lib: 0.1, {}), ("_foreach_clamp_max", "list", {}),
          ("_foreach_maximum", lambda lib: [0.0, 0.5, -0.5], {}),
          ("_foreach_minimum", "list", {}), ("_foreach_pow", lambda lib: 2, {}),
          ("_foreach_pow", lambda lib: [2, 3, 0.5], {}), ("_foreach_pow", "list", {})]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,other,kwargs", BINARY)
def test_binary_forms(dtype, name, other, kwargs):
    positive = name == "_foreach_pow"
    a = _lists(dtype, 0, positive)
    b = _lists(dtype, 1, positive)
    results = {}
    for lib, (xs, ys) in zip((torch, ember), zip(_both(a, grad=True), _both(b))):
        o = ys if other == "list" else other(lib)
        out = getattr(lib, name)(xs, o, **kwargs)
        sum(r.sum() for r in out).backward()
        plain = [x.detach().clone() for x in xs]
        returned = getattr(lib, name + "_")(plain, o, **kwargs)
        results[lib] = (out, [x.grad for x in xs], plain, returned is plain)
    (t_out, t_grads, t_inplace, t_same), (e_out, e_grads, e_inplace, e_same) = \
        results[torch], results[ember]
    assert isinstance(e_out, tuple) and isinstance(t_out, tuple)
    _close(e_out, t_out, dtype)
    _close(e_grads, t_grads, dtype)
    _close(e_inplace, t_inplace, dtype)
    assert e_same == t_same


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["_foreach_addcmul", "_foreach_addcdiv"])
@pytest.mark.parametrize("scalars", [None, 0.5, [1.0, -2.0, 3.0], "tensor"])
def test_addcmul_addcdiv(dtype, name, scalars):
    a, b, c = _lists(dtype, 0), _lists(dtype, 1), _lists(dtype, 2, positive=True)
    outs = []
    for lib in (torch, ember):
        xs, ys, zs = ([lib.tensor(v) for v in arrs] for arrs in (a, b, c))
        s = lib.tensor([1.0, -2.0, 3.0], dtype=getattr(lib, np.dtype(dtype).name)) \
            if scalars == "tensor" else scalars
        args = (xs, ys, zs) if s is None else (xs, ys, zs, s)
        out = getattr(lib, name)(*args)
        getattr(lib, name + "_")(*args)
        outs.append((out, xs))
    _close(outs[1][0], outs[0][0], dtype)
    _close(outs[1][1], outs[0][1], dtype)


@pytest.mark.parametrize("weight", [0.3, [0.1, 0.5, 0.9], "list"])
def test_lerp(weight):
    a, b, w = _lists(np.float64, 0), _lists(np.float64, 1), _lists(np.float64, 2)
    outs = []
    for lib in (torch, ember):
        xs, ys = [lib.tensor(v) for v in a], [lib.tensor(v) for v in b]
        ws = [lib.tensor(v) for v in w] if weight == "list" else weight
        outs.append((lib._foreach_lerp(xs, ys, ws), lib._foreach_lerp_(xs, ys, ws)))
    _close(outs[1][0], outs[0][0], np.float64)
    _close(outs[1][1], outs[0][1], np.float64)


UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
         "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
         "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    a = [np.clip(v, -0.9, 0.9) for v in _lists(np.float64, 3)]
    if name in ("log", "log10", "log2", "sqrt", "rsqrt", "lgamma"):
        a = [np.abs(v) + 0.1 for v in a]
    t_xs, e_xs = _both(a)
    _close(getattr(ember, f"_foreach_{name}")(e_xs), getattr(torch, f"_foreach_{name}")(t_xs),
           np.float64)
    getattr(ember, f"_foreach_{name}_")(e_xs)
    getattr(torch, f"_foreach_{name}_")(t_xs)
    _close(e_xs, t_xs, np.float64)


def test_reductions_and_copies():
    a, b = _lists(np.float32, 4), _lists(np.float32, 5)
    (t_xs, e_xs), (t_ys, e_ys) = _both(a), _both(b)
    for args in [(), (1,), (float("inf"),), (0,), (3, torch.float64)]:
        e_args = tuple(ember.float64 if a is torch.float64 else a for a in args)
        _close(ember._foreach_norm(e_xs, *e_args), torch._foreach_norm(t_xs, *args), np.float32)
        _close(ember._foreach_powsum(e_xs, *e_args), torch._foreach_powsum(t_xs, *args),
               np.float32)
    _close(ember._foreach_max(e_xs), torch._foreach_max(t_xs), np.float32)
    _close(ember._foreach_pow(2.0, e_xs), torch._foreach_pow(2.0, t_xs), np.float32)
    mats = [np.ones((2, 3), np.float32), np.full((3, 1), 2.0, np.float32)]
    _close(ember._foreach_mm([ember.tensor(mats[0])], [ember.tensor(mats[1])]),
           torch._foreach_mm([torch.tensor(mats[0])], [torch.tensor(mats[1])]), np.float32)
    _close(ember._foreach_clone(e_xs), torch._foreach_clone(t_xs), np.float32)
    assert ember._foreach_copy_(e_xs, e_ys) is e_xs
    torch._foreach_copy_(t_xs, t_ys)
    _close(e_xs, t_xs, np.float32)
    assert ember._foreach_zero_(e_xs) is e_xs
    assert all(float(x.abs().sum()) == 0 for x in e_xs)


def test_promotion_and_integer_lists():
    for lib_pair in [(torch, ember)]:
        outs = [lib._foreach_add([lib.tensor([1, 2])], 1.5) for lib in lib_pair]
        _close(outs[1], outs[0], np.float64)
        outs = [lib._foreach_mul([lib.tensor([1, 2])], lib.tensor(2.5)) for lib in lib_pair]
        _close(outs[1], outs[0], np.float64)
        outs = [lib._foreach_sqrt([lib.tensor([4, 9])]) for lib in lib_pair]
        _close(outs[1], outs[0], np.float64)


def test_errors_match():
    def cases(lib):
        a = [lib.ones(2), lib.ones(3)]
        return [lambda: lib._foreach_add(a, [1]),
                lambda: lib._foreach_add(a, [lib.ones(2)]),
                lambda: lib._foreach_add([], 1),
                lambda: lib._foreach_add(a, [lib.ones(2), lib.ones(2)]),
                lambda: lib._foreach_add(a, lib.tensor([5.0, 1.0])),
                lambda: lib._foreach_addcmul(a, a, a, lib.tensor([1.0, 2.0, 3.0])),
                lambda: lib._foreach_addcdiv(a, a, a, lib.tensor([[1.0, 2.0]])),
                lambda: lib._foreach_lerp(a, a, (0.5,)),
                lambda: lib._foreach_sub([lib.ones(2, dtype=lib.bool)], True),
                lambda: lib._foreach_neg([lib.ones(2, dtype=lib.bool)]),
                lambda: lib._foreach_max([lib.tensor([])]),
                lambda: lib._foreach_norm([lib.tensor([1, 2])]),
                lambda: lib._foreach_mul_([lib.ones(2, requires_grad=True)], 2)]
    for t_case, e_case in zip(cases(torch), cases(ember)):
        assert error_of(e_case) == error_of(t_case)
    for lib in (torch, ember):
        assert error_of(lambda: lib._foreach_sub([lib.ones(2)], 1, alpha=2))[0] == "TypeError"
        assert error_of(lambda: lib._foreach_add(1, [lib.ones(2)]))[0] == "TypeError"
        assert error_of(lambda: lib._foreach_norm(1))[1] == \
            "_foreach_norm(): argument 'self' (position 1) must be tuple of Tensors, not int"
