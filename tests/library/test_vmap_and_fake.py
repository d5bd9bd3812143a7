"""register_vmap under ember.func.vmap (with autograd), the per-sample fallback, get_ctx."""
import warnings

import numpy as np
import pytest

import ember
from ember import Tensor
from ember.library import custom_op


def _scaled_sin(ns, rule_calls):
    @custom_op(f"{ns}::scaled_sin", mutates_args=())
    def scaled_sin(x: Tensor, *, s: float = 1.0) -> Tensor:
        return ember.from_numpy(np.sin(x.numpy()) * s)

    def setup_context(ctx, inputs, keyword_only_inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.s = keyword_only_inputs["s"]

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.cos() * ctx.s

    scaled_sin.register_autograd(backward, setup_context=setup_context)

    @scaled_sin.register_vmap
    def _(info, in_dims, x, *, s):
        rule_calls.append((info.batch_size, info.randomness, in_dims, tuple(x.shape), s))
        return scaled_sin(x, s=s), in_dims[0]
    return scaled_sin


def test_vmap_rule_runs_once_per_batch(ns):
    calls = []
    op = _scaled_sin(ns, calls)
    x = np.random.default_rng(0).standard_normal((4, 3))
    out = ember.func.vmap(lambda t: op(t, s=2.0))(ember.tensor(x))
    np.testing.assert_allclose(out.numpy(), 2 * np.sin(x), rtol=1e-6)
    assert calls == [(4, "error", (0,), (4, 3), 2.0)]
    out = ember.func.vmap(lambda t: op(t, s=2.0), in_dims=1)(ember.tensor(x))
    np.testing.assert_allclose(out.numpy(), 2 * np.sin(x.T), rtol=1e-6)


def test_vmap_rule_with_gradients(ns):
    op = _scaled_sin(ns, [])
    x = np.random.default_rng(1).standard_normal((2, 3))
    t = ember.tensor(x, requires_grad=True)
    ember.func.vmap(lambda v: op(v, s=3.0))(t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), 3 * np.cos(x), rtol=1e-6)
    per_sample = ember.func.vmap(ember.func.grad(lambda v: op(v, s=3.0).sum()))(ember.tensor(x))
    np.testing.assert_allclose(per_sample.detach().numpy(), 3 * np.cos(x), rtol=1e-6)
    nested = ember.func.vmap(ember.func.vmap(lambda v: op(v)))(ember.tensor(x))
    np.testing.assert_allclose(nested.numpy(), np.sin(x), rtol=1e-6)


def test_no_rule_runs_per_sample_and_warns(ns):
    @custom_op(f"{ns}::numpy_exp", mutates_args=())
    def numpy_exp(x: Tensor) -> Tensor:
        assert x.ndim == 1  # one sample at a time
        return ember.from_numpy(np.exp(x.numpy()))

    x = np.random.default_rng(2).standard_normal((3, 2))
    with pytest.warns(UserWarning, match=f"not yet implemented the batching rule for "
                                         f"{ns}::numpy_exp"):
        out = ember.func.vmap(numpy_exp)(ember.tensor(x))
    np.testing.assert_allclose(out.numpy(), np.exp(x), rtol=1e-6)


def test_get_ctx_in_fake_impl(ns):
    @custom_op(f"{ns}::numpy_nonzero", mutates_args=())
    def numpy_nonzero(x: Tensor) -> Tensor:
        return ember.from_numpy(np.stack(np.nonzero(x.numpy()), axis=1))

    @numpy_nonzero.register_fake
    def _(x):
        nnz = ember.library.get_ctx().new_dynamic_size()
        return x.new_empty((nnz, x.ndim), dtype=ember.int64)

    result = ember.library.opcheck(numpy_nonzero, (ember.tensor([[1., 0.], [0., 2.]]),))
    assert result["test_faketensor"] == "SUCCESS"
    with pytest.raises(ValueError, match="expected min to be greater than or equal to 0"):
        ember.library.get_ctx().new_dynamic_size(min=-1)


def test_library_op_without_autograd_warns_in_backward(ns, make_lib):
    lib = make_lib(ns, "DEF")
    lib.define("numpy_tanh(Tensor x) -> Tensor")
    lib.impl("numpy_tanh", lambda x: ember.from_numpy(np.tanh(x.detach().numpy())), "CPU")
    x = ember.ones(2, requires_grad=True)
    y = getattr(ember.ops, ns).numpy_tanh(x)
    assert y.requires_grad
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (y * 2).sum().backward()
    assert x.grad is None
    assert any(f"{ns}::numpy_tanh: an autograd kernel was not registered to the Autograd key(s)"
               in str(w.message) for w in caught)
    lib.impl("numpy_tanh", ember.library.fallthrough_kernel, "Autograd")
    assert not getattr(ember.ops, ns).numpy_tanh(x).requires_grad


def test_mutating_op_under_vmap_raises(ns):
    @custom_op(f"{ns}::add_one_", mutates_args=["x"])
    def add_one_(x: Tensor) -> None:
        x.numpy()[...] += 1

    with pytest.raises(RuntimeError, match=f"Batching rule not implemented for {ns}::add_one_; "
                                           "the fallback path doesn't work on out= or view ops."):
        ember.func.vmap(add_one_)(ember.ones(2, 3))


def test_forward_ad_is_refused_clearly(ns):
    import ember.autograd.forward_ad as fwAD

    @custom_op(f"{ns}::numpy_neg", mutates_args=())
    def numpy_neg(x: Tensor) -> Tensor:
        return ember.from_numpy(-x.numpy())

    with fwAD.dual_level():
        dual = fwAD.make_dual(ember.ones(2), ember.ones(2))
        with pytest.raises(NotImplementedError, match="no forward-mode AD formula"):
            numpy_neg(dual)
