"""The C++ fast paths of <ember/extension.h>'s ops (<ember/fast_ops.h>).

One source is built twice: as is, and with -DEMBER_NO_FAST_OPS (every op calls back into
ember). Results must match between the two and NumPy -- values, dtype, shape --, the fast
build must take its fast path exactly where it qualifies (its counter says), and fall back
where it does not: other dtypes, broadcasting, 3-D strided inputs, a graph to record, a
__torch_function__ mode, size errors.
"""
import shutil

import numpy as np
import pytest

import ember
from ember import _torch_function
from ember.utils.cpp_extension import load_inline

pytestmark = pytest.mark.skipif(
    not (shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")),
    reason="no C++ compiler found (looked for g++, c++, clang++)")

SRC = r"""
#include <torch/extension.h>

int64_t taken() {
#ifdef EMBER_NO_FAST_OPS
  return 0;
#else
  return ember::detail::fast::taken();
#endif
}

torch::Tensor unary(const std::string& f, torch::Tensor x) {
  if (f == "neg") return -x;
  if (f == "exp") return torch::exp(x);
  if (f == "log") return x.log();
  if (f == "sqrt") return x.sqrt();
  if (f == "abs") return x.abs();
  if (f == "sigmoid") return torch::sigmoid(x);
  if (f == "tanh") return torch::tanh(x);
  if (f == "relu") return torch::relu(x);
  if (f == "contiguous") return x.contiguous();
  throw std::invalid_argument(f);
}

torch::Tensor binary(const std::string& f, torch::Tensor a, torch::Tensor b) {
  if (f == "add") return a + b;
  if (f == "sub") return a - b;
  if (f == "mul") return a * b;
  if (f == "div") return a / b;
  if (f == "add_method") return a.add(b);
  if (f == "sub_method") return torch::sub(a, b);
  if (f == "mm") return torch::mm(a, b);
  if (f == "matmul") return a.matmul(b);
  throw std::invalid_argument(f);
}

torch::Tensor with_scalar(const std::string& f, torch::Tensor a, double s) {
  if (f == "add") return a + s;
  if (f == "rsub") return s - a;
  if (f == "mul") return a * s;
  if (f == "rdiv") return s / a;
  if (f == "div") return a.div(s);
  if (f == "sub") return a.sub(s);
  throw std::invalid_argument(f);
}

torch::Tensor power(torch::Tensor x, double e) { return torch::pow(x, e); }
torch::Tensor elu(torch::Tensor x, double alpha) { return torch::elu(x, alpha); }

torch::Tensor comparison(const std::string& f, torch::Tensor a, torch::Tensor b, double s) {
  if (f == "lt") return a < b;
  if (f == "ge") return a >= b;
  if (f == "eq") return a == b;
  if (f == "gt_scalar") return a > s;
  if (f == "le_scalar") return a <= s;
  if (f == "ne_scalar") return a != s;
  if (f == "scalar_lt") return s < a;
  throw std::invalid_argument(f);
}

torch::Tensor to_double(torch::Tensor x) { return x.to(torch::kFloat64); }
torch::Tensor type_as(torch::Tensor x, torch::Tensor like) { return x.type_as(like); }

torch::Tensor sum_all(torch::Tensor x) { return x.sum(); }
torch::Tensor sum_dim(torch::Tensor x, int64_t d, bool keepdim) {
  return torch::sum(x, d, keepdim);
}
torch::Tensor cat(std::vector<torch::Tensor> ts, int64_t d) { return torch::cat(ts, d); }
torch::Tensor addmm(torch::Tensor c, torch::Tensor a, torch::Tensor b, double beta, double alpha) {
  return torch::addmm(c, a, b, beta, alpha);
}

std::vector<torch::Tensor> views(torch::Tensor x) {
  return {x.t(), x.transpose(-1, 0), x.slice(1, 1, 3), x.slice(0, -2), x.narrow(1, 2, 2)};
}
std::vector<torch::Tensor> chunk(torch::Tensor x, int64_t n, int64_t d) { return x.chunk(n, d); }

std::vector<torch::Tensor> factories(torch::Tensor like) {
  return {torch::empty({2, 3}, torch::kFloat32), torch::zeros({2, 3}, torch::kFloat64),
          torch::ones({4}, torch::kFloat32), torch::zeros_like(like), torch::ones_like(like),
          torch::empty_like(like)};
}
"""
FUNCS = ["taken", "unary", "binary", "with_scalar", "power", "elu", "comparison", "to_double",
         "type_as", "sum_all", "sum_dim", "cat", "addmm",
         "views", "chunk", "factories"]
FLAGS = ["-O1"]


@pytest.fixture(scope="module")
def mods(tmp_path_factory):
    cache = tmp_path_factory.mktemp("fastops")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EMBER_EXTENSIONS_DIR", str(cache))
        fast = load_inline("ember_test_fast_ops", SRC, functions=FUNCS, extra_cflags=FLAGS)
        slow = load_inline("ember_test_no_fast_ops", SRC, functions=FUNCS,
                           extra_cflags=FLAGS + ["-DEMBER_NO_FAST_OPS"])
    return fast, slow


@pytest.fixture(autouse=True)
def no_dispatching_subclass():
    """Other tests may have defined a dispatching Tensor subclass, which turns every fast path
    off for the rest of the process; these tests define none."""
    saved = _torch_function.ACTIVE[0]
    _torch_function.ACTIVE[0] = bool(_torch_function._State.modes)
    yield
    _torch_function.ACTIVE[0] = saved


def randn(*shape, dtype=ember.float32, seed=0):
    rng = np.random.default_rng(seed)
    return ember.from_numpy(rng.standard_normal(shape).astype(ember.empty(0, dtype=dtype)
                                                                 .numpy().dtype))


def same(got, want, dtype):
    assert got.dtype == want.dtype == dtype
    assert tuple(got.shape) == tuple(want.shape)
    tol = 1e-6 if dtype == ember.float32 else 1e-13
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)


def run_both(mods, name, *args):
    """(fast result, general result, fast paths the fast build took)."""
    fast, slow = mods
    before = fast.taken()
    got = getattr(fast, name)(*args)
    taken = fast.taken() - before
    return got, getattr(slow, name)(*args), taken


DTYPES = [ember.float32, ember.float64]
LAYOUTS = ["contiguous", "transposed", "column slice"]


def layout(t, kind):
    """``t`` (2-D) as a contiguous tensor, a transposed view or a strided column slice."""
    if kind == "transposed":
        return t.t().contiguous().t()
    if kind == "column slice":
        wide = ember.cat([t, t], 1)
        return wide[:, ::2]
    return t


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("f", ["neg", "exp", "log", "sqrt", "abs", "sigmoid", "tanh", "relu",
                               "contiguous"])
def test_unary_matches_general_path(mods, f, kind, dtype):
    x = layout(randn(5, 7, dtype=dtype), kind)
    if f in ("log", "sqrt"):
        x = x.abs() + 0.1
    with ember.no_grad():
        got, want, taken = run_both(mods, "unary", f, x)
    same(got, want, dtype)
    assert taken == (0 if f == "contiguous" and kind == "contiguous" else 1)
    assert got.is_contiguous() and got.grad_fn is None and not got.requires_grad


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("f", ["add", "sub", "mul", "div", "add_method", "sub_method"])
def test_binary_matches_general_path_and_numpy(mods, f, kind, dtype):
    a = layout(randn(4, 6, dtype=dtype, seed=1), kind)
    b = randn(4, 6, dtype=dtype, seed=2) + 3
    with ember.no_grad():
        got, want, taken = run_both(mods, "binary", f, a, b)
    same(got, want, dtype)
    assert taken == 1
    op = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
    np.testing.assert_allclose(got.numpy(), op[f.split("_")[0]](a.numpy(), b.numpy()),
                               rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", ["add", "rsub", "mul", "rdiv", "div", "sub"])
def test_scalar_ops_keep_the_tensor_dtype(mods, f, dtype):
    a = randn(3, 5, dtype=dtype) + 4
    with ember.no_grad():
        got, want, taken = run_both(mods, "with_scalar", f, a, 2.5)
    same(got, want, dtype)
    assert taken == 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", LAYOUTS)
def test_pow_and_elu(mods, kind, dtype):
    x = layout(randn(4, 5, dtype=dtype), kind)
    with ember.no_grad():
        for name, args in (("power", (x, 2.0)), ("power", (x, 3.0)), ("power", (x.abs(), 0.5)),
                           ("elu", (x, 1.0)), ("elu", (x, 0.3))):
            got, want, taken = run_both(mods, name, *args)
            same(got, want, dtype)
            assert taken == 1
    np.testing.assert_allclose(mods[0].power(x, 3.0).numpy(), x.numpy() ** 3, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("f", ["lt", "ge", "eq", "gt_scalar", "le_scalar", "ne_scalar",
                               "scalar_lt"])
def test_comparisons_give_bool(mods, f, kind, dtype):
    a = layout(randn(4, 5, dtype=dtype, seed=1), kind)
    b = a.clone()
    b[1] = 0.25
    with ember.no_grad():
        got, want, taken = run_both(mods, "comparison", f, a, b, 0.25)
    assert taken == 1 and got.dtype == want.dtype == ember.bool
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("kind", LAYOUTS)
def test_conversions(mods, kind):
    x = layout(randn(3, 4), kind)
    mask = x > 0
    with ember.no_grad():
        for name, args, dtype in (("to_double", (x,), ember.float64),
                                  ("type_as", (mask, x), ember.float32),
                                  ("type_as", (mask, x.double()), ember.float64),
                                  ("to_double", (mask,), ember.float64)):
            got, want, taken = run_both(mods, name, *args)
            same(got, want, dtype)
            assert taken == 1
        # already that dtype: the tensor itself, as PyTorch's to()
        assert mods[0].type_as(x, x) is x and mods[1].type_as(x, x) is x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", LAYOUTS)
def test_sums(mods, kind, dtype):
    x = layout(randn(6, 9, dtype=dtype), kind)
    with ember.no_grad():
        for name, args in (("sum_all", (x,)), ("sum_dim", (x, 0, False)),
                           ("sum_dim", (x, 1, True)), ("sum_dim", (x, -1, False))):
            got, want, taken = run_both(mods, name, *args)
            same(got, want, dtype)
            assert taken == 1
    np.testing.assert_allclose(mods[0].sum_dim(x, 0, False).numpy(), x.numpy().sum(0),
                               rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_and_products(mods, dtype):
    a, b = randn(3, 4, dtype=dtype, seed=1), randn(3, 2, dtype=dtype, seed=2)
    w = randn(5, 6, dtype=dtype, seed=3)
    c1, c2 = randn(5, dtype=dtype, seed=4), randn(3, 5, dtype=dtype, seed=5)
    with ember.no_grad():
        cases = [("cat", [a, b], 1), ("cat", [a, a], 0), ("cat", [a, b, a], -1),
                 ("binary", "mm", ember.cat([a, b], 1), w.t()),
                 ("binary", "matmul", a, w[:4, :].contiguous()),
                 ("addmm", c1, ember.cat([a, b], 1), w.t(), 1.0, 1.0),
                 ("addmm", c2, ember.cat([a, b], 1), w.t(), 0.5, 2.0),
                 ("addmm", c1.unsqueeze(0), ember.cat([a, b], 1), w.t(), 0.0, 1.0)]
        for name, *args in cases:
            got, want, taken = run_both(mods, name, *args)
            same(got, want, dtype)
            assert taken == 1, name
    np.testing.assert_allclose(
        mods[0].addmm(c2, a, w[:, :4].t().contiguous(), 0.5, 2.0).numpy(),
        0.5 * c2.numpy() + 2.0 * a.numpy() @ w.numpy()[:, :4].T, rtol=1e-5)


def test_addmm_ignores_the_bias_when_beta_is_zero(mods):
    c = ember.full((2,), float("nan"))
    a, b = randn(3, 4), randn(4, 2)
    with ember.no_grad():
        got, want, taken = run_both(mods, "addmm", c, a, b, 0.0, 1.0)
    assert taken == 1 and not np.isnan(got.numpy()).any()
    same(got, want, ember.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_views_share_memory_version_and_base(mods, dtype):
    base = randn(4, 5, dtype=dtype)
    with ember.no_grad():
        got, want, taken = run_both(mods, "views", base)
    assert taken == len(got) == 5
    for g, w in zip(got, want):
        same(g, w, dtype)
        assert tuple(g.stride()) == tuple(w.stride())
        assert g._base is base and g._vc is base._vc
        assert np.shares_memory(g.numpy(), base.numpy())
        np.testing.assert_array_equal(g._view_fn(base).numpy(), g.numpy())
    # a view of a view: its base is the root, and it replays through its parent
    inner = mods[0].views(got[1])[2]  # base.T[:, 1:3]
    assert inner._base is base and inner._vc is base._vc
    np.testing.assert_array_equal(inner.numpy(), base.numpy().T[:, 1:3])
    np.testing.assert_array_equal(inner._view_fn(base).numpy(), base.numpy().T[:, 1:3])
    got[2].mul_(0)
    assert base._version == 1 and (base.numpy()[:, 1:3] == 0).all()


@pytest.mark.parametrize("n,d", [(3, 0), (2, 1), (4, 1), (7, 0), (5, -1)])
def test_chunk_is_pytorch_chunk(mods, n, d):
    x = randn(5, 6)
    with ember.no_grad():
        got, want, taken = run_both(mods, "chunk", x, n, d)
    assert len(got) == len(want) == taken
    for g, w in zip(got, want):
        same(g, w, ember.float32)
        assert g._base is x


def test_factories(mods):
    like = randn(2, 2, dtype=ember.float64)
    got, want, taken = run_both(mods, "factories", like)
    assert taken == 6
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape)
        assert not g.requires_grad
    for i in (1, 2, 3, 4):
        same(got[i], want[i], want[i].dtype)


def test_graph_to_record_takes_the_general_path(mods):
    fast, _ = mods
    w = randn(3, 4).requires_grad_()
    x = randn(2, 3)
    before = fast.taken()
    out = fast.binary("mm", x, w)
    y = fast.unary("tanh", out)
    assert fast.taken() == before
    assert y.grad_fn is not None
    y.sum().backward()
    xa, wa = x.numpy(), w.detach().numpy()
    expected = xa.T @ (1 - np.tanh(xa @ wa) ** 2)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5)
    with ember.no_grad():  # the same inputs without grad mode: fast
        assert fast.binary("mm", x, w).grad_fn is None
    assert fast.taken() == before + 1


@pytest.mark.parametrize("case", ["int64", "broadcast", "mixed dtypes", "3-D strided", "meta"])
def test_what_does_not_qualify_falls_back(mods, case):
    fast, slow = mods
    a = randn(2, 3, 4)
    if case == "int64":
        args = ("binary", "add", ember.arange(6).reshape(2, 3), ember.arange(6).reshape(2, 3))
    elif case == "broadcast":
        args = ("binary", "mul", randn(2, 3), randn(3))
    elif case == "mixed dtypes":
        args = ("binary", "add", randn(2, 3), randn(2, 3, dtype=ember.float64))
    elif case == "3-D strided":
        args = ("unary", "exp", a.transpose(0, 2))
    else:
        args = ("unary", "sigmoid", ember.empty(2, 3, device="meta"))
    with ember.no_grad():
        got, want, taken = run_both(mods, *args)
    assert taken == 0
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    if case != "meta":
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_errors_are_embers(mods):
    fast, slow = mods
    a, b = randn(2, 3), randn(4, 5)
    with ember.no_grad():
        for m in (fast, slow):
            with pytest.raises(RuntimeError, match=r"2x3 and 4x5"):
                m.binary("mm", a, b)
            with pytest.raises(IndexError, match="Dimension out of range"):
                m.sum_dim(a, 2, False)
            with pytest.raises(RuntimeError):
                m.cat([a, b], 0)


def test_a_torch_function_mode_sees_the_ops(mods):
    fast, _ = mods
    seen = []

    class Log(ember.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    x = randn(2, 3)
    before = fast.taken()
    with ember.no_grad(), Log():
        fast.unary("sigmoid", x)
    assert fast.taken() == before
    assert any("sigmoid" in s for s in seen)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["mm", "mm transposed", "addmm", "narrow result"])
def test_mid_size_products_go_to_native_bands(mods, pool2, monkeypatch, dtype, case):
    """Products of NATIVE_MIN_FMAS or more (an LLTM cell's, ~1M multiply-adds) are shared
    with the pool's spinning threads from C++ (ember.backend.gemm.native_for_extension, then
    _pool.gemm): bands forced here, whoever spins; the values are NumPy's product's."""
    from ember.backend import gemm
    native = gemm._native_gemm()
    if native is None:
        pytest.skip("no native helpers or no OpenBLAS entry points")
    bands = []
    real = native.gemm
    monkeypatch.setattr(native, "gemm", lambda *a: bands.append(real(*a, True)) or bands[-1])
    monkeypatch.setattr(gemm, "native_for_extension", lambda: native)
    x, w = randn(16, 160, dtype=dtype, seed=6), randn(384, 160, dtype=dtype, seed=7)
    bias = randn(384, dtype=dtype, seed=8)
    with ember.no_grad():
        if case == "mm":
            got, want = mods[0].binary("mm", x, w.t().contiguous()), x.numpy() @ w.numpy().T
        elif case == "mm transposed":
            got, want = mods[0].binary("mm", w, x.t()), w.numpy() @ x.numpy().T
        elif case == "addmm":
            got = mods[0].addmm(bias, x, w.t(), 1.0, 1.0)
            want = bias.numpy() + x.numpy() @ w.numpy().T
        else:  # 1000 x 100: banded by rows
            a, b = randn(1000, 40, dtype=dtype, seed=9), randn(40, 100, dtype=dtype, seed=10)
            got, want = mods[0].binary("mm", a, b), a.numpy() @ b.numpy()
    assert bands and bands[0] >= 2, f"not cut into bands: {bands}"
    tol = 2e-5 if dtype == ember.float32 else 1e-12
    assert got.dtype == dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)
