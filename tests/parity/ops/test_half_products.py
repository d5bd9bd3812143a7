"""Half-precision products against PyTorch: matmul, mm, bmm, mv, dot, einsum, linear, addmm,
conv1d, conv2d and conv_transpose2d in float16 and bfloat16, values and gradients (their
dtypes too), with transposed (non-contiguous) inputs and broadcast batch dims.

PyTorch's CPU kernels accumulate half-precision products in float32 and round the result
once; ember computes them as one float32 product rounded once. Each result is compared with
PyTorch's half-precision result and with PyTorch's float64 computation on the same values, in
units of the output dtype's spacing at each value (its unit in the last place):

* against float64, half a unit: the exact value correctly rounded;
* against PyTorch, one unit: two float32 accumulations in different orders differ in their
  last float32 bits, which moves a value across a rounding boundary at most once.

Both leave a float32 accumulation error that is not small next to the unit of a result near
zero (cancellation): ``SLACK`` units at the scale of the whole output (the unit at its largest
value) allow it. Measured over 20 seeds: at most 0.001 such units, while the second rounding
of the composed addmm showed as 0.023 units and more against PyTorch's single one: 1/64
still catches that. The wider allowances, each measured, are named where they are used.

In bfloat16 the gradient kernels (``gemm``, ``conv_backward``) are also compared directly,
and the gradients through autograd where ember has bfloat16 autograd."""
import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as EF
import torch.nn.functional as TF
from ember._ops import conv as conv_ops
from ember.backend import gemm

HALF = ["float16", "bfloat16"]


def _has_autograd(name):
    try:
        ember.zeros(1, dtype=getattr(ember, name)).requires_grad_()
    except NotImplementedError:  # bfloat16 before ember had autograd for it
        return False
    return True


#: spacing at 1 (machine epsilon), smallest normal and smallest subnormal of each dtype
_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}
_NORMAL = {"float16": 2.0 ** -14, "bfloat16": 2.0 ** -126}
_SUBNORMAL = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -133}

#: float32 accumulation error allowed, in units at the output's largest value (see above)
SLACK = 1 / 64
#: ember rounds more than once where an op is a composition (addmm and its relatives: the
#: product, its scaling, the input's and the sum; conv_transpose2d: the bias added to the
#: rounded result) or where a gradient is a few products summed over broadcast batch dims:
#: measured (20 seeds) up to 1.27 units at the output's scale beyond half a unit from float64
EXTRA_ROUNDING = 2
#: a gradient summed over many rows by ``sum`` in float16 (addmm's 1-D input, addr's vectors,
#: a transposed convolution's bias), which rounds at every add: measured (20 seeds) up to 2.5
#: units at the output's scale beyond one unit from PyTorch's
FLOAT16_SUM = 4
#: PyTorch's float16 CPU convolutions do not round once: their input, weight and bias
#: gradients measured up to 1.7 units at the output's scale from float64 (ember's: 0.0006),
#: and (20 seeds) up to 1.4 units at the scale beyond one unit from ember's
TORCH_CONV = 2


def _units(values, name):
    """Spacing of the dtype ``name`` at each of ``values``."""
    mag = np.maximum(np.abs(values), _NORMAL[name])
    return np.maximum(_EPS[name] * 2.0 ** np.floor(np.log2(mag)), _SUBNORMAL[name])


def _assert_within(got, expected, name, units, slack=SLACK, what=""):
    """|got - expected| <= units * unit(expected) + slack * unit(max |expected|)."""
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    if not got.size:
        return
    scale = _units(np.abs(expected).max(), name)
    excess = np.abs(got - expected) - (units * _units(expected, name) + slack * scale)
    worst = np.unravel_index(np.argmax(excess), excess.shape)
    assert excess[worst] <= 0, (
        f"{what} ({name}): {got[worst]} vs {expected[worst]} at {worst}: "
        f"{abs(got[worst] - expected[worst]) / scale:.4f} units at the output's scale")


def _values(shapes, name, seed):
    """Standard normal float32 arrays whose values are exact in the dtype ``name``."""
    rng = np.random.default_rng(seed)
    dt = getattr(torch, name)
    return [torch.tensor(rng.standard_normal(s).astype(np.float32)).to(dt).float().numpy()
            for s in shapes]


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _run(lib, fn, arrays, dt, name, grad, transposed):
    """``fn(lib, *tensors)`` on tensors of dtype ``dt`` holding ``arrays`` (transposed views
    of contiguous leaves where ``transposed``): its value and, with ``grad``, the leaves'
    gradients for a cotangent of values exact in ``name``, as float64 arrays; and their
    dtype names."""
    leaves, views = [], []
    for a in arrays:
        flip = transposed and a.ndim >= 2
        leaf = lib.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)) if flip else a).to(dt)
        leaf.requires_grad_(grad)
        leaves.append(leaf)
        views.append(leaf.transpose(-1, -2) if flip else leaf)
    y = fn(lib, *views)
    out, names = [y.detach().double().numpy()], [_dtype_name(y)]
    if grad:
        cotangent = _values([tuple(y.shape)], name, 99)[0]
        y.backward(lib.tensor(cotangent).to(dt))
        out += [leaf.grad.double().numpy() for leaf in leaves]
        names += [_dtype_name(leaf.grad) for leaf in leaves]
    return out, names


def _check(name, fn, shapes, *, transposed=False, seed=0, ember_slack=(), torch_slack=(),
           what=""):
    """ember's value and gradients (where it has autograd for the dtype) against PyTorch's
    and against float64. ``ember_slack`` and ``torch_slack`` map an output (0 the value, i + 1 the
    gradient of input i) to a wider allowance, for ember's extra roundings (against both) or
    PyTorch's (against PyTorch only)."""
    arrays = _values(shapes, name, seed)
    grad = _has_autograd(name)
    theirs, their_names = _run(torch, fn, arrays, getattr(torch, name), name, grad, transposed)
    ours, our_names = _run(ember, fn, arrays, getattr(ember, name), name, grad, transposed)
    exact, _ = _run(torch, fn, arrays, torch.float64, name, grad, transposed)
    assert our_names == their_names == [name] * len(our_names), (our_names, their_names)
    ember_slack, torch_slack = dict(ember_slack), dict(torch_slack)
    for i, (e, t, x) in enumerate(zip(ours, theirs, exact)):
        slack = ember_slack.get(i, SLACK)
        _assert_within(e, t, name, 1, max(slack, torch_slack.get(i, SLACK)),
                       f"{what} output {i} vs torch")
        _assert_within(e, x, name, 0.5, slack, f"{what} output {i} vs float64")


MATMUL_SHAPES = [
    ((4,), (4,)),                  # dot
    ((7, 40), (40,)),              # matrix . vector
    ((40,), (40, 9)),              # vector . matrix
    ((33, 70), (70, 41)),          # 2-D
    ((96, 256), (256, 80)),        # 2-D, large enough for ember's threaded bands
    ((4, 17, 30), (4, 30, 9)),     # batched (a stack of one batch shape)
    ((3, 4, 17, 30), (30, 9)),     # a stack times one matrix
]


@pytest.mark.parametrize("name", HALF)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(name, shapes, transposed):
    _check(name, lambda lib, a, b: lib.matmul(a, b), shapes, transposed=transposed,
           what="matmul")


@pytest.mark.parametrize("name", HALF)
@pytest.mark.parametrize("shapes", [((3, 1, 17, 30), (5, 30, 9)), ((1, 17, 30), (4, 30, 9)),
                                    ((17, 30), (3, 30, 9))], ids=str)
def test_matmul_broadcast_batch(name, shapes):
    # the gradients are per-matrix products summed over the broadcast dims: see EXTRA_ROUNDING
    _check(name, lambda lib, a, b: a @ b, shapes, transposed=True,
           ember_slack={1: EXTRA_ROUNDING, 2: EXTRA_ROUNDING}, what="matmul broadcast")


@pytest.mark.parametrize("name", HALF)
def test_mm_bmm_mv_dot(name):
    _check(name, lambda lib, a, b: lib.mm(a, b), [(33, 70), (70, 41)], transposed=True,
           what="mm")
    _check(name, lambda lib, a, b: lib.bmm(a, b), [(4, 17, 300), (4, 300, 9)], seed=1,
           what="bmm")
    _check(name, lambda lib, a, b: lib.bmm(a, b), [(4, 17, 30), (4, 30, 9)], seed=2,
           transposed=True, what="bmm")
    _check(name, lambda lib, a, v: lib.mv(a, v), [(20, 50), (50,)], seed=3, what="mv")
    _check(name, lambda lib, a, b: lib.dot(a, b), [(300,), (300,)], seed=4, what="dot")


@pytest.mark.parametrize("name", HALF)
def test_einsum(name):
    _check(name, lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b),
           [(4, 17, 30), (4, 30, 9)], what="einsum")
    _check(name, lambda lib, a, b: lib.einsum("ij,kj->ik", a, b), [(17, 60), (9, 60)],
           transposed=True, seed=1, what="einsum")


def _functional(lib):
    return TF if lib is torch else EF


@pytest.mark.parametrize("name", HALF)
@pytest.mark.parametrize("x_shape", [(33, 700), (2, 17, 70)], ids=str)
def test_linear(name, x_shape):
    shapes = [x_shape, (41, x_shape[-1]), (41,)]
    _check(name, lambda lib, x, w, b: _functional(lib).linear(x, w, b), shapes,
           what="linear")
    _check(name, lambda lib, x, w: _functional(lib).linear(x, w), shapes[:2], seed=1,
           transposed=True, what="linear without bias")


@pytest.mark.parametrize("name", HALF)
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.7, 1.3)])
def test_addmm(name, beta, alpha):
    # ember's addmm is a composition (mm, then the scaling and the sum): see EXTRA_ROUNDING
    for bias_shape in [(33, 41), (41,)]:
        extra = {i: EXTRA_ROUNDING for i in range(4)}
        if bias_shape == (41,):  # its gradient: the output's summed over rows (FLOAT16_SUM)
            extra[1] = FLOAT16_SUM
        _check(name, lambda lib, c, a, b: lib.addmm(c, a, b, beta=beta, alpha=alpha),
               [bias_shape, (33, 70), (70, 41)], ember_slack=extra, what="addmm")


ADD_PRODUCTS = [  # (function, input, the two factors): input of the result's shape
    ("baddbmm", (4, 17, 9), (4, 17, 30), (4, 30, 9)),
    ("addbmm", (17, 9), (4, 17, 30), (4, 30, 9)),
    ("addmv", (20,), (20, 50), (50,)),
    ("addr", (20, 30), (20,), (30,)),
]


@pytest.mark.parametrize("name", HALF)
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.7, 1.3)])
@pytest.mark.parametrize("case", ADD_PRODUCTS, ids=lambda c: c[0])
def test_addmm_relatives(name, case, beta, alpha):
    fn = case[0]
    if not hasattr(torch, fn) or not hasattr(ember, fn):
        pytest.skip(f"ember has no {fn}")
    # compositions like addmm (EXTRA_ROUNDING); addr's vectors get their gradients from an
    # element-wise product summed by ``sum`` (FLOAT16_SUM)
    extra = {i: EXTRA_ROUNDING for i in range(4)}
    if fn == "addr":
        extra.update({2: FLOAT16_SUM, 3: FLOAT16_SUM})
    _check(name, lambda lib, c, a, b: getattr(lib, fn)(c, a, b, beta=beta, alpha=alpha),
           list(case[1:]), ember_slack=extra, what=fn)


CONVS = [  # (function, x, w, bias, keyword arguments)
    ("conv1d", (8, 6, 20), (10, 6, 3), (10,), dict(padding=1)),
    ("conv1d", (4, 16, 31), (8, 4, 5), (8,), dict(stride=2, groups=4)),
    ("conv2d", (8, 16, 12, 12), (32, 16, 3, 3), (32,), dict(padding=1)),   # Winograd's
    ("conv2d", (8, 8, 13, 13), (12, 4, 3, 3), (12,), dict(stride=2, groups=2)),
    ("conv2d", (8, 1, 12, 12), (6, 1, 5, 5), (6,), dict(dilation=2)),     # a short patch
    ("conv2d", (4, 24, 9, 9), (16, 24, 1, 1), None, dict()),
]


@pytest.mark.parametrize("name", HALF)
@pytest.mark.parametrize("case", CONVS, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[4]}")
def test_conv(name, case):
    fn, x, w, b, kwargs = case
    shapes = [x, w] + ([] if b is None else [b])
    _check(name, lambda lib, *args: getattr(_functional(lib), fn)(
        *args[:2], args[2] if len(args) > 2 else None, **kwargs), shapes,
        torch_slack={1: TORCH_CONV, 2: TORCH_CONV, 3: TORCH_CONV}, what=fn)


@pytest.mark.parametrize("name", HALF)
@pytest.mark.parametrize("kwargs", [dict(stride=2, padding=1), dict(output_padding=1,
                                                                     stride=2, groups=2)],
                         ids=str)
def test_conv_transpose2d(name, kwargs):
    # the bias is added to the rounded result (EXTRA_ROUNDING), its gradient summed by ``sum``
    _check(name, lambda lib, x, w, b: _functional(lib).conv_transpose2d(x, w, b, **kwargs),
           [(4, 8, 7, 7), (8, 3, 3, 3), (3 * kwargs.get("groups", 1),)],
           ember_slack={0: EXTRA_ROUNDING, 3: FLOAT16_SUM},
           torch_slack={i: TORCH_CONV for i in range(4)}, what="conv_transpose2d")


def _torch_grads(fn, arrays, dt, cotangent):
    leaves = [torch.tensor(a).to(dt).requires_grad_() for a in arrays]
    fn(*leaves).backward(torch.tensor(cotangent).to(dt))
    return [leaf.grad.double().numpy() for leaf in leaves]


def _bf16(a):
    return ember.tensor(a).to(ember.bfloat16)._data


def _f64(a):
    return np.asarray(a).astype(np.float64)


@pytest.mark.parametrize("transposed", [False, True])
def test_bfloat16_matmul_gradient_kernels(transposed):
    """A product's gradients are products (``gemm.matmul``, a linear layer's
    ``gemm.matmul_pair``): in bfloat16 against PyTorch's autograd and float64."""
    a, b, g = _values([(33, 70), (70, 41), (33, 41)], "bfloat16", 5)
    theirs = _torch_grads(lambda x, y: x @ y, [a, b], torch.bfloat16, g)
    exact = _torch_grads(lambda x, y: x @ y, [a, b], torch.float64, g)
    ab, bb, gb = _bf16(a), _bf16(b), _bf16(g)
    if transposed:  # the same values read through transposes
        ab, bb, gb = (np.ascontiguousarray(m.T).T for m in (ab, bb, gb))
    ours = [gemm.matmul(gb, bb.T), gemm.matmul(ab.T, gb)]
    ours_pair = gemm.matmul_pair(gb, bb.T, ab.T, gb)
    for got in (ours, ours_pair):
        for i, (e, t, x) in enumerate(zip(got, theirs, exact)):
            assert e.dtype == ab.dtype
            _assert_within(_f64(e), t, "bfloat16", 1, what=f"gradient {i} vs torch")
            _assert_within(_f64(e), x, "bfloat16", 0.5, what=f"gradient {i} vs float64")


@pytest.mark.parametrize("case", CONVS, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[4]}")
def test_bfloat16_conv_gradient_kernels(case):
    """``conv_backward``'s input, weight and bias gradients in bfloat16 against PyTorch's
    autograd and float64 (their forward: ``test_conv``)."""
    fn, x_shape, w_shape, _, kwargs = case
    nd = len(x_shape) - 2
    stride = kwargs.get("stride", 1)
    dilation = kwargs.get("dilation", 1)
    padding = kwargs.get("padding", 0)
    groups = kwargs.get("groups", 1)

    def conv(x, w, b):
        return getattr(TF, fn)(x, w, b, **kwargs)
    x, w, b = _values([x_shape, w_shape, (w_shape[0],)], "bfloat16", 6)
    out_shape = tuple(conv(*(torch.tensor(v) for v in (x, w, b))).shape)
    g, = _values([out_shape], "bfloat16", 7)
    theirs = _torch_grads(conv, [x, w, b], torch.bfloat16, g)
    exact = _torch_grads(conv, [x, w, b], torch.float64, g)
    geom = conv_ops._Geom((stride,) * nd, (dilation,) * nd, ((padding, padding),) * nd,
                          x_shape[2:], groups)
    ours = conv_ops.conv_backward(_bf16(x), _bf16(w), _bf16(g), geom, (True, True, True))
    for i, (e, t, r) in enumerate(zip(ours, theirs, exact)):
        assert e.dtype == _bf16(x).dtype
        _assert_within(_f64(e), t, "bfloat16", 1, what=f"{fn} gradient {i} vs torch")
        _assert_within(_f64(e), r, "bfloat16", 0.5, what=f"{fn} gradient {i} vs float64")
