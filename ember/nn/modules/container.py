"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
import operator
from collections import OrderedDict
from itertools import islice

from .module import Module, _addindent
from ..parameter import Parameter


class _NumberedModules:
    """len/iter/append/extend/insert for containers whose children are keyed '0', '1', ..."""

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._renumber(mods)
        return self

    def _renumber(self, modules):
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)


class Sequential(_NumberedModules, Module):
    """Modules called one after another; ``Sequential(a, b)`` or ``Sequential(OrderedDict)``.

    >>> from ember import nn
    >>> len(nn.Sequential(nn.Identity(), nn.Identity()))
    2
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        idx %= size
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(iter(self._modules.values()), idx)

    def __setitem__(self, idx, module):
        key = self._get_item_by_idx(iter(self._modules.keys()), idx)
        setattr(self, key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(iter(self._modules.keys()), idx))
        self._renumber(list(self._modules.values()))

    def __add__(self, other):
        return Sequential(*self, *other)

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(_NumberedModules, Module):
    """A list of modules, registered so their parameters are found."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _index(self, idx):
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx % len(self))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._index(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._index(idx), module)

    def __delitem__(self, idx):
        mods = list(self._modules.values())
        del mods[idx]
        self._renumber(mods)

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def insert(self, index, module):
        super().insert(index, module)  # returns None, like PyTorch's ModuleList.insert

    def forward(self, *args):
        raise NotImplementedError("ModuleList is not callable; iterate over it instead")

    def __repr__(self):
        """Runs of identical entries print once, as '(0-2): 3 x Linear(...)' (like PyTorch)."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = []  # [first index, last index, repr]
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
    """A dict of modules, registered so their parameters are found."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self[key] = module


class ParameterList(Module):
    """A list of parameters; plain tensors are wrapped into Parameters."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList(list(self)[idx])
        idx = operator.index(idx)
        if not -self._size <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return getattr(self, str(idx % self._size))

    def __setitem__(self, idx, param):
        idx = operator.index(idx) % self._size
        if not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(self._size))

    def __iadd__(self, params):
        return self.extend(params)

    def append(self, value):
        new_idx = self._size
        self._size += 1
        if not isinstance(value, Parameter):
            value = Parameter(value)
        self.register_parameter(str(new_idx), value)
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        lines = []
        for k, p in enumerate(self):
            size = "x".join(str(s) for s in p.size())
            lines.append(f"  ({k}): Parameter containing: [ember.{_legacy(p)} of size {size}]")
        return "\n".join(lines)

    def __repr__(self):
        body = self.extra_repr()
        return "ParameterList(" + ("\n" + body + "\n" if body else "") + ")"


class ParameterDict(Module):
    """A dict of parameters; plain tensors are wrapped into Parameters."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        if not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def update(self, parameters):
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for k, v in items:
            self[k] = v

    def extra_repr(self):
        lines = []
        for k, p in self.items():
            size = "x".join(str(s) for s in p.size())
            lines.append(f"  ({k}): Parameter containing: [ember.{_legacy(p)} of size {size}]")
        return "\n".join(lines)

    def __repr__(self):
        body = self.extra_repr()
        return "ParameterDict(" + ("\n" + body + "\n" if body else "") + ")"


def _legacy(p):
    return {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor"}.get(
        p.dtype.name, "Tensor")
