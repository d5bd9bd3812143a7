"""The seam below autograd where ``__torch_dispatch__`` sees every built-in op.

PyTorch hands each ATen call to the active ``TorchDispatchMode`` (the innermost one
first) or to the ``__torch_dispatch__`` of a Tensor subclass among its arguments.
ember's ops are its Primitives (``ember._ops``), so those are what a mode or a
subclass sees, each named by an ``ember.ops.aten`` overload.

This module keeps the state the op path reads: ``active[0]`` is true while a mode
is pushed or once a Tensor subclass defining ``__torch_dispatch__`` exists (every
op pays one test of it otherwise), the mode stack, and the table from a Primitive
class to its overload, which ``ember.ops.aten`` fills in. The dispatching itself
is in ``ember._ops.primitive`` (it records the autograd node above the handler).
"""
import threading
import weakref

from .._tensor import Tensor
from ..backend import contiguous_strides, default_array_module
from ..backend.dtypes import get_default_dtype, _BY_NUMPY
from ..device import device as _device

#: True while a dispatch mode is active (in any thread) or a dispatch subclass exists.
active = [False]


class _ThreadState(threading.local):
    """Per thread, as in PyTorch: the modes pushed (``TorchDispatchMode.__enter__``),
    innermost last, and the dispatched calls now in a handler (``ember._ops.primitive``)."""

    def __init__(self):
        self.modes = []
        self.pending = []


_thread = _ThreadState()
_pushed = [0]  # modes pushed in all threads together
# The dispatch subclasses alive, by weak reference: when the last one is collected, the
# op path is back to its one test.
_subclass_refs = set()


def mode_stack():
    """This thread's dispatch modes, innermost last (the list itself)."""
    return _thread.modes


def pending_calls():
    """This thread's dispatched calls now in a handler (the list itself)."""
    return _thread.pending

#: Primitive class -> ``route(args) -> (overload, args the handler sees)``, filled in by
#: ``ember.ops.aten``; ``fallback_route[0](cls)`` makes one for a Primitive it lacks.
routes = {}
fallback_route = [None]

#: The ops the engine runs under dispatch where it otherwise works on arrays, as
#: PyTorch's engine runs them: the implicit ``ones_like`` gradient of ``backward()`` and
#: the ``detach`` of a leaf's first gradient (set by ``ember._ops.primitive``).
ones_like = [None]
detach = [None]


def _refresh():
    active[0] = _pushed[0] > 0 or bool(_subclass_refs)


def _subclass_collected(ref):
    with _lock:
        _subclass_refs.discard(ref)
        _refresh()


def push_mode(mode):
    """Make ``mode`` this thread's innermost dispatch mode."""
    with _lock:
        _thread.modes.append(mode)
        _pushed[0] += 1
        _refresh()


def pop_mode():
    """Remove this thread's innermost dispatch mode and return it."""
    modes = _thread.modes
    if not modes:
        raise RuntimeError("trying to pop from empty mode stack")
    with _lock:
        mode = modes.pop()
        _pushed[0] -= 1
        _refresh()
    return mode


_lock = threading.Lock()


def route_of(cls):
    """The route of a Primitive class: its overload and the arguments a handler sees."""
    route = routes.get(cls)
    if route is None:
        route = routes[cls] = fallback_route[0](cls)
    return route


def refuse_wrappers(fn, values):
    """Raise for a function that reads its inputs' arrays outside an op (sort, unique,
    pooling's indices, ...) when one of ``values`` (one level into lists and tuples) is a
    ``_make_wrapper_subclass`` tensor: its array is a placeholder, not its values."""
    for v in values:
        items = v if type(v) in (list, tuple) else (v,)
        for t in items:
            if isinstance(t, Tensor) and t._wrapper_strides is not None:
                raise NotImplementedError(
                    f"ember: {getattr(fn, '__name__', fn)} computes on its inputs' arrays "
                    f"outside the dispatched ops, so it does not take a wrapper subclass "
                    f"({type(t).__name__})")


def _disabled_torch_dispatch(cls, func, types, args=(), kwargs=None):
    """Plain tensors take no part in dispatch: run the op as it is."""
    return func(*args, **(kwargs or {}))


def is_dispatch_subclass(cls):
    """Whether ``cls`` (a Tensor subclass) defines its own ``__torch_dispatch__``."""
    fn = getattr(cls, "__torch_dispatch__", None)
    return fn is not None and getattr(fn, "__func__", fn) is not _disabled_torch_dispatch


# another layer (_torch_function.py) may install its own hook too: each calls the one before
_previous_init_subclass = Tensor.__dict__.get("__init_subclass__")


def _note_subclass(cls, **kwargs):
    """Tensor.__init_subclass__: a class with ``__torch_dispatch__`` turns dispatch on."""
    if _previous_init_subclass is not None:
        _previous_init_subclass.__func__(cls, **kwargs)
    else:
        super(Tensor, cls).__init_subclass__(**kwargs)
    if cls.__init__ is Tensor.__init__ and cls.__new__ is not object.__new__:
        cls.__init__ = _init_after_new
    if not is_dispatch_subclass(cls):
        return
    for name, member in _WRAPPER_MEMBERS.items():
        if getattr(cls, name) is getattr(Tensor, name):  # the subclass's own ones stay
            setattr(cls, name, member)
    with _lock:
        _subclass_refs.add(weakref.ref(cls, _subclass_collected))
        _refresh()


# A wrapper's array is a placeholder: what reads values goes through dispatch or refuses.

def _wrapper_detach(self):
    """``detach`` of a wrapper: an op its ``__torch_dispatch__`` handles (aten.detach)."""
    if self._wrapper_strides is None:
        return Tensor.detach(self)
    return detach[0](self)


def _wrapper_refuses(name, message, error=RuntimeError):
    def member(self, *args, **kwargs):
        if self._wrapper_strides is None:
            return getattr(Tensor, name)(self, *args, **kwargs)
        raise error(message.format(cls=type(self).__name__))
    member.__name__ = name
    member.__doc__ = f"``{name}`` refuses a wrapper subclass: its values are not its array."
    return member


def _wrapper_repr(self, *args, **kwargs):
    if self._wrapper_strides is None:
        return Tensor.__repr__(self, *args, **kwargs)
    return (f"{type(self).__name__}(size={tuple(self._data.shape)}, "
            f"dtype={_BY_NUMPY[self._data.dtype]})")


_WRAPPER_MEMBERS = {
    "detach": _wrapper_detach,
    "__repr__": _wrapper_repr,
    "numpy": _wrapper_refuses("numpy", ".numpy() is not supported for tensor subclasses."),
    "tolist": _wrapper_refuses("tolist", ".tolist() is not supported for tensor subclasses, "
                                         "got {cls}"),
    "item": _wrapper_refuses("item", "ember: .item() of a wrapper subclass ({cls}) is not "
                                     "dispatched; read it from the tensor it wraps",
                             NotImplementedError),
    "__array__": _wrapper_refuses("__array__", ".numpy() is not supported for tensor "
                                               "subclasses."),
    "data": property(lambda self: _wrapper_detach(self) if self._wrapper_strides is not None
                     else Tensor.data.fget(self), Tensor.data.fset,
                     doc="A detached alias; for a wrapper, its handler's aten.detach."),
}


def _init_after_new(self, *args, **kwargs):
    """__init__ of a subclass with its own __new__: a wrapper its __new__ made is not
    passed through Tensor's legacy constructor (which would read the arguments as sizes),
    as PyTorch's Tensor.__init__ does nothing."""
    if self._wrapper_strides is None:
        Tensor.__init__(self, *args, **kwargs)


def make_wrapper_subclass(cls, size, strides=None, storage_offset=None, memory_format=None,
                          dtype=None, layout=None, device=None, pin_memory=False,
                          requires_grad=False, dispatch_sizes_strides_policy=None,
                          dispatch_device=False, dispatch_layout=False,
                          _extra_dispatch_keys=None, storage_size=None):
    """``Tensor._make_wrapper_subclass``: an instance of ``cls`` with the given metadata
    and no storage of its own, for subclasses whose ``__torch_dispatch__`` computes on
    tensors they hold.

    Its array is a read-only placeholder (zeros broadcast to ``size``: no memory), so
    shape, dtype and strides read as given; what the values are is the subclass's
    business.

    >>> import ember
    >>> class Meta(ember.Tensor):
    ...     @staticmethod
    ...     def __new__(cls, size):
    ...         return ember.Tensor._make_wrapper_subclass(cls, size, dtype=ember.float64)
    >>> m = Meta((2, 3))
    >>> m.shape, m.dtype, m.stride()
    (ember.Size([2, 3]), ember.float64, (3, 1))
    """
    unsupported = {"storage_offset": (storage_offset, None, 0),
                   "memory_format": (memory_format, None),
                   "pin_memory": (pin_memory, False),
                   "dispatch_sizes_strides_policy": (dispatch_sizes_strides_policy, None),
                   "dispatch_device": (dispatch_device, False),
                   "dispatch_layout": (dispatch_layout, False),
                   "_extra_dispatch_keys": (_extra_dispatch_keys, None),
                   "storage_size": (storage_size, None)}
    for name, (value, *defaults) in unsupported.items():
        if not any(value is d or (d is not None and value == d) for d in defaults):
            raise NotImplementedError(f"_make_wrapper_subclass: ember does not support "
                                      f"{name}={value!r}")
    if layout is not None and str(layout) not in ("strided", "torch.strided", "ember.strided"):
        raise NotImplementedError(f"_make_wrapper_subclass: ember supports the strided "
                                  f"layout only, not {layout}")
    if device is not None and _device(device).type != "cpu":
        raise NotImplementedError(f"_make_wrapper_subclass: ember tensors live on the cpu, "
                                  f"not {device}")
    size = tuple(int(s) for s in size)
    if strides is None:
        strides = contiguous_strides(size)
    else:
        strides = tuple(int(s) for s in strides)
        if len(strides) != len(size):
            raise RuntimeError(f"_make_wrapper_subclass: {len(size)} sizes but {len(strides)} "
                               f"strides")
    dt = get_default_dtype() if dtype is None else dtype
    xp = default_array_module()
    placeholder = xp.broadcast_to(xp.zeros((), dt.np), size)
    t = Tensor._make.__func__(cls, placeholder)
    t._wrapper_strides = strides
    if requires_grad:
        t.requires_grad_(True)
    return t


# Tensor sits below this module: the members dispatch needs are attached here.
Tensor.__torch_dispatch__ = classmethod(_disabled_torch_dispatch)
Tensor.__init_subclass__ = classmethod(_note_subclass)
Tensor._make_wrapper_subclass = staticmethod(make_wrapper_subclass)
