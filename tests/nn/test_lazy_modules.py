"""Lazy modules and uninitialized parameters: shape inference on the first call, the class
change, state_dict round trips, errors, optimizers, and the dispatch switch they hold on only
while they live. Expected values come from PyTorch's documented behaviour or from math."""
import copy
import gc
import pickle

import pytest

import ember
from ember import nn
from ember import _torch_function as tf
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.parameter import UninitializedParameter, UninitializedBuffer, is_lazy

USE_ERROR = "Attempted to use an uninitialized parameter in"


# ---- UninitializedParameter / UninitializedBuffer --------------------------------------------
def test_uninitialized_parameter_metadata():
    p = UninitializedParameter(dtype=ember.float64)
    assert repr(p) == str(p) == "<UninitializedParameter>"
    assert isinstance(p, nn.Parameter) and is_lazy(p)
    assert (p.dtype, p.device.type, p.requires_grad, p.is_leaf, p.grad) == (
        ember.float64, "cpu", True, True, None)
    assert p.size() == ember.Size([0]) and p.is_floating_point() and not p.is_complex()
    assert not UninitializedParameter(requires_grad=False).requires_grad


@pytest.mark.parametrize("use", [
    lambda p: p + 1, lambda p: ember.add(ember.tensor(1.0), p), lambda p: p.dim(),
    lambda p: p.numel(), lambda p: p.detach(), lambda p: p.clone(), lambda p: len(p),
    lambda p: p.zero_(), lambda p: p.requires_grad_(False),
    lambda p: nn.functional.linear(ember.ones(2), p), lambda p: ember.ones_like(p),
])
def test_ops_refuse_uninitialized(use):
    with pytest.raises(ValueError, match=USE_ERROR) as info:
        use(UninitializedParameter())
    assert "This error happens when you are using a `LazyModule`" in str(info.value)
    assert "`torch.nn.parameter.UninitializedParameter`" in str(info.value)


def test_shape_and_share_memory_raise_runtime_error():
    for t in (UninitializedParameter(), UninitializedBuffer()):
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
            t.shape
        with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized"):
            t.share_memory_()


def test_conversions():
    p = UninitializedParameter()
    assert p.float() is p and p.cpu() is p and p.to(ember.float32) is p
    d = p.double()  # a parameter's conversions give plain tensors, as PyTorch's
    assert type(d) is ember.Tensor and d.dtype == ember.float64 and d.shape == (0,)
    b = UninitializedBuffer()
    assert b.float() is b
    bd = b.double()  # a buffer's stay uninitialized buffers
    assert type(bd) is UninitializedBuffer and bd.dtype == ember.float64


def test_materialize_in_place():
    p = UninitializedParameter(requires_grad=False)
    same = p
    assert p.materialize((2, 3)) is None
    assert same is p and type(p) is nn.Parameter and p.shape == (2, 3)
    assert p.dtype == ember.float32 and not p.requires_grad and p.is_leaf
    q = UninitializedParameter()
    q.materialize(4, dtype=ember.float64)
    assert q.shape == (4,) and q.dtype == ember.float64 and q.requires_grad
    b = UninitializedBuffer(requires_grad=True)
    b.materialize([2, 0])
    assert type(b) is ember.Tensor and b.shape == (2, 0) and b.requires_grad
    with pytest.raises(AttributeError):
        q.materialize((1,))


def test_buffer_attributes():
    b = UninitializedBuffer(persistent=False)
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
    assert isinstance(b, nn.Buffer) and not isinstance(b, nn.Parameter) and not b.persistent


def test_copy_and_pickle():
    p = UninitializedParameter(requires_grad=False, dtype=ember.float64)
    c = copy.deepcopy(p)
    assert type(c) is UninitializedParameter and c is not p
    assert (c.dtype, c.requires_grad) == (ember.float64, False)
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is UninitializedParameter and not r.requires_grad
    with pytest.raises(ValueError, match=USE_ERROR):
        copy.deepcopy(UninitializedBuffer())  # PyTorch refuses this too


def test_dispatch_held_only_while_alive():
    gc.collect()
    base = tf._State.held
    p = UninitializedParameter()
    assert tf._State.held == base + 1 and tf.DISPATCHING[0]
    p.materialize((2,))
    assert tf._State.held == base
    q = UninitializedBuffer()
    assert tf._State.held == base + 1
    del q
    gc.collect()
    assert tf._State.held == base
    net = nn.LazyLinear(2)
    net(ember.ones(1, 3))
    assert tf._State.held == base
    if base == 0 and not tf._State.subclass_seen and not tf._State.modes:
        assert not tf.DISPATCHING[0]


# ---- the mixin ---------------------------------------------------------------------------------
def test_lazy_linear_first_call():
    m = nn.LazyLinear(3)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert m.has_uninitialized_params() and len(m._forward_pre_hooks) == 1
    y = m(ember.ones(2, 5))
    assert y.shape == (2, 3) and type(m) is nn.Linear
    assert repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert m.weight.shape == (3, 5) and m.bias.shape == (3,)
    assert not m._forward_pre_hooks and not m._load_state_dict_pre_hooks
    assert not hasattr(m, "_initialize_hook") and not hasattr(m, "_load_hook")
    bound = 1 / 5 ** 0.5  # kaiming_uniform(a=sqrt(5)) and the bias both use 1/sqrt(fan_in)
    assert float(m.weight.abs().max()) <= bound and float(m.bias.abs().max()) <= bound


def test_unbatched_and_no_bias():
    m = nn.LazyLinear(2, bias=False, dtype=ember.float64)
    assert m.bias is None
    assert m(ember.ones(4, dtype=ember.float64)).shape == (2,)
    assert m.weight.dtype == ember.float64 and m.in_features == 4


def test_same_weights_as_eager_with_same_seed():
    x = ember.randn(2, 3, 6, 6)
    pairs = [(lambda: nn.LazyLinear(4), lambda: nn.Linear(6, 4)),
             (lambda: nn.LazyConv2d(4, 3, groups=1), lambda: nn.Conv2d(3, 4, 3)),
             (lambda: nn.LazyConvTranspose2d(4, 3), lambda: nn.ConvTranspose2d(3, 4, 3))]
    for lazy, eager in pairs:
        ember.manual_seed(7)
        a = lazy()
        a(x)
        ember.manual_seed(7)
        b = eager()
        for p, q in zip(a.parameters(), b.parameters()):
            assert ember.equal(p, q)


def test_not_implemented_and_not_fully_initialized():
    class Bare(LazyModuleMixin, nn.Module):
        pass

    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented "
                                                  "for Bare"):
        Bare()(1)

    class Lazy(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = UninitializedParameter()

        def initialize_parameters(self, x):
            pass

    with pytest.raises(RuntimeError, match="module Lazy has not been fully initialized"):
        Lazy()(1)


def test_kwargs_reach_initialize_parameters():
    seen = {}

    class Lazy(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = UninitializedParameter()

        def initialize_parameters(self, x, *, width):
            seen["width"] = width
            self.w.materialize((width,))

        def forward(self, x, *, width):
            return x * self.w.sum()

    m = Lazy()
    m(ember.ones(1), width=3)
    assert seen == {"width": 3} and m.w.shape == (3,) and type(m) is Lazy


def test_data_parallel_replication_refused():
    with pytest.raises(RuntimeError, match="Modules with uninitialized parameters can't be used"):
        nn.LazyLinear(2)._replicate_for_data_parallel()


# ---- state_dict --------------------------------------------------------------------------------
def test_state_dict_of_uninitialized():
    sd = nn.LazyBatchNorm1d().state_dict()
    assert list(sd) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert [type(v).__name__ for v in sd.values()] == [
        "UninitializedParameter", "UninitializedParameter", "UninitializedBuffer",
        "UninitializedBuffer", "Tensor"]


def test_load_state_dict_materializes_with_loaded_shapes():
    src = nn.Linear(5, 3)
    m = nn.LazyLinear(3)
    assert repr(m.load_state_dict(src.state_dict())) == "<All keys matched successfully>"
    assert type(m) is nn.LazyLinear and m.in_features == 0
    assert ember.equal(m.weight, src.weight) and ember.equal(m.bias, src.bias)
    m(ember.ones(1, 5))
    assert type(m) is nn.Linear and m.in_features == 5 and ember.equal(m.weight, src.weight)
    m = nn.LazyLinear(3)
    m.load_state_dict(src.state_dict())
    with pytest.raises(AssertionError, match="The in_features inferred from input: 4 is not "
                                             "equal to in_features from self.weight: 5"):
        m(ember.ones(1, 4))


def test_load_lazy_into_lazy_and_into_eager():
    m = nn.LazyLinear(3)
    assert not m.load_state_dict(nn.LazyLinear(3).state_dict()).missing_keys
    assert m.has_uninitialized_params()
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        nn.Linear(5, 3).load_state_dict(nn.LazyLinear(3).state_dict())


def test_load_partial_state_dict():
    m = nn.LazyLinear(3)
    keys = m.load_state_dict({"weight": ember.ones(3, 5)}, strict=False)
    assert keys.missing_keys == ["bias"] and type(m.weight) is nn.Parameter
    assert is_lazy(m.bias)
    with pytest.raises(AttributeError, match="'Parameter' object has no attribute 'materialize'"):
        m(ember.ones(1, 5))  # PyTorch fails the same way: the weight is initialized already


def test_batchnorm_round_trip():
    src = nn.BatchNorm2d(3)
    src(ember.randn(4, 3, 2, 2))
    m = nn.LazyBatchNorm2d()
    m.load_state_dict(src.state_dict())
    for name in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
        assert ember.equal(getattr(m, name), getattr(src, name))
    assert type(m.running_mean) is ember.Tensor


# ---- modules ------------------------------------------------------------------------------------
def test_module_conversions_keep_parameters_uninitialized():
    m = nn.LazyBatchNorm1d().double()
    assert type(m.weight) is UninitializedParameter and m.weight.dtype == ember.float64
    assert type(m.running_mean) is UninitializedBuffer and m.running_mean.dtype == ember.float64
    assert m.num_batches_tracked.dtype == ember.int64
    m(ember.randn(4, 3, dtype=ember.float64))
    assert m.weight.dtype == m.running_var.dtype == ember.float64 and type(m) is nn.BatchNorm1d
    with pytest.raises(ValueError, match=USE_ERROR):
        nn.LazyLinear(2).requires_grad_(False)


def test_copies_of_a_lazy_module_initialize_separately():
    m = nn.LazyLinear(3)
    c = copy.deepcopy(m)
    assert c(ember.ones(1, 2)).shape == (1, 3) and type(c) is nn.Linear
    assert type(m) is nn.LazyLinear and is_lazy(m.weight)
    assert m(ember.ones(1, 4)).shape == (1, 3) and m.in_features == 4


@pytest.mark.parametrize("cls, nd, transposed", [
    (nn.LazyConv1d, 1, False), (nn.LazyConv2d, 2, False), (nn.LazyConv3d, 3, False),
    (nn.LazyConvTranspose1d, 1, True), (nn.LazyConvTranspose2d, 2, True),
    (nn.LazyConvTranspose3d, 3, True)])
def test_lazy_convs(cls, nd, transposed):
    m = cls(4, 2, groups=2)
    assert repr(m).startswith(f"{cls.__name__}(0, 4, kernel_size=")
    y = m(ember.ones((1, 6) + (3,) * nd))
    assert type(m) is cls.cls_to_become and m.in_channels == 6
    shape = (6, 2) if transposed else (4, 3)
    assert m.weight.shape == shape + (2,) * nd and m.bias.shape == (4,)
    assert y.shape == (1, 4) + ((4,) if transposed else (2,)) * nd
    unbatched = cls(4, 2)
    assert unbatched(ember.ones((5,) + (3,) * nd)).shape[0] == 4 and unbatched.in_channels == 5


def test_conv_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(ember.ones(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                                           r"to LazyConv2d, but got input of size: "):
        nn.LazyConv2d(4, 3)(ember.ones(3, 5, 5, 5, 5))
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for '
                                         'LazyConvTranspose1d'):
        nn.LazyConvTranspose1d(4, 3, padding_mode="reflect")


@pytest.mark.parametrize("cls, nd", [(nn.LazyBatchNorm1d, 1), (nn.LazyBatchNorm2d, 2),
                                     (nn.LazyBatchNorm3d, 3), (nn.LazyInstanceNorm1d, 1),
                                     (nn.LazyInstanceNorm2d, 2), (nn.LazyInstanceNorm3d, 3)])
def test_lazy_norms(cls, nd):
    m = cls(eps=1e-3, momentum=0.2)
    assert repr(m) == (f"{cls.__name__}(0, eps=0.001, momentum=0.2, affine=True, bias=True, "
                       f"track_running_stats=True)")
    x = ember.randn((4, 3) + (2,) * nd)
    y = m(x)
    assert type(m) is cls.cls_to_become and m.num_features == 3 and y.shape == x.shape
    assert m.weight.shape == m.bias.shape == m.running_mean.shape == (3,)
    assert ember.equal(m.weight, ember.ones(3)) and ember.equal(m.bias, ember.zeros(3))
    # only the batch norms count batches (as PyTorch's)
    assert int(m.num_batches_tracked) == (1 if "Batch" in cls.__name__ else 0)
    # the running mean moved by momentum 0.2 towards the batch mean over all but dim 1
    dims = [0] + list(range(2, x.dim()))
    assert ember.allclose(m.running_mean, 0.2 * x.mean(dims), atol=1e-6)


def test_norm_without_running_stats_or_affine():
    m = nn.LazyInstanceNorm2d(affine=False, track_running_stats=False)
    assert not m.has_uninitialized_params() and list(m.state_dict()) == []
    assert "bias=False" in repr(m)
    assert m(ember.randn(2, 3, 4, 4)).shape == (2, 3, 4, 4)
    assert type(m) is nn.InstanceNorm2d and m.num_features == 0
    bn = nn.LazyBatchNorm1d(affine=False)
    assert bn.weight is None and is_lazy(bn.running_mean)
    bn(ember.randn(5, 2))
    assert bn.running_var.shape == (2,)


def test_norm_errors():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.LazyBatchNorm2d()(ember.ones(2, 3, 4))
    # num_features is dim 1 even for an unbatched input (PyTorch's rule): then a mismatch
    with pytest.raises(ValueError, match=r"expected input's size at dim=0 to match "
                                         r"num_features \(5\), but got: 3."):
        nn.LazyInstanceNorm1d()(ember.randn(3, 5))


@pytest.mark.parametrize("make", [lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9),
                                  lambda p: ember.optim.Adam(p, lr=0.1)])
def test_optimizer_built_before_first_call(make):
    m = nn.LazyLinear(3)
    opt = make(m.parameters())
    assert all(is_lazy(p) for p in opt.param_groups[0]["params"])
    m(ember.ones(2, 4)).sum().backward()
    before = m.weight.detach().clone()
    opt.step()
    assert opt.param_groups[0]["params"][0] is m.weight and m.weight.shape == (3, 4)
    assert not ember.equal(before, m.weight)


def test_exports():
    import ember.nn.modules.batchnorm as B
    import ember.nn.modules.conv as C
    import ember.nn.modules.instancenorm as I
    import ember.nn.modules.lazy as Z
    import ember.nn.modules.linear as L
    assert Z.__all__ == ["LazyModuleMixin"]
    assert "LazyLinear" in L.__all__ and "LazyBatchNorm3d" in B.__all__
    assert "LazyConvTranspose3d" in C.__all__ and "LazyInstanceNorm2d" in I.__all__
    assert nn.UninitializedParameter is UninitializedParameter
    assert nn.modules.LazyConv1d is nn.LazyConv1d is C.LazyConv1d


def test_initialized_lazy_conv_gradcheck():
    m = nn.LazyConv1d(2, 2, dtype=ember.float64)
    x = ember.randn(1, 3, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: m(t), (x,))
    assert ember.autograd.gradcheck(lambda w: nn.functional.conv1d(x, w, m.bias), (m.weight,))
