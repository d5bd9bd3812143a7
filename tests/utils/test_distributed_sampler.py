"""DistributedSampler's partition (no process group: num_replicas and rank are given)."""
import pytest

from ember.utils.data import DataLoader, DistributedSampler
from ember.utils.data.distributed import torch_randperm


@pytest.mark.parametrize("n,replicas", [(10, 3), (12, 4), (2, 5), (7, 1)])
@pytest.mark.parametrize("shuffle", [True, False])
def test_ranks_cover_the_dataset_padded_to_equal_shares(n, replicas, shuffle):
    shares = [list(DistributedSampler(range(n), replicas, r, shuffle=shuffle))
              for r in range(replicas)]
    per_rank = -(-n // replicas)
    assert all(len(s) == per_rank for s in shares)
    merged = [i for s in shares for i in s]
    assert set(merged) == set(range(n))            # every sample, padded by repeats
    assert len(merged) == per_rank * replicas


def test_drop_last_drops_the_tail_instead_of_padding():
    shares = [list(DistributedSampler(range(10), 3, r, shuffle=False, drop_last=True))
              for r in range(3)]
    assert shares == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]


def test_set_epoch_reshuffles_reproducibly():
    s = DistributedSampler(range(50), 2, 0, seed=3)
    first = list(s)
    assert list(s) == first
    s.set_epoch(1)
    assert list(s) != first and sorted(list(s)) != first
    assert list(DistributedSampler(range(50), 2, 0, seed=4)) == list(s)  # seed + epoch


def test_permutation_is_pytorchs_randperm():
    # torch.randperm(10, generator=torch.Generator().manual_seed(0)) in PyTorch 2.13
    assert torch_randperm(10, 0) == [4, 1, 7, 5, 3, 9, 0, 8, 6, 2]
    assert sorted(torch_randperm(1000, 5)) == list(range(1000))
    assert torch_randperm(0, 0) == [] and torch_randperm(1, 0) == [0]


def test_invalid_rank_and_dataloader_use():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval "
                                         r"\[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler(range(4), num_replicas=2, rank=-1)
    loader = DataLoader(list(range(6)), batch_size=2,
                        sampler=DistributedSampler(range(6), 2, 1, shuffle=False))
    assert [b.tolist() for b in loader] == [[1, 3], [5]]
