"""Names that ember's annotations use besides ``Tensor`` and the builtins, in one place so
that the generated Tensor stub (``tools/gen_tensor_stub.py``) can import each of them.

Annotated modules use ``from __future__ import annotations``: annotations stay strings and
cost nothing when an op runs.
"""
from typing import Any, Callable, Iterator, Sequence, Union  # noqa: F401

from .backend.dtypes import dtype  # noqa: F401

#: a Python scalar where PyTorch takes one (``x + 1``, ``clamp(x, min=0.5)``)
Number = Union[int, float, bool]

__all__ = ["Any", "Callable", "Iterator", "Sequence", "Number", "dtype"]
