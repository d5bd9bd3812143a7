"""Starting ``nprocs`` processes that each run ``fn(i, *args)``, and joining them so that a
child's failure surfaces in the parent: an exception raised in a child becomes a
``ProcessRaisedException`` carrying the child's traceback text, a child that exits with a
nonzero code (or is killed by a signal) a ``ProcessExitedException``.

>>> import ember.multiprocessing as mp
>>> mp.start_processes(print, nprocs=0) is None
True
"""
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import traceback
import warnings

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException", "SpawnContext"]


class ProcessException(Exception):
    """A child of ``spawn`` failed: ``error_index`` (its i) and ``error_pid``."""
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A child raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child exited with a nonzero ``exit_code`` (negative: killed by ``signal_name``)."""
    __slots__ = ["exit_code", "signal_name"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _run_child(fn, i, args, error_file):
    """The child's entry point: the traceback of an exception goes to ``error_file``."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent interrupted us while tearing down after another child failed
    except Exception:
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes(..., join=False)`` started; ``join()`` them."""

    def __init__(self, processes, error_files):
        self.processes = processes
        self.error_files = error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        """The children's process ids, by index."""
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout):
        for p in self.processes:
            p.join(timeout)

    def join(self, timeout=None, grace_period=None):
        """Wait (at most ``timeout`` seconds) for the children: True once all exited
        cleanly, False while some still run. When one failed, the others are stopped
        (after ``grace_period`` seconds, SIGTERM, then SIGKILL) and its exception raised."""
        if not self.sentinels:
            return True
        failed = None
        for sentinel in multiprocessing.connection.wait(list(self.sentinels), timeout=timeout):
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        self._stop_the_others(grace_period)
        raise self._failure(failed)

    def _stop_the_others(self, grace_period):
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join()

    def _failure(self, index):
        process, path = self.processes[index], self.error_files[index]
        if os.access(path, os.R_OK):
            with open(path, "rb") as f:
                trace = pickle.load(f)
            return ProcessRaisedException(
                f"\n\n-- Process {index:d} terminated with the following error:\n{trace}",
                index, process.pid)
        code = process.exitcode
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            return ProcessExitedException(f"process {index:d} terminated with signal {name}",
                                          index, process.pid, code, name)
        return ProcessExitedException(f"process {index:d} terminated with exit code {code:d}",
                                      index, process.pid, code)


class SpawnContext(ProcessContext):
    """Deprecated name of ProcessContext."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=2)
        super().__init__(processes, error_files)


def _error_file():
    """A fresh path the child creates only when it raised (existence is the signal)."""
    fd, path = tempfile.mkstemp(prefix="ember-errorfile-", suffix=".pickle")
    os.close(fd)
    os.unlink(path)
    return path


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes (``start_method``: 'spawn', 'fork' or 'forkserver'),
    the i-th running ``fn(i, *args)``; with ``join`` wait for all of them (None), else
    return their ProcessContext.

    >>> import ember.multiprocessing as mp
    >>> mp.start_processes(print, nprocs=0, join=False).pids()
    []
    """
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        error_files.append(_error_file())
        p = ctx.Process(target=_run_child, args=(fn, i, args, error_files[-1]), daemon=daemon)
        p.start()
        processes.append(p)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``start_processes`` with the 'spawn' start method (another one warns and is not
    used). ``fn`` must be importable by the children (defined at a module's top level).

    >>> import ember.multiprocessing as mp
    >>> mp.spawn(print, nprocs=0) is None
    True
    """
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t"
                      " torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
