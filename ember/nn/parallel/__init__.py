"""``ember.nn.parallel``: DataParallel and data_parallel (single process, no accelerator).

>>> import ember.nn as nn
>>> nn.parallel.DataParallel(nn.Identity()).device_ids
[]
"""
from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
