"""Custom autograd.Function on ember vs PyTorch: the same code, the same NumPy inputs.

Each test builds its Functions against ``lib.autograd.Function`` for
``lib in (torch, ember)`` and compares outputs, gradients, higher derivatives,
version counters, what backward receives, and error types and messages (with
'torch' read as 'ember' where the texts differ only by the library's name).
"""
import re
import warnings

import numpy as np
import pytest
import torch

import ember

LIBS = (torch, ember)


def _np(t):
    return None if t is None else t.detach().numpy()


def on_both(fn):
    """fn(lib) for torch and ember -> (torch result, ember result)."""
    return fn(torch), fn(ember)


def assert_same_arrays(a, b, rtol=1e-12, atol=0.0):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
        else:
            np.testing.assert_allclose(y, x, rtol=rtol, atol=atol)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare whatever is raised
        return type(e).__name__, str(e)
    return None


def assert_same_error(fn, normalize=None):
    """Run fn(lib) on both; same exception type name and message (torch -> ember)."""
    t, e = _error(lambda: fn(torch)), _error(lambda: fn(ember))
    assert t is not None, "torch raised nothing"
    assert e is not None, f"ember raised nothing; torch raised {t}"
    t_msg = t[1].replace("torch", "ember")
    e_msg = e[1]
    if normalize:
        t_msg, e_msg = normalize(t_msg), normalize(e_msg)
    assert e[0] == t[0], (e, t)
    assert e_msg == t_msg
    return t, e


def t64(lib, a, requires_grad=True):
    return lib.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


# ---- Functions, built per library -----------------------------------------------------------
def linear_function(lib):
    class LinearFunction(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0).squeeze(0)
            return grad_input, grad_weight, grad_bias
    return LinearFunction


def mul_constant(lib):
    class MulConstant(lib.autograd.Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None
    return MulConstant


def exp_saving_output(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            out, = ctx.saved_tensors
            return g * out
    return Exp


def square(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    return Square


def add_one_inplace(lib):
    class AddOneInplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 1
    return AddOneInplace


RNG = np.random.default_rng(0)
X, W, B = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3)), RNG.standard_normal(5)
G = RNG.standard_normal((4, 5))


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
    # it — see tests/test_extending.py. Here: the call that works on both.)
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


# ---- error paths ----------------------------------------------------------------------------
def _fn(lib, forward, backward):
    return type("F", (lib.autograd.Function,), {"forward": staticmethod(forward),
                                                "backward": staticmethod(backward)})


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
    t, e = _error(lambda: fn(torch)), _error(lambda: fn(ember))
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


# ---- gradcheck / gradgradcheck --------------------------------------------------------------
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


A3, B3 = RNG.standard_normal(3), RNG.standard_normal(3)


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
    t, e = _error(lambda: fn(torch)), _error(lambda: fn(ember))
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


# ---- anomaly detection ----------------------------------------------------------------------
def test_anomaly_nan_error_and_forward_trace_warning():
    def run(lib):
        F = _fn(lib, lambda ctx, x: x * 2, lambda ctx, g: g * float("nan"))
        x = t64(lib, [1.0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                y = F.apply(x)
                err = _error(lambda: y.sum().backward())
        msgs = [str(w.message) for w in caught]
        enabled = [m.replace("torch", "ember") for m in msgs if m.startswith("Anomaly")]
        trace = [m for m in msgs if m.startswith("Error detected in")]
        return err, enabled, len(trace) == 1 and "y = F.apply(x)" in trace[0]
    (t_err, t_en, t_tr), (e_err, e_en, e_tr) = on_both(run)
    assert e_err == t_err
    assert re.fullmatch(r"Function '\w+Backward' returned nan values in its 0th output.",
                        e_err[1])
    assert e_en == t_en
    assert t_tr and e_tr


def test_set_detect_anomaly():
    def run(lib):
        F = _fn(lib, lambda ctx, x: x * 2, lambda ctx, g: g * float("nan"))
        lib.autograd.set_detect_anomaly(True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                err = _error(lambda: F.apply(t64(lib, [1.0])).sum().backward())
        finally:
            lib.autograd.set_detect_anomaly(False)
        x = t64(lib, [1.0])
        F.apply(x).sum().backward()          # off again: NaN passes through silently
        return err, bool(np.isnan(_np(x.grad)).all())
    t, e = on_both(run)
    assert e == t


def test_is_anomaly_enabled_top_level():
    def run(lib):
        lib.autograd.set_detect_anomaly(True)
        try:
            on = lib.is_anomaly_enabled()
        finally:
            lib.autograd.set_detect_anomaly(False)
        return on, lib.is_anomaly_enabled()
    t, e = on_both(run)
    assert e == t == (True, False)
