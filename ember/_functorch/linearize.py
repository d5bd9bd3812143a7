"""``linearize`` and ``functionalize`` of ``torch.func``, in ember's eager terms.

PyTorch's ``linearize`` traces the Jacobian-vector product once (with ``make_fx``) and calls
that graph for each tangent; ember has no tracer, so the returned function runs a
forward-mode ``jvp`` at the primals saved by ``linearize`` — the same numbers, one forward
pass per call. ``functionalize`` removes mutations for compilers that need a pure program;
in eager execution the program's effects (its results and the writes to its inputs) are
exactly the function's own, so the wrapper runs it as it is.
"""
import functools

from .eager_transforms import jvp
from .pytree import tree_flatten, tree_unflatten

_REMOVE_OPTIONS = ("mutations", "mutations_and_views")


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product of
    ``func`` at ``primals`` (saved now) with ``tangents`` of the primals' structure.

    >>> import ember
    >>> x = ember.tensor([1., 2.])
    >>> out, jvp_fn = ember.func.linearize(lambda x: x ** 3, x)
    >>> jvp_fn(ember.ones(2))
    tensor([ 3., 12.])
    """
    output = func(*primals)
    flat_primals, primals_spec = tree_flatten(primals)
    saved = tuple(p.detach().clone() for p in flat_primals)
    shapes = [p.shape for p in saved]
    devices = [p.device for p in saved]
    dtypes = [p.dtype for p in saved]

    def check(flat_tangents):
        for idx, t in enumerate(flat_tangents):
            for what, have, want in (("shape", t.shape, shapes[idx]),
                                     ("device", t.device, devices[idx]),
                                     ("dtype", t.dtype, dtypes[idx])):
                if have != want:
                    raise RuntimeError(
                        f"tangent:{idx} with {what} {have} in flattened pytree doesn't match "
                        f"the {what} {want} of the corresponding primal.")

    def jvp_fn(*tangents):
        flat_tangents, tangent_spec = tree_flatten(tangents)
        if tangent_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangent_spec} to have the same argspec "
                               f"as the primals {primals_spec}")
        check(flat_tangents)
        return jvp(func, tree_unflatten(list(saved), primals_spec), tangents)[1]

    return output, jvp_fn


def functionalize(func, *, remove="mutations"):
    """``func`` with PyTorch's ``functionalize`` contract: same results, and writes to its
    inputs still happen. Eager ember runs ``func`` itself (there is no graph to rewrite).

    >>> import ember
    >>> f = ember.func.functionalize(lambda x: x.add_(1) * 2)
    >>> x = ember.zeros(2); f(x), x
    (tensor([2., 2.]), tensor([1., 1.]))
    """
    if remove not in _REMOVE_OPTIONS:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from the "
            "program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing "
            "operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapped
