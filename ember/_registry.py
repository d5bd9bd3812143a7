"""The declarations of ember's public ops: one per public name says what ``ember.<name>``,
``Tensor.<name>`` and the in-place ``Tensor.<name>_`` are.

>>> from ember._registry import DECLARED
>>> d = DECLARED["exp"]
>>> d.function.__name__, d.method.__qualname__, d.inplace
('exp', 'Exp.apply', True)

Adding an op is its Primitive in ``_ops/`` plus one declaration in ``_functions.py``::

    exp = unary(E.Exp, "exp", inplace=True)     # generated ember.exp; x.exp is Exp.apply

    @op(inplace=True)                          # a function that parses arguments
    def add(input: Tensor, other: Tensor | Number, *, alpha: Number = 1, ...) -> Tensor:

    subtract = alias(sub, "subtract", inplace=True)

Methods with no function (``x.to``, ``x.fill_``) are declared with ``method`` in
``_tensor_methods``, which binds every declaration onto Tensor; ``tools/gen_tensor_stub.py``
writes the Tensor stub (``.pyi``) from the same declarations, so annotate what you declare.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ._tensor import Tensor
    from ._typing import Number


class Declaration:
    """One public name.

    ``function``: ``ember.<name>`` (None for a Tensor-only method). ``method``: what
    ``Tensor.<name>`` is (None: no method); for a one-op function it is the op's ``apply``,
    so ``x.exp()`` is one Python call. ``signature``: the callable whose signature, first
    parameter dropped, is the method's. ``inplace``: whether ``x.<name>_`` exists (the
    method run on x and written into x's memory, ``Tensor._inplace``).
    """
    __slots__ = ("name", "function", "method", "signature", "inplace")

    def __init__(self, name, function, method, signature, inplace):
        self.name, self.function, self.method = name, function, method
        self.signature, self.inplace = signature, inplace

    def __repr__(self):
        return f"<declaration of {self.name}>"


#: every declaration, by public name, in declaration order
DECLARED: dict[str, Declaration] = {}


_method_names = set()  # every Tensor attribute the declarations bind, in-place forms included


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
    DECLARED[name] = Declaration(name, function, method, signature, inplace)


def op(fn: Callable | None = None, *, name: str | None = None, method: bool | Callable = True,
       inplace: bool = False):
    """Declare ``fn`` as ``ember.<name>`` (its own ``__name__`` unless given) and return it.

    ``method=True``: ``Tensor.<name>`` is ``fn`` itself (self as the first argument);
    a callable: that instead (a method whose arguments differ, as
    ``x.where(condition, other)``); False: no method. ``inplace``: also ``x.<name>_``.
    Usable as ``@op``, ``@op(...)`` and ``view = op(S.view)``.
    """
    def declare(fn):
        bound = fn if method is True else (method or None)
        _declare(name or fn.__name__, fn, bound, bound, inplace)
        return fn
    return declare if fn is None else declare(fn)


def alias(fn: Callable, name: str, *, function: bool = True, method: bool = True,
          inplace: bool = False):
    """Declare ``name`` as another name of the declared ``fn`` (``subtract`` for ``sub``);
    ``function=False`` makes it a method only (``x.swapaxes``). Returns ``fn``."""
    target = DECLARED[fn.__name__]
    _declare(name, fn if function else None, target.method if method else None,
             target.signature, inplace)
    return fn


def method(fn: Callable | None = None, *, name: str | None = None, inplace: bool = False):
    """Declare ``fn(self, ...)`` as ``Tensor.<name>`` with no ``ember.<name>`` function."""
    def declare(fn):
        _declare(name or fn.__name__, None, fn, fn, inplace)
        return fn
    return declare if fn is None else declare(fn)


def unary(cls, name: str, *, inplace: bool = False):
    """Declare ``ember.<name>(input)`` as ``cls.apply(input)``: the function is generated,
    the method is ``cls.apply`` itself."""
    apply = cls.apply

    def function(input: Tensor) -> Tensor:
        return apply(input)
    _name_generated(function, name)
    _declare(name, function, apply, function, inplace)
    return function


def binary(cls, name: str, *, method: bool = True, inplace: bool = False):
    """Declare ``ember.<name>(input, other)`` as ``cls.apply(input, other)``; the method, if
    any, is the generated function (``x.eq(other=y)`` takes a keyword, ``apply`` does not)."""
    apply = cls.apply

    def function(input: Tensor, other: Tensor | Number) -> Tensor:
        return apply(input, other)
    _name_generated(function, name)
    _declare(name, function, function if method else None, function, inplace)
    return function


def _name_generated(function, name):
    function.__name__ = function.__qualname__ = name
    function.__module__ = sys._getframe(2).f_globals["__name__"]  # the declaring module


__all__ = ["DECLARED", "Declaration", "op", "alias", "method", "unary", "binary"]
