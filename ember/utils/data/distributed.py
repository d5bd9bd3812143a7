"""``DistributedSampler``: each rank's share of a dataset's indices.

The shares are PyTorch's, index for index: the shuffled order is the permutation that
``torch.randperm(n, generator=torch.Generator().manual_seed(seed + epoch))`` gives
(PyTorch's CPU randperm: a Fisher-Yates shuffle drawing 32-bit numbers from MT19937
seeded with the seed), not ember's own ``randperm``, which draws from PCG64. So a job
that mixes the two frameworks, or resumes from one in the other, sees the same batches.
"""
import math

import numpy as np

from ... import distributed as dist
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def torch_randperm(n, seed):
    """The permutation of ``range(n)`` PyTorch's CPU ``randperm`` gives for ``seed``
    (for n below 2**32 / 20, where it draws 32-bit numbers).

    >>> torch_randperm(10, 0)
    [4, 1, 7, 5, 3, 9, 0, 8, 6, 2]
    """
    if n >= 2 ** 32 // 20:
        raise NotImplementedError("DistributedSampler with shuffle=True supports datasets of "
                                  "fewer than 214748364 samples")
    # The legacy RandomState seeds MT19937 the way PyTorch does (the seed's low 32 bits).
    draws = np.random.RandomState(seed & 0xFFFFFFFF).randint(0, 2 ** 32, size=max(n - 1, 0),
                                                             dtype=np.uint64)
    perm = list(range(n))
    for i, draw in enumerate(draws.tolist()):
        j = i + draw % (n - i)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


class DistributedSampler(Sampler[int]):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` loads: every
    ``num_replicas``-th index of the (shuffled, padded to a multiple) list, from ``rank``.
    Call ``set_epoch(epoch)`` before each epoch for a new shuffle.

    >>> from ember.utils.data import DistributedSampler
    >>> list(DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False))
    [1, 4, 7, 0]
    >>> s = DistributedSampler(range(10), num_replicas=2, rank=0, seed=1)
    >>> s.set_epoch(3); len(s)
    5
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        indices = torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if not self.drop_last:
            missing = self.total_size - len(indices)
            if missing <= len(indices):
                indices += indices[:missing]
            else:  # fewer samples than ranks: repeat the list
                indices += (indices * math.ceil(missing / len(indices)))[:missing]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch whose shuffle the next ``iter()`` uses (seeded ``seed + epoch``)."""
        self.epoch = epoch
