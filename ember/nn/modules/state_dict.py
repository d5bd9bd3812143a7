"""``Module.state_dict`` / ``load_state_dict``: parameters, persistent buffers and extra
state (``get_extra_state``) under dotted names; loading collects every problem before
raising one error. The state_dict hooks run in PyTorch's order: a module's pre-hook, its
own entries, its children, then its post-hook."""
from collections import OrderedDict, namedtuple

from ..._tensor import Tensor
from ...autograd import grad_mode
from ..parameter import Parameter, is_lazy

EXTRA_STATE_KEY = "_extra_state"


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


def save_local(module, destination, prefix, keep_vars, has_extra_state):
    """What ``Module._save_to_state_dict`` stores: the module's own entries."""
    for name, t in _local_state(module):
        destination[prefix + name] = t if keep_vars else t.detach()
    if has_extra_state:
        destination[prefix + EXTRA_STATE_KEY] = module.get_extra_state()


def state_dict(module, destination=None, prefix="", keep_vars=False):
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()  # per module prefix: {"version": ...}
    # an explicit stack (no recursion, so deep models work): 'post' runs after the children
    stack = [("visit", prefix, module, None)]
    while stack:
        step, pre, mod, local_metadata = stack.pop()
        if step == "post":
            destination = _run_post_hooks(mod, destination, pre, local_metadata)
            continue
        local_metadata = {"version": mod._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[pre[:-1]] = local_metadata
        for hook in list(mod._state_dict_pre_hooks.values()):
            hook(mod, pre, keep_vars)
        mod._save_to_state_dict(destination, pre, keep_vars)
        stack.append(("post", pre, mod, local_metadata))
        children = [("visit", pre + name + ".", child, None)
                    for name, child in mod._modules.items() if child is not None]
        stack.extend(reversed(children))
    return destination


def _run_post_hooks(module, destination, prefix, local_metadata):
    for hook in list(module._state_dict_hooks.values()):
        result = hook(module, destination, prefix, local_metadata)
        if getattr(hook, "_from_public_api", False):
            if result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        elif result is not None:
            destination = result
    return destination


def load_state_dict(module, state, strict=True, assign=False):
    if not hasattr(state, "keys"):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state)}.")
    metadata = getattr(state, "_metadata", None)
    state = OrderedDict(state)
    if metadata is not None:
        state._metadata = metadata
    missing, unexpected, errors = [], [], []
    stack = [("visit", "", module, state)]
    while stack:
        step, pre, mod, local_state = stack.pop()
        if step == "post":
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in list(mod._load_state_dict_post_hooks.values()):
                if hook(mod, keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")
            continue
        local_metadata = {} if metadata is None else metadata.get(pre[:-1], {})
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        mod._load_from_state_dict(local_state, pre, local_metadata, True, missing, unexpected,
                                  errors)
        stack.append(("post", pre, mod, None))
        children = []
        for name, child in mod._modules.items():
            if child is not None:
                child_pre = pre + name + "."
                children.append(("visit", child_pre, child, {
                    k: v for k, v in local_state.items() if k.startswith(child_pre)}))
        stack.extend(reversed(children))
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


def load_local(module, state, prefix, local_metadata, strict, missing, unexpected, errors,
               takes_extra_state):
    """What ``Module._load_from_state_dict`` does: pre-hooks, then the module's own entries;
    ``takes_extra_state``: the module overrides ``set_extra_state``."""
    for hook in list(module._load_state_dict_pre_hooks.values()):
        hook(state, prefix, local_metadata, strict, missing, unexpected, errors)
    assign = local_metadata.get("assign_to_params_buffers", False)
    local = dict(_local_state(module))
    for name, target in local.items():
        key = prefix + name
        if key not in state:
            if strict:
                missing.append(key)
            continue
        value = state[key]
        if not isinstance(value, Tensor):
            errors.append(f'While copying the parameter named "{key}", expected torch.Tensor '
                          f"or Tensor-like object from checkpoint but received {type(value)}")
            continue
        # an uninitialized target has no shape: a lazy module's load hook materialized it
        # from any initialized value already, so what is left is lazy into lazy
        if not is_lazy(target) and value.shape != target.shape:
            errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} "
                          f"from checkpoint, the shape in current model is {target.shape}.")
            continue
        with grad_mode.no_grad():
            if assign:
                _assign(module, name, value, target)
            else:
                target.copy_(value)
    extra_key = prefix + EXTRA_STATE_KEY
    if takes_extra_state:
        if extra_key in state:
            module.set_extra_state(state[extra_key])
        elif strict:
            missing.append(extra_key)
    elif strict and extra_key in state:
        unexpected.append(extra_key)
    if strict:
        for key in state:
            if key.startswith(prefix) and key != extra_key:
                first = key[len(prefix):].split(".", 1)[0]
                if first not in module._modules and first not in local:
                    unexpected.append(key)


def _assign(owner, name, value, target):
    if name in owner._parameters:
        owner._parameters[name] = value if isinstance(value, Parameter) else \
            Parameter(value, requires_grad=target.requires_grad)
    else:
        owner._buffers[name] = value
