"""A package shipping a C++ extension compiled ahead of time (see setup.py)."""
from ._C import axpby  # noqa: F401

__all__ = ["axpby"]
