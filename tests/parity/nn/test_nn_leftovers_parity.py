"""Fractional max pooling, AdaptiveLogSoftmaxWithLoss, SyncBatchNorm, Module.bfloat16 and
shared memory vs PyTorch: values (fractional pooling exactly, given the samples), indices,
gradients, state_dict keys, module attributes and errors."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import DEVICE, compare, error_of

DTYPES = [np.float32, np.float64]


def F(lib):
    return lib.nn.functional


# ---------------------------------------------------------------- fractional max pooling
POOL_CASES = [  # (spatial dims, input shape, kernel, output_size, output_ratio)
    (2, (2, 3, 8, 9), 2, (4, 5), None),
    (2, (2, 3, 8, 9), 3, (6, 7), None),
    (2, (3, 11, 13), (2, 3), None, (0.6, 0.7)),
    (3, (2, 2, 6, 7, 8), 2, (3, 4, 5), None),
    (3, (3, 9, 7, 8), (2, 3, 1), None, 0.5),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd,shape,kernel,size,ratio", POOL_CASES)
def test_fractional_max_pool_values_indices_grads(nd, shape, kernel, size, ratio, dtype):
    r = np.random.default_rng(0)
    batch = shape[0] if len(shape) == nd + 2 else 1
    x = r.standard_normal(shape).astype(dtype)
    samples = r.random((batch, shape[-nd - 1], nd)).astype(dtype)

    def fn(lib, t, s):
        pool = getattr(F(lib), f"fractional_max_pool{nd}d")
        return pool(t, kernel, output_size=size, output_ratio=ratio, return_indices=True,
                    _random_samples=s.detach())
    compare(fn, x, samples)
    outs = [fn(lib, lib.tensor(x), lib.tensor(samples)) for lib in (torch, ember)]
    np.testing.assert_array_equal(outs[1][0].numpy(), outs[0][0].numpy())  # exactly


def test_fractional_max_pool_noncontiguous_and_modules():
    r = np.random.default_rng(1)
    x = r.standard_normal((2, 3, 9, 10)).astype(np.float32)
    s = r.random((2, 3, 2)).astype(np.float32)
    compare(lambda lib, t, u: F(lib).fractional_max_pool2d(t, 3, output_size=5,
                                                           _random_samples=u.detach()),
            x, s, noncontiguous=True)
    for kw in ({"output_size": 3}, {"output_ratio": 0.5}, {"output_ratio": (0.5, 0.7)}):
        mods = [lib.nn.FractionalMaxPool2d(2, **kw, _random_samples=lib.tensor(s))
                for lib in (torch, ember)]
        assert [repr(m) for m in mods][0] == repr(mods[1])
        assert mods[0].output_size == mods[1].output_size
        assert mods[0].output_ratio == mods[1].output_ratio
        assert mods[0].kernel_size == mods[1].kernel_size
        assert list(mods[0].state_dict()) == list(mods[1].state_dict()) == ["_random_samples"]
        np.testing.assert_array_equal(mods[1](ember.tensor(x)).numpy(),
                                      mods[0](torch.tensor(x)).numpy())
    m3 = [lib.nn.FractionalMaxPool3d((2, 1, 2), output_ratio=0.5, return_indices=True)
          for lib in (torch, ember)]
    assert m3[0].kernel_size == m3[1].kernel_size and m3[0].output_ratio == m3[1].output_ratio
    assert list(m3[1].state_dict()) == []


def test_fractional_max_pool_draws_from_embers_generator():
    x = ember.randn(2, 3, 8, 8)
    ember.manual_seed(3)
    a = F(ember).fractional_max_pool2d(x, 2, output_size=5)
    ember.manual_seed(3)
    b = F(ember).fractional_max_pool2d(x, 2, output_size=5)
    ember.manual_seed(3)
    u = ember.rand(2, 3, 2)
    c = F(ember).fractional_max_pool2d(x, 2, output_size=5, _random_samples=u)
    assert ember.equal(a, b) and ember.equal(a, c)


X4 = np.random.default_rng(2).standard_normal((2, 3, 8, 9)).astype(np.float32)
X5 = np.random.default_rng(2).standard_normal((2, 3, 6, 7, 8)).astype(np.float32)
S2 = np.random.default_rng(3).random((2, 3, 2)).astype(np.float32)
S3 = np.random.default_rng(3).random((2, 3, 3)).astype(np.float32)


@pytest.mark.parametrize("case", [
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 2),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 2, output_ratio=0.5),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 2, output_ratio=(0.5,) * 3),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 3, output_size=7,
                                             _random_samples=lib.tensor(S2)),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 3, output_size=(4, 8),
                                             _random_samples=lib.tensor(S2)),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 2, output_size=4,
                                             _random_samples=lib.tensor(S3)),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 2, output_size=4,
                                             _random_samples=lib.tensor(S2[:1])),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 2, output_size=4,
                                             _random_samples=lib.tensor(S2[0])),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 2, output_size=4,
                                             _random_samples=lib.tensor(S2).double()),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X5), 2, output_size=4),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), (2, 2, 2), output_size=4),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 2, output_size=(2, 2, 2)),
    lambda lib: F(lib).fractional_max_pool3d(lib.tensor(X5), 4, output_size=(3, 2, 2),
                                             _random_samples=lib.tensor(S3)),
    lambda lib: F(lib).fractional_max_pool3d(lib.tensor(X5), 4, output_size=(2, 4, 2),
                                             _random_samples=lib.tensor(S3)),
    lambda lib: F(lib).fractional_max_pool3d(lib.tensor(X5), 2, output_size=3,
                                             _random_samples=lib.tensor(S2)),
    lambda lib: F(lib).fractional_max_pool3d(lib.tensor(X4[0]), 2, output_size=3),
    lambda lib: F(lib).fractional_max_pool3d(lib.tensor(X4[0]), 2, output_size=3,
                                             _random_samples=lib.tensor(S3[:1])),
    lambda lib: F(lib).fractional_max_pool2d(lib.tensor(X4), 2, output_size=4,
                                             _random_samples=lib.tensor(S3[:, :2, :2])),
    lambda lib: lib.nn.FractionalMaxPool2d(2),
    lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
    lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.0, 0.5)),
])
def test_fractional_max_pool_errors(case):
    got = [error_of(lambda: case(lib)) for lib in (torch, ember)]
    assert got[0] == got[1], got
    assert got[0] is not None


def test_fractional_max_pool_edges():
    x = np.random.default_rng(4).standard_normal((1, 2, 6, 7)).astype(np.float32)
    s = np.random.default_rng(5).random((1, 2, 2)).astype(np.float32)
    for size in [(4, 5), (1, 1), (0, 3)]:  # the largest output a kernel of 3 allows, ...
        outs = [F(lib).fractional_max_pool2d(lib.tensor(x), 3, output_size=size,
                                             return_indices=True,
                                             _random_samples=lib.tensor(s))
                for lib in (torch, ember)]
        for t, e in zip(*outs):
            assert tuple(t.shape) == tuple(e.shape)
            np.testing.assert_array_equal(e.numpy(), t.numpy())
    empty = [F(lib).fractional_max_pool2d(lib.zeros(0, 2, 6, 7), 2, output_size=3)
             for lib in (torch, ember)]
    assert tuple(empty[0].shape) == tuple(empty[1].shape)


# --------------------------------------------------------------- adaptive log softmax
def _asm_pair(in_features, n_classes, cutoffs, dtype=np.float32, **kw):
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs,
                                            dtype=getattr(torch, np.dtype(dtype).name), **kw)
    e = ember.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs,
                                            dtype=getattr(ember, np.dtype(dtype).name), **kw)
    keys = [(k, tuple(v.shape)) for k, v in t.state_dict().items()]
    assert [(k, tuple(v.shape)) for k, v in e.state_dict().items()] == keys
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return t, e


ASM_CASES = [  # (in_features, n_classes, cutoffs, div_value, head_bias, batch shape)
    (8, 10, [3, 6], 2.0, False, (6,)),
    (8, 10, [3, 6], 2.0, True, (5,)),
    (16, 20, [5, 10, 15], 2.0, False, (12,)),
    (8, 10, [4], 4.0, True, ()),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ASM_CASES)
def test_adaptive_log_softmax(case, dtype):
    in_features, n_classes, cutoffs, div_value, head_bias, batch = case
    t, e = _asm_pair(in_features, n_classes, cutoffs, dtype, div_value=div_value,
                     head_bias=head_bias)
    r = np.random.default_rng(len(cutoffs))
    x = r.standard_normal(batch + (in_features,)).astype(dtype)
    target = r.integers(0, n_classes, batch)
    mods = {torch: t, ember: e.to(DEVICE) if DEVICE else e}

    def fn(lib, inp):
        out = mods[lib](inp, lib.tensor(target))
        assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
        return out.output, out.loss
    compare(fn, x)
    for tp, ep in zip(t.parameters(), e.parameters()):
        if tp.grad is None:
            assert ep.grad is None
        else:
            np.testing.assert_allclose(ep.grad.cpu().numpy(), tp.grad.numpy(), rtol=1e-4,
                                       atol=1e-5)
    if batch:
        compare(lambda lib, inp: mods[lib].log_prob(inp), x)
        preds = [mods[lib].predict(lib.tensor(x, device=DEVICE if lib is ember else None))
                 .cpu().numpy() for lib in (torch, ember)]
        np.testing.assert_array_equal(preds[1], preds[0])


def test_adaptive_log_softmax_attributes_and_repr():
    t, e = _asm_pair(8, 10, [3, 6], div_value=2.0)
    for name in ("in_features", "n_classes", "cutoffs", "div_value", "head_bias",
                 "shortlist_size", "n_clusters", "head_size"):
        assert getattr(t, name) == getattr(e, name), name
    assert repr(t) == repr(e)


@pytest.mark.parametrize("case", [
    lambda lib, m, x, t: m(x, t[:3]),
    lambda lib, m, x, t: m(x, t[None]),
    lambda lib, m, x, t: m(x[0], t),
    lambda lib, m, x, t: m(x, t[0]),
    lambda lib, m, x, t: m(x, lib.tensor([0, 4, 10, 2])),
    lambda lib, m, x, t: m(x, lib.tensor([0, 4, -1, 2])),
    lambda lib, m, x, t: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3]),
    lambda lib, m, x, t: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 3]),
    lambda lib, m, x, t: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10]),
    lambda lib, m, x, t: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [0, 3]),
    lambda lib, m, x, t: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, []),
])
def test_adaptive_log_softmax_errors(case):
    t, e = _asm_pair(8, 10, [3, 6], div_value=2.0)
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    target = np.array([0, 4, 9, 2])
    got = [error_of(lambda: case(lib, m, lib.tensor(x), lib.tensor(target)))
           for lib, m in ((torch, t), (ember, e))]
    # sizes print as each library's Size
    got[0] = got[0] and (got[0][0], got[0][1].replace("torch.Size", "ember.Size"))
    assert got[0] == got[1], got
    assert got[0] is not None


# --------------------------------------------------------------------- SyncBatchNorm
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("train", [True, False])
def test_sync_batch_norm_on_cpu_is_batch_norm(shape, train):
    x = np.random.default_rng(1).standard_normal(shape)
    mods = {}
    for lib in (torch, ember):
        m = lib.nn.SyncBatchNorm(3, momentum=None, dtype=lib.float64)
        m.train(train)
        mods[lib] = m.to(DEVICE) if DEVICE and lib is ember else m
    compare(lambda lib, t: mods[lib](t), x)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(mods[ember], name).cpu().numpy(),
                                   getattr(mods[torch], name).numpy())
    assert repr(mods[ember]) == repr(mods[torch])


def test_sync_batch_norm_errors_and_state_dict():
    for case in (lambda lib: lib.nn.SyncBatchNorm(3)(lib.zeros(3)),
                 lambda lib: lib.nn.SyncBatchNorm(3).eval()(lib.zeros(3)),
                 lambda lib: lib.nn.SyncBatchNorm(0)(lib.zeros(2, 0)),
                 lambda lib: lib.nn.SyncBatchNorm(3).eval()(lib.zeros(2, 4, 5))):
        got = [error_of(lambda: case(lib)) for lib in (torch, ember)]
        assert got[0] == got[1] and got[0] is not None, got
    keys = [list(lib.nn.SyncBatchNorm(3, affine=False, bias=False).state_dict())
            for lib in (torch, ember)]
    assert keys[0] == keys[1]


def test_convert_sync_batchnorm_keeps_weights_and_stats():
    nets = {}
    for lib in (torch, ember):
        net = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3),
                                lib.nn.Sequential(lib.nn.BatchNorm1d(3, affine=False)))
        net[1].running_mean.fill_(0.5)
        net[1].num_batches_tracked.fill_(7)
        net.eval()
        old = net[1]
        out = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net, process_group="pg")
        assert out is net
        assert out[1].weight is old.weight and out[1].running_mean is old.running_mean
        assert out[1].num_batches_tracked is old.num_batches_tracked
        assert out[1].process_group == "pg" and out[2][0].process_group == "pg"
        assert not out[1].training
        nets[lib] = out
    assert repr(nets[ember]) == repr(nets[torch])
    single = [lib.nn.SyncBatchNorm.convert_sync_batchnorm(lib.nn.BatchNorm1d(4))
              for lib in (torch, ember)]
    assert type(single[1]).__name__ == "SyncBatchNorm" and repr(single[1]) == repr(single[0])
    kept = [lib.nn.SyncBatchNorm.convert_sync_batchnorm(lib.nn.InstanceNorm2d(3))
            for lib in (torch, ember)]
    assert repr(kept[1]) == repr(kept[0])


# ------------------------------------------------------------ bfloat16, shared memory
def test_module_bfloat16():
    mods = [lib.nn.BatchNorm1d(2) for lib in (torch, ember)]
    for m in mods:
        assert m.bfloat16() is m
    for name in ("weight", "bias", "running_mean", "num_batches_tracked"):
        assert str(getattr(mods[0], name).dtype).split(".")[-1] == \
            getattr(mods[1], name).dtype.name
    assert type(mods[1].weight) is ember.nn.Parameter


def test_shared_memory():
    assert ember.ones(2).is_shared() is torch.ones(2).is_shared() is False
    assert ember.ones(2, device="meta").is_shared() is torch.ones(2, device="meta").is_shared()
    assert error_of(lambda: ember.ones(2, device="meta").share_memory_()) == \
        error_of(lambda: torch.ones(2, device="meta").share_memory_())
    # ember cannot move CPU memory into shared memory: it says so instead of pretending
    with pytest.raises(NotImplementedError, match="shared memory"):
        ember.ones(2).share_memory_()
    with pytest.raises(NotImplementedError, match="shared memory"):
        ember.nn.Linear(2, 2).share_memory()
    relu = ember.nn.ReLU()
    assert relu.share_memory() is relu
