"""``nn.Module``: the base class of layers and models.

A Module keeps three registries — ``_parameters``, ``_buffers``, ``_modules`` —
filled by attribute assignment, and one iterator (``_named_members``) behind
every listing. state_dict handling lives in ``state_dict.py``, hooks in
``hooks.py``.

>>> import ember
>>> from ember import nn
>>> class Scale(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.w = nn.Parameter(ember.ones(2))
...     def forward(self, x):
...         return x * self.w
>>> m = Scale()
>>> [name for name, _ in m.named_parameters()]
['w']
>>> m(ember.tensor([1.0, 2.0]))
tensor([1., 2.], grad_fn=<MulBackward0>)
"""
from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, TypeVar, Union

from ... import _creation
from ..._tensor import Tensor
from ...autograd.graph import RemovableHandle
from ...backend.dtypes import dtype as dtype_cls, from_name
from ...device import check_device, device as device_cls
from ..parameter import Parameter, Buffer, is_lazy
from . import hooks as _hooks
from . import state_dict as _sd

if TYPE_CHECKING:
    from ...device import device

#: what ``Module`` methods that return ``self`` return: the caller's own Module subclass
T = TypeVar("T", bound="Module")


def _type_name(value):
    if isinstance(value, Tensor):
        return "ember." + {"float32": "FloatTensor", "float64": "DoubleTensor"}.get(
            value.dtype.name, "Tensor")
    return type(value).__name__


#: per-module hook registries (hook id -> hook) and sets of hook ids with a flag
_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks",
               "_state_dict_pre_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks",
               "_load_state_dict_post_hooks")
_HOOK_KEY_SETS = ("_forward_hooks_always_called", "_forward_hooks_with_kwargs",
                  "_forward_pre_hooks_with_kwargs")


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    """Base class for all neural network modules; subclass it and define ``forward``.

    Parameters, buffers and submodules assigned as attributes are registered, so
    ``parameters()``, ``state_dict()``, ``to()`` and ``train()`` find them.

    >>> import ember
    >>> from ember import nn
    >>> class TwoLayer(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = nn.Linear(3, 4)
    ...         self.out = nn.Linear(4, 1)
    ...     def forward(self, x):
    ...         return self.out(self.hidden(x).relu())
    >>> model = TwoLayer()
    >>> model(ember.zeros(2, 3)).shape
    ember.Size([2, 1])
    >>> sum(p.numel() for p in model.parameters())
    21
    """
    training: bool
    _parameters: dict[str, Optional[Parameter]]
    _buffers: dict[str, Optional[Tensor]]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Optional[Module]]
    _version = 1
    call_super_init = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes no arguments")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        for name in _HOOK_DICTS:
            setattr_(self, name, OrderedDict())
        for name in _HOOK_KEY_SETS:
            setattr_(self, name, set())

    def forward(self, *input: Any) -> Any:
        """The computation; subclasses override it and call the module, not ``forward``."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    # ---- calling ----------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _hooks.has_global_hooks()):
            return self.forward(*args, **kwargs)
        return _hooks.call_with_hooks(self, args, kwargs)

    _call_impl = __call__

    # ---- registration -----------------------------------------------------------------
    def register_parameter(self, name: str, param: Optional[Parameter]) -> None:
        """Add ``param`` (a Parameter or None) under ``name``.

        >>> import ember
        >>> m = ember.nn.Module()
        >>> m.register_parameter("scale", ember.nn.Parameter(ember.ones(1)))
        >>> [name for name, _ in m.named_parameters()]
        ['scale']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(ember.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             "parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        self._parameters[name] = _hooks.run_registration_hooks(
            _hooks.global_parameter_registration_hooks, self, name, param)

    def register_buffer(self, name: str, tensor: Optional[Tensor],
                        persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (e.g. running_mean).

        A non-persistent buffer is left out of ``state_dict()``.

        >>> import ember
        >>> m = ember.nn.Module()
        >>> m.register_buffer("running_mean", ember.zeros(3))
        >>> m.register_buffer("cache", ember.zeros(3), persistent=False)
        >>> list(m.state_dict())
        ['running_mean']
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(ember Tensor or None required)")
        self._buffers[name] = _hooks.run_registration_hooks(
            _hooks.global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Optional[Module]) -> None:
        """Add a child module under ``name`` (as ``setattr`` does, for any string name).

        >>> from ember import nn
        >>> m = nn.Module()
        >>> m.add_module("act", nn.ReLU())
        >>> m
        Module(
          (act): ReLU()
        )
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = _hooks.run_registration_hooks(
            _hooks.global_module_registration_hooks, self, name, module)

    register_module = add_module

    def _get_path(self, target: str, kind: str) -> Any:
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if kind == "module" and not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` ('' is the module itself).

        >>> from ember import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU()))
        >>> net.get_submodule("1.0")
        ReLU()
        """
        return self._get_path(target, "module")

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``.

        >>> from ember import nn
        >>> nn.Sequential(nn.Linear(2, 3)).get_parameter("0.bias").shape
        ember.Size([3])
        """
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``.

        >>> from ember import nn
        >>> nn.Sequential(nn.BatchNorm1d(3)).get_buffer("0.running_var")
        tensor([1., 1., 1.])
        """
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # ---- attribute protocol -----------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            reg = d.get(registry)
            if reg is not None and name in reg:
                return reg[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(self, name, skip="_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(ember.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(self, name, skip="_modules")
            modules[name] = _hooks.run_registration_hooks(
                _hooks.global_module_registration_hooks, self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(ember.nn.Module or None expected)")
            modules[name] = _hooks.run_registration_hooks(
                _hooks.global_module_registration_hooks, self, name, value)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer):
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            _remove_from(self, name, skip="_buffers")
            self.register_buffer(name, value, getattr(value, "persistent", True))
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                "(ember Tensor or None expected)")
            buffers[name] = _hooks.run_registration_hooks(
                _hooks.global_buffer_registration_hooks, self, name, value)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            reg = self.__dict__.get(registry)
            if reg is not None and name in reg:
                del reg[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = set(super().__dir__())
        for registry in ("_parameters", "_buffers", "_modules"):
            keys.update(self.__dict__.get(registry, {}))
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        # modules pickled before a registry existed get it empty
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())
        for name in _HOOK_KEY_SETS:
            self.__dict__.setdefault(name, set())

    # ---- iteration (one iterator behind every listing) --------------------------------
    def _named_members(self, get_members: Callable[[Module], Any], prefix: str = "",
                       recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or (remove_duplicate and id(value) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(value))
                yield (module_prefix + ("." if module_prefix else "") + name, value)

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` for every parameter, submodules' included unless
        ``recurse=False``; a parameter shared by two modules is listed once.

        >>> from ember import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        >>> [(name, tuple(p.shape)) for name, p in net.named_parameters()]
        [('0.weight', (3, 2)), ('0.bias', (3,)), ('2.weight', (1, 3)), ('2.bias', (1,))]
        """
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of :meth:`named_parameters`, without names (what optimizers take).

        >>> from ember import nn
        >>> [tuple(p.shape) for p in nn.Linear(2, 3).parameters()]
        [(3, 2), (3,)]
        """
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` for every buffer, submodules' included unless
        ``recurse=False``.

        >>> from ember import nn
        >>> [name for name, _ in nn.Sequential(nn.BatchNorm1d(2)).named_buffers()]
        ['0.running_mean', '0.running_var', '0.num_batches_tracked']
        """
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of :meth:`named_buffers`, without names.

        >>> from ember import nn
        >>> len(list(nn.BatchNorm1d(2).buffers()))
        3
        """
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for the direct children (not their children).

        >>> from ember import nn
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU()))
        >>> [name for name, _ in net.named_children()]
        ['0', '1']
        """
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct children, without names.

        >>> from ember import nn
        >>> list(nn.Sequential(nn.ReLU(), nn.Tanh()).children())
        [ReLU(), Tanh()]
        """
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo: Optional[set[int]] = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """Every module in the tree (self first), depth-first, without recursion.

        ``memo`` holds the ``id()`` of modules already listed (they are skipped).

        >>> from ember import nn
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU()))
        >>> [name for name, _ in net.named_modules()]
        ['', '0', '1', '1.0']
        """
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if id(module) in memo:
                    continue
                memo.add(id(module))
            yield name, module
            kids = [(name + ("." if name else "") + k, m)
                    for k, m in module._modules.items() if m is not None]
            stack.extend(reversed(kids))

    def modules(self) -> Iterator[Module]:
        """Every module in the tree (self first), without names.

        >>> from ember import nn
        >>> [type(m).__name__ for m in nn.Sequential(nn.ReLU()).modules()]
        ['Sequential', 'ReLU']
        """
        for _, m in self.named_modules():
            yield m

    # ---- state ------------------------------------------------------------------------
    def state_dict(self, *args: Any, destination: Optional[dict[str, Any]] = None,
                   prefix: str = "", keep_vars: bool = False) -> dict[str, Any]:
        """Parameters and persistent buffers under dotted names ('block.0.weight').

        The values are detached from the graph unless ``keep_vars=True``.

        >>> from ember import nn
        >>> sd = nn.Sequential(nn.Linear(2, 3)).state_dict()
        >>> {name: tuple(t.shape) for name, t in sd.items()}
        {'0.weight': (3, 2), '0.bias': (3,)}
        """
        return _sd.state_dict(self, destination, prefix, keep_vars)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _sd._IncompatibleKeys:
        """Copy ``state_dict`` in; returns ``(missing_keys, unexpected_keys)``.

        With ``strict`` (the default) a missing or unexpected key raises RuntimeError;
        ``assign=True`` takes the given tensors instead of copying into the current ones.

        >>> import ember
        >>> from ember import nn
        >>> src, dst = nn.Linear(2, 1), nn.Linear(2, 1)
        >>> dst.load_state_dict(src.state_dict())
        <All keys matched successfully>
        >>> ember.equal(dst.weight, src.weight)
        True
        >>> dst.load_state_dict({"weight": src.weight}, strict=False)
        _IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        """
        return _sd.load_state_dict(self, state_dict, strict, assign)

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        """Store this module's own entries (not its children's) in ``destination``."""
        _sd.save_local(self, destination, prefix, keep_vars,
                       type(self).get_extra_state is not Module.get_extra_state)

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        """Load this module's own entries; problems go to the three lists."""
        _sd.load_local(self, state_dict, prefix, local_metadata, strict, missing_keys,
                       unexpected_keys, error_msgs,
                       type(self).set_extra_state is not Module.set_extra_state)

    def get_extra_state(self) -> Any:
        """Override (with ``set_extra_state``) to keep non-tensor state in ``state_dict``
        under ``'_extra_state'``.

        >>> import ember
        >>> class Counter(ember.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.calls = 0
        ...     def get_extra_state(self):
        ...         return {"calls": self.calls}
        ...     def set_extra_state(self, state):
        ...         self.calls = state["calls"]
        >>> dict(Counter().state_dict())
        {'_extra_state': {'calls': 0}}
        """
        raise RuntimeError(_UNREACHABLE.format("get_extra_state"))

    def set_extra_state(self, state: Any) -> None:
        """Receives what ``get_extra_state`` returned, from ``load_state_dict``.

        >>> import ember
        >>> class Tag(ember.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.tag = "new"
        ...     def get_extra_state(self):
        ...         return self.tag
        ...     def set_extra_state(self, state):
        ...         self.tag = state
        >>> m = Tag()
        >>> _ = m.load_state_dict({"_extra_state": "restored"})
        >>> m.tag
        'restored'
        """
        raise RuntimeError(_UNREACHABLE.format("set_extra_state"))

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module.

        >>> import ember
        >>> seen = []
        >>> m = ember.nn.Linear(1, 1)
        >>> _ = m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: seen.append(prefix))
        >>> _ = m.state_dict(prefix="net.")
        >>> seen
        ['net.']
        """
        return _hooks.add(self, "_state_dict_pre_hooks", hook, False, None)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` after this module and its
        children are saved; it edits ``state_dict`` in place and returns None.

        >>> import ember
        >>> m = ember.nn.Linear(1, 1)
        >>> _ = m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.pop("bias"))
        >>> list(m.state_dict())
        Traceback (most recent call last):
            ...
        RuntimeError: state_dict post-hook must return None
        """
        hook._from_public_api = True
        return _hooks.add(self, "_state_dict_hooks", hook, False, None)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """As ``register_state_dict_post_hook``, but the hook may return a new state_dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return _hooks.add(self, "_state_dict_hooks", hook, False, None)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module's entries are loaded.

        >>> import ember
        >>> m = ember.nn.Linear(1, 1)
        >>> def rename(mod, sd, prefix, *rest):
        ...     if prefix + "w" in sd:
        ...         sd[prefix + "weight"] = sd.pop(prefix + "w")
        >>> _ = m.register_load_state_dict_pre_hook(rename)
        >>> m.load_state_dict({"w": ember.ones(1, 1), "bias": ember.zeros(1)})
        <All keys matched successfully>
        """
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., Any],
                                           with_module: bool = False) -> RemovableHandle:
        """As ``register_load_state_dict_pre_hook``; without ``with_module`` the hook is
        called without the module argument."""
        if with_module:
            def call(*args, _hook=hook, _module=self):
                return _hook(_module, *args)
        else:
            call = hook
        return _hooks.add(self, "_load_state_dict_pre_hooks", call, False, None)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` after this module and its children are
        loaded; it may edit ``incompatible_keys.missing_keys``/``unexpected_keys`` in place
        (before ``strict`` is checked) and must return None.

        >>> import ember
        >>> m = ember.nn.Linear(1, 1)
        >>> _ = m.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.clear())
        >>> m.load_state_dict({"weight": ember.ones(1, 1)})
        <All keys matched successfully>
        """
        return _hooks.add(self, "_load_state_dict_post_hooks", hook, False, None)

    def train(self: T, mode: bool = True) -> T:
        """Set training mode (``mode=True``) or evaluation mode on the whole tree.

        >>> from ember import nn
        >>> net = nn.Sequential(nn.Dropout(0.5))
        >>> net.train().training, net[0].training
        (True, True)
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self: T) -> T:
        """``train(False)``: dropout off, batch norm on its running statistics.

        >>> from ember import nn
        >>> net = nn.Sequential(nn.Dropout(0.5)).eval()
        >>> net.training, net[0].training
        (False, False)
        """
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        """Set ``requires_grad`` on every parameter (e.g. to freeze a layer).

        >>> from ember import nn
        >>> layer = nn.Linear(2, 2).requires_grad_(False)
        >>> [p.requires_grad for p in layer.parameters()]
        [False, False]
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``grad``: to None by default, else to zeros.

        >>> import ember
        >>> layer = ember.nn.Linear(2, 1)
        >>> layer(ember.ones(1, 2)).sum().backward()
        >>> layer.zero_grad(set_to_none=False)
        >>> layer.bias.grad
        tensor([0.])
        >>> layer.zero_grad()
        >>> layer.bias.grad is None
        True
        """
        for p in self.parameters():
            if p._grad is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                p._grad = p._grad.detach()
                p._grad.zero_()

    def apply(self: T, fn: Callable[[Module], None]) -> T:
        """Call ``fn`` on every submodule (children first) and on self; returns self.

        >>> import ember
        >>> from ember import nn
        >>> def init_zero(m):
        ...     if isinstance(m, nn.Linear):
        ...         nn.init.zeros_(m.weight)
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU()).apply(init_zero)
        >>> net[0].weight.abs().sum().item()
        0.0
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self: T, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> T:
        """Replace every parameter's and buffer's data by ``fn(data)``, in place."""
        for module in (self.modules() if recurse else [self]):
            for p in module._parameters.values():
                if p is None:
                    continue
                # an uninitialized parameter refuses detach but takes conversions
                p.data = fn(p if is_lazy(p) else p.detach())
                if p._grad is not None:
                    p._grad = fn(p._grad)
            for name, b in module._buffers.items():
                if b is not None:
                    module._buffers[name] = fn(b)
        return self

    def to(self: T, *args: Any, **kwargs: Any) -> T:
        """``to(dtype)``, ``to(device)``, ``to(tensor)``: converts floating parameters/buffers.

        In place, like PyTorch's: returns self. Gradients move with their parameters.

        >>> import ember
        >>> layer = ember.nn.Linear(2, 2).to(ember.float64)
        >>> layer.weight.dtype
        ember.float64
        >>> layer.to("cpu") is layer
        True
        """
        dtype, device = kwargs.get("dtype"), kwargs.get("device")
        memory_format = kwargs.get("memory_format")
        for a in args:
            if isinstance(a, dtype_cls):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            else:
                device = a
        target = check_device(device) if device is not None else None
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype!r}")
        if target is not None:
            self._check_leaves_meta(target)
        if memory_format is not None:  # 4-D and 5-D parameters and buffers take the layout
            return self._apply(lambda t: t.to(target, dtype if t.is_floating_point() else None,
                                              memory_format=memory_format
                                              if t.dim() in (4, 5) else None))
        if dtype is None and (target is None
                              or all(t.device == target for t in self._all_tensors())):
            return self
        return self._apply(lambda t: t.to(target, dtype if t.is_floating_point() else None))

    def _check_leaves_meta(self, target):
        """Moving off 'meta' has no data to copy: PyTorch's error, pointing to to_empty."""
        if target.type != "meta" and any(t.is_meta for t in self._all_tensors()):
            raise NotImplementedError(
                "Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() "
                "instead of torch.nn.Module.to() when moving module from meta to a different "
                "device.")

    def _all_tensors(self):
        for module in self.modules():
            yield from (p for p in module._parameters.values() if p is not None)
            yield from (b for b in module._buffers.values() if b is not None)

    def to_empty(self: T, *, device: Optional[Union[int, str, device]],
                 recurse: bool = True) -> T:
        """Replace parameters and buffers by uninitialized tensors of the same shape and
        dtype on ``device`` ('cpu' or 'meta'); submodules too unless ``recurse=False``: how a
        module built on 'meta' gets memory.

        >>> import ember
        >>> layer = ember.nn.Linear(2, 3).to_empty(device="cpu")
        >>> layer.weight.shape, layer.weight.dtype
        (ember.Size([3, 2]), ember.float32)
        """
        device = check_device(device)
        return self._apply(lambda t: _empty_like(t, device), recurse=recurse)

    def double(self: T) -> T:
        """``to(ember.float64)``.

        >>> import ember
        >>> ember.nn.Linear(2, 2).double().bias.dtype
        ember.float64
        """
        return self.to(_dtype("float64"))

    def float(self: T) -> T:
        """``to(ember.float32)``.

        >>> import ember
        >>> ember.nn.Linear(2, 2).double().float().bias.dtype
        ember.float32
        """
        return self.to(_dtype("float32"))

    def half(self: T) -> T:
        """``to(ember.float16)``.

        >>> import ember
        >>> ember.nn.Linear(2, 2).half().bias.dtype
        ember.float16
        """
        return self.to(_dtype("float16"))

    def bfloat16(self: T) -> T:
        """``to(ember.bfloat16)``: floating parameters and buffers only.

        >>> import ember
        >>> ember.nn.Linear(2, 2).bfloat16().bias.dtype
        ember.bfloat16
        """
        return self.to(_dtype("bfloat16"))

    def share_memory(self: T) -> T:
        """``share_memory_()`` on every parameter and buffer; returns self. ember's CPU
        tensors cannot be moved into shared memory, so this raises NotImplementedError for a
        module holding any (a module without tensors, or on CUDA, is returned as is).

        >>> import ember
        >>> ember.nn.ReLU().share_memory()
        ReLU()
        """
        return self._apply(lambda t: t.share_memory_())

    def cpu(self: T) -> T:
        """Moves parameters, buffers and gradients to the CPU, in place; returns self.

        >>> import ember
        >>> layer = ember.nn.Linear(2, 2)
        >>> layer.cpu() is layer
        True
        """
        return self.to("cpu")

    def cuda(self: T, device: Optional[Union[int, str, device]] = None) -> T:
        """Moves parameters, buffers and gradients to the CUDA device, in place. Without a
        CUDA array module (CuPy and a GPU) it raises as a CPU-only PyTorch build does.

        >>> import ember
        >>> if not ember.cuda.is_available():
        ...     ember.nn.Linear(2, 2).cuda()
        Traceback (most recent call last):
            ...
        AssertionError: Torch not compiled with CUDA enabled
        """
        if device is None:
            device = "cuda"
        elif isinstance(device, int) and not isinstance(device, bool):
            device = device_cls("cuda", device)
        target = check_device(device)
        if target.type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
        return self.to(target)

    # ---- hooks ------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` before forward; may return new args.

        With ``with_kwargs=True`` it is ``hook(module, args, kwargs)`` and may return
        ``(args, kwargs)``; ``prepend=True`` runs it before the hooks already registered.

        >>> import ember
        >>> m = ember.nn.Identity()
        >>> handle = m.register_forward_pre_hook(lambda module, args: (args[0] * 10,))
        >>> m(ember.ones(2))
        tensor([10., 10.])
        >>> handle.remove()
        >>> m(ember.ones(2))
        tensor([1., 1.])
        """
        return _hooks.add(self, "_forward_pre_hooks", hook, prepend,
                          "_forward_pre_hooks_with_kwargs" if with_kwargs else None)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` after forward; may return a new output.

        With ``with_kwargs=True`` it is ``hook(module, args, kwargs, output)``.

        >>> import ember
        >>> seen = []
        >>> m = ember.nn.Linear(3, 2)
        >>> handle = m.register_forward_hook(lambda mod, args, out: seen.append(out.shape))
        >>> _ = m(ember.zeros(4, 3))
        >>> seen
        [ember.Size([4, 2])]
        """
        handle = _hooks.add(self, "_forward_hooks", hook, prepend,
                            "_forward_hooks_with_kwargs" if with_kwargs else None)
        if always_call:
            self._forward_hooks_always_called.add(handle._key)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any],
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` once the module's input grads are known;
        may return a replacement ``grad_input``.

        >>> import ember
        >>> m = ember.nn.Identity()
        >>> grads = []
        >>> _ = m.register_full_backward_hook(lambda mod, gin, gout: grads.append(gout[0]))
        >>> x = ember.ones(2, requires_grad=True)
        >>> (m(x) * 3).sum().backward()
        >>> grads
        [tensor([3., 3.])]
        """
        return _hooks.add(self, "_backward_hooks", hook, prepend, None)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any],
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` before the module's backward; may replace grad_output.

        >>> import ember
        >>> m = ember.nn.Identity()
        >>> _ = m.register_full_backward_pre_hook(lambda mod, gout: (gout[0] * 0,))
        >>> x = ember.ones(2, requires_grad=True)
        >>> m(x).sum().backward()
        >>> x.grad
        tensor([0., 0.])
        """
        return _hooks.add(self, "_backward_pre_hooks", hook, prepend, None)

    register_backward_hook = register_full_backward_hook

    # ---- printing ---------------------------------------------------------------------
    def extra_repr(self) -> str:
        """Extra information for ``repr``; override in subclasses.

        >>> import ember
        >>> class Scale(ember.nn.Module):
        ...     def __init__(self, factor):
        ...         super().__init__()
        ...         self.factor = factor
        ...     def extra_repr(self):
        ...         return f"factor={self.factor}"
        >>> Scale(2.0)
        Scale(factor=2.0)
        """
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for key, module in self._modules.items():
            lines.append("(" + key + "): " + _addindent(repr(module), 2))
        name = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                name += lines[0]
            else:
                name += "\n  " + "\n  ".join(lines) + "\n"
        return name + ")"


_UNREACHABLE = ("Reached a code path in Module.{}() that should never be called. Please file "
                "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml"
                " to report this bug.")


def _empty_like(t, device):
    return _creation.empty_like(t, device=device)


def _dtype(name):
    return from_name(name)


def _check_name(module, name, kind, registry):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in registry:
        raise KeyError(f"attribute '{name}' already exists")


def _remove_from(module, name, skip):
    for registry in ("_parameters", "_buffers", "_modules"):
        if registry == skip:
            continue
        reg = module.__dict__.get(registry)
        if reg is not None and name in reg:
            del reg[name]
    module.__dict__.pop(name, None)
    if skip != "_buffers":
        module.__dict__["_non_persistent_buffers_set"].discard(name) \
            if "_non_persistent_buffers_set" in module.__dict__ else None


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward (before its own pre-hooks).

    >>> import ember
    >>> seen = []
    >>> handle = ember.nn.modules.module.register_module_forward_pre_hook(
    ...     lambda mod, args: seen.append(type(mod).__name__))
    >>> _ = ember.nn.ReLU()(ember.ones(1))
    >>> handle.remove()
    >>> seen
    ['ReLU']
    """
    return _hooks.add_global(_hooks.global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` after every module's forward (before its own hooks);
    ``hook(module, args, kwargs, output)`` with ``with_kwargs=True``; with
    ``always_call=True`` also when forward raises.

    >>> import ember
    >>> seen = []
    >>> handle = ember.nn.modules.module.register_module_forward_hook(
    ...     lambda mod, args, out: seen.append(out.shape))
    >>> _ = ember.nn.ReLU()(ember.ones(2))
    >>> handle.remove()
    >>> seen
    [ember.Size([2])]
    """
    handle = _hooks.add_global(_hooks.global_forward_hooks, hook)
    if with_kwargs:
        _hooks.global_forward_hooks_with_kwargs.add(handle._key)
    if always_call:
        _hooks.global_forward_hooks_always_called.add(handle._key)
    return handle


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_output)`` before every module's backward pre-hooks.

    >>> import ember
    >>> seen = []
    >>> handle = ember.nn.modules.module.register_module_full_backward_pre_hook(
    ...     lambda mod, gout: seen.append(gout[0]))
    >>> ember.nn.Identity()(ember.ones(2, requires_grad=True)).sum().backward()
    >>> handle.remove()
    >>> seen
    [tensor([1., 1.])]
    """
    return _hooks.add_global(_hooks.global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` before every module's full backward hooks.

    >>> import ember
    >>> seen = []
    >>> handle = ember.nn.modules.module.register_module_full_backward_hook(
    ...     lambda mod, gin, gout: seen.append(gin[0]))
    >>> (ember.nn.Identity()(ember.ones(2, requires_grad=True)) * 2).sum().backward()
    >>> handle.remove()
    >>> seen
    [tensor([2., 2.])]
    """
    return _hooks.add_global(_hooks.global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, buffer)`` whenever a buffer is registered; may return another.

    >>> import ember
    >>> handle = ember.nn.modules.module.register_module_buffer_registration_hook(
    ...     lambda mod, name, buf: buf * 2)
    >>> m = ember.nn.Module()
    >>> m.register_buffer("b", ember.ones(1))
    >>> handle.remove()
    >>> m.b
    tensor([2.])
    """
    return _hooks.add_global(_hooks.global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, submodule)`` whenever a submodule is registered.

    >>> import ember
    >>> seen = []
    >>> handle = ember.nn.modules.module.register_module_module_registration_hook(
    ...     lambda mod, name, sub: seen.append(name))
    >>> _ = ember.nn.Sequential(ember.nn.ReLU())
    >>> handle.remove()
    >>> seen
    ['0']
    """
    return _hooks.add_global(_hooks.global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, param)`` whenever a parameter is registered.

    >>> import ember
    >>> seen = []
    >>> handle = ember.nn.modules.module.register_module_parameter_registration_hook(
    ...     lambda mod, name, p: seen.append(name))
    >>> _ = ember.nn.Linear(2, 2)
    >>> handle.remove()
    >>> seen
    ['weight', 'bias']
    """
    return _hooks.add_global(_hooks.global_parameter_registration_hooks, hook)


register_module_backward_hook = register_module_full_backward_hook

__all__ = ["Module", "RemovableHandle", "register_module_forward_pre_hook",
           "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]
