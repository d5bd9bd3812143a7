"""The compiled apply (ember/_ops/_apply.c) and engine loop (ember/autograd/_engine_loop.c)
against the Python code they stand in for: every scenario runs under all four combinations
and must give the same values, gradients, graph structure and errors."""
import copy
import itertools
import pickle
import shutil
import warnings

import numpy as np
import pytest

import ember
from ember._ops import primitive
from ember.autograd import engine
from tests.autograd.custom_functions import MulConstant

COMBOS = list(itertools.product([True, False], [True, False]))


@pytest.fixture
def paths():
    """A runner: ``paths(fn)`` -> [fn() under each (apply, loop) combination]."""
    def run(fn):
        results = []
        for native_apply, native_loop in COMBOS:
            old_apply = primitive.set_native_apply(native_apply)
            old_loop = engine.set_native_loop(native_loop)
            try:
                results.append(fn())
            finally:
                primitive.set_native_apply(old_apply)
                engine.set_native_loop(old_loop)
        return results
    return run


def leaves(*shapes, dtype=ember.float64, seed=0):
    rng = np.random.default_rng(seed)
    return [ember.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=True)
            for s in shapes]


def same(results):
    first = results[0]
    for other in results[1:]:
        assert len(other) == len(first)
        for a, b in zip(first, other):
            if a is None or b is None:
                assert a is None and b is None
            elif isinstance(a, str):
                assert a == b
            else:
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    return first


def grads_of(*ts):
    return [None if t.grad is None else t.grad.numpy().copy() for t in ts]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler: the Python code runs")
def test_both_compiled_pieces_are_built():
    # setup.py builds them where a C compiler is; without one the Python code runs alone.
    assert primitive._native is not None and engine._native is not None


def test_chain_values_and_grads(paths):
    def run():
        x, w = leaves((5,), (5,))
        y = x
        for _ in range(10):
            y = ((y * w + 0.1).tanh() - w) / 2
        y.sum().backward()
        return [y.detach().numpy()] + grads_of(x, w)
    expected = same(paths(run))
    # and the values are those of the same formulas on arrays
    x, w = leaves((5,), (5,))
    y = x.detach().numpy()
    for _ in range(10):
        y = (np.tanh(y * w.detach().numpy() + 0.1) - w.detach().numpy()) / 2
    np.testing.assert_allclose(expected[0], y, rtol=1e-12)


def test_broadcasting_casts_and_scalars(paths):
    def run():
        a = leaves((3, 1), dtype=ember.float32)[0]
        b = leaves((4,), dtype=ember.float64, seed=1)[0]
        c = ember.tensor([1, 2, 3, 4])  # integers: no gradient
        y = (a * b + c) * 2.0 - 1
        z = (y ** 2).mean() + (3.0 * a).sum()
        z.backward()
        return [y.detach().numpy(), str(y.dtype), str(a.grad.dtype)] + grads_of(a, b)
    same(paths(run))


def test_graph_structure(paths):
    def run():
        x, w = leaves((3,), (3,))
        y = x * w + 2
        z = y * 3
        names = [type(z.grad_fn).__name__, type(z.grad_fn.next_functions[0][0]).__name__,
                 str(z.grad_fn.next_functions[1]), str(z.requires_grad), str(z.is_leaf),
                 str(y.grad_fn.next_functions[1]),
                 str(len(y.grad_fn.next_functions[0][0].next_functions))]
        return names
    same(paths(run))


def test_views_multi_outputs_and_inplace(paths):
    def run():
        x, = leaves((4, 3))
        v = x[1:].t()  # views take the Python path
        m, idx = (v * 2).max(dim=0)  # two outputs
        s = x.clone()
        s.mul_(2)
        s[0] = 0.0
        out = m.sum() + s.sum() + v.exp().sum()
        out.backward()
        return [m.detach().numpy(), idx.numpy(), s.detach().numpy()] + grads_of(x)
    same(paths(run))


def test_no_grad_and_requires_grad_false(paths):
    def run():
        x, = leaves((3,))
        with ember.no_grad():
            y = x * 2
        z = ember.ones(3) * 2
        return [y.detach().numpy(), str(y.requires_grad), str(y.grad_fn),
                str(z.requires_grad)]
    same(paths(run))


def test_hooks_retain_graph_and_reuse(paths):
    def run():
        x, w = leaves((3,), (3,))
        seen = []
        y = x * w
        y.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 2)
        y.grad_fn.register_hook(lambda gi, go: seen.append(go[0].numpy().copy()))
        z = (y * y + w).sum()
        z.backward(retain_graph=True)
        z.backward()
        return grads_of(x, w) + seen
    same(paths(run))


def test_saved_tensor_modified_in_place(paths):
    def run():
        x, = leaves((3,))
        a = x * 1
        b = a * a
        a.add_(1)
        with pytest.raises(RuntimeError) as info:
            b.sum().backward()
        return [str(info.value)]
    same(paths(run))


def test_errors_in_forward(paths):
    def run():
        x, = leaves((3,))
        with pytest.raises(RuntimeError) as shapes:
            x * ember.ones(4)
        with pytest.raises(TypeError) as operand:
            x * object()
        return [str(shapes.value), str(operand.value)]
    same(paths(run))


def test_anomaly_mode_and_saved_tensor_hooks(paths):
    def run():
        x, w = leaves((3,), (3,))
        packed = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with ember.autograd.detect_anomaly():
                (x * w).sum().backward()
        with ember.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t,
                                                      lambda t: t):
            y = (x * w).tanh()
        y.sum().backward()
        return grads_of(x, w) + [str(len(packed))]
    same(paths(run))


def test_create_graph_and_autograd_grad(paths):
    def run():
        x, = leaves((3,))
        y = (x * x * x).sum()
        g, = ember.autograd.grad(y, x, create_graph=True)
        h, = ember.autograd.grad(g.sum(), x)
        return [g.detach().numpy(), h.numpy()]
    same(paths(run))


def test_user_function_in_graph(paths):
    def run():
        x, = leaves((4,))
        y = MulConstant.apply(x * 2, 3.0).sum()
        y.backward()
        return grads_of(x) + [type(y.grad_fn.next_functions[0][0]).__name__]
    same(paths(run))


def test_compiled_apply_stands_in_for_the_function():
    add = ember.Tensor.__add__
    assert add.__name__ == "__add__" and callable(add.__wrapped__)
    assert ember.Tensor.tanh.__qualname__ == "Tensor.tanh"
    x = ember.ones(2)
    assert x.tanh.__self__ is x  # binds as a method
    assert ember.Tensor.__mul__(x, 3).tolist() == [3.0, 3.0]


def test_non_tensor_arguments_dropped_from_edges(paths):
    def run():
        x, = leaves((3, 4))
        y = x.sum(dim=0, keepdim=True) * x.mean(1, True) + x.clamp(min=0.1).sum()
        z = x.float().sum(dim=1)  # a float32 result of a float64 leaf: the cast path
        (y.sum() + z.sum()).backward()
        return [y.detach().numpy(), str(len(y.grad_fn.next_functions)),
                str(len(x.sum(dim=0).grad_fn.next_functions))] + grads_of(x)
    same(paths(run))


def test_compiled_apply_copies_and_pickles_as_a_function_does():
    # a module holding an op's method is deep-copied (nn.TransformerEncoder clones layers so)
    for fn in (ember.Tensor.tanh, ember.Tensor.__mul__, primitive.PrimitiveNode._apply):
        assert copy.deepcopy(fn) is fn and copy.copy(fn) is fn
        assert pickle.loads(pickle.dumps(fn)) is fn
    layer = ember.nn.Linear(2, 2)
    layer.act = ember.Tensor.tanh
    assert copy.deepcopy(layer).act is ember.Tensor.tanh


def test_full_reductions_give_zero_dim_arrays(paths):
    # NumPy's full reductions return NumPy scalars; every path makes them 0-d arrays of the
    # input's dtype, and the implicit gradient of backward() is a 1 of that dtype
    def run():
        out = []
        for dtype in (ember.float32, ember.float64, ember.int64):
            x = ember.arange(6, dtype=dtype).reshape(2, 3)
            if dtype.is_floating_point:
                x.requires_grad_()
            s = x.sum()
            assert type(s._data) is np.ndarray and s._data.shape == ()
            assert s.dtype is dtype and s.shape == ()
            out.append(s.item())
            if dtype.is_floating_point:
                s.backward()
                assert x.grad.dtype is dtype
                out.append(x.grad.numpy().copy())
        v = ember.ones((), requires_grad=True)
        (v * 3).backward()  # a 0-d root: the implicit gradient keeps the shape ()
        out.append(v.grad.numpy().copy())
        w = ember.ones(1, 1, requires_grad=True)
        (w * 3).backward()  # a one-element root of shape (1, 1)
        out.append(w.grad.numpy().copy())
        return out
    got = same(paths(run))
    assert got[0] == 15.0 and got[2] == 15.0 and got[4] == 15
    np.testing.assert_array_equal(got[1], np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(got[5], 3.0)
    np.testing.assert_array_equal(got[6], [[3.0]])
