"""The gradient reducer under DistributedDataParallel: buckets, hooks, overlap.

Parameters are put in buckets in reverse order (the order backward usually produces
their gradients), a bucket holding one dtype and at most ``bucket_cap_bytes``. Each
parameter's post-accumulate-grad hook marks it ready; once a bucket and all the buckets
before it are ready (MPI matches collectives by their order, which must be the same on
every rank), its gradients are copied into one flat array and a non-blocking MPI
all-reduce (``Iallreduce``) starts while backward goes on. The first hook of a pass queues a final
callback on the autograd engine, which runs once backward is done: it waits for every
bucket and writes the averaged gradients back into ``.grad``.

Parameters that got no gradient: with ``find_unused_parameters`` they count as zeros (their
buckets are started by the final callback), and a parameter no rank used keeps its
``.grad``; without it their buckets are never reduced and the next synchronised forward
raises PyTorch's error naming them.
"""
import numpy as np

from .._tensor import Tensor
from ..autograd.engine import queue_callback
from ..backend import get_array_module, to_host
from .collectives import Work
from .process_group import GroupMember, _mpi

__all__ = ["Reducer"]

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}")


class _Bucket:
    """Parameters (by index) reduced together, and the state of one pass."""

    def __init__(self, indices, dtype):
        self.indices = indices
        self.dtype = dtype
        self.pending = len(indices)
        self.flat = None
        self.work = None


def _buckets(params, cap_bytes, first_cap_bytes):
    """Indices of ``params`` in buckets: reverse order, one dtype per bucket, at most
    ``cap_bytes`` each (a parameter larger than that alone), the first bucket at most
    ``first_cap_bytes`` (so the first reduction starts early)."""
    buckets, open_by_dtype = [], {}
    for i in reversed(range(len(params))):
        data = params[i]._data
        current = open_by_dtype.get(data.dtype)
        if current is None or current[1] + data.nbytes > current[2]:
            cap = min(first_cap_bytes, cap_bytes) if not buckets else cap_bytes
            current = [_Bucket([], data.dtype), 0, cap]
            open_by_dtype[data.dtype] = current
            buckets.append(current[0])
        current[0].indices.append(i)
        current[1] += data.nbytes
    return buckets


class Reducer:
    """Average the gradients of ``params`` over the ranks of ``group`` during backward."""

    def __init__(self, params, group, bucket_cap_bytes, find_unused_parameters,
                 first_bucket_bytes=1024 * 1024):
        self.params = list(params)
        self.group = group
        self.find_unused = find_unused_parameters
        self.buckets = _buckets(self.params, bucket_cap_bytes, first_bucket_bytes)
        self.bucket_of = {}
        for b in self.buckets:
            for i in b.indices:
                self.bucket_of[i] = b
        self.ready = [False] * len(self.params)
        self.armed = False          # this backward reduces (a synchronised forward ran)
        self.finalizing = False     # the final callback is queued
        self.unreduced = None       # indices left without a gradient by the last pass
        self.started_in_backward = 0  # buckets of the last pass started before it ended
        self.next_bucket = 0        # buckets start in order: MPI matches collectives by order
        self.handles = [p.register_post_accumulate_grad_hook(self._hook_for(i))
                        for i, p in enumerate(self.params)]

    def _hook_for(self, index):
        def mark_ready(param):
            self._mark_ready(index)
        return mark_ready

    def prepare_for_backward(self):
        """Called by a forward that synchronises: the next backward reduces."""
        if self.unreduced is not None:
            indices, self.unreduced = self.unreduced, None
            raise RuntimeError(_UNFINISHED.format(rank=GroupMember.WORLD.rank(),
                                                  indices=" ".join(map(str, indices))))
        self._reset()
        self.armed = True

    def disarm(self):
        """Called by a forward under ``no_sync``: its backward only accumulates."""
        self.armed = False

    def _reset(self):
        self.ready = [False] * len(self.params)
        self.finalizing = False
        self.started_in_backward = 0
        self.next_bucket = 0
        for b in self.buckets:
            b.pending, b.flat, b.work = len(b.indices), None, None

    def _mark_ready(self, index):
        if not self.armed:
            return
        if self.ready[index]:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. This error is caused by one of "
                f"the following reasons: 1) Use of a module parameter outside the `forward` "
                f"function. 2) Reused parameters in multiple reentrant backward passes. "
                f"Parameter at index {index} has been marked as ready twice.")
        if not self.finalizing:
            self.finalizing = True
            queue_callback(self._finalize)
        self.ready[index] = True
        self.bucket_of[index].pending -= 1
        while self.next_bucket < len(self.buckets) and \
                self.buckets[self.next_bucket].pending == 0:
            self._launch_next()
            self.started_in_backward += 1
        self._progress()

    def _progress(self):
        """Let MPI move the reductions in flight along (MPICH progresses on MPI calls)."""
        for b in self.buckets:
            if b.work is not None:
                b.work.is_completed()

    def _launch_next(self):
        bucket = self.buckets[self.next_bucket]
        self.next_bucket += 1
        parts = []
        for i in bucket.indices:
            grad = self.params[i]._grad
            if grad is None:  # no gradient here (find_unused_parameters): a zero share
                parts.append(np.zeros(self.params[i]._data.size, bucket.dtype))
            else:
                parts.append(to_host(grad._data).reshape(-1))
        bucket.flat = np.concatenate(parts) if len(parts) > 1 else parts[0].copy()
        pg = self.group
        request = pg.comm.Iallreduce(_mpi().IN_PLACE, bucket.flat, op=_mpi().SUM)
        bucket.work = Work([request], None, pg.timeout, "DistributedDataParallel all_reduce",
                           GroupMember.WORLD.rank())

    def _finalize(self):
        self.armed = False
        used = None
        if self.find_unused:
            # the rest of the buckets first, then the usage check: the same order of
            # collectives on every rank, whichever buckets filled during its backward
            while self.next_bucket < len(self.buckets):
                self._launch_next()
            used = self._globally_used()
        for b in self.buckets:
            if b.work is not None:
                b.work.wait()
        size = self.group.size()
        for b in self.buckets:
            if b.work is None:
                continue
            offset = 0
            for i in b.indices:
                param = self.params[i]
                n = param._data.size
                if used is None or used[i]:
                    self._store(param, b.flat[offset:offset + n] / size)
                offset += n
        if not self.find_unused and not all(self.ready):
            self.unreduced = [i for i, r in enumerate(self.ready) if not r]

    def _globally_used(self):
        """Whether each parameter got a gradient on any rank (one small all-reduce)."""
        mask = np.array(self.ready, dtype=np.int32)
        request = self.group.comm.Iallreduce(_mpi().IN_PLACE, mask, op=_mpi().MAX)
        Work([request], None, self.group.timeout, "DistributedDataParallel unused-parameter "
             "check", GroupMember.WORLD.rank()).wait()
        return mask.astype(bool)

    @staticmethod
    def _store(param, values):
        grad = param._grad
        if grad is None:
            xp = get_array_module(param._data)
            param._grad = Tensor._make(xp.asarray(values.reshape(param._data.shape)))
            return
        data = grad._data
        data[...] = get_array_module(data).asarray(values.reshape(data.shape))
        grad._vc[0] += 1

    def remove_hooks(self):
        for h in self.handles:
            h.remove()
        self.handles = []
