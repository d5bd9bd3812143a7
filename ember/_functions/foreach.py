"""``ember._foreach_*``: PyTorch's list-at-a-time ops (``_foreach_add(tensors, 1)``,
``_foreach_mul_(params, 0.9)``, ``_foreach_norm(grads)``, ...) over lists of tensors.

Each applies the ordinary op to every tensor of the list (so autograd, type promotion,
broadcasting and the errors of the single op come with it); what is added here is PyTorch's
overload resolution -- a Number, a list of Numbers, one 0-d Tensor or a list of Tensors as
the second operand -- and its list-length checks. Out-of-place forms return a tuple, in-place
forms the list they were given.

>>> import ember
>>> ember._foreach_add([ember.ones(2), ember.zeros(1)], 1)
(tensor([2., 2.]), tensor([1.]))
"""
from __future__ import annotations

import numbers

from .._registry import op
from .._tensor import Tensor
from ..linalg._norms import vector_norm
from .core import pow as _pow

_SCALAR = "Number"
_SCALARS = "tuple of Scalars"
_TENSOR = "Tensor"
_TENSORS = "tuple of Tensors"


def _kind(value):
    """Which overload argument ``value`` can be: Number, Tensor, list of Scalars/Tensors."""
    if isinstance(value, Tensor):
        return _TENSOR
    if isinstance(value, numbers.Number):
        return _SCALAR
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, Tensor) for v in value):
            return _TENSORS
        if all(isinstance(v, numbers.Number) for v in value):
            return _SCALARS
    return None


def _type_error(name, args, forms):
    got = ", ".join(type(a).__name__ for a in args)
    lines = "\n".join(f" * (tuple of Tensors self, {form})" for form in forms)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{lines}\n")


def _check_self(name, tensors):
    if _kind(tensors) != _TENSORS:
        raise TypeError(f"{name}(): argument 'self' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")


def _check_lengths(tensors, other, kind):
    if kind == _TENSORS and len(other) != len(tensors):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                           f"{len(tensors)} and {len(other)}")
    if kind == _SCALARS and len(other) != len(tensors):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")


def _per_tensor(other, kind, n):
    """``other`` spread over the list: one value per tensor."""
    if kind in (_TENSORS, _SCALARS):
        return list(other)
    if kind == _TENSOR and other.dim() != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                           f"dimensions and {other.numel()} elements.")
    return [other] * n


def _binary(name, op, kinds, alpha_kinds=()):
    """The out-of-place and in-place forms of a binary op: ``op(x, y, **kw)`` per element,
    ``op`` a method name (``"add"``: ``x.add(y)``, ``x.add_(y)``)."""
    forms = [f"{k} {'other' if k in (_TENSOR, _TENSORS) else 'scalar'}"
             + (", *, Number alpha = 1" if k in alpha_kinds else "") for k in kinds]

    def make(inplace):
        public = f"_foreach_{name}" + ("_" if inplace else "")
        method = op + ("_" if inplace else "")

        def apply(self, other, **kwargs):
            _check_self(public, self)
            kind = _kind(other)
            if kind not in kinds or set(kwargs) - {"alpha"} or (
                    "alpha" in kwargs and kind not in alpha_kinds):
                raise _type_error(public, (self, other), forms)
            _check_lengths(self, other, kind)
            results = [getattr(x, method)(y, **kwargs)
                       for x, y in zip(self, _per_tensor(other, kind, len(self)))]
            return self if inplace else tuple(results)
        apply.__name__ = apply.__qualname__ = public
        apply.__doc__ = f"``x.{method}(other)`` for each tensor ``x`` of the list."
        return apply
    return make(False), make(True)


_ALL = (_SCALAR, _SCALARS, _TENSOR, _TENSORS)
_foreach_add, _foreach_add_ = _binary("add", "add", _ALL, (_TENSOR, _TENSORS))
_foreach_sub, _foreach_sub_ = _binary("sub", "sub", (_SCALAR, _SCALARS, _TENSORS), (_TENSORS,))
_foreach_mul, _foreach_mul_ = _binary("mul", "mul", _ALL)
_foreach_div, _foreach_div_ = _binary("div", "div", _ALL)
_foreach_clamp_min, _foreach_clamp_min_ = _binary("clamp_min", "clamp_min",
                                                  (_SCALAR, _SCALARS, _TENSORS))
_foreach_clamp_max, _foreach_clamp_max_ = _binary("clamp_max", "clamp_max",
                                                  (_SCALAR, _SCALARS, _TENSORS))
# with a Number PyTorch's maximum/minimum clamp (the tensor op takes tensors only)
_foreach_maximum, _foreach_maximum_ = _binary("maximum", "clamp_min",
                                              (_SCALAR, _SCALARS, _TENSORS))
_foreach_minimum, _foreach_minimum_ = _binary("minimum", "clamp_max",
                                              (_SCALAR, _SCALARS, _TENSORS))
_foreach_pow_list, _foreach_pow_ = _binary("pow", "pow", (_SCALAR, _SCALARS, _TENSORS))


def _foreach_pow(self, exponent):
    """``x ** exponent`` for each tensor ``x`` of the list, or ``self ** e`` for each
    exponent tensor ``e`` when ``self`` is a Number.

    >>> import ember
    >>> ember._foreach_pow(2.0, [ember.tensor([1., 3.])])
    (tensor([2., 8.]),)
    """
    if isinstance(self, numbers.Number) and _kind(exponent) == _TENSORS:
        if not exponent:
            raise RuntimeError("Tensor list must have at least one tensor.")
        return tuple(_pow(self, e) for e in exponent)
    return _foreach_pow_list(self, exponent)


def _ternary(name, method):
    """``addcmul``/``addcdiv``: ``x.<method>(t1, t2, value=v)`` per element, ``v`` one Number,
    a list of Numbers or a 1-D tensor of them."""
    forms = ["tuple of Tensors tensor1, tuple of Tensors tensor2, tuple of Scalars scalars",
             "tuple of Tensors tensor1, tuple of Tensors tensor2, Tensor scalars",
             "tuple of Tensors tensor1, tuple of Tensors tensor2, Number value = 1"]

    def make(inplace):
        public = f"_foreach_{name}" + ("_" if inplace else "")

        def apply(self, tensor1, tensor2, scalars=None, *, value=None):
            _check_self(public, self)
            if _kind(tensor1) != _TENSORS or _kind(tensor2) != _TENSORS:
                raise _type_error(public, (self, tensor1, tensor2), forms)
            _check_lengths(self, tensor1, _TENSORS)
            _check_lengths(self, tensor2, _TENSORS)
            given = value if scalars is None else scalars
            if given is None:
                given = 1
            kind = _kind(given)
            if kind == _TENSOR:
                if given.dim() != 1:
                    raise RuntimeError("Expected packed scalar Tensor to be of dimension 1. "
                                       f"Got {given.dim()} instead.")
                if given.shape[0] != len(self):
                    raise RuntimeError("Expected length of scalars to match input of length "
                                       f"{len(self)} but got {given.shape[0]} instead.")
                values = given.tolist()
            elif kind == _SCALARS:
                _check_lengths(self, given, kind)
                values = list(given)
            elif kind == _SCALAR:
                values = [given] * len(self)
            else:
                raise _type_error(public, (self, tensor1, tensor2, given), forms)
            op = method + ("_" if inplace else "")
            results = [getattr(x, op)(a, b, value=v)
                       for x, a, b, v in zip(self, tensor1, tensor2, values)]
            return self if inplace else tuple(results)
        apply.__name__ = apply.__qualname__ = public
        apply.__doc__ = f"``x.{method}(t1, t2, value=v)`` for each tensor ``x`` of the list."
        return apply
    return make(False), make(True)


_foreach_addcmul, _foreach_addcmul_ = _ternary("addcmul", "addcmul")
_foreach_addcdiv, _foreach_addcdiv_ = _ternary("addcdiv", "addcdiv")


def _lerp(inplace):
    public = "_foreach_lerp" + ("_" if inplace else "")
    forms = ["tuple of Tensors tensors1, Number weight",
             "tuple of Tensors tensors1, tuple of Scalars weight",
             "tuple of Tensors tensors1, tuple of Tensors weights"]

    def apply(self, tensors1, weight):
        _check_self(public, self)
        kind = _kind(weight)
        if _kind(tensors1) != _TENSORS or kind not in (_SCALAR, _SCALARS, _TENSORS):
            raise _type_error(public, (self, tensors1, weight), forms)
        _check_lengths(self, tensors1, _TENSORS)
        _check_lengths(self, weight, kind)
        op = "lerp_" if inplace else "lerp"
        results = [getattr(x, op)(y, w) for x, y, w in
                   zip(self, tensors1, _per_tensor(weight, kind, len(self)))]
        return self if inplace else tuple(results)
    apply.__name__ = apply.__qualname__ = public
    apply.__doc__ = "``x.lerp(y, weight)`` for each pair of the two lists."
    return apply


_foreach_lerp, _foreach_lerp_ = _lerp(False), _lerp(True)

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")


def _unary(name, inplace):
    public = f"_foreach_{name}" + ("_" if inplace else "")
    method = name + ("_" if inplace else "")

    def apply(self):
        _check_self(public, self)
        results = [getattr(x, method)() for x in self]
        return self if inplace else tuple(results)
    apply.__name__ = apply.__qualname__ = public
    apply.__doc__ = f"``x.{method}()`` for each tensor ``x`` of the list."
    return apply


for _name in _UNARY:
    globals()[f"_foreach_{_name}"] = _unary(_name, False)
    globals()[f"_foreach_{_name}_"] = _unary(_name, True)


def _foreach_clone(self):
    """A clone of each tensor of the list."""
    _check_self("_foreach_clone", self)
    return tuple(x.clone() for x in self)


def _foreach_zero_(self):
    """Fills each tensor of the list with zeros."""
    _check_self("_foreach_zero_", self)
    for x in self:
        x.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """Copies each tensor of ``src`` into the tensor at its place in ``self``."""
    _check_self("_foreach_copy_", self)
    if _kind(src) != _TENSORS:
        raise TypeError(f"_foreach_copy_(): argument 'src' (position 2) must be tuple of "
                        f"Tensors, not {type(src).__name__}")
    _check_lengths(self, src, _TENSORS)
    for x, y in zip(self, src):
        x.copy_(y, non_blocking=non_blocking)
    return self


def _foreach_norm(self, ord=2, dtype=None):
    """``linalg.vector_norm(x, ord, dtype=dtype)`` of each tensor of the list.

    >>> import ember
    >>> ember._foreach_norm([ember.tensor([3., 4.])])
    (tensor(5.),)
    """
    _check_self("_foreach_norm", self)
    return tuple(vector_norm(x, ord, dtype=dtype) for x in self)


def _foreach_powsum(self, ord=2, dtype=None):
    """``sum(|x| ** ord)`` of each tensor of the list (``ord=0``: the count of nonzeros).

    >>> import ember
    >>> ember._foreach_powsum([ember.tensor([1., -2.])])
    (tensor(5.),)
    """
    _check_self("_foreach_powsum", self)
    out = []
    for x in self:
        if dtype is not None:
            x = x.to(dtype)
        out.append((x != 0).sum().to(x.dtype) if ord == 0 else x.abs().pow(ord).sum())
    return tuple(out)


def _foreach_max(self):
    """The largest element of each tensor of the list."""
    _check_self("_foreach_max", self)
    for x in self:
        if x.numel() == 0:
            raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; "
                               "max over zero elements is undefined.")
    return tuple(x.max() for x in self)


def _foreach_mm(self, other):
    """``x @ y`` for each pair of matrices of the two lists."""
    _check_self("_foreach_mm", self)
    _check_lengths(self, other, _TENSORS)
    return tuple(x.mm(y) for x, y in zip(self, other))


__all__ = sorted(name for name in globals() if name.startswith("_foreach_")
                 and name != "_foreach_pow_list")
for _name in __all__:  # declared as the other public functions (entry points, no methods)
    globals()[_name] = op(globals()[_name], name=_name, method=False)
del _name
