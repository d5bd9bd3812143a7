"""``__torch_dispatch__`` on Tensor subclasses and ``Tensor._make_wrapper_subclass``."""
import numpy as np
import pytest

import ember
from ember.utils._pytree import tree_map
from tests.overrides.dispatch_helpers import logging_tensor


@pytest.fixture
def log():
    return []


@pytest.fixture
def LoggingTensor(log):
    return logging_tensor(ember, tree_map, log)


def test_wrapper_carries_metadata_without_storage():
    class Meta(ember.Tensor):
        @staticmethod
        def __new__(cls, size, **kwargs):
            return ember.Tensor._make_wrapper_subclass(cls, size, **kwargs)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    m = Meta((2, 3), dtype=ember.float64, requires_grad=True)
    assert type(m) is Meta and m.shape == (2, 3) and m.dtype is ember.float64
    assert m.requires_grad and m.is_leaf and m.stride() == (3, 1) and m.is_contiguous()
    t = Meta((2, 3), strides=(1, 2))
    assert t.stride() == (1, 2) and not t.is_contiguous() and t.dtype is ember.float32
    assert t.stride(1) == 2
    assert t.numel() == 6 and t._data.nbytes == 24 and t._data.strides == (0, 0)


def test_wrapper_options_ember_lacks_raise():
    class W(ember.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    with pytest.raises(NotImplementedError, match="dispatch_sizes_strides_policy='sizes'"):
        ember.Tensor._make_wrapper_subclass(W, (2,), dispatch_sizes_strides_policy="sizes")
    with pytest.raises(NotImplementedError, match="cpu"):
        ember.Tensor._make_wrapper_subclass(W, (2,), device="meta")
    with pytest.raises(RuntimeError, match="2 sizes but 1 strides"):
        ember.Tensor._make_wrapper_subclass(W, (2, 2), strides=(1,))


def test_logging_tensor_values_and_log(LoggingTensor, log):
    a = np.array([[1.0, -2.0], [3.0, 0.5]])
    x = LoggingTensor(ember.tensor(a))
    y = (x * 2 + 1).relu().sum(0)
    assert type(y) is LoggingTensor and y.shape == (2,)
    np.testing.assert_allclose(y.elem.numpy(), np.maximum(a * 2 + 1, 0).sum(0))
    assert log == ["aten.mul.Tensor", "aten.add.Tensor", "aten.relu.default",
                   "aten.sum.dim_IntList"]


def test_logging_tensor_gradient(LoggingTensor, log):
    v = np.array([0.5, 1.0, 2.0])
    x = LoggingTensor(ember.tensor(v), requires_grad=True)
    y = x.sin().sum()
    assert type(y) is LoggingTensor and y.requires_grad and y.grad_fn.name() == "SumBackward0"
    y.backward()
    assert log == ["aten.sin.default", "aten.sum.default", "aten.ones_like.default",
                   "aten.expand_back.default", "aten.cos.default", "aten.mul.Tensor",
                   "aten.detach.default"]
    assert type(x.grad) is LoggingTensor
    np.testing.assert_allclose(x.grad.elem.numpy(), np.cos(v), rtol=1e-6)
    x.sin().sum().backward()  # a second backward adds into .grad, as tensors
    np.testing.assert_allclose(x.grad.elem.numpy(), 2 * np.cos(v), rtol=1e-6)


def test_saved_output_of_a_wrapper_is_the_wrapper(LoggingTensor):
    # exp's backward reads its output: it must be the wrapper, not its placeholder array
    v = np.array([0.0, 1.0])
    x = LoggingTensor(ember.tensor(v), requires_grad=True)
    x.exp().sum().backward()
    np.testing.assert_allclose(x.grad.elem.numpy(), np.exp(v), rtol=1e-6)


def test_wrapper_mixed_with_a_plain_tensor(LoggingTensor, log):
    w = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = LoggingTensor(ember.tensor([[1.0, 0.0], [0.0, 2.0]]))
    out = (x @ w).sum()
    assert type(out) is LoggingTensor and log[0] == "aten.matmul.default"
    out.backward()
    assert type(w.grad) is LoggingTensor
    np.testing.assert_allclose(w.grad.elem.numpy(), [[1.0, 1.0], [2.0, 2.0]])


def test_view_of_a_wrapper_shares_its_version_counter(LoggingTensor):
    x = LoggingTensor(ember.arange(6.0))
    v = x.view(2, 3)
    assert type(v) is LoggingTensor and v._base is x and v._vc is x._vc
    np.testing.assert_allclose(v.elem.numpy(), np.arange(6.0).reshape(2, 3))


def test_subclass_returning_not_implemented_raises():
    class Refusing(ember.Tensor):
        @staticmethod
        def __new__(cls):
            return ember.Tensor._make_wrapper_subclass(cls, (2,))

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    with pytest.raises(TypeError, match=r"(?s)Multiple dispatch failed for "
                       r"'ember.ops.aten.neg.default'.*tensor subclass <class"):
        Refusing().neg()


def test_types_lists_subclasses_before_their_bases():
    seen = []

    class A(ember.Tensor):
        @staticmethod
        def __new__(cls):
            return ember.Tensor._make_wrapper_subclass(cls, (1,))

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append((cls, types))
            return ember.zeros(1)

    class B(A):
        pass
    ember.add(A(), B())
    assert seen == [(B, (B, A))]


def test_subclass_and_mode_together(LoggingTensor, log):
    from ember.utils._python_dispatch import TorchDispatchMode
    from tests.overrides.dispatch_helpers import logging_mode
    x = LoggingTensor(ember.tensor([1.0, 4.0]))
    with logging_mode(ember, TorchDispatchMode)() as mode:
        y = x.sqrt()
    assert mode.ops == ["aten.sqrt.default"] and log == ["aten.sqrt.default"]
    np.testing.assert_allclose(y.elem.numpy(), [1.0, 2.0])


def test_what_reads_a_wrappers_values_dispatches_or_refuses(LoggingTensor, log):
    x = LoggingTensor(ember.tensor([1.0, 2.0]))
    d = x.detach()
    assert type(d) is LoggingTensor and d.elem.tolist() == [1.0, 2.0]
    assert type(x.data) is LoggingTensor
    assert log == ["aten.detach.default", "aten.detach.default"]
    assert repr(x) == "LoggingTensor(size=(2,), dtype=ember.float32)"
    with pytest.raises(RuntimeError, match=r"^\.tolist\(\) is not supported for tensor "
                                            r"subclasses, got LoggingTensor$"):
        x.tolist()
    with pytest.raises(RuntimeError, match=r"^\.numpy\(\) is not supported for tensor"):
        x.numpy()
    with pytest.raises(RuntimeError, match="not supported for tensor subclasses"):
        np.asarray(x)
    with pytest.raises(NotImplementedError, match="item"):
        x[0].item()
    with pytest.raises(NotImplementedError, match="in-place ops on a _make_wrapper_subclass"):
        x.add_(1)


def test_a_subclass_keeps_its_own_members():
    class Own(ember.Tensor):
        @staticmethod
        def __new__(cls):
            return ember.Tensor._make_wrapper_subclass(cls, (1,))

        def __repr__(self):
            return "Own!"

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    assert repr(Own()) == "Own!"


def test_backward_array_shortcuts_are_skipped_for_wrappers(LoggingTensor):
    # Linear's and conv's backward compute on arrays when no graph is recorded; a
    # wrapper's arrays are placeholders, so under dispatch their ops run instead.
    a = np.array([[1.0, 2.0, -1.0]])
    lin = ember.nn.Linear(3, 2)
    lin(LoggingTensor(ember.tensor(a.tolist()))).sum().backward()
    assert type(lin.weight.grad) is LoggingTensor
    np.testing.assert_allclose(lin.weight.grad.elem.numpy(), np.repeat(a, 2, 0))
    conv = ember.nn.Conv1d(1, 1, 2, bias=False)
    conv(LoggingTensor(ember.tensor([[[1.0, 2.0, 4.0]]]))).sum().backward()
    np.testing.assert_allclose(conv.weight.grad.elem.numpy(), [[[3.0, 6.0]]])


def test_functions_reading_arrays_outside_ops_refuse_wrappers(LoggingTensor):
    x = LoggingTensor(ember.tensor([3.0, 1.0, 2.0]))
    for fn in (lambda: x.sort(), lambda: ember.unique(x), lambda: x.topk(1),
               lambda: ember.ones(3)[x > 1]):
        with pytest.raises(NotImplementedError, match="does not take a wrapper subclass"):
            fn()
    np.testing.assert_allclose(x[ember.tensor([2, 0])].elem.numpy(), [2.0, 3.0])


def test_dispatch_is_off_again_once_subclasses_are_collected():
    import gc
    from ember.autograd import dispatch

    class Short(ember.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    assert dispatch.active[0]
    del Short
    gc.collect()
    assert not dispatch.active[0]
