"""``ember.nn.utils.stateless``: the pre-2.0 home of ``functional_call`` (deprecated; use
``ember.func.functional_call``, which this one calls)."""
import warnings

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with ``parameters_and_buffers`` in place of its own; deprecated
    (a FutureWarning): ``ember.func.functional_call`` is the same function.

    >>> import ember, warnings
    >>> lin = ember.nn.Linear(2, 1)
    >>> new = {"weight": ember.ones(1, 2), "bias": ember.zeros(1)}
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.nn.utils.stateless.functional_call(lin, new, (ember.ones(2),))
    tensor([2.])
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    from ..._functorch.functional_call import functional_call as _call  # a later layer
    return _call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                 strict=strict)
