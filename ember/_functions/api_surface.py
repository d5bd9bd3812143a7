"""Declarations of the remaining everyday API surface (ops in ``_ops/api_surface.py``):
``concat``/``concatenate``, ``fill``, the ``*_copy`` forms of the view ops, the
``unsafe_*`` splits, ``as_strided_scatter``, ``adjoint``, tensor queries, the top-level
in-place forms ``index_put_``, ``erfc_``, ``logit_``, ``conj_physical_``, Tensor-only
methods (``apply_``, ``map_``, ``resize``, ``dim_order``, ...) and the removed functions
(``solve``, ``lstsq``, ``eig``, ``symeig``, ``matrix_rank``) that raise PyTorch's pointer
to ``linalg``."""
from __future__ import annotations

import inspect as _inspect

from .._ops import api_surface as _A, tensor_extras as _X
from .._registry import DECLARED as _DECLARED, op, alias, method as _method
from .._tensor import Tensor
from .._torch_function import dispatching as _dispatching
from .._typing import Any, Sequence
from .basics import _inplace_function
from .core import cat, view_as_real as _view_as_real, view_as_complex as _view_as_complex

concat = alias(cat, "concat", method=False)


@op(method=False, out=True)
def concatenate(tensors: Sequence[Tensor], axis: int = 0, *, dim: int | None = None) -> Tensor:
    """``ember.cat`` under NumPy's name (``axis``; ``dim`` is accepted too).

    >>> import ember
    >>> ember.concatenate([ember.tensor([1]), ember.tensor([2])], axis=0)
    tensor([1, 2])
    """
    return cat(tensors, axis if dim is None else dim)


fill = op(_A.fill, method=False, out=True)
adjoint = op(_A.adjoint)
is_same_size = op(_A.is_same_size, method=_A.is_same_size_method)
resolve_neg = op(_A.resolve_neg)
is_neg = op(_A.is_neg)
is_inference = op(_A.is_inference)
is_distributed = op(_A.is_distributed)
get_device = op(_A.get_device)
split_with_sizes = op(_A.split_with_sizes)
unsafe_split = op(_A.unsafe_split)
unsafe_chunk = op(_A.unsafe_chunk)
unsafe_split_with_sizes = op(_A.unsafe_split_with_sizes)
as_strided_scatter = op(_A.as_strided_scatter, out=True)

view_copy = op(_A.view_copy, method=False, out=True)
permute_copy = op(_A.permute_copy, method=False, out=True)
transpose_copy = op(_A.transpose_copy, method=False, out=True)
t_copy = op(_A.t_copy, method=False, out=True)
squeeze_copy = op(_A.squeeze_copy, method=False, out=True)
unsqueeze_copy = op(_A.unsqueeze_copy, method=False, out=True)
expand_copy = op(_A.expand_copy, method=False, out=True)
select_copy = op(_A.select_copy, method=False, out=True)
slice_copy = op(_A.slice_copy, method=False, out=True)
diagonal_copy = op(_A.diagonal_copy, method=False, out=True)
detach_copy = op(_A.detach_copy, method=False, out=True)
alias_copy = op(_A.alias_copy, method=False, out=True)
as_strided_copy = op(_A.as_strided_copy, method=False, out=True)
unfold_copy = op(_A.unfold_copy, method=False, out=True)
split_copy = op(_A.split_copy, method=False)
split_with_sizes_copy = op(_A.split_with_sizes_copy, method=False)
unbind_copy = op(_A.unbind_copy, method=False)


@op(method=False, out=True)
def view_as_real_copy(input: Tensor) -> Tensor:
    """``ember.view_as_real(input)`` as a new tensor.

    >>> import ember
    >>> ember.view_as_real_copy(ember.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    return _A._copy(_view_as_real(input))


@op(method=False, out=True)
def view_as_complex_copy(input: Tensor) -> Tensor:
    """``ember.view_as_complex(input)`` as a new tensor.

    >>> import ember
    >>> ember.view_as_complex_copy(ember.tensor([[1., 2.]]))
    tensor([1.+2.j])
    """
    return _A._copy(_view_as_complex(input))


# ---- Tensor-only methods -----------------------------------------------------------------
_method(_X.apply_)
_method(_X.map_)
_method(_X.map2_)
_method(_X.resize)
_method(_X.resize_as)
_method(_X.dim_order)
_method(_A.hardshrink)
_method(_A.prelu)


@_method
def const_data_ptr(self: Tensor) -> int:
    """The address of the tensor's first element (``data_ptr``; ember has no read-only
    pointers to tell apart).

    >>> import ember
    >>> x = ember.ones(2)
    >>> x.const_data_ptr() == x.data_ptr()
    True
    """
    return self.data_ptr()


@_method
def record_stream(self: Tensor, stream: Any) -> None:
    """Mark a CUDA tensor's memory as used by ``stream``: nothing to do on ember, whose CUDA
    work is ordered on one stream. CPU tensors refuse it, as in PyTorch.

    >>> import ember
    >>> ember.ones(1).record_stream(object())
    Traceback (most recent call last):
    ...
    RuntimeError: unknown parameter type
    """
    if not (hasattr(stream, "synchronize") and hasattr(stream, "query")):
        raise RuntimeError("unknown parameter type")
    if self.device.type != "cuda":
        raise NotImplementedError(f"Could not run 'aten::record_stream' with arguments from "
                                  f"the '{self.device.type.upper()}' backend.")


# ---- functions PyTorch removed in 1.9 -----------------------------------------------------
def _removed(name, signature, method):
    def function(*args, **kwargs):
        raise _X.removed(name)
    function.__name__ = function.__qualname__ = name
    function.__signature__ = signature
    function.__doc__ = (f"Removed in PyTorch 1.9: raises RuntimeError naming the "
                        f"``ember.linalg`` function to use.\n\n    >>> import ember\n    >>> "
                        f"ember.{name}(ember.eye(2))\n    Traceback (most recent call last):\n"
                        f"    ...\n    RuntimeError: This function was deprecated since "
                        f"version 1.9 and is now removed...\n    ")
    return op(function, name=name, method=method)


def _sig(*params, returns="tuple[Tensor, Tensor]"):
    P = _inspect.Parameter
    return _inspect.Signature([P(name, kind, default=default, annotation=annotation)
                               for name, kind, default, annotation in params],
                              return_annotation=returns)


_POS, _KW = _inspect.Parameter.POSITIONAL_OR_KEYWORD, _inspect.Parameter.KEYWORD_ONLY
_NONE = _inspect.Parameter.empty
_INPUT = ("input", _POS, _NONE, "Tensor")
lstsq = _removed("lstsq", _sig(_INPUT, ("A", _POS, _NONE, "Tensor")), True)
solve = _removed("solve", _sig(_INPUT, ("A", _POS, _NONE, "Tensor")), True)
eig = _removed("eig", _sig(("self", _POS, _NONE, "Tensor"),
                           ("eigenvectors", _POS, False, "bool"),
                           ("e", _KW, None, "Any"), ("v", _KW, None, "Any")), True)
symeig = _removed("symeig", _sig(_INPUT, ("eigenvectors", _POS, False, "bool"),
                                 ("upper", _POS, True, "bool")), True)
matrix_rank = _removed("matrix_rank", _sig(_INPUT, ("tol", _POS, None, "Any"),
                                           ("symmetric", _POS, False, "bool"),
                                           returns="Tensor"), False)


# ---- top-level in-place forms: ember.erfc_(x) is x.erfc_() ----------------------------------
_INPLACE_FUNCTIONS = ("index_put_", "erfc_", "logit_")
for _name in _INPLACE_FUNCTIONS:
    _base = _DECLARED[_name[:-1]]
    globals()[_name] = op(_inplace_function(_name, _inspect.signature(
        _base.signature or _base.function)), name=_name, method=False)
del _name, _base

__all__ = ["concat", "concatenate", "fill", "adjoint", "is_same_size", "resolve_neg", "is_neg",
           "is_inference", "is_distributed", "get_device", "split_with_sizes", "unsafe_split",
           "unsafe_chunk", "unsafe_split_with_sizes", "as_strided_scatter", "view_copy",
           "permute_copy", "transpose_copy", "t_copy", "squeeze_copy", "unsqueeze_copy",
           "expand_copy", "select_copy", "slice_copy", "diagonal_copy", "detach_copy",
           "alias_copy", "as_strided_copy", "unfold_copy", "split_copy",
           "split_with_sizes_copy", "unbind_copy", "view_as_real_copy", "view_as_complex_copy",
           "lstsq", "solve", "eig", "symeig", "matrix_rank", *_INPLACE_FUNCTIONS]



# Tensor.conj_physical_ is a Tensor-only declaration (basics), so its function is a plain
# entry point, as basics' fill_ (ember/__init__ imports it by name)
def conj_physical_(input: Tensor) -> Tensor:
    """``input.conj_physical_()`` as a function.

    >>> import ember
    >>> ember.conj_physical_(ember.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    return input.conj_physical_()


conj_physical_ = _dispatching(conj_physical_, name="conj_physical_", module="ember")
conj_physical_._public_module = "ember"


# ---- plain names (ember/__init__ imports them): not ops ------------------------------------
#: ``x[:, ember.newaxis]`` adds a dimension, as NumPy's
newaxis = None


class AcceleratorError(RuntimeError):
    """An error an accelerator (a GPU) reported (``torch.AcceleratorError``)."""


AcceleratorError.__module__ = "ember"


def typename(obj: Any, /) -> str:
    """The type name of ``obj``: a tensor's legacy type (``'torch.FloatTensor'``), else the
    dotted name of its class (``'ember.nn.modules.linear.Linear'``; builtins bare).

    >>> import ember
    >>> ember.typename(ember.zeros(2, dtype=ember.int64)), ember.typename(1.5)
    ('torch.LongTensor', 'float')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = None
    if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__"):
        qualname = getattr(obj, "__qualname__", None)
    if not isinstance(qualname, str):
        qualname = type(obj).__qualname__
        module = type(obj).__module__
    if not isinstance(module, str) or module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"
