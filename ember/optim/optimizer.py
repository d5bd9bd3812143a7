"""``Optimizer``: parameter groups, per-parameter state and PyTorch's state_dict format.

Subclasses implement ``step(closure=None)``; updates run under ``no_grad`` and
write into the parameters in place (their version counters bump), skipping
parameters whose ``grad`` is None.
"""
import copy
import warnings
from collections import defaultdict, OrderedDict
from itertools import chain, count

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad, enable_grad
from ..autograd.graph import RemovableHandle


class _RequiredParameter:
    """Singleton marking a hyperparameter that has no default."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()
_hook_ids = count()


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _get_value(x):
    return x.item() if isinstance(x, Tensor) else x


class Optimizer:
    """Base class of all optimizers.

    ``params`` is an iterable of tensors or of dicts (parameter groups, each with a
    ``'params'`` entry and optional per-group hyperparameters overriding ``defaults``).
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group):
        """Add a parameter group (a dict with ``'params'``); missing hyperparameters take
        the optimizer's defaults. A parameter may belong to one group only."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (
                    p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if not existing.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ grads
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized parameters (to None by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    # ------------------------------------------------------------------ step
    def step(self, closure=None):
        """Perform one optimization step (re-evaluating the loss with ``closure`` if given)."""
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _run_step(self, closure, update):
        """Common frame of ``step``: hooks, the closure, then ``update(group)`` per group
        under ``no_grad``."""
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, (), {})
            if result is not None:
                raise RuntimeError("optimizer step pre hooks returning new arguments are not "
                                   "supported")
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                update(group)
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, (), {})
        return loss

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs before each step; returns a handle."""
        key = next(_hook_ids)
        self._optimizer_step_pre_hooks[key] = hook
        return RemovableHandle(self._optimizer_step_pre_hooks, key)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs after each step; returns a handle."""
        key = next(_hook_ids)
        self._optimizer_step_post_hooks[key] = hook
        return RemovableHandle(self._optimizer_step_post_hooks, key)

    # ------------------------------------------------------------------ state_dict
    def state_dict(self):
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``,
        parameters numbered in group order, as in PyTorch."""
        mappings = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mappings.setdefault(id(p), i)
            packed["params"] = [mappings[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    @staticmethod
    def _cast(param, value, key=None):
        if isinstance(value, Tensor):
            if key != "step" and param.is_floating_point():
                return value.detach().to(param.dtype).clone()
            return value.detach().clone()
        if isinstance(value, dict):
            return {k: Optimizer._cast(param, v, key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast(param, v) for v in value)
        return value

    def load_state_dict(self, state_dict):
        """Load state saved by ``state_dict()`` (ours or PyTorch's layout); tensors are
        copied and cast to their parameter's dtype (``step`` keeps its own)."""
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast(param, v)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            new_groups.append(saved)
        self.state = state
        self.param_groups = new_groups

    # ------------------------------------------------------------------ misc
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())

    def __repr__(self):
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += "\n"
            out += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        out += ")"
        return out


__all__ = ["Optimizer", "required"]
