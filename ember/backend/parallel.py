"""ember's intra-op thread pool: large NumPy passes split along one axis, run concurrently.

NumPy releases the GIL inside its ufunc loops, copies and most reductions, so a pass over a
large array cut into a few chunks runs on several cores from plain Python threads. The pool
is small and persistent (``get_num_threads() - 1`` daemon workers; the calling thread runs
one chunk itself), started on first use, and only used for work above a size threshold:
small arrays stay on the calling thread, with no overhead beyond one comparison.

>>> import ember
>>> ember.get_num_threads() >= 1
True

* ``set_num_threads(n)`` / ``get_num_threads()``: PyTorch's API (process-wide). The default
  is the number of CPUs this process may run on (``os.sched_getaffinity``).
* ``parallel_for(n, fn, work)`` calls ``fn(lo, hi)`` on consecutive slices of ``range(n)``,
  concurrently when ``work`` (bytes the pass touches) is large enough: the threads claim
  slices (a few per thread) until none is left. Every kernel using it must give the same
  result whatever the split (the slices write disjoint parts of the output, so results are
  bitwise identical to the unsplit pass).

NumPy's BLAS: importing ember sets NumPy's OpenBLAS to one thread (``adopt_blas``; not when
``OPENBLAS_NUM_THREADS``, ``GOTO_NUM_THREADS`` or ``OMP_NUM_THREADS`` is set), and ember splits
its matmuls on this pool (``gemm.py``), its convolutions block by block. The pool only runs
while NumPy's OpenBLAS is single-threaded (checked on every pass, through OpenBLAS's own
``openblas_get_num_threads``; with an unknown BLAS the pool stays off): OpenBLAS's idle worker
threads busy-wait (no ``sched_yield``) for ~0.1 s after each multi-threaded call, so they would
hold the other cores and a pool thread would only get time slices of them (measured on the CNN
benchmark, 2 cores: 43 ms a step with the pool next to 2-thread OpenBLAS, 31.5 ms without it).

Waiting: with the native helpers (``_pool.c``, built at install) idle workers spin ``SPIN_US``
with the GIL released before they sleep, and are pinned to CPUs other than the caller's while
the pool is busy (``PIN_THREADS``); see ``_pool.c`` for the measurements behind both. Without
them the pool waits on Python locks.

Safety: one parallel pass at a time. A call made while the pool is busy (from another thread,
or from inside a chunk) runs its whole range on its own thread. After ``os.fork`` the child
drops the parent's workers (they do not exist there) and starts its own on first use, so
DataLoader worker processes can use the pool.
"""
import os
import threading

__all__ = ["get_num_threads", "set_num_threads", "parallel_for", "num_chunks", "blas_threads",
           "MIN_CHUNK_BYTES"]

#: bytes a pass must touch per chunk before it is split: waking a worker costs 20-100 us on
#: the 2-core VM it was measured on (more after it slept a while), ~100 us of memory-bound
#: NumPy work per MiB
MIN_CHUNK_BYTES = 1 << 20


def _default_threads():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_num_threads = _default_threads()


#: microseconds a waiting pool thread spins (GIL released, in ember.backend._pool) before it
#: sleeps: a virtual CPU left idle is given back, and a thread woken there starts late and
#: runs slowly for a while (see _pool.c); a training step's passes come within this of each
#: other, so the workers stay on their cores through a step and sleep between steps
SPIN_US = 2000

#: pin each worker to a CPU other than the calling thread's while the pool is busy, and the
#: calling thread to its CPU for passes of several pieces per thread (see _pool.c: otherwise
#: Linux may stack the threads of a pass on one CPU for tens of milliseconds); needs the
#: native helpers, Linux, and as many allowed CPUs as threads. The calling thread is not
#: pinned for one-piece passes (matmul bands): a thread hands the GIL over only twice there,
#: too rarely to be pulled over, and setting the affinity costs ~20 us per pass in a VM.
PIN_THREADS = True

try:
    from . import _pool as _native
except ImportError:  # built without a C compiler: plain locks (each wake-up pays the OS)
    _native = None


class _LockSignal:
    """One-way signal, one poster and one waiter, on a Python lock (the fallback)."""
    __slots__ = ("_lock",)

    def __init__(self):
        self._lock = threading.Lock()
        self._lock.acquire()

    def post(self):
        self._lock.release()

    def wait(self):
        self._lock.acquire()


class _SpinSignal:
    """The same on a ``_pool.Event``: the waiter spins ``SPIN_US`` before sleeping."""
    __slots__ = ("_event", "_seen")

    def __init__(self):
        self._event = _native.Event()
        self._seen = 0

    def post(self):
        self._event.post()

    def wait(self):
        self._seen = self._event.wait(self._seen, SPIN_US)


def _signal():
    return _LockSignal() if _native is None else _SpinSignal()


def _pin_plan(workers):
    """(CPU of the calling thread, a distinct other CPU for each of ``workers``) for one
    pass, or None when the workers are not to be pinned."""
    if not PIN_THREADS or _native is None:
        return None
    here = _native.current_cpu()
    if here < 0:
        return None
    try:
        others = sorted(os.sched_getaffinity(0) - {here})
    except (AttributeError, OSError):
        return None
    if len(others) < workers:
        return None
    return here, others[:workers]


class _Worker:
    """A daemon thread that drains one pass's pieces per ``go`` signal, then posts ``done``."""
    __slots__ = ("go", "done", "task", "error", "thread")

    def __init__(self, index):
        self.go = _signal()
        self.done = _signal()
        self.task = None
        self.error = None
        self.thread = threading.Thread(target=self._loop, name=f"ember-worker-{index}",
                                       daemon=True)
        self.thread.start()

    def _loop(self):
        _local.inside = True
        go, done = self.go, self.done
        while True:
            go.wait()
            fn, bounds, claim, cpu = self.task
            self.task = None
            if cpu >= 0:  # stays pinned while it spins; go.wait unpins it before it sleeps
                _native.pin(cpu)
            try:
                _drain(fn, bounds, claim)
            except BaseException as e:  # handed to the caller
                self.error = e
            # drop the pass before reporting it done: a kernel's closure holds its arrays,
            # and an extra reference to a fresh gradient makes autograd copy it rather than
            # take it (graph._owned_grad), besides keeping it alive until the next pass
            fn = bounds = claim = None
            done.post()


def _drain(fn, bounds, claim):
    """Run pieces ``fn(bounds[i], bounds[i + 1])`` for each ``i`` this thread claims."""
    while True:
        try:
            i = claim()
        except StopIteration:
            return
        fn(bounds[i], bounds[i + 1])


class _State:
    """The pool of one process (rebuilt in a forked child)."""

    def __init__(self):
        self.lock = threading.Lock()  # held by the thread running a parallel pass
        self.workers = []


_state = _State()
_local = threading.local()  # .inside: this thread is a worker (nested calls run inline)


def _after_fork_in_child():
    global _state
    _state = _State()  # the parent's worker threads do not exist here


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def get_num_threads():
    """Number of threads ember's intra-op passes use (PyTorch's ``torch.get_num_threads``)."""
    return _num_threads


def set_num_threads(n):
    """Set the number of threads for ember's intra-op passes (PyTorch's
    ``torch.set_num_threads``): a positive int. 1 runs everything on the calling thread."""
    global _num_threads
    if isinstance(n, bool) or not _is_int(n):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    n = int(n)
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _num_threads = n


def _is_int(n):
    if isinstance(n, int):
        return True
    try:  # NumPy integers, as PyTorch accepts them
        import numpy
        return isinstance(n, numpy.integer)
    except ImportError:  # pragma: no cover
        return False


def num_chunks(n, work):
    """How many threads ``parallel_for`` runs ``range(n)`` on for a pass touching ``work``
    bytes (1: the calling thread alone)."""
    k = min(_num_threads, n, int(work) // MIN_CHUNK_BYTES)
    if k <= 1:
        return 1
    if _CHECK_BLAS and blas_threads() != 1:
        return 1
    return k


#: pieces per thread: threads claim pieces until none is left, so a thread that gets less
#: of a core (another process on it) does fewer of them
PIECES_PER_THREAD = 4


#: False: use the pool whatever NumPy's BLAS does (tests; a BLAS known not to spin)
_CHECK_BLAS = True
_openblas = []  # [] not looked up yet; [None] no OpenBLAS found; [(get, set)] its thread calls

#: environment variables through which a user sets OpenBLAS's threads: then ember leaves them
BLAS_ENV = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
_adopted = []  # [] not decided yet; [True/False] whether ember set NumPy's BLAS to one thread


def _find_openblas():
    """ctypes handles ``(openblas_get_num_threads, openblas_set_num_threads)`` of the OpenBLAS
    that NumPy loaded (the one in NumPy's own directory first, as a wheel bundles it), or
    None."""
    try:
        import ctypes
        import numpy
        with open("/proc/self/maps") as f:
            paths = []
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and "openblas" in os.path.basename(parts[5]).lower():
                    path = parts[5].strip()
                    if path not in paths:
                        paths.append(path)
        numpy_dir = os.path.dirname(os.path.abspath(numpy.__file__))
        paths.sort(key=lambda p: not p.startswith(numpy_dir))  # numpy/ and numpy.libs/ first
        for path in paths:
            lib = ctypes.CDLL(path)
            for prefix in ("scipy_", ""):
                for suffix in ("64_", ""):
                    get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
                    put = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
                    if get is not None and put is not None:
                        get.restype, get.argtypes = ctypes.c_int, []
                        put.restype, put.argtypes = None, [ctypes.c_int]
                        return get, put
    except (OSError, ImportError, AttributeError):
        pass
    return None


def _blas_calls():
    if not _openblas:
        _openblas.append(_find_openblas())
    return _openblas[0]


def blas_threads():
    """Threads NumPy's OpenBLAS runs (it can change at run time: threadpoolctl,
    ``openblas_set_num_threads``); None when NumPy's BLAS is not an OpenBLAS found here."""
    calls = _blas_calls()
    return None if calls is None else int(calls[0]())


def adopt_blas():
    """Run NumPy's OpenBLAS on one thread from now on, so that ember's pool does the
    threading (matmuls split in bands, convolutions by samples) -- unless the user chose
    OpenBLAS's threads through the environment. Done once per process, when ember is
    imported; returns whether ember took the BLAS threads over. A later threadpoolctl /
    ``openblas_set_num_threads`` call above one turns the pool off again (BLAS threads
    instead)."""
    if not _adopted:
        calls = _blas_calls()
        take = calls is not None and not any(os.environ.get(v) for v in BLAS_ENV)
        if take and calls[0]() != 1:
            calls[1](1)
        _adopted.append(take)
    return _adopted[0]


def parallel_for(n, fn, work, pieces_per_thread=None):
    """Call ``fn(lo, hi)`` on consecutive slices covering ``range(n)``: on up to
    ``get_num_threads()`` threads when ``work`` (bytes touched) allows, each claiming slices
    until none is left; else once as ``fn(0, n)`` on the calling thread. Exceptions raised in
    a slice are re-raised here (after every thread has stopped)."""
    k = num_chunks(n, work)
    if k == 1 or getattr(_local, "inside", False):
        fn(0, n)
        return
    state = _state
    if not state.lock.acquire(blocking=False):  # the pool is busy: another thread's pass
        fn(0, n)
        return
    try:
        workers = state.workers
        while len(workers) < k - 1:
            workers.append(_Worker(len(workers)))
        pieces = min(n, k * (pieces_per_thread or PIECES_PER_THREAD))
        bounds = [n * i // pieces for i in range(pieces + 1)]
        claim = iter(range(pieces)).__next__  # atomic under the GIL
        used = workers[:k - 1]
        plan = _pin_plan(len(used))
        cpus = plan[1] if plan is not None else [-1] * len(used)
        for w, cpu in zip(used, cpus):
            w.task = (fn, bounds, claim, cpu)
            w.go.post()
        pinned = plan is not None and pieces > k and _native.pin(plan[0])
        _local.inside = True
        waited = False
        try:
            error = None
            try:
                _drain(fn, bounds, claim)  # the calling thread takes pieces too
            except BaseException as e:
                error = e
            for w in used:
                w.done.wait()
                if w.error is not None:
                    if error is None:
                        error = w.error
                    w.error = None
            waited = True
        finally:
            _local.inside = False
            if pinned:
                _native.unpin()
            if not waited:  # interrupted while waiting: these workers' state is unknown
                state.workers = []
        if error is not None:
            raise error
    finally:
        state.lock.release()


adopt_blas()
