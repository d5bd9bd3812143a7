"""Behaviour of the tensor-level API besides arithmetic, from NumPy, closed forms and finite
differences: inverse trig/hyperbolic ops, the infinity tests, nan_to_num, sets, sampling,
grids and repeats, finfo/iinfo, printing, range indexing, out= and complex/bfloat16 dtypes."""
import math
import warnings

import numpy as np
import pytest

import ember
from tests.helpers import check_grad, check_second_grad

UNARY = {"asin": (np.arcsin, -0.9, 0.9), "acos": (np.arccos, -0.9, 0.9),
         "atan": (np.arctan, -3, 3), "sinh": (np.sinh, -2, 2), "cosh": (np.cosh, -2, 2),
         "asinh": (np.arcsinh, -3, 3), "acosh": (np.arccosh, 1.2, 4),
         "atanh": (np.arctanh, -0.9, 0.9), "deg2rad": (np.deg2rad, -90, 90),
         "rad2deg": (np.rad2deg, -2, 2)}


def uniform(shape, lo, hi, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_values_and_gradients(name):
    reference, lo, hi = UNARY[name]
    a = uniform((3, 4), lo, hi)
    fn = getattr(ember, name)
    np.testing.assert_allclose(fn(ember.tensor(a)).numpy(), reference(a), rtol=1e-12)
    assert fn(ember.tensor(a, dtype=ember.float32)).dtype is ember.float32
    check_grad(fn, a)
    if name not in ("deg2rad", "rad2deg"):
        check_second_grad(fn, a)


def test_aliases_methods_and_in_place():
    x = ember.tensor([0.25, -0.5])
    for name, alias in [("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"),
                        ("asinh", "arcsinh"), ("atanh", "arctanh"), ("atan2", "arctan2")]:
        args = (x,) if name != "atan2" else (x, x + 1)
        assert ember.equal(getattr(ember, alias)(*args), getattr(ember, name)(*args))
        assert ember.equal(getattr(args[0], alias)(*args[1:]), getattr(ember, name)(*args))
        y = x.clone()
        assert getattr(y, alias + "_")(*args[1:]) is y
        assert ember.equal(y, getattr(ember, name)(*args))
    assert ember.acosh(ember.tensor([2, 3])).dtype is ember.float32  # ints: default float


@pytest.mark.parametrize("name,reference", [("atan2", np.arctan2), ("hypot", np.hypot),
                                            ("logaddexp", np.logaddexp)])
def test_binary_values_broadcasting_and_gradients(name, reference):
    a, b = uniform((3, 4), 0.5, 2) * np.array([1, -1, 1, -1]), uniform((4,), 0.5, 2, seed=1)
    fn = getattr(ember, name)
    np.testing.assert_allclose(fn(ember.tensor(a), ember.tensor(b)).numpy(), reference(a, b),
                               rtol=1e-12)
    check_grad(fn, a, b)
    check_second_grad(fn, a, b)


def test_binary_errors():
    with pytest.raises(TypeError, match=r"atan2\(\): argument 'other' \(position 2\) must be "
                                        r"Tensor, not float"):
        ember.atan2(ember.ones(2), 2.0)
    with pytest.raises(NotImplementedError, match="\"hypot_cpu\" not implemented for 'Long'"):
        ember.hypot(ember.ones(2).long(), ember.ones(2).long())
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of "
                                           r"tensor b \(3\) at non-singleton dimension 0"):
        ember.logaddexp(ember.ones(2), ember.ones(3))


def test_infinity_tests_and_nan_to_num():
    a = np.array([1.5, np.nan, np.inf, -np.inf, -2.0])
    x = ember.tensor(a)
    for name, reference in [("isinf", np.isinf), ("isfinite", np.isfinite),
                            ("isposinf", np.isposinf), ("isneginf", np.isneginf)]:
        np.testing.assert_array_equal(getattr(ember, name)(x).numpy(), reference(a))
    assert ember.isfinite(ember.tensor([1, 2])).all() and not ember.isinf(ember.tensor([1])).any()
    assert ember.isreal(x).all()
    big = np.finfo(np.float64).max
    np.testing.assert_array_equal(ember.nan_to_num(x).numpy(), [1.5, 0.0, big, -big, -2.0])
    np.testing.assert_array_equal(ember.nan_to_num(x, nan=1.0, posinf=2.0, neginf=3.0).numpy(),
                                  [1.5, 1.0, 2.0, 3.0, -2.0])
    f16 = ember.nan_to_num(ember.tensor([np.inf], dtype=ember.float16))
    assert f16.item() == 65504.0
    leaf = ember.tensor(a, requires_grad=True)
    ember.nan_to_num(leaf).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [1.0, 0.0, 0.0, 0.0, 1.0])
    y = x.clone()
    assert y.nan_to_num_() is y and ember.isfinite(y).all()


def test_unique_and_unique_consecutive():
    a = np.array([[3, 1, 2], [3, 1, 2], [0, 1, 1]])
    values, inverse, counts = ember.unique(ember.tensor(a), return_inverse=True,
                                           return_counts=True)
    ref_values, ref_inverse, ref_counts = np.unique(a, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.numpy(), ref_values)
    np.testing.assert_array_equal(inverse.numpy(), ref_inverse.reshape(a.shape))
    np.testing.assert_array_equal(counts.numpy(), ref_counts)
    rows, inverse = ember.unique(ember.tensor(a), dim=0, return_inverse=True)
    assert rows.tolist() == [[0, 1, 1], [3, 1, 2]] and inverse.tolist() == [1, 1, 0]
    runs, inverse, counts = ember.unique_consecutive(ember.tensor([1, 1, 2, 1]),
                                                     return_inverse=True, return_counts=True)
    assert (runs.tolist(), inverse.tolist(), counts.tolist()) == \
        ([1, 2, 1], [0, 0, 1, 2], [2, 1, 1])
    cols = ember.unique_consecutive(ember.tensor(a), dim=1)
    assert cols.tolist() == [[3, 1, 2], [3, 1, 2], [0, 1, 1]]


def test_multinomial_follows_the_distribution():
    ember.manual_seed(0)
    probs = np.array([0.1, 0.2, 0.7])
    draws = ember.multinomial(ember.tensor(probs * 5), 20000, replacement=True)
    assert draws.shape == (20000,) and draws.dtype is ember.int64
    freq = np.bincount(draws.numpy(), minlength=3) / 20000
    np.testing.assert_allclose(freq, probs, atol=0.015)
    # without replacement: distinct categories; the first pick follows the probabilities
    picks = ember.multinomial(ember.tensor(np.tile(probs, (4000, 1))), 3)
    assert picks.shape == (4000, 3)
    assert all(sorted(row) == [0, 1, 2] for row in picks.tolist())
    np.testing.assert_allclose(np.bincount(picks[:, 0].numpy(), minlength=3) / 4000, probs,
                               atol=0.03)
    zero = ember.multinomial(ember.tensor([0.0, 1.0, 1.0]), 2)
    assert sorted(zero.tolist()) == [1, 2]
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        ember.multinomial(ember.tensor([0.5, 0.5]), 3)
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        ember.multinomial(ember.zeros(2), 1)


def test_multinomial_and_bernoulli_use_the_generator():
    g1, g2 = ember.Generator().manual_seed(7), ember.Generator().manual_seed(7)
    p = ember.full((50,), 0.5)
    assert ember.equal(ember.bernoulli(p, generator=g1), ember.bernoulli(p, generator=g2))
    assert ember.equal(ember.multinomial(p, 10, generator=g1),
                       ember.multinomial(p, 10, generator=g2))


def test_bernoulli_follows_p():
    ember.manual_seed(1)
    p = np.array([0.0, 0.2, 0.9, 1.0])
    draws = ember.bernoulli(ember.tensor(np.tile(p, (5000, 1))))
    assert draws.dtype is ember.float64  # input's dtype
    np.testing.assert_allclose(draws.numpy().mean(0), p, atol=0.02)
    assert ember.bernoulli(ember.zeros(4000, dtype=ember.float64), 0.25).mean().item() == \
        pytest.approx(0.25, abs=0.03)
    x = ember.zeros(4000)
    assert x.bernoulli_(0.75) is x and x.mean().item() == pytest.approx(0.75, abs=0.03)
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\], but got "
                                           r"p=1.5"):
        x.bernoulli_(1.5)


def test_meshgrid_values_views_and_gradients():
    x, y = ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0, 5.0])
    gx, gy = ember.meshgrid(x, y, indexing="ij")
    ref_x, ref_y = np.meshgrid([1.0, 2.0], [3.0, 4.0, 5.0], indexing="ij")
    np.testing.assert_array_equal(gx.numpy(), ref_x)
    np.testing.assert_array_equal(gy.numpy(), ref_y)
    gx, gy = ember.meshgrid(x, y, indexing="xy")
    ref_x, ref_y = np.meshgrid([1.0, 2.0], [3.0, 4.0, 5.0], indexing="xy")
    np.testing.assert_array_equal(gx.numpy(), ref_x)
    np.testing.assert_array_equal(gy.numpy(), ref_y)
    with pytest.warns(UserWarning, match="required to pass the indexing argument"):
        ember.meshgrid(x, y)
    check_grad(lambda a, b: sum(g * (i + 1) for i, g in
                                enumerate(ember.meshgrid(a, b, indexing="xy"))),
               [1.0, 2.0], [3.0, 4.0, 5.0])


def test_repeat_interleave_values_and_gradients():
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ember.repeat_interleave(ember.tensor(a), 2).numpy(),
                                  np.repeat(a, 2))
    np.testing.assert_array_equal(
        ember.tensor(a).repeat_interleave(ember.tensor([1, 0, 2]), dim=1).numpy(),
        np.repeat(a, [1, 0, 2], axis=1))
    assert ember.repeat_interleave(ember.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    check_grad(lambda x: ember.repeat_interleave(x, ember.tensor([3, 1]), dim=0), a)
    with pytest.raises(RuntimeError, match="allocated size does not match required size"):
        ember.repeat_interleave(ember.ones(2), 2, output_size=3)


def test_movedim_diff_take():
    x = ember.zeros(2, 3, 4)
    moved = ember.movedim(x, (0, 2), (2, 0))
    assert moved.shape == (4, 3, 2) and moved._data.base is not None
    assert ember.moveaxis(x, -1, 0).shape == (4, 2, 3)
    a = np.array([[1.0, 4.0, 9.0, 16.0], [2.0, 0.0, -1.0, 5.0]])
    np.testing.assert_array_equal(ember.diff(ember.tensor(a), n=2).numpy(), np.diff(a, n=2))
    np.testing.assert_array_equal(
        ember.diff(ember.tensor(a), dim=0, prepend=ember.zeros(1, 4)).numpy(),
        np.diff(a, axis=0, prepend=np.zeros((1, 4))))
    check_grad(lambda t: ember.diff(t, n=2, dim=1), a)
    np.testing.assert_array_equal(ember.take(ember.tensor(a), ember.tensor([[0, 7], [-1, 2]]))
                                  .numpy(), np.take(a, [[0, 7], [-1, 2]]))
    check_grad(lambda t: ember.take(t, ember.tensor([0, 0, 5])), a)
    with pytest.raises(IndexError, match="out of range: tried to access index 8 on a tensor of "
                                         "8 elements."):
        ember.take(ember.tensor(a), ember.tensor([8]))


def test_searchsorted_and_bucketize():
    seq, vals = np.array([1, 3, 3, 7]), np.array([[0, 3, 8], [3, 4, 7]])
    for right in (False, True):
        side = "right" if right else "left"
        found = ember.searchsorted(ember.tensor(seq), ember.tensor(vals), right=right)
        np.testing.assert_array_equal(found.numpy(), np.searchsorted(seq, vals, side=side))
        assert ember.bucketize(ember.tensor(vals), ember.tensor(seq), right=right,
                               out_int32=True).dtype is ember.int32


def test_finfo_iinfo_and_constants():
    for dt in (ember.float16, ember.float32, ember.float64):
        info, ref = ember.finfo(dt), np.finfo(dt.np)
        assert (info.bits, info.eps, info.max, info.min, info.tiny) == \
            (ref.bits, float(ref.eps), float(ref.max), float(ref.min), float(ref.tiny))
        assert info.dtype == dt.name
    assert ember.finfo().dtype == "float32" and ember.finfo(ember.bfloat16).bits == 16
    assert ember.iinfo(ember.int16).max == 32767 and ember.iinfo(ember.uint8).min == 0
    with pytest.raises(TypeError, match="torch.finfo\\(\\) requires a floating point"):
        ember.finfo(ember.int64)
    with pytest.raises(TypeError, match="torch.iinfo\\(\\) requires an integer"):
        ember.iinfo(ember.float32)
    assert (ember.pi, ember.e, ember.inf) == (math.pi, math.e, math.inf)
    assert math.isnan(ember.nan)


def test_print_options_and_format():
    try:
        ember.set_printoptions(precision=2)
        assert repr(ember.tensor([1.23456, 2.0])) == "tensor([1.23, 2.00])"
        ember.set_printoptions(threshold=4, edgeitems=1)
        assert repr(ember.arange(10)) == "tensor([0,  ..., 9])"
        ember.set_printoptions(profile="default", sci_mode=True)
        assert repr(ember.tensor([1.5])) == "tensor([1.5000e+00])"
        ember.set_printoptions(profile="full")
        assert "..." not in repr(ember.zeros(2000))
    finally:
        ember.set_printoptions(profile="default")
    assert repr(ember.zeros(2000)).count("...") == 1
    assert f"{ember.tensor(2.0 / 3):.3f}" == "0.667" and f"{ember.tensor(7):03d}" == "007"
    assert f"{ember.tensor([1.0])}" == "tensor([1.])"
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        f"{ember.tensor([1.0]):.2f}"


def test_range_indexing_and_inclusive_range():
    a = np.arange(12.0).reshape(3, 4)
    x = ember.tensor(a)
    np.testing.assert_array_equal(x[range(1, 3)].numpy(), a[1:3])
    np.testing.assert_array_equal(x[range(2), range(1, 3)].numpy(), a[[0, 1], [1, 2]])
    assert x[range(0)].shape == (0, 4)
    x[range(2)] = 0.0
    assert x[:2].sum().item() == 0
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        r = ember.range(0, 1, 0.5)
    assert r.tolist() == [0.0, 0.5, 1.0] and r.dtype is ember.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.range(1, 3, dtype=ember.int64).tolist() == [1, 2, 3]


def test_out_writes_resizes_and_refuses_gradients():
    a, b = ember.tensor([1.0, 2.0]), ember.tensor([3.0, 5.0])
    out = ember.empty(2)
    version = out._version
    assert ember.add(a, b, alpha=2, out=out) is out and out.tolist() == [7.0, 12.0]
    assert out._version > version
    assert ember.sum(ember.ones(2, 3), 1, out=out).tolist() == [3.0, 3.0]
    grown = ember.empty(0, dtype=ember.float64)
    assert ember.cat([a, b], out=grown) is grown and grown.shape == (4,)
    assert grown.dtype is ember.float64
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        ember.exp(ember.zeros(3), out=out)
    assert out.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        ember.mul(a, b, out=ember.empty(2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match=r"mul\(\): functions with out=\.\.\. arguments don't "
                                           r"support automatic differentiation"):
        ember.mul(a.requires_grad_(), b, out=ember.empty(2))
    assert ember.ones(2, out=ember.empty(2, dtype=ember.int32)).dtype is ember.int32
    with pytest.raises(RuntimeError, match="dtype Double does not match dtype of out parameter "
                                           r"\(Int\)"):
        ember.ones(2, dtype=ember.float64, out=ember.empty(2, dtype=ember.int32))


def test_memory_format_is_honoured_or_refused():
    x = ember.ones(2, 3).t()
    assert x.clone(memory_format=ember.contiguous_format).is_contiguous()
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        x.contiguous(memory_format=ember.preserve_format)  # as PyTorch: x is not row-major
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        x.float(memory_format=ember.channels_last)
    with pytest.raises(TypeError, match="memory_format"):
        ember.zeros_like(x, memory_format="channels_last")


def test_complex_basics():
    z = ember.complex(ember.tensor([1.0, 3.0]), ember.tensor([2.0, -1.0]))
    assert z.dtype is ember.complex64 and z.is_complex() and not z.is_floating_point()
    np.testing.assert_allclose((z * z).numpy(), np.array([1 + 2j, 3 - 1j]) ** 2)
    np.testing.assert_allclose(z.abs().numpy(), np.abs([1 + 2j, 3 - 1j]), rtol=1e-6)
    assert z.abs().dtype is ember.float32 and z.real.dtype is ember.float32
    np.testing.assert_allclose(ember.angle(z).numpy(), np.angle([1 + 2j, 3 - 1j]), rtol=1e-6)
    assert z.conj().tolist() == [1 - 2j, 3 + 1j]
    pairs = ember.view_as_real(z)
    assert pairs.tolist() == [[1.0, 2.0], [3.0, -1.0]]
    pairs[0, 1] = 9.0  # a view: writes reach z
    assert z[0].item() == 1 + 9j
    assert ember.view_as_complex(pairs).tolist() == [1 + 9j, 3 - 1j]
    assert repr(z) == "tensor([1.+9.j, 3.-1.j])"
    assert (ember.ones(2, dtype=ember.float64) * 1j).dtype is ember.complex128


def test_bfloat16_basics():
    x = ember.tensor([1.5, 2.0, 100.3], dtype=ember.bfloat16)
    assert x.dtype is ember.bfloat16 and x.is_floating_point()
    assert x.tolist() == [1.5, 2.0, 100.5]  # 8 bits of mantissa
    assert (x * 2).dtype is ember.bfloat16 and (x * 2).tolist() == [3.0, 4.0, 201.0]
    assert x.float().dtype is ember.float32 and ember.ones(2).bfloat16().dtype is ember.bfloat16
    assert repr(ember.ones(2, dtype=ember.bfloat16)) == "tensor([1., 1.], dtype=ember.bfloat16)"


def test_a_dtype_whose_package_is_missing_names_it():
    from ember.backend.dtypes import _MissingDtype
    missing = _MissingDtype("bfloat16", 2, "BFloat16", "c10::BFloat16", "ml_dtypes")
    assert repr(missing) == "ember.bfloat16" and missing.is_floating_point
    with pytest.raises(RuntimeError, match=r"ember.bfloat16 needs the ml_dtypes package "
                                           r"\(pip install ml_dtypes\)"):
        ember.zeros(2, dtype=missing)


def test_layout_strided_only():
    assert ember.zeros(2, layout=ember.strided).layout == ember.strided
    with pytest.raises(NotImplementedError, match="layout='sparse_coo' is not supported"):
        ember.ones(2, layout="sparse_coo")


def test_gather_sparse_grad_is_refused():
    with pytest.raises(NotImplementedError, match="sparse_grad=True is not supported"):
        ember.gather(ember.ones(2, 2), 1, ember.tensor([[0], [1]]), sparse_grad=True)


def test_complex_and_bfloat16_tensors_save_and_load(tmp_path):
    z = ember.tensor([1 + 2j, -3j])
    b = ember.tensor([[1.5, -2.25], [3.0, 4.0]], dtype=ember.bfloat16)
    ember.save({"z": z, "b": b, "bt": b.t()[1:]}, tmp_path / "x.pt")
    loaded = ember.load(tmp_path / "x.pt")
    assert loaded["z"].dtype is ember.complex64 and loaded["z"].tolist() == z.tolist()
    assert loaded["b"].dtype is ember.bfloat16 and loaded["b"].tolist() == b.tolist()
    assert loaded["bt"].tolist() == b.t()[1:].tolist()
