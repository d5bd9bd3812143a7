"""``DataLoader``: batches from a dataset, in the main process or in worker processes.

>>> import ember
>>> from ember.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(ember.arange(5.), ember.arange(5))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]

With ``num_workers > 0`` batches are made by worker processes (forked where the platform
allows it) and come back in the same order as with ``num_workers=0``. An exception in a
worker is raised again in the main process, with the worker's traceback in the message.

Each worker sends its results through a pipe of its own whose write end only that worker
holds, so a worker that dies, even halfway through sending a batch, shows as end-of-file to
the main process instead of a read that never ends. Workers exit by themselves once the main
process is gone; iterators still alive when the interpreter exits stop their workers first.
"""
from __future__ import annotations

import atexit
import itertools
import multiprocessing
import multiprocessing.connection  # before the atexit hook below: see _shutdown_live_iterators
import os
import pickle
import signal
import sys
import time
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterable, Optional, TypeVar, Union

from . import _worker
from ._collate import default_collate, default_convert
from ._worker import ExceptionWrapper, _IterableDatasetStopIteration, _ResumeIteration
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from ...random import rng

if TYPE_CHECKING:
    from ...random import Generator

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

get_worker_info = _worker.get_worker_info

_POLL_INTERVAL = 0.5  # seconds between checks that the workers are still alive
_EXIT_STATUS_WAIT = 1.0  # seconds to wait for the exit status of a worker whose pipe closed

#: the multi-process iterators whose workers may still run
_live_iterators: weakref.WeakSet[_MultiProcessingDataLoaderIter] = weakref.WeakSet()


def _shutdown_live_iterators():
    """At interpreter exit, stop the workers of iterators still alive, while the interpreter
    still works. Registered after multiprocessing's own exit hook, so it runs before that
    one terminates the (daemonic) workers."""
    for iterator in list(_live_iterators):
        iterator._shutdown_workers()


atexit.register(_shutdown_live_iterators)


class _InfiniteConstantSampler(Sampler):
    """For IterableDataset: ``None`` forever (the dataset decides when to stop)."""

    def __init__(self):
        pass

    def __iter__(self):
        while True:
            yield None


T_co = TypeVar("T_co", covariant=True)  # what the dataset yields: ``DataLoader[Tensor]``


class DataLoader(Generic[T_co]):
    """Iterate over ``dataset`` in batches (PyTorch's DataLoader, same arguments).

    ``shuffle=True`` draws a new permutation each epoch from ``generator`` (ember's default
    generator if None); ``batch_size=None`` turns automatic batching off; ``collate_fn``
    defaults to :func:`default_collate`. ``num_workers`` worker processes fetch batches in
    parallel, each seeded with ``base_seed + worker_id`` (``ember``, ``random`` and NumPy's
    legacy global stream); ``worker_init_fn(worker_id)`` runs first in each;
    ``persistent_workers`` keeps them alive between epochs. ``pin_memory=True`` warns, as
    PyTorch does on a machine with no accelerator, and pins nothing.

    >>> import ember
    >>> from ember.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(ember.arange(6.).reshape(3, 2), ember.tensor([0, 1, 0]))
    >>> loader = DataLoader(ds, batch_size=2, shuffle=True,
    ...                     generator=ember.Generator().manual_seed(0))
    >>> [(tuple(x.shape), tuple(y.shape)) for x, y in loader]
    [((2, 2), (2,)), ((1, 2), (1,))]
    >>> len(loader)
    2
    """

    __initialized = False

    def __init__(self, dataset: Any, batch_size: Optional[int] = 1,
                 shuffle: Optional[bool] = None,
                 sampler: Union[Sampler, Iterable[Any], None] = None,
                 batch_sampler: Union[Sampler, Iterable[list[Any]], None] = None,
                 num_workers: int = 0, collate_fn: Optional[Callable[[list[Any]], Any]] = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Optional[Callable[[int], None]] = None,
                 multiprocessing_context: Union[str, multiprocessing.context.BaseContext,
                                                None] = None,
                 generator: Optional[Generator] = None, *, prefetch_factor: Optional[int] = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind_iterable = True
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind_iterable = False

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator: Optional[_BaseDataLoaderIter] = None
        self.__initialized = True

    @property
    def multiprocessing_context(self) -> Optional[multiprocessing.context.BaseContext]:
        """The context worker processes start from (None: fork on Linux, else the default)."""
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(
            self, context: Union[str, multiprocessing.context.BaseContext, None]) -> None:
        if context is not None:
            if self.num_workers > 0:
                if isinstance(context, str):
                    methods = multiprocessing.get_all_start_methods()
                    if context not in methods:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start method "
                            f"in {methods!r}, but got multiprocessing_context={context!r}")
                    context = multiprocessing.get_context(context)
                if not isinstance(context, multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got "
                        f"multiprocessing_context={context}")
            else:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
        self.__multiprocessing_context = context

    def __setattr__(self, attr: str, val: Any) -> None:
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                           "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._dataset_kind_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._kind_iterable = loader._dataset_kind_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._collate_fn = loader.collate_fn
        self._timeout = loader.timeout
        self._persistent_workers = loader.persistent_workers
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(rng(loader.generator).integers(0, 2 ** 62))
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        if self._sampler_iter is None:
            self._reset(None)
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _worker.create_fetcher(self._kind_iterable, self._dataset,
                                               self._auto_collation, self._collate_fn,
                                               self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


def _default_context():
    if sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._shutdown = True  # until the workers exist
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context or _default_context()
        self._workers_done_event = ctx.Event()
        self._index_queues = []
        self._result_readers = []  # worker i's results arrive on _result_readers[i]
        self._open_readers = {}  # reader -> worker id, for the pipes not at end-of-file yet
        self._workers = []
        self._stopped = []
        self._owner_pid = os.getpid()
        self._shutdown = False
        _live_iterators.add(self)
        for worker_id in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            reader, writer = ctx.Pipe(duplex=False)
            w = ctx.Process(
                target=_worker._worker_loop,
                args=(self._kind_iterable, self._dataset, index_queue, writer,
                      self._workers_done_event, self._auto_collation, self._collate_fn,
                      self._drop_last, self._base_seed, loader.worker_init_fn, worker_id,
                      self._num_workers),
                daemon=True)
            w.start()
            # closed before the next worker is forked: the worker is the pipe's only writer
            writer.close()
            self._index_queues.append(index_queue)
            self._result_readers.append(reader)
            self._open_readers[reader] = worker_id
            self._workers.append(w)
            self._stopped.append(False)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: start a new epoch, drop the old one's leftovers
            for q in self._index_queues:
                q.put(_ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout):
        """``(True, (idx, data))`` from whichever worker has a result ready within ``timeout``
        seconds, else ``(False, None)``; raises if a worker died."""
        for reader in multiprocessing.connection.wait(list(self._open_readers), timeout):
            worker_id = self._open_readers[reader]
            try:
                payload = reader.recv_bytes()
            except (EOFError, OSError):  # the worker's end closed: it has exited
                del self._open_readers[reader]
                if not self._stopped[worker_id]:
                    self._workers[worker_id].join(timeout=_EXIT_STATUS_WAIT)
                    self._raise_worker_failure([worker_id])
                continue
            return True, pickle.loads(payload)
        failed = [i for i, w in enumerate(self._workers)
                  if self._workers_status[i] and not w.is_alive()]
        if failed:
            self._raise_worker_failure(failed)
        return False, None

    def _raise_worker_failure(self, worker_ids):
        """Stop the other workers and raise PyTorch's error for workers that died."""
        failed = [self._workers[i] for i in worker_ids]
        failed += [w for i, w in enumerate(self._workers)  # others that died as well
                   if i not in worker_ids and not self._stopped[i] and w.exitcode is not None]
        self._shutdown_workers()
        pids = ", ".join(str(w.pid) for w in failed)
        error = RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly")
        reasons = [_exit_reason(w) for w in failed]
        raise error from next((r for r in reasons if r is not None), None)

    def _get_data(self):
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _POLL_INTERVAL
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            ok, data = self._try_get_data(wait)
            if ok:
                return data
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker has finished its stream
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            if self._shutdown or self._tasks_outstanding <= 0:
                raise StopIteration
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._kind_iterable and isinstance(data, _IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                if not self._persistent_workers:
                    self._stop_worker(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if self._in_order:
                    self._task_info[idx] += (data,)
                    continue
                del self._task_info[idx]
                return self._process_data(data)
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process_data(data)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _stop_worker(self, worker_id):
        if not self._stopped[worker_id]:
            self._stopped[worker_id] = True
            self._index_queues[worker_id].put(None)

    def _shutdown_workers(self):
        """Stop every worker: ask politely, wait a little, then terminate."""
        if getattr(self, "_shutdown", True) or os.getpid() != self._owner_pid:
            return  # nothing started, done already, or a forked copy in another process
        self._shutdown = True
        _live_iterators.discard(self)
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                self._stop_worker(worker_id)
            for w in self._workers:
                w.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            for reader in self._result_readers:  # unread results are dropped with the pipes
                reader.close()
            self._open_readers.clear()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=1)

    def __del__(self):
        # at interpreter exit the atexit hook has stopped the workers already: nothing to do
        # (and nothing that needs imports, which no longer work then)
        if not getattr(self, "_shutdown", True):
            self._shutdown_workers()


def _exit_reason(worker):
    """PyTorch's words for how a dead worker ended; None for exit code 0 or not known."""
    code = worker.exitcode
    if code is None or code == 0:
        return None
    if code > 0:
        return RuntimeError(
            f"DataLoader worker (pid {worker.pid}) exited unexpectedly with exit code {code}. "
            "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give "
            "better error trace.")
    try:
        name = signal.strsignal(-code) or f"signal {-code}"
    except ValueError:
        name = f"signal {-code}"
    return RuntimeError(f"DataLoader worker (pid {worker.pid}) is killed by signal: {name}. ")
