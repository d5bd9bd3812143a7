"""ember.autograd.graph's allow_mutation_on_saved_tensors and switches."""
import pytest

import ember
from ember.autograd import graph


def test_mutated_saved_tensor_is_cloned():
    with graph.allow_mutation_on_saved_tensors() as ctx:
        a = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        b.mul_(3)
        assert len(ctx.cloned) == 1
        out.backward()
    assert ember.allclose(a.grad, 2 * a.detach())
    assert not ctx.cloned and not ctx.original  # cleared on exit


def test_the_same_tensor_saved_twice_and_setitem():
    with graph.allow_mutation_on_saved_tensors():
        a = ember.randn(3, dtype=ember.float64, requires_grad=True)
        b = a * 1
        out = (b * b).sum() + b.exp().sum()  # exp saves its output, not b
        b[0] = 10.0  # a view at b's own address: b is cloned first
        b.zero_()
        out.backward()
    assert ember.allclose(a.grad, 2 * a.detach() + a.detach().exp())


def test_gradcheck_of_a_mutating_function():
    def fn(x):
        y = x.clone()
        z = y.sin() * y
        y.add_(1)  # y was saved by sin and mul
        return z + y
    x = ember.randn(4, dtype=ember.float64, requires_grad=True)
    with graph.allow_mutation_on_saved_tensors():
        assert ember.autograd.gradcheck(fn, (x,))
        fn(x).sum().backward()
    assert ember.allclose(x.grad, x.cos() * x + x.sin() + 1)


def test_errors():
    a = ember.ones(2, requires_grad=True)
    with graph.allow_mutation_on_saved_tensors():
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        with pytest.raises(RuntimeError, match="contexts cannot be nested"):
            with graph.allow_mutation_on_saved_tensors():
                pass
    with pytest.raises(AssertionError, match="Trying to backward outside of the "
                                             "'allow_mutation_on_saved_tensors' context"):
        out.backward()
    b = a.clone()
    out = (b ** 2).sum()
    b.sin_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_write_path_restored():
    plain = ember.Tensor._write
    with graph.allow_mutation_on_saved_tensors():
        assert ember.Tensor._write is not plain
    assert ember.Tensor._write is plain


def test_switches():
    assert graph.set_warn_on_accumulate_grad_stream_mismatch(False) is None
    assert graph.set_override_stale_capture_stream(True) is None
    graph.set_warn_on_accumulate_grad_stream_mismatch(True)
    graph.set_override_stale_capture_stream(False)
    with pytest.raises(RuntimeError, match="enabled must be a bool, but got int"):
        graph.set_override_stale_capture_stream(1)
    with pytest.raises(TypeError, match="expects a float, got bool"):
        graph.region_activation_memory_budget(True)
    with pytest.raises(ValueError, match=r"must be in \[0, 1\], got 2"):
        graph.region_activation_memory_budget(2)
    with pytest.raises(RuntimeError, match="can only be used inside a ember.compile region"):
        graph.region_activation_memory_budget(0.5)
