"""``swap_tensors``: exchange two tensor objects' contents in place (``ember.utils``)."""
import weakref

from .._tensor import Tensor

__all__ = ["swap_tensors"]

_SLOTS = ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_vc", "_base")

_POISONED = ("Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can "
             "happen when you try to run backward on a tensor that was swapped. For a module m "
             "with `torch.__future__.set_swap_module_params_on_conversion(True)` you should not "
             "change the device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between "
             "running forward and backward. To resolve this, please only change the "
             "device/dtype before running forward (or after both forward and backward).")


def _poison_accumulator(t):
    """A graph recorded before the swap still points at ``t``'s old leaf node: running it
    would put gradients on the wrong tensor, so it raises instead (as PyTorch's does)."""
    ref = t.__dict__.get("_accumulator")
    node = ref() if ref is not None else None
    if node is None:
        return

    def poisoned(grad_outputs):
        raise RuntimeError(_POISONED)
    node.register_prehook(poisoned)
    t.__dict__.pop("_accumulator", None)
    t.__dict__.pop("_leaf_hooks", None)


def swap_tensors(t1, t2):
    """Exchange everything about ``t1`` and ``t2`` (class, data, autograd state, Python
    attributes), so each name now refers to what the other one held.

    >>> import ember
    >>> a, b = ember.tensor([1., 2.]), ember.nn.Parameter(ember.zeros(3))
    >>> ember.utils.swap_tensors(a, b)
    >>> type(a).__name__, a.shape, b
    ('Parameter', ember.Size([3]), tensor([1., 2.]))
    """
    for name, t in (("t1", t1), ("t2", t2)):
        if not isinstance(t, Tensor):
            raise AttributeError(f"'{type(t).__name__}' object has no attribute '_use_count'")
        if weakref.getweakrefs(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    for t in (t1, t2):
        if t._grad_fn is None:
            _poison_accumulator(t)
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    d1, d2 = dict(t1.__dict__), dict(t2.__dict__)
    t1.__dict__.clear(); t1.__dict__.update(d2)  # noqa: E702
    t2.__dict__.clear(); t2.__dict__.update(d1)  # noqa: E702
    for slot in _SLOTS:
        v1, v2 = getattr(t1, slot), getattr(t2, slot)
        setattr(t1, slot, v2)
        setattr(t2, slot, v1)
