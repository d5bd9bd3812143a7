"""``swap_in_optimizer_params_and_state``: run an optimizer's API on other parameter tensors
and another ``state_dict()``-shaped state for the length of a ``with`` block.

The swap-in state is addressed as ``state_dict()`` addresses it (packed integer ids, groups
in order); the explicit parameters are matched to the groups by order. The per-parameter
state dicts are shallow copies, so in-place tensor updates reach the caller's state while
new entries stay local; on exit the live groups and state are restored exactly.
"""
import contextlib
from collections import defaultdict

from .._tensor import Tensor

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state):
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping "
                           "packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           "dictionaries.")


def _check_group(idx, live, group):
    if not isinstance(group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                           "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(live["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of "
                           "params than the live optimizer param group.")
    swapin_only = [k for k in group if k not in live]
    live_only = [k for k in live if k not in group]
    if swapin_only or live_only:
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match "
            f"the live optimizer group keys for group {idx}. Keys only in swap-in: "
            f"{swapin_only}. Keys only in live: {live_only}.")
    return ids


def _plan(optimizer, parameters, optim_state):
    """The checked swap-in: (packed state, [(live group, swap-in group, its tensors)])."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = optim_state.get("state")
    _check_state(state)
    groups = optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list "
                           f"of param-group dicts, got {type(groups).__name__}.")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    tensors = list(parameters.values())
    offset, seen, plan = 0, set(), []
    for idx, (live, group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _check_group(idx, live, group)
        seen.update(ids)
        if offset + len(ids) > len(tensors):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        plan.append((live, group, tensors[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           "packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    return state, plan


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Within the block, ``optimizer`` works on ``swapin_parameters`` (a dict of tensors in
    the order of its groups' parameters) with the state and hyperparameters of
    ``swapin_optim_state`` (a ``state_dict()``); everything is restored on exit.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.ones(2)); opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> w.grad = ember.ones(2); opt.step()
    >>> other = {"w": ember.zeros(2)}; other["w"].grad = ember.ones(2)
    >>> with ember.optim.swap_in_optimizer_params_and_state(opt, other, opt.state_dict()):
    ...     opt.step()
    >>> other["w"]
    tensor([-0.1900, -0.1900])
    """
    state, plan = _plan(optimizer, swapin_parameters, swapin_optim_state)
    live_state = optimizer.state
    snapshots = [dict(group) for group in optimizer.param_groups]
    try:
        swapped = defaultdict(dict)
        for live, group, tensors in plan:
            live["params"] = tensors
            live.update((k, v) for k, v in group.items() if k != "params")
            for tensor, pid in zip(tensors, group["params"]):
                swapped[tensor] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
