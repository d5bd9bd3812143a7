"""``Variable``: the pre-0.4 wrapper, now the tensor itself (``torch.autograd.variable``)."""
import warnings


def Variable(data, requires_grad=False, volatile=False):
    """The pre-0.4 wrapper: returns ``data`` itself (a tensor), ``requires_grad`` set.

    >>> import ember
    >>> Variable(ember.ones(2), requires_grad=True).requires_grad
    True
    """
    if volatile:
        warnings.warn("volatile was removed and now has no effect. Use `with ember.no_grad():` "
                      "instead.", UserWarning, stacklevel=2)
    if requires_grad:
        data.requires_grad_(True)
    return data
