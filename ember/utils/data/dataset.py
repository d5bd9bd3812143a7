"""Datasets: map-style (``__getitem__``/``__len__``) and iterable-style, as in ``torch.utils.data``.

>>> from ember.utils.data import TensorDataset
>>> import ember
>>> ds = TensorDataset(ember.arange(4), ember.arange(4) * 10)
>>> len(ds), ds[2]
(4, (tensor(2), tensor(20)))
"""
from __future__ import annotations

import bisect
import itertools
import math
import warnings
from typing import (TYPE_CHECKING, Any, Generic, Iterable, Iterator, Optional, Sequence, Sized,
                    TypeVar, Union)

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...random import Generator

from ..._creation import randperm

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)  # what a dataset yields: ``Dataset[Tensor]``


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).

    ``a + b`` concatenates two datasets into a :class:`ConcatDataset`.

    >>> from ember.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __getitem__(self, i):
    ...         return i * i
    ...     def __len__(self):
    ...         return self.n
    >>> both = Squares(3) + Squares(2)
    >>> len(both), [both[i] for i in range(len(both))]
    (5, [0, 1, 4, 0, 1])
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker process iterates its own copy; use
    :func:`get_worker_info` inside ``__iter__`` to split the work between them.

    >>> from ember.utils.data import IterableDataset
    >>> class Count(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    >>> list(Count(2) + Count(3))
    [0, 1, 0, 1, 2]
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset["tuple[Tensor, ...]"]):
    """Samples are ``tuple(t[i] for t in tensors)``; all tensors share their first dimension.

    >>> import ember
    >>> from ember.utils.data import TensorDataset
    >>> ds = TensorDataset(ember.zeros(3, 2), ember.tensor([7, 8, 9]))
    >>> x, y = ds[1]
    >>> len(ds), x.shape, y
    (3, ember.Size([2]), tensor(8))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset[T_co]):
    """Zip datasets of equal length: ``StackDataset(a, b)[i] == (a[i], b[i])``;
    keyword form ``StackDataset(x=a, y=b)[i] == {'x': a[i], 'y': b[i]}``.

    >>> from ember.utils.data import StackDataset
    >>> StackDataset([1, 2], ["a", "b"])[1]
    (2, 'b')
    >>> StackDataset(x=[1, 2], y=["a", "b"])[0]
    {'x': 1, 'y': 'a'}
    """
    datasets: Union[tuple[Any, ...], dict[str, Any]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- "
                                 "(via ``kwargs``) like input/output, but both types are given.")
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(d) for d in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index: Any) -> Union[tuple[Any, ...], dict[str, Any]]:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """The concatenation of map-style datasets.

    >>> from ember.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
    (5, 3, 5, [2, 5])
    """

    @staticmethod
    def cumsum(sequence: Iterable[Sized]) -> list[int]:
        """The running totals of the lengths.

        >>> ConcatDataset.cumsum([[1, 2], [3]])
        [2, 3]
        """
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset[T_co]):
    """The concatenation of iterable datasets, chained lazily.

    >>> from ember.utils.data import ChainDataset, IterableDataset
    >>> class Letters(IterableDataset):
    ...     def __init__(self, text):
    ...         self.text = text
    ...     def __iter__(self):
    ...         return iter(self.text)
    >>> list(ChainDataset([Letters("ab"), Letters("c")]))
    ['a', 'b', 'c']
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order.

    >>> from ember.utils.data import Subset
    >>> sub = Subset(["a", "b", "c", "d"], [3, 0])
    >>> len(sub), sub[0], sub[1]
    (2, 'd', 'a')
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Union[int, list[int]]) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[Union[int, float]],
                 generator: Optional[Generator] = None) -> list[Subset]:
    """Split ``dataset`` at random into :class:`Subset` s of the given lengths.

    ``lengths`` may be fractions summing to 1: each split gets ``floor(frac * len)``
    and the remainder is dealt out one by one from the first split (PyTorch's rule).
    The permutation comes from ``generator`` (ember's default generator if None).

    >>> import ember
    >>> from ember.utils.data import random_split
    >>> train, val = random_split(range(10), [0.8, 0.2],
    ...                           generator=ember.Generator().manual_seed(0))
    >>> len(train), len(val)
    (8, 2)
    >>> sorted(list(train) + list(val))
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              f"This might result in an empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
