"""bfloat16 forward values and gradients against PyTorch, on random inputs: element-wise
unary and binary ops (with broadcasting and Python numbers), reductions, activations,
softmax, matmul/linear, indexing, gather, cat/stack, clamp, pooling, where, losses and casts
both ways -- under the compiled apply and the Python one.

Tolerances. bfloat16 keeps 8 significant bits, so one unit in the last place (ulp) is 2**-8
to 2**-7 of a value. Where both libraries compute in float32 and round once, results can
still land one ulp apart: their float32 internals (exp, log, summation order, FMA) differ in
the last float32 bits, which flips the bfloat16 rounding of values near a tie. Measured over
these cases, forward values differ by at most one ulp relative to the value (FWD_RTOL), plus,
for results that cancel (log-softmax, whose CPU kernel in PyTorch rounds its log-sum-exp to
bfloat16 before subtracting), up to 2**-8 of the output's largest magnitude (FWD_ATOL).
Gradients chain several roundings (backward formulas composed of bfloat16 ops in both
libraries, in slightly different orders), and cancellation makes small entries' relative
error large: measured over these cases with several seeds, every entry is within 2**-7 of
the gradient's largest magnitude plus 2**-7 of itself; GRAD_ATOL and GRAD_RTOL allow twice
that. (A difference of two ulps or more in a forward value fails: FWD_RTOL is one ulp.)
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
ml_dtypes = pytest.importorskip("ml_dtypes")

import ember  # noqa: E402
import ember.nn.functional as EF  # noqa: E402
import torch.nn.functional as TF  # noqa: E402
from ember._ops import primitive  # noqa: E402

FWD_RTOL, FWD_ATOL = 2 ** -7, 2 ** -8   # atol: a fraction of the output's largest magnitude
GRAD_RTOL, GRAD_ATOL = 2 ** -6, 2 ** -6  # atol: a fraction of the gradient's largest magnitude

def rand(*shape, low=-3.0, high=3.0, seed=0):
    """Uniform float32 values, the same for a shape and seed whichever tests run."""
    rng = np.random.default_rng([seed, *shape])
    return rng.uniform(low, high, shape).astype(np.float32)


def distinct(*shape):
    """Values with no ties (max, sort and pooling pick one element), exact in bfloat16."""
    n = int(np.prod(shape))
    rng = np.random.default_rng([1, *shape])
    return ((rng.permutation(n) - n / 2) / 16).astype(np.float32).reshape(shape)


def F(lib):
    return EF if lib is ember else TF


def _leaf(lib, a):
    """A float array as a bfloat16 leaf that requires grad; an integer array as int64."""
    if a.dtype.kind == "f":
        return lib.tensor(a).to(lib.bfloat16).detach().requires_grad_()
    return lib.tensor(a)


def _host(t):
    return t.detach().float().numpy() if t.is_floating_point() else t.detach().numpy()


def _dtype_name(d):
    return str(d).split(".")[-1]


def _run(lib, fn, arrays, seed):
    leaves = [_leaf(lib, a) for a in arrays]
    out = fn(lib, *leaves)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if o is not None]
    diff = [o for o in outs if o.requires_grad]
    rng = np.random.default_rng(seed)  # the same cotangents, as bfloat16 (or the output's)
    cots = [lib.tensor(rng.standard_normal(tuple(o.shape)).astype(np.float32)).to(o.dtype)
            for o in diff]
    if diff:
        lib.autograd.backward(diff, cots)
    return ([(_host(o), _dtype_name(o.dtype), o.requires_grad) for o in outs],
            [None if t.grad is None else (_host(t.grad), _dtype_name(t.grad.dtype))
             for t in leaves])


def check(fn, *arrays, seed=0):
    """``fn(lib, *leaves)`` on bfloat16 leaves made from ``arrays``: outputs (value, dtype,
    requires_grad) and every input's gradient (value, dtype) as torch gives them."""
    t_outs, t_grads = _run(torch, fn, arrays, seed)
    e_outs, e_grads = _run(ember, fn, arrays, seed)
    assert len(t_outs) == len(e_outs)
    for i, ((tv, td, tr), (ev, ed, er)) in enumerate(zip(t_outs, e_outs)):
        assert (ed, er) == (td, tr), f"output {i}: ember {ed} {er}, torch {td} {tr}"
        assert ev.shape == tv.shape
        if tv.dtype.kind != "f":
            np.testing.assert_array_equal(ev, tv, err_msg=f"output {i}")
            continue
        scale = float(np.abs(tv).max()) if tv.size else 0.0
        np.testing.assert_allclose(ev, tv, rtol=FWD_RTOL, atol=FWD_ATOL * scale,
                                   err_msg=f"output {i}")
    for i, (tg, eg) in enumerate(zip(t_grads, e_grads)):
        assert (tg is None) == (eg is None), f"input {i}: torch grad {tg is not None}"
        if tg is None:
            continue
        assert eg[1] == tg[1], f"grad of input {i}: {eg[1]} vs {tg[1]}"
        scale = float(np.abs(tg[0]).max()) if tg[0].size else 0.0
        np.testing.assert_allclose(eg[0], tg[0], rtol=GRAD_RTOL, atol=GRAD_ATOL * scale,
                                   err_msg=f"grad of input {i}")


@pytest.fixture(params=[True, False], ids=["native-apply", "python-apply"], autouse=True)
def apply_path(request):
    old = primitive.set_native_apply(request.param)
    yield
    primitive.set_native_apply(old)


X, Y = rand(4, 6), rand(4, 6, seed=1)
POS = rand(4, 6, low=0.1, high=4.0)
UNIT = rand(4, 6, low=0.05, high=0.95)
IMG = rand(2, 3, 8, 8)

UNARY = {
    "neg": lambda lib, a: -a,
    "abs": lambda lib, a: a.abs(),
    "exp": lambda lib, a: a.exp(),
    "expm1": lambda lib, a: a.expm1(),
    "sin": lambda lib, a: a.sin(),
    "cos": lambda lib, a: a.cos(),
    "tanh": lambda lib, a: a.tanh(),
    "sigmoid": lambda lib, a: a.sigmoid(),
    "atan": lambda lib, a: a.atan(),
    "erf": lambda lib, a: a.erf(),
    "square": lambda lib, a: a.square(),
    "pow_2": lambda lib, a: a ** 2,
    "mul_number": lambda lib, a: a * 0.1,
    "rmul_number": lambda lib, a: 0.3 * a,
    "div_number": lambda lib, a: a / 0.7,
    "add_number": lambda lib, a: a + 0.1,
    "rsub_number": lambda lib, a: 1.7 - a,
    "relu": lambda lib, a: F(lib).relu(a),
    "gelu": lambda lib, a: F(lib).gelu(a),
    "gelu_tanh": lambda lib, a: F(lib).gelu(a, approximate="tanh"),
    "silu": lambda lib, a: F(lib).silu(a),
    "leaky_relu": lambda lib, a: F(lib).leaky_relu(a, 0.1),
    "elu": lambda lib, a: F(lib).elu(a),
    "softplus": lambda lib, a: F(lib).softplus(a),
    "mish": lambda lib, a: F(lib).mish(a),
    "hardtanh": lambda lib, a: F(lib).hardtanh(a),
    "clamp": lambda lib, a: a.clamp(-1.3, 0.7),
    "clamp_min": lambda lib, a: a.clamp(min=0.1),
    "clamp_max": lambda lib, a: lib.clamp(a, max=-0.2),
    "nan_to_num": lambda lib, a: lib.nan_to_num(a * 1e38 * 1e38),
}
POSITIVE = {
    "log": lambda lib, a: a.log(),
    "log1p": lambda lib, a: a.log1p(),
    "sqrt": lambda lib, a: a.sqrt(),
    "rsqrt": lambda lib, a: a.rsqrt(),
    "reciprocal": lambda lib, a: a.reciprocal(),
    "pow_number": lambda lib, a: a ** 1.7,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    check(UNARY[name], X)


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_unary_of_positive_inputs(name):
    check(POSITIVE[name], POS)


BINARY = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "add_alpha": lambda lib, a, b: lib.add(a, b, alpha=0.3),
    "sub_alpha": lambda lib, a, b: lib.sub(a, b, alpha=2.5),
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "atan2": lambda lib, a, b: lib.atan2(a, b),
    "lerp": lambda lib, a, b: lib.lerp(a, b, 0.3),
    "addcmul": lambda lib, a, b: lib.addcmul(a, a, b, value=0.5),
    "where": lambda lib, a, b: lib.where(a > 0, a, b),
    "where_number": lambda lib, a, b: lib.where(a > b, a, 0.3),
    "mul_float32": lambda lib, a, b: a * b.float(),  # promotes to float32
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    check(BINARY[name], X, Y)


@pytest.mark.parametrize("name,shapes", [
    ("row", ((4, 6), (6,))), ("column", ((4, 6), (4, 1))), ("outer", ((4, 1), (1, 6))),
    ("batch", ((2, 3, 4), (3, 1))),
])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_broadcasting_binary(op, name, shapes):
    a, b = rand(*shapes[0]), rand(*shapes[1], low=0.5, high=3.0, seed=1)
    check(lambda lib, x, y: getattr(lib, op)(x, y), a, b)


def test_division():
    check(lambda lib, a, b: a / b, X, POS)


REDUCTIONS = {
    "sum": lambda lib, a: a.sum(),
    "sum_dim": lambda lib, a: a.sum(1),
    "sum_keepdim": lambda lib, a: a.sum(0, keepdim=True),
    "mean": lambda lib, a: a.mean(),
    "mean_dim": lambda lib, a: a.mean(1),
    "var": lambda lib, a: a.var(1),
    "std": lambda lib, a: a.std(),
    "norm": lambda lib, a: a.norm(),
    "prod": lambda lib, a: (a * 0.25 + 1).prod(1),
    "cumsum": lambda lib, a: a.cumsum(1),
    "logsumexp": lambda lib, a: a.logsumexp(1),
    "softmax": lambda lib, a: a.softmax(-1),
    "softmax_dim0": lambda lib, a: F(lib).softmax(a, dim=0),
    "log_softmax": lambda lib, a: a.log_softmax(-1),
}
ORDERED = {  # ties would let the libraries pick different elements: inputs without ties
    "max": lambda lib, a: a.max(),
    "max_dim": lambda lib, a: a.max(1),
    "min_dim": lambda lib, a: a.min(0),
    "amax": lambda lib, a: a.amax(0),
    "amin_keepdim": lambda lib, a: a.amin(1, keepdim=True),
    "argmax": lambda lib, a: a.argmax(1),
    "sort": lambda lib, a: a.sort(1),
    "sort_descending": lambda lib, a: a.sort(1, descending=True),
    "topk": lambda lib, a: a.topk(2, 1),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    check(REDUCTIONS[name], X)


@pytest.mark.parametrize("name", sorted(ORDERED))
def test_ordered_reductions(name):
    check(ORDERED[name], distinct(4, 6))


@pytest.mark.parametrize("shape,fn", [
    ((4096,), lambda lib, a: a.sum()),
    ((512, 8), lambda lib, a: a.mean(0)),
    ((8, 600), lambda lib, a: a.sum(1)),
    ((4, 2000), lambda lib, a: a.softmax(-1)),
    ((4, 2000), lambda lib, a: a.log_softmax(-1)),
], ids=["sum", "mean_dim0", "sum_dim1", "softmax", "log_softmax"])
def test_long_reductions_accumulate_in_float32(shape, fn):
    check(fn, rand(*shape, low=0.0, high=2.0))


def test_broadcast_gradient_over_many_rows():
    check(lambda lib, a, b: a + b, rand(512, 8), rand(8))


MATMUL = {
    "matmul": (lambda lib, a, b: a @ b.T, (4, 6), (5, 6)),
    "matmul_long": (lambda lib, a, b: a @ b, (16, 1024), (1024, 8)),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), (2, 3, 4), (2, 4, 5)),
    "mv": (lambda lib, a, b: lib.mv(a, b), (4, 6), (6,)),
    "linear_no_bias": (lambda lib, a, b: F(lib).linear(a, b), (3, 4, 6), (5, 6)),
    "einsum": (lambda lib, a, b: lib.einsum("ij,kj->ik", a, b), (4, 6), (5, 6)),
}


@pytest.mark.parametrize("name", sorted(MATMUL))
def test_matmul(name):
    fn, sa, sb = MATMUL[name]
    check(fn, rand(*sa), rand(*sb, seed=1))


def test_linear_with_bias():
    check(lambda lib, a, w, b: F(lib).linear(a, w, b), X, rand(5, 6), rand(5))


def test_mlp_forward_backward():
    def mlp(lib, x, w1, b1, w2, b2):
        return F(lib).linear(F(lib).gelu(F(lib).linear(x, w1, b1)), w2, b2)
    check(mlp, rand(8, 6), rand(10, 6, low=-0.5, high=0.5), rand(10),
          rand(3, 10, low=-0.5, high=0.5), rand(3))


INDEXING = {
    "slice": lambda lib, a, i: a[1:3, ::2],
    "int_list": lambda lib, a, i: a[[0, 2, 2]],
    "tensor_index": lambda lib, a, i: a[i[:, 0]],
    "mask": lambda lib, a, i: a[a > 0.5],
    "gather": lambda lib, a, i: a.gather(1, i),
    "index_select": lambda lib, a, i: a.index_select(1, lib.tensor([0, 2, 2])),
    "take_along_dim": lambda lib, a, i: lib.take_along_dim(a, i, 1),
    "narrow_transpose": lambda lib, a, i: a.narrow(1, 1, 3).t(),
    "flip": lambda lib, a, i: a.flip(0),
    "masked_fill": lambda lib, a, i: a.masked_fill(a > 1, 0.5),
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing(name):
    check(INDEXING[name], X, np.random.default_rng(7).integers(0, 4, (4, 6)))


@pytest.mark.parametrize("name", ["cat", "cat_dim1", "stack", "stack_dim2"])
def test_cat_and_stack(name):
    fn = {"cat": lambda lib, a, b: lib.cat([a, b]),
          "cat_dim1": lambda lib, a, b: lib.cat([a, b, a], 1),
          "stack": lambda lib, a, b: lib.stack([a, b]),
          "stack_dim2": lambda lib, a, b: lib.stack([a, b], 2)}[name]
    check(fn, X, Y)


def test_max_pool2d():
    check(lambda lib, a: F(lib).max_pool2d(a, 2), distinct(2, 3, 8, 8))


def test_max_pool2d_with_padding_and_indices():
    check(lambda lib, a: F(lib).max_pool2d(a, 3, stride=2, padding=1, return_indices=True),
          distinct(1, 2, 7, 7))


@pytest.mark.parametrize("name", ["avg_pool2d", "adaptive_avg_pool2d", "bilinear"])
def test_averaging_pools(name):
    fn = {"avg_pool2d": lambda lib, a: F(lib).avg_pool2d(a, 2),
          "adaptive_avg_pool2d": lambda lib, a: F(lib).adaptive_avg_pool2d(a, 3),
          "bilinear": lambda lib, a: F(lib).interpolate(a, scale_factor=2, mode="bilinear")}
    check(fn[name], IMG)


LOSSES = {
    "cross_entropy": lambda lib, a: F(lib).cross_entropy(a, lib.tensor([0, 3, 5, 1])),
    "cross_entropy_sum": lambda lib, a: F(lib).cross_entropy(a, lib.tensor([2, 2, 0, 4]),
                                                            reduction="sum"),
    "nll_loss": lambda lib, a: F(lib).nll_loss(a.log_softmax(1), lib.tensor([0, 3, 5, 1])),
    "mse_loss": lambda lib, a: F(lib).mse_loss(a, a.detach().flip(0)),
    "l1_loss": lambda lib, a: F(lib).l1_loss(a, a.detach().flip(1)),
    "smooth_l1_loss": lambda lib, a: F(lib).smooth_l1_loss(a, a.detach() * 0.5),
    "bce_with_logits": lambda lib, a: F(lib).binary_cross_entropy_with_logits(
        a, (a.detach() > 0).to(a.dtype)),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses(name):
    check(LOSSES[name], X)


def test_cross_entropy_over_many_rows():
    check(lambda lib, a: F(lib).cross_entropy(a, lib.tensor(np.arange(600) % 8)),
          rand(600, 8))


def test_cast_to_bfloat16_and_back():
    def fn(lib, a, b):  # a, b: bfloat16 leaves
        up = a.float()  # bfloat16 -> float32: the gradient comes back bfloat16
        return up * 3.0, (up.to(lib.bfloat16) * b).double()
    check(fn, X, Y)


def test_cast_from_float32_records_tocopy():
    results = []
    for lib in (torch, ember):
        a = lib.tensor(X, requires_grad=True)  # a float32 leaf
        b = a.to(lib.bfloat16)
        (b * lib.tensor(Y).to(lib.bfloat16)).sum().backward()
        results.append((type(b.grad_fn).__name__, _dtype_name(a.grad.dtype),
                        a.grad.numpy(), b.float().detach().numpy()))
    (tn, td, tg, tb), (en, ed, eg, eb) = results
    assert (en, ed) == (tn, td) == ("ToCopyBackward0", "float32")
    np.testing.assert_array_equal(eb, tb)  # rounding to bfloat16: to nearest, ties to even
    np.testing.assert_array_equal(eg, tg)


def test_isinf_isnan_isfinite():
    a = np.array([1.0, np.inf, -np.inf, np.nan, 0.0, 3e38], np.float32)
    for name in ("isinf", "isnan", "isfinite", "isposinf", "isneginf"):
        got = getattr(ember, name)(ember.tensor(a).to(ember.bfloat16)).numpy()
        want = getattr(torch, name)(torch.tensor(a).to(torch.bfloat16)).numpy()
        np.testing.assert_array_equal(got, want, err_msg=name)
