"""The array-backend seam: ops reach their array module only through ``ember.backend``.

A strict fake second backend is registered for these tests only: its arrays
(``StrictArray``) are NumPy arrays underneath, but any NumPy function or ufunc
called on them directly -- ``np.exp(d)`` instead of ``xp.exp(d)`` with
``xp = get_array_module(d)`` -- raises "direct numpy call: <func>", and so does
mixing a plain NumPy array into their arithmetic (what CuPy refuses too). Calls
through the fake namespace (``StrictNamespace``), array methods and operators
are allowed: they unwrap to NumPy, run, and wrap the result back (NumPy scalars
become 0-d arrays, as CuPy returns them).

Each op then runs forward and backward on StrictArray data and must (a) make no
direct NumPy call, (b) give StrictArray results and gradients, (c) equal the same
run on plain NumPy data.
"""
import math
import threading
import types

import numpy
import pytest

import ember
from ember._ops.weight_norm import WeightNormInterface
import ember.nn.functional as F
from ember import backend

_state = threading.local()


class _Inside:
    """Marks the current thread as inside the fake namespace (re-entrant)."""

    def __enter__(self):
        _state.depth = getattr(_state, "depth", 0) + 1

    def __exit__(self, *exc):
        _state.depth -= 1


def _inside():
    return getattr(_state, "depth", 0) > 0


def _unwrap(obj):
    """StrictArrays (also inside lists, tuples, dicts) as plain NumPy views."""
    if isinstance(obj, StrictArray):
        return numpy.ndarray.view(obj, numpy.ndarray)
    if type(obj) in (list, tuple):
        return type(obj)(_unwrap(o) for o in obj)
    if type(obj) is dict:
        return {k: _unwrap(v) for k, v in obj.items()}
    return obj


def _wrap(obj):
    """NumPy results as StrictArrays (scalars as 0-d arrays; tuples and lists through)."""
    if type(obj) is numpy.ndarray:
        return obj.view(StrictArray)
    if isinstance(obj, numpy.generic):
        return numpy.asarray(obj).view(StrictArray)
    if isinstance(obj, tuple):
        items = [_wrap(o) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if type(obj) is list:
        return [_wrap(o) for o in obj]
    return obj


def _plain_arrays(obj):
    """Whether ``obj`` holds a plain NumPy array (not a StrictArray)."""
    if isinstance(obj, numpy.ndarray):
        return not isinstance(obj, StrictArray)
    if type(obj) in (list, tuple):
        return any(_plain_arrays(o) for o in obj)
    if type(obj) is dict:
        return any(_plain_arrays(o) for o in obj.values())
    return False


def _run(fn, name, args, kwargs):
    with _Inside():
        result = fn(*_unwrap(args), **_unwrap(kwargs))
    out = kwargs.get("out")
    if out is not None and isinstance(out, StrictArray):
        return out  # ``out=``: the caller's array, not a new wrapper of it
    return _wrap(result)


# arrays of another module may be converted by these, not mixed into anything else
_CONVERSIONS = {"asarray", "array", "asanyarray"}


def _through(fn, name):
    """``fn`` run on unwrapped arguments inside the namespace, its result wrapped."""
    def call(*args, **kwargs):
        if name not in _CONVERSIONS and (_plain_arrays(args) or _plain_arrays(kwargs)):
            raise AssertionError(f"numpy array passed to the strict backend: {name}")
        return _run(fn, name, args, kwargs)
    call.__name__ = name
    return call


class _Ufunc:
    """A NumPy ufunc seen through the namespace (``xp.add(...)``, ``xp.add.at(...)``)."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self._call = _through(ufunc, ufunc.__name__)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._ufunc, name)
        return _through(attr, f"{self._ufunc.__name__}.{name}") if callable(attr) else attr


class StrictNamespace:
    """A module-like view of ``module`` (numpy or one of its submodules) whose functions
    take and return StrictArrays."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        attr = getattr(self._module, name)
        if isinstance(attr, types.ModuleType):
            wrapped = StrictNamespace(attr)
        elif isinstance(attr, numpy.ufunc):
            wrapped = _Ufunc(attr)
        elif isinstance(attr, type) or not callable(attr):
            wrapped = attr  # dtypes, scalar types, errstate, constants
        else:
            wrapped = _through(attr, name)
        setattr(self, name, wrapped)
        return wrapped


class StrictArray(numpy.ndarray):
    """A NumPy array that NumPy's own functions refuse (see the module docstring)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if not _inside():
            raise AssertionError(f"direct numpy call: numpy.{ufunc.__name__}"
                                 f"{'' if method == '__call__' else '.' + method}")
        return _run(getattr(ufunc, method), ufunc.__name__, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if not _inside():
            raise AssertionError(f"direct numpy call: {func.__module__}.{func.__name__}")
        return _run(func, func.__name__, args, kwargs)


# operators that would combine a StrictArray with another module's array
_ARITHMETIC = {name for name in dir(numpy.ndarray) if name.startswith("__") and name[2:-2] in {
    "add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "truediv", "rtruediv",
    "itruediv", "floordiv", "rfloordiv", "ifloordiv", "mod", "rmod", "imod", "pow", "rpow",
    "ipow", "matmul", "rmatmul", "imatmul", "and", "rand", "iand", "or", "ror", "ior", "xor",
    "rxor", "ixor", "lt", "le", "gt", "ge", "eq", "ne"}}
# left as NumPy implements them: construction, pickling, the protocols above, view itself
_NOT_WRAPPED = {"view", "__iter__", "__new__", "__init__", "__getattribute__", "__setattr__",
                "__delattr__", "__init_subclass__", "__subclasshook__", "__class_getitem__",
                "__reduce__", "__reduce_ex__", "__setstate__", "__getstate__", "__sizeof__",
                "__dir__", "__format__", "__class__", "__dlpack__", "__dlpack_device__",
                "__buffer__", "__release_buffer__", "__complex__", "__hash__"}


def _method(name):
    """StrictArray's ``name``: NumPy's method run inside the namespace on the plain view."""
    base = getattr(numpy.ndarray, name)

    def method(self, *args, **kwargs):
        if name in _ARITHMETIC and _plain_arrays(args):
            raise AssertionError(f"numpy array mixed into a strict array's {name}")
        plain = numpy.ndarray.view(self, numpy.ndarray)
        with _Inside():
            result = base(plain, *_unwrap(args), **_unwrap(kwargs))
        if name == "diagonal" and plain.flags.writeable:
            result.flags.writeable = True  # as ember makes NumPy's diagonals (CuPy's are)
        return self if result is plain else _wrap(result)
    method.__name__ = name
    return method


for _name in dir(numpy.ndarray):
    if _name in _NOT_WRAPPED or _name.startswith("__array"):
        continue
    if callable(getattr(numpy.ndarray, _name)):
        setattr(StrictArray, _name, _method(_name))

STRICT = StrictNamespace(numpy)
STRICT.ndarray = StrictArray
STRICT.asnumpy = lambda a: numpy.array(numpy.ndarray.view(a, numpy.ndarray), copy=True)


@pytest.fixture
def strict():
    """StrictArray registered with ember's backend for one test."""
    backend.register_array_module(StrictArray, STRICT)
    yield
    backend.unregister_array_module(StrictArray)


@pytest.fixture
def strict_default(strict):
    """... and the default module for arrays made from nothing."""
    previous = backend.set_default_array_module(STRICT)
    yield
    backend.set_default_array_module(previous)


# ---- the fake itself ----------------------------------------------------------------------
def test_the_fake_refuses_direct_numpy_calls(strict):
    a = numpy.arange(4.0).view(StrictArray)
    with pytest.raises(AssertionError, match="direct numpy call: numpy.exp"):
        numpy.exp(a)
    with pytest.raises(AssertionError, match="direct numpy call: numpy.concatenate"):
        numpy.concatenate([a, a])
    with pytest.raises(AssertionError, match="numpy array"):
        a + numpy.ones(4)
    assert type(STRICT.exp(a)) is StrictArray
    assert type(a.sum()) is StrictArray and type(a * 2) is StrictArray
    assert backend.get_array_module(a) is STRICT
    assert backend.get_array_module(numpy.ones(2)) is numpy
    assert backend.get_array_module(None, 1.5) is numpy  # nothing owned: the default
    assert type(backend.to_host(a)) is numpy.ndarray


def test_unregistered_arrays_go_back_to_numpy():
    assert backend.get_array_module(numpy.arange(2.0).view(StrictArray)) is numpy


# ---- the op suite -------------------------------------------------------------------------
RNG = numpy.random.default_rng(0)


def _floats(*shape):
    return RNG.standard_normal(shape).astype(numpy.float32)


def _positive(*shape):
    return (RNG.random(shape) + 0.5).astype(numpy.float32)


def _ints(*shape):
    return RNG.integers(-4, 5, shape)


_wrap_case = [None]  # how the running case makes its arrays (plain or StrictArray)


def _index(values):
    """An integer tensor (indices, targets) in the running case's module."""
    return ember.from_numpy(_wrap_case[0](numpy.array(values)))


# name -> (inputs, fn): inputs are NumPy arrays (float ones become leaves that require grad),
# fn maps the tensors to a tensor or a tuple of tensors
CASES = {
    "add_sub_mul_div": ([_floats(3, 4), _positive(4)],
                        lambda a, b: (a + b) * (a - b) / b + 2 * a - 1.5),
    "pow_neg": ([_positive(3, 4), _floats(3, 4)], lambda a, b: a ** b - (-a) ** 2 + 2 ** b),
    "unary_math": ([_positive(3, 4)],
                   lambda a: a.exp() + a.log() + a.sqrt() + a.sin() + a.cos() + a.tanh()
                   + a.sigmoid() + a.abs() + a.rsqrt() + a.reciprocal() + a.log1p()
                   + a.expm1() + a.exp2() + a.log2() + a.tan() + a.erf() + a.sign()),
    "relu_clamp_minmax": ([_floats(3, 4), _floats(3, 4)],
                          lambda a, b: a.relu() + a.clamp(-0.5, 0.5) + ember.maximum(a, b)
                          + ember.minimum(a, b) + a.clamp(min=b) + ember.where(a > b, a, b)),
    "activations": ([_floats(3, 4)],
                    lambda a: F.leaky_relu(a) + F.elu(a) + F.gelu(a) + F.gelu(a, "tanh")
                    + F.silu(a) + F.softplus(a) + F.mish(a) + F.hardtanh(a) + F.relu6(a)),
    "compare_logic": ([_floats(3, 4), _floats(3, 4)],
                      lambda a, b: ((a > b) & (a < 1) | (a == b) ^ (a != 0)).float() * a
                      + (~(a >= b)).float() + a.isnan().float()),
    "masked_fill_lerp": ([_floats(3, 4), _floats(3, 4)],
                         lambda a, b: a.masked_fill(a > 0, 2.0) + ember.lerp(a, b, 0.3)
                         + ember.addcmul(a, a, b, value=0.5) + ember.addcdiv(a, a, b.abs() + 1)),
    "floor_remainder": ([_positive(3, 4)],
                        lambda a: (a * 3).floor() + (a * 3).ceil() + (a * 3).round()
                        + (a * 3).trunc() + (a * 3) % 2 + (a * 3) // 2
                        + a.div(0.3, rounding_mode="trunc")),
    "sum_mean_prod": ([_floats(3, 4)],
                      lambda a: (a.sum(), a.sum(1), a.mean(0, keepdim=True), a.prod(1), a.prod())),
    "max_min_argmax": ([_floats(3, 4)],
                       lambda a: (a.max(), a.min(), a.max(1).values, a.min(0).values,
                                  a.amax(1), a.amin(0), a.argmax(1).float(),
                                  a.argmin().float())),
    "var_std_norm_lse": ([_floats(3, 4)],
                         lambda a: (a.var(), a.std(1), a.norm(), a.norm(1), a.norm(3.0, 1),
                                    a.logsumexp(1), a.norm(float("inf")))),
    "cumsum_cumprod_all_any": ([_floats(3, 4)],
                               lambda a: (a.cumsum(1), a.cumprod(0),
                                          (a > 0).all().float(), (a > 0).any(1).float())),
    "matmul_linear": ([_floats(2, 3, 4), _floats(5, 4), _floats(5)],
                      lambda x, w, b: (F.linear(x, w, b), x @ w.t(), ember.mm(x[0], w.t()),
                                       ember.bmm(x, x.transpose(1, 2)), w.mv(x[0, 0]),
                                       ember.addmm(b, x[0], w.t()), ember.outer(b, b),
                                       ember.einsum("bij,kj->bik", x, w))),
    "shape_views": ([_floats(2, 3, 4)],
                    lambda a: (a.view(6, 4), a.reshape(4, 6), a.permute(2, 0, 1), a.transpose(0, 1),
                               a.unsqueeze(1).squeeze(1), a.flatten(1), a.expand(3, 2, 3, 4),
                               a.narrow(2, 1, 2), a.flip(1), a.roll(1, 2), a.repeat(1, 2, 1),
                               a.tril(), a.triu(1), a.contiguous(), a.clone(),
                               ember.cat([a, a], 1), ember.stack([a, a]), a.chunk(2, 2)[1],
                               a.split(1, 0)[0], a.unbind(1)[2])),
    "indexing": ([_floats(4, 5)],
                 lambda a: (a[1], a[1:3, ::2], a[None, ..., 0], a[[0, 2, 2]],
                            a[_index([1, 3])], a[a > 0], a[:, _index([0, 0, 4])],
                            a.index_select(1, _index([4, 1])), a.masked_select(a < 0),
                            a.take_along_dim(_index([[0], [1], [2], [3]]), 1))),
    "gather_scatter": ([_floats(3, 4), _floats(3, 2)],
                       lambda a, s: (a.gather(1, _index([[0, 1], [2, 2], [3, 0]])),
                                     a.scatter(1, _index([[0, 1], [2, 3], [3, 0]]), s),
                                     a.scatter_add(1, _index([[0, 0], [2, 2], [3, 0]]), s),
                                     a.index_add(0, _index([2, 0]), a[:2]),
                                     a.scatter(1, _index([[1], [2], [0]]), 0.5))),
    "setitem": ([_floats(3, 4), _floats(4)],
                lambda a, v: _setitem(a, v)),
    "sort_topk": ([_floats(3, 5)],
                  lambda a: (a.sort(1).values, a.sort(0, descending=True).values,
                             a.topk(2).values, a.argsort(1).float(), a.nonzero().float())),
    "conv2d": ([_floats(2, 3, 7, 6), _floats(4, 3, 3, 3), _floats(4)],
               lambda x, w, b: (F.conv2d(x, w, b, padding=1), F.conv2d(x, w, stride=2),
                                F.conv1d(x[:, :, 0], w[:, :, 0], b))),
    "conv2d_long_patch": ([_floats(2, 8, 6, 6), _floats(6, 4, 3, 3)],
                          lambda x, w: F.conv2d(x, w, padding=1, groups=2)),
    "conv_transpose2d": ([_floats(2, 3, 5, 5), _floats(3, 2, 3, 3)],
                         lambda x, w: F.conv_transpose2d(x, w, stride=2)),
    "pooling": ([_floats(2, 3, 8, 8)],
                lambda x: (F.max_pool2d(x, 2), F.max_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 2),
                           F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
                           F.adaptive_avg_pool2d(x, (3, 2)), F.adaptive_max_pool2d(x, 3),
                           F.max_pool1d(x[:, :, 0], 2), F.max_pool2d(x, 3, ceil_mode=True))),
    "softmax_cross_entropy": ([_floats(4, 5)],
                              lambda x: (F.softmax(x, 1), F.log_softmax(x, 0),
                                         F.cross_entropy(x, _index([0, 4, 2, 1])),
                                         F.cross_entropy(x, _index([0, -100, 2, 1]),
                                                         label_smoothing=0.1),
                                         F.nll_loss(F.log_softmax(x, 1), _index([1, 1, 0, 3])))),
    "losses": ([_floats(4, 5), _floats(4, 5)],
               lambda x, t: (F.mse_loss(x, t), F.l1_loss(x, t), F.smooth_l1_loss(x, t),
                             F.binary_cross_entropy_with_logits(x, (t > 0).float()),
                             F.binary_cross_entropy(x.sigmoid(), (t > 0).float()),
                             F.kl_div(F.log_softmax(x, 1), F.softmax(t, 1), reduction="batchmean"),
                             F.huber_loss(x, t))),
    "embedding": ([_floats(6, 3)],
                  lambda w: (F.embedding(_index([[0, 2], [5, 2]]), w),
                             F.embedding(_index([1, 1, 3]), w, padding_idx=3),
                             F.one_hot(_index([0, 2]), 3).float())),
    "interpolate": ([_floats(1, 2, 4, 5)],
                    lambda x: (F.interpolate(x, scale_factor=2), F.interpolate(x, size=(3, 7),
                                                                              mode="bilinear"),
                               F.interpolate(x, size=(6, 3), mode="bilinear", align_corners=True),
                               F.interpolate(x[0], size=7, mode="linear"))),
    "normalization": ([_floats(4, 3, 2, 2), _positive(3), _floats(3)],
                      lambda x, w, b: (F.batch_norm(x, None, None, w, b, training=True),
                                       F.layer_norm(x, (2, 2)), F.group_norm(x, 3, w, b),
                                       F.normalize(x, dim=1))),
    "creation_like": ([_floats(3, 4)],
                      lambda a: (ember.zeros_like(a) + a, ember.ones_like(a) * a,
                                 ember.full_like(a, 2.5) - a, ember.empty_like(a).fill_(1.0) * a,
                                 a.new_zeros(2, 3).sum() + a, a.new_ones(4) * a,
                                 a.new_full((4,), 3.0) + a, a.new_tensor([1.0, 2.0, 3.0, 4.0]) * a,
                                 ember.rand_like(a) * 0, ember.randn_like(a) * 0,
                                 a.new_empty(4).zero_() + a)),
    "pad_dropout": ([_floats(2, 3, 4)],
                    lambda a: (F.pad(a, (1, 2)), F.pad(a, (1, 1, 2, 0), mode="reflect"),
                               F.pad(a, (2, 1), mode="replicate"), F.dropout(a, 0.5),
                               F.dropout2d(a[None], 0.5), F.dropout(a, 0.5, training=False))),
    "attention": ([_floats(2, 3, 4), _floats(12, 4), _floats(4, 4)],
                  lambda a, w_in, w_out: (
                      F.scaled_dot_product_attention(a, a, a),
                      F.scaled_dot_product_attention(a, a, a, is_causal=True, dropout_p=0.5),
                      F.scaled_dot_product_attention(a, a, a,
                                                     attn_mask=_index([[1, 0, 1]] * 3) > 0),
                      F.multi_head_attention_forward(
                          a, a, a, 4, 2, w_in, None, None, None, True, 0.0, w_out, None,
                          key_padding_mask=_index([[0, 1]] * 3) > 0,
                          attn_mask=_index([[0, 1]] * 2) > 0)[0])),
    "inplace_and_views": ([_floats(3, 4)], lambda a: _inplace(a)),
    "integer_ops": ([_floats(3, 4), _ints(3, 4)],
                    lambda a, i: ((i & 3) | 1 ^ i, i // 3, i % 3, i.abs() ** 2, -i, ~i,
                                  i.sum(), i.cumsum(0), i.prod(1), i.max(), i.argmax(),
                                  i.float() * a, ember.where(i > 0, a, 0.0),
                                  ember.where(i > 0, 1.0, 0.0) * a, 2 % i.abs().clamp(min=1),
                                  3 // i.abs().clamp(min=1), ember.remainder(5, i + 9),
                                  2 ** a, ember.pow(2, i.abs()),
                                  a.clamp(0, 1) + i.clamp(max=2), i.sort(1).values,
                                  (i > 0).sum(), i.bool().all(1), i.to(ember.float64),
                                  ember.floor_divide(i, 2), i.div(2))),
    "embedding_extras": ([_floats(6, 3)],
                         lambda w: (F.embedding(_index([0, 2, 2, 5]), w,
                                                scale_grad_by_freq=True),
                                    F.embedding(_index([1, 4]), w.detach() * 1, max_norm=0.5))),
    "pool_pad_extras": ([_floats(2, 3, 7, 6), _floats(2, 3, 4), _floats(5, 4, 4)],
                        lambda x, s, w: (F.avg_pool2d(x, 3, 2, 1, divisor_override=2),
                                         F.adaptive_avg_pool1d(s, 3),
                                         F.max_pool2d(x, 2, 1, 0, dilation=2),
                                         F.pad(x, (1, 2, 2, 1), mode="circular"),
                                         F.bilinear(s[:, 0], s[:, 1], w),
                                         F.conv2d(x, x[:2, :, :3, :3], dilation=2, padding="same"),
                                         F.interpolate(x, scale_factor=0.5))),
    # ReLU's row-parallel kernels (more than 2 * 4096 elements) and products large enough
    # for the banded GEMM
    "large_relu_matmul": ([_floats(3, 5000), _floats(192, 256), _floats(256, 320)],
                          lambda a, m, n: (a.relu(), F.relu6(a), m @ n, F.linear(m, n.t()),
                                           ember.addmm(m[:, :1], m, n))),
    "round_dot_reflected": ([_positive(3, 4), _floats(4)],
                            lambda a, v: ((a * 3).round(), (a * 3).round(decimals=1),
                                          ember.dot(v, v), 2 - a, 3 / a, 2 ** a, 5 % (a + 1),
                                          1.5 // (a + 1), ember.remainder(5, a + 1),
                                          ember.div(2, a), ember.where(v > 0, 1.5, -0.5) * v,
                                          ember.isclose(a, a * 1.0000001).float() * a)),
    "pool_conv_1d": ([_floats(2, 3, 8), _floats(3, 2, 3)],
                     lambda x, w: (F.avg_pool1d(x, 2), F.adaptive_max_pool1d(x, 3),
                                   F.max_pool1d(x, 2, return_indices=True)[1].float(),
                                   F.max_pool2d(x[None], 2, return_indices=True)[0],
                                   F.adaptive_max_pool2d(x[None], 2, return_indices=True)[0],
                                   F.conv_transpose1d(x, w, stride=2, padding=1),
                                   F.upsample(x, scale_factor=2, mode="linear"))),
    "softmax_loss_extras": ([_floats(4, 5), _floats(4, 5)],
                            lambda x, t: (F.softmax(x, 1, dtype=ember.float64),
                                          F.log_softmax(x, 1, dtype=ember.float64),
                                          F.cross_entropy(x, _index([0, 4, 2, 1]),
                                                          weight=t[0].detach().abs() + 0.1),
                                          F.cross_entropy(x, F.softmax(t, 1)),
                                          F.nll_loss(F.log_softmax(x, 1), _index([1, 1, 0, 3]),
                                                     reduction="sum"),
                                          F.binary_cross_entropy_with_logits(
                                              x, (t > 0).float(), pos_weight=t[0].detach().abs()),
                                          F.cross_entropy(x, _index([0, 4, 2, 1]),
                                                          reduction="none"))),
}


# ---- newer op families ---------------------------------------------------------------------
def _well_conditioned(n, *batch):
    return (RNG.standard_normal(batch + (n, n)) + 4 * numpy.eye(n)).astype(numpy.float32)


def _unit(*shape):
    return (RNG.random(shape) * 1.6 - 0.8).astype(numpy.float32)


NEW_CASES = {
    "arrangement": ([_floats(3, 4), _floats(3)],
                    lambda a, v: (*ember.tensor_split(a, _index([1, 3]), 1), *ember.hsplit(a, 2),
                                  ember.column_stack([v, a]), ember.dstack([a, a]),
                                  ember.block_diag(a, v), ember.cartesian_prod(v, v),
                                  ember.combinations(v, 2, True), ember.rot90(a, 3),
                                  ember.fliplr(a), ember.diagflat(v, 1), ember.vander(v, 4),
                                  ember.argwhere(a > 0).float())),
    "scatter_family": ([_floats(3, 4), _floats(4), _floats(6)],
                       lambda a, v, s: (ember.select_scatter(a, v, 0, 1),
                                        ember.slice_scatter(a, s.reshape(3, 2), 1, 1, None, 2),
                                        ember.diagonal_scatter(a, v[:3]),
                                        ember.index_put(a, (_index([0, 0]),), v, True),
                                        ember.put(a, _index([0, 11]), s[:2], True),
                                        ember.masked_scatter(a, a > 0, s.repeat(2)),
                                        ember.index_fill(a, 1, _index([2, 0]), s[0]),
                                        (a * 1).fill_diagonal_(2.0, True),
                                        *[ember.scatter_reduce(a, 1, _index([[0, 0, 1, 3]]), a,
                                                               r, include_self=False)
                                          for r in ("sum", "prod", "mean", "amax", "amin")],
                                        ember.index_reduce(a, 0, _index([2, 2, 0]), a, "prod"))),
    "trig_hyperbolic": ([_unit(3, 4), _floats(3, 4)],
                        lambda a, b: (a.asin() + a.acos() + a.atan() + a.sinh() + a.cosh()
                                      + a.asinh() + (a.abs() + 1.5).acosh() + a.atanh()
                                      + a.deg2rad() + a.rad2deg(),
                                      ember.atan2(a, b), ember.hypot(a, b),
                                      ember.logaddexp(a, b), a.isinf().float() + a.isfinite()
                                      + a.isposinf() + a.isneginf(),
                                      ember.nan_to_num(a / (a > 0)), a.angle(), a.conj())),
    "special_functions": ([_positive(3, 4), _unit(3, 4)],
                          lambda a, u: (a.lgamma(), a.digamma(), ember.polygamma(1, a),
                                        ember.polygamma(2, a), u.erfinv(),
                                        ember.igamma(a.detach(), a * 1.5),
                                        ember.igamma(a.detach() * 30, a * 25))),
    "sets_sampling": ([_floats(4, 5), _positive(3, 6)],
                      lambda a, p: (ember.unique(a.round()),
                                    ember.unique(a.round(), return_inverse=True,
                                                 return_counts=True)[1].float() * a,
                                    ember.unique(a.round(), dim=0),
                                    ember.unique_consecutive(a.round(), return_counts=True)[1],
                                    ember.multinomial(p, 4).float() * p[:, :4],
                                    ember.multinomial(p, 8, replacement=True).float(),
                                    ember.bernoulli(p / 2).float() * p,
                                    ember.searchsorted(a.sort(1).values, a[:, :2]).float(),
                                    ember.searchsorted(a[0].sort().values, a, right=True),
                                    ember.searchsorted(a[0].sort().values, 0.5),
                                    ember.bucketize(a, a[0].sort().values).float() * a)),
    "linalg_decompositions": ([_well_conditioned(3, 2), _floats(2, 3, 2)],
                              lambda a, b: (ember.linalg.inv(a), ember.linalg.det(a),
                                            ember.linalg.slogdet(a)[1],
                                            ember.linalg.solve(a, b),
                                            ember.linalg.cholesky(a @ a.mT),
                                            ember.cholesky_solve(b, ember.linalg.cholesky(
                                                a @ a.mT)),
                                            ember.cholesky_inverse(ember.linalg.cholesky(
                                                a @ a.mT)),
                                            ember.linalg.qr(a).R.abs(),
                                            ember.linalg.svdvals(a),
                                            ember.linalg.eigvalsh(a @ a.mT),
                                            ember.linalg.eigh(a @ a.mT)[1].abs(),
                                            ember.linalg.svd(a)[0].abs(),
                                            ember.linalg.pinv(a), ember.linalg.lstsq(a, b)[0],
                                            ember.linalg.matrix_rank(a).float(),
                                            ember.linalg.solve_triangular(a.triu(), b,
                                                                          upper=True),
                                            ember.linalg.inv_ex(a)[1].float(),
                                            ember.linalg.cholesky_ex(a @ a.mT)[1].float(),
                                            ember.linalg.solve_ex(a, b)[1].float(),
                                            ember.linalg.matrix_power(a, 3),
                                            ember.linalg.matrix_power(a, -2),
                                            ember.linalg.multi_dot([a[0], a[1], b[0]]),
                                            ember.linalg.cross(b[..., :3, :].mT, b[..., :3, :].mT),
                                            ember.linalg.vecdot(b, b),
                                            ember.linalg.norm(a), ember.linalg.norm(a[0], "fro"),
                                            ember.linalg.matrix_norm(a, "nuc"),
                                            ember.linalg.matrix_norm(a, 2),
                                            ember.linalg.vector_norm(b, 3, dim=-1),
                                            ember.logdet(a @ a.mT), ember.slogdet(a)[1],
                                            ember.cholesky(a @ a.mT, upper=True),
                                            ember.qr(a)[1].abs(), ember.svd(a)[1],
                                            ember.svd(a, compute_uv=False)[1],
                                            ember.diag_embed(b[..., 0], 1),
                                            ember.diagonal(a, 1, 1, 2), ember.diag(b[0, :, 0]),
                                            ember.trace(a[0]), ember.pinverse(a))),
    "distributions": ([_floats(3), _positive(3), _positive(3, 4), _unit(3)],
                      lambda loc, scale, conc, u: _distributions(loc, scale, conc, u)),
    "distributions_transformed": ([_floats(3), _positive(3), _positive(3, 4), _unit(3)],
                                  lambda loc, scale, conc, u: _transformed(loc, scale, conc, u)),
    "fold_grid_shuffle": ([_floats(2, 3, 6, 5), _floats(2, 2, 3)],
                          lambda x, theta: (F.unfold(x, 2, padding=1, stride=(2, 1)),
                                            F.fold(F.unfold(x, (2, 3), dilation=(1, 2)), (6, 5),
                                                   (2, 3), dilation=(1, 2)),
                                            F.grid_sample(x, F.affine_grid(theta, (2, 3, 4, 3),
                                                                           align_corners=False),
                                                          align_corners=False),
                                            F.grid_sample(x, theta[:, None, :, :2].tanh(),
                                                          mode="nearest", padding_mode="border",
                                                          align_corners=True),
                                            F.grid_sample(x, theta[:, None, :, :2] * 2,
                                                          padding_mode="reflection",
                                                          align_corners=False),
                                            F.pixel_shuffle(x[:, :, :4, :4].repeat(1, 4, 1, 1), 2),
                                            F.pixel_unshuffle(x[:, :, :4, :4], 2))),
    "pad_interpolate_modes": ([_floats(2, 3, 5, 6), _floats(2, 3, 4, 4, 5)],
                              lambda x, v: (F.pad(x, (2, 1, 1, 2), mode="reflect"),
                                            F.pad(v, (1, 1, 2, 0, 1, 1), mode="replicate"),
                                            F.pad(v, (1, 2, 1, 1, 0, 1), mode="circular"),
                                            F.pad(v, (1, 1, 1, 1, 1, 1), value=0.5),
                                            F.interpolate(x, size=(7, 4), mode="bicubic"),
                                            F.interpolate(x, scale_factor=1.5, mode="bicubic",
                                                          align_corners=True),
                                            F.interpolate(x, size=(3, 4), mode="area"),
                                            F.interpolate(v, size=(3, 5, 7), mode="trilinear"),
                                            F.interpolate(v, scale_factor=2, mode="nearest"),
                                            F.interpolate(x, size=(7, 9),
                                                          mode="nearest-exact"))),
    "conv_pool_3d_instance_norm": ([_floats(2, 3, 5, 6, 4), _floats(4, 3, 2, 3, 2), _floats(4),
                                    _positive(3), _floats(3)],
                                   lambda x, w, b, g, h: (
                                       F.conv3d(x, w, b, padding=1),
                                       F.conv3d(x, w, stride=(1, 2, 1), dilation=(2, 1, 1)),
                                       F.conv_transpose3d(x, w.transpose(0, 1), stride=2),
                                       F.max_pool3d(x, 2), F.max_pool3d(x, 3, 2, 1,
                                                                        ceil_mode=True),
                                       F.max_pool3d(x, 2, return_indices=True)[1].float(),
                                       F.avg_pool3d(x, 2, 1),
                                       F.avg_pool3d(x, 3, 2, 1, count_include_pad=False),
                                       F.adaptive_avg_pool3d(x, (2, 3, 3)),
                                       F.adaptive_max_pool3d(x, 2),
                                       F.instance_norm(x, weight=g, bias=h),
                                       F.instance_norm(x[:, :, 0], use_input_stats=True))),
    "new_activations": ([_floats(3, 4), _positive(4)],
                        lambda a, w: (F.selu(a), F.celu(a, 0.7), F.hardsigmoid(a * 4),
                                      F.hardswish(a * 4), F.logsigmoid(a), F.softmin(a, 1),
                                      F.softsign(a), F.tanhshrink(a), F.threshold(a, 0.1, -2.0),
                                      F.glu(a, 1), F.hardshrink(a), F.softshrink(a),
                                      F.prelu(a, w), F.prelu(a, w[:1]), F.rrelu(a),
                                      F.rrelu(a, training=True))),
    "embedding_bag_distance": ([_floats(7, 3), _floats(4, 3), _floats(5, 3), _floats(4)],
                               lambda w, a, b, s: (
                                   F.embedding_bag(_index([0, 2, 2, 5, 6, 1]), w,
                                                   _index([0, 2, 2])),
                                   F.embedding_bag(_index([[0, 2], [5, 6]]), w, mode="sum"),
                                   F.embedding_bag(_index([0, 2, 2, 5, 6, 1]), w,
                                                   _index([0, 3]), mode="max"),
                                   F.embedding_bag(_index([0, 2, 2, 5]), w, _index([0, 1]),
                                                   mode="sum", per_sample_weights=s),
                                   F.embedding_bag(_index([0, 2, 3, 5]), w, _index([0, 1, 4]),
                                                   include_last_offset=True, padding_idx=2),
                                   F.cosine_similarity(a, b[:4]), F.cosine_similarity(a[:, None],
                                                                                      b, dim=-1),
                                   F.pairwise_distance(a, b[:4]), F.pdist(a), F.pdist(b, 1.5),
                                   ember.cdist(a, b), ember.cdist(a, b, 1),
                                   ember.cdist(a, b, float("inf")),
                                   ember.cdist(a[None], b[None], compute_mode=
                                           "use_mm_for_euclid_dist"))),
    "loss_nodes": ([_floats(4, 5), _floats(4, 5), _unit(4, 5), _positive(5)],
                   lambda x, y, p, w: (F.mse_loss(x, y), F.l1_loss(x, y, reduction="sum"),
                                       F.smooth_l1_loss(x, y, beta=0.5),
                                       F.huber_loss(x, y, reduction="none", delta=0.7),
                                       F.binary_cross_entropy(p.abs(), (y > 0).float()),
                                       F.binary_cross_entropy(p.abs(), y.sigmoid(), weight=w,
                                                              reduction="none"),
                                       F.binary_cross_entropy_with_logits(x, y.sigmoid()),
                                       F.nll_loss(F.log_softmax(x, 1), _index([0, 4, -100, 2]),
                                                  weight=w),
                                       F.nll_loss(F.log_softmax(x, 1)[:, :, None].expand(4, 5, 2),
                                                  _index([[0, 1], [4, 4], [2, 3], [1, 0]])),
                                       F.cross_entropy(x, _index([0, 4, 1, 2]),
                                                       label_smoothing=0.1),
                                       F.cross_entropy(x, y.softmax(1), label_smoothing=0.2),
                                       F.kl_div(F.log_softmax(x, 1), y.softmax(1),
                                                reduction="batchmean"),
                                       F.cross_entropy(x[:0], _index([0, 1, 2, 3])[:0]))),
    "tensor_functions": ([_floats(3, 4), _floats(4), _floats(3, 4)],
                         lambda a, v, b: (*ember.meshgrid(v, v[:3], indexing="ij"),
                                          *ember.meshgrid(v, v[:3], indexing="xy"),
                                          a.repeat_interleave(2, 1),
                                          a.repeat_interleave(_index([1, 0, 3]), 0),
                                          ember.repeat_interleave(_index([2, 1, 3])).float(),
                                          a.diff(), ember.diff(a, 2, 0, prepend=b[:1]),
                                          a.take(_index([[0, 11], [5, 5]])),
                                          ember.view_as_real(ember.complex(a.detach(), b.detach())),
                                          ember.view_as_real(ember.complex(a.detach(), b.detach())
                                                             .conj()),
                                          ember.view_as_real(ember.view_as_complex(
                                              ember.stack([a, b], -1).detach())),
                                          ember.cross(a[:, :3], b[:, :3], dim=1))),
    "matrix_exp_householder": ([_floats(2, 3, 3), _floats(4, 3)],
                               lambda a, b: (ember.linalg.matrix_exp(a * 0.5),
                                             ember.linalg.householder_product(b, b[0, :2]),
                                             *ember.geqrf(b.detach()), ember.vdot(b[0], b[1]),
                                             ember.sgn(b), ember.dist(a[0], b[:3]),
                                             ember.dist(a, b[:3], 3),
                                             WeightNormInterface.apply(
                                                 b, 2 * b.norm(dim=1, keepdim=True), 0))),
    "lu_family": ([_floats(2, 3, 3), _floats(3, 2)], lambda a, b: _lu_family(a, b)),
    "complex_autograd_fft": ([_floats(3, 4), _floats(3, 4)], lambda a, b: (
        ember.view_as_real(ember.fft.fftn(ember.complex(a, b), s=(4, 5), norm="ortho")),
        ember.fft.irfft(ember.fft.rfft(a) * ember.fft.rfft(b), n=5),
        (ember.complex(a, b).exp() / ember.complex(b, a + 2)).abs(),
        ember.fft.hfft(ember.complex(a, b)), ember.fft.fftshift(a))),
}
CASES.update(NEW_CASES)


def _lu_family(a, b):
    shift = ember.ones_like(a[0, 0]).diag() * 4  # in the inputs' module, as ember.eye is not
    well = a + shift
    return (*ember.linalg.lu(a), ember.linalg.lu_solve(*ember.linalg.lu_factor(well), b,
                                                       adjoint=True),
            ember.linalg.cond(well, 1), ember.linalg.vander(b, N=3),
            ember.linalg.tensorsolve(well[0], b[:, 0]),
            ember.linalg.ldl_solve(*ember.linalg.ldl_factor((a + a.mT).detach()), b.detach()))


def _distributions(loc, scale, conc, u):
    D = ember.distributions
    normal = D.Normal(loc, scale)
    value = normal.rsample((2,))
    gamma = D.Gamma(conc, scale[:, None])
    beta = D.Beta(conc[:, 0], conc[:, 1])
    dirichlet = D.Dirichlet(conc)
    mvn = D.MultivariateNormal(loc, scale_tril=ember.diag_embed(scale) + (u[:, None] * u).tril(-1))
    bern = D.Bernoulli(logits=u)
    cat = D.Categorical(logits=conc)
    uniform = D.Uniform(loc - scale, loc + scale)
    return (value, normal.log_prob(value), normal.entropy(), normal.cdf(loc * 0.5),
            normal.icdf(u.abs()), gamma.rsample(), gamma.log_prob(conc), gamma.entropy(),
            beta.rsample(), beta.log_prob(u.abs()), beta.entropy(), dirichlet.rsample(),
            dirichlet.log_prob(conc / conc.sum(-1, keepdim=True)), dirichlet.entropy(),
            mvn.rsample((2,)), mvn.log_prob(loc * 0.5), mvn.entropy(),
            bern.sample(), bern.log_prob((u > 0).float()), bern.entropy(),
            cat.sample((2,)).float(), cat.log_prob(_index([0, 3, 1])), cat.entropy(),
            uniform.rsample(), uniform.log_prob(loc), uniform.entropy(),
            D.Independent(normal, 1).log_prob(value),
            D.kl_divergence(normal, D.Normal(loc * 0, scale.detach())),
            D.kl_divergence(dirichlet, D.Dirichlet(conc.detach() + 1)),
            D.Normal(loc, 1.0).log_prob(loc * 0.5), D.Uniform(-2.0, loc.abs()).rsample(),
            bern.enumerate_support().float(), cat.enumerate_support().float(),
            D.Dirichlet(conc * 0.5).mode, dirichlet.mode,
            D.MultivariateNormal(loc, precision_matrix=mvn.covariance_matrix.inverse())
            .log_prob(loc * 0.5))


def _transformed(loc, scale, conc, u):
    D, T = ember.distributions, ember.distributions.transforms
    prob = u.abs() * 0.8 + 0.1
    dists = [D.Exponential(scale), D.Laplace(loc, scale), D.Cauchy(loc, scale),
             D.LogNormal(loc, scale), D.Gumbel(loc, scale), D.Weibull(scale, scale + 1),
             D.HalfNormal(scale), D.HalfCauchy(scale), D.Pareto(scale * 0.1, scale + 2),
             D.Kumaraswamy(scale, scale + 1), D.InverseGamma(scale + 1, scale),
             D.LogisticNormal(loc, scale), D.RelaxedBernoulli(scale, probs=prob),
             D.RelaxedOneHotCategorical(scale[0], logits=conc)]
    out = []
    for d in dists:
        x = d.rsample((2,))
        out += [x, d.log_prob(x.detach())]
    corr = T.CorrCholeskyTransform()
    y = corr(conc[:, :3])
    return (*out, y, corr.inv(y), corr.log_abs_det_jacobian(conc[:, :3], y),
            T.StickBreakingTransform().log_abs_det_jacobian(loc, T.StickBreakingTransform()(loc)),
            T.PositiveDefiniteTransform()(conc[:, :3].reshape(3, 1, 3) * conc[:, :3, None]),
            D.LogNormal(loc, scale).cdf(scale), D.Gumbel(loc, scale).icdf(prob),
            D.kl_divergence(D.Laplace(loc, scale), D.Normal(loc * 0, scale.detach())),
            D.kl_divergence(D.Pareto(scale, scale + 3), D.Exponential(scale.detach())),
            D.biject_to(D.constraints.simplex)(loc), D.Cauchy(loc, scale).mean)


OPTIMIZERS = {
    "SGD": lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
    "Adam_amsgrad": lambda p: ember.optim.Adam(p, lr=0.1, amsgrad=True, weight_decay=0.1),
    "AdamW": lambda p: ember.optim.AdamW(p, lr=0.1),
    "Adamax": lambda p: ember.optim.Adamax(p, lr=0.1, weight_decay=0.1),
    "NAdam": lambda p: ember.optim.NAdam(p, lr=0.1, weight_decay=0.1),
    "RAdam": lambda p: ember.optim.RAdam(p, lr=0.1, decoupled_weight_decay=True,
                                         weight_decay=0.1),
    "Adagrad": lambda p: ember.optim.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.1),
    "Adadelta": lambda p: ember.optim.Adadelta(p, weight_decay=0.1),
    "RMSprop": lambda p: ember.optim.RMSprop(p, lr=0.01, momentum=0.9, centered=True),
    "Rprop": lambda p: ember.optim.Rprop(p, lr=0.1),
    "ASGD": lambda p: ember.optim.ASGD(p, lr=0.1, t0=1),
    "LBFGS": lambda p: ember.optim.LBFGS(p, lr=0.5, max_iter=4),
    "LBFGS_wolfe": lambda p: ember.optim.LBFGS(p, max_iter=4, line_search_fn="strong_wolfe"),
}


def _optimize(make_optimizer, wrap):
    """Three steps of an optimizer on a small least-squares problem; the parameters."""
    w = ember.from_numpy(wrap(numpy.linspace(-1, 1, 6, dtype=numpy.float32).reshape(2, 3)))
    b = ember.from_numpy(wrap(numpy.array([0.5, -0.5], dtype=numpy.float32)))
    w.requires_grad_()
    b.requires_grad_()
    x = ember.from_numpy(wrap(numpy.arange(12, dtype=numpy.float32).reshape(4, 3) / 10))
    y = ember.from_numpy(wrap(numpy.ones((4, 2), dtype=numpy.float32)))
    opt = make_optimizer([w, b])

    def closure():
        opt.zero_grad()
        loss = ((F.linear(x, w, b) - y) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    state = [v for s in opt.state.values() for v in s.values()
             if isinstance(v, ember.Tensor) and v.dim() > 0]
    return [w, b], state


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_on_the_registered_module(name, strict):
    want, _ = _optimize(OPTIMIZERS[name], lambda a: a)
    got, state = _optimize(OPTIMIZERS[name], lambda a: a.view(StrictArray))
    assert _is_strict(*state)
    for k, (g, w) in enumerate(zip(got, want)):
        _same(g._data, w._data.astype(numpy.float32), f"parameter {k}")
        _same(g.grad._data, w.grad._data, f"gradient {k}")


def test_out_writes_stay_in_the_registered_module(strict):
    a, b = _strict((3, 4)), _strict((3, 4))
    outs = [_strict((3, 4)), _strict((2,)), _strict((0,)), _strict((6, 4))]
    ember.add(a, b, out=outs[0])
    ember.mul(a, b, out=outs[1])  # resized (with a warning, as PyTorch)
    ember.atan2(a, b, out=outs[2])
    ember.cat([a, b], out=outs[3])
    values, indices = _strict((3,)), ember.from_numpy(numpy.zeros(3, numpy.int64)
                                                     .view(StrictArray))
    ember.max(a, 1, out=(values, indices))
    assert _is_strict(*outs, values, indices)
    plain = numpy.ndarray.view
    numpy.testing.assert_allclose(plain(outs[0]._data, numpy.ndarray),
                                  plain(a._data, numpy.ndarray) + plain(b._data, numpy.ndarray))
    numpy.testing.assert_array_equal(plain(indices._data, numpy.ndarray),
                                     plain(a._data, numpy.ndarray).argmax(1))


def _packed_lstm(wrap):
    ember.manual_seed(0)
    lstm = ember.nn.LSTM(3, 4, batch_first=True, bidirectional=True)
    gru = ember.nn.GRU(3, 2)
    for m in (lstm, gru):
        for p in m.parameters():
            p.data = ember.from_numpy(wrap(p._data))
    rnn = ember.nn.utils.rnn
    x = ember.from_numpy(wrap(numpy.linspace(-1, 1, 36, dtype=numpy.float32).reshape(3, 4, 3)))
    x.requires_grad_()
    packed = rnn.pack_padded_sequence(x, [4, 2, 3], batch_first=True, enforce_sorted=False)
    out, (h, c) = lstm(packed)
    padded, lengths = rnn.pad_packed_sequence(out, batch_first=True)
    seqs = [x[0], x[1, :2], x[2, :3]]
    gru_out, _ = gru(rnn.pack_sequence(seqs, enforce_sorted=False))
    gru_padded, _ = rnn.pad_packed_sequence(gru_out, padding_value=-1.0)
    joined = rnn.pad_sequence(seqs, batch_first=True)
    (padded.sum() + h.sum() * 2 + c.sum() + gru_padded.sum() + joined.sum()).backward()
    return [padded, h, c, gru_padded, joined, x.grad], lengths, lstm


def test_packed_sequence_lstm_on_the_registered_module(strict):
    want, want_lengths, _ = _packed_lstm(lambda a: a)
    got, lengths, lstm = _packed_lstm(lambda a: a.view(StrictArray))
    assert lengths.tolist() == want_lengths.tolist()
    assert _is_strict(*(p.grad for p in lstm.parameters()))
    for k, (g, w) in enumerate(zip(got, want)):
        _same(g._data, w._data, f"result {k}")


def _dense_lstm(wrap):
    """nn.LSTM's fused layer op (forward and its array backward) on ``wrap``'s arrays."""
    ember.manual_seed(0)
    lstm = ember.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    for p in lstm.parameters():
        p.data = ember.from_numpy(wrap(p._data))
    x = ember.from_numpy(wrap(numpy.linspace(-1, 1, 36, dtype=numpy.float32).reshape(4, 3, 3)))
    h0 = ember.from_numpy(wrap(numpy.linspace(-1, 1, 48, dtype=numpy.float32).reshape(4, 3, 4)))
    x.requires_grad_()
    h0.requires_grad_()
    out, (h, c) = lstm(x, (h0, h0 * 0.5))
    (out.sum() + h.sum() * 2 + c.sum()).backward()
    return [out, h, c, x.grad, h0.grad] + [p.grad for p in lstm.parameters()]


def test_fused_lstm_on_the_registered_module(strict):
    want = _dense_lstm(lambda a: a)
    got = _dense_lstm(lambda a: a.view(StrictArray))
    assert _is_strict(*got)
    for k, (g, w) in enumerate(zip(got, want)):
        _same(g._data, w._data, f"result {k}")


def test_singular_linalg_paths_on_the_registered_module(strict):
    # the first matrix is singular: the per-matrix fallbacks, the SVD gradient of det and
    # the host-side diagnosis behind the errors
    def matrices():
        return ember.from_numpy(numpy.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]]])
                                .view(StrictArray)).requires_grad_()
    a, b = matrices(), ember.from_numpy(numpy.array([[1.0], [2.0]]).view(StrictArray))
    assert _is_strict(*ember.linalg.inv_ex(a), *ember.linalg.solve_ex(a, b),
                      *ember.linalg.cholesky_ex(a), ember.linalg.matrix_rank(a))
    ember.linalg.det(a).sum().backward()
    assert _is_strict(a.grad)
    numpy.testing.assert_allclose(numpy.ndarray.view(a.grad._data, numpy.ndarray),
                                  [[[4.0, -2.0], [-2.0, 1.0]], [[3.0, 0.0], [0.0, 2.0]]])
    with pytest.raises(ember.linalg.LinAlgError, match=r"Batch element 0.*diagonal element 2"):
        ember.linalg.inv(a)
    with pytest.raises(ember.linalg.LinAlgError, match=r"Batch element 0.*order 2"):
        ember.linalg.cholesky(a)


def test_grad_clipping_on_the_registered_module(strict):
    weights = [_strict((3, 4)).requires_grad_(), _strict((0,)).requires_grad_()]
    (weights[0] * 2).sum().backward()
    weights[1].grad = weights[1].detach() * 1
    for norm_type in (2.0, float("inf")):
        total = ember.nn.utils.clip_grad_norm_(weights, 0.5, norm_type)
        assert _is_strict(total, *(w.grad for w in weights))
    ember.nn.utils.clip_grad_value_(weights, 0.1)
    assert _is_strict(*(w.grad for w in weights))
    assert float(weights[0].grad.abs().max()) <= 0.1 + 1e-7


def test_printing_options_on_the_registered_module(strict):
    a = _strict((3, 40))
    ember.set_printoptions(precision=2, threshold=10, edgeitems=2, linewidth=60, sci_mode=True)
    try:
        text = repr(a)
        assert "..." in text and "e" in text
        ember.set_printoptions(profile="short")
        assert repr(a * 1e6).startswith("tensor(")
        ember.set_printoptions(profile="full")
        assert "..." not in repr(a)
    finally:
        ember.set_printoptions(profile="default", sci_mode=None)
    assert type(a._data) is StrictArray


def _setitem(a, v):
    b = a * 1
    b[1] = v
    b[0, ::2] = 3.0
    b[_index([2, 2])] = v * 2
    return b


def _inplace(a):
    b = a * 1
    b.mul_(2).add_(1).tanh_()
    b[1:].sub_(a[1:])
    b.t()[0].mul_(3)
    b.clamp_(-0.5, 1.5)
    b.masked_fill_(b > 1, 0.25)
    return b


def _run_case(inputs, fn, wrap):
    """fn on tensors from ``inputs`` (``wrap`` makes their arrays), then backward of a
    weighted sum of its outputs; returns (outputs, gradients) as arrays."""
    _wrap_case[0] = wrap
    leaves = []
    for arr in inputs:
        t = ember.from_numpy(wrap(arr.copy()))
        if arr.dtype.kind == "f":
            t.requires_grad_()
        leaves.append(t)
    out = fn(*leaves)
    outs = out if isinstance(out, tuple) else (out,)
    loss = None
    for k, o in enumerate(outs):
        weights = ember.from_numpy(wrap(numpy.linspace(-1, 1, o.numel(), dtype=numpy.float32)
                                        .reshape(o.shape)))
        term = (o * weights).sum() * (k + 1)
        loss = term if loss is None else loss + term
    loss.backward()
    return [o._data for o in outs], [t.grad._data for t in leaves if t.grad is not None]


def _same(got, want, what):
    assert type(got) is StrictArray, f"{what}: a {type(got).__name__}, not a StrictArray"
    plain = numpy.ndarray.view(got, numpy.ndarray)
    assert plain.dtype == want.dtype and plain.shape == want.shape, what
    # float32: a large product is one library call on another module but split into bands
    # on NumPy (ember's pool), whose kernels may block the sums differently
    tol = 5e-5 if want.dtype == numpy.float32 else 1e-6
    numpy.testing.assert_allclose(plain, want, rtol=tol, atol=tol, err_msg=what)


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_runs_on_the_registered_module(name, strict):
    inputs, fn = CASES[name]
    ember.manual_seed(0)
    want_out, want_grad = _run_case(inputs, fn, lambda a: a)
    ember.manual_seed(0)
    got_out, got_grad = _run_case(inputs, fn, lambda a: a.view(StrictArray))
    assert len(got_grad) == len(want_grad)
    for k, (g, w) in enumerate(zip(got_out, want_out)):
        _same(g, w, f"output {k}")
    for k, (g, w) in enumerate(zip(got_grad, want_grad)):
        _same(g, w, f"gradient {k}")


def test_double_backward_on_the_registered_module(strict):
    x = ember.from_numpy(_floats(3, 4).view(StrictArray)).requires_grad_()
    y = (x.tanh() * x.sigmoid()).sum()
    g, = ember.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    assert type(g._data) is StrictArray and type(x.grad._data) is StrictArray


class _SplitScale(ember.autograd.Function):
    """Two outputs, so a missing output gradient is materialized as zeros."""

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g2, g3):
        return g2 * 2 + g3 * 3


def test_user_function_and_hooks_on_the_registered_module(strict):
    x = ember.from_numpy(_floats(3, 4).view(StrictArray)).requires_grad_()
    seen = []
    x.register_hook(lambda g: seen.append(type(g._data)))
    doubled, _ = _SplitScale.apply(x)
    doubled.sum().backward()
    assert type(x.grad._data) is StrictArray and seen == [StrictArray]
    numpy.testing.assert_array_equal(numpy.ndarray.view(x.grad._data, numpy.ndarray), 2)


def _strict(shape, dtype=numpy.float32):
    return ember.from_numpy(RNG.standard_normal(shape).astype(dtype).view(StrictArray))


def _is_strict(*tensors):
    return all(type(t._data) is StrictArray for t in tensors)


def test_tensor_methods_stay_in_the_registered_module(strict):
    a, b = _strict((3, 4)), _strict((3, 4))
    assert _is_strict(a.clone().bernoulli_(0.5), a.bernoulli(0.3), a.clone().uniform_(),
                      a.clone().normal_(), a.clone().random_(0, 5), a.clone().fill_(2.0),
                      a.clone().zero_(), a.clone().copy_(b), a.clone().copy_(b[0]),
                      a.new(2, 3), a.new([1.0, 2.0]), a.new_tensor([[1, 2]]), a.to(ember.float64),
                      a.clone().resize_(2, 2), ember.isclose(a, b), a.clone().unsqueeze_(0))
    assert ember.equal(a, a.clone()) and not ember.equal(a, b)
    assert ember.allclose(a, a + 1e-9) and not ember.allclose(a, b)
    assert repr(a).startswith("tensor([[") and "dtype" not in repr(a)


def test_init_fills_stay_in_the_registered_module(strict):
    init = ember.nn.init
    fills = [lambda w: init.uniform_(w), lambda w: init.normal_(w),
             lambda w: init.trunc_normal_(w), lambda w: init.constant_(w, 0.5),
             lambda w: init.ones_(w), lambda w: init.zeros_(w), lambda w: init.eye_(w[0, 0]),
             lambda w: init.dirac_(w), lambda w: init.xavier_uniform_(w),
             lambda w: init.xavier_normal_(w), lambda w: init.kaiming_uniform_(w),
             lambda w: init.kaiming_normal_(w), lambda w: init.orthogonal_(w),
             lambda w: init.sparse_(w[0, 0], 0.5)]
    for fill in fills:
        w = _strict((4, 3, 3, 3))
        fill(w)
        assert _is_strict(w)


@pytest.mark.filterwarnings("ignore:Anomaly Detection:UserWarning",
                            "ignore:Error detected in:UserWarning")
def test_anomaly_mode_on_the_registered_module(strict):
    x = _strict((3, 4)).requires_grad_()
    with ember.autograd.detect_anomaly():
        (x.exp() * x).sum().backward()
    assert _is_strict(x.grad)
    y = _strict((2,)).requires_grad_()
    with pytest.raises(RuntimeError, match="returned nan values"):
        with ember.autograd.detect_anomaly():
            (y * float("nan")).sum().backward()


# ---- arrays made from nothing: the default module ------------------------------------------
CREATION = {
    "zeros": lambda: ember.zeros(2, 3), "ones": lambda: ember.ones(3),
    "full": lambda: ember.full((2,), 1.5), "empty": lambda: ember.empty(2, 2),
    "arange": lambda: ember.arange(5), "arange_float": lambda: ember.arange(0, 1, 0.25),
    "linspace": lambda: ember.linspace(0, 1, 5), "eye": lambda: ember.eye(3),
    "tensor": lambda: ember.tensor([[1.0, 2.0]]), "tensor_int": lambda: ember.tensor([1, 2]),
    "rand": lambda: ember.rand(3), "randn": lambda: ember.randn(2, 2),
    "randint": lambda: ember.randint(0, 5, (4,)), "randperm": lambda: ember.randperm(4),
    "Tensor": lambda: ember.Tensor(2, 2), "Tensor_data": lambda: ember.Tensor([1.0, 2.0]),
    "as_tensor": lambda: ember.as_tensor([1, 2]),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_uses_the_default_module(name, strict_default):
    t = CREATION[name]()
    assert type(t._data) is StrictArray


def _train(model, make):
    """Two SGD (momentum) and two Adam steps of ``model`` on inputs made by ``make``."""
    for opt in (ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                ember.optim.Adam(model.parameters(), lr=0.01)):
        for _ in range(2):
            opt.zero_grad()
            x = make(RNG.standard_normal((4, 1, 4, 4)).astype(numpy.float32))
            loss = F.cross_entropy(model(x), make(numpy.array([0, 1, 2, 0])))
            loss.backward()
            opt.step()
    return loss


def _model():
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Conv2d(1, 2, 3), ember.nn.BatchNorm2d(2),
                               ember.nn.ReLU(), ember.nn.Flatten(), ember.nn.Linear(8, 3))


def test_a_model_trains_on_the_default_module(strict_default):
    model = _model()
    assert all(type(p._data) is StrictArray for p in model.parameters())
    loss = _train(model, lambda a: ember.from_numpy(a.view(StrictArray)))
    assert all(type(t._data) is StrictArray for t in model.state_dict().values())
    assert math.isfinite(loss.item())
    assert "tensor(" in repr(model(ember.randn(1, 1, 4, 4)))  # printing goes through to_host


def test_a_model_moved_to_the_registered_module_trains(strict):
    model = _model()
    for t in list(model.parameters()) + list(model.buffers()):
        t.data = ember.from_numpy(t._data.view(StrictArray))
    loss = _train(model, lambda a: ember.from_numpy(a.view(StrictArray)))
    assert all(type(t._data) is StrictArray for t in model.state_dict().values())
    assert type(loss._data) is StrictArray and math.isfinite(loss.item())


def test_gradcheck_on_the_registered_module(strict):
    x = ember.from_numpy(RNG.standard_normal((2, 3)).view(StrictArray)).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: (t.tanh() * t).sum(1), (x,))
    assert ember.autograd.gradcheck(lambda t: t.exp().sum(), (x,), fast_mode=True)
    assert ember.autograd.gradgradcheck(lambda t: (t * t.sigmoid()).sum(), (x,))
