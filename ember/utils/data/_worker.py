"""What runs inside a DataLoader worker process, and the pieces both sides share."""
import os
import pickle
import queue
import random
import sys
import traceback

import numpy as np

__all__ = ["get_worker_info", "WorkerInfo"]

MP_STATUS_CHECK_INTERVAL = 5.0  # seconds between liveness checks while waiting on a queue

_worker_info = None


class WorkerInfo:
    """Read-only facts about the current worker: ``id``, ``num_workers``, ``seed``, ``dataset``
    (the worker's own copy of the dataset)."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


def get_worker_info():
    """The :class:`WorkerInfo` of this DataLoader worker process; ``None`` in the main process."""
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
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems is not None:
                data = getitems(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


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
    from ...random import manual_seed
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))


def _worker_loop(kind_iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers, parent_pid):
    """The body of a worker process: take ``(idx, indices)`` tasks, send ``(idx, batch)``."""
    global _worker_info
    try:
        seed = base_seed + worker_id
        _seed_everything(seed, worker_id, base_seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
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
        while os.getppid() == parent_pid:  # stop when the main process is gone
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put(pickle.dumps((r, None)))
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
            try:
                payload = pickle.dumps((idx, data))
            except Exception:
                data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                payload = pickle.dumps((idx, data))
            data_queue.put(payload)
            del data, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
