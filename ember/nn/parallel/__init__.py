"""``ember.nn.parallel``: DataParallel and data_parallel (single process, no accelerator),
DistributedDataParallel (one process per replica, on ``ember.distributed``).

>>> import ember.nn as nn
>>> nn.parallel.DataParallel(nn.Identity()).device_ids
[]
"""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "data_parallel", "DistributedDataParallel"]
