"""``ember._check`` and its siblings: PyTorch's checks for Python code (fake implementations of
custom operators use them), raising PyTorch's exception classes with its texts.

>>> import ember
>>> ember._check(2 > 1)
>>> ember._check_value(False, lambda: "c must be positive")
Traceback (most recent call last):
...
ValueError: c must be positive
"""
from __future__ import annotations

from typing import Callable, Optional

from ._tensor import Tensor

_DEFAULT = ("Expected cond to be True, but got False. (Could this error message be improved? "
            "If so, please report an enhancement request to PyTorch.)")


def _check_with(error_type: type, cond: bool, message: Optional[Callable[[], str]]) -> None:
    """Raise ``error_type(message())`` unless ``cond`` is True (a Python bool).

    >>> _check_with(IndexError, False, lambda: "index 3 is out of bounds")
    Traceback (most recent call last):
    ...
    IndexError: index 3 is out of bounds
    """
    if not (isinstance(error_type, type) and issubclass(error_type, Exception)
            and not issubclass(error_type, Warning)):
        raise AssertionError(f"error_type must be a subclass of Exception but not Warning, "
                             f"got {error_type}")
    if isinstance(cond, Tensor):
        raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, use "
                        "torch._check_tensor_all() to assert that all elements are true.")
    if not isinstance(cond, bool):
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if message is None:
        raise error_type(_DEFAULT)
    if not callable(message):
        raise TypeError("message must be a callable")
    raise error_type(str(message()))


def _check(cond: bool, message: Optional[Callable[[], str]] = None) -> None:
    """Raise RuntimeError unless ``cond`` is True; ``message`` is a callable giving the text.

    >>> _check(False)
    Traceback (most recent call last):
    ...
    RuntimeError: Expected cond to be True, but got False. (Could this error message be \
improved? If so, please report an enhancement request to PyTorch.)
    """
    _check_with(RuntimeError, cond, message)


def _check_value(cond: bool, message: Optional[Callable[[], str]] = None) -> None:
    """``_check`` raising ValueError.

    >>> _check_value(True)
    """
    _check_with(ValueError, cond, message)


def _check_type(cond: bool, message: Optional[Callable[[], str]] = None) -> None:
    """``_check`` raising TypeError.

    >>> _check_type(True)
    """
    _check_with(TypeError, cond, message)


def _check_index(cond: bool, message: Optional[Callable[[], str]] = None) -> None:
    """``_check`` raising IndexError.

    >>> _check_index(True)
    """
    _check_with(IndexError, cond, message)


def _check_not_implemented(cond: bool, message: Optional[Callable[[], str]] = None) -> None:
    """``_check`` raising NotImplementedError.

    >>> _check_not_implemented(True)
    """
    _check_with(NotImplementedError, cond, message)
