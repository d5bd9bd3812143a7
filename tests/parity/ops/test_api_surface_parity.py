"""Parity with PyTorch for the remaining API surface: the ``*_copy`` forms of the view ops
(values and gradients, float32 and float64, transposed inputs), the splits, ``fill``,
``adjoint``, ``as_strided_scatter``, the concatenation aliases, the top-level in-place
forms, Tensor-only methods (``apply_``, ``map_``, ``resize``, ``dim_order``, ...), the
switches and the errors of the removed functions."""
import warnings

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import DEVICE, compare, error_of

FLOATS = [np.float32, np.float64]


def randn(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ---- the view ops' copies: values and gradients ---------------------------------------------
COPIES = [
    ("view_copy", lambda lib, x: lib.view_copy(x, (4, 3)), (3, 4)),
    ("permute_copy", lambda lib, x: lib.permute_copy(x, (2, 0, 1)), (2, 3, 4)),
    ("transpose_copy", lambda lib, x: lib.transpose_copy(x, 0, -1), (2, 3, 4)),
    ("t_copy", lambda lib, x: lib.t_copy(x), (3, 4)),
    ("squeeze_copy", lambda lib, x: lib.squeeze_copy(x[None]), (3, 4)),
    ("squeeze_copy_dims", lambda lib, x: lib.squeeze_copy(x[None, :, None], (0, 2)), (3, 4)),
    ("unsqueeze_copy", lambda lib, x: lib.unsqueeze_copy(x, 1), (3, 4)),
    ("expand_copy", lambda lib, x: lib.expand_copy(x[:, :1], (2, 3, 5)), (3, 4)),
    ("select_copy", lambda lib, x: lib.select_copy(x, 1, -1), (3, 4)),
    ("slice_copy", lambda lib, x: lib.slice_copy(x, 1, 1, 10, 2), (3, 4)),
    ("slice_copy_neg", lambda lib, x: lib.slice_copy(x, 0, -2), (3, 4)),
    ("diagonal_copy", lambda lib, x: lib.diagonal_copy(x, 1), (3, 4)),
    ("alias_copy", lambda lib, x: lib.alias_copy(x), (3, 4)),
    ("as_strided_copy", lambda lib, x: lib.as_strided_copy(x.contiguous(), (2, 2), (1, 4), 1),
     (3, 4)),
    ("unfold_copy", lambda lib, x: lib.unfold_copy(x, 1, 2, 1), (3, 4)),
    ("split_copy", lambda lib, x: lib.split_copy(x, 3, 1), (3, 4)),
    ("split_with_sizes_copy", lambda lib, x: lib.split_with_sizes_copy(x, [1, 3], 1), (3, 4)),
    ("unbind_copy", lambda lib, x: lib.unbind_copy(x, 1), (3, 4)),
    ("split_with_sizes", lambda lib, x: lib.split_with_sizes(x, [2, 2], 1), (3, 4)),
    ("split_with_sizes_method", lambda lib, x: x.split_with_sizes([1, 2]), (3, 4)),
    ("unsafe_split", lambda lib, x: lib.unsafe_split(x, 3, 1), (3, 4)),
    ("unsafe_chunk", lambda lib, x: x.unsafe_chunk(3, 1), (3, 4)),
    ("unsafe_split_with_sizes", lambda lib, x: lib.unsafe_split_with_sizes(x, [3, 1], 1),
     (3, 4)),
    ("adjoint", lambda lib, x: lib.adjoint(x), (2, 3, 4)),
    ("adjoint_method", lambda lib, x: x.adjoint() * 1, (3, 4)),
    ("hardshrink", lambda lib, x: x.hardshrink(0.6), (3, 4)),
    ("fill", lambda lib, x: lib.fill(x, 2.5), (3, 4)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn,shape", COPIES, ids=[c[0] for c in COPIES])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_copies_and_views(name, fn, shape, dtype, noncontiguous):
    compare(fn, randn(shape, dtype), noncontiguous=noncontiguous)


def test_copies_are_contiguous_and_fresh():
    for lib in (torch, ember):
        x = lib.arange(12.).reshape(3, 4)
        y = lib.permute_copy(x, (1, 0))
        assert y.is_contiguous() and y.data_ptr() != x.data_ptr()
        assert lib.expand_copy(lib.ones(3, 1), (3, 4)).stride() == (4, 1)


def test_complex_view_copies():
    # torch refuses gradients of view_as_complex_copy's complex output: values only
    x = randn((3, 2), np.float64)
    compare(lambda lib, x: lib.view_as_complex_copy(x.contiguous()), x, grad=False)
    compare(lambda lib, z: lib.view_as_real_copy(z), x[:, 0] + 1j * x[:, 1], grad=False)


def test_view_copy_to_dtype():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    compare(lambda lib, x: lib.view_copy(x, lib.int32), x, grad=False)


def test_fill_tensor_value_gradient():
    compare(lambda lib, x, v: lib.fill(x, v.sum()), randn((2, 3), np.float64),
            randn((2,), np.float64, 1))
    compare(lambda lib, x: lib.fill(x, 7), np.arange(4), grad=False)


@pytest.mark.parametrize("dtype", FLOATS)
def test_prelu_method(dtype):
    compare(lambda lib, x, w: x.prelu(w), randn((2, 3, 4), dtype), randn((3,), dtype, 1))


def test_concat_aliases():
    a, b = randn((2, 3), np.float64), randn((2, 2), np.float64, 1)
    compare(lambda lib, x, y: lib.concat([x, y], dim=1), a, b)
    compare(lambda lib, x, y: lib.concatenate([x, y], axis=1), a, b)
    compare(lambda lib, x, y: lib.concatenate((x, y), dim=-1), a, b)


# ---- as_strided_scatter -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_as_strided_scatter_forward_and_src_gradient(dtype):
    x, src = randn((6,), dtype), randn((2, 2), dtype, 1)
    compare(lambda lib, x, s: lib.as_strided_scatter(x.detach(), s, (2, 2), (1, 2), 1), x, src)
    compare(lambda lib, x, s: x.detach().as_strided_scatter(s, (3,), (2,)), x, randn((3,), dtype))


def test_as_strided_scatter_keeps_the_input_layout():
    x = np.arange(6.).reshape(2, 3)
    compare(lambda lib, x: lib.as_strided_scatter(x.t(), lib.zeros(2), (2,), (1,), 0), x,
            grad=False)
    compare(lambda lib, x: lib.as_strided_scatter(x[:, ::2], lib.zeros(2), (2,), (1,), 1),
            np.arange(12.).reshape(3, 4), grad=False)
    compare(lambda lib, x: lib.as_strided_scatter(x, lib.ones(2), (2,), (1,)),
            np.zeros(3, np.int64), grad=False)


# ---- errors ---------------------------------------------------------------------------------
X = np.arange(6.).reshape(2, 3)
ERRORS = [
    lambda lib: lib.fill(lib.tensor(X), lib.tensor([3.])),
    lambda lib: lib.adjoint(lib.arange(3.)),
    lambda lib: lib.is_same_size(lib.tensor(X), 1),
    lambda lib: lib.tensor(X).is_same_size(1),
    lambda lib: lib.split_with_sizes(lib.tensor(X), [1, 1], 1),
    lambda lib: lib.unsafe_split(lib.tensor(X), [1, 2], 1),
    lambda lib: lib.split_copy(lib.tensor(X), [1, 2], 1),
    lambda lib: lib.slice_copy(lib.tensor(X), 1, 0, 3, 0),
    lambda lib: lib.select_copy(lib.tensor(X), 1, 5),
    lambda lib: lib.t_copy(lib.ones(2, 2, 2)),
    lambda lib: lib.as_strided_scatter(lib.arange(6.), lib.ones(3), (2, 2), (1, 2), 1),
    lambda lib: lib.tensor(X).resize(7),
    lambda lib: lib.tensor(X).resize((3, 2)),
    lambda lib: lib.tensor(1.).resize(2),
    lambda lib: lib.tensor(X).resize_as(lib.ones(7)),
    lambda lib: lib.ones(2, requires_grad=True).apply_(lambda v: v),
    lambda lib: lib.tensor(X).apply_(lambda v: "a"),
    lambda lib: lib.tensor(X).apply_(3),
    lambda lib: lib.tensor(X).map_(lib.ones(2, 1, 3), lambda a, b: a),
    lambda lib: lib.tensor(X).map_(lib.ones(3, dtype=lib.int64), lambda a, b: a),
    lambda lib: lib.tensor(X).map_(lib.ones(3, requires_grad=True), lambda a, b: a),
    lambda lib: lib.tensor(X).map2_(lib.ones(3), lib.ones(3, requires_grad=True),
                                    lambda a, b, c: a),
    lambda lib: lib.tensor(X).map2_(lib.ones(3), lib.ones(3, dtype=lib.int32),
                                    lambda a, b, c: a),
    lambda lib: lib.ones(2, 1, 3).dim_order(ambiguity_check=True),
    lambda lib: lib.ones(2, 1).expand(2, 3).dim_order(ambiguity_check=True),
    lambda lib: lib.ones(2, 3).dim_order(ambiguity_check=3),
    lambda lib: lib.ones(2).record_stream(1),
    lambda lib: lib.set_warn_always(1),
    lambda lib: lib.set_flush_denormal(1),
    lambda lib: lib.set_num_interop_threads(0),
    lambda lib: lib.set_num_interop_threads(2.0),
    lambda lib: lib.set_default_tensor_type(lib.LongTensor),
    lambda lib: lib.set_default_tensor_type("torch.IntTensor"),
    lambda lib: lib.set_default_tensor_type("torch.cuda.FloatTensor"),
    lambda lib: lib.set_default_tensor_type(3),
    lambda lib: lib.set_default_tensor_type(lib.float64),
    lambda lib: lib.lstsq(lib.eye(2), lib.eye(2)),
    lambda lib: lib.solve(lib.eye(2), lib.eye(2)),
    lambda lib: lib.eig(lib.eye(2)),
    lambda lib: lib.symeig(lib.eye(2), True),
    lambda lib: lib.matrix_rank(lib.eye(2)),
    lambda lib: lib.eye(2).lstsq(lib.eye(2)),
    lambda lib: lib.eye(2).solve(lib.eye(2)),
    lambda lib: lib.eye(2).eig(),
    lambda lib: lib.eye(2).symeig(),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = error_of(lambda: ERRORS[i](torch))
        got = error_of(lambda: ERRORS[i](ember))
    assert expected is not None
    assert got == expected


def test_record_stream_on_cpu_is_refused_as_torch():
    t = error_of(lambda: torch.ones(1).record_stream(torch.Stream()))
    class Stream:  # what ember's record_stream asks of a stream
        def synchronize(self):
            pass

        def query(self):
            return True
    e = error_of(lambda: ember.ones(1).record_stream(Stream()))
    assert e[0] == t[0] == "NotImplementedError"
    assert t[1].startswith(e[1])


# ---- values of the small functions and methods ---------------------------------------------
def _same(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, e = fn(torch), fn(ember)
    assert t == e, (t, e)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.is_same_size(lib.ones(2, 3), lib.zeros(2, 3)),
    lambda lib: lib.ones(2, 3).is_same_size(lib.ones(3, 2)),
    lambda lib: (lib.is_neg(lib.ones(2)), lib.ones(2).is_neg()),
    lambda lib: (lib.is_inference(lib.ones(2)), lib.ones(2).is_inference()),
    lambda lib: (lib.get_device(lib.ones(2)), lib.ones(2).get_device()),
    lambda lib: (lib.is_distributed(lib.ones(2)), lib.ones(2).is_distributed()),
    lambda lib: [getattr(lib.ones(1), f) for f in (
        "is_xpu", "is_mps", "is_ipu", "is_xla", "is_mtia", "is_maia", "is_vulkan", "is_mkldnn",
        "is_quantized", "is_nested")],
    lambda lib: [lib.typename(o) for o in (lib.ones(2, dtype=lib.int32), lib.tensor(True),
                                           lib.ones(1, dtype=lib.float64), 1, None, 2.5)],
    lambda lib: lib.newaxis,
    lambda lib: (lib.is_vulkan_available(), lib.compiled_with_cxx11_abi(),
                 lib.is_warn_always_enabled()),
    lambda lib: (lib.has_lapack, lib.has_spectral),
    lambda lib: lib.set_flush_denormal(False),
    lambda lib: lib.init_num_threads(),
    lambda lib: issubclass(lib.AcceleratorError, RuntimeError),
    lambda lib: lib.GradScaler is lib.amp.GradScaler,
    lambda lib: lib.DisableTorchFunction is lib._C.DisableTorchFunction,
    lambda lib: lib.ones(2, 3).const_data_ptr() == lib.ones(2, 3).data_ptr() or True,
])
def test_queries(fn):
    _same(fn)


DIM_ORDERS = [((2, 3), None), ((2, 3), (1, 0)), ((2, 3, 4, 5), (0, 2, 3, 1)),
              ((2, 1, 3), None), ((2, 3, 1, 1), (0, 2, 3, 1)), ((0, 3), None), ((), None),
              ((2, 3, 4), (2, 0, 1))]


@pytest.mark.parametrize("shape,perm", DIM_ORDERS)
@pytest.mark.parametrize("check", [False, True, "formats"])
def test_dim_order(shape, perm, check):
    def fn(lib):
        x = lib.zeros(shape) if perm is None else lib.zeros(shape).permute(perm)
        arg = [lib.contiguous_format, lib.channels_last] if check == "formats" else check
        return error_of(lambda: x.dim_order(ambiguity_check=arg)) or x.dim_order(
            ambiguity_check=arg)
    _same(fn)


def test_dim_order_of_expanded_and_strided():
    _same(lambda lib: lib.zeros(2, 3).expand(4, 2, 3).dim_order())
    _same(lambda lib: lib.empty_strided((2, 3, 4), (1, 8, 2)).dim_order())
    _same(lambda lib: lib.zeros(4, 6)[:, ::2].dim_order())


@pytest.mark.parametrize("fn", [
    lambda lib: lib.arange(6.).reshape(2, 3).apply_(lambda v: v * 2 + 1),
    lambda lib: lib.arange(6).apply_(lambda v: v / 2),
    lambda lib: lib.arange(6).apply_(lambda v: float(isinstance(v, int))),
    lambda lib: lib.zeros(2, dtype=lib.bool).apply_(lambda v: 3),
    lambda lib: lib.arange(6.).reshape(2, 3).t().apply_(lambda v: v + 1),
    lambda lib: lib.arange(6.).reshape(2, 3).map_(lib.ones(3), lambda a, b: a - b),
    lambda lib: lib.arange(6.).reshape(2, 3).map2_(lib.ones(3), lib.arange(2.).reshape(2, 1),
                                                   lambda a, b, c: a * c + b),
])
def test_python_callables(fn):
    if DEVICE is not None:
        pytest.skip("apply_/map_ run on CPU tensors only")
    t, e = fn(torch), fn(ember)
    assert str(t.dtype).split(".")[-1] == e.dtype.name
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", FLOATS)
def test_resize_values_gradients_and_warnings(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, x: x.resize(3, 4), randn((2, 6), dtype))
        compare(lambda lib, x: x.resize_as(lib.zeros(4, 3)), randn((2, 6), dtype),
                noncontiguous=True)
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="^non-inplace resize is deprecated$"):
            lib.ones(4).resize(2, 2)
        with pytest.warns(UserWarning, match="^non-inplace resize_as is deprecated$"):
            lib.ones(4).resize_as(lib.ones(2, 2))


def test_adjoint_of_0d_warns_as_torch():
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="adjoint\\(\\) is deprecated on 0-D tensors"):
            lib.adjoint(lib.tensor(2.))


def test_top_level_inplace_forms():
    for name, args, kwargs in [("erfc_", (), {}), ("logit_", (), {"eps": 0.1}),
                               ("conj_physical_", (), {}),
                               ("index_put_", ((np.array([0]),), np.float64(9.0)), {})]:
        results = []
        for lib in (torch, ember):
            x = lib.tensor(np.linspace(0.05, 0.95, 6).reshape(2, 3))
            lib_args = tuple(tuple(lib.tensor(i) for i in a) if isinstance(a, tuple)
                             else lib.tensor(a) for a in args)
            assert getattr(lib, name)(x, *lib_args, **kwargs) is x
            results.append(x.detach().numpy())
        np.testing.assert_allclose(results[1], results[0], rtol=1e-12, err_msg=name)


def test_set_default_tensor_type_as_torch():
    try:
        for t in ("torch.DoubleTensor", "DoubleTensor", "torch.FloatTensor", "HalfTensor",
                  "FloatTensor"):
            for lib in (torch, ember):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    lib.set_default_tensor_type(t if "." in t else getattr(lib, t))
            assert ember.get_default_dtype().name == str(torch.get_default_dtype())[6:]
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)


def test_set_default_tensor_type_warns_with_torch_text():
    previous = ember.is_warn_always_enabled()
    ember.set_warn_always(True)  # the warning is given once per process otherwise
    try:
        with pytest.warns(UserWarning) as record:
            ember.set_default_tensor_type(ember.FloatTensor)
        text = str(record[0].message)
        assert text.startswith("torch.set_default_tensor_type() is deprecated as of PyTorch "
                               "2.1, please use torch.set_default_dtype() and "
                               "torch.set_default_device() as alternatives.")
    finally:
        ember.set_warn_always(previous)


# ---- torch.Stream / torch.Event on the CPU --------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib: repr(lib.Stream()),
    lambda lib: repr(lib.Stream(device="meta")),
    lambda lib: repr(lib.Event(enable_timing=True)),
    lambda lib: (lib.Stream().query(), lib.Stream().synchronize(), lib.Stream().stream_id,
                 lib.Stream().device_index, lib.Stream().device_type, str(lib.Stream().device)),
    lambda lib: (lib.Stream(device="meta").device_type, lib.Stream() == lib.Stream()),
    lambda lib: (lib.Event().query(), lib.Event().synchronize(), lib.Event().wait(),
                 lib.Event().event_id, str(lib.Event().device)),
    lambda lib: error_of(lambda: lib.Stream(1)),
    lambda lib: error_of(lambda: lib.Stream(device="cuda")),
    lambda lib: error_of(lambda: lib.Event(device="cuda")),
    lambda lib: error_of(lambda: lib.Event().record()),
    lambda lib: error_of(lambda: lib.Stream(device="meta").record_event()),
    lambda lib: error_of(lambda: lib.Stream().wait_stream(lib.Stream())),
    lambda lib: error_of(lambda: lib.Event().elapsed_time(lib.Event())),
    lambda lib: error_of(lambda: lib.Event(enable_timing=True).elapsed_time(
        lib.Event(enable_timing=True))),
    lambda lib: error_of(lambda: lib.Event().ipc_handle()),
])
def test_stream_and_event(fn):
    if ember.cuda.is_available():
        pytest.skip("torch.Stream() is a CUDA stream where ember has CUDA")
    _same(fn)
