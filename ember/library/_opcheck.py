"""``opcheck``: tests that an operator is registered correctly, as
``torch.library.opcheck``.

>>> import ember, numpy as np
>>> from ember import Tensor
>>> @ember.library.custom_op("opcheckdoc::numpy_cos", mutates_args=())
... def numpy_cos(x: Tensor) -> Tensor:
...     return ember.from_numpy(np.cos(x.numpy()))
>>> @numpy_cos.register_fake
... def _(x):
...     return ember.empty_like(x)
>>> ember.library.opcheck(numpy_cos, (ember.randn(3),))["test_faketensor"]
'SUCCESS'
"""
import numpy as np

from .._tensor import Tensor
from ..backend import to_host
from ..backend.dtypes import is_float_np
from ..autograd import grad_mode
from ..autograd.backprop import backward as _run_backward
from . import _dispatch
from ._custom_ops import fake_ctx
from ._schema import bind, kernel_arguments

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor",
                      "test_aot_dispatch_dynamic")
ALL_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor",
                  "test_aot_dispatch_static", "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    """What ``opcheck`` raises when one of its tests fails."""


class UnsupportedOperatorException(RuntimeError):
    """The operator has no fake implementation to run (PyTorch's FakeTensor error)."""

    def __init__(self, func):
        super().__init__(str(func))
        self.func = func

    def __repr__(self):
        return f"UnsupportedOperatorException(func={self.func!r})"


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception=True,
            atol=None, rtol=None):
    """Run the checks ``test_utils`` on ``op(*args, **kwargs)``; returns
    ``{test: "SUCCESS" or the exception}``, raising ``OpCheckError`` on the first failure
    when ``raise_exception``.

    ``test_schema``: inputs the schema does not mark as written are unchanged, outputs
    alias no input the schema does not say they alias. ``test_autograd_registration``:
    with inputs that require grad, the gradient comes from a registered formula (or a
    CompositeImplicitAutograd kernel), not from ops the kernel happened to run.
    ``test_faketensor``: the fake implementation gives the kernel's output shapes,
    dtypes and devices. ``test_aot_dispatch_static``/``_dynamic``: ember has no
    AOTAutograd to trace with, so these run the operator forward and backward eagerly
    (which still catches a missing or failing autograd formula).

    >>> import ember
    >>> from ember import Tensor
    >>> @ember.library.custom_op("opcheckdoc::double", mutates_args=())
    ... def double(x: Tensor) -> Tensor:
    ...     return x * 2
    >>> ember.library.opcheck(double, (ember.ones(2),), test_utils="test_schema")
    {'test_schema': 'SUCCESS'}
    """
    op = _as_overload(op)
    kwargs = {} if kwargs is None else kwargs
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not set(test_utils) <= set(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={tuple(test_utils)}), expected test_utils "
                         f"to be subset of {ALL_TEST_UTILS} but it was not")
    results = {}
    for name in test_utils:
        check = _CHECKS[name]
        try:
            check(op, args, kwargs)
        except Exception as err:  # noqa: BLE001 - reported (or raised) as the test's failure
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {err} (scroll up for "
                                   "stack trace)") from err
            results[name] = err
            continue
        results[name] = "SUCCESS"
    return results


def _as_overload(op):
    inner = getattr(op, "_opoverload", None)
    if getattr(op, "_is_custom_op_def", False) and inner is not None:
        return inner
    if isinstance(op, _dispatch.OpOverloadPacket):
        return op.default
    if not isinstance(op, _dispatch.OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of ember.library.OpOverload, "
                         f"e.g. ember.ops.aten.sin.default, got {type(op)}")
    return op


# ---- copies of the arguments ---------------------------------------------------------------
def _clone(value):
    if isinstance(value, Tensor):
        copy = value.detach().clone()
        return copy.requires_grad_(True) if value.requires_grad else copy
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _tensors(value):
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _host(t):
    return np.array(to_host(t.detach()._data), copy=True)


def _outputs(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


# ---- the checks ----------------------------------------------------------------------------
def _test_schema(op, args, kwargs):
    args, kwargs = _clone(args), _clone(kwargs)
    schema = op._schema
    values = bind(schema, args, kwargs)
    before = [[_host(t) for t in _tensors(v)] for v in values]
    out = op(*args, **kwargs)
    for arg, value, saved in zip(schema.arguments, values, before):
        if arg.is_write:
            continue
        for t, old in zip(_tensors(value), saved):
            nan_ok = is_float_np(old.dtype) or old.dtype.kind == "c"
            if not np.array_equal(_host(t), old, equal_nan=nan_ok):
                raise RuntimeError(f"Argument {arg.name} is not defined as mutable but was "
                                   "mutated")
    for o in _tensors(_outputs(out)):
        for arg, value in zip(schema.arguments, values):
            if arg.alias_info is not None:
                continue
            if any(_dispatch._shares_memory(o, t) for t in _tensors(value)):
                raise RuntimeError(f"Argument {arg.name} is not defined to alias output but "
                                   "was aliasing")


def _test_autograd_registration(op, args, kwargs):
    args, kwargs = _clone(args), _clone(kwargs)
    inputs = _tensors(list(args) + list(kwargs.values()))
    if not any(t.requires_grad for t in inputs):
        return  # nothing to check without an input that requires grad
    e = op._entry
    if e.has_autograd_function() and e.differentiable_schema():
        return
    if any(key in e.kernels for key in ("AutogradCPU", "Autograd", "CompositeImplicitAutograd")):
        return
    previous = _dispatch.autograd_fallback_mode[0]
    _dispatch.autograd_fallback_mode[0] = "nothing"
    try:
        out = op(*args, **kwargs)
    finally:
        _dispatch.autograd_fallback_mode[0] = previous
    ids = {id(t) for t in inputs}
    if any(o.requires_grad and id(o) not in ids for o in _tensors(_outputs(out))):
        raise AssertionError(
            f"{op.name()}: at least one output of this operator has requires_grad=True but the "
            "operator does not have an autograd kernel defined at an autograd key (e.g. "
            "DispatchKey::Autograd). This could mean that you have incorrectly registered an "
            "autograd kernel to a non-Autograd DispatchKey, which may lead to silently "
            "incorrect results. If your operator consists of regular PyTorch operations, "
            "consider not using an operator at all or registering your operator as "
            "CompositeImplicitAutograd. If you have an autograd.Function registered to a "
            "backend (CPU/CUDA/XPU) key, the correct location for it is the Autograd key.")


def _check_fake_exists(op):
    """Raise as FakeTensor does when ``op`` has no fake implementation; True when there
    is one to compare (False: none needed)."""
    e = op._entry
    if e.fake_impl() is None:
        if "CompositeImplicitAutograd" in e.kernels or not e.schema.returns:
            return False  # it decomposes into ops that have their own / it returns nothing
        if e.custom_op is not None:
            name = e.custom_op.__name__
            raise RuntimeError(
                f"There was no fake impl registered for {e.custom_op}. This is necessary for "
                f"torch.compile/export/fx tracing to work. Please use `{name}.register_fake` "
                "to add an fake impl.")
        raise UnsupportedOperatorException(op)
    return True


def _test_faketensor(op, args, kwargs):
    e = op._entry
    if not _check_fake_exists(op):
        return
    with grad_mode.no_grad():
        real = op(*_clone(args), **_clone(kwargs))
        values = bind(e.schema, _clone(args), _clone(kwargs))
        fake_args, fake_kwargs = kernel_arguments(e.schema, values)
        with fake_ctx(op.name()) as ctx:
            fake = e.fake_impl()(*fake_args, **fake_kwargs)
    several = isinstance(real, (tuple, list))
    reals, fakes = _outputs(real), _outputs(fake)
    prefix = (f"When comparing the output of {op} on FakeTensor and concrete Tensors, found "
              "mismatch")
    if len(reals) != len(fakes):
        raise RuntimeError(f"{prefix} in number of returns {len(fakes)} != {len(reals)}")
    for i, (r, f) in enumerate(zip(reals, fakes)):
        if not isinstance(r, Tensor):
            continue
        where = f" for output[{i}]" if several else ""
        problem = _metadata_mismatch(r, f, ctx.dynamic_sizes > 0)
        if problem:
            raise RuntimeError(f"{prefix}ed tensor metadata{where}: {problem}")


def _metadata_mismatch(real, fake, dynamic):
    if not isinstance(fake, Tensor):
        return f"Expected a Tensor, got {type(fake).__name__}"
    same_shape = real.ndim == fake.ndim if dynamic else tuple(real.shape) == tuple(fake.shape)
    if not same_shape:
        return f"Shapes {real.shape} and {fake.shape} are not equal!"
    if real.dtype != fake.dtype:
        return f"Dtypes {real.dtype} and {fake.dtype} are not equal!"
    if str(real.device) != str(fake.device):
        return f"Devices {real.device} and {fake.device} are not equal!"
    return None


def _test_eager_forward_backward(op, args, kwargs):
    _check_fake_exists(op)  # tracing would need it
    args, kwargs = _clone(args), _clone(kwargs)
    out = op(*args, **kwargs)
    wanted = [o for o in _tensors(_outputs(out)) if o.requires_grad]
    if wanted:
        _run_backward(wanted, [o.new_ones(o.shape) for o in wanted])


_CHECKS = {"test_schema": _test_schema,
           "test_autograd_registration": _test_autograd_registration,
           "test_faketensor": _test_faketensor,
           "test_aot_dispatch_static": _test_eager_forward_backward,
           "test_aot_dispatch_dynamic": _test_eager_forward_backward}
