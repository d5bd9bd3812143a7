"""Collectives and point-to-point messages on MPI, in PyTorch's ``torch.distributed`` form.

Every operation hands the tensors' own arrays to mpi4py's buffer calls (the upper-case
``Iallreduce``, ``Ibcast``, ...: no pickling); a non-contiguous tensor goes through a
contiguous copy that is written back. Each call starts a non-blocking MPI request; with
``async_op=True`` it returns the ``Work`` handle, else it waits. Waits are bounded by the
group's timeout (``init_process_group(timeout=...)``): past it a watchdog thread aborts
the MPI job, naming the operation and the rank, instead of hanging.

Reductions run in the tensor's dtype, except float16 and bfloat16 (summed in float32,
then rounded once) and bool (SUM/MAX are a logical or, PRODUCT/MIN a logical and, as in
PyTorch). ``ReduceOp.AVG`` is the sum divided by the group size in place, so an integer
tensor raises PyTorch's casting error.
"""
import enum

import numpy as np

from .._tensor import Tensor
from ..backend import get_array_module, to_host
from ..backend.dtypes import is_float_np
from .process_group import GroupMember, _mpi, default_group, watchdog

__all__ = ["ReduceOp", "Work", "all_reduce", "broadcast", "all_gather",
           "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "reduce",
           "gather", "scatter", "send", "recv", "isend", "irecv", "barrier"]


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


class ReduceOp:
    """How a reduction combines the ranks' values: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``,
    ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR``.

    >>> import ember.distributed as dist
    >>> dist.ReduceOp.SUM
    <RedOpType.SUM: 0>
    """
    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR


_MPI_OPS = {RedOpType.SUM: "SUM", RedOpType.AVG: "SUM", RedOpType.PRODUCT: "PROD",
            RedOpType.MIN: "MIN", RedOpType.MAX: "MAX", RedOpType.BAND: "BAND",
            RedOpType.BOR: "BOR", RedOpType.BXOR: "BXOR"}
_BOOL_OPS = {RedOpType.SUM: "LOR", RedOpType.MAX: "LOR", RedOpType.BOR: "LOR",
             RedOpType.PRODUCT: "LAND", RedOpType.MIN: "LAND", RedOpType.BAND: "LAND",
             RedOpType.BXOR: "LXOR"}
_WIDENED = ("float16", "bfloat16")  # no MPI type of their own: reduced in float32


class Work:
    """A started operation: ``wait()`` (True once done; the job ends past the timeout),
    ``is_completed()``, ``is_success()``, ``result()`` (its output tensors)."""

    def __init__(self, requests, finish, timeout, what, rank, outputs=()):
        self._requests = list(requests)
        self._statuses = None
        self._finish = finish
        self._timeout = timeout
        self._what = what
        self._rank = rank
        self._outputs = list(outputs)
        self._done = False

    def _complete(self):
        self._done = True
        finish, self._finish = self._finish, None
        if finish is not None:
            finish(self._statuses)

    def is_completed(self):
        if not self._done and self._test():
            self._complete()
        return self._done

    def _test(self):
        MPI = _mpi()
        if self._statuses is None:
            self._statuses = [MPI.Status() for _ in self._requests]
        return MPI.Request.Testall(self._requests, self._statuses)

    def wait(self, timeout=None):
        """Block until done; past the timeout (the group's unless given) the watchdog
        aborts the job, naming the operation and this rank."""
        if self._done:
            return True
        if self._test():  # done already: no guard needed
            self._complete()
            return True
        limit = (timeout if timeout is not None else self._timeout).total_seconds()
        key = watchdog.guard(self._what, limit)
        try:
            _mpi().Request.Waitall(self._requests, self._statuses)
        finally:
            watchdog.done(key)
        self._complete()
        return True

    def is_success(self):
        return self.is_completed()

    def result(self):
        return self._outputs

    def exception(self):
        return None

    def __repr__(self):
        state = "completed" if self._done else "pending"
        return f"<ember.distributed.Work {self._what} ({state})>"


def _check_tensor(t, name):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")


def _check_tensor_list(ts, name):
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor]\n             but got {type(ts)} instead.")


def _host(t):
    """A C-contiguous host array holding ``t``'s values: its own storage when it can be."""
    data = to_host(t._data)
    return data if data.flags.c_contiguous else np.ascontiguousarray(data)


def _write(t, values):
    """Store the host array ``values`` into tensor ``t`` in place (a no-op when it is
    already ``t``'s storage) and count the change in its version."""
    data = t._data
    if values is not data:
        data[...] = get_array_module(data).asarray(values.reshape(data.shape))
    t._vc[0] += 1


def _as_bytes(arr):
    return arr.reshape(-1).view(np.uint8)


def _operation(op):
    if isinstance(op, int) and not isinstance(op, RedOpType):
        try:
            op = RedOpType(op)
        except ValueError:
            op = None
    if not isinstance(op, RedOpType):
        raise ValueError(f"Unsupported ReduceOp: {op!r}")
    return op


def _reduction(t, op, pg):
    """(host buffer to reduce, MPI op, finish(buffer) writing the result into ``t``)."""
    op = _operation(op)
    MPI = _mpi()
    dtype = t._data.dtype
    # AVG: the sum divided in place, as torch (so floating and complex tensors only)
    if op is RedOpType.AVG and not is_float_np(dtype) and dtype.kind != "c":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{t.dtype.scalar_name}")
    if dtype.kind == "b":
        mpi_op = getattr(MPI, _BOOL_OPS[op])
    elif op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype.kind not in "iu":
        raise RuntimeError(f"ReduceOp.{op.name} needs an integer or bool tensor, got "
                           f"{t.dtype}")
    else:
        mpi_op = getattr(MPI, _MPI_OPS[op])
    buf = _host(t)
    if dtype.name in _WIDENED:
        buf = buf.astype(np.float32)
    size = pg.size()

    def finish(result):
        if op is RedOpType.AVG:
            result /= size
        if result.dtype != dtype:
            result = result.astype(dtype)
        _write(t, result)
    return buf, mpi_op, finish


def _member(pg):
    return pg is not GroupMember.NON_GROUP_MEMBER


def _issue(pg, requests, finish, what, async_op, outputs=()):
    work = Work(requests, finish, pg.timeout, what, GroupMember.WORLD.rank(), outputs)
    if async_op:
        return work
    work.wait()
    return None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over every rank of the group; each rank's ``tensor`` gets the
    result, in place.

    >>> import ember, ember.distributed as dist
    >>> t = ember.tensor([1.0, 2.0])
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM)   # doctest: +SKIP
    """
    _check_tensor(tensor, "tensor")
    pg = default_group(group)
    if not _member(pg):
        return None
    buf, mpi_op, finish = _reduction(tensor, op, pg)
    request = pg.comm.Iallreduce(_mpi().IN_PLACE, buf, op=mpi_op)
    return _issue(pg, [request], lambda _: finish(buf), "all_reduce", async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every other rank of the group."""
    _check_tensor(tensor, "tensor")
    pg = default_group(group)
    if not _member(pg):
        return None
    root = _root(pg, src, group_src, "src")
    buf = _host(tensor)
    request = pg.comm.Ibcast(_as_bytes(buf), root=root)
    finish = (lambda _: _write(tensor, buf)) if pg.rank() != root else None
    return _issue(pg, [request], finish, "broadcast", async_op, [tensor])


def _root(pg, rank, group_rank, what):
    """The group rank named by a global ``rank`` or a ``group_rank`` (exactly one)."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        if group_rank < 0 or group_rank >= pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg!r}")
        return group_rank
    if rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    if rank not in pg.ranks:
        raise ValueError(f"Global rank {rank} is not part of group {pg!r}")
    return pg.ranks.index(rank)


def _same_as(t, ref, name):
    if t._data.dtype != ref._data.dtype:
        raise RuntimeError(f"{name}: tensors must all have the dtype {ref.dtype}, got "
                           f"{t.dtype}")
    if t._data.shape != ref._data.shape:
        raise RuntimeError(f"{name}: tensors must all have the shape {tuple(ref.shape)}, got "
                           f"{tuple(t.shape)}")


def _check_list_length(tensors, pg, name):
    if len(tensors) != pg.size():
        raise RuntimeError(f"{name} must hold one tensor per rank of the group: expected "
                           f"{pg.size()}, got {len(tensors)}")


def _stacked(tensors, ref):
    """The tensors' values, one after the other, in one contiguous host array."""
    out = np.empty((len(tensors),) + ref._data.shape, ref._data.dtype)
    for i, t in enumerate(tensors):
        out[i] = to_host(t._data)
    return out


def _unstack(arr, tensors):
    for i, t in enumerate(tensors):
        _write(t, np.ascontiguousarray(arr[i]))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor``, gathered into ``tensor_list`` (one per rank) on each."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    pg = default_group(group)
    if not _member(pg):
        return None
    _check_list_length(tensor_list, pg, "all_gather: tensor_list")
    for t in tensor_list:
        _same_as(t, tensor, "all_gather")
    send = _host(tensor)
    recv = np.empty((pg.size(),) + send.shape, send.dtype)
    request = pg.comm.Iallgather(_as_bytes(send), _as_bytes(recv))
    return _issue(pg, [request], lambda _: _unstack(recv, tensor_list), "all_gather",
                  async_op, tensor_list)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor``, concatenated (or stacked) in rank order into
    ``output_tensor`` on each rank."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = default_group(group)
    if not _member(pg):
        return None
    if output_tensor._data.dtype != input_tensor._data.dtype:
        raise RuntimeError("output tensor must have the same type as input tensor")
    if output_tensor._data.size != pg.size() * input_tensor._data.size:
        raise RuntimeError("output tensor size must be equal to world_size times input tensor "
                           "size")
    send, recv = _host(input_tensor), _host(output_tensor)
    request = pg.comm.Iallgather(_as_bytes(send), _as_bytes(recv))
    return _issue(pg, [request], lambda _: _write(output_tensor, recv),
                  "all_gather_into_tensor", async_op, [output_tensor])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list`` over the ranks; rank ``i`` gets the reduction of everyone's
    ``input_list[i]`` in ``output``."""
    _check_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    pg = default_group(group)
    if not _member(pg):
        return None
    _check_list_length(input_list, pg, "reduce_scatter: input_list")
    for t in input_list:
        _same_as(t, output, "reduce_scatter")
    return _reduce_scatter(output, _stacked(input_list, output), op, pg, async_op,
                           "reduce_scatter")


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``reduce_scatter`` with the inputs concatenated in one tensor (rank ``i``'s share
    is the ``i``-th block of ``output.numel()`` elements)."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = default_group(group)
    if not _member(pg):
        return None
    if output._data.dtype != input._data.dtype:
        raise RuntimeError("input tensor must be the same type as the output tensor.")
    if input._data.size != pg.size() * output._data.size:
        raise RuntimeError("input tensor must be the same size as output size times world "
                           "size")
    return _reduce_scatter(output, _host(input), op, pg, async_op, "reduce_scatter_tensor")


def _reduce_scatter(output, stacked, op, pg, async_op, what):
    buf, mpi_op, finish = _reduction(output, op, pg)
    send = stacked.reshape(-1).astype(buf.dtype, copy=False)
    request = pg.comm.Ireduce_scatter_block(send, buf, op=mpi_op)
    return _issue(pg, [request], lambda _: finish(buf), what, async_op, [output])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the ranks into rank ``dst``'s ``tensor`` (the others keep
    theirs)."""
    _check_tensor(tensor, "tensor")
    pg = default_group(group)
    if not _member(pg):
        return None
    root = _root(pg, dst, group_dst, "dst")
    buf, mpi_op, finish = _reduction(tensor, op, pg)
    if pg.rank() == root:
        request = pg.comm.Ireduce(_mpi().IN_PLACE, buf, op=mpi_op, root=root)
        done = lambda _: finish(buf)
    else:
        request = pg.comm.Ireduce(buf, None, op=mpi_op, root=root)
        done = None
    return _issue(pg, [request], done, "reduce", async_op, [tensor])


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (only there)."""
    _check_tensor(tensor, "tensor")
    pg = default_group(group)
    if not _member(pg):
        return None
    if dst is None and group_dst is None:
        dst = 0  # gather and scatter default to rank 0, as PyTorch's
    root = _root(pg, dst, group_dst, "dst")
    send = _host(tensor)
    if pg.rank() == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_tensor_list(gather_list, "gather_list")
        _check_list_length(gather_list, pg, "gather: gather_list")
        for t in gather_list:
            _same_as(t, tensor, "gather")
        recv = np.empty((pg.size(),) + send.shape, send.dtype)
        request = pg.comm.Igather(_as_bytes(send), _as_bytes(recv), root=root)
        return _issue(pg, [request], lambda _: _unstack(recv, gather_list), "gather",
                      async_op, gather_list)
    if gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    request = pg.comm.Igather(_as_bytes(send), None, root=root)
    return _issue(pg, [request], None, "gather", async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank ``src``'s ``scatter_list[i]`` into rank ``i``'s ``tensor``."""
    _check_tensor(tensor, "tensor")
    pg = default_group(group)
    if not _member(pg):
        return None
    if src is None and group_src is None:
        src = 0
    root = _root(pg, src, group_src, "src")
    recv = _host(tensor)
    if pg.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_tensor_list(scatter_list, "scatter_list")
        _check_list_length(scatter_list, pg, "scatter: scatter_list")
        for t in scatter_list:
            _same_as(t, tensor, "scatter")
        send = _stacked(scatter_list, tensor)
        request = pg.comm.Iscatter(_as_bytes(send), _as_bytes(recv), root=root)
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
        request = pg.comm.Iscatter(None, _as_bytes(recv), root=root)
    return _issue(pg, [request], lambda _: _write(tensor, recv), "scatter", async_op,
                  [tensor])


def _peer(pg, rank, group_rank, what):
    peer = _root(pg, rank, group_rank, what)
    if peer == pg.rank():
        kind = "destination" if what == "dst" else "source"
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank "
                         "of the current process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to rank ``dst``; returns a ``Work``."""
    _check_tensor(tensor, "tensor")
    pg = default_group(group)
    if not _member(pg):
        return None
    peer = _peer(pg, dst, group_dst, "dst")
    buf = _host(tensor)
    request = pg.comm.Isend(_as_bytes(buf), dest=peer, tag=tag)
    return Work([request], lambda _: buf, pg.timeout, "send", GroupMember.WORLD.rank())


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None)."""
    _check_tensor(tensor, "tensor")
    pg = default_group(group)
    if not _member(pg):
        return None
    MPI = _mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else \
        _peer(pg, src, group_src, "src")
    buf = _host(tensor)
    request = pg.comm.Irecv(_as_bytes(buf), source=peer, tag=tag)
    work = Work([request], None, pg.timeout, "recv", GroupMember.WORLD.rank(), [tensor])

    def finish(statuses):
        _write(tensor, buf)
        work.source = pg.ranks[statuses[0].Get_source()]
    work._finish = finish
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` and wait until it is on its way."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns the
    sender's rank (-1 outside the group)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.source


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank of the group has reached it."""
    pg = default_group(group)
    if not _member(pg):
        return None
    work = Work([pg.comm.Ibarrier()], None, timeout or pg.timeout, "barrier",
                GroupMember.WORLD.rank())
    if async_op:
        return work
    work.wait()
    return None
