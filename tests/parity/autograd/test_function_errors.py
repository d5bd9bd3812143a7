"""Custom autograd.Function on ember vs PyTorch -- error paths (same exception types and
messages, with 'torch' read as 'ember'), ``Variable`` and the deprecated aliases' warnings."""
import warnings

import numpy as np
import pytest
import torch

import ember

from tests.parity.autograd.function_builders import (add_one_inplace, assert_same_error,
                                                     make_function as _fn, on_both, square, t64,
                                                     to_numpy as _np)
from tests.parity.compare import error_of


# ---- error paths ----------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [3, [1], 2.5, (1,)])
def test_error_save_for_backward_non_tensor(bad):
    def fn(lib):
        def forward(ctx, x):
            ctx.save_for_backward(x, None, bad)
            return x * 2
        _fn(lib, forward, lambda ctx, g: g).apply(t64(lib, [1.0]))
    assert_same_error(fn)


def test_error_saved_tensors_after_free_and_second_backward():
    def fn_saved(lib):
        y = square(lib).apply(t64(lib, [1.0]))
        y.sum().backward()
        y.grad_fn.saved_tensors

    def fn_twice(lib):
        y = square(lib).apply(t64(lib, [1.0]))
        y.sum().backward()
        y.sum().backward()
    assert_same_error(fn_saved)
    assert_same_error(fn_twice)


@pytest.mark.parametrize("n_args, returned", [(2, 1), (1, 2), (2, 3)])
def test_error_wrong_number_of_gradients(n_args, returned):
    def fn(lib):
        F = _fn(lib, lambda ctx, *args: args[0] * 1,
                lambda ctx, g: g if returned == 1 else (g,) * returned)
        F.apply(*(t64(lib, [1.0]),) * n_args).sum().backward()
    assert_same_error(fn)


def test_error_wrong_gradient_shape():
    def fn(lib):
        F = _fn(lib, lambda ctx, x, y: (x * y).sum(),
                lambda ctx, g: (None, lib.ones(3, dtype=lib.float64)))
        F.apply(t64(lib, np.ones((2, 2))), t64(lib, np.ones((2, 2)))).backward()
    assert_same_error(fn)


def test_error_wrong_gradient_shape_after_non_tensor_argument():
    def fn(lib):
        F = _fn(lib, lambda ctx, k, x: x.sum() * k,
                lambda ctx, g: (None, lib.ones(3, dtype=lib.float64)))
        F.apply(2.0, t64(lib, np.ones((2, 2)))).backward()
    assert_same_error(fn)


def test_error_gradient_for_non_tensor_input():
    def fn(lib):
        F = _fn(lib, lambda ctx, x, c: x * c, lambda ctx, g: (g, g))
        F.apply(t64(lib, [1.0]), 2.0).sum().backward()
    assert_same_error(fn)


def test_trailing_nones_accepted():
    def run(lib):
        x = t64(lib, [1.0, 2.0])
        _fn(lib, lambda ctx, x: x * 2, lambda ctx, g: (g * 2, None, None)).apply(x) \
            .sum().backward()
        return _np(x.grad).tolist()
    t, e = on_both(run)
    assert e == t


def test_error_mark_dirty_leaf_and_not_returned():
    def fn_leaf(lib):
        add_one_inplace(lib).apply(t64(lib, [1.0]))

    def fn_not_returned(lib):
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1
        _fn(lib, forward, lambda ctx, g: g).apply(t64(lib, [1.0]) * 1)
    assert_same_error(fn_leaf)
    assert_same_error(fn_not_returned)


def test_error_missing_forward_or_backward():
    def no_forward(lib):
        class NoForward(lib.autograd.Function):
            @staticmethod
            def backward(ctx, g):
                return g
        NoForward.apply(t64(lib, [1.0]))

    def no_backward(lib):
        class NoBackward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
        NoBackward.apply(t64(lib, [1.0])).sum().backward()
    assert_same_error(no_forward)
    assert_same_error(no_backward)


def test_exception_from_backward_is_the_same_object():
    def run(lib):
        err = KeyError("mine")

        def backward(ctx, g):
            raise err
        try:
            (_fn(lib, lambda ctx, x: x * 2, backward).apply(t64(lib, [1.0])) * 3).sum() \
                .backward()
        except KeyError as e:
            return e is err
        return "nothing raised"
    t, e = on_both(run)
    assert t is True and e is True


def test_saved_input_modified_in_place():
    def fn(lib):
        a = t64(lib, [1.0, 2.0]) * 1
        y = square(lib).apply(a)
        a.add_(1)
        y.sum().backward()
    # PyTorch names the op that produced the saved tensor ("output 0 of MulBackward0");
    # compare the part that does not depend on op naming.
    t, e = error_of(lambda: fn(torch)), error_of(lambda: fn(ember))
    assert e[0] == t[0] == "RuntimeError"
    for text in (t[1], e[1]):
        assert text.startswith("one of the variables needed for gradient computation has been "
                               "modified by an inplace operation: [")
        assert "is at version 1; expected version 0 instead." in text


# ---- Variable and deprecated aliases ------------------------------------------------------------
def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category.__name__, str(w.message).replace("torch", "ember"))
                    for w in caught]


def test_variable_volatile_and_volatile_attribute():
    def run(lib):
        v, w1 = _warnings_of(lambda: lib.autograd.Variable(lib.ones(2), volatile=True))
        r, w2 = _warnings_of(lambda: lib.ones(2).volatile)
        v2 = lib.autograd.Variable(lib.ones(2), requires_grad=True)
        return (type(v).__name__, w1, r, w2, v2.requires_grad, v2.is_leaf)
    t, e = on_both(run)
    assert e == t


def test_saved_variables_warning():
    def run(lib):
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 3

        def backward(ctx, g):
            x, = ctx.saved_variables
            return g * 3
        x = t64(lib, [1.0])
        _, w = _warnings_of(lambda: _fn(lib, forward, backward).apply(x).sum().backward())
        return w, _np(x.grad).tolist()
    t, e = on_both(run)
    assert e == t
