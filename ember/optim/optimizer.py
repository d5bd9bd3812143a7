"""``Optimizer``: parameter groups, per-parameter state and PyTorch's state_dict format.

Subclasses implement ``step(closure=None)``; updates run under ``no_grad`` and
write into the parameters in place (their version counters bump), skipping
parameters whose ``grad`` is None.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0, -1.0]))
>>> opt = ember.optim.SGD([w], lr=0.5)
>>> def closure():
...     opt.zero_grad()
...     loss = (w ** 2).sum()
...     loss.backward()
...     return loss
>>> opt.step(closure)
tensor(2., grad_fn=<SumBackward0>)
>>> w
Parameter containing:
tensor([0., 0.], requires_grad=True)
"""
from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict, OrderedDict
from itertools import chain, count
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad, enable_grad
from ..autograd.graph import RemovableHandle
from ..backend.sparse_data import SparseCOOData


class _RequiredParameter:
    """Singleton marking a hyperparameter that has no default."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()
_hook_ids = count()
#: hooks every optimizer's step runs (``register_optimizer_step_pre_hook`` / ``post_hook``)
_global_optimizer_pre_hooks: OrderedDict[int, Any] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Any] = OrderedDict()

#: what an optimizer takes: tensors, or parameter groups (dicts with a ``'params'`` entry)
ParamsT = Union[Iterable[Tensor], Iterable[dict[str, Any]]]
#: ``step(closure)``: re-evaluates the model and returns the loss
LossClosure = Callable[[], Any]
#: ``hook(optimizer, args, kwargs)``, run before or after each ``step``
OptimizerHook = Callable[["Optimizer", tuple[Any, ...], dict[str, Any]], None]


def _typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _get_value(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


class Optimizer:
    """Base class of all optimizers.

    ``params`` is an iterable of tensors or of dicts (parameter groups, each with a
    ``'params'`` entry and optional per-group hyperparameters overriding ``defaults``).
    A subclass passes its hyperparameters as ``defaults`` and implements ``step``:

    >>> import ember
    >>> class SignSGD(ember.optim.Optimizer):
    ...     def __init__(self, params, lr=0.1):
    ...         super().__init__(params, dict(lr=lr))
    ...     @ember.no_grad()
    ...     def step(self, closure=None):
    ...         for group in self.param_groups:
    ...             for p in group["params"]:
    ...                 if p.grad is not None:
    ...                     p.sub_(p.grad.sign(), alpha=group["lr"])
    >>> w = ember.nn.Parameter(ember.tensor([3.0, -2.0]))
    >>> opt = SignSGD([{"params": [w], "lr": 0.5}])
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 2.5000, -1.5000], requires_grad=True)
    """
    #: the error a step with a sparse gradient raises (``{}``: the class's name); None for
    #: the optimizers that take them (SGD, Adagrad, SparseAdam)
    _sparse_gradient_error: Optional[str] = "{} does not support sparse gradients"
    defaults: dict[str, Any]
    state: defaultdict[Any, dict[str, Any]]
    param_groups: list[dict[str, Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # every step (a user's optimizer's too) runs the step hooks around it, as PyTorch's
        # patched step does; _run_step's own hook calls are then skipped
        step = cls.__dict__.get("step")
        if step is not None:
            cls.step = _hooked_step(step)

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, OptimizerHook] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, OptimizerHook] = OrderedDict()
        self._init_state_dict_hooks()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups: list[Any] = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def _init_state_dict_hooks(self) -> None:
        for name in _STATE_DICT_HOOKS:
            self.__dict__.setdefault(name, OrderedDict())

    def _add_hook(self, registry: str, hook: Callable[..., Any],
                  prepend: bool = False) -> RemovableHandle:
        hooks = self.__dict__[registry]
        key = next(_hook_ids)
        hooks[key] = hook
        if prepend:
            hooks.move_to_end(key, last=False)
        return RemovableHandle(hooks, key)

    def register_state_dict_pre_hook(self, hook: Callable[["Optimizer"], None],
                                     prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` runs at the start of ``state_dict()``; returns a handle
        (``prepend``: before the hooks already registered)."""
        return self._add_hook("_optimizer_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[["Optimizer", dict], Any],
                                      prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` runs at the end of ``state_dict()``; a dict it
        returns replaces the state dict.

        >>> import ember
        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1)
        >>> _ = opt.register_state_dict_post_hook(lambda o, sd: {**sd, "note": "v2"})
        >>> opt.state_dict()["note"]
        'v2'
        """
        return self._add_hook("_optimizer_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[["Optimizer", dict], Any],
                                          prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` runs at the start of ``load_state_dict()`` on a
        shallow copy of the dict; a dict it returns is loaded instead."""
        return self._add_hook("_optimizer_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[["Optimizer"], None],
                                           prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` runs at the end of ``load_state_dict()``."""
        return self._add_hook("_optimizer_load_state_dict_post_hooks", hook, prepend)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (a dict with ``'params'``); missing hyperparameters take
        the optimizer's defaults. A parameter may belong to one group only.

        >>> import ember
        >>> body, head = ember.nn.Linear(2, 2), ember.nn.Linear(2, 1)
        >>> opt = ember.optim.SGD(body.parameters(), lr=0.1)
        >>> opt.add_param_group({"params": head.parameters(), "lr": 0.01})
        >>> [(len(g["params"]), g["lr"]) for g in opt.param_groups]
        [(2, 0.1), (2, 0.01)]
        """
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
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized parameters (to None by default).

        >>> import ember
        >>> w = ember.nn.Parameter(ember.ones(2))
        >>> opt = ember.optim.SGD([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.zero_grad(set_to_none=False)
        >>> w.grad
        tensor([0., 0.])
        >>> opt.zero_grad()
        >>> w.grad is None
        True
        """
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
    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """Perform one optimization step (re-evaluating the loss with ``closure`` if given);
        returns the closure's loss, or None without one. Subclasses implement it."""
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure: Optional[LossClosure]) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _run_step(self, closure: Optional[LossClosure],
                  update: Callable[[dict[str, Any]], None]) -> Any:
        """Common frame of ``step``: hooks, the closure, then ``update(group)`` per group
        under ``no_grad``, or under ``enable_grad`` when the optimizer was made with
        ``differentiable=True`` (its updates are then recorded by autograd)."""
        self._run_pre_hooks()
        loss = self._closure_loss(closure)
        with (enable_grad() if self.defaults.get("differentiable") else no_grad()):
            for group in self.param_groups:
                if self._sparse_gradient_error is not None and has_sparse_grad(group):
                    raise RuntimeError(self._sparse_gradient_error.format(
                        type(self).__name__))
                update(group)
        self._run_post_hooks()
        return loss

    def _run_pre_hooks(self) -> None:
        if self.__dict__.get("_in_hooked_step"):  # the hooked step ran them
            return
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, (), {})
            if result is not None:
                raise RuntimeError("optimizer step pre hooks returning new arguments are not "
                                   "supported")

    def _run_post_hooks(self) -> None:
        if self.__dict__.get("_in_hooked_step"):
            return
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, (), {})

    def register_step_pre_hook(self, hook: OptimizerHook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs before each step; returns a handle.

        >>> import ember
        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=0.1)
        >>> handle = opt.register_step_pre_hook(lambda o, args, kwargs: print("stepping"))
        >>> opt.step()
        stepping
        >>> handle.remove()
        >>> opt.step()
        """
        key = next(_hook_ids)
        self._optimizer_step_pre_hooks[key] = hook
        return RemovableHandle(self._optimizer_step_pre_hooks, key)

    def register_step_post_hook(self, hook: OptimizerHook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after each step; returns a handle.

        >>> import ember
        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=0.1)
        >>> steps = []
        >>> _ = opt.register_step_post_hook(lambda o, args, kwargs: steps.append(1))
        >>> opt.step(); opt.step()
        >>> len(steps)
        2
        """
        key = next(_hook_ids)
        self._optimizer_step_post_hooks[key] = hook
        return RemovableHandle(self._optimizer_step_post_hooks, key)

    # ------------------------------------------------------------------ state_dict
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``,
        parameters numbered in group order, as in PyTorch.

        >>> import ember
        >>> w = ember.nn.Parameter(ember.ones(2))
        >>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.sum().backward()
        >>> opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"]
        {0: {'momentum_buffer': tensor([1., 1.])}}
        >>> sd["param_groups"][0]["params"], sd["param_groups"][0]["lr"]
        ([0], 0.1)
        """
        for pre_hook in list(self._optimizer_state_dict_pre_hooks.values()):
            pre_hook(self)
        mappings: dict[int, int] = {}  # id(parameter) -> its number
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
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in list(self._optimizer_state_dict_post_hooks.values()):
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _cast(param: Tensor, value: Any, key: Optional[str] = None) -> Any:
        if isinstance(value, Tensor):
            if key != "step" and param.is_floating_point():
                return value.detach().to(param.dtype).clone()
            return value.detach().clone()
        if isinstance(value, dict):
            return {k: Optimizer._cast(param, v, key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast(param, v) for v in value)
        return value

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load state saved by ``state_dict()`` (ours or PyTorch's layout); tensors are
        copied and cast to their parameter's dtype (``step`` keeps its own).

        >>> import ember
        >>> w = ember.nn.Parameter(ember.ones(2))
        >>> opt = ember.optim.Adam([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.step()
        >>> resumed = ember.optim.Adam([w], lr=0.5)
        >>> resumed.load_state_dict(opt.state_dict())
        >>> resumed.param_groups[0]["lr"], resumed.state[w]["step"]
        (0.1, tensor(1.))
        """
        state_dict = dict(state_dict)
        for pre_hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
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
        for post_hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            post_hook(self)

    # ------------------------------------------------------------------ misc
    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())
        self._init_state_dict_hooks()

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += "\n"
            out += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        out += ")"
        return out


__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


_STATE_DICT_HOOKS = ("_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks")


def register_optimizer_step_pre_hook(hook: OptimizerHook) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs before every optimizer's step (before the
    optimizer's own pre-hooks); it may return new ``(args, kwargs)``. Returns a handle.

    >>> import ember
    >>> from ember.optim.optimizer import register_optimizer_step_pre_hook
    >>> handle = register_optimizer_step_pre_hook(lambda o, args, kw: print(type(o).__name__))
    >>> ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1).step()
    SGD
    >>> handle.remove()
    """
    key = next(_hook_ids)
    _global_optimizer_pre_hooks[key] = hook
    return RemovableHandle(_global_optimizer_pre_hooks, key)


def register_optimizer_step_post_hook(hook: OptimizerHook) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs after every optimizer's step (after the
    optimizer's own post-hooks). Returns a handle."""
    key = next(_hook_ids)
    _global_optimizer_post_hooks[key] = hook
    return RemovableHandle(_global_optimizer_post_hooks, key)


def _hooked_step(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step`` of an Optimizer subclass wrapped to run the step pre- and post-hooks around
    it; the hooks get ``(optimizer, args, kwargs)`` with ``args`` starting at the optimizer,
    and a pre-hook may return new ``(args, kwargs)``, as in PyTorch.

    >>> import ember
    >>> class Halve(ember.optim.Optimizer):
    ...     def __init__(self, params):
    ...         super().__init__(params, {})
    ...     def step(self, closure=None):
    ...         for p in self.param_groups[0]["params"]:
    ...             p.data.mul_(0.5)
    >>> opt = Halve([ember.nn.Parameter(ember.ones(1))])
    >>> _ = opt.register_step_post_hook(lambda o, args, kwargs: print("stepped", len(args)))
    >>> opt.step()
    stepped 1
    """
    @functools.wraps(step)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        if self.__dict__.get("_in_hooked_step"):  # a subclass's step calling super().step()
            return step(*args, **kwargs)
        for pre_hook in [*_global_optimizer_pre_hooks.values(),
                         *self._optimizer_step_pre_hooks.values()]:
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
                args, kwargs = result
        self._in_hooked_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._in_hooked_step = False
        for post_hook in [*self._optimizer_step_post_hooks.values(),
                          *_global_optimizer_post_hooks.values()]:
            post_hook(self, args, kwargs)
        return out
    return hooked


def has_sparse_grad(group: dict) -> bool:
    """Whether a parameter of ``group`` holds a sparse gradient."""
    for p in group["params"]:
        g = p._grad
        if g is not None and type(g._data) is SparseCOOData:
            return True
    return False
