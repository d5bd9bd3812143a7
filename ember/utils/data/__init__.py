"""``ember.utils.data``: datasets, samplers and the DataLoader, as in ``torch.utils.data``."""
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset,
                      ChainDataset, Subset, random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,
                      WeightedRandomSampler, BatchSampler)
from .dataloader import DataLoader
from .distributed import DistributedSampler
from ._collate import default_collate, default_convert
from ._worker import get_worker_info, WorkerInfo

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DataLoader", "DistributedSampler", "default_collate", "default_convert",
           "get_worker_info", "WorkerInfo"]
