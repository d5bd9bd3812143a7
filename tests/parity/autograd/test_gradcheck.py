"""``gradcheck`` / ``gradgradcheck`` on custom Functions, ember vs PyTorch: both pass and both
fail with the same first line of the report."""
import numpy as np
import pytest
import torch

import ember

from tests.parity.autograd.function_builders import (A3, B, B3, W, X, assert_same_arrays,
                                                     assert_same_error, linear_function,
                                                     make_function as _fn, on_both, t64,
                                                     to_numpy as _np)
from tests.parity.compare import error_of


def _mul(lib, backward=None):
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    def good(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a

    def wrapped(ctx, g):
        a, b = ctx.saved_tensors
        return backward(g, a, b)
    return _fn(lib, forward, good if backward is None else wrapped)




def test_gradcheck_passes_on_both():
    def run(lib):
        ins = (t64(lib, A3), t64(lib, B3))
        return (lib.autograd.gradcheck(_mul(lib).apply, ins),
                lib.autograd.gradcheck(_mul(lib).apply, ins, fast_mode=True),
                lib.autograd.gradcheck(linear_function(lib).apply,
                                       (t64(lib, X), t64(lib, W), t64(lib, B)),
                                       eps=1e-6, atol=1e-4))
    t, e = on_both(run)
    assert t == e == (True, True, True)


@pytest.mark.parametrize("case", ["none", "factor", "ignores_grad_output"])
def test_gradcheck_fails_on_both_with_same_first_line(case):
    backward = {"none": lambda g, a, b: (g * b, None),
                "factor": lambda g, a, b: (g * b, 2 * g * a),
                "ignores_grad_output": lambda g, a, b: (b * 1, g * a)}[case]

    def run(lib):
        ins = (t64(lib, A3), t64(lib, B3))
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradcheck(_mul(lib, backward).apply, ins)
        quiet = lib.autograd.gradcheck(_mul(lib, backward).apply, ins, raise_exception=False)
        return type(info.value).__name__, str(info.value).splitlines()[0], quiet
    t, e = on_both(run)
    assert e == t
    assert t[0] == "GradcheckError" and t[1].startswith("Jacobian mismatch for output 0")


def test_gradcheck_no_input_requires_grad_message():
    def fn(lib):
        lib.autograd.gradcheck(_mul(lib).apply, (t64(lib, A3, False), t64(lib, B3, False)))
    assert_same_error(fn)


def test_gradcheck_no_input_requires_grad_type():
    def fn(lib):
        lib.autograd.gradcheck(_mul(lib).apply, (t64(lib, A3, False), t64(lib, B3, False)))
    t, e = error_of(lambda: fn(torch)), error_of(lambda: fn(ember))
    assert t[0] == e[0] == "ValueError"
    assert e[1].startswith("gradcheck expects at least one input tensor to require gradient")


def test_gradcheck_non_reentrant_on_both():
    def run(lib):
        rng = np.random.default_rng(0)

        def backward(ctx, g):
            return g * 2 + lib.tensor(rng.standard_normal(tuple(g.shape)) * 1e-9)
        F = _fn(lib, lambda ctx, a: a * 2, backward)
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradcheck(F.apply, (t64(lib, A3),))
        return type(info.value).__name__, str(info.value).split(",")[0]
    t, e = on_both(run)
    assert e == t == ("GradcheckError", "Backward is not reentrant")


def _cube_twice(lib, factor=6):
    class CubeGrad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, g):
            ctx.save_for_backward(x, g)
            return 3 * x * x * g

        @staticmethod
        def backward(ctx, gg):
            x, g = ctx.saved_tensors
            return factor * x * g * gg, 3 * x * x * gg

    class CubeTwice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return CubeGrad.apply(x, g)
    return CubeTwice


def test_second_derivative_through_nested_function():
    def run(lib):
        x = t64(lib, A3)
        g, = lib.autograd.grad(_cube_twice(lib).apply(x).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return [_np(g), _np(gg)]
    assert_same_arrays(*on_both(run))


def test_gradgradcheck_on_both():
    def run(lib):
        good = lib.autograd.gradgradcheck(_cube_twice(lib).apply, (t64(lib, A3),))
        bad = lib.autograd.gradgradcheck(_cube_twice(lib, factor=5).apply, (t64(lib, A3),),
                                         raise_exception=False)
        return good, bad
    t, e = on_both(run)
    assert e == t == (True, False)
