"""Helpers PyTorch programs import from ``torch.nn.modules.utils``: the argument
normalizers ``_single``/``_pair``/``_triple``/``_quadruple`` and
``consume_prefix_in_state_dict_if_present`` (strips DataParallel's ``module.``).

>>> from ember.nn.modules.utils import _pair
>>> _pair(3), _pair((1, 2))
((3, 3), (1, 2))
"""
from collections import abc
from itertools import repeat

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """Reverse ``t`` and repeat each element ``n`` times (F.pad's order from conv padding)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d
            for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Remove ``prefix`` from every key of ``state_dict`` that has it, in place (and from
    its ``_metadata`` when there is one): loads a DataParallel checkpoint into the bare
    module.

    >>> from collections import OrderedDict
    >>> sd = OrderedDict([("module.weight", 1), ("other", 2)])
    >>> consume_prefix_in_state_dict_if_present(sd, "module.")
    >>> list(sd)
    ['other', 'weight']
    """
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                metadata[key[len(prefix):]] = metadata.pop(key)
