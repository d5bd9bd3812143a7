"""Parity with torch: the limited unsigned dtypes, storages, resize_/set_, nonzero_static,
addmv_/as_strided_ as functions, and complex random draws (dtypes, shapes, errors)."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.backend import dtypes
from ember._functions import storage_dtypes as _SD
from tests.parity.compare import compare, error_of, DEVICE

UINTS = ["uint16", "uint32", "uint64"]


def _dt(lib, name):
    """torch.<name>, or ember's dtype of that name (also before ember exports it)."""
    return getattr(torch, name) if lib is torch else dtypes.from_name(name)


def _on(lib):
    """Where each library makes its tensors: ember's on the parity device."""
    return {} if lib is torch or DEVICE is None else {"device": DEVICE}


def _both(fn):
    """fn(lib) for torch and ember; the results (host lists or errors) must agree."""
    out = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(("ok", fn(lib)))
            except Exception as e:  # noqa: BLE001 - compared below
                out.append((type(e).__name__, str(e)))
    assert out[0] == out[1], out
    return out[0]


# ---- unsigned dtypes ------------------------------------------------------------------------
@pytest.mark.parametrize("name", UINTS)
def test_uint_creation_and_casts(name):
    top = 2 ** (8 * np.dtype(name).itemsize) - 1

    def run(lib):
        dt, on = _dt(lib, name), _on(lib)
        t = lib.tensor([1, top, 5], dtype=dt, **on)
        return (t.tolist(), str(t.dtype).split(".")[-1], lib.zeros(2, dtype=dt, **on).tolist(),
                lib.full((2,), 7, dtype=dt, **on).tolist(), t.to(lib.float64).tolist(),
                lib.tensor([1.5, 2.7], **on).to(dt).tolist(), t.element_size(),
                lib.iinfo(dt).max, lib.iinfo(dt).bits, (t == 5).tolist(), (t * 2).dtype == dt,
                t.sum().item(), t.sort().indices.tolist(), t.is_floating_point())
    _both(run)


@pytest.mark.parametrize("name", UINTS)
@pytest.mark.parametrize("op", [
    lambda lib, dt: lib.arange(5, dtype=dt),
    lambda lib, dt: lib.linspace(0, 5, 3, dtype=dt),
    lambda lib, dt: lib.eye(2, dtype=dt),
    lambda lib, dt: lib.randperm(3, dtype=dt),
    lambda lib, dt: lib.rand(2, dtype=dt),
    lambda lib, dt: lib.empty(2, dtype=dt).random_(),
    lambda lib, dt: lib.ones(2, dtype=dt).bitwise_not(),
    lambda lib, dt: lib.ones(2, dtype=dt).logical_not(),
    lambda lib, dt: lib.ones(2, dtype=dt) + lib.ones(2, dtype=lib.int32),
    lambda lib, dt: lib.promote_types(dt, lib.uint8),
    lambda lib, dt: lib.promote_types(dt, lib.float16),
    lambda lib, dt: lib.result_type(lib.ones(2, dtype=dt), 1),
    lambda lib, dt: lib.empty(2, dtype=dt).random_(-1, 5),
    lambda lib, dt: dt.to_complex(),
    lambda lib, dt: lib.ones(2, dtype=dt) < 2,
    lambda lib, dt: lib.ones(2, dtype=dt).le(lib.ones(2, dtype=dt)),
    lambda lib, dt: (lib.ones(2, dtype=dt) > 1.5).tolist(),
    lambda lib, dt: lib.ones(2, dtype=dt).max(),
    lambda lib, dt: lib.ones(2, dtype=dt).max(0),
    lambda lib, dt: lib.ones(2, dtype=dt).amin(),
    lambda lib, dt: lib.ones(2, dtype=dt).argmax(),
    lambda lib, dt: lib.aminmax(lib.ones(2, dtype=dt)),
    lambda lib, dt: lib.min(lib.ones(2, dtype=dt), lib.ones(2, dtype=dt)),
    lambda lib, dt: lib.ones(2, dtype=dt).clamp(0, 1),
    lambda lib, dt: lib.ones(2, dtype=dt).clamp(min=0),
    lambda lib, dt: lib.ones(2, dtype=dt).clamp(lib.ones(2, dtype=dt), lib.ones(2, dtype=dt)),
    lambda lib, dt: lib.ones(2, dtype=dt).topk(1),
    lambda lib, dt: lib.ones(2, 2, dtype=dt).flip(0),
    lambda lib, dt: lib.rot90(lib.ones(2, 2, dtype=dt)),
    lambda lib, dt: lib.ones(2, 3, dtype=dt).t().flip(1).shape,
    lambda lib, dt: lib.ones(2, 3, dtype=dt)[:, ::2].flip(0),
    lambda lib, dt: lib.flipud(lib.ones(2, 3, dtype=dt)).shape,
    lambda lib, dt: lib.fliplr(lib.ones(2, 3, dtype=dt)),
    lambda lib, dt: lib.ones(2, dtype=dt).nonzero(),
    lambda lib, dt: lib.ones(2, dtype=dt).is_signed(),
    lambda lib, dt: lib.ones(2, dtype=dt).repeat_interleave(2).tolist(),
    lambda lib, dt: lib.ones(2, dtype=dt).sort(descending=True).values.tolist(),
])
def test_uint_errors_and_promotion(name, op):
    _both(lambda lib: str(op(lib, _dt(lib, name))).replace("ember.", "torch."))


def test_uint64_past_int64_and_numpy():
    _both(lambda lib: lib.tensor([2 ** 64 - 1, 2 ** 63], dtype=_dt(lib, "uint64")).tolist())
    _both(lambda lib: lib.tensor([2 ** 64], dtype=_dt(lib, "uint64")))
    _both(lambda lib: lib.tensor([-1], dtype=_dt(lib, "uint64")))
    _both(lambda lib: lib.tensor([-1], dtype=_dt(lib, "uint32")).tolist())
    _both(lambda lib: str(lib.from_numpy(np.array([3, 4], dtype=np.uint16)).dtype)
          .split(".")[-1])
    _both(lambda lib: lib.from_numpy(np.array([1], dtype=object)))


def test_torch_checkpoint_with_uint_tensors(tmp_path):
    path = tmp_path / "u.pt"
    state = {"a": torch.tensor([1, 2 ** 32 - 1], dtype=torch.uint32),
             "b": torch.tensor([7, 8, 9], dtype=torch.uint16)[1:],
             "c": torch.tensor([2 ** 64 - 1], dtype=torch.uint64)}
    torch.save(state, path)
    loaded = ember.load(path)
    for key, t in state.items():
        assert loaded[key].dtype.name == str(t.dtype).split(".")[-1]
        assert loaded[key].tolist() == t.tolist()


# ---- storages -------------------------------------------------------------------------------
def test_storage_bytes_and_elements():
    def run(lib):
        x = lib.arange(6, dtype=lib.float32, **_on(lib))
        v = x[2:].view(2, 2)
        us, ts = v.untyped_storage(), v.storage()
        ts[0] = 100.0
        us[4:8].fill_(0)
        return (us.tolist(), us.nbytes(), len(us), us.element_size(), us[-1],
                us.data_ptr() == x.data_ptr(), ts.tolist(), ts.size(), ts.nbytes(),
                ts.element_size(), ts[-1], ts.type(), x.tolist(), v.storage_offset())
    _both(run)


@pytest.mark.parametrize("fn", [
    lambda lib, s: s[24],
    lambda lib, s: s[1.5],
    lambda lib, s: s.fill_(1.5),
    lambda lib, s: s.copy_(lib.UntypedStorage(4)),
    lambda lib, s: lib.UntypedStorage([1, 2, 300]).tolist(),
    lambda lib, s: s.clone().tolist() == s.tolist(),
    lambda lib, s: lib.zeros(2).storage()[1:2],
])
def test_storage_errors(fn):
    def run(lib):
        s = lib.arange(6, dtype=lib.float32, **_on(lib)).untyped_storage()
        return fn(torch if lib is torch else _StorageNames(), s)
    _both(run)


class _StorageNames:
    """ember with the storage classes (also before ember/__init__ exports them)."""
    UntypedStorage = _SD.UntypedStorage

    def __getattr__(self, name):
        return getattr(ember, name)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.arange(6).view(2, 3).t().resize_(6).tolist(),
    lambda lib: lib.arange(6).resize_(2).resize_(6).tolist(),
    lambda lib: lib.arange(6.0).resize_(2, 2).stride(),
    lambda lib: lib.arange(6.0).resize_(0).untyped_storage().nbytes(),
    lambda lib: lib.zeros(2, requires_grad=True).resize_(3),
    lambda lib: lib.zeros(2).resize_as_(lib.zeros(3, 1)).shape,
    lambda lib: lib.zeros(2).resize_(2, -1),
    lambda lib: lib.zeros(2).resize_(2.0),
    lambda lib: lib.zeros(2).resize_(),
    lambda lib: lib.zeros(2).resize_([3, 1]).shape,
])
def test_resize(fn):
    _both(lambda lib: fn(lib) if not isinstance(fn(lib), tuple) else list(fn(lib)))


def test_resize_keeps_aliasing_when_shrinking():
    def run(lib):
        x = lib.arange(6.0, **_on(lib))
        y = x[2:]
        y.resize_(2)
        y[0] = 100.0
        out = [x.tolist(), y.storage_offset()]
        y.resize_(10)
        return out + [y.storage_offset(), y[:4].tolist(), y.untyped_storage().nbytes()]
    _both(run)


@pytest.mark.parametrize("fn", [
    lambda lib, y: lib.zeros(2).set_(y.untyped_storage(), 1, (2, 2), (2, 1)).tolist(),
    lambda lib, y: lib.zeros(2).set_(y.untyped_storage(), 1, (2,)).storage_offset(),
    lambda lib, y: lib.zeros(2).set_(y).is_set_to(y),
    lambda lib, y: y.is_set_to(y[1:]),
    lambda lib, y: lib.zeros(2).set_(y, 1, (2,)).tolist(),
    lambda lib, y: lib.zeros(2).set_(y.storage()).tolist(),
    lambda lib, y: lib.zeros(2).set_().shape,
    lambda lib, y: lib.zeros(2).set_(lib.arange(3)),
    lambda lib, y: lib.zeros(2).set_(lib.arange(3).storage()),
    lambda lib, y: lib.zeros(2).set_(y.untyped_storage(), 0, (2,), (1, 1)),
    lambda lib, y: lib.zeros(2).set_(y.untyped_storage(), 0, (2,), (-1,)),
    lambda lib, y: lib.zeros(2).set_(y.untyped_storage(), -1, (2,)),
    lambda lib, y: lib.zeros(2, requires_grad=True).set_(lib.zeros(3)),
])
def test_set_(fn):
    _both(lambda lib: (lambda r: list(r) if isinstance(r, tuple) else r)(
        fn(lib, lib.arange(6.0))))


def test_set_writes_through():
    def run(lib):
        x, y = lib.zeros(2, **_on(lib)), lib.arange(6.0, **_on(lib))
        x.set_(y.untyped_storage(), 1, (2, 2), (2, 1))
        x[0, 0] = 9.0
        return y.tolist()
    _both(run)


# ---- nonzero_static, addmv_, as_strided_ ----------------------------------------------------
@pytest.mark.parametrize("size, fill", [(0, -1), (2, -1), (6, -1), (9, 7)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_nonzero_static_values(size, fill, dtype):
    a = (np.random.default_rng(0).random((3, 4)) > 0.5).astype(dtype)
    compare(lambda lib, x: lib.nonzero_static(x, size=size, fill_value=fill), a, grad=False)
    compare(lambda lib, x: x.nonzero_static(size=size), a, grad=False, noncontiguous=True)


def test_nonzero_static_edge_shapes():
    compare(lambda lib, x: lib.nonzero_static(x, size=2), np.array(3.0), grad=False)
    compare(lambda lib, x: lib.nonzero_static(x, size=2), np.zeros((2, 0, 3)), grad=False)
    for name in UINTS:  # PyTorch has no kernel for them
        _both(lambda lib: lib.nonzero_static(lib.ones(2, dtype=_dt(lib, name)), size=3))
        _both(lambda lib: lib.ones(2, dtype=_dt(lib, name)).nonzero())


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nonzero_static(x, size=-1),
    lambda lib, x: lib.nonzero_static(x, size=2.0),
    lambda lib, x: lib.nonzero_static(x, size=True),
    lambda lib, x: lib.nonzero_static(x, size=2, fill_value=2.5),
    lambda lib, x: lib.nonzero_static(x, size=2, out=lib.empty(2, 1, dtype=lib.int32)),
])
def test_nonzero_static_errors(call):
    assert error_of(lambda: call(torch, torch.ones(3))) == \
        error_of(lambda: call(ember, ember.ones(3)))


def test_addmv_and_as_strided_functions():
    def run(lib, addmv_, as_strided_):
        x = lib.zeros(2, dtype=lib.float64)
        addmv_(x, lib.ones(2, 3, dtype=lib.float64), lib.ones(3, dtype=lib.float64),
               beta=2, alpha=3)
        y = lib.arange(6.0)
        as_strided_(y, (2, 2), (1, 2), 1)
        return x.tolist(), y.tolist(), y.stride()
    assert run(torch, torch.addmv_, torch.as_strided_) == run(ember, _SD.addmv_,
                                                              _SD.as_strided_)


# ---- complex random draws -------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda lib, dt: lib.randn(2, 3, dtype=dt),
    lambda lib, dt: lib.rand(4, dtype=dt),
    lambda lib, dt: lib.randn_like(lib.zeros(2, dtype=dt)),
    lambda lib, dt: lib.rand_like(lib.zeros(2, dtype=dt)),
    lambda lib, dt: lib.zeros(3, dtype=dt).normal_(1.0, 2.0),
    lambda lib, dt: lib.zeros(3, dtype=dt).uniform_(1, 2),
    lambda lib, dt: lib.normal(0.0, 1.0, (2,), dtype=dt),
    lambda lib, dt: lib.normal(lib.zeros(2, dtype=dt), 1.0),
    lambda lib, dt: lib.normal(lib.zeros(2, dtype=dt), lib.ones(2)),
    lambda lib, dt: lib.normal(lib.zeros(2), lib.ones(2, dtype=dt)),
    lambda lib, dt: lib.randint(0, 5, (2,), dtype=dt),
    lambda lib, dt: lib.zeros(2, dtype=dt).random_(),
    lambda lib, dt: lib.zeros(2, dtype=dt).random_(0, 5),
    lambda lib, dt: lib.zeros(2, dtype=dt).geometric_(0.5),
    lambda lib, dt: lib.zeros(2, dtype=dt).uniform_(2, 1),
    lambda lib, dt: lib.zeros(2, dtype=dt).normal_(0, -1.0),
    lambda lib, dt: lib.randn(2, dtype=dt, requires_grad=True).requires_grad,
])
@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_complex_draws_shapes_dtypes_errors(make, name):
    def run(lib):
        r = make(lib, getattr(lib, name))
        if isinstance(r, (torch.Tensor, ember.Tensor)):
            return tuple(r.shape), str(r.dtype).split(".")[-1]
        return r
    _both(run)


@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_complex_draw_moments_match_torch(name):
    n = 20000
    torch.manual_seed(0)
    ember.manual_seed(0)
    for make in (lambda lib: lib.randn(n, dtype=getattr(lib, name)),
                 lambda lib: lib.rand(n, dtype=getattr(lib, name)),
                 lambda lib: lib.zeros(n, dtype=getattr(lib, name)).normal_(1.0, 2.0)):
        t, e = (lib.view_as_real(make(lib)) for lib in (torch, ember))
        np.testing.assert_allclose(e.mean(0).numpy(), t.mean(0).numpy(), atol=0.06)
        np.testing.assert_allclose(e.std(0).numpy(), t.std(0).numpy(), atol=0.06)


# ---- torch.embedding_bag --------------------------------------------------------------------
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("offsets, include_last, padding_idx", [
    ([0, 2, 2], False, None), ([0, 2, 2], False, 3), ([0, 2, 5], True, None),
    ([0, 2, 5], True, 0), ([0, 2], False, -1), ([0, 2], False, -2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_bag(mode, offsets, include_last, padding_idx, dtype):
    w = np.random.default_rng(1).standard_normal((4, 3)).astype(dtype)
    idx, offs = np.array([0, 2, 1, 3, 3]), np.array(offsets)
    compare(lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, mode, False, None,
                                                   include_last, padding_idx), w, idx, offs)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag_noncontiguous_weight(mode):
    w = np.random.default_rng(4).standard_normal((4, 3)).astype(np.float32)
    compare(lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, mode), w,
            np.array([0, 2, 1, 3, 3]), np.array([0, 2]), noncontiguous=True)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_per_sample_weights(padding_idx):
    w = np.random.default_rng(2).standard_normal((4, 3))
    psw = np.random.default_rng(3).standard_normal(5)
    compare(lambda lib, w, i, o, p: lib.embedding_bag(w, i, o, False, 0, False, p, False,
                                                      padding_idx),
            w, np.array([0, 2, 1, 3, 3]), np.array([0, 2]), psw)


@pytest.mark.parametrize("call", [
    lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, 3),
    lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, "sum"),
    lambda lib, w, i, o: lib.embedding_bag(w, i, None),
    lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, 2, False, lib.ones(5)),
    lambda lib, w, i, o: lib.embedding_bag(w, i, o + 1, False, 0),
])
def test_embedding_bag_errors(call):
    def run(lib):
        return call(lib, lib.ones(4, 3), lib.tensor([0, 2, 1, 3, 3]), lib.tensor([0, 2]))
    t, e = error_of(lambda: run(torch)), error_of(lambda: run(ember))
    assert (t[0], t[1].split("\n")[0]) == (e[0], e[1].split("\n")[0])


# ---- unsigned dtypes: which ops compute, which refuse (torch's kernels) ----------------------
def _vec(lib, dt):
    return lib.tensor([3, 1, 2, 0], dtype=dt, **_on(lib))


def _mat(lib, dt):
    return lib.tensor([[3, 1, 2], [0, 5, 4]], dtype=dt, **_on(lib))


def _idx(lib, *values):
    return lib.tensor(list(values), dtype=lib.int64, **_on(lib))


def _summary(result):
    """Tensors as (dtype name, shape, values); tuples item by item; numbers as they are."""
    if isinstance(result, (torch.Tensor, ember.Tensor)):
        return str(result.dtype).split(".")[-1], tuple(result.shape), result.tolist()
    if isinstance(result, (tuple, list)):
        return tuple(_summary(r) for r in result)
    return result


def _setitem(t, index, value):
    t[index] = value
    return t


_REFUSED_OR_COMPUTED = {
    # add and sub: no kernel ("add_stub"), also in place, reflected, with alpha, out=, 0-d
    "add": lambda lib, dt: _vec(lib, dt) + _vec(lib, dt),
    "add_scalar": lambda lib, dt: 1 + _vec(lib, dt),
    "add_0d_long": lambda lib, dt: _vec(lib, dt) + lib.tensor(1, **_on(lib)),
    "add_alpha": lambda lib, dt: lib.add(_vec(lib, dt), _vec(lib, dt), alpha=2),
    "add_": lambda lib, dt: _vec(lib, dt).add_(1),
    "add_out": lambda lib, dt: lib.add(_vec(lib, dt), _vec(lib, dt),
                                       out=lib.empty(4, dtype=dt, **_on(lib))),
    "add_empty": lambda lib, dt: lib.ones(0, dtype=dt, **_on(lib)) + 1,
    "add_float": lambda lib, dt: _vec(lib, dt) + lib.ones(4, **_on(lib)),
    "add_float_scalar": lambda lib, dt: _vec(lib, dt) + 1.5,
    "sub": lambda lib, dt: _vec(lib, dt) - 1,
    "rsub": lambda lib, dt: 5 - _vec(lib, dt),
    "sub_": lambda lib, dt: _vec(lib, dt).sub_(_vec(lib, dt)),
    "isub": lambda lib, dt: _vec(lib, dt).__isub__(1),
    "sub_float": lambda lib, dt: lib.ones(4, **_on(lib)) - _vec(lib, dt),
    "diff": lambda lib, dt: lib.diff(_vec(lib, dt)),
    "diff_float_prepend": lambda lib, dt: _vec(lib, dt).diff(prepend=lib.ones(1, **_on(lib))),
    "trapezoid": lambda lib, dt: lib.trapezoid(_vec(lib, dt)),
    "dist": lambda lib, dt: lib.dist(_vec(lib, dt), _vec(lib, dt)),
    # mul computes, wrapping; a scalar out of range wraps into the dtype first
    "mul_negative": lambda lib, dt: _vec(lib, dt) * -1,
    "mul_large": lambda lib, dt: _vec(lib, dt) * (2 ** 40 + 3),
    "eq_large": lambda lib, dt: _vec(lib, dt) == 2 ** 40,
    "and_negative": lambda lib, dt: _vec(lib, dt) & -1,
    "div_negative": lambda lib, dt: _vec(lib, dt) / -1,
    "div_0d_negative": lambda lib, dt: _vec(lib, dt) / lib.tensor(-1, **_on(lib)),
    "copysign_negative": lambda lib, dt: lib.copysign(_vec(lib, dt), -1),
    "pow_negative": lambda lib, dt: _vec(lib, dt) ** -1,
    "lt_negative": lambda lib, dt: _vec(lib, dt) < -1,
    # unary
    "neg": lambda lib, dt: -_vec(lib, dt),
    "neg_": lambda lib, dt: _vec(lib, dt).neg_(),
    "neg_empty": lambda lib, dt: lib.neg(lib.ones(0, dtype=dt, **_on(lib))),
    "abs": lambda lib, dt: _vec(lib, dt).abs(),
    "abs_0d": lambda lib, dt: lib.abs(_vec(lib, dt)[0]),
    "sign": lambda lib, dt: lib.sign(_vec(lib, dt)),
    "sgn": lambda lib, dt: _vec(lib, dt).sgn(),
    "relu": lambda lib, dt: lib.relu(_vec(lib, dt)),
    "exp_computes": lambda lib, dt: str(lib.exp(_vec(lib, dt)).dtype).split(".")[-1],
    # division, remainder, powers, shifts
    "floordiv": lambda lib, dt: _vec(lib, dt) // 2,
    "rfloordiv": lambda lib, dt: 7 // _vec(lib, dt)[:3],
    "floordiv_float": lambda lib, dt: _vec(lib, dt) // 2.5,
    "div_trunc": lambda lib, dt: lib.div(_vec(lib, dt), 2, rounding_mode="trunc"),
    "div_floor": lambda lib, dt: _vec(lib, dt).div(_vec(lib, dt) * 0 + 1 if False else 2,
                                                   rounding_mode="floor"),
    "true_div": lambda lib, dt: _vec(lib, dt) / 2,
    "mod": lambda lib, dt: _vec(lib, dt) % 2,
    "remainder_float": lambda lib, dt: lib.remainder(_vec(lib, dt), 2.5),
    "fmod": lambda lib, dt: lib.fmod(_vec(lib, dt), 2),
    "fmod_float": lambda lib, dt: lib.fmod(_vec(lib, dt), 2.5),
    "pow": lambda lib, dt: _vec(lib, dt) ** 2,
    "pow_0": lambda lib, dt: _vec(lib, dt) ** 0,
    "pow_1": lambda lib, dt: _vec(lib, dt).pow(1),
    "pow_float": lambda lib, dt: _vec(lib, dt) ** 0.5,
    "rpow": lambda lib, dt: 2 ** _vec(lib, dt),
    "square": lambda lib, dt: _vec(lib, dt).square(),
    "lshift": lambda lib, dt: _vec(lib, dt) << 1,
    "rshift": lambda lib, dt: lib.bitwise_right_shift(_vec(lib, dt), _vec(lib, dt)),
    "rlshift": lambda lib, dt: 1 << _vec(lib, dt),
    "gcd": lambda lib, dt: lib.gcd(_vec(lib, dt), _vec(lib, dt)),
    "lcm": lambda lib, dt: lib.lcm(_vec(lib, dt), _vec(lib, dt)),
    "logical_and": lambda lib, dt: lib.logical_and(_vec(lib, dt), _vec(lib, dt)),
    "logical_xor": lambda lib, dt: _vec(lib, dt).logical_xor(_vec(lib, dt)),
    "logical_or_float": lambda lib, dt: lib.logical_or(_vec(lib, dt), lib.ones(4, **_on(lib))),
    "heaviside": lambda lib, dt: lib.heaviside(_vec(lib, dt), _vec(lib, dt)),
    "maximum": lambda lib, dt: lib.maximum(_vec(lib, dt), _vec(lib, dt)),
    "minimum_0d": lambda lib, dt: lib.minimum(_vec(lib, dt), lib.tensor(1, **_on(lib))),
    "maximum_float": lambda lib, dt: lib.maximum(_vec(lib, dt), lib.ones(4, **_on(lib))),
    "fmax": lambda lib, dt: lib.fmax(_vec(lib, dt), _vec(lib, dt)),
    "fmin_float": lambda lib, dt: lib.fmin(_vec(lib, dt), lib.ones(4, **_on(lib))),
    "lerp": lambda lib, dt: lib.lerp(_vec(lib, dt), _vec(lib, dt), 0.5),
    "lerp_tensor": lambda lib, dt: lib.lerp(_vec(lib, dt), _vec(lib, dt), _vec(lib, dt)),
    "addcmul": lambda lib, dt: lib.addcmul(_vec(lib, dt), _vec(lib, dt), _vec(lib, dt)),
    "addcdiv": lambda lib, dt: lib.addcdiv(_vec(lib, dt), _vec(lib, dt), _vec(lib, dt)),
    "addcdiv_long": lambda lib, dt: lib.addcdiv(lib.ones(1, **_on(lib)), _idx(lib, 1),
                                                _idx(lib, 1)),
    # reductions and selections
    "sum": lambda lib, dt: _mat(lib, dt).sum(1),
    "sum_dtype": lambda lib, dt: _mat(lib, dt).sum(dtype=dt),
    "sum_dim_dtype": lambda lib, dt: lib.ones(3, **_on(lib)).sum(0, dtype=dt),
    "sum_empty_dtype": lambda lib, dt: _vec(lib, dt)[:0].sum(dtype=dt),
    "nansum_dtype": lambda lib, dt: _vec(lib, dt).nansum(dtype=dt),
    "prod_dtype": lambda lib, dt: _mat(lib, dt).prod(1, dtype=dt),
    "cumsum": lambda lib, dt: _vec(lib, dt).cumsum(0),
    "cumsum_dtype": lambda lib, dt: _vec(lib, dt).cumsum(0, dtype=dt),
    "cumprod_dtype": lambda lib, dt: lib.cumprod(_vec(lib, dt), 0, dtype=dt),
    "cummax": lambda lib, dt: _mat(lib, dt).cummax(1),
    "cummin": lambda lib, dt: lib.cummin(_vec(lib, dt), 0),
    "cummax_0d": lambda lib, dt: _vec(lib, dt)[0].cummax(0),
    "cummin_empty": lambda lib, dt: lib.ones(2, 0, dtype=dt, **_on(lib)).cummin(1),
    "kthvalue": lambda lib, dt: _mat(lib, dt).kthvalue(1, 1),
    "kthvalue_0d": lambda lib, dt: lib.kthvalue(_vec(lib, dt)[0], 1),
    "kthvalue_bad_k": lambda lib, dt: _vec(lib, dt).kthvalue(9),
    "median": lambda lib, dt: _vec(lib, dt).median(),
    "median_dim": lambda lib, dt: lib.median(_mat(lib, dt), 1),
    "median_empty": lambda lib, dt: lib.ones(0, dtype=dt, **_on(lib)).median().shape,
    "nanmedian": lambda lib, dt: _vec(lib, dt).nanmedian(),
    "nanmedian_dim": lambda lib, dt: _vec(lib, dt).nanmedian(0),
    "mode": lambda lib, dt: _mat(lib, dt).mode(1),
    "mode_0d": lambda lib, dt: _vec(lib, dt)[0].mode(),
    "count_nonzero": lambda lib, dt: _mat(lib, dt).count_nonzero(),
    "count_nonzero_dim": lambda lib, dt: lib.count_nonzero(_mat(lib, dt), 1),
    "count_nonzero_dims": lambda lib, dt: _mat(lib, dt).count_nonzero((0, 1)),
    "bincount": lambda lib, dt: lib.bincount(_vec(lib, dt)),
    "bincount_weights": lambda lib, dt: lib.bincount(_idx(lib, 0, 1),
                                                     weights=lib.ones(2, dtype=dt, **_on(lib))),
    "histc": lambda lib, dt: lib.histc(_vec(lib, dt), 4),
    "histc_range": lambda lib, dt: lib.histc(_vec(lib, dt), 4, 0, 5),
    "searchsorted": lambda lib, dt: lib.searchsorted(_vec(lib, dt).sort().values,
                                                     _vec(lib, dt)),
    "searchsorted_scalar": lambda lib, dt: lib.searchsorted(_vec(lib, dt).sort().values, 2),
    "searchsorted_float_seq": lambda lib, dt: lib.searchsorted(
        lib.tensor([0.0, 1.5, 3.0], **_on(lib)), _vec(lib, dt)),
    "searchsorted_long": lambda lib, dt: lib.searchsorted(_idx(lib, 0, 2), _vec(lib, dt)),
    "searchsorted_no_values": lambda lib, dt: lib.searchsorted(_vec(lib, dt), _vec(lib, dt)[:0]),
    "bucketize": lambda lib, dt: lib.bucketize(_vec(lib, dt), _vec(lib, dt).sort().values),
    "bucketize_float": lambda lib, dt: lib.bucketize(_vec(lib, dt),
                                                     lib.tensor([1.0, 2.0], **_on(lib))),
    "isin": lambda lib, dt: lib.isin(_vec(lib, dt), _vec(lib, dt)),
    "isin_many": lambda lib, dt: lib.isin(_vec(lib, dt), lib.zeros(40, dtype=dt, **_on(lib))),
    "isin_scalar": lambda lib, dt: lib.isin(_vec(lib, dt), 1),
    # products
    "dot": lambda lib, dt: lib.dot(_vec(lib, dt), _vec(lib, dt)),
    "matmul_vectors": lambda lib, dt: _vec(lib, dt) @ _vec(lib, dt),
    "mm": lambda lib, dt: lib.mm(_mat(lib, dt), _mat(lib, dt).t()),
    "mv": lambda lib, dt: _mat(lib, dt) @ _mat(lib, dt)[0],
    "bmm": lambda lib, dt: lib.bmm(_mat(lib, dt)[None], _mat(lib, dt).t()[None]),
    "addmm": lambda lib, dt: lib.addmm(lib.ones(2, 2, dtype=dt, **_on(lib)), _mat(lib, dt),
                                       _mat(lib, dt).t()),
    "baddbmm": lambda lib, dt: lib.baddbmm(lib.ones(1, 2, 2, dtype=dt, **_on(lib)),
                                           _mat(lib, dt)[None], _mat(lib, dt).t()[None]),
    "einsum_dot": lambda lib, dt: lib.einsum("i,i->", _vec(lib, dt), _vec(lib, dt)),
    "einsum_outer": lambda lib, dt: lib.einsum("i,j->ij", _vec(lib, dt), _vec(lib, dt)),
    "outer": lambda lib, dt: lib.outer(_vec(lib, dt), _vec(lib, dt)),
    "tensordot": lambda lib, dt: lib.tensordot(_mat(lib, dt), _mat(lib, dt), ([1], [1])),
    "trace": lambda lib, dt: _mat(lib, dt)[:, :2].trace(),
    "cross": lambda lib, dt: lib.linalg.cross(_mat(lib, dt), _mat(lib, dt)),
    "vander": lambda lib, dt: lib.vander(_vec(lib, dt)),
    "linalg_vander": lambda lib, dt: lib.linalg.vander(_vec(lib, dt)),
    # indexing
    "index_select": lambda lib, dt: _vec(lib, dt).index_select(0, _idx(lib, 0, 2)),
    "index_select_fn_empty": lambda lib, dt: lib.index_select(_vec(lib, dt), 0, _idx(lib)),
    "index_select_bad_index": lambda lib, dt: _vec(lib, dt).index_select(
        0, lib.tensor([1.0], **_on(lib))),
    "gather": lambda lib, dt: _mat(lib, dt).gather(1, _idx(lib, 0, 2).reshape(2, 1)),
    "gather_no_index": lambda lib, dt: lib.gather(_vec(lib, dt), 0, _idx(lib)),
    "take": lambda lib, dt: lib.take(_mat(lib, dt), _idx(lib, 0, 4)),
    "take_no_index": lambda lib, dt: _vec(lib, dt).take(_idx(lib)),
    "take_along_dim": lambda lib, dt: lib.take_along_dim(_mat(lib, dt),
                                                         _idx(lib, 0, 2).reshape(2, 1), 1),
    "getitem_advanced": lambda lib, dt: _vec(lib, dt)[_idx(lib, 0, 2)],
    "getitem_mask": lambda lib, dt: _vec(lib, dt)[_vec(lib, dt) == 1],
    "setitem_slice": lambda lib, dt: _setitem(_vec(lib, dt), slice(0, 2), 9),
    "setitem_list": lambda lib, dt: _setitem(_vec(lib, dt), [0, 2], 9),
    "setitem_mask": lambda lib, dt: _setitem(_vec(lib, dt), _vec(lib, dt) == 1, 9),
    "setitem_tensor_values": lambda lib, dt: _setitem(_vec(lib, dt), _idx(lib, 0, 2),
                                                      lib.tensor([7, 8], dtype=dt, **_on(lib))),
    "masked_fill": lambda lib, dt: _vec(lib, dt).masked_fill(_vec(lib, dt) == 1, 7),
    "masked_fill_": lambda lib, dt: lib.ones(0, dtype=dt, **_on(lib)).masked_fill_(
        lib.ones(0, dtype=lib.bool, **_on(lib)), 7),
    "masked_select": lambda lib, dt: _vec(lib, dt).masked_select(_vec(lib, dt) == 1),
    "masked_scatter": lambda lib, dt: _vec(lib, dt).masked_scatter(_vec(lib, dt) == 1,
                                                                   _vec(lib, dt)),
    "index_fill": lambda lib, dt: _vec(lib, dt).index_fill(0, _idx(lib, 1), 7),
    "index_fill_": lambda lib, dt: _vec(lib, dt).index_fill_(0, _idx(lib, 1), 7),
    "index_copy": lambda lib, dt: _vec(lib, dt).index_copy(0, _idx(lib, 1), _vec(lib, dt)[:1]),
    "index_add": lambda lib, dt: _vec(lib, dt).index_add(0, _idx(lib, 1), _vec(lib, dt)[:1]),
    "index_put": lambda lib, dt: _vec(lib, dt).index_put((_idx(lib, 1),), _vec(lib, dt)[:1]),
    "index_reduce": lambda lib, dt: _vec(lib, dt).index_reduce(0, _idx(lib, 1),
                                                               _vec(lib, dt)[:1], "amax"),
    "scatter": lambda lib, dt: _vec(lib, dt).scatter(0, _idx(lib, 1), _vec(lib, dt)[:1]),
    "scatter_value": lambda lib, dt: _vec(lib, dt).scatter(0, _idx(lib, 1), 7),
    "scatter_no_index": lambda lib, dt: _vec(lib, dt).scatter(0, _idx(lib), 7),
    "scatter_add": lambda lib, dt: _vec(lib, dt).scatter_add(0, _idx(lib, 1), _vec(lib, dt)),
    "scatter_reduce_sum": lambda lib, dt: _vec(lib, dt).scatter_reduce(0, _idx(lib, 1),
                                                                       _vec(lib, dt), "sum"),
    "scatter_reduce_amin": lambda lib, dt: _vec(lib, dt).scatter_reduce(0, _idx(lib, 1),
                                                                        _vec(lib, dt), "amin"),
    "put_": lambda lib, dt: _vec(lib, dt).put_(_idx(lib, 1), _vec(lib, dt)[:1]),
    "tril": lambda lib, dt: _mat(lib, dt).tril(),
    "triu": lambda lib, dt: lib.triu(_mat(lib, dt), 1),
    "tril_": lambda lib, dt: _mat(lib, dt).tril_(),
    "tril_1d": lambda lib, dt: _vec(lib, dt).tril(),
    "triu_empty": lambda lib, dt: lib.ones(2, 0, dtype=dt, **_on(lib)).triu(),
    "combinations": lambda lib, dt: lib.combinations(_vec(lib, dt)),
    "combinations_0": lambda lib, dt: lib.combinations(_vec(lib, dt), 0),
    "repeat_interleave": lambda lib, dt: _vec(lib, dt).repeat_interleave(2),
    "repeat_interleave_counts": lambda lib, dt: _vec(lib, dt).repeat_interleave(
        _idx(lib, 1, 2, 0, 1)),
    "pad_constant": lambda lib, dt: lib.nn.functional.pad(_vec(lib, dt), (1, 2)),
    "pad_circular": lambda lib, dt: lib.nn.functional.pad(_mat(lib, dt)[None], (1, 1),
                                                          mode="circular"),
    "pad_reflect": lambda lib, dt: lib.nn.functional.pad(_mat(lib, dt)[None], (1, 1),
                                                         mode="reflect"),
    "pad_replicate": lambda lib, dt: lib.nn.functional.pad(_mat(lib, dt)[None, None],
                                                           (1, 1, 1, 1), mode="replicate"),
    "cdist": lambda lib, dt: lib.cdist(_mat(lib, dt), _mat(lib, dt)),
    # nn.functional: clamps and pooling
    "hardtanh": lambda lib, dt: lib.nn.functional.hardtanh(_vec(lib, dt)),
    "relu6": lambda lib, dt: lib.nn.functional.relu6(_vec(lib, dt)),
    "threshold": lambda lib, dt: lib.nn.functional.threshold(_vec(lib, dt), 1, 0),
    "max_pool1d": lambda lib, dt: lib.nn.functional.max_pool1d(_mat(lib, dt), 2),
    "max_pool1d_indices": lambda lib, dt: lib.nn.functional.max_pool1d(
        _mat(lib, dt), 2, return_indices=True),
    "max_pool2d": lambda lib, dt: lib.nn.functional.max_pool2d(_mat(lib, dt)[None], 2),
    "avg_pool1d": lambda lib, dt: lib.nn.functional.avg_pool1d(_mat(lib, dt), 2),
    "adaptive_avg_pool2d": lambda lib, dt: lib.nn.functional.adaptive_avg_pool2d(
        _mat(lib, dt)[None], 2),
    "adaptive_avg_pool2d_to_1": lambda lib, dt: lib.nn.functional.adaptive_avg_pool2d(
        _mat(lib, dt)[None], 1),
    "adaptive_max_pool1d": lambda lib, dt: lib.nn.functional.adaptive_max_pool1d(
        _mat(lib, dt), 2),
    "adaptive_max_pool3d": lambda lib, dt: lib.nn.functional.adaptive_max_pool3d(
        _mat(lib, dt)[None, None], 1),
}


@pytest.mark.parametrize("name", UINTS)
@pytest.mark.parametrize("op", list(_REFUSED_OR_COMPUTED), ids=str)
def test_uint_ops_compute_or_refuse_as_torch(name, op):
    fn = _REFUSED_OR_COMPUTED[op]
    _both(lambda lib: _summary(fn(lib, _dt(lib, name))))
