"""``ember.distributed``: several processes training one model, on MPI (mpi4py).

Start the processes with ``python -m ember.distributed.run -n 4 script.py`` (mpiexec);
each calls ``init_process_group("mpi")`` and then the collectives below, which work in
place on tensors as ``torch.distributed``'s do. See docs/distributed.md.

>>> import ember.distributed as dist
>>> dist.is_initialized()
False
"""
from .process_group import (Backend, ProcessGroup, GroupMember, group, is_available,
                            is_mpi_available, init_process_group, is_initialized,
                            destroy_process_group, get_rank, get_world_size, get_backend,
                            new_group, default_pg_timeout)
from .collectives import (ReduceOp, Work, all_reduce, broadcast, all_gather,
                          all_gather_into_tensor, reduce_scatter, reduce_scatter_tensor, reduce,
                          gather, scatter, send, recv, isend, irecv, barrier)

__all__ = ["Backend", "ProcessGroup", "GroupMember", "group", "is_available",
           "is_mpi_available", "init_process_group", "is_initialized", "destroy_process_group",
           "get_rank", "get_world_size", "get_backend", "new_group", "default_pg_timeout",
           "ReduceOp", "Work", "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor", "reduce", "gather", "scatter", "send",
           "recv", "isend", "irecv", "barrier"]
