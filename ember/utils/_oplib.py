"""Loading shared libraries whose ``TORCH_LIBRARY`` blocks register operators.

A block of ``<ember/library.h>`` is a static object: it runs while the dynamic loader opens the
library, inside ``dlopen``, where a C++ exception cannot reach Python. So a block that fails
(a bad schema, a namespace defined twice) calls :func:`registration_failed`, and whoever is
loading the library (``load_library``, ``cpp_extension.load``) raises the failures as one
RuntimeError once ``dlopen`` has returned. A library loaded some other way (a plain ``import``
of a module built ahead of time) gets a RuntimeWarning per failure instead.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import threading
import warnings

from ..library import _dispatch

#: the real paths of the libraries load_library has loaded (``torch.ops.loaded_libraries``)
loaded_libraries: set[str] = set()

_collecting = threading.local()  # .failures: a list while this thread loads a library


def registration_failed(where: str, what: str) -> None:
    """Called from C++ when a ``TORCH_LIBRARY`` block failed while its library was loading.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     registration_failed("TORCH_LIBRARY(demo) at demo.cpp:3", "RuntimeError: bad schema")
    >>> str(caught[0].message)
    'TORCH_LIBRARY(demo) at demo.cpp:3 failed: RuntimeError: bad schema'
    """
    failures = getattr(_collecting, "failures", None)
    if failures is not None:
        failures.append(f"{where}: {what}")
    else:
        warnings.warn(f"{where} failed: {what}", RuntimeWarning, stacklevel=2)


def call_from(file: str, line: int, fn, *args):
    """``fn(*args)``, called from a frame whose code reads as ``file:line``.

    ``<ember/library.h>`` calls ember.library through this, so that the sites ember.library
    records and names in its errors are the C++ blocks' lines.

    >>> import inspect
    >>> call_from("ops.cpp", 12, lambda: inspect.stack()[1][1:3])
    ('ops.cpp', 12)
    """
    code = compile("\n" * (line - 1) + "fn(*args)", file, "eval")
    return eval(code, {"fn": fn, "args": args})


def cpp_kernel(ns: str, op_name: str, kernel):
    """The Python kernel ember.library runs for the C++ function ``kernel`` of ``op_name``.

    ember.library calls a kernel as PyTorch calls a Python one: trailing arguments that hold
    their defaults left out, keyword-only ones as keywords. A C++ function takes every
    argument of the schema, in order (PyTorch's dispatcher hands it the full stack), so this
    fills in the defaults and passes everything positionally. ``op_name`` is ``"name"``,
    ``"name.overload"`` or ``"ns::name"``; its schema is looked up when the kernel first runs
    (an IMPL block may load before the TORCH_LIBRARY block that defines it).

    >>> import ember
    >>> lib = ember.library.Library("oplibdoc", "DEF")
    >>> lib.define("shift(Tensor x, float k=1., *, bool neg=False) -> Tensor")
    'shift'
    >>> full = cpp_kernel("oplibdoc", "shift", lambda x, k, neg: (k, neg))
    >>> full(ember.ones(1)), full(ember.ones(1), 2.0, neg=True)
    ((1.0, False), (2.0, True))
    """
    qualname, _, overload = op_name.partition(".")
    if "::" not in qualname:
        qualname = f"{ns}::{qualname}"
    found = []

    @functools.wraps(kernel)
    def call(*args, **kwargs):
        if not found:
            entry = _dispatch.entry(qualname, overload)
            if entry is None or entry.schema is None:
                raise RuntimeError(f"{qualname}: the C++ kernel runs, but no schema defines "
                                   "the operator")
            found.append(entry)
        arguments = found[0].schema.arguments
        if len(args) == len(arguments):
            return kernel(*args)
        values = list(args)
        for arg in arguments[len(args):]:
            if arg.name in kwargs:
                values.append(kwargs[arg.name])
            elif arg.has_default:
                values.append(arg.default_value)
            else:
                raise TypeError(f"{qualname}() is missing value for argument '{arg.name}'")
        return kernel(*values)
    return call


@contextlib.contextmanager
def raising_registration_failures(path: str):
    """Collect the failures of the blocks run inside the ``with``; raise them after it.

    >>> with raising_registration_failures("libdemo.so"):
    ...     registration_failed("TORCH_LIBRARY(demo) at demo.cpp:3", "RuntimeError: bad schema")
    Traceback (most recent call last):
    ...
    RuntimeError: registering the operators of libdemo.so failed:
      TORCH_LIBRARY(demo) at demo.cpp:3: RuntimeError: bad schema
    """
    outer = getattr(_collecting, "failures", None)
    failures = _collecting.failures = []
    try:
        yield
    finally:
        _collecting.failures = outer
    if failures:
        # one failure per line at two spaces; a multi-line one (a schema error's caret)
        # continues at four
        raise RuntimeError(f"registering the operators of {path} failed:" + "".join(
            "\n  " + f.rstrip("\n").replace("\n", "\n    ") for f in failures))


def load_library(path) -> None:
    """Load a shared library into the process, running its operator registrations.

    As ``torch.ops.load_library``: the library's ``TORCH_LIBRARY`` / ``TORCH_LIBRARY_IMPL``
    blocks register their operators with ``ember.library`` (then callable as
    ``ember.ops.<namespace>.<name>``) and its real path is added to ``loaded_libraries``.
    Raises OSError when the library cannot be loaded and RuntimeError when one of its blocks
    failed (the library stays loaded; the blocks that succeeded stay registered).

    >>> load_library("/nonexistent/libops.so")
    Traceback (most recent call last):
    ...
    OSError: Could not load this library: /nonexistent/libops.so
    """
    path = os.path.realpath(os.path.expanduser(os.fspath(path)))
    with raising_registration_failures(path):
        try:
            ctypes.CDLL(path)
        except OSError as e:
            raise OSError(f"Could not load this library: {path}") from e
        loaded_libraries.add(path)
