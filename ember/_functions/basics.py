"""Declarations of the basics (log10, fmax/fmin, var_mean, strided views, index_copy, ...;
ops in ``_ops/basics.py``) and PyTorch's top-level in-place functions (``ember.abs_``)."""
from __future__ import annotations

import inspect as _inspect

from .._ops import basics as _BA, shape as S
from .._registry import DECLARED as _DECLARED, op, alias, unary, method as _method
from .._tensor import Tensor
from .._torch_function import dispatching as _dispatching
from .._typing import Any, Number, Sequence, dtype
from ..backend import dtypes
from .core import _as_tensor_like, conj, cumprod, cumsum, sub, trunc

# ---- basics: log10, fmax/fmin, var_mean, strided views, index_copy, ... (_ops/basics.py) ----

log10 = unary(_BA.Log10, "log10", inplace=True)
fix = alias(trunc, "fix", inplace=True)
var_mean = op(_BA.var_mean, method=False)
std_mean = op(_BA.std_mean, method=False)
fmax = op(_BA.fmax, out=True)
fmin = op(_BA.fmin, out=True)
unravel_index = op(_BA.unravel_index, method=False)
index_copy = op(_BA.index_copy, inplace=True, out=True)
as_strided = op(_BA.as_strided)
_method(_BA.unfold)
scalar_tensor = op(_BA.scalar_tensor, method=False)
empty_strided = op(_BA.empty_strided, method=False)
asarray = op(_BA.asarray, method=False)


@op
def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """``input`` expanded to ``size`` (a view; -1 keeps a dimension's size).

    >>> import ember
    >>> ember.broadcast_to(ember.tensor([1, 2]), (2, 2))
    tensor([[1, 2],
            [1, 2]])
    """
    return S.expand(input, size)


@op
def ravel(input: Tensor) -> Tensor:
    """``input`` flattened to 1-D (a view when the layout allows).

    >>> import ember
    >>> ember.ravel(ember.tensor([[1, 2], [3, 4]]).t())
    tensor([1, 3, 2, 4])
    """
    return S.reshape(input, -1)


@op
def positive(input: Tensor) -> Tensor:
    """``input`` itself (``+input``); refused for bool tensors, as in PyTorch.

    >>> import ember
    >>> ember.positive(ember.tensor([-1, 2]))
    tensor([-1,  2])
    """
    if input.dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@op(method=False)
def rsub(input: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """``other - alpha * input`` (``sub`` with the operands swapped).

    >>> import ember
    >>> ember.rsub(ember.tensor([1, 2]), 3, alpha=2)
    tensor([ 1, -1])
    """
    if not isinstance(other, Tensor):
        other = _as_tensor_like(other, input)
    return sub(other, input, alpha=alpha)


def _cumulative_(name, fn):
    """``x.cumsum_(dim)``: PyTorch refuses a ``dtype`` other than x's before running."""
    def inplace(self: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
        if dtype is not None and dtype is not self.dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype {self.dtype.cpp_name} and "
                               f"output tensor dtype {dtype.cpp_name} should match")
        return self._inplace(lambda x: fn(x, dim))
    inplace.__name__ = inplace.__qualname__ = name
    return _method(inplace)


_cumulative_("cumsum_", cumsum)
_cumulative_("cumprod_", cumprod)


@_method
def conj_physical_(self: Tensor) -> Tensor:
    """The complex conjugate written into self (a real tensor is left as it is).

    >>> import ember
    >>> ember.tensor([1 + 2j]).conj_physical_()
    tensor([1.-2.j])
    """
    return self._inplace(conj) if self.is_complex() else self


@op
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose`` under NumPy's name.

    >>> import ember
    >>> ember.swapaxes(ember.zeros(2, 3), 0, 1).shape
    ember.Size([3, 2])
    """
    return S.transpose(input, axis0, axis1)


@op
def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose`` under another name.

    >>> import ember
    >>> ember.swapdims(ember.zeros(2, 3), 0, 1).shape
    ember.Size([3, 2])
    """
    return S.transpose(input, dim0, dim1)


@op
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A copy (not a view) of ``input.narrow(dim, start, length)``.

    >>> import ember
    >>> ember.arange(6.).reshape(2, 3).narrow_copy(1, 1, 2)
    tensor([[1., 2.],
            [4., 5.]])
    """
    if input.dim() and isinstance(dim, int) and dim >= input.dim():  # PyTorch's own check
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be "
                           "true, but got false.  (Could this error message be improved?  "
                           "If so, please report an enhancement request to PyTorch.)")
    return S.narrow(input, dim, start, length).clone()


@op
def is_nonzero(input: Tensor) -> bool:
    """Whether a one-element tensor is not zero (``bool(input)``, with PyTorch's errors for
    other sizes).

    >>> import ember
    >>> ember.tensor([1.5]).is_nonzero(), ember.is_nonzero(ember.tensor([0]))
    (True, False)
    """
    count = input.numel()
    if count != 1:
        raise RuntimeError(f"Boolean value of Tensor with "
                           f"{'no values' if count == 0 else 'more than one value'} is "
                           f"ambiguous")
    return bool(input._data.reshape(()).item())


__all__ = ["log10", "fix", "var_mean", "std_mean", "fmax", "fmin", "unravel_index",
           "index_copy", "as_strided", "scalar_tensor", "empty_strided", "asarray",
           "broadcast_to", "ravel", "positive", "rsub", "swapaxes", "swapdims",
           "narrow_copy", "is_nonzero"]


# ---- top-level in-place forms: ember.abs_(x) is x.abs_() (PyTorch's torch.abs_ & co.) ------


#: PyTorch's torch.<op>_ functions whose Tensor.<op>_ ember has (torch.addmv_ and
#: torch.as_strided_ are left out: their out-of-place ops declare no in-place form)
_INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "erf_", "exp2_", "exp_", "expm1_",
    "fix_", "floor_", "log10_", "log1p_", "log2_", "log_", "nan_to_num_", "neg_", "negative_",
    "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_",
    "sqrt_", "square_", "tan_", "tanh_", "trunc_", "detach_")
_INPLACE_EXAMPLE_ARGS = {"clamp_": ", 0, 1", "clip_": ", 0, 1", "clamp_max_": ", 1",
                         "clamp_min_": ", 0"}


def _inplace_function(name, signature):
    """``ember.<name>(input, ...)``: ``input.<name>(...)``, with the method's signature
    (``input`` first, no ``out=``)."""
    def function(input, *args, **kwargs):
        method = getattr(Tensor, name)
        return getattr(method, "__ember_impl__", method)(input, *args, **kwargs)
    params = [p for p in signature.parameters.values() if p.name != "out"]
    params[0] = params[0].replace(name="input")
    function.__signature__ = signature.replace(parameters=params)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"``input.{name}(...)``: the in-place form as a function (input "
                        f"changed and returned).\n\n    >>> import ember\n    >>> x = "
                        f"ember.tensor([0.5])\n    >>> ember.{name}(x"
                        f"{_INPLACE_EXAMPLE_ARGS.get(name, '')}) is x\n    True\n    ")
    return function


for _name in _INPLACE_FUNCTIONS:
    _base = _DECLARED[_name[:-1]]
    globals()[_name] = op(_inplace_function(_name, _inspect.signature(
        _base.signature or _base.function)), name=_name, method=False)
del _name, _base

__all__ += list(_INPLACE_FUNCTIONS)


# Tensor-only in-place methods (declared with ``method`` in _tensor_methods, which runs
# after this module) that PyTorch also has as functions: plain entry points, imported by
# ember/__init__ by name (a declaration cannot hold them: the method's name is taken).
def fill_(input: Tensor, value: Tensor | Number) -> Tensor:
    """``input.fill_(value)`` as a function.

    >>> import ember
    >>> ember.fill_(ember.zeros(2), 3)
    tensor([3., 3.])
    """
    return input.fill_(value)


def zero_(input: Tensor) -> Tensor:
    """``input.zero_()`` as a function.

    >>> import ember
    >>> ember.zero_(ember.ones(2))
    tensor([0., 0.])
    """
    return input.zero_()


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``input.resize_as_(the_template)`` as a function.

    >>> import ember
    >>> ember.resize_as_(ember.zeros(2), ember.zeros(3)).shape
    ember.Size([3])
    """
    return input.resize_as_(the_template, memory_format=memory_format)


fill_, zero_, resize_as_ = (_dispatching(_fn, name=_fn.__name__, module="ember")
                            for _fn in (fill_, zero_, resize_as_))
for _fn in (fill_, zero_, resize_as_):
    _fn._public_module = "ember"
del _fn
