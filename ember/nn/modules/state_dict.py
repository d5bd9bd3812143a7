"""``Module.state_dict`` / ``load_state_dict``: parameters and persistent buffers
under dotted names; loading collects every problem before raising one error."""
from collections import OrderedDict, namedtuple

from ..._tensor import Tensor
from ...autograd import grad_mode
from ..parameter import Parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _local_state(module):
    for name, p in module._parameters.items():
        if p is not None:
            yield name, p
    for name, b in module._buffers.items():
        if b is not None and name not in module._non_persistent_buffers_set:
            yield name, b


def state_dict(module, destination=None, prefix="", keep_vars=False):
    if destination is None:
        destination = OrderedDict()
    stack = [(prefix, module)]
    while stack:
        pre, mod = stack.pop()
        for name, t in _local_state(mod):
            destination[pre + name] = t if keep_vars else t.detach()
        children = [(pre + name + ".", child) for name, child in mod._modules.items()
                    if child is not None]
        stack.extend(reversed(children))
    return destination


def load_state_dict(module, state, strict=True, assign=False):
    if not hasattr(state, "keys"):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state)}.")
    state = OrderedDict(state)
    expected = state_dict(module, keep_vars=True)
    missing, errors = [], []
    for key, target in expected.items():
        if key not in state:
            missing.append(key)
            continue
        value = state[key]
        if not isinstance(value, Tensor):
            errors.append(f'While copying the parameter named "{key}", expected torch.Tensor '
                          f"or Tensor-like object from checkpoint but received {type(value)}")
            continue
        if value.shape != target.shape:
            errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} "
                          f"from checkpoint, the shape in current model is {target.shape}.")
            continue
        with grad_mode.no_grad():
            if assign:
                _assign(module, key, value, target)
            else:
                target.copy_(value)
    unexpected = [k for k in state if k not in expected]
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            type(module).__name__, "\n\t".join(errors)))
    return _IncompatibleKeys(missing, unexpected)


def _assign(module, key, value, target):
    path, _, name = key.rpartition(".")
    owner = module.get_submodule(path)
    if name in owner._parameters:
        owner._parameters[name] = value if isinstance(value, Parameter) else \
            Parameter(value, requires_grad=target.requires_grad)
    else:
        owner._buffers[name] = value
