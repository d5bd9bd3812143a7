"""Dispatch handlers shared by the dispatch tests, written once for ember and torch
(``lib`` is either; its ``tree_map`` comes with it)."""


def logging_mode(lib, mode_base):
    """A mode that records each op's name and runs it."""
    class LoggingMode(mode_base):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))
    return LoggingMode


def logging_tensor(lib, tree_map, log):
    """The classic wrapper subclass: holds ``elem``, unwraps in ``__torch_dispatch__``
    and wraps the results again, appending each op's name to ``log``."""
    class LoggingTensor(lib.Tensor):
        @staticmethod
        def __new__(cls, elem, requires_grad=False):
            r = lib.Tensor._make_wrapper_subclass(
                cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
                device=elem.device, requires_grad=requires_grad)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e.elem if isinstance(e, LoggingTensor) else e

            def wrap(e):
                return LoggingTensor(e) if isinstance(e, lib.Tensor) else e
            log.append(str(func))
            out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
            return tree_map(wrap, out)
    return LoggingTensor
