"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from __future__ import annotations

import operator
from collections import OrderedDict
from itertools import islice
from typing import (TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Optional, TypeVar, Union,
                    overload)

from .module import Module, _addindent
from ..parameter import Parameter

if TYPE_CHECKING:
    from ..._tensor import Tensor
    # type checkers see the mixin's methods as Module methods (at run time it is a plain
    # class that only ever comes before Module in a container's bases)
    _MixinBase = Module
else:
    _MixinBase = object

#: what ModuleDict/ParameterDict take: a mapping, or ``(name, value)`` pairs
_ModuleItems = Union[Mapping[str, Module], Iterable[tuple[str, Module]]]
_ParameterItems = Union[Mapping[str, Any], Iterable[tuple[str, Any]]]
_M = TypeVar("_M", bound="_NumberedModules")
_P = TypeVar("_P", bound="ParameterList")


class _NumberedModules(_MixinBase):
    """len/iter/append/extend/insert for containers whose children are keyed '0', '1', ..."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self: _M, module: Module) -> _M:
        """Add ``module`` at the end.

        >>> from ember import nn
        >>> nn.ModuleList([nn.ReLU()]).append(nn.Tanh())
        ModuleList(
          (0): ReLU()
          (1): Tanh()
        )
        """
        self.add_module(str(len(self)), module)
        return self

    def extend(self: _M, modules: Iterable[Module]) -> _M:
        """Add ``modules`` at the end, in order.

        >>> from ember import nn
        >>> len(nn.Sequential(nn.ReLU()).extend([nn.ReLU(), nn.Tanh()]))
        3
        """
        for m in modules:
            self.append(m)
        return self

    def insert(self: _M, index: int, module: Module) -> _M:
        """Put ``module`` before position ``index`` (children are renumbered).

        >>> from ember import nn
        >>> nn.Sequential(nn.ReLU(), nn.Tanh()).insert(1, nn.Identity())
        Sequential(
          (0): ReLU()
          (1): Identity()
          (2): Tanh()
        )
        """
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._renumber(mods)
        return self

    def _renumber(self, modules: list[Optional[Module]]) -> None:
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)


class Sequential(_NumberedModules, Module):
    """Modules called one after another; ``Sequential(a, b)`` or ``Sequential(OrderedDict)``.

    >>> import ember
    >>> from collections import OrderedDict
    >>> from ember import nn
    >>> len(nn.Sequential(nn.Identity(), nn.Identity()))
    2
    >>> net = nn.Sequential(OrderedDict(scale=nn.Linear(1, 1, bias=False), act=nn.ReLU()))
    >>> _ = nn.init.constant_(net.scale.weight, -2.0)
    >>> net(ember.tensor([[1.0], [-1.0]]))
    tensor([[0.],
            [2.]], grad_fn=<ReluBackward0>)
    >>> net[-1], net[:1]
    (ReLU(), Sequential(
      (scale): Linear(in_features=1, out_features=1, bias=False)
    ))
    """

    @overload
    def __init__(self, *args: Module) -> None: ...

    @overload
    def __init__(self, arg: OrderedDict[str, Module], /) -> None: ...

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator: Iterator[Any], idx: int) -> Any:
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        idx %= size
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx: Union[int, slice]) -> Union[Sequential, Module]:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(iter(self._modules.values()), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = self._get_item_by_idx(iter(self._modules.keys()), idx)
        setattr(self, key, module)

    def __delitem__(self, idx: Union[int, slice]) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(iter(self._modules.keys()), idx))
        self._renumber(list(self._modules.values()))

    def __add__(self, other: Sequential) -> Sequential:
        return Sequential(*self, *other)

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(_NumberedModules, Module):
    """A list of modules, registered so their parameters are found.

    >>> from ember import nn
    >>> layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    >>> layers[-1] is layers[2]
    True
    """

    def __init__(self, modules: Optional[Iterable[Module]] = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _index(self, idx: int) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx % len(self))

    def __getitem__(self, idx: Union[int, slice]) -> Union[Module, ModuleList]:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._index(idx), module)

    def __delitem__(self, idx: Union[int, slice]) -> None:
        mods = list(self._modules.values())
        del mods[idx]
        self._renumber(mods)

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList(list(self) + list(other))

    def insert(self, index: int, module: Module) -> None:  # type: ignore[override]
        """Put ``module`` before position ``index``; returns None, like PyTorch's.

        >>> from ember import nn
        >>> layers = nn.ModuleList([nn.ReLU()])
        >>> layers.insert(0, nn.Tanh())
        >>> list(layers)
        [Tanh(), ReLU()]
        """
        super().insert(index, module)

    def forward(self, *args: Any) -> Any:
        raise NotImplementedError("ModuleList is not callable; iterate over it instead")

    def __repr__(self) -> str:
        """Runs of identical entries print once, as '(0-2): 3 x Linear(...)' (like PyTorch)."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs: list[list[Any]] = []  # [first index, last index, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for first, last, r in runs:
            head = f"({first})" if first == last else f"({first}-{last}): {last - first + 1} x"
            lines.append(_addindent(f"{head}{':' if first == last else ''} {r}", 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, registered so their parameters are found.

    >>> from ember import nn
    >>> heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "box": nn.Linear(8, 4)})
    >>> list(heads), heads["box"].out_features
    (['cls', 'box'], 4)
    >>> "cls" in heads, len(list(heads.parameters()))
    (True, 4)
    """

    def __init__(self, modules: Optional[_ModuleItems] = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module.

        >>> from ember import nn
        >>> d = nn.ModuleDict({"act": nn.ReLU()})
        >>> d.clear()
        >>> len(d)
        0
        """
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove the module under ``key`` and return it.

        >>> from ember import nn
        >>> d = nn.ModuleDict({"act": nn.ReLU()})
        >>> d.pop("act"), len(d)
        (ReLU(), 0)
        """
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Iterable[str]:
        """The names, in insertion order.

        >>> from ember import nn
        >>> list(nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()}).keys())
        ['a', 'b']
        """
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        """``(name, module)`` pairs, in insertion order.

        >>> from ember import nn
        >>> list(nn.ModuleDict({"a": nn.ReLU()}).items())
        [('a', ReLU())]
        """
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        """The modules, in insertion order.

        >>> from ember import nn
        >>> list(nn.ModuleDict({"a": nn.ReLU()}).values())
        [ReLU()]
        """
        return self._modules.values()

    def update(self, modules: _ModuleItems) -> None:
        """Add the modules of a mapping, or of an iterable of ``(name, module)`` pairs.

        >>> from ember import nn
        >>> d = nn.ModuleDict()
        >>> d.update([("a", nn.ReLU()), ("b", nn.Tanh())])
        >>> list(d)
        ['a', 'b']
        """
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self[key] = module


class ParameterList(Module):
    """A list of parameters; plain tensors are wrapped into Parameters.

    >>> import ember
    >>> from ember import nn
    >>> params = nn.ParameterList([ember.zeros(2), nn.Parameter(ember.ones(3))])
    >>> len(params), type(params[0]).__name__
    (2, 'Parameter')
    >>> [name for name, _ in params.named_parameters()]
    ['0', '1']
    """

    def __init__(self, values: Optional[Iterable[Any]] = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx: Union[int, slice]) -> Any:
        if isinstance(idx, slice):
            return ParameterList(list(self)[idx])
        idx = operator.index(idx)
        if not -self._size <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return getattr(self, str(idx % self._size))

    def __setitem__(self, idx: int, param: Any) -> None:
        idx = operator.index(idx) % self._size
        if not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self._size))

    def __iadd__(self: _P, params: Iterable[Any]) -> _P:
        return self.extend(params)

    def append(self: _P, value: Any) -> _P:
        """Add ``value`` at the end (a tensor becomes a Parameter).

        >>> import ember
        >>> params = ember.nn.ParameterList().append(ember.zeros(2))
        >>> params[0]
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
        """
        new_idx = self._size
        self._size += 1
        if not isinstance(value, Parameter):
            value = Parameter(value)
        self.register_parameter(str(new_idx), value)
        return self

    def extend(self: _P, values: Iterable[Any]) -> _P:
        """Add ``values`` at the end, in order.

        >>> import ember
        >>> len(ember.nn.ParameterList().extend([ember.zeros(1), ember.zeros(2)]))
        2
        """
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        lines = []
        for k, p in enumerate(self):
            size = "x".join(str(s) for s in p.size())
            lines.append(f"  ({k}): Parameter containing: [ember.{_legacy(p)} of size {size}]")
        return "\n".join(lines)

    def __repr__(self) -> str:
        body = self.extra_repr()
        return "ParameterList(" + ("\n" + body + "\n" if body else "") + ")"


class ParameterDict(Module):
    """A dict of parameters; plain tensors are wrapped into Parameters.

    >>> import ember
    >>> from ember import nn
    >>> params = nn.ParameterDict({"scale": ember.ones(2), "shift": ember.zeros(2)})
    >>> list(params), params["scale"].requires_grad
    (['scale', 'shift'], True)
    """

    def __init__(self, parameters: Optional[_ParameterItems] = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        if not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def keys(self) -> Iterable[str]:
        """The names, in insertion order.

        >>> import ember
        >>> list(ember.nn.ParameterDict({"a": ember.zeros(1)}).keys())
        ['a']
        """
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """``(name, parameter)`` pairs, in insertion order.

        >>> import ember
        >>> d = ember.nn.ParameterDict({"a": ember.zeros(1)})
        >>> [(k, tuple(p.shape)) for k, p in d.items()]
        [('a', (1,))]
        """
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        """The parameters, in insertion order.

        >>> import ember
        >>> [tuple(p.shape) for p in ember.nn.ParameterDict({"a": ember.zeros(1)}).values()]
        [(1,)]
        """
        return (self[k] for k in self._keys)

    def pop(self, key: str) -> Any:
        """Remove the parameter under ``key`` and return it.

        >>> import ember
        >>> d = ember.nn.ParameterDict({"a": ember.zeros(1)})
        >>> d.pop("a").shape, len(d)
        (ember.Size([1]), 0)
        """
        v = self[key]
        del self[key]
        return v

    def update(self, parameters: _ParameterItems) -> None:
        """Add the entries of a mapping, or of an iterable of ``(name, tensor)`` pairs.

        >>> import ember
        >>> d = ember.nn.ParameterDict()
        >>> d.update([("a", ember.zeros(1)), ("b", ember.zeros(2))])
        >>> list(d)
        ['a', 'b']
        """
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for k, v in items:
            self[k] = v

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            size = "x".join(str(s) for s in p.size())
            lines.append(f"  ({k}): Parameter containing: [ember.{_legacy(p)} of size {size}]")
        return "\n".join(lines)

    def __repr__(self) -> str:
        body = self.extra_repr()
        return "ParameterDict(" + ("\n" + body + "\n" if body else "") + ")"


def _legacy(p: Tensor) -> str:
    return {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor"}.get(
        p.dtype.name, "Tensor")
