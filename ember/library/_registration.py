"""``register_autograd``, ``register_fake``, ``register_kernel``, ``register_vmap``:
the functional forms that attach behaviour to an operator defined by ``custom_op`` or by
``Library.define``.

>>> import ember
>>> lib = ember.library.Library("registrationdoc", "FRAGMENT")
>>> lib.define("cube(Tensor x) -> Tensor")
'cube'
>>> lib.impl("cube", lambda x: ember.from_numpy(x.numpy() ** 3), "CPU")
>>> def setup_context(ctx, inputs, output):
...     ctx.save_for_backward(inputs[0])
>>> def backward(ctx, grad):
...     x, = ctx.saved_tensors
...     return grad * 3 * x ** 2
>>> ember.library.register_autograd("registrationdoc::cube", backward,
...                                 setup_context=setup_context)
>>> x = ember.tensor([2.], requires_grad=True)
>>> ember.ops.registrationdoc.cube(x).backward(); x.grad
tensor([12.])
"""
import warnings

from . import _dispatch
from ._library import _fragment, device_key


def _custom_op_of(op):
    custom = getattr(op, "_is_custom_op_def", False)
    return op if custom else None


def _target_library(e, lib):
    return lib if lib is not None else _fragment(e.ns)


def register_autograd(op, backward, /, *, setup_context=None, lib=None) -> None:
    """Make ``op`` differentiable: ``setup_context(ctx, inputs, output)`` saves what
    ``backward(ctx, *grads)`` needs, which returns one gradient per input of the op
    (None for a non-Tensor one). Backward made of ember ops gives double backward too."""
    custom = _custom_op_of(op)
    if custom is not None:
        return custom.register_autograd(backward, setup_context=setup_context)
    e = _dispatch.find_entry(op)
    _check_autograd_args(e, backward, setup_context)
    target = _target_library(e, lib)
    target._register_attribute(e, "backward", backward)
    target._register_attribute(e, "setup_context", setup_context)
    return None


def _check_autograd_args(e, backward, setup_context):
    if not callable(backward):
        raise TypeError(f"Expected backward to be callable, got {type(backward)}")
    if setup_context is not None and not callable(setup_context):
        raise TypeError(f"Expected setup_context to be callable, got {type(setup_context)}")
    if e.schema.is_mutable():
        raise RuntimeError(
            f"We don't support registering autograd formula for mutable operators: {e.schema}")


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    """Register the fake (meta) implementation of ``op``: it computes the outputs'
    shapes, dtypes and devices from the inputs' without reading their data; ``opcheck``
    compares it with the real kernel. A decorator without ``func``."""
    custom = _custom_op_of(op)
    if custom is not None:
        return custom.register_fake(func) if func is not None else custom.register_fake
    e = _dispatch.find_entry(op)

    def register(fn):
        _target_library(e, lib)._register_attribute(e, "fake", fn)
        return fn
    if func is None:
        return register
    return register(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register the kernel of ``op`` for ``device_types`` ("cpu", a tuple, or None for
    every device). A decorator without ``func``."""
    custom = _custom_op_of(op)
    if custom is not None:
        return custom.register_kernel(device_types, func)
    e = _dispatch.find_entry(op)
    types = (device_types,) if device_types is None or isinstance(device_types, str) \
        else device_types

    def register(fn):
        target = _target_library(e, lib)
        for device_type in types:
            target._register_kernel(e, device_key(device_type), fn)
        return fn
    if func is None:
        return register
    return register(func)


def register_vmap(op, func=None, /, *, lib=None):
    """Register the vmap rule of ``op``: ``func(info, in_dims, *args, **kwargs)`` returns
    ``(output, out_dims)``, ``info.batch_size`` and ``info.randomness`` tell the vmap.
    A decorator without ``func``."""
    custom = _custom_op_of(op)
    if custom is not None:
        return custom.register_vmap(func)
    e = _dispatch.find_entry(op)

    def register(fn):
        _target_library(e, lib)._register_attribute(e, "vmap", fn)
        return fn
    if func is None:
        return register
    return register(func)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    """The old name of ``register_fake`` (warns as PyTorch does)."""
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. "
                  "Please use that instead; we will remove `torch.library.impl_abstract` in a "
                  "future version of PyTorch.", FutureWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """In an autocast region of ``device_type``, ``op``'s floating inputs on that device
    are cast to ``cast_inputs`` and the op runs with autocast off (its kernels see one
    dtype)."""
    e = _dispatch.find_entry(op)
    if device_type not in ("cpu", "cuda"):
        raise ValueError(f"Unknown device type: {device_type}")
    _target_library(e, lib)._register_attribute(e, "autocast", (device_type, cast_inputs))


class KernelFunction:
    """A registered kernel as ``get_kernel`` hands it out: ``call_boxed(keyset, *args)``."""

    def __init__(self, kernel, site):
        self._kernel, self._site = kernel, site

    def call_boxed(self, keyset, *args, **kwargs):
        return self._kernel(*args, **kwargs)

    def __repr__(self):
        return f"SafeKernelFunction(debug='registered at {self._site}')"


def get_kernel(op, dispatch_key):
    """The kernel registered for ``op`` at ``dispatch_key`` ("CPU", ...).

    >>> import ember
    >>> ember.library.define("kerneldoc::inc", "(Tensor x) -> Tensor")
    >>> ember.library.impl("kerneldoc::inc", "cpu", lambda x: x + 1)
    >>> ember.library.get_kernel("kerneldoc::inc", "CPU").call_boxed(None, ember.zeros(1))
    tensor([1.])
    """
    e = _dispatch.find_entry(op)
    kernel = e.kernels.get(str(dispatch_key))
    if kernel is None:
        raise RuntimeError(f"no kernel for {dispatch_key} for {e.qualname}")
    return KernelFunction(kernel, e.define_site)


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    raise NotImplementedError("register_torch_dispatch: ember has no __torch_dispatch__ "
                              "subclasses or modes")


def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    raise NotImplementedError("triton_op: ember has no Triton (no GPU backend)")


def wrap_triton(triton_kernel, /):
    raise NotImplementedError("wrap_triton: ember has no Triton (no GPU backend)")
