"""functional_call: run a module with other tensors in place of its parameters and buffers;
stack_module_state: the parameters and buffers of same-shaped models, stacked."""
import contextlib

from .. import _functions as F
from ..autograd.grad_mode import no_grad


def _tied_groups(module):
    """Each tensor's names (with ``remove_duplicate=False``), for tensors with several."""
    names = {}
    for name, t in (list(module.named_parameters(remove_duplicate=False)) +
                    list(module.named_buffers(remove_duplicate=False))):
        names.setdefault(id(t), []).append(name)
    return [group for group in names.values() if len(group) > 1]


def _merge(module, dicts, tie_weights):
    if isinstance(dicts, dict):
        dicts = (dicts,)
    merged = {}
    for d in dicts:
        repeated = sorted(k for k in d if k in merged)
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        merged.update(d)
    if tie_weights:
        for group in _tied_groups(module):
            given = [n for n in group if n in merged]
            if len({id(merged[n]) for n in given}) > 1:
                raise ValueError(f"functional_call got multiple values for keys {given}, which "
                                 "are tied. Consider using tie_weights=False")
            for n in group:
                if given and n not in merged:
                    merged[n] = merged[given[0]]
    return merged


def _check_strict(module, values):
    known = ({n for n, _ in module.named_parameters(remove_duplicate=False)} |
             {n for n, _ in module.named_buffers(remove_duplicate=False)})
    unexpected = sorted(k for k in values if k not in known)
    missing = sorted(k for k in known if k not in values)
    if unexpected or missing:
        lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
        if unexpected:
            lines.append("\tUnexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
        if missing:
            lines.append("\tMissing key(s): " + ", ".join(repr(k) for k in missing) + ".")
        raise RuntimeError("\n".join(lines))


_ABSENT = object()


@contextlib.contextmanager
def _swapped(module, values):
    """Put ``values`` (dotted name -> tensor) in place; put the originals back on exit."""
    undo = []
    try:
        for name, value in values.items():
            owner_name, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_name) if owner_name else module
            for registry in (owner._parameters, owner._buffers):
                if attr in registry:
                    undo.append((registry, attr, registry[attr]))
                    registry[attr] = value
                    break
            else:  # not a parameter or buffer: a plain attribute while the call runs
                undo.append((owner.__dict__, attr, owner.__dict__.get(attr, _ABSENT)))
                owner.__dict__[attr] = value
        yield
    finally:
        for registry, attr, old in reversed(undo):
            if old is _ABSENT:
                del registry[attr]
            else:
                registry[attr] = old


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts``
    (dotted names) in place of its parameters and buffers, restored afterwards.

    >>> import ember
    >>> m = ember.nn.Linear(2, 1)
    >>> params = {'weight': ember.ones(1, 2), 'bias': ember.zeros(1)}
    >>> ember.func.functional_call(m, params, (ember.tensor([1., 2.]),))
    tensor([3.])
    """
    values = _merge(module, parameter_and_buffer_dicts, tie_weights)
    if strict:
        _check_strict(module, values)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values):
        return module(*args, **(kwargs or {}))


def stack_module_state(models):
    """``(params, buffers)``: each name's tensors of ``models`` stacked along a new first
    dimension (new leaves; parameters keep requiring grad).

    >>> import ember
    >>> params, buffers = ember.func.stack_module_state([ember.nn.Linear(3, 2) for _ in range(4)])
    >>> params['weight'].shape
    ember.Size([4, 2, 3])
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")

    def stacked(named):
        result = {}
        for name, first in named(models[0]):
            tensors = [dict(named(m))[name] for m in models]
            with no_grad():
                s = F.stack([t.detach() for t in tensors])
            result[name] = s.requires_grad_(first.requires_grad)
        return result

    return (stacked(lambda m: list(m.named_parameters())),
            stacked(lambda m: list(m.named_buffers())))
