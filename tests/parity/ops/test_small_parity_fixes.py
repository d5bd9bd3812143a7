"""Small parity fixes, each checked against PyTorch (errors: the same class and message;
results: the same values, dtype and shape).

* Matrix products of bool tensors: PyTorch's CPU kernels refuse them (after the shape
  checks, unless the product is empty), each in the words of the kernel ``matmul`` lands in
  (``dot``, ``mv``, ``mm`` -- the batch folded into its rows --, ``bmm``); integer products
  are computed. Also ``matmul``'s shape errors of those kernels, ``bmm``'s mixed dtypes,
  ``tensordot``/``inner``/``linalg.multi_dot``/``F.linear`` of bools and ``out=`` dtypes of
  ``mm``/``bmm``/``dot``/``mv``.
* ``ger`` (``outer``'s deprecated name; PyTorch warns only with ``out=``) and ``outer``'s
  argument names and errors.
* ``F.layer_norm``'s ``normalized_shape``: a tuple or list of ints of at least one element.
* ``size(dim)``/``stride(dim)`` of a 0-d tensor.
* The dtypes the random factories and fills refuse, named as PyTorch names them (``Long``,
  not ``Int64``): ``rand``/``randn`` (and ``_like``), ``uniform_``/``normal_``, ``randperm``,
  ``randint``, ``arange``, ``linspace``, ``random_``'s bounds, ``bernoulli`` of complex.
"""
import warnings

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of

B, F32, F64, I64 = "bool", "float32", "float64", "int64"


def ones(lib, *shape, dtype=B, **kw):
    return lib.ones(*shape, dtype=getattr(lib, dtype), **kw)


def transposed(lib, *shape, dtype=B):
    """A tensor of ``shape`` whose last two dims are swapped in memory (not contiguous)."""
    return ones(lib, *shape[:-2], shape[-1], shape[-2], dtype=dtype).transpose(-1, -2)


def outcome(fn):
    """What ``fn()`` gives: its error (exception type name, message), or its result's dtype
    name, shape and values (None when it has none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        err = error_of(fn)
        if err is not None:
            return err
        out = fn()
    if not out.numel() or out.is_meta:
        values = None
    else:  # (NumPy has no bfloat16 of PyTorch's)
        out = out.detach().cpu()
        values = (out.float() if "bfloat16" in str(out.dtype) else out).numpy()
    return str(out.dtype).split(".")[-1], tuple(out.shape), values


def assert_same_outcome(got, expected, values=True, **tol):
    """The same error, or results of the same dtype and shape (and values, unless not
    ``values``: random draws)."""
    if len(expected) == 2 or len(got) == 2:  # errors: ember names its dtypes ember.<name>
        assert (got[0], got[1].replace("ember.", "torch.")) == expected
        return
    assert got[:2] == expected[:2], (got, expected)
    if values and expected[2] is not None:
        if tol:
            np.testing.assert_allclose(got[2], expected[2], **tol)
        else:
            np.testing.assert_array_equal(got[2], expected[2])


def assert_same(fn):
    assert_same_outcome(outcome(lambda: fn(ember)), outcome(lambda: fn(torch)))


# ---- matrix products of bool tensors ------------------------------------------------------
PRODUCTS = {
    # mm: refused unless the result is empty or the contraction has no terms
    "mm": lambda lib: lib.mm(ones(lib, 2, 3), ones(lib, 3, 2)),
    "Tensor.mm": lambda lib: ones(lib, 2, 3).mm(ones(lib, 3, 2)),
    "mm large": lambda lib: lib.mm(ones(lib, 30, 30), ones(lib, 30, 30)),
    "mm empty": lambda lib: lib.mm(ones(lib, 0, 3), ones(lib, 3, 2)),
    "mm no terms": lambda lib: lib.mm(ones(lib, 2, 0), ones(lib, 0, 2)),
    "mm shapes first": lambda lib: lib.mm(ones(lib, 2, 3), ones(lib, 4, 5)),
    "mm not a matrix": lambda lib: lib.mm(ones(lib, 3), ones(lib, 3, 2)),
    "mm bool float": lambda lib: lib.mm(ones(lib, 2, 3), ones(lib, 3, 2, dtype=F32)),
    "mm float bool": lambda lib: lib.mm(ones(lib, 2, 3, dtype=F32), ones(lib, 3, 2)),
    "mm empty bool float": lambda lib: lib.mm(ones(lib, 0, 3), ones(lib, 3, 2, dtype=F32)),
    "mm out": lambda lib: lib.mm(ones(lib, 2, 3), ones(lib, 3, 2), out=ones(lib, 2, 2)),
    "@": lambda lib: ones(lib, 2, 3) @ ones(lib, 3, 2),
    "__rmatmul__": lambda lib: ones(lib, 2, 3).__rmatmul__(ones(lib, 3, 2)),
    # bmm: "bmm" under 400 multiply-adds per matrix, then one mm per matrix
    "bmm": lambda lib: lib.bmm(ones(lib, 2, 2, 3), ones(lib, 2, 3, 2)),
    "Tensor.bmm": lambda lib: ones(lib, 2, 2, 3).bmm(ones(lib, 2, 3, 2)),
    "bmm 392 terms": lambda lib: lib.bmm(ones(lib, 1, 7, 8), ones(lib, 1, 8, 7)),
    "bmm 399 terms": lambda lib: lib.bmm(ones(lib, 1, 3, 133), ones(lib, 1, 133, 1)),
    "bmm 400 terms": lambda lib: lib.bmm(ones(lib, 1, 4, 100), ones(lib, 1, 100, 1)),
    "bmm 448 terms": lambda lib: lib.bmm(ones(lib, 1, 8, 8), ones(lib, 1, 8, 7)),
    "bmm many batches": lambda lib: lib.bmm(ones(lib, 100, 2, 2), ones(lib, 100, 2, 2)),
    "bmm shapes first": lambda lib: lib.bmm(ones(lib, 2, 2, 3), ones(lib, 2, 4, 2)),
    "bmm bool float": lambda lib: lib.bmm(ones(lib, 2, 2, 3), ones(lib, 2, 3, 2, dtype=F32)),
    "bmm float bool": lambda lib: lib.bmm(ones(lib, 2, 2, 3, dtype=F32), ones(lib, 2, 3, 2)),
    "bmm bool long": lambda lib: lib.bmm(ones(lib, 2, 2, 3), ones(lib, 2, 3, 2, dtype=I64)),
    "bmm long bool": lambda lib: lib.bmm(ones(lib, 2, 2, 3, dtype=I64), ones(lib, 2, 3, 2)),
    # bmm of larger matrices with mixed dtypes: MKL's gemm for a float result, else one mm
    # per matrix, each in its own words
    "bmm large bool float": lambda lib: lib.bmm(ones(lib, 2, 10, 10),
                                                ones(lib, 2, 10, 10, dtype=F32)),
    "bmm large bool double": lambda lib: lib.bmm(ones(lib, 2, 10, 10),
                                                 ones(lib, 2, 10, 10, dtype=F64)),
    "bmm large bool half": lambda lib: lib.bmm(ones(lib, 2, 10, 10),
                                               ones(lib, 2, 10, 10, dtype="float16")),
    "bmm large float bool": lambda lib: lib.bmm(ones(lib, 2, 10, 10, dtype=F32),
                                                ones(lib, 2, 10, 10)),
    "bmm large long bool": lambda lib: lib.bmm(ones(lib, 2, 10, 10, dtype=I64),
                                               ones(lib, 2, 10, 10)),
    "bmm large float double": lambda lib: lib.bmm(ones(lib, 2, 10, 10, dtype=F32),
                                                  ones(lib, 2, 10, 10, dtype=F64)),
    "bmm large strided bool float": lambda lib: lib.bmm(
        ones(lib, 2, 10, 20)[:, :, ::2], ones(lib, 2, 10, 10, dtype=F32)),
    # dot (refused even when empty; dtypes compared before sizes), mv
    "dot": lambda lib: lib.dot(ones(lib, 3), ones(lib, 3)),
    "dot empty": lambda lib: lib.dot(ones(lib, 0), ones(lib, 0)),
    "dot sizes": lambda lib: lib.dot(ones(lib, 3), ones(lib, 2)),
    "dot bool float sizes": lambda lib: lib.dot(ones(lib, 3), ones(lib, 2, dtype=F32)),
    "vdot": lambda lib: lib.vdot(ones(lib, 3), ones(lib, 3)),
    "mv": lambda lib: lib.mv(ones(lib, 2, 3), ones(lib, 3)),
    "Tensor.mv": lambda lib: ones(lib, 2, 3).mv(ones(lib, 3)),
    "mv empty": lambda lib: lib.mv(ones(lib, 0, 3), ones(lib, 3)),
    "mv no terms": lambda lib: lib.mv(ones(lib, 2, 0), ones(lib, 0)),
    "mv bool float sizes": lambda lib: lib.mv(ones(lib, 2, 3), ones(lib, 2, dtype=F32)),
    "mv bool float": lambda lib: lib.mv(ones(lib, 2, 3), ones(lib, 3, dtype=F32)),
    # matmul: the kernel it lands in
    "matmul 1-D 1-D": lambda lib: lib.matmul(ones(lib, 3), ones(lib, 3)),
    "matmul 1-D 1-D empty": lambda lib: lib.matmul(ones(lib, 0), ones(lib, 0)),
    "matmul 2-D 1-D": lambda lib: lib.matmul(ones(lib, 2, 3), ones(lib, 3)),
    "matmul 1-D 2-D": lambda lib: lib.matmul(ones(lib, 3), ones(lib, 3, 2)),
    "matmul 1-D 2-D no terms": lambda lib: lib.matmul(ones(lib, 0), ones(lib, 0, 2)),
    "matmul 2-D 2-D": lambda lib: lib.matmul(ones(lib, 2, 3), ones(lib, 3, 2)),
    "matmul 3-D 2-D (folded: mm)": lambda lib: lib.matmul(ones(lib, 2, 2, 3), ones(lib, 3, 2)),
    "matmul 3-D 2-D large": lambda lib: lib.matmul(ones(lib, 2, 10, 10), ones(lib, 10, 10)),
    "matmul 3-D 2-D empty": lambda lib: lib.matmul(ones(lib, 0, 2, 3), ones(lib, 3, 2)),
    "matmul 3-D 1-D (folded: mv)": lambda lib: lib.matmul(ones(lib, 2, 2, 3), ones(lib, 3)),
    "matmul strided 3-D 2-D (bmm)": lambda lib: lib.matmul(transposed(lib, 2, 2, 3),
                                                           ones(lib, 3, 2)),
    "matmul strided 3-D 1-D (bmm)": lambda lib: lib.matmul(transposed(lib, 2, 2, 3),
                                                           ones(lib, 3)),
    "matmul 1-D 3-D": lambda lib: lib.matmul(ones(lib, 3), ones(lib, 2, 3, 2)),
    "matmul 2-D 3-D": lambda lib: lib.matmul(ones(lib, 2, 3), ones(lib, 2, 3, 2)),
    "matmul 3-D 3-D": lambda lib: lib.matmul(ones(lib, 2, 2, 3), ones(lib, 2, 3, 2)),
    "matmul 3-D 3-D large": lambda lib: lib.matmul(ones(lib, 2, 10, 10), ones(lib, 2, 10, 10)),
    "matmul 4-D 3-D": lambda lib: lib.matmul(ones(lib, 2, 2, 2, 3), ones(lib, 2, 3, 2)),
    "matmul broadcast": lambda lib: lib.matmul(ones(lib, 1, 2, 3), ones(lib, 2, 3, 2)),
    "matmul 3-D 2-D bool float": lambda lib: lib.matmul(ones(lib, 2, 2, 3),
                                                        ones(lib, 3, 2, dtype=F32)),
    "matmul 3-D 1-D bool float": lambda lib: lib.matmul(ones(lib, 2, 2, 3),
                                                        ones(lib, 3, dtype=F32)),
    "matmul 2-D 3-D bool float": lambda lib: lib.matmul(ones(lib, 2, 3),
                                                        ones(lib, 2, 3, 2, dtype=F32)),
    "matmul 3-D 3-D float bool": lambda lib: lib.matmul(ones(lib, 2, 2, 3, dtype=F32),
                                                        ones(lib, 2, 3, 2)),
    "matmul 2-D 1-D bool float": lambda lib: lib.matmul(ones(lib, 2, 3), ones(lib, 3, dtype=F32)),
    "matmul 1-D 1-D bool float": lambda lib: lib.matmul(ones(lib, 3), ones(lib, 3, dtype=F32)),
    "matmul 1-D 2-D bool float": lambda lib: lib.matmul(ones(lib, 3), ones(lib, 3, 2, dtype=F32)),
    "linalg.matmul": lambda lib: lib.linalg.matmul(ones(lib, 2, 3), ones(lib, 3, 2)),
    "linalg.multi_dot": lambda lib: lib.linalg.multi_dot([ones(lib, 2, 3), ones(lib, 3, 2)]),
    # through tensordot: dot for a full contraction, else mm
    "tensordot full": lambda lib: lib.tensordot(ones(lib, 3), ones(lib, 3), dims=1),
    "tensordot full empty": lambda lib: lib.tensordot(ones(lib, 0, 3), ones(lib, 0, 3), dims=2),
    "tensordot": lambda lib: lib.tensordot(ones(lib, 2, 3), ones(lib, 3), dims=1),
    "tensordot empty": lambda lib: lib.tensordot(ones(lib, 0, 3), ones(lib, 3, 2), dims=1),
    "tensordot no terms": lambda lib: lib.tensordot(ones(lib, 2, 0), ones(lib, 0, 2), dims=1),
    "inner 1-D": lambda lib: lib.inner(ones(lib, 3), ones(lib, 3)),
    "inner 1-D empty": lambda lib: lib.inner(ones(lib, 0), ones(lib, 0)),
    "inner 2-D": lambda lib: lib.inner(ones(lib, 2, 3), ones(lib, 3)),
    "inner empty": lambda lib: lib.inner(ones(lib, 0, 3), ones(lib, 2, 3)),
    # F.linear: addmm or mm (through matmul)
    "linear": lambda lib: lib.nn.functional.linear(ones(lib, 4, 3), ones(lib, 2, 3)),
    "linear 1-D": lambda lib: lib.nn.functional.linear(ones(lib, 3), ones(lib, 2, 3)),
    "linear 3-D": lambda lib: lib.nn.functional.linear(ones(lib, 4, 2, 3), ones(lib, 2, 3)),
    "linear bias": lambda lib: lib.nn.functional.linear(ones(lib, 4, 3), ones(lib, 2, 3),
                                                        ones(lib, 2)),
    "linear 3-D bias": lambda lib: lib.nn.functional.linear(ones(lib, 4, 5, 3), ones(lib, 2, 3),
                                                            ones(lib, 2)),
    "linear empty": lambda lib: lib.nn.functional.linear(ones(lib, 0, 3), ones(lib, 2, 3)),
    "linear no terms": lambda lib: lib.nn.functional.linear(ones(lib, 4, 0), ones(lib, 2, 0)),
    "linear 3-D empty": lambda lib: lib.nn.functional.linear(ones(lib, 0, 2, 3), ones(lib, 2, 3)),
    "linear 1-D weight": lambda lib: lib.nn.functional.linear(ones(lib, 4, 3), ones(lib, 3)),
    "linear bool float": lambda lib: lib.nn.functional.linear(ones(lib, 4, 3),
                                                              ones(lib, 2, 3, dtype=F32)),
    # outer and kron multiply element-wise: bool is fine
    "outer": lambda lib: lib.outer(ones(lib, 2), ones(lib, 3)),
    "kron": lambda lib: lib.kron(ones(lib, 2, 3), ones(lib, 3, 2)),
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_bool_products(name):
    assert_same(PRODUCTS[name])


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("fn,sa,sb", [
    (lambda lib, a, b: lib.mm(a, b), (3, 4), (4, 2)),
    (lambda lib, a, b: lib.bmm(a, b), (2, 3, 4), (2, 4, 2)),
    (lambda lib, a, b: lib.matmul(a, b), (2, 3, 4), (4,)),
    (lambda lib, a, b: lib.matmul(a, b), (4,), (2, 4, 3)),
    (lambda lib, a, b: a @ b, (2, 1, 3, 4), (2, 4, 2)),
    (lambda lib, a, b: lib.dot(a, b), (5,), (5,)),
    (lambda lib, a, b: lib.mv(a, b), (3, 5), (5,)),
], ids=["mm", "bmm", "matmul 3-D 1-D", "matmul 1-D 3-D", "@ broadcast", "dot", "mv"])
def test_integer_products_are_computed(fn, sa, sb, dtype):
    rng = np.random.default_rng(0)
    a, b = (rng.integers(0, 5, shape).astype(dtype) for shape in (sa, sb))
    compare(fn, a, b)


# matmul's shape errors: those of the kernel it lands in, on the shapes it hands that kernel
MATMUL_SHAPES = {
    "3-D 2-D (folded: mm)": lambda lib, g: lib.matmul(ones(lib, 2, 2, 3, dtype=F32),
                                                      ones(lib, 4, 2, dtype=F32)),
    "strided 3-D 2-D (bmm)": lambda lib, g: lib.matmul(transposed(lib, 2, 2, 3, dtype=F32),
                                                       ones(lib, 4, 2, dtype=F32)),
    "3-D 1-D (folded: mv)": lambda lib, g: lib.matmul(ones(lib, 2, 2, 3, dtype=F32),
                                                      ones(lib, 4, dtype=F32)),
    "1-D 3-D (bmm)": lambda lib, g: lib.matmul(ones(lib, 4, dtype=F32),
                                               ones(lib, 2, 3, 2, dtype=F32)),
    "2-D 3-D (bmm)": lambda lib, g: lib.matmul(ones(lib, 2, 4, dtype=F32),
                                               ones(lib, 2, 3, 2, dtype=F32)),
    "2-D 3-D with grad (folded, transposed)": lambda lib, g: lib.matmul(
        ones(lib, 2, 4, dtype=F32, requires_grad=g), ones(lib, 2, 3, 2, dtype=F32)),
    "1-D 3-D with grad (folded: mv)": lambda lib, g: lib.matmul(
        ones(lib, 4, dtype=F32, requires_grad=g), ones(lib, 2, 3, 2, dtype=F32)),
    "3-D 3-D": lambda lib, g: lib.matmul(ones(lib, 2, 2, 3, dtype=F32),
                                         ones(lib, 2, 4, 2, dtype=F32)),
    "batch dims": lambda lib, g: lib.matmul(ones(lib, 2, 2, 3, dtype=F32),
                                            ones(lib, 3, 3, 2, dtype=F32)),
    "batch dims before inner": lambda lib, g: lib.matmul(ones(lib, 2, 2, 3, dtype=F32),
                                                         ones(lib, 3, 4, 2, dtype=F32)),
    "batch dims, first of two": lambda lib, g: lib.matmul(ones(lib, 4, 2, 2, 3, dtype=F32),
                                                          ones(lib, 3, 1, 3, 2, dtype=F32)),
    "batch dims, last reported": lambda lib, g: lib.matmul(ones(lib, 5, 4, 2, 2, 3, dtype=F32),
                                                           ones(lib, 3, 4, 3, 2, dtype=F32)),
    "2-D 1-D": lambda lib, g: lib.matmul(ones(lib, 2, 3, dtype=F32), ones(lib, 2, dtype=F32)),
    "1-D 1-D": lambda lib, g: lib.matmul(ones(lib, 2, dtype=F32), ones(lib, 3, dtype=F32)),
    "0-D": lambda lib, g: lib.matmul(ones(lib, (), dtype=F32), ones(lib, 3, dtype=F32)),
}


@pytest.mark.parametrize("name", MATMUL_SHAPES)
def test_matmul_shape_errors(name):
    expected = error_of(lambda: MATMUL_SHAPES[name](torch, True))
    assert expected is not None
    assert error_of(lambda: MATMUL_SHAPES[name](ember, True)) == expected


@pytest.mark.parametrize("name,fn,shape", [
    ("mm", lambda lib, o: lib.mm(ones(lib, 2, 3, dtype=F32), ones(lib, 3, 2, dtype=F32), out=o),
     (2, 2)),
    ("bmm", lambda lib, o: lib.bmm(ones(lib, 1, 2, 3, dtype=F32), ones(lib, 1, 3, 2, dtype=F32),
                                   out=o), (1, 2, 2)),
    ("dot", lambda lib, o: lib.dot(ones(lib, 3, dtype=F32), ones(lib, 3, dtype=F32), out=o), ()),
    ("vdot", lambda lib, o: lib.vdot(ones(lib, 3, dtype=F32), ones(lib, 3, dtype=F32), out=o),
     ()),
    ("mv", lambda lib, o: lib.mv(ones(lib, 2, 3, dtype=F32), ones(lib, 3, dtype=F32), out=o),
     (2,)),
])
@pytest.mark.parametrize("out_dtype", [F64, I64])
@pytest.mark.parametrize("resized", [True, False], ids=["empty out", "out of the shape"])
def test_out_of_another_dtype(name, fn, shape, out_dtype, resized):
    shape = (0,) if resized else shape  # (mv's wording differs)
    expected = error_of(lambda: fn(torch, torch.empty(shape, dtype=getattr(torch, out_dtype))))
    assert expected is not None
    assert error_of(lambda: fn(ember, ember.empty(shape, dtype=getattr(ember, out_dtype)))) == \
        expected


def test_keyword_arguments_of_the_products():
    for fn in (lambda lib, a, b: lib.mm(a, mat2=b), lambda lib, a, b: a.mm(mat2=b),
               lambda lib, a, b: lib.matmul(a, other=b), lambda lib, a, b: a.matmul(other=b),
               lambda lib, a, b: lib.bmm(a[None], mat2=b[None])):
        compare(fn, np.ones((2, 3)), np.ones((3, 2)))
    compare(lambda lib, a, b: lib.dot(a, tensor=b), np.ones(3), np.ones(3))
    compare(lambda lib, a, b: lib.mv(a, vec=b), np.ones((2, 3)), np.ones(3))


# ---- ger ------------------------------------------------------------------------------------
def test_ger_is_outer():
    a, b = np.array([1.0, -2.0, 3.0]), np.array([0.5, 4.0])
    compare(lambda lib, x, y: lib.ger(x, y), a, b)
    compare(lambda lib, x, y: x.ger(y), a, b)
    compare(lambda lib, x, y: lib.ger(input=x, vec2=y), a, b)
    compare(lambda lib, x, y: lib.outer(x, vec2=y), a, b)
    compare(lambda lib, x, y: lib.ger(x, y.to(lib.int32)), a, b)  # promotes as outer
    assert hasattr(ember.Tensor, "ger_") == hasattr(torch.Tensor, "ger_")


def test_ger_warns_only_with_out():
    for lib in (torch, ember):
        x, y = lib.ones(2), lib.ones(3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lib.ger(x, y)
            x.ger(y)
        out = lib.empty(2, 3)
        with pytest.warns(UserWarning, match=r"^torch\.ger is deprecated and will be removed in "
                                             r"a future PyTorch release\. Use torch\.outer "
                                             r"instead\.") as record:
            assert lib.ger(x, y, out=out) is out
        assert record[0].filename == __file__  # points at the caller
        np.testing.assert_array_equal(out.numpy(), np.ones((2, 3)))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.ger(lib.ones(1, 2), lib.ones(3)),
    lambda lib: lib.ger(lib.ones(2), lib.ones(1, 3)),
    lambda lib: lib.ones(2).ger(lib.ones(1, 3)),
    lambda lib: lib.outer(lib.ones(()), lib.ones(3)),
    lambda lib: lib.ones(2).outer(lib.ones(3, 1)),
    lambda lib: lib.ger(lib.ones(2), 2.0),
    lambda lib: lib.ger(2.0, lib.ones(2)),
    lambda lib: lib.outer(lib.ones(2), 2.0),
    lambda lib: lib.ones(2).ger(2.0),
    lambda lib: lib.ones(2).outer(2.0),
    lambda lib: lib.ger(lib.ones(2), other=lib.ones(2)),
    lambda lib: lib.ger(lib.ones(2), lib.ones(3), out=lib.empty(2, 3, dtype=lib.int64)),
])
def test_ger_and_outer_errors(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, got = error_of(lambda: fn(torch)), error_of(lambda: fn(ember))
    assert expected is not None
    assert got[0] == expected[0]
    if expected[0] == "TypeError" and "missing" in expected[1]:  # Python's own wording
        assert "vec2" in got[1] or "other" in got[1]
    else:
        assert got == expected


# ---- layer_norm's normalized_shape ----------------------------------------------------------
NORMALIZED_SHAPES = {
    "int": (4, {}),
    "float": (4.0, {}),
    "None": (None, {}),
    "str": ("ab", {}),
    "empty list": ([], {}),
    "empty tuple": ((), {}),
    "empty, with a weight": ([], {"weight": (6,)}),
    "bool first": ((True,), {}),
    "bool later": ([3, True], {}),
    "float first": ([4.0], {}),
    "float later": ([4, 2.0], {}),
    "None later": ([3, 4, None], {}),
    "array": (np.array([4]), {}),
    "numpy int": ([np.int64(4)], {}),
    "list": ([4], {}),
    "tuple": ((3, 4), {}),
    "weight checked before input": ([5], {"weight": (6,)}),
    "bias": ((4,), {"bias": (5,)}),
    "input": ([5], {}),
    "negative": ([-1], {}),
    "weight and bias": ((3, 4), {"weight": (3, 4), "bias": (3, 4)}),
}


@pytest.mark.parametrize("name", NORMALIZED_SHAPES)
def test_layer_norm_normalized_shape(name):
    shape, params = NORMALIZED_SHAPES[name]
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)

    def fn(lib):
        kw = {k: lib.ones(v) for k, v in params.items()}
        return lib.nn.functional.layer_norm(lib.tensor(x), shape, **kw)
    assert_same_outcome(outcome(lambda: fn(ember)), outcome(lambda: fn(torch)), rtol=1e-5,
                        atol=1e-5)


def test_layer_norm_tensor_elements_and_modules():
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    compare(lambda lib, t: lib.nn.functional.layer_norm(t, [lib.tensor(4)]), x)
    compare(lambda lib, t: lib.nn.functional.layer_norm(t, t.shape[1:]), x)
    compare(lambda lib, t: lib.nn.LayerNorm(4)(t), x)  # the module takes an int
    expected = error_of(lambda: torch.nn.LayerNorm([])(torch.tensor(x)))
    assert error_of(lambda: ember.nn.LayerNorm([])(ember.tensor(x))) == expected


# ---- size / stride of a 0-d tensor ----------------------------------------------------------
@pytest.mark.parametrize("dim", [0, -1, 1, -2, 3])
@pytest.mark.parametrize("what", ["size", "stride"])
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_size_and_stride_of_a_dim(shape, what, dim):
    def fn(lib):
        return getattr(lib.ones(shape), what)(dim)
    expected, got = error_of(lambda: fn(torch)), error_of(lambda: fn(ember))
    assert got == expected
    if expected is None:
        assert fn(ember) == fn(torch)


def test_size_and_stride_of_a_0d_tensor_without_dim():
    assert tuple(ember.tensor(3.0).size()) == tuple(torch.tensor(3.0).size())
    assert ember.tensor(3.0).stride() == torch.tensor(3.0).stride()


# ---- dtypes the random factories and fills refuse -------------------------------------------
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]
NOT_FLOAT = DTYPES[:6]

RANDOM = {
    "rand": lambda lib, d: lib.rand(2, dtype=d),
    "rand 0": lambda lib, d: lib.rand(0, dtype=d),
    "rand negative": lambda lib, d: lib.rand(-1, dtype=d),
    "rand meta": lambda lib, d: lib.rand(2, dtype=d, device="meta"),
    "randn": lambda lib, d: lib.randn(2, 3, dtype=d),
    "randn meta": lambda lib, d: lib.randn(2, dtype=d, device="meta"),
    "rand_like": lambda lib, d: lib.rand_like(lib.ones(2), dtype=d),
    "rand_like of the dtype": lambda lib, d: lib.rand_like(lib.ones(2, dtype=d)),
    "randn_like": lambda lib, d: lib.randn_like(lib.ones(2), dtype=d),
    "uniform_": lambda lib, d: lib.ones(2, dtype=d).uniform_(),
    "uniform_ empty": lambda lib, d: lib.ones(0, dtype=d).uniform_(),
    "uniform_ bad bounds": lambda lib, d: lib.ones(2, dtype=d).uniform_(1, 0),
    "uniform_ meta": lambda lib, d: lib.ones(2, dtype=d, device="meta").uniform_(),
    "normal_": lambda lib, d: lib.ones(2, dtype=d).normal_(),
    "normal_ empty": lambda lib, d: lib.ones(0, dtype=d).normal_(),
    "normal_ negative std": lambda lib, d: lib.ones(2, dtype=d).normal_(0, -1),
}


@pytest.mark.parametrize("dtype", NOT_FLOAT)
@pytest.mark.parametrize("name", RANDOM)
def test_random_floats_refuse_other_dtypes(name, dtype):
    def fn(lib):
        return RANDOM[name](lib, getattr(lib, dtype))
    assert_same_outcome(outcome(lambda: fn(ember)), outcome(lambda: fn(torch)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_random_floats_of_floating_dtypes(dtype):
    for name in ("rand", "randn", "rand_like", "randn_like", "rand meta"):
        got = RANDOM[name](ember, getattr(ember, dtype))
        expected = RANDOM[name](torch, getattr(torch, dtype))
        assert (got.dtype.name, tuple(got.shape)) == (str(expected.dtype)[6:],
                                                      tuple(expected.shape))
    with pytest.raises(RuntimeError, match=r"^normal expects std >= 0\.0, but found std -1\.5$"):
        ember.ones(2, dtype=getattr(ember, dtype)).normal_(0, -1.5)


FACTORIES = {
    "randperm": lambda lib, d: lib.randperm(3, dtype=d),
    "randperm 0": lambda lib, d: lib.randperm(0, dtype=d),
    "randperm negative": lambda lib, d: lib.randperm(-1, dtype=d),
    "randperm meta": lambda lib, d: lib.randperm(3, dtype=d, device="meta"),
    "randint": lambda lib, d: lib.randint(0, 2, (2,), dtype=d),
    "randint empty": lambda lib, d: lib.randint(0, 2, (0,), dtype=d),
    "randint bad bounds": lambda lib, d: lib.randint(0, 0, (2,), dtype=d),
    "randint meta": lambda lib, d: lib.randint(0, 2, (2,), dtype=d, device="meta"),
    "randint_like": lambda lib, d: lib.randint_like(lib.ones(2, dtype=d), 2),
    "arange": lambda lib, d: lib.arange(3, dtype=d),
    "arange empty": lambda lib, d: lib.arange(0, dtype=d),
    "arange zero step": lambda lib, d: lib.arange(0, 3, 0, dtype=d),
    "arange bad bounds": lambda lib, d: lib.arange(3, 0, 1, dtype=d),
    "arange meta": lambda lib, d: lib.arange(3, dtype=d, device="meta"),
    "linspace": lambda lib, d: lib.linspace(0, 1, 3, dtype=d),
    "linspace one step": lambda lib, d: lib.linspace(0, 1, 1, dtype=d),
    "linspace no step": lambda lib, d: lib.linspace(0, 1, 0, dtype=d),
    "linspace negative": lambda lib, d: lib.linspace(0, 1, -1, dtype=d),
    "bernoulli_": lambda lib, d: lib.zeros(2, dtype=d).bernoulli_(),
    "bernoulli_ tensor p": lambda lib, d: lib.zeros(2, dtype=d).bernoulli_(lib.zeros(2)),
    "bernoulli_ bad p": lambda lib, d: lib.zeros(2, dtype=d).bernoulli_(1.5),
    "bernoulli": lambda lib, d: lib.bernoulli(lib.zeros(2, dtype=d)),
    "bernoulli p": lambda lib, d: lib.bernoulli(lib.zeros(2, dtype=d), 0.0),
    "bernoulli bad p": lambda lib, d: lib.bernoulli(lib.zeros(2, dtype=d), 1.5),
}
# results that are random: compared by dtype and shape only
RANDOM_VALUES = ("randperm", "randint", "randint_like", "bernoulli_")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FACTORIES)
def test_factories_refuse_what_torch_refuses(name, dtype):
    def fn(lib):
        return FACTORIES[name](lib, getattr(lib, dtype))
    assert_same_outcome(outcome(lambda: fn(ember)), outcome(lambda: fn(torch)),
                        values=name not in RANDOM_VALUES, rtol=1e-3)


RANDOM_INTS = {
    "no bounds": (),
    "to": (5,),
    "to 2": (2,),
    "from to": (1, 3),
    "from == to": (3, 3),
    "from > to": (5, 3),
    "from below": (-1, 2),
    "from below int8": (-200, 0),
    "to above uint8": (0, 257),
    "to at uint8's end": (0, 256),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", RANDOM_INTS)
def test_random_(name, dtype):
    args = RANDOM_INTS[name]

    def fn(lib):
        return lib.zeros(500, dtype=getattr(lib, dtype)).random_(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's precision warnings of half floats
        expected, got = outcome(lambda: fn(torch)), outcome(lambda: fn(ember))
    assert_same_outcome(got, expected, values=False)
    if len(expected) == 2:
        return
    if expected[2] is not None and args:  # values drawn in [from, to)
        low, high = (0, args[0]) if len(args) == 1 else args
        values = got[2].astype(np.float64)
        assert values.min() >= low and values.max() <= high - 1
    if expected[2] is not None and dtype == "bool":  # both values drawn
        assert set(got[2].tolist()) == set(expected[2].tolist()) == {False, True}
