"""The declarations of ember's public ops: one per public name says what ``ember.<name>``,
``Tensor.<name>`` and the in-place ``Tensor.<name>_`` are.

>>> from ember._registry import DECLARED
>>> d = DECLARED["exp"]
>>> d.function.__name__, d.method.__qualname__, d.method._primitive.__name__, d.inplace
('exp', 'Tensor.exp', 'Exp', True)

Adding an op is its Primitive in ``_ops/`` plus one declaration in ``_functions.py``::

    exp = unary(E.Exp, "exp", inplace=True)     # generated ember.exp; x.exp: Exp.apply's copy

    @op(inplace=True)                          # a function that parses arguments
    def add(input: Tensor, other: Tensor | Number, *, alpha: Number = 1, ...) -> Tensor:

    subtract = alias(sub, "subtract", inplace=True)

Methods with no function (``x.to``, ``x.fill_``) are declared with ``method`` in
``_tensor_methods``, which binds every declaration onto Tensor; ``tools/gen_tensor_stub.py``
writes the Tensor stub (``.pyi``) from the same declarations, so annotate what you declare.
"""
from __future__ import annotations

import functools
import inspect
import sys
import warnings
from typing import TYPE_CHECKING, Callable

from ._tensor import Tensor
from ._torch_function import dispatching, is_entry
from .autograd import grad_mode
from .backend import get_array_module

if TYPE_CHECKING:
    from ._typing import Number


class Declaration:
    """One public name.

    ``function``: ``ember.<name>`` (None for a Tensor-only method). ``method``: what
    ``Tensor.<name>`` is (None: no method); for a one-op function it is a copy of the op's
    ``apply`` (``Primitive.entry``), so ``x.exp()`` is one Python call. ``signature``: the
    callable whose signature, first parameter dropped, is the method's. ``inplace``:
    whether ``x.<name>_`` exists (the method run on x and written into x's memory,
    ``Tensor._inplace``). ``impl``: the method's code without the ``__torch_function__``
    entry (what the in-place form runs).

    Functions and methods are public entry points (``_torch_function.dispatching``): each
    is reported to ``__torch_function__`` overrides as itself.
    """
    __slots__ = ("name", "function", "method", "signature", "inplace", "impl")

    def __init__(self, name, function, method, signature, inplace, impl=None):
        self.name, self.function, self.method = name, function, method
        self.signature, self.inplace, self.impl = signature, inplace, impl

    def __repr__(self):
        return f"<declaration of {self.name}>"


#: every declaration, by public name, in declaration order
DECLARED: dict[str, Declaration] = {}


_method_names = set()  # every Tensor attribute the declarations bind, in-place forms included

# Functions PyTorch lists in get_ignored_functions: these take no part in dispatch (Python
# helpers there), or only modes see them (its C++ functions).
_NOT_OVERRIDABLE = {"is_tensor", "broadcast_shapes", "is_storage"}
_SEEN_BY_MODES_ONLY = {"can_cast", "promote_types", "result_type"}


def _declare(name, function, method, signature, inplace):
    if name in DECLARED:
        raise ValueError(f"{name!r} is declared twice")
    if inplace and method is None:
        raise ValueError(f"{name!r}: an in-place form needs a method")
    bound = ([name] if method is not None else []) + ([name + "_"] if inplace else [])
    clash = _method_names.intersection(bound)
    if clash:
        raise ValueError(f"Tensor.{clash.pop()} is declared twice")
    _method_names.update(bound)
    if function is not None and not is_entry(function) and name not in _NOT_OVERRIDABLE:
        modes_only = name in _SEEN_BY_MODES_ONLY
        function = dispatching(function, name=name, modes_only=modes_only)
        function._public_module = "ember"
        function._tf_modes_only = modes_only
    impl = None
    if method is not None:
        impl = method_impl(method)
        method = method_entry(method, name)
    DECLARED[name] = Declaration(name, function, method, signature, inplace, impl)
    return DECLARED[name]


def method_impl(fn):
    """The code of a Tensor method entry (the op's ``apply`` for an op's copy)."""
    cls = getattr(fn, "_primitive", None)
    if cls is not None:
        return cls.apply
    return getattr(fn, "__ember_impl__", fn)


def method_entry(fn, name, *, operator=False):
    """``fn`` as the public ``Tensor.<name>``: an op's ``apply`` copied
    (``Primitive.entry``: still one call), anything else wrapped (``dispatching``)."""
    cls = getattr(fn, "_primitive", None)
    if cls is not None:
        return cls.entry(name, operator=operator)
    return dispatching(fn, name=name, qualname=f"Tensor.{name}", operator=operator)


def op(fn: Callable | None = None, *, name: str | None = None, method: bool | Callable = True,
       inplace: bool = False, out: bool = False):
    """Declare ``fn`` as ``ember.<name>`` (its own ``__name__`` unless given) and return it.

    ``method=True``: ``Tensor.<name>`` is ``fn`` itself (self as the first argument);
    a callable: that instead (a method whose arguments differ, as
    ``x.where(condition, other)``); False: no method. ``inplace``: also ``x.<name>_``.
    ``out=True``: the function takes PyTorch's ``out=`` (``with_out``; ``fn`` itself never
    sees it); the method does not, as in PyTorch.
    Usable as ``@op``, ``@op(...)`` and ``view = op(S.view)``.
    """
    def declare(fn):
        public = name or fn.__name__
        if "out" in inspect.signature(fn).parameters:
            raise ValueError(f"{public!r}: declare out= with op(out=True), not as a parameter")
        bound = fn if method is True else (method or None)  # methods take no out=, as in torch
        if out:
            fn = with_out(fn, public)
        return _declare(public, fn, bound, bound, inplace).function
    return declare if fn is None else declare(fn)


def alias(fn: Callable, name: str, *, function: bool = True, method: bool = True,
          inplace: bool = False):
    """Declare ``name`` as another name of the declared ``fn`` (``subtract`` for ``sub``);
    ``function=False`` makes it a method only (``x.swapaxes``). Returns ``fn``."""
    target = DECLARED[fn.__name__]
    _declare(name, fn if function else None, target.impl if method else None,
             target.signature, inplace)
    return fn


def method(fn: Callable | None = None, *, name: str | None = None, inplace: bool = False):
    """Declare ``fn(self, ...)`` as ``Tensor.<name>`` with no ``ember.<name>`` function."""
    def declare(fn):
        _declare(name or fn.__name__, None, fn, fn, inplace)
        return fn
    return declare if fn is None else declare(fn)


def unary(cls, name: str, *, inplace: bool = False, out: bool = True):
    """Declare ``ember.<name>(input)`` as ``cls.apply(input)``: the function is generated,
    the method is ``cls.apply`` itself. ``out=False``: the function takes no ``out=`` (those
    PyTorch gives none: ``relu``, ``isnan``...)."""
    apply = cls.apply

    if out:
        def function(input: Tensor, *, out: Tensor | None = None) -> Tensor:
            if out is None:
                return apply(input)
            return write_out(apply(input), out, name)
    else:
        def function(input: Tensor) -> Tensor:
            return apply(input)
    _name_generated(function, name)
    return _declare(name, function, apply, function, inplace).function


def binary(cls, name: str, *, method: bool = True, inplace: bool = False):
    """Declare ``ember.<name>(input, other)`` as ``cls.apply(input, other)``; the method, if
    any, is the generated function (``x.eq(other=y)`` takes a keyword, ``apply`` does not)."""
    apply = cls.apply

    def function(input: Tensor, other: Tensor | Number, *,
                 out: Tensor | None = None) -> Tensor:
        if out is None:
            return apply(input, other)
        return write_out(apply(input, other), out, name)
    _name_generated(function, name)
    return _declare(name, function, function if method else None, function, inplace).function


def _name_generated(function, name):
    function.__name__ = function.__qualname__ = name
    function.__module__ = sys._getframe(2).f_globals["__name__"]  # the declaring module


# ---- out= -----------------------------------------------------------------------------------
_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does "
            "not match the required output shape {}. This behavior is deprecated, and in a "
            "future PyTorch release outputs will not be resized unless they have zero elements. "
            "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
            "with t.resize_(0).")


def with_out(fn: Callable, name: str) -> Callable:
    """``fn`` taking PyTorch's keyword ``out=``: ``fn`` computes the result (without
    ``out``), ``write_out`` puts it into ``out``. The signature shown is ``fn``'s with
    ``out`` added."""
    function = functools.wraps(fn)(_out_wrapper(fn, name))
    function.__signature__ = _signature_with_out(fn)
    return function


def _out_wrapper(fn, name):
    """The wrapper of ``with_out``, generated with ``fn``'s own parameters: the functions
    taking ``out=`` (``add``, ``mul``...) are called on every step of a model, and a generic
    ``(*args, out=None, **kwargs)`` forwarder costs about as much again as the call itself."""
    params = list(inspect.signature(fn).parameters.values())
    if not fn.__name__.isidentifier() or any(p.name in ("out", "_fn", "_write_out", "_name")
                                             or p.name.startswith("_default_") for p in params):
        def function(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            return write_out(fn(*args, **kwargs), out, name)
        return function
    namespace = {"_fn": fn, "_write_out": write_out, "_name": name}
    declared, passed = [], []
    keyword_only = False
    for i, p in enumerate(params):
        text = p.name
        if p.default is not p.empty:
            namespace[f"_default_{i}"] = p.default
            text += f"=_default_{i}"
        if p.kind is p.VAR_POSITIONAL:
            text, keyword_only = "*" + p.name, True
        elif p.kind is p.VAR_KEYWORD:
            text = "**" + p.name
        elif p.kind is p.KEYWORD_ONLY and not keyword_only:
            declared.append("*")
            keyword_only = True
        if p.kind is p.VAR_KEYWORD:
            declared.append("*, out=None" if not keyword_only else "out=None")
            keyword_only = True
        declared.append(text)
        passed.append(text.split("=")[0] if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD,
                                                      p.POSITIONAL_ONLY)
                      else f"{p.name}={p.name}" if keyword_only else p.name)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params)
                                            or params[i + 1].kind is not p.POSITIONAL_ONLY):
            declared.append("/")
    if "out=None" not in declared:
        declared.append("out=None" if keyword_only else "*, out=None")
    call = f"_fn({', '.join(passed)})"
    source = (f"def {fn.__name__}({', '.join(declared)}):\n"
              f"    if out is None:\n"
              f"        return {call}\n"
              f"    return _write_out({call}, out, _name)\n")
    exec(source, namespace)  # noqa: S102 -- generated from fn's own signature only
    return namespace[fn.__name__]


def _signature_with_out(fn):
    """``fn``'s signature with a keyword-only ``out=None`` (before any ``**kwargs``)."""
    signature = inspect.signature(fn)
    extra = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation="Tensor | None")
    params = list(signature.parameters.values())
    where = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    return signature.replace(parameters=params[:where] + [extra] + params[where:])


def factory_with_out(fn: Callable, name: str) -> Callable:
    """A tensor factory (``zeros``, ``arange``, ``rand``...) taking ``out=``: the result
    takes out's dtype unless ``dtype=`` names it, which must then be out's."""
    @functools.wraps(fn)
    def function(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        _check_out_tensor(out, name)
        dt = kwargs.get("dtype")
        if dt is None:
            kwargs["dtype"] = out.dtype
        elif dt is not out.dtype:
            raise RuntimeError(f"dtype {dt.scalar_name} does not match dtype of out parameter "
                               f"({out.dtype.scalar_name})")
        return write_out(fn(*args, **kwargs), out, "aten::" + name)
    function.__signature__ = _signature_with_out(fn)
    return function


def _check_out_tensor(out, name):
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")


def write_out(result: Tensor | tuple, out: Tensor | tuple, name: str) -> Tensor | tuple:
    """Write ``result`` (a tensor, or a tuple of them for ``out=(values, indices)``) into
    ``out`` as PyTorch does, and return ``out`` (a tuple as ``result``'s type): out=
    records no gradient, so it is refused while one is wanted; a result cast to out's
    dtype only within its kind (float into int is refused); an ``out`` of another shape
    re-allocated, with PyTorch's warning when it had elements."""
    deprecated = _OUT_DEPRECATED.get(name)
    if deprecated is not None:
        warnings.warn(deprecated, UserWarning, stacklevel=4)
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors")
        for r, o in zip(result, out):
            _check_out_tensor(o, name)
        _check_no_grad(result, out, name)
        for r, o in zip(result, out):
            _write_one(r, o)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    _check_out_tensor(out, name)
    _check_no_grad((result,), (out,), name)
    rule = _OUT_DTYPE_RULES.get(name)
    if tuple(out.shape) != tuple(result.shape):
        rule = _OUT_DTYPE_RULES_RESIZED.get(name, rule)
    if rule is not None:
        problem = rule(result.dtype, out.dtype)
        if problem:
            raise problem if isinstance(problem, Exception) else RuntimeError(problem)
    _write_one(result, out, cast_any=name in _OUT_ANY_DTYPE,
               warn=name not in _OUT_RESIZED_SILENTLY)
    return out


# ---- out= dtypes PyTorch checks per op (others: a cast within the result's kind) ----------
def _same_dtype(template):
    """out must have the result's dtype exactly."""
    def rule(result, out):
        if out is not result:
            return template.format(out=out.scalar_name, result=result.scalar_name)
    return rule


def _index_dtype(result, out):
    if out is not result:
        return (f"Expected out tensor to have dtype {result.cpp_name}, but got {out.cpp_name} "
                f"instead")


def _nonzero_dtype(result, out):
    if out is not result:  # sic: PyTorch's message has no space before the dtype
        return f"nonzero: Expected out tensor to have scalar type Long but got scalar type" \
               f"{out.scalar_name}"


def _truth_dtype(name):
    def rule(result, out):
        if out.name == "uint8":  # PyTorch then reduces the input cast to uint8 (0.5 -> 0)
            return NotImplementedError(f"ember's {name} takes no uint8 out=: it gives "
                                       f"bool results only")
        if out.name != "bool":
            return f"{name} only supports bool tensor for result, got: {out.scalar_name}"
    return rule


def _bool_dtype(name):
    def rule(result, out):
        if out.name != "bool":
            return f"{name} does not support non-boolean outputs."
    return rule


def _searchsorted_dtype(result, out):
    if out is not result:
        return ("torch.searchsorted(): output tensor's dtype is wrong, it can only be "
                "Int(int32) or Long(int64) depending on whether out_int32 flag is True, but we "
                f"got output tensor's dtype {out.scalar_name} and out_int32 flag is "
                f"{result.name == 'int32'}")


_FOUND = "Found dtype {out} but expected {result}"
_OUT_DTYPE_RULES = {
    **{name: _same_dtype(_FOUND)
       for name in ("abs", "neg", "floor", "ceil", "trunc", "round", "sign", "sgn")},
    "nan_to_num": _same_dtype("nan_to_num: dtype of out: {out} should be same as input: "
                              "{result}"),
    **{name: _same_dtype("Expected the dtype for input and out to match, but got {result} for "
                         "input's dtype and {out} for out's dtype.") for name in ("amax", "amin")},
    "argmax": _index_dtype, "argmin": _index_dtype, "nonzero": _nonzero_dtype,
    "nonzero_static": lambda result, out: out is not result and (  # sic: no space, as nonzero
        f"nonzero_static: Expected out tensor to have scalar type Long but got scalar type"
        f"{out.scalar_name}"),
    "all": _truth_dtype("all"), "any": _truth_dtype("any"),
    "isposinf": _bool_dtype("isposinf"), "isneginf": _bool_dtype("isneginf"),
    "searchsorted": _searchsorted_dtype,
    # the matmul family: out must have the result's dtype (addbmm adds into out as "self");
    # matmul's wording would follow the kernel it lands in (left to the cast rule)
    **{name: _index_dtype for name in ("addmm", "baddbmm", "addmv", "mm", "bmm")},
    **{name: _same_dtype("result dtype {out} does not match input dtype {result}")
       for name in ("dot", "vdot")},
    "mv": _same_dtype("addmv input tensors must have the same dtype, but got {out}, {result}, "
                      "and {result}"),  # (an out of the result's shape: else below)
    "addbmm": _same_dtype("self and mat2 must have the same dtype, but got {out} and {result}"),
    **{name: _same_dtype("tensordot: Expected the output tensor to have dtype {result}, but got "
                         "an output tensor with dtype {out}") for name in ("tensordot", "inner")},
    "chain_matmul": lambda result, out: out is not result and (
        f"multi_dot(): expected out tensor to have dtype {result.cpp_name} but got "
        f"{out.cpp_name}"),
    "float_power": lambda result, out: out is not result and (
        f"the output given to float_power has dtype {out.scalar_name} but the operation's "
        f"result requires dtype {result.scalar_name}"),
    "signbit": _bool_dtype("signbit"),
    "frac": _same_dtype(_FOUND),
    "heaviside": lambda result, out: out is not result and (
        "heaviside is not yet implemented for tensors with different dtypes."),
    "ldexp": lambda result, out: out.category < result.category and (
        f"ldexp can't be cast to the desired output type {out.scalar_name}"),
}
#: ops whose result PyTorch casts into an out of any dtype (bernoulli's draws are 0 and 1)
_OUT_ANY_DTYPE = {"bernoulli"}
#: the rules where out has another shape than the result (PyTorch checks it while resizing)
_OUT_DTYPE_RULES_RESIZED = {"mv": _index_dtype}
#: ops whose out PyTorch resizes with no warning (addbmm: ``resize_as_`` of its input)
_OUT_RESIZED_SILENTLY = {"addbmm"}
#: ops whose out= form PyTorch deprecates, with its warning (``ger`` warns with out= only)
_OUT_DEPRECATED = {"ger": "torch.ger is deprecated and will be removed in a future PyTorch "
                          "release. Use torch.outer instead."}


def _check_no_grad(results, outs, name):
    if grad_mode.is_grad_enabled() and (any(r.requires_grad for r in results)
                                        or any(o.requires_grad for o in outs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires "
                           f"grad.")


def _write_one(result, out, cast_any=False, warn=True):
    rd, od = result.dtype, out.dtype
    if rd is not od and rd.category > od.category and not cast_any:
        raise RuntimeError(f"result type {rd.scalar_name} can't be cast to the desired output "
                           f"type {od.scalar_name}")
    data = result._data
    if tuple(out.shape) != tuple(data.shape):
        if out.numel() != 0 and warn:
            warnings.warn(_RESIZED.format(list(out.shape), list(data.shape)), UserWarning,
                          stacklevel=5)  # the caller of the public function
        out._data = get_array_module(data).empty(data.shape, od.np)
    out._data[...] = data
    out._vc[0] += 1


__all__ = ["DECLARED", "Declaration", "op", "alias", "method", "unary", "binary", "with_out",
           "factory_with_out", "write_out"]
