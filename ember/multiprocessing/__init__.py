"""``ember.multiprocessing``: Python's ``multiprocessing`` plus PyTorch's extras
(``spawn``, ``start_processes``, sharing strategies).

Everything of ``multiprocessing`` is here under its own name (``Process``, ``Queue``,
``get_context``, ...). ember cannot place tensor storage in shared memory: a tensor sent
through a queue or pipe, or passed to a child process, is pickled by value, so the child
gets a copy and changes it makes in place are not seen by the parent (PyTorch shares CPU
tensors' memory instead). The sharing strategy is recorded and reported, nothing more.

>>> import ember.multiprocessing as mp
>>> mp.get_sharing_strategy()
'file_descriptor'
>>> sorted(mp.get_all_sharing_strategies())
['file_descriptor', 'file_system']
"""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

from .spawn import (spawn, start_processes, ProcessContext, ProcessException,  # noqa: F401
                    ProcessRaisedException, ProcessExitedException, SpawnContext)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException", "SpawnContext"]
__all__ += multiprocessing.__all__  # type: ignore[attr-defined]

if sys.platform == "darwin" or sys.platform == "win32":
    _strategies = {"file_system"}
    _strategy = "file_system"
else:
    _strategies = {"file_descriptor", "file_system"}
    _strategy = "file_descriptor"


def set_sharing_strategy(new_strategy):
    """Choose how tensors would be shared between processes ('file_descriptor' or
    'file_system'). ember pickles tensors by value, so this changes no behaviour.

    >>> import ember.multiprocessing as mp
    >>> mp.set_sharing_strategy("file_system"); mp.get_sharing_strategy()
    'file_system'
    >>> mp.set_sharing_strategy("file_descriptor")
    """
    global _strategy
    if new_strategy not in _strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of "
                             f"{_strategies}")
    _strategy = new_strategy


def get_sharing_strategy():
    """The sharing strategy last set (default 'file_descriptor' on Linux)."""
    return _strategy


def get_all_sharing_strategies():
    """The set of sharing strategies this platform supports."""
    return set(_strategies)
