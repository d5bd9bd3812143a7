"""Tensor-only extras: ``dim_order``, the Python-callable maps (``apply_``, ``map_``,
``map2_``: a Python call per element, on the host), the deprecated out-of-place
``resize``/``resize_as``, and the errors of the functions PyTorch removed in 1.9
(``solve``, ``lstsq``, ``eig``, ``symeig``, ``matrix_rank``), which point to ``linalg``.

>>> import ember
>>> ember.ones(2, 3).t().dim_order()
(1, 0)
"""
from __future__ import annotations

import numbers
import warnings

from .._tensor import Tensor
from .._typing import Any, Callable, Sequence
from ..backend import get_array_module, to_host
from ..backend.meta import is_meta


_NOT_UNIQUE = "The tensor does not have unique dim order."
_AMBIGUOUS = ("The tensor does not have unique dim order, or cannot map to exact one of the "
              "given memory formats.")


def dim_order(self: Tensor, *, ambiguity_check: bool | Sequence[Any] = False) -> tuple:
    """The dimensions from the outermost in memory to the innermost (``(0, 1)`` for a
    contiguous matrix, ``(1, 0)`` for its transpose). ``ambiguity_check=True`` raises where
    the order is not unique (equal or zero strides); with a list of memory formats, equal
    strides are allowed where exactly one of the formats describes the tensor.

    >>> import ember
    >>> ember.ones(2, 3).t().dim_order()
    (1, 0)
    """
    if not isinstance(ambiguity_check, (bool, list)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                        "formats.")
    shape, stride = tuple(self.shape), self.stride()
    if ambiguity_check is not False:
        if 0 in stride:
            raise RuntimeError(_NOT_UNIQUE)
        # equal strides leave the order open: then one given format must settle it
        if len(set(stride)) != len(stride) and (
                ambiguity_check is True
                or sum(1 for f in ambiguity_check if _is_in_format(self, f)) != 1):
            raise RuntimeError(_AMBIGUOUS)
    return _memory_order(shape, stride)


_FORMAT_ORDERS = {"contiguous_format": None, "channels_last": (4, (0, 2, 3, 1)),
                  "channels_last_3d": (5, (0, 2, 3, 4, 1))}


def _is_in_format(self, memory_format):
    """Whether ``self`` is laid out as ``memory_format`` says (size-1 dimensions' strides do
    not count; an empty tensor is in every format of its rank)."""
    name = str(memory_format).rpartition(".")[2]
    if name not in _FORMAT_ORDERS:
        return False
    shape, stride = tuple(self.shape), self.stride()
    rule = _FORMAT_ORDERS[name]
    if rule is None:
        order = tuple(range(len(shape)))
    elif rule[0] != len(shape):
        return False
    else:
        order = rule[1]
    if 0 in shape:
        return True
    expected = 1
    for i in reversed(order):
        if shape[i] != 1 and stride[i] != expected:
            return False
        expected *= shape[i]
    return True


def _memory_order(shape, stride):
    """An insertion sort of the dimensions by stride, innermost first, that leaves a
    dimension where its order against another is not told by the strides (a stride 0, or
    equal strides over equal sizes): those keep their logical order."""
    def order(a, b):  # > 0: b lies outside a in memory, so b goes first
        if stride[a] == 0 or stride[b] == 0:
            return 0
        if stride[a] != stride[b]:
            return 1 if stride[a] > stride[b] else -1
        return 1 if shape[a] > shape[b] else 0
    perm = list(reversed(range(len(shape))))
    for i in range(1, len(perm)):
        j = i
        for k in reversed(range(i)):
            c = order(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    return tuple(reversed(perm))


# ---- Python callables over elements (CPU only) -------------------------------------------
def _python_value(value, dt):
    """What an element is to the user's callable: a bool, int, float or complex."""
    if dt.is_complex:
        return complex(value)
    if dt.is_floating_point:
        return float(value)
    if dt.name == "bool":
        return bool(value)
    return int(value)


def _stored(result, dt):
    if dt.is_complex:
        if not isinstance(result, numbers.Complex):
            raise TypeError(f"must be real number, not {type(result).__name__}")
        return complex(result)
    if not isinstance(result, numbers.Real):
        raise TypeError(f"must be real number, not {type(result).__name__}")
    if dt.name == "bool":
        return bool(result)
    return result if dt.is_floating_point else int(result)


def _check_no_grad(name, *tensors):
    if any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def _map_in_place(name, self, others, fn):
    _check_no_grad(name, self, *others)
    d = self._data
    if is_meta(d):
        return self
    if any(t.device.type != "cpu" for t in (self,) + others):
        raise TypeError(f"{name} is only implemented on CPU tensors")
    if not callable(fn):
        raise TypeError(f"'{type(fn).__name__}' object is not callable")
    dt = self.dtype
    host = to_host(d).copy()
    operands = [to_host(o.expand_as(self)._data if o.shape != self.shape else o._data)
                for o in others]
    flat, ins = host.reshape(-1), [a.reshape(-1) for a in operands]
    for i in range(flat.size):
        args = [_python_value(flat[i], dt)] + [_python_value(a[i], dt) for a in ins]
        flat[i] = _stored(fn(*args), dt)
    d[...] = get_array_module(d).asarray(host)
    self._vc[0] += 1
    return self


def apply_(self: Tensor, callable: Callable) -> Tensor:
    """Replace each element ``v`` with ``callable(v)``, in logical order (CPU tensors only;
    slow: a Python call per element).

    >>> import ember
    >>> ember.tensor([1., 2.]).apply_(lambda v: v * 10)
    tensor([10., 20.])
    """
    return _map_in_place("apply_", self, (), callable)


def _expand_for(name, self, other):
    if other.dim() > self.dim():
        raise RuntimeError(f"expand({other.type()}{{{list(other.shape)}}}, size="
                           f"{list(self.shape)}): the number of sizes provided ({self.dim()}) "
                           f"must be greater or equal to the number of dimensions in the "
                           f"tensor ({other.dim()})")
    return other.expand_as(self)


def _same_type(name, self, other, arg):
    if other.dtype is not self.dtype or other.device != self.device:
        raise TypeError(f"{name}: expected {self.type()} for {arg} (got {other.type()})")


def map_(self: Tensor, tensor: Tensor, callable: Callable) -> Tensor:
    """Replace each element ``a`` with ``callable(a, b)``, ``b`` the matching element of
    ``tensor`` (broadcast to self's shape; same dtype; CPU tensors only).

    >>> import ember
    >>> ember.tensor([1., 2.]).map_(ember.tensor([3., 4.]), lambda a, b: a * b)
    tensor([3., 8.])
    """
    _check_no_grad("map_", self, tensor)
    _same_type("map_", self, tensor, "'other'")
    return _map_in_place("map_", self, (_expand_for("map_", self, tensor),), callable)


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable) -> Tensor:
    """Replace each element ``a`` with ``callable(a, b, c)``, ``b`` and ``c`` the matching
    elements of ``x`` and ``y`` (broadcast to self's shape; same dtype; CPU only).

    >>> import ember
    >>> ember.zeros(2).map2_(ember.ones(2), ember.tensor([1., 2.]), lambda a, b, c: b + c)
    tensor([2., 3.])
    """
    _check_no_grad("map2_", self, x, y)
    _same_type("map2_", self, x, "argument 'x'")
    _same_type("map2_", self, y, "argument 'y'")
    return _map_in_place("map2_", self, (_expand_for("map2_", self, x),
                                         _expand_for("map2_", self, y)), callable)


# ---- deprecated out-of-place resizes -------------------------------------------------------
def _resized(self, sizes):
    count = 1
    for s in sizes:
        count = count * s
    if count != self.numel():
        shown_sizes = "x".join(str(s) for s in sizes)
        raise RuntimeError(f"requested resize to {shown_sizes} ({count} elements in total), "
                           f"but the given tensor has a size of "
                           f"{'x'.join(str(s) for s in self.shape)} ({self.numel()} elements). "
                           f"autograd's resize can only change the shape of a given tensor, "
                           f"while preserving the number of elements. ")
    return self.contiguous().view(tuple(sizes))


def resize(self: Tensor, *sizes: int) -> Tensor:
    """``self`` with another shape of as many elements (deprecated in PyTorch, which warns;
    ``reshape`` is the current spelling).

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.arange(6).resize(3, 2).shape
    ember.Size([3, 2])
    """
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=3)
    return _resized(self, sizes)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """``self.resize(*tensor.shape)`` (deprecated in PyTorch, which warns).

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.arange(6).resize_as(ember.zeros(2, 3)).shape
    ember.Size([2, 3])
    """
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=3)
    return _resized(self, tuple(tensor.shape))


# ---- functions removed in PyTorch 1.9 ------------------------------------------------------
_REMOVED = "This function was deprecated since version 1.9 and is now removed."
_REMOVED_HINTS = {
    "lstsq": (
        " `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` "
        "has reversed arguments and does not return the QR decomposition in the returned tuple "
        "(although it returns other information about the problem).\n\nTo get the QR "
        "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in "
        "`torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
        "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field "
        "'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ "
        "= torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = "
        "torch.linalg.lstsq(A, B).solution"),
    "solve": (
        " `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` "
        "has its arguments reversed and does not return the LU factorization.\n\nTo get the LU "
        "factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
        "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = "
        "torch.linalg.solve(A, B)"),
    "eig": (
        " `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than "
        "real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced "
        "with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)"),
    "symeig": (
        " The default behavior has changed from using the upper triangular portion of the "
        "matrix by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, "
        "upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper "
        "else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced "
        "with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"),
    "matrix_rank": (
        "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
        "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."),
}


def removed(name: str) -> RuntimeError:
    """The error a function PyTorch removed in 1.9 raises (its text: the ``linalg`` form)."""
    return RuntimeError(_REMOVED + _REMOVED_HINTS[name])


__all__ = ["dim_order", "apply_", "map_", "map2_", "resize", "resize_as", "removed"]
