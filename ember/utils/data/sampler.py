"""Samplers: which indices a DataLoader fetches, and in which order.

Random samplers draw from ember's generators (PCG64): reproducible for a seed,
but not the same permutations PyTorch gives for that seed.

>>> import ember
>>> from ember.utils.data import BatchSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""
from __future__ import annotations

from typing import Generic, Iterable, Iterator, Optional, Sequence, Sized, TypeVar, Union

import numpy as np

from ..._creation import as_tensor, randint, randperm
from ..._tensor import Tensor
from ...backend import float64
from ...random import Generator, rng

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)  # what a sampler yields: ``Sampler[int]``


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` over indices (and usually ``__len__``).

    >>> from ember.utils.data import DataLoader, Sampler
    >>> class Backwards(Sampler):
    ...     def __init__(self, data_source):
    ...         self.n = len(data_source)
    ...     def __iter__(self):
    ...         return iter(range(self.n - 1, -1, -1))
    ...     def __len__(self):
    ...         return self.n
    >>> data = [10, 20, 30]
    >>> [batch.tolist() for batch in DataLoader(data, batch_size=2, sampler=Backwards(data))]
    [[30, 20], [10]]
    """

    def __init__(self, data_source: Optional[Sized] = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``.

    >>> from ember.utils.data import SequentialSampler
    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator() -> Generator:
    return Generator().manual_seed(int(rng(None).integers(0, 2 ** 63 - 1)))


class RandomSampler(Sampler[int]):
    """A random permutation of the indices (or ``num_samples`` draws with ``replacement``).

    Without ``generator`` every ``iter()`` seeds a fresh generator from ember's default one,
    so ``ember.manual_seed`` makes the order reproducible.

    >>> import ember
    >>> from ember.utils.data import RandomSampler
    >>> sampler = RandomSampler(range(5), generator=ember.Generator().manual_seed(0))
    >>> sorted(sampler)
    [0, 1, 2, 3, 4]
    >>> len(RandomSampler(range(5), replacement=True, num_samples=8))
    8
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: Optional[int] = None,
                 generator: Optional[Generator] = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields (``len(data_source)`` unless given)."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in random order, without replacement.

    >>> import ember
    >>> from ember.utils.data import SubsetRandomSampler
    >>> sampler = SubsetRandomSampler([7, 8, 9], generator=ember.Generator().manual_seed(0))
    >>> sorted(sampler), len(sampler)
    ([7, 8, 9], 3)
    """

    def __init__(self, indices: Sequence[int], generator: Optional[Generator] = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    >>> import ember
    >>> from ember.utils.data import WeightedRandomSampler
    >>> sampler = WeightedRandomSampler([0.0, 1.0, 0.0], num_samples=4,
    ...                                 generator=ember.Generator().manual_seed(0))
    >>> list(sampler)
    [1, 1, 1, 1]
    """

    def __init__(self, weights: Union[Sequence[float], Tensor], num_samples: int,
                 replacement: bool = True, generator: Optional[Generator] = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights = as_tensor(weights, dtype=float64)
        if len(weights.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        w = np.asarray(self.weights.numpy(), dtype=np.float64)
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement and self.num_samples > int((w > 0).sum()):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples "
                               "without replacement")
        draws = rng(self.generator).choice(len(w), size=self.num_samples,
                                           replace=self.replacement, p=w / w.sum())
        yield from draws.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler["list[int]"]):
    """Group the indices of ``sampler`` into lists of ``batch_size`` (the last may be short
    unless ``drop_last``).

    >>> from ember.utils.data import BatchSampler
    >>> list(BatchSampler(range(5), batch_size=2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Union[Sampler, Iterable[int]], batch_size: int,
                 drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        while True:
            batch = [idx for _, idx in zip(range(self.batch_size), it)]
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
