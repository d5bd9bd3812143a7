"""Parity with PyTorch for tensors and creation: dtypes, inference, legacy constructors,
factories, conversions, new_*, copy_/fill_/random fills, resize_, repr."""
import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of

DTYPES = [np.float32, np.float64]


def arr(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def same(src):
    """Evaluate ``src`` with lib=torch and lib=ember; compare reprs (torch. -> ember.)."""
    out = []
    for lib in (torch, ember):
        try:
            out.append(repr(eval(src, {"lib": lib, "np": np})).replace("torch.", "ember."))
        except Exception as e:  # noqa: BLE001  (the error itself must match too)
            out.append(f"{type(e).__name__}: {str(e).splitlines()[0]}".replace("torch.", "ember."))
    return out


@pytest.fixture(autouse=True)
def _restore_default_dtype():
    yield
    torch.set_default_dtype(torch.float32)
    ember.set_default_dtype(ember.float32)


# ---- dtypes, inference, legacy constructors --------------------------------------------------
EXPRESSIONS = """
lib.half, lib.float, lib.double, lib.short, lib.int, lib.long, lib.bool, lib.uint8, lib.int8
lib.float16 is lib.half, lib.float32 is lib.float, lib.float64 is lib.double
lib.int16 is lib.short, lib.int32 is lib.int, lib.int64 is lib.long
lib.float32.is_floating_point, lib.int64.is_floating_point, lib.float16.is_floating_point
lib.float32.itemsize, lib.int16.itemsize, lib.float64.itemsize, lib.bool.itemsize
lib.get_default_dtype()
lib.tensor([True, False]).dtype
lib.tensor([1, 2]).dtype
lib.tensor([1, 2.5]).dtype
lib.tensor([True, 2]).dtype
lib.tensor(3).dtype, lib.tensor(3.0).dtype, lib.tensor(False).dtype
lib.tensor(np.array([1.0, 2.0])).dtype
lib.tensor(np.array([1, 2], dtype=np.int32)).dtype
lib.tensor(np.array([1, 2], dtype=np.float16)).dtype
lib.tensor(np.float64(1.5)).dtype, lib.tensor(np.float32(1.5)).dtype
lib.tensor(np.int16(3)).dtype, lib.tensor(np.bool_(True)).dtype
lib.tensor([]).dtype, lib.tensor([]).shape, lib.tensor([[]]).shape
lib.tensor(2.5).shape
lib.tensor([[1, 2], [3, 4]], dtype=lib.float16)
lib.tensor([1.9, -1.9], dtype=lib.int64)
lib.Tensor(2, 3).shape, lib.Tensor(2, 3).dtype
lib.Tensor([1, 2])
lib.Tensor([[1, 2]]).dtype
lib.Tensor().shape
lib.Tensor(lib.Size([2, 1])).shape
lib.FloatTensor([1, 2])
lib.FloatTensor(2, 2).shape
lib.DoubleTensor([1, 2])
lib.DoubleTensor(3).dtype
lib.LongTensor([1, 2])
lib.LongTensor(3).shape, lib.LongTensor(3).dtype
lib.IntTensor([1]).dtype, lib.BoolTensor([1, 0]), lib.ByteTensor([1]).dtype
isinstance(lib.ones(2), lib.FloatTensor), isinstance(lib.ones(2), lib.DoubleTensor)
isinstance(lib.ones(2, dtype=lib.float64), lib.DoubleTensor)
isinstance(lib.ones(2, dtype=lib.int64), lib.LongTensor)
isinstance(lib.LongTensor([1]), lib.Tensor), isinstance(lib.ones(1), lib.Tensor)
lib.Size([2, 3]), lib.Size([2, 3]).numel(), lib.ones(2, 3).shape == (2, 3)
lib.promote_types(lib.int32, lib.float16), lib.promote_types(lib.uint8, lib.int8)
""".strip().splitlines()


@pytest.mark.parametrize("src", EXPRESSIONS)
def test_dtype_and_constructor_expressions(src):
    t, e = same(src)
    assert e == t


@pytest.mark.parametrize("device", ["cuda", "meta", "cuda:1", 0])
def test_legacy_constructor_refuses_other_devices(device):
    expected = error_of(lambda: torch.Tensor([1, 2], device=device))
    assert expected is not None
    assert error_of(lambda: ember.Tensor([1, 2], device=device)) == expected
    assert ember.Tensor(2, 3, device="cpu").shape == torch.Tensor(2, 3, device="cpu").shape


def test_set_default_dtype():
    for lib in (torch, ember):
        lib.set_default_dtype(lib.float64)
        assert lib.get_default_dtype() is lib.float64
        assert lib.tensor([1.5]).dtype is lib.float64
        assert lib.ones(2).dtype is lib.float64
        assert lib.arange(3.0).dtype is lib.float64
        assert lib.rand(2).dtype is lib.float64
        assert lib.tensor([1, 2]).dtype is lib.int64
        assert lib.Tensor(2).dtype is lib.float64
        assert lib.FloatTensor(2).dtype is lib.float32
        assert (lib.ones(2, dtype=lib.int64) * 1.5).dtype is lib.float64
        assert "dtype" not in repr(lib.tensor([1.5]))
        assert repr(lib.tensor([1.5], dtype=lib.float32)).endswith("dtype=" +
                                                                   lib.__name__ + ".float32)")
        lib.set_default_dtype(lib.float32)
        assert lib.tensor([1.5]).dtype is lib.float32
        with pytest.raises(TypeError, match="only floating-point types are supported as the "
                                            "default type"):
            lib.set_default_dtype(lib.int64)


# ---- factories ----------------------------------------------------------------------------
FACTORIES = """
lib.zeros(2, 3)
lib.zeros((2, 3)).shape, lib.zeros([2, 3]).shape, lib.zeros(lib.Size([2])).shape
lib.zeros(()).shape, lib.zeros(0, 3).shape
lib.zeros(2, dtype=lib.int32)
lib.ones(2, dtype=lib.bool)
lib.ones(2, 1, dtype=lib.float64)
lib.full((2,), 3)
lib.full((2,), 3.0)
lib.full((2,), True)
lib.full((2,), 3, dtype=lib.float64)
lib.full([2, 1], -1.5)
lib.arange(5)
lib.arange(5.)
lib.arange(1, 4)
lib.arange(0, 1, 0.25)
lib.arange(1, 2.5, 0.5)
lib.arange(5, dtype=lib.float64)
lib.arange(10, 0, -3)
lib.arange(0, 1, 0.1).shape
lib.arange(-1.0, 1.0, 0.3)
lib.arange(lib.tensor(3))
lib.arange(0, 5, 2, dtype=lib.float32)
lib.arange(0.5, 3)
lib.linspace(0, 1, 5)
lib.linspace(-2, 2, 4, dtype=lib.float64)
lib.linspace(0, 1, 1)
lib.linspace(3, 10, 5).dtype
lib.eye(3)
lib.eye(2, 3)
lib.eye(2, dtype=lib.int64)
lib.empty(2, 3).shape, lib.empty(2, 3).dtype, lib.empty(0).shape
lib.empty(2, dtype=lib.int16).dtype
lib.zeros_like(lib.ones(2, dtype=lib.int32))
lib.ones_like(lib.ones(2), dtype=lib.float64)
lib.ones_like(lib.ones(2), requires_grad=True)
lib.zeros_like(lib.ones(2, 1), dtype=lib.int64)
lib.full_like(lib.ones(2, dtype=lib.int64), 2.7)
lib.full_like(lib.ones(2), 7)
lib.full_like(lib.ones(2), 7, dtype=lib.float64, requires_grad=True)
lib.empty_like(lib.ones(2, 3, dtype=lib.float64)).dtype
lib.empty_like(lib.ones(2), requires_grad=True).requires_grad
lib.rand(2, 3).dtype, lib.rand(2, 3).shape, lib.rand((4,)).shape
lib.rand(2, 3, dtype=lib.float64).dtype
lib.randn(2, requires_grad=True).requires_grad, lib.randn((2, 1)).shape
lib.randint(0, 5, (3,)).dtype, lib.randint(5, (3,)).shape
lib.randint(3, 10, (2, 2), dtype=lib.int32).dtype
lib.randperm(5).dtype, lib.randperm(5).sort().values, lib.randperm(0).shape
lib.randperm(4, dtype=lib.float64).dtype
lib.rand_like(lib.ones(2, dtype=lib.float64)).dtype
lib.randn_like(lib.ones(2), requires_grad=True).requires_grad
lib.randint_like(lib.ones(2), 3, 5).dtype, lib.randint_like(lib.ones(2), 5).shape
lib.zeros(2, dtype=lib.int64, requires_grad=True)
lib.tensor([1, 2], requires_grad=True)
lib.arange(3, requires_grad=True)
lib.zeros(-1)
lib.arange(0, 5, 0)
lib.arange(0, -5, 1)
""".strip().splitlines()


@pytest.mark.parametrize("src", FACTORIES)
def test_factories(src):
    t, e = same(src)
    assert e == t


def test_random_ranges_and_statistics():
    ember.manual_seed(0)
    u = ember.rand(4000).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.03
    n = ember.randn(4000, dtype=ember.float64).numpy()
    assert abs(n.mean()) < 0.08 and abs(n.std() - 1) < 0.08
    r = ember.randint(-3, 4, (2000,)).numpy()
    assert r.min() == -3 and r.max() == 3 and r.dtype == np.int64
    p = ember.randperm(50).numpy()
    assert sorted(p.tolist()) == list(range(50)) and not np.array_equal(p, np.arange(50))
    x = ember.empty(3000)
    assert x.uniform_(-2, 5) is x
    v = x.numpy()
    assert v.min() >= -2 and v.max() < 5 and abs(v.mean() - 1.5) < 0.2
    x.normal_(3.0, 0.5)
    assert abs(v.mean() - 3.0) < 0.05 and abs(v.std() - 0.5) < 0.05
    x.random_(0, 10)
    assert set(np.unique(v).tolist()) == set(range(10))
    x.random_(4)
    assert set(np.unique(v).tolist()) == set(range(4))
    x.bernoulli_(0.25)
    assert set(np.unique(v).tolist()) == {0.0, 1.0} and abs(v.mean() - 0.25) < 0.04
    b = ember.full((3000,), 0.8).bernoulli().numpy()
    assert abs(b.mean() - 0.8) < 0.04
    for lib in (torch, ember):  # the same version bumps in both libraries
        y = lib.zeros(3)
        y.uniform_()
        y.normal_()
        y.bernoulli_(0.5)
        assert y._version == 3


def test_manual_seed_reproducible():
    ember.manual_seed(123)
    a = (ember.rand(5), ember.randn(3), ember.randint(0, 100, (4,)), ember.randperm(6),
         ember.empty(3).uniform_(), ember.empty(3).normal_())
    ember.manual_seed(123)
    b = (ember.rand(5), ember.randn(3), ember.randint(0, 100, (4,)), ember.randperm(6),
         ember.empty(3).uniform_(), ember.empty(3).normal_())
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    ember.manual_seed(124)
    assert not np.array_equal(ember.rand(5).numpy(), a[0].numpy())
    g = ember.Generator().manual_seed(7)
    c = ember.rand(4, generator=g)
    g.manual_seed(7)
    np.testing.assert_array_equal(ember.rand(4, generator=g).numpy(), c.numpy())
    state = ember.get_rng_state()
    d = ember.randn(3)
    ember.set_rng_state(state)
    np.testing.assert_array_equal(ember.randn(3).numpy(), d.numpy())


# ---- numpy interop, properties --------------------------------------------------------------
def test_from_numpy_and_numpy_share_memory():
    for lib in (torch, ember):
        a = np.zeros(3, dtype=np.float64)
        t = lib.from_numpy(a)
        assert t.dtype is lib.float64
        t[0] = 5.0
        a[1] = 7.0
        assert a.tolist() == [5.0, 7.0, 0.0] and t.tolist() == [5.0, 7.0, 0.0]
        n = t.numpy()
        n[2] = 1.0
        assert t[2].item() == 1.0
        x = lib.ones(2, 2)
        x.numpy()[0, 0] = 3.0
        assert x[0, 0].item() == 3.0
        assert lib.from_numpy(np.arange(3, dtype=np.int32)).dtype is lib.int32
        d = lib.ones(2, requires_grad=True)
        d.detach().numpy()[0] = 4.0
        assert d[0].item() == 4.0


def test_properties():
    for lib in (torch, ember):
        x = lib.ones(2, 3)
        assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-1) == 3 and x.shape[0] == 2
        assert (x.dim(), x.ndim, x.numel(), lib.tensor(1.).dim()) == (2, 2, 6, 0)
        assert x.stride() == (3, 1) and x.t().stride() == (1, 3) and x[:, 1].stride() == (3,)
        assert x.tolist() == [[1.0] * 3] * 2
        assert lib.tensor(3.5).item() == 3.5 and lib.tensor([[7]]).item() == 7
        assert type(lib.tensor(3).item()) is int and type(lib.tensor(True).item()) is bool
        assert type(lib.tensor(2.0).item()) is float
        assert lib.tensor(5).tolist() == 5
        a = lib.ones(2, requires_grad=True)
        assert a.is_leaf and a.requires_grad and a.grad_fn is None
        b = a * 2
        assert not b.is_leaf and b.requires_grad and b.grad_fn is not None
        assert x.is_leaf and not x.requires_grad and x.grad_fn is None
        assert len(lib.ones(4, 2)) == 4
        assert float(lib.tensor([2.5])) == 2.5 and int(lib.tensor(3)) == 3
        assert [3, 4, 5][lib.tensor(1)] == 4


def test_data_attribute():
    for lib in (torch, ember):
        a = lib.ones(3, requires_grad=True)
        d = a.data
        assert not d.requires_grad and d.is_leaf
        d[0] = 5.0
        assert a[0].item() == 5.0  # shares storage
        a.data = lib.zeros(2)
        assert a.shape == (2,) and a.requires_grad and a.tolist() == [0.0, 0.0]
        (a * 3).sum().backward()
        assert a.grad.tolist() == [3.0, 3.0]


# ---- conversions ----------------------------------------------------------------------------
CONVERSIONS = """
lib.ones(2).double()
lib.ones(2).half()
lib.tensor([1.7, -1.7]).long()
lib.tensor([1.7, -1.7]).int()
lib.tensor([1.7, 0.]).bool()
lib.tensor([1, 0]).float()
lib.tensor([3, 0]).short(), lib.tensor([3]).char(), lib.tensor([3]).byte()
lib.ones(2).to(lib.int32)
lib.ones(2).to(dtype=lib.float64)
lib.ones(2).to(lib.ones(1, dtype=lib.int64))
lib.ones(2).to("cpu", lib.float64)
lib.ones(2).to("cpu")
lib.ones(2).type()
lib.ones(2, dtype=lib.float64).type(), lib.ones(2, dtype=lib.int64).type()
lib.ones(2).type(lib.float64)
lib.ones(2).type('torch.LongTensor')
lib.ones(2).type(lib.DoubleTensor)
lib.ones(2).type_as(lib.ones(1, dtype=lib.int32))
lib.ones(2, requires_grad=True).double()
lib.ones(2, requires_grad=True).long()
lib.ones(2, dtype=lib.int32).new([1, 2])
lib.ones(2, dtype=lib.int32).new(3).shape, lib.ones(2).new().shape
lib.ones(2, dtype=lib.int32).new_zeros(2, 2)
lib.ones(2, dtype=lib.int32).new_zeros((2,))
lib.ones(2).new_ones(3, dtype=lib.float64)
lib.ones(2, dtype=lib.float64).new_empty(2).dtype, lib.ones(2).new_empty((2, 1)).shape
lib.ones(2, dtype=lib.float64).new_full((2,), 5)
lib.ones(2, dtype=lib.int64).new_full((2,), 2.5)
lib.ones(2, dtype=lib.float64).new_tensor([1, 2])
lib.ones(2, dtype=lib.float64).new_tensor([1, 2], dtype=lib.int32)
lib.ones(2).new_tensor([1., 2.], requires_grad=True)
lib.ones(2, dtype=lib.float64).new_zeros(2, requires_grad=True)
lib.ones(2, dtype=lib.float64).new_ones((1, 2), requires_grad=True)
lib.zeros(2, 3).copy_(lib.tensor([1, 2, 3]))
lib.zeros(2, dtype=lib.int32).copy_(lib.tensor([1.7, 2.2]))
lib.zeros(2, 3).copy_(lib.ones(2))
lib.ones(2).zero_()
lib.ones(2, dtype=lib.int64).fill_(3.7)
lib.ones(2).fill_(lib.tensor(2))
lib.ones(2).fill_(lib.ones(2))
lib.ones(2, 3).resize_(3, 2)
lib.arange(6.).resize_(2, 2)
lib.arange(4.).resize_(5).shape
lib.arange(4.).resize_as_(lib.ones(2, 2))
lib.ones(2, requires_grad=True).resize_(3)
lib.ones(2, 3).view(lib.float64).shape
lib.ones(2, 4).view(lib.int32)
lib.tensor(1.).view(lib.float64)
lib.ones(4, 2).t().view(lib.float64)
""".strip().splitlines()


@pytest.mark.parametrize("src", CONVERSIONS)
def test_conversions(src):
    t, e = same(src)
    assert e == t


@pytest.mark.parametrize("dt", DTYPES, ids=["f32", "f64"])
def test_conversion_gradients(dt):
    compare(lambda lib, x: x.to(lib.float64) * 2, arr(3, dtype=dt))
    compare(lambda lib, x: x.double().float().sin(), arr(3, dtype=dt))
    compare(lambda lib, x: x.to(lib.float32) * x.to(lib.float64), arr(2, 2, dtype=dt))
    compare(lambda lib, x: x.type(lib.float64).exp(), arr(3, dtype=dt))
    compare(lambda lib, x: x.type_as(lib.ones(1, dtype=lib.float16)).float(), arr(3, dtype=dt),
            rtol=1e-2, atol=1e-2)
    compare(lambda lib, x: x.long(), arr(3, dtype=dt))


def test_gradient_through_to_float64_arrives_in_float32():
    for lib in (torch, ember):
        a = lib.ones(3, requires_grad=True)
        b = a.to(lib.float64)
        assert b.dtype is lib.float64 and b.requires_grad
        (b * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        assert a.grad.dtype is lib.float32 and a.grad.tolist() == [1.0, 2.0, 3.0]


def test_copy_gradients(tmp_path):
    def fn(lib, x, s):
        y = x * 1
        y.copy_(s)  # broadcast (3,) -> (2, 3)
        return y * x
    compare(fn, arr(2, 3), arr(3, seed=1))
    compare(fn, arr(2, 3, dtype=np.float32), arr(3, seed=1, dtype=np.float32))

    def fn2(lib, x, s):  # dtype conversion: the float64 source gets a float64 grad
        y = x * 1
        y[0].copy_(s.double())
        return y
    compare(fn2, arr(2, 3, dtype=np.float32), arr(3, seed=1, dtype=np.float32))

    def fn3(lib, x, s):
        y = x * 1
        y.fill_(s.sum())
        return y
    compare(fn3, arr(2, 3), arr(3, seed=1))


def test_inplace_fills_on_non_leaf_grad():
    compare(lambda lib, x: (x * 1).zero_() + x, arr(2, 3))
    compare(lambda lib, x: (x * 1)[0].fill_(2.0) * x[1], arr(2, 3))


# ---- repr -----------------------------------------------------------------------------------
REPRS = """
lib.tensor([1, 2, 3])
lib.tensor([-4, 25, 300])
lib.tensor([1., 2., 3.])
lib.tensor([1.5, 2.25, -3.125])
lib.tensor([-1., 2.])
lib.tensor([-0.5, 0.25])
lib.tensor([1e-5, 1.0])
lib.tensor([1e10, 1.0])
lib.tensor([1e-10, 2e-10])
lib.tensor([123456.789, 0.001])
lib.tensor([1e8, 1.]), lib.tensor([1e9, 1.]), lib.tensor([12345678., 1.])
lib.tensor([0.0001, 1.0]), lib.tensor([0.00001, 0.0]), lib.tensor([100000., 0.5])
lib.tensor([1e-5, 1e5]), lib.tensor([0.1, 1000.]), lib.tensor([0.1, 10000.])
lib.tensor(3.5), lib.tensor(3), lib.tensor(-0.0), lib.tensor(1e-20), lib.tensor(True)
lib.tensor([]), lib.zeros(0, 3), lib.zeros(0, dtype=lib.int64)
lib.zeros(0, dtype=lib.float64), lib.zeros(2, 0, dtype=lib.int32)
lib.tensor([[1.5, 2.], [3., 4.]])
lib.tensor([[1e-3, 12.5], [1., 2.]])
lib.arange(24.).view(2, 3, 4)
lib.arange(24).view(2, 3, 2, 2) - 5
lib.arange(30.).view(3, 10) * 1.5
lib.arange(12.).view(3, 4) - 5.5
lib.ones(2, 2).t()
lib.tensor([True, False])
lib.tensor([[True], [False]])
lib.tensor([1., 2.], dtype=lib.float64)
lib.tensor([[1.5]], dtype=lib.float64)
lib.tensor([1.5], dtype=lib.float16)
lib.tensor([1, 2], dtype=lib.int32)
lib.tensor([1, 2], dtype=lib.uint8), lib.tensor([1, 2], dtype=lib.int16)
lib.tensor([1, 2], dtype=lib.int8)
lib.tensor([1., 2.], requires_grad=True)
lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
lib.tensor([1., 2.], requires_grad=True) * 2
lib.ones(2, requires_grad=True).exp()
lib.ones(2, 3, requires_grad=True)[0]
lib.ones(2, 3, requires_grad=True)[:, 1:]
lib.ones(2, 3, requires_grad=True)[None]
lib.ones(2, 3, requires_grad=True).view(6)
lib.ones(2, 3, requires_grad=True).t()
lib.ones(2, 3, requires_grad=True).double()
lib.arange(2000.)
lib.arange(5000).view(50, 100)
lib.arange(3000.).view(10, 3, 100) / 7
lib.arange(1001) % 3 == 0
lib.tensor([float('nan'), float('inf'), -float('inf'), 1.5])
lib.tensor([float('nan'), 1.0]), lib.tensor([float('inf'), 2.0, 1e-7])
lib.linspace(0, 1, 7)
lib.arange(-3, 3)
lib.arange(100.)
lib.randn(3, 30, generator=None).abs().lt(-1)
""".strip().splitlines()


@pytest.mark.parametrize("src", REPRS)
def test_repr(src):
    t, e = same(src)
    assert e == t


def test_repr_grad_fn_where_names_agree():
    t, e = same("lib.ones(2, 2, requires_grad=True) @ lib.ones(2, 2)")
    if "MmBackward0" in e:
        assert e == t
    for lib in (torch, ember):
        x = lib.ones(2, requires_grad=True)
        assert repr(x + 1).endswith("grad_fn=<AddBackward0>)")
        assert repr(x.detach()) == "tensor([1., 1.])"


def test_size_repr():
    assert repr(ember.Size([2, 3])) == repr(torch.Size([2, 3])).replace("torch.", "ember.")
    assert repr(ember.ones(2, 3).shape) == "ember.Size([2, 3])"
    assert repr(ember.ones(()).shape) == "ember.Size([])"
