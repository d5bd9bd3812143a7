"""DistributedSampler against torch's: the same indices on every rank, epoch and option."""
import pytest
import torch
from torch.utils.data import DistributedSampler as TorchSampler

import ember
from ember.utils.data import DistributedSampler
from ember.utils.data.distributed import torch_randperm


@pytest.mark.parametrize("n", [0, 1, 5, 16, 33, 1000])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("shuffle,drop_last", [(True, False), (True, True), (False, False),
                                               (False, True)])
def test_indices_match_torch(n, replicas, shuffle, drop_last):
    for rank in range(replicas):
        for seed, epoch in [(0, 0), (0, 3), (12345, 1), (2 ** 40 + 7, 2)]:
            ours = DistributedSampler(range(n), replicas, rank, shuffle, seed, drop_last)
            theirs = TorchSampler(range(n), replicas, rank, shuffle, seed, drop_last)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert len(ours) == len(theirs)
            assert list(ours) == list(theirs)


@pytest.mark.parametrize("n,seed", [(10, 0), (257, 42), (5000, 2 ** 33 + 1)])
def test_permutation_is_torch_randperm(n, seed):
    want = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    assert torch_randperm(n, seed) == want


def test_ember_randperm_differs_from_torch():
    # documented: ember.randperm draws from PCG64, so only the sampler reproduces torch's
    g = ember.Generator().manual_seed(0)
    t = torch.Generator().manual_seed(0)
    assert ember.randperm(50, generator=g).tolist() != torch.randperm(50, generator=t).tolist()


def test_errors_match_torch():
    for rank in (2, -1):
        with pytest.raises(ValueError) as theirs:
            TorchSampler(range(4), num_replicas=2, rank=rank)
        with pytest.raises(ValueError) as ours:
            DistributedSampler(range(4), num_replicas=2, rank=rank)
        assert str(ours.value) == str(theirs.value)
