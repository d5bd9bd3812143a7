"""``ember.fx.immutable_collections``: the list and dict types a Node's arguments are kept
in. Mutating one in place raises (a node's use-lists would go stale); assign a new value to
``node.args``/``node.kwargs`` instead.

>>> from ember.fx.immutable_collections import immutable_list
>>> immutable_list([1, 2]).append(3)
Traceback (most recent call last):
...
TypeError: 'immutable_list' object does not support mutation. If you are attempting to modify the kwargs or args of a torch.fx.Node object,
instead create a new copy of it and assign the copy to the node:
<BLANKLINE>
    new_args = ...  # copy and mutate args
    node.args = new_args
"""  # noqa: E501  (the doctest shows the error's long line)
from __future__ import annotations

from typing import Any, NoReturn

_HELP = ("If you are attempting to modify the kwargs or args of a torch.fx.Node object,\n"
         "instead create a new copy of it and assign the copy to the node:\n\n"
         "    new_args = ...  # copy and mutate args\n"
         "    node.args = new_args")


def _no_mutation(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"{type(self).__name__!r} object does not support mutation. {_HELP}")


class immutable_list(list):  # noqa: N801  (torch.fx's name)
    """A list that refuses in-place changes (a Node's list arguments)."""

    __delitem__ = __iadd__ = __imul__ = __setitem__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __reduce__(self) -> tuple:
        return (immutable_list, (list(self),))


class immutable_dict(dict):  # noqa: N801  (torch.fx's name)
    """A dict that refuses in-place changes (a Node's kwargs and dict arguments)."""

    __delitem__ = __ior__ = __setitem__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __reduce__(self) -> tuple:
        return (immutable_dict, (dict(self),))
