"""``assert_close``: PyTorch's closeness check of tensors, NumPy arrays, numbers and nested
containers of them, with PyTorch's messages.

The values are compared on host copies with NumPy, in the arithmetic PyTorch's ``isclose``
uses (the tensors' dtype; half types through float32; integers and bools in the default
float dtype), so the same pairs pass and fail, and the reported differences are the same
numbers.

>>> import ember
>>> from ember.testing import assert_close
>>> assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-6]))
"""
from __future__ import annotations

import cmath
import collections.abc
import math
import warnings

import numpy as np

from .._creation import as_tensor, tensor
from .._tensor import Tensor
from ..backend import dtypes

__all__ = ["assert_close", "assert_allclose"]

#: dtype name -> (rtol, atol) that assert_close uses when neither is given; others: (0, 0)
_PRECISIONS = {"float16": (0.001, 1e-5), "bfloat16": (0.016, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5),
               "complex128": (1e-7, 1e-7)}
#: the dtypes whose tolerances Python numbers get
_NUMBER_DTYPES = {int: dtypes.int64, float: dtypes.float64, complex: dtypes.complex128}
#: half types: PyTorch computes their scalar arithmetic in float32 and rounds the result
_REDUCED = {"float16", "bfloat16"}


class _Mismatch(Exception):
    """A failed check: the public exception's type and message, and the item's path in the
    containers; raised as that exception once the inputs have been walked."""

    def __init__(self, kind, message, path=()):
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path

    def error(self, msg=None):
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(str([p]) for p in self.path)
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """A check that does not take these inputs (the next one is tried)."""


def _tolerances(dtype_list, rtol, atol, path, table=_PRECISIONS):
    if (rtol is None) != (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or "
                        f"omitted, but got no {'rtol' if rtol is None else 'atol'}.", path)
    if rtol is not None:
        return rtol, atol
    pairs = [table.get(d.name, (0.0, 0.0)) for d in dtype_list]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _diff_line(kind, diff, index, tol, equality):
    line = (f"{kind.title()} difference: {diff}" if index is None
            else f"Greatest {kind} difference: {diff} at index {index}")
    return line if equality else f"{line} (up to {tol} allowed)"


def _message(head, extra, abs_diff, rel_diff, rtol, atol, abs_at=None, rel_at=None):
    equality = rtol == 0 and atol == 0
    return "\n".join([f"{head} are not {'equal' if equality else 'close'}!", "", extra,
                      _diff_line("absolute", abs_diff, abs_at, atol, equality),
                      _diff_line("relative", rel_diff, rel_at, rtol, equality)])


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, rel_diff,
                    rtol, atol)


class _NoneCheck:
    def __init__(self, actual, expected, path, options):
        if actual is not None and expected is not None:
            raise _Unsupported
        self.actual, self.expected, self.path = actual, expected, path

    def compare(self):
        if not (self.actual is None and self.expected is None):
            raise _Mismatch(AssertionError,
                            f"None mismatch: {self.actual} is not {self.expected}", self.path)


class _BoolCheck:
    def __init__(self, actual, expected, path, options):
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        self.actual, self.expected, self.path = bool(actual), bool(expected), path

    def compare(self):
        if self.actual is not self.expected:
            raise _Mismatch(AssertionError,
                            f"Booleans mismatch: {self.actual} is not {self.expected}", self.path)


class _NumberCheck:
    name = "NumberPair"

    def __init__(self, actual, expected, path, options):
        kinds = (int, float, complex, np.number)
        if not all(isinstance(x, kinds) for x in (actual, expected)):
            raise _Unsupported
        actual, expected = (x.item() if isinstance(x, np.number) else x
                            for x in (actual, expected))
        if type(actual) not in _NUMBER_DTYPES or type(expected) not in _NUMBER_DTYPES:
            # PyTorch's lookup fails the same way on bool against a number
            where = "".join(str([p]) for p in path)
            raise RuntimeError(f"Originating a {self.name}() at item {where} with\n\n"
                               f"{type(actual).__name__}(): {actual}\n\nand\n\n"
                               f"{type(expected).__name__}(): {expected}\n\n"
                               "resulted in the unexpected exception above.")
        self.actual, self.expected, self.path = actual, expected, path
        self.rtol, self.atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)],
                                           options["rtol"], options["atol"], path)
        self.equal_nan, self.check_dtype = options["equal_nan"], options["check_dtype"]

    def compare(self):
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != "
                            f"{type(expected)}.", self.path)
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(expected):
            return
        raise _Mismatch(AssertionError,
                        _scalar_message(actual, expected, self.rtol, self.atol), self.path)


def _as_tensor(value):
    if isinstance(value, Tensor):
        return value
    try:
        return as_tensor(value)
    except Exception:  # noqa: BLE001 - whatever can't be a tensor is not a tensor-like
        raise _Unsupported from None


def _host(t):
    """``t``'s values as a NumPy array (a copy from the device where it lives); float8 ones as
    ml_dtypes arrays (their ``numpy()`` refuses, as PyTorch's)."""
    t = t.detach().cpu()
    return t._data if t.dtype in dtypes.FLOAT8 else t.numpy()


class _TensorCheck:
    def __init__(self, actual, expected, path, options):
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _Unsupported
        if not options["allow_subclasses"] and type(actual) is not type(expected):
            raise _Unsupported
        self.actual, self.expected = _as_tensor(actual), _as_tensor(expected)
        self.path, self.options = path, options
        self.rtol, self.atol = _tolerances([self.actual.dtype, self.expected.dtype],
                                           options["rtol"], options["atol"], path)

    def _fail_attribute(self, name, actual, expected):
        raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: "
                        f"{actual} != {expected}.", self.path)

    def _compare_attributes(self, a, e):
        opts = self.options
        if a.shape != e.shape:
            self._fail_attribute("shape", a.shape, e.shape)
        if a.layout != e.layout:
            if opts["check_layout"]:
                self._fail_attribute("layout", a.layout, e.layout)
        elif opts["check_stride"] and a.stride() != e.stride():
            self._fail_attribute("stride()", a.stride(), e.stride())
        if opts["check_device"] and a.device != e.device:
            self._fail_attribute("device", a.device, e.device)
        if opts["check_dtype"] and a.dtype != e.dtype:
            self._fail_attribute("dtype", a.dtype, e.dtype)

    def compare(self):
        a, e = self.actual, self.expected
        self._compare_attributes(a, e)
        if a.device.type == "meta" or e.device.type == "meta":
            return
        for name, tol in (("rtol", self.rtol), ("atol", self.atol)):
            if tol < 0:  # PyTorch's isclose refuses it, and assert_close reports that
                raise RuntimeError(f"Comparing\n\n{self!r}\n\nresulted in the unexpected "
                                   "exception above.") from RuntimeError(
                    f"{name} must be greater than or equal to zero, but got {tol}")
        dtype = a.dtype if a.dtype == e.dtype else dtypes.promote_types(a.dtype, e.dtype)
        ha, he = (_host(t).astype(dtype.np, copy=False) for t in (a, e))
        if dtype in dtypes.FLOAT8:
            text = _float8_message(ha, he, self.rtol, self.atol)
            if text is not None:
                raise _Mismatch(AssertionError, text, self.path)
            return
        matches = _isclose(ha, he, dtype, self.rtol, self.atol, self.options["equal_nan"])
        if matches.all():
            return
        if ha.ndim == 0:
            text = _scalar_message(ha.item(), he.item(), self.rtol, self.atol)
        else:
            text = _tensor_message(ha, he, matches, dtype, self.rtol, self.atol)
        raise _Mismatch(AssertionError, text, self.path)

    def __repr__(self):
        fields = [("id", self.path), ("actual", self.actual), ("expected", self.expected),
                  ("rtol", self.rtol), ("atol", self.atol)]
        fields += [(k, self.options[k]) for k in ("equal_nan", "check_device", "check_dtype",
                                                  "check_layout", "check_stride")]
        return "\n".join(["TensorLikePair(", *(f"    {k}={v!s}," for k, v in fields), ")"])


def _float_dtype_for(dtype):
    """The dtype PyTorch computes closeness in: integers and bools in the default one."""
    if dtype.is_floating_point or dtype.is_complex:
        return dtype
    return dtypes.get_default_dtype()


_hypot = np.frompyfunc(math.hypot, 2, 1)


def _abs(x):
    """``|x|`` as PyTorch computes it: complex magnitudes by a correctly rounded hypot
    (complex64's in float64, then rounded), which NumPy's complex ``abs`` is not."""
    if x.dtype == np.complex64:
        return np.hypot(x.real.astype(np.float64), x.imag.astype(np.float64)).astype(np.float32)
    if x.dtype == np.complex128:
        return np.asarray(_hypot(x.real, x.imag), dtype=np.float64)
    return np.abs(x)


def _isclose(a, e, dtype, rtol, atol, equal_nan):
    """PyTorch's ``isclose`` on host arrays of ``dtype``, in its arithmetic."""
    close = a == e
    if equal_nan and (dtype.is_floating_point or dtype.is_complex):
        close |= np.isnan(a) & np.isnan(e)
    if rtol == 0 and atol == 0:
        return close
    work = _float_dtype_for(dtype)
    a, e = a.astype(work.np, copy=False), e.astype(work.np, copy=False)
    with np.errstate(all="ignore"):
        if work.name in _REDUCED:  # float32 arithmetic, each result rounded to the half type
            f32 = np.float32
            scaled = np.abs((f32(rtol) * e.astype(f32)).astype(work.np))
            allowed = (f32(atol) + scaled.astype(f32)).astype(work.np)
        else:  # a Python float takes the array's dtype (as PyTorch's scalar operand does)
            allowed = float(atol) + _abs(float(rtol) * e)
        error = _abs(a - e)
        close |= np.isfinite(error) & (error <= allowed)
    return close


def _unravel(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _float8_message(a, e, rtol, atol):
    """PyTorch's check of float8 tensors: exact equality of the values (NaN never equal), no
    tolerance; the message of a failure, or None."""
    if rtol or atol:
        return (f"Rtol={rtol} and atol={atol} are not supported for bitwise comparison of low "
                f"dimensional floats. Please use rtol=0.0 and atol=0.0.")
    matches = a == e
    if matches.all():
        return None
    if a.ndim == 0:
        return _scalar_message(float(a), float(e), 0.0, 0.0)
    total = matches.size
    bad = total - int(np.count_nonzero(matches))
    first = _unravel(int(np.argmin(matches.ravel())), matches.shape)
    return (f"Tensor-likes are not 'equal'!\n\nMismatched elements: {bad} / {total} "
            f"({bad / total:.1%})\nThe first mismatched element is at index {first}.")


def _tensor_message(a, e, matches, dtype, rtol, atol):
    total = matches.size
    bad = total - int(np.count_nonzero(matches))
    extra = f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"
    a, e, same = a.ravel(), e.ravel(), matches.ravel()
    with np.errstate(all="ignore"):
        if dtype.is_floating_point or dtype.is_complex:
            abs_diff = _abs(a - e)
            denominator = _abs(e)
        else:  # int64 differences (wrapping as PyTorch's do), ratios in the default dtype
            a, e = a.astype(np.int64), e.astype(np.int64)
            abs_diff = np.abs(a - e)
            real = dtypes.get_default_dtype().np
            denominator = np.abs(e).astype(real)
        abs_diff[same] = 0
        rel_diff = abs_diff.astype(denominator.dtype) / denominator
        rel_diff[same] = 0
    at_abs, at_rel = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))  # NaN: its first
    return _message("Tensor-likes", extra, abs_diff[at_abs].item(), rel_diff[at_rel].item(),
                    rtol, atol, _unravel(at_abs, matches.shape), _unravel(at_rel, matches.shape))


_CHECKS = (_NoneCheck, _BoolCheck, _NumberCheck, _TensorCheck)


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _originate(actual, expected, path, options):
    """The checks of the leaves of ``actual`` and ``expected``, walked together."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, "The length of the sequences mismatch: "
                            f"{len(actual)} != {len(expected)}", path)
        return [check for i in range(len(actual))
                for check in _originate(actual[i], expected[i], (*path, i), options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        keys, other = set(actual.keys()), set(expected.keys())
        if keys != other:
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(other - keys)}\n"
                            f"Additional keys in the actual mapping: {sorted(keys - other)}",
                            path)
        try:  # a fixed order, so the first failure reported is always the same one
            keys = sorted(keys)
        except Exception:  # noqa: BLE001 - keys that don't sort keep the set's order
            pass
        return [check for key in keys
                for check in _originate(actual[key], expected[key], (*path, key), options)]
    for kind in _CHECKS:
        try:
            return [kind(actual, expected, path, options)]
        except _Unsupported:
            continue
    raise _Mismatch(TypeError, "No comparison pair was able to handle inputs of type "
                    f"{type(actual)} and {type(expected)}.", path)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Asserts that ``actual`` and ``expected`` are close: ``|actual - expected| <= atol +
    rtol * |expected|`` elementwise (and equal where infinite), with default tolerances by
    dtype (float32: ``rtol=1.3e-6, atol=1e-5``; integers and bools: exact). Tensors, NumPy
    arrays, Python numbers and Sequences/Mappings of them are compared item by item; shape,
    device and dtype must match (``check_device``, ``check_dtype``). ``msg``, a string or a
    function of the generated message, replaces it. Raises AssertionError with PyTorch's
    message.

    >>> import ember
    >>> from ember.testing import assert_close
    >>> assert_close(ember.tensor([1.0, 2.0, 3.0]), ember.tensor([1.0, 2.0, 3.0]))
    >>> assert_close([1, {"a": 2.0}], (1, {"a": 2.0}))
    >>> assert_close(ember.tensor([1.0, 2.5, 3.0]), ember.tensor([1.0, 2.0, 3.0]))
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 3 (33.3%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.25 at index (1,) (up to 1.3e-06 allowed)
    """
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    try:
        checks = _originate(actual, expected, (), options)
    except _Mismatch as failure:  # before any comparison: msg does not replace these
        raise failure.error() from None
    first = None
    for check in checks:  # all of them, as PyTorch does, then the first failure
        try:
            check.compare()
        except _Mismatch as failure:
            first = first or failure
    if first is not None:
        raise first.error(msg) from None


#: assert_allclose's own defaults (others: exact)
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated (a FutureWarning, as in PyTorch): ``assert_close`` with NaNs equal, dtypes
    not checked, and looser default tolerances (float32: ``rtol=1e-4, atol=1e-5``); inputs
    that are not tensors are made tensors (``expected`` of ``actual``'s dtype).

    >>> import warnings, ember
    >>> from ember.testing import assert_allclose
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     assert_allclose(ember.tensor([1.0, float("nan")]), [1.00001, float("nan")])
    """
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances([actual.dtype, expected.dtype], None, None, (),
                                 table=_ALLCLOSE_PRECISIONS)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)

