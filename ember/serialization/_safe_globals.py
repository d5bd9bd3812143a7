"""The user's allowlist of globals a torch checkpoint may name (PyTorch's ``safe_globals``).

A torch checkpoint names each class or function it needs as ``module.qualname``; the
weights-only reader resolves only its own built-in set plus what is listed here. Listing a
class lets the reader create it (``cls.__new__``), call it (``cls(*args)``, as an Enum
member is pickled) and set its state (``__setstate__`` or its ``__dict__``/slots), exactly
what PyTorch's ``weights_only`` unpickler allows for an allowlisted global. Each entry is a
callable, or ``(callable, "full.path")`` when the checkpoint names it differently.
"""

__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

# modules whose globals are never resolved, even when listed (as in PyTorch)
BLOCKED_MODULES = ("sys", "os", "posix", "nt")

_marked = set()


def add_safe_globals(safe_globals):
    """Mark globals (classes or functions, or ``(obj, "module.qualname")`` pairs) as safe for
    ``ember.load`` of torch checkpoints: instances of these classes may be rebuilt.

    >>> import argparse, ember
    >>> ember.serialization.add_safe_globals([argparse.Namespace])
    >>> argparse.Namespace in ember.serialization.get_safe_globals()
    True
    >>> ember.serialization.clear_safe_globals()
    """
    global _marked
    _marked = _marked.union(set(safe_globals))


def get_safe_globals():
    """The globals marked safe by :func:`add_safe_globals` (a list, in no particular order).

    >>> import ember
    >>> ember.serialization.get_safe_globals()
    []
    """
    return list(_marked)


def clear_safe_globals():
    """Forget every global marked safe by :func:`add_safe_globals`.

    >>> import collections, ember
    >>> ember.serialization.add_safe_globals([collections.namedtuple])
    >>> ember.serialization.clear_safe_globals()
    >>> ember.serialization.get_safe_globals()
    []
    """
    global _marked
    _marked = set()


class safe_globals:
    """Context manager marking ``safe_globals`` as safe for the loads inside it (they are
    unmarked on exit).

    >>> import argparse, ember
    >>> with ember.serialization.safe_globals([argparse.Namespace]):
    ...     argparse.Namespace in ember.serialization.get_safe_globals()
    True
    >>> ember.serialization.get_safe_globals()
    []
    """

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, exc_type, exc, tb):
        global _marked
        _marked = _marked - set(self.safe_globals)


def user_allowed_globals():
    """``{"module.qualname": obj}`` of the marked globals; checks the pairs as PyTorch does."""
    allowed = {}
    for entry in _marked:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), "
                                 f"but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(entry[1])}")
            obj, path = entry
            allowed[path] = obj
        else:
            allowed[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return allowed
