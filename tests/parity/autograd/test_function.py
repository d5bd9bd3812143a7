"""Custom autograd.Function on ember vs PyTorch -- values and gradients: outputs, input
gradients, higher derivatives, version counters, what backward receives, ctx.mark_dirty /
mark_non_differentiable / set_materialize_grads and once_differentiable."""
import numpy as np
import pytest

from tests.parity.autograd.function_builders import (B, G, W, X, add_one_inplace,
                                                     assert_same_arrays, assert_same_error,
                                                     exp_saving_output, linear_function,
                                                     mul_constant, on_both, square, t64,
                                                     to_numpy as _np)


# ---- values and gradients -------------------------------------------------------------------
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_function(with_bias):
    def run(lib):
        x, w, b = t64(lib, X), t64(lib, W), t64(lib, B)
        args = (x, w, b) if with_bias else (x, w)
        out = linear_function(lib).apply(*args)
        out.backward(lib.tensor(G))
        return [_np(out), _np(x.grad), _np(w.grad), _np(b.grad)]
    assert_same_arrays(*on_both(run))


def test_linear_function_partial_requires_grad():
    def run(lib):
        x, w, b = t64(lib, X, False), t64(lib, W), t64(lib, B, False)
        out = linear_function(lib).apply(x, w, b)
        out.backward(lib.tensor(G))
        return [_np(out), _np(x.grad), _np(w.grad), _np(b.grad)]
    assert_same_arrays(*on_both(run))


def test_mul_constant_and_second_derivative():
    def run(lib):
        x = t64(lib, [0.3, -1.2, 2.0])
        y = mul_constant(lib).apply(x.sin(), 2.5) ** 2
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return [_np(y), _np(g), _np(gg)]
    assert_same_arrays(*on_both(run))


def test_repeated_create_graph_and_third_derivative_through_saved_output():
    def run(lib):
        x = t64(lib, [0.5, -1.0])
        y = exp_saving_output(lib).apply(x * x)
        for _ in range(3):
            g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x, create_graph=True)
        ggg, = lib.autograd.grad(gg.sum(), x)
        return [_np(g), _np(gg), _np(ggg)]
    assert_same_arrays(*on_both(run), rtol=1e-10)


def test_backward_receiving_non_contiguous_gradient():
    def run(lib):
        seen = []

        class Copy(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                seen.append((g.is_contiguous(), tuple(g.shape)))
                return g * 2

        x = t64(lib, np.arange(6.0).reshape(2, 3))
        (Copy.apply(x).t() * lib.tensor(np.arange(6.0).reshape(3, 2))).sum().backward()
        return seen, _np(x.grad)
    (t_seen, t_grad), (e_seen, e_grad) = on_both(run)
    assert e_seen == t_seen
    np.testing.assert_array_equal(e_grad, t_grad)


def test_identity_forward_routes_through_backward():
    def run(lib):
        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 10

        x = t64(lib, [1.0, 2.0])
        y = Ident.apply(x)
        y.sum().backward()
        return y is x, y.grad_fn.name(), _np(x.grad).tolist()
    t, e = on_both(run)
    assert e == t


def test_mixed_tuple_output_and_grads_received():
    def run(lib):
        seen = []

        class Mixed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, n):
                return x * n, n, "label", x * 0 + 1

            @staticmethod
            def backward(ctx, g, g_n, g_label, g_ones):
                seen.append([None if v is None else _np(v).tolist()
                             for v in (g, g_n, g_label, g_ones)])
                return g * 2, None

        x = t64(lib, [1.0, 2.0])
        out = Mixed.apply(x, 2)
        kinds = [type(o).__name__ for o in out]
        out[0].sum().backward()
        return kinds, seen, _np(x.grad).tolist()
    t, e = on_both(run)
    assert e == t


def test_kwargs_through_apply():
    # (PyTorch 2.x errors when a *defaulted* parameter is skipped by keyword; ember binds
    # it — see tests/autograd/test_function_apply.py. Here: the call that works on both.)
    def run(lib):
        class Affine(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale=2.0, shift=0.0):
                ctx.scale = scale
                return x * scale + shift

            @staticmethod
            def backward(ctx, g):
                return g * ctx.scale, None, None

        x = t64(lib, [1.0, 2.0])
        y = Affine.apply(x, scale=3.0)
        y.sum().backward()
        return _np(y).tolist(), _np(x.grad).tolist()
    t, e = on_both(run)
    assert e == t


def _scale_sc(lib):
    class ScaleSC(lib.autograd.Function):
        @staticmethod
        def forward(x, k=3.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.k = k
            ctx.save_for_backward(x, output)

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None
    return ScaleSC


def test_setup_context_style():
    def run(lib):
        x = t64(lib, [1.0, 2.0])
        y = _scale_sc(lib).apply(x, 4.0)
        z = _scale_sc(lib).apply(x, k=5.0)
        (y.sum() + z.sum()).backward()
        return _np(y).tolist(), _np(z).tolist(), _np(x.grad).tolist(), y.grad_fn.name()
    t, e = on_both(run)
    assert e == t


def test_setup_context_inputs_include_defaults():
    def run(lib):
        x = t64(lib, [1.0, 2.0])
        y = _scale_sc(lib).apply(x)
        y.sum().backward()
        return _np(y).tolist(), _np(x.grad).tolist()
    t, e = on_both(run)
    assert e == t


def test_needs_input_grad_and_next_functions():
    def run(lib):
        seen = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, b, c):
                seen.append(ctx.needs_input_grad)
                return a * b * c * k

            @staticmethod
            def backward(ctx, g):
                seen.append(ctx.needs_input_grad)
                return g, None, g, g

        a, b, c = t64(lib, [1.0]), t64(lib, [2.0], False), t64(lib, [3.0])
        y = F.apply(a, 4, b, c * 2)
        nf = [(None if n is None else n.name(), i) for n, i in y.grad_fn.next_functions]
        y.sum().backward()
        return seen, nf, y.grad_fn.name(), tuple(y.grad_fn.needs_input_grad)
    t, e = on_both(run)
    assert e == t


def test_grad_fn_saved_tensors_and_hooks():
    def run(lib):
        calls = []
        x = t64(lib, [1.0, 2.0])
        y = square(lib).apply(x)
        saved = [_np(s).tolist() for s in y.grad_fn.saved_tensors]
        y.grad_fn.register_prehook(lambda go: calls.append(("pre", _np(go[0]).tolist())))
        y.grad_fn.register_hook(lambda gi, go: calls.append(
            ("post", _np(gi[0]).tolist(), _np(go[0]).tolist())))
        y.backward(lib.tensor([1.0, 10.0], dtype=lib.float64))
        return saved, calls, _np(x.grad).tolist()
    t, e = on_both(run)
    assert e == t


def test_no_graph_without_requires_grad_or_under_no_grad():
    def run(lib):
        F = square(lib)
        y1 = F.apply(t64(lib, [1.0], False))
        x = t64(lib, [1.0])
        with lib.no_grad():
            y2 = F.apply(x)
        return [(y.requires_grad, y.grad_fn is None) for y in (y1, y2)]
    t, e = on_both(run)
    assert e == t


def test_integer_output_not_differentiable():
    def run(lib):
        seen = []

        class ArgmaxAndDouble(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.argmax(), x * 2

            @staticmethod
            def backward(ctx, g_idx, g):
                seen.append(None if g_idx is None else (_np(g_idx).tolist(),
                                                        str(g_idx.dtype).split(".")[-1]))
                return g * 2

        x = t64(lib, [1.0, 5.0, 2.0])
        idx, y = ArgmaxAndDouble.apply(x)
        y.sum().backward()
        return idx.requires_grad, y.requires_grad, seen, _np(x.grad).tolist()
    t, e = on_both(run)
    assert e == t


# ---- ctx.mark_dirty / mark_non_differentiable / set_materialize_grads ------------------------
def test_mark_dirty_versions_identity_and_grads():
    def run(lib):
        leaf = t64(lib, [1.0, 2.0])
        a = leaf * 3
        v0 = a._version
        r = add_one_inplace(lib).apply(a)
        v1 = a._version
        (a * a).sum().backward()
        n = t64(lib, [1.0], False)
        vn0 = n._version
        rn = add_one_inplace(lib).apply(n)
        return (r is a, v0, v1, a.grad_fn.name(), _np(leaf.grad).tolist(),
                rn is n, vn0, n._version, n.requires_grad)
    t, e = on_both(run)
    assert e == t


def test_mark_non_differentiable_and_zero_grad_received():
    def run(lib):
        seen = []

        class Pos(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                mask = (x > 0).to(x.dtype)
                ctx.mark_non_differentiable(mask)
                return x * 2, mask

            @staticmethod
            def backward(ctx, g, g_mask):
                seen.append(_np(g_mask).tolist())
                return g * 2

        x = t64(lib, [-1.0, 2.0])
        out, mask = Pos.apply(x)
        out.sum().backward()
        return mask.requires_grad, mask.grad_fn is None, seen, _np(x.grad).tolist()
    t, e = on_both(run)
    assert e == t


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(materialize):
    def run(lib):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append([None if g is None else _np(g).tolist() for g in (g1, g2)])
                return g1 * 2

        x = t64(lib, [1.0, 2.0])
        a, b = Two.apply(x)
        a.sum().backward()
        return seen, _np(x.grad).tolist()
    t, e = on_both(run)
    assert e == t


# ---- once_differentiable ---------------------------------------------------------------------
def _cube_once(lib, seen):
    class CubeOnce(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            seen.append(lib.is_grad_enabled())
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g
    return CubeOnce


def test_once_differentiable_values_and_grad_mode():
    def run(lib):
        seen = []
        x = t64(lib, [1.0, 2.0])
        F = _cube_once(lib, seen)
        g1, = lib.autograd.grad(F.apply(x).sum(), x, create_graph=True)
        g2, = lib.autograd.grad((F.apply(x) ** 2).sum(), x, create_graph=True)
        return seen, _np(g1).tolist(), g1.requires_grad, _np(g2).tolist(), g2.requires_grad
    t, e = on_both(run)
    assert e == t


def test_once_differentiable_double_backward_error():
    def fn(lib):
        x = t64(lib, [1.0, 2.0])
        g, = lib.autograd.grad((_cube_once(lib, []).apply(x) ** 2).sum(), x, create_graph=True)
        g.sum().backward()
    assert_same_error(fn)
