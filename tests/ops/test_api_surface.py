"""Behaviour of the remaining API surface (``_ops/api_surface.py``, ``_ops/tensor_extras.py``,
the switches in ``_runtime_switches.py``): the ``*_copy`` forms, splits, ``fill``,
``adjoint``, ``as_strided_scatter``, tensor queries, Tensor-only methods, the global
switches and the removed functions. Expected values come from math; gradients from finite
differences (gradcheck in float64)."""
import warnings

import numpy as np
import pytest

import ember
from ember import _runtime_switches
from ember.autograd import gradcheck


def rand(*shape, seed=0):
    g = np.random.default_rng(seed)
    return ember.tensor(g.standard_normal(shape), dtype=ember.float64, requires_grad=True)


# ---- copies: fresh memory, contiguous, gradients --------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda x: ember.view_copy(x, (6, 2)),
    lambda x: ember.permute_copy(x, (1, 0)),
    lambda x: ember.transpose_copy(x, 0, 1),
    lambda x: ember.t_copy(x),
    lambda x: ember.squeeze_copy(x[None]),
    lambda x: ember.unsqueeze_copy(x, 0),
    lambda x: ember.expand_copy(x[:1], (2, 3, 4)),
    lambda x: ember.select_copy(x, 0, 1),
    lambda x: ember.slice_copy(x, 1, 1, None, 2),
    lambda x: ember.diagonal_copy(x, -1),
    lambda x: ember.alias_copy(x),
    lambda x: ember.as_strided_copy(x, (2, 2), (1, 3), 2),
    lambda x: ember.unfold_copy(x, 1, 2, 2),
    lambda x: ember.split_copy(x, 2, 1)[1],
    lambda x: ember.split_with_sizes_copy(x, [1, 3], 1)[1],
    lambda x: ember.unbind_copy(x, 1)[2],
    lambda x: ember.view_as_real_copy(ember.view_as_complex_copy(x.reshape(3, 2, 2))),
])
def test_copies_gradcheck_and_fresh_memory(fn):
    x = rand(3, 4)
    assert gradcheck(fn, (x,))
    out = fn(x)
    assert out.is_contiguous()
    assert out.data_ptr() != x.data_ptr()


def test_copy_values_from_math():
    x = ember.arange(12).reshape(3, 4)
    assert ember.permute_copy(x, (1, 0)).tolist() == [[0, 4, 8], [1, 5, 9], [2, 6, 10],
                                                      [3, 7, 11]]
    assert ember.slice_copy(x, 1, -3, 100, 2).tolist() == [[1, 3], [5, 7], [9, 11]]
    assert ember.slice_copy(x, 0, 2, 1).shape == (0, 4)
    assert ember.view_copy(x.t(), (12,)).tolist() == [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]
    assert ember.diagonal_copy(x, 1).tolist() == [1, 6, 11]
    assert ember.expand_copy(ember.tensor([1, 2]), (2, 2), implicit=True).tolist() == \
        [[1, 2], [1, 2]]


def test_detach_copy_has_no_graph():
    out = ember.detach_copy(rand(2))
    assert not out.requires_grad and out.grad_fn is None


def test_copies_take_out():
    out = ember.empty(0)
    assert ember.t_copy(ember.tensor([[1., 2.]]), out=out) is out
    assert out.tolist() == [[1.], [2.]]


# ---- splits ---------------------------------------------------------------------------------
def test_splits_are_the_pieces():
    x = ember.arange(10).reshape(2, 5)
    pieces = ember.split_with_sizes(x, [2, 3], dim=1)
    assert [p.tolist() for p in pieces] == [[[0, 1], [5, 6]], [[2, 3, 4], [7, 8, 9]]]
    assert [p.shape[1] for p in x.unsafe_split(2, 1)] == [2, 2, 1]
    assert [p.shape[1] for p in ember.unsafe_chunk(x, 2, 1)] == [3, 2]
    assert [p.shape[1] for p in x.unsafe_split_with_sizes([4, 1], 1)] == [4, 1]


def test_split_errors():
    x = ember.zeros(2, 3)
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum "
                                           "exactly to 3"):
        ember.split_with_sizes(x, [1, 1], 1)
    with pytest.raises(TypeError, match="argument 'split_size' \\(position 2\\) must be int"):
        ember.unsafe_split(x, [1, 2], 1)


# ---- fill, adjoint, as_strided_scatter ------------------------------------------------------
def test_fill_values_and_gradients():
    x = ember.zeros(2, dtype=ember.int32)
    out = ember.fill(x, 3.7)
    assert out.dtype is ember.int32 and out.tolist() == [3, 3] and x.tolist() == [0, 0]
    x, v = rand(2, 3), rand(seed=1).sum()
    assert gradcheck(lambda x, v: ember.fill(x, v), (x, v))
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        ember.fill(ember.zeros(2), ember.ones(1))


def test_adjoint():
    z = ember.tensor([[1 + 2j, 3j], [4., 5 - 1j]])
    assert ember.adjoint(z).tolist() == [[1 - 2j, 4], [-3j, 5 + 1j]]
    x = rand(2, 3, 4)
    assert x.adjoint().shape == (2, 4, 3)
    assert gradcheck(ember.adjoint, (x,))
    with pytest.raises(RuntimeError, match="only supported on matrices or batches of "
                                           "matrices. Got 1-D tensor."):
        ember.adjoint(ember.zeros(3))
    with pytest.warns(UserWarning, match="deprecated on 0-D tensors"):
        assert ember.adjoint(ember.tensor(2.)).item() == 2.


def test_as_strided_scatter_values():
    out = ember.as_strided_scatter(ember.zeros(6), ember.tensor([[1., 2.], [3., 4.]]),
                                   (2, 2), (1, 2), 1)
    assert out.tolist() == [0, 1, 3, 2, 4, 0]  # src[i][j] at 1 + i + 2j
    # positions count in the input's own storage: a transposed input's first column
    t = ember.arange(6.).reshape(2, 3).t()
    assert ember.as_strided_scatter(t, ember.zeros(2), (2,), (1,), 0).tolist() == \
        [[0, 3], [0, 4], [2, 5]]
    # an integer input keeps its dtype
    assert ember.as_strided_scatter(ember.zeros(3, dtype=ember.int64), ember.ones(2), (2,),
                                    (1,)).tolist() == [1, 1, 0]


def test_as_strided_scatter_gradients():
    # d out / d input is zero where src lands (PyTorch 2.13's own backward for input returns
    # the other part: its gradcheck fails; ember's follows the finite differences)
    x, s = rand(6), rand(2, 2, seed=1)
    assert gradcheck(lambda x, s: ember.as_strided_scatter(x, s, (2, 2), (1, 2), 1), (x, s))
    out = ember.as_strided_scatter(x, s, (2, 2), (1, 2), 1)
    out.backward(ember.arange(6.).double())
    assert x.grad.tolist() == [0, 0, 0, 0, 0, 5]
    assert s.grad.tolist() == [[1, 3], [2, 4]]


def test_as_strided_scatter_errors():
    with pytest.raises(RuntimeError, match="expected src to have a size equal to the slice"):
        ember.as_strided_scatter(ember.zeros(6), ember.ones(3), (2, 2), (1, 2), 1)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        ember.as_strided_scatter(ember.zeros(6), ember.ones(2, 2), (2, 2), (1, 2), 10)
    with pytest.raises(TypeError, match="argument 'src' \\(position 2\\) must be Tensor"):
        ember.as_strided_scatter(ember.zeros(6), 1, (2,), (1,))


# ---- queries --------------------------------------------------------------------------------
def test_queries():
    x = ember.ones(2, 3)
    assert ember.is_same_size(x, ember.zeros(2, 3)) and not x.is_same_size(ember.zeros(3, 2))
    assert ember.resolve_neg(x) is x and x.resolve_neg() is x
    assert ember.is_neg(-x) is False
    assert ember.is_distributed(x) is False
    assert ember.get_device(x) == -1 and ember.empty(2, device="meta").get_device() == -1
    assert x.const_data_ptr() == x.data_ptr()
    for flag in ("is_xpu", "is_mps", "is_ipu", "is_xla", "is_mtia", "is_maia", "is_vulkan",
                 "is_mkldnn", "is_quantized", "is_nested"):
        assert getattr(x, flag) is False


def test_is_inference_is_false_even_in_inference_mode():
    # ember's inference_mode is no_grad: it makes no inference tensors (docs: a deviation)
    with ember.inference_mode():
        y = ember.ones(2)
    assert ember.is_inference(y) is False and y.is_inference() is False


def test_typename():
    assert ember.typename(ember.ones(2, dtype=ember.int32)) == "torch.IntTensor"
    assert ember.typename(ember.nn.Linear(1, 1)) == "ember.nn.modules.linear.Linear"
    assert ember.typename(ember.nn.Linear) == "ember.nn.modules.linear.Linear"
    assert ember.typename(3) == "int" and ember.typename(None) == "NoneType"


def test_dim_order():
    assert ember.ones(2, 3, 4, 5).permute(0, 2, 3, 1).dim_order() == (0, 3, 1, 2)
    assert ember.empty_strided((2, 3, 4), (1, 8, 2)).dim_order() == (1, 2, 0)
    assert ember.ones(2, 3).expand(4, 2, 3).dim_order() == (0, 1, 2)
    assert ember.tensor(1.).dim_order() == ()
    x = ember.ones(2, 1, 3)
    with pytest.raises(RuntimeError, match="does not have unique dim order, or cannot map"):
        x.dim_order(ambiguity_check=True)
    assert x.dim_order(ambiguity_check=[ember.contiguous_format, ember.channels_last]) == \
        (0, 1, 2)
    with pytest.raises(RuntimeError, match="^The tensor does not have unique dim order.$"):
        ember.ones(2, 1).expand(2, 3).dim_order(ambiguity_check=True)
    with pytest.raises(TypeError, match="must be a bool or a list of memory formats"):
        x.dim_order(ambiguity_check="yes")


def test_hardshrink_and_prelu_methods():
    x = ember.tensor([-2., -0.3, 0.4, 1.], dtype=ember.float64)
    assert x.hardshrink(0.5).tolist() == [-2, 0, 0, 1]
    assert x.prelu(ember.tensor([0.5], dtype=ember.float64)).tolist() == [-1, -0.15, 0.4, 1]
    assert gradcheck(lambda x, w: x.prelu(w), (rand(2, 3, 4), rand(3, seed=1)))


def test_record_stream():
    with pytest.raises(RuntimeError, match="^unknown parameter type$"):
        ember.ones(1).record_stream(3)


# ---- Tensor-only methods --------------------------------------------------------------------
def test_apply_map_map2():
    x = ember.arange(6.).reshape(2, 3)
    assert x.apply_(lambda v: v * v) is x
    assert x.tolist() == [[0, 1, 4], [9, 16, 25]]
    seen = []
    ember.arange(4).reshape(2, 2).t().apply_(lambda v: seen.append(v) or v)
    assert seen == [0, 2, 1, 3]  # the logical order, ints for an integer tensor
    assert ember.arange(4).apply_(lambda v: v / 2).tolist() == [0, 0, 1, 1]
    y = ember.zeros(2, 3)
    y.map2_(ember.tensor([1., 2., 3.]), ember.tensor([[10.], [20.]]), lambda a, b, c: b + c)
    assert y.tolist() == [[11, 12, 13], [21, 22, 23]]
    assert ember.ones(2).map_(ember.tensor([2., 3.]), lambda a, b: a - b).tolist() == [-1, -2]
    meta = ember.empty(2, device="meta")
    assert meta.apply_(lambda v: 1 / 0) is meta  # nothing to call it on


def test_apply_errors():
    with pytest.raises(RuntimeError, match="Can't call apply_\\(\\) on Variable that requires "
                                           "grad"):
        rand(2).apply_(lambda v: v)
    with pytest.raises(TypeError, match="must be real number, not str"):
        ember.ones(2).apply_(lambda v: "a")
    with pytest.raises(TypeError, match="map_: expected torch.FloatTensor for 'other' "
                                        "\\(got torch.LongTensor\\)"):
        ember.ones(2).map_(ember.ones(2, dtype=ember.int64), lambda a, b: a)


def test_resize_and_resize_as():
    x = rand(2, 6)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        y = x.resize(3, 4)
    assert y.shape == (3, 4)
    assert gradcheck(lambda x: x.t().resize(12), (x,))
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert x.resize_as(ember.zeros(4, 3)).shape == (4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="requested resize to 7 \\(7 elements in total\\), "
                                               "but the given tensor has a size of 2x6"):
            x.resize(7)


# ---- switches -------------------------------------------------------------------------------
def test_warn_always_repeats_once_only_warnings():
    z = ember.tensor([1 + 1j])
    ember.set_warn_always(True)
    try:
        for _ in range(2):
            with pytest.warns(UserWarning, match="Casting complex values to real"):
                z.to(ember.float32)
    finally:
        ember.set_warn_always(False)
    assert ember.is_warn_always_enabled() is False
    with pytest.raises(RuntimeError, match="setWarnOnlyOnce expects a bool, but got int"):
        ember.set_warn_always(1)


def test_flush_denormal():
    assert ember.set_flush_denormal(False) is True
    assert ember.set_flush_denormal(True) is False  # not done: NumPy keeps denormals
    assert ember.tensor([1e-40]).item() != 0.0
    with pytest.raises(RuntimeError, match="flush_denormal expects a bool, but got int"):
        ember.set_flush_denormal(1)


def test_interop_threads_set_once(monkeypatch):
    monkeypatch.setattr(_runtime_switches._switches, "interop_threads", None)
    assert ember.get_num_interop_threads() >= 1
    ember.set_num_interop_threads(3)
    assert ember.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads after"):
        ember.set_num_interop_threads(3)
    with pytest.raises(RuntimeError, match="expects a positive integer"):
        ember.set_num_interop_threads(-1)


def test_set_default_tensor_type():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ember.set_default_tensor_type(ember.DoubleTensor)
            assert ember.get_default_dtype() is ember.float64
            assert ember.tensor([1.5]).dtype is ember.float64
            ember.set_default_tensor_type("torch.FloatTensor")
            assert ember.get_default_dtype() is ember.float32
            with pytest.raises(TypeError, match="only floating-point types are supported"):
                ember.set_default_tensor_type(ember.LongTensor)
            with pytest.raises(TypeError, match="not available. Torch not compiled with CUDA"):
                ember.set_default_tensor_type("torch.cuda.FloatTensor")
            with pytest.raises(ModuleNotFoundError):
                ember.set_default_tensor_type("foo")
            with pytest.raises(AttributeError, match="has no attribute 'Foo'"):
                ember.set_default_tensor_type("torch.Foo")
    finally:
        ember.set_default_dtype(ember.float32)


def test_build_facts_and_names():
    assert ember.has_lapack and ember.has_spectral and not ember.has_openmp
    assert ember.compiled_with_cxx11_abi() is True and ember.is_vulkan_available() is False
    assert ember.init_num_threads() is None
    assert ember.newaxis is None and ember.zeros(2)[:, ember.newaxis].shape == (2, 1)
    assert ember.GradScaler is ember.amp.GradScaler
    assert issubclass(ember.AcceleratorError, RuntimeError)
    assert ember.DisableTorchFunction is ember._C.DisableTorchFunction
    assert ember.DisableTorchFunctionSubclass is ember._C.DisableTorchFunctionSubclass
    assert ember.concat is ember.cat
    assert ember.Stream().query() and ember.Event().query()
    with pytest.raises(RuntimeError, match="cpu backend doesn't support events."):
        ember.Event().record()
    assert ember.concatenate([ember.ones(1), ember.zeros(1)], axis=0).tolist() == [1, 0]


# ---- top-level in-place forms and removed functions -------------------------------------------
def test_top_level_inplace_forms():
    x = ember.tensor([0.5, 1.0])
    assert ember.erfc_(x) is x and abs(x[0].item() - 0.4795001221869535) < 1e-7
    y = ember.tensor([0.25])
    assert ember.logit_(y) is y and abs(y.item() - np.log(1 / 3)) < 1e-7
    z = ember.tensor([1 + 2j])
    assert ember.conj_physical_(z) is z and z.tolist() == [1 - 2j]
    w = ember.zeros(3)
    assert ember.index_put_(w, (ember.tensor([1]),), ember.tensor(5.)) is w
    assert w.tolist() == [0, 5, 0]


@pytest.mark.parametrize("call,hint", [
    (lambda: ember.lstsq(ember.eye(2), ember.eye(2)), "torch.linalg.lstsq"),
    (lambda: ember.solve(ember.eye(2), ember.eye(2)), "torch.linalg.solve"),
    (lambda: ember.eig(ember.eye(2), eigenvectors=True), "torch.linalg.eig"),
    (lambda: ember.symeig(ember.eye(2)), "torch.linalg.eigh"),
    (lambda: ember.matrix_rank(ember.eye(2), symmetric=True), "torch.linalg.matrix_rank"),
    (lambda: ember.eye(2).eig(), "torch.linalg.eigvals"),
    (lambda: ember.eye(2).symeig(True), "torch.linalg.eigvalsh"),
])
def test_removed_functions_point_to_linalg(call, hint):
    with pytest.raises(RuntimeError, match="^This function was deprecated since version 1.9 "
                                           "and is now removed") as info:
        call()
    assert hint in str(info.value)
