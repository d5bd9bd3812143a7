"""The members of ``Tensor`` that belong to autograd: ``grad_fn``, ``grad``,
``retain_grad``, ``register_hook``, ``backward`` and the in-place machinery
``_inplace`` (``views.inplace``).

``Tensor`` (``ember/_tensor.py``) is the data type under autograd and imports none of
it; these members need the graph, so autograd attaches them to the class when it is
imported, as ``ember/_tensor_methods.py`` attaches the ops.
"""
import warnings
import weakref

from ..backend import dtypes, numpy_ndarray, to_host
from .._tensor import Tensor, _check_on_host as check_on_host
from . import grad_mode
from .backprop import backward as _run_backward
from .graph import accumulator_of, gradient_edge, add_post_accumulate_grad_hook
from .views import inplace

_state = grad_mode._state


def grad_fn(self):
    if self._base is not None and self._view_version != self._vc[0]:
        gradient_edge(self)  # refreshes a view whose base changed in place
    return self._grad_fn


def _get_grad(self):
    if self._grad_fn is not None and not self._retains_grad and _state.enabled:
        warnings.warn(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
            "Its .grad attribute won't be populated during autograd.backward(). If you "
            "indeed want the .grad field to be populated for a non-leaf Tensor, use "
            ".retain_grad() on the non-leaf Tensor.", UserWarning, stacklevel=2)
    return self._grad


def _set_grad(self, value):
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                            f"of type {type(value).__name__}")
        if value._data.shape != self._data.shape:
            raise RuntimeError("assigned grad has data of a different size")
        if value._data.dtype != self._data.dtype:
            raise RuntimeError("assigned grad has data of a different type")
    self._grad = value


def retain_grad(self):
    """Make ``.grad`` of a non-leaf tensor filled in by backward."""
    if self._grad_fn is None and not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None or self._retains_grad:
        return
    self._retains_grad = True
    ref = weakref.ref(self)

    def retain(grad):
        t = ref()
        if t is None:
            return None
        if t._grad is None:
            t._grad = grad.detach().clone() if not grad.requires_grad else grad
        else:
            t._grad = t._grad + grad
        return None
    self._grad_fn._add_tensor_pre_hook(self._output_nr, retain)


def register_hook(self, hook):
    """``hook(grad)`` runs when this tensor's gradient is computed; it may return
    a replacement gradient.

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True)
    >>> h = x.register_hook(lambda g: g * 2)
    >>> x.sum().backward(); x.grad
    tensor([2., 2.])
    """
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                           "gradient")
    fn = self.grad_fn
    if fn is not None:
        return fn._add_tensor_pre_hook(self._output_nr, hook)
    node = accumulator_of(self)
    if self._leaf_hooks is None:
        self._leaf_hooks = node  # keeps the accumulator (and its hooks) alive
    return node._add_tensor_pre_hook(0, hook)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad``; see ``ember.autograd.backward``."""
    _run_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_post_accumulate_grad_hook(self, hook):
    """``hook(tensor)`` runs after backward has accumulated this leaf's ``.grad``
    (an optimizer step per parameter, as soon as its gradient is ready).

    >>> import ember
    >>> w = ember.ones(2, requires_grad=True)
    >>> def sgd_step(p):
    ...     with ember.no_grad():
    ...         p -= 0.5 * p.grad
    ...     p.grad = None
    >>> h = w.register_post_accumulate_grad_hook(sgd_step)
    >>> (w * 2).sum().backward(); w
    tensor([0., 0.], requires_grad=True)
    >>> h.remove()
    """
    return add_post_accumulate_grad_hook(self, hook)


def numpy(self, *, force=False):
    """The NumPy array behind this tensor (shared memory, no copy).

    A tensor that requires grad refuses while grad mode is on (the array would escape
    the graph), as PyTorch: under ``no_grad`` -- and inside ``Function.forward`` -- it
    is allowed.

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True)
    >>> with ember.no_grad():
    ...     x.numpy()
    array([1., 1.], dtype=float32)
    """
    if self._data.dtype.itemsize == 1 and self._data.dtype in dtypes.FLOAT8_NP:  # as PyTorch
        raise TypeError(f"Got unsupported ScalarType {self.dtype.scalar_name}")
    if type(self._data) is not numpy_ndarray:
        if force and not self.is_meta:  # PyTorch: detach().cpu().numpy()
            return to_host(self._data)
        check_on_host(self)
    if self._requires_grad and _state.enabled and not force:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    return self._data


def _attach():
    Tensor.grad_fn = property(grad_fn)
    Tensor.grad = property(_get_grad, _set_grad)
    Tensor.retain_grad = retain_grad
    Tensor.register_hook = register_hook
    Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
    Tensor.backward = backward
    Tensor.numpy = numpy
    Tensor._inplace = inplace


_attach()
