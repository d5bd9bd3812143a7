"""What runs inside a DataLoader worker process, and the pieces both sides share."""
from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import random
import sys
import threading
import traceback
from typing import Any, Optional

import numpy as np

from ..._creation import tensor
from ...backend.parallel import set_num_threads
from ...random import manual_seed
from ._collate import default_collate
from .dataset import TensorDataset

__all__ = ["get_worker_info", "WorkerInfo"]

MP_STATUS_CHECK_INTERVAL = 5.0  # seconds the main process gives a worker to stop when asked
#: seconds between a waiting worker's checks that the main process is still there: a worker
#: whose main process was killed exits this long after it
MAIN_CHECK_INTERVAL = 1.0

_worker_info = None


class WorkerInfo:
    """Read-only facts about the current worker: ``id``, ``num_workers``, ``seed``, ``dataset``
    (the worker's own copy of the dataset).

    >>> from ember.utils.data import WorkerInfo
    >>> info = WorkerInfo(id=0, num_workers=2, seed=7, dataset=None)
    >>> info
    WorkerInfo(id=0, num_workers=2, seed=7, dataset=None)
    >>> info.id = 1
    Traceback (most recent call last):
        ...
    RuntimeError: Cannot assign attributes to WorkerInfo objects
    """
    id: int
    num_workers: int
    seed: int
    dataset: Any

    __initialized = False

    def __init__(self, **kwargs: Any) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key: str, val: Any) -> None:
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self) -> str:
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


def get_worker_info() -> Optional[WorkerInfo]:
    """The :class:`WorkerInfo` of this DataLoader worker process; ``None`` in the main process.

    An IterableDataset uses it to give each worker its own share of the stream:

    >>> from ember.utils.data import DataLoader, IterableDataset, get_worker_info
    >>> class Range(IterableDataset):
    ...     def __iter__(self):
    ...         info = get_worker_info()
    ...         if info is None:  # loading in the main process: everything
    ...             return iter(range(4))
    ...         return iter(range(info.id, 4, info.num_workers))
    >>> get_worker_info() is None
    True
    >>> [batch.tolist() for batch in DataLoader(Range(), batch_size=2)]
    [[0, 1], [2, 3]]
    """
    return _worker_info


class KeyErrorMessage(str):
    """A KeyError's message printed as is (KeyError normally shows the repr of its argument)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process with its traceback text."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        exc_type = exc_info[0]
        try:  # the type travels by reference; a type the main process can't import becomes None
            pickle.loads(pickle.dumps(exc_type))
        except Exception:
            exc_type = None
        self.exc_type = exc_type
        self.exc_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the worker's exception again, its original traceback in the message."""
        raise self._exception()  # not bound to a local: no frame <-> traceback cycle

    def _exception(self):
        msg = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        exc_type = self.exc_type if self.exc_type is not None else RuntimeError
        if exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(exc_type, "message", None):
            try:
                return exc_type(message=msg)
            except Exception:
                return RuntimeError(msg)
        try:
            return exc_type(msg)
        except Exception:
            return RuntimeError(msg)


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    def __init__(self, seed=None):
        self.seed = seed


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, index):
        if self.auto_collation:
            batch = _tensor_dataset_batch(self.dataset, index, self.collate_fn)
            if batch is not None:
                return batch
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems is not None:
                data = getitems(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


def _tensor_dataset_batch(dataset, index, collate_fn):
    """A plain TensorDataset batched by ``default_collate``: the batch as one row gather per
    tensor (``index_select``), the values and list layout ``default_collate`` makes of the
    samples ``t[i]`` (a stack per tensor), without making them one by one (~20 us each).
    None when anything differs (a subclass, another collate_fn, a tensor requiring grad, an
    index that is not a list of in-range integers): the general path then runs, and raises
    what it raises."""
    if collate_fn is not default_collate or type(dataset) is not TensorDataset:
        return None
    tensors = dataset.tensors
    if any(t.requires_grad for t in tensors):
        return None
    try:
        rows = np.asarray(index)
    except (TypeError, ValueError):
        return None
    n = len(dataset)
    if rows.ndim != 1 or not len(rows) or rows.dtype.kind not in "iu" \
            or rows.min() < -n or rows.max() >= n:
        return None
    rows = tensor(rows % n if rows.min() < 0 else rows, dtype=None).long()
    return [t.index_select(0, rows) for t in tensors]


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(kind_iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if kind_iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _seed_everything(seed, worker_id, base_seed):
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))


class _ResultSender:
    """Sends a worker's pickled results to the main process over the worker's own pipe, from a
    background thread: the worker goes on fetching while a large batch is still being written.

    The thread is a daemon and nobody waits for it: when the worker stops (asked to, or the
    main process is gone) results not yet sent are dropped, as nobody will read them."""

    def __init__(self, conn):
        self._conn = conn
        self._pending = queue.SimpleQueue()
        threading.Thread(target=self._send_forever, name="DataLoader result sender",
                         daemon=True).start()

    def put(self, payload):
        self._pending.put(payload)

    def _send_forever(self):
        while True:
            payload = self._pending.get()
            try:
                self._conn.send_bytes(payload)
            except OSError:  # the main process closed its end: nobody left to send to
                return


def _pickled_result(idx, data, worker_id):
    try:
        return pickle.dumps((idx, data))
    except Exception:
        error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        return pickle.dumps((idx, error))


class _MainProcessWatch:
    """Whether the main process of this worker still exists.

    Two signs that it is gone: the worker's parent changed (the main process, or the fork
    server that started the worker, exited), or the pipe end that multiprocessing keeps open in
    the main process for each child closed. The second alone can lag behind under fork (workers
    forked later hold copies of it), and a fork server outlives the main process while workers
    hold its socket, so the first alone is not enough either."""

    def __init__(self):
        self._parent_pid = os.getppid()
        self._main_process = multiprocessing.parent_process()

    def main_alive(self):
        if os.getppid() != self._parent_pid:
            return False
        return self._main_process is None or self._main_process.is_alive()


def _worker_loop(kind_iterable, dataset, index_queue, result_conn, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    """The body of a worker process: take ``(idx, indices)`` tasks, send ``(idx, batch)``.

    Returns when the main process sends ``None`` or is gone (checked every
    ``MAIN_CHECK_INTERVAL`` seconds while idle)."""
    global _worker_info
    main_process = _MainProcessWatch()
    try:
        # the workers already run in parallel: intra-op threads would only compete for cores
        set_num_threads(1)
        seed = base_seed + worker_id
        _seed_everything(seed, worker_id, base_seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        sender = _ResultSender(result_conn)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(kind_iterable, dataset, auto_collation, collate_fn,
                                     drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        while main_process.main_alive():
            try:
                r = index_queue.get(timeout=MAIN_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                sender.put(pickle.dumps((r, None)))
                iteration_end = False
                if kind_iterable:  # a fresh pass over the stream
                    try:
                        fetcher = create_fetcher(kind_iterable, dataset, auto_collation,
                                                 collate_fn, drop_last)
                    except Exception:
                        init_exception = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
                continue
            if r is None:  # the main process asks us to stop
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and kind_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            sender.put(_pickled_result(idx, data, worker_id))
            del data, r
    except KeyboardInterrupt:
        pass
