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

NumPy's BLAS: importing ember sets NumPy's OpenBLAS to one thread (``adopt_blas``, called by
``process.apply``; not when ``OPENBLAS_NUM_THREADS``, ``GOTO_NUM_THREADS`` or
``OMP_NUM_THREADS`` is set), and ember splits
its matmuls on this pool (``gemm.py``), its convolutions block by block. The pool only runs
while NumPy's OpenBLAS is single-threaded (checked on every pass, through OpenBLAS's own
``openblas_get_num_threads``; with an unknown BLAS the pool stays off): OpenBLAS's idle worker
threads busy-wait (no ``sched_yield``) for ~0.1 s after each multi-threaded call, so they would
hold the other cores and a pool thread would only get time slices of them (measured on the CNN
benchmark, 2 cores: 43 ms a step with the pool next to 2-thread OpenBLAS, 31.5 ms without it).

Waiting: with the native helpers (``_pool.c``, built at install) idle workers spin ``SPIN_US``
with the GIL released before they sleep, and (``PIN_THREADS``, on by default when the pool
spans every CPU the process may use: see ``process.py``) are pinned to CPUs other than the
caller's while the pool is busy; see ``_pool.c`` for the measurements behind both. While
they spin, the workers also take bands of native matrix products (``gemm.py``, ``_pool.gemm``:
no Python between the caller and them). Without the helpers the pool waits on Python locks.

Safety: one parallel pass at a time. A call made while the pool is busy (from another thread,
or from inside a chunk) runs its whole range on its own thread. After ``os.fork`` the child
drops the parent's workers (they do not exist there) and starts its own on first use (the
fork hook of ``process.py``), so DataLoader worker processes can use the pool.

Errors and interruptions: an exception raised in a piece (on any thread), or a
KeyboardInterrupt on the calling thread (Ctrl-C lands wherever that thread is), ends the pass:
the pieces nobody has started are dropped, the caller waits until no thread runs one (a further
interrupt does not stop that wait: the pieces under way still write the op's arrays) and
re-raises the first exception. The workers stay, ready for the next pass, and the caller's CPU
affinity is restored. A worker is only ever waited for through the pass it holds (never by
counting wake-ups), so an interrupt that cuts the pass's own bookkeeping short leaves nothing
the next pass cannot pick up: it first waits for any worker still on an earlier pass.
"""
import os
import threading
from collections import deque

import numpy

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
#: native helpers, Linux, and a pool as large as the allowed CPUs. The calling thread is not
#: pinned for one-piece passes (matmul bands): a thread hands the GIL over only twice there,
#: too rarely to be pulled over, and setting the affinity costs ~20 us per pass in a VM.
PIN_THREADS = False  # set at import: see ember/backend/process.py ("pin_threads")

try:
    from . import _pool as _native
except ImportError:  # built without a C compiler: plain locks (each wake-up pays the OS)
    _native = None


class _LockSignal:
    """One-way signal, one poster and one waiter, on a Python lock (the fallback). Posts do not
    add up: one made while another is still pending is absorbed, as with the native event
    (every waiter looks again at what it waits for after each wake-up)."""
    __slots__ = ("_lock",)

    def __init__(self):
        self._lock = threading.Lock()
        self._lock.acquire()

    def post(self):
        try:
            self._lock.release()
        except RuntimeError:  # already posted, not taken yet: one wake-up covers both
            pass

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

    def pending(self):
        """Whether a post has not been seen by the waiter yet (it is on its way back to
        waiting: another post would only send it round its loop once more, through the
        GIL)."""
        return self._event.seq != self._seen

    def wait(self):
        self._seen = self._event.wait(self._seen, SPIN_US)


def _signal():
    return _LockSignal() if _native is None else _SpinSignal()


def _pin_plan(workers):
    """(CPU of the calling thread, a distinct other CPU for each of ``workers``) for one
    pass, or None when the workers are not to be pinned: pinning is off, or the pool is
    smaller than the CPUs this process may use (``set_num_threads`` below their count: the
    user shares them out, e.g. among processes, and pinned threads would crowd the first
    ones). The workers take the CPUs after the caller's, in cyclic order, so that processes
    whose callers run on different CPUs spread their workers differently too."""
    if not PIN_THREADS or _native is None:
        return None
    here = _native.current_cpu()
    if here < 0:
        return None
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    if here not in allowed or _num_threads < len(allowed) or len(allowed) <= workers:
        return None
    at = allowed.index(here)
    others = allowed[at + 1:] + allowed[:at]
    return here, others[:workers]


class _Pass:
    """One parallel pass: ``fn`` over consecutive pieces of a range, each piece claimed by
    exactly one thread (or dropped by ``cancel``). ``errors``: what the pieces raised, and
    interruptions of the calling thread, first one first."""
    __slots__ = ("fn", "bounds", "pieces", "errors", "handed_out")

    def __init__(self, fn, bounds):
        self.fn = fn
        self.bounds = bounds
        self.pieces = iter(range(len(bounds) - 1))  # next() on it is atomic under the GIL
        self.errors = []
        self.handed_out = False  # every worker of the pass has been woken for it

    def drain(self):
        """Run ``fn(bounds[i], bounds[i + 1])`` for each piece ``i`` this thread claims,
        until none is left. A piece that raises ends the pass: its exception is kept for the
        caller, and the pieces nobody has started are dropped."""
        fn, bounds = self.fn, self.bounds
        try:
            for i in self.pieces:
                fn(bounds[i], bounds[i + 1])
        except BaseException as e:  # re-raised on the calling thread (parallel_for)
            self.errors.append(e)
            self.cancel()

    def cancel(self):
        """Claim every piece nobody has started, so that no thread starts another one."""
        deque(self.pieces, maxlen=0)


class _Worker:
    """A daemon thread that runs its share of each pass handed to it, then clears ``task``
    and posts ``done``. ``task`` is the pass it has not finished (None: idle); whoever waits
    for the worker looks at it rather than counting posts, so a wake-up that comes twice or
    finds nothing to do is harmless."""
    __slots__ = ("go", "done", "task", "cpu", "thread")

    def __init__(self, index):
        self.go = _signal()
        self.done = _signal()
        self.task = None
        self.cpu = -1
        self.thread = threading.Thread(target=self._loop, name=f"ember-worker-{index}",
                                       daemon=True)

    def _loop(self):
        _local.inside = True
        go, done = self.go, self.done
        while True:
            go.wait()
            job = self.task
            if job is None:  # woken again for a pass it has finished (see finish)
                continue
            if self.cpu >= 0:  # stays pinned while it spins; go.wait unpins it before it sleeps
                _native.pin(self.cpu)
            job.drain()  # keeps what a piece raises for the caller
            # drop the pass before reporting it done: a kernel's closure holds its arrays,
            # and an extra reference to a fresh gradient makes autograd copy it rather than
            # take it (graph._owned_grad), besides keeping it alive until the next pass
            job = None
            self.task = None
            done.post()

    def hand(self, job, cpu):
        """Give this worker its share of ``job``, on CPU ``cpu`` (-1: anywhere)."""
        self.cpu = cpu
        self.task = job
        self.go.post()

    def finish(self, job, wake):
        """Wait until this worker is done with ``job`` (at once if it does not have it);
        ``wake``: post its wake-up again first, as handing it over may have been cut short."""
        if wake and self.task is job:
            self.go.post()
        while self.task is job:
            self.done.wait()


def _settle(job, workers):
    """Stop ``job`` and wait until none of ``workers`` runs a piece of it: its pieces are then
    all done or dropped, and the workers free for the next pass. An interruption
    (KeyboardInterrupt) while waiting is kept for the caller and the waiting goes on: the
    pieces under way still write the pass's arrays."""
    while True:
        try:
            job.cancel()
            for w in workers:
                w.finish(job, wake=not job.handed_out)
            return
        except BaseException as e:
            job.errors.append(e)


class _State:
    """The pool of one process (rebuilt in a forked child)."""

    def __init__(self):
        self.guard = threading.Lock()  # held for the few steps of taking the pool
        self.owner = None  # get_ident() of the thread running a parallel pass, or None
        self.workers = []

    def take(self):
        """Make the calling thread the one running a pass, unless another thread is;
        ``owner = None`` gives the pool back."""
        me = threading.get_ident()
        with self.guard:
            # already this thread's (it is not inside a pass, or it would not get here): an
            # interruption came between taking the pool and the code that gives it back
            if self.owner is None or self.owner == me:
                self.owner = me
                return True
            return False

    def ready_workers(self, count):
        """``count`` started workers, none of them still on an earlier pass."""
        for w in self.workers:
            stale = w.task
            if stale is not None:  # left by a pass whose caller was interrupted before waiting
                stale.cancel()
                w.finish(stale, wake=True)
            stale = None
        # a worker joins the pool before its thread starts, so that a start() cut short by an
        # interruption does not lose the thread; one whose thread never started (no ident)
        # is passed over
        ready = [w for w in self.workers if w.thread.ident is not None]
        while len(ready) < count:
            w = _Worker(len(self.workers))
            self.workers.append(w)
            w.thread.start()
            ready.append(w)
        return ready[:count]


_state = _State()
_local = threading.local()  # .inside: a worker, or running a pass (nested calls run inline)


def wake_idle_workers(count):
    """Wake up to ``count`` pool workers that have no pass to run, so that they spin
    (``SPIN_US``) and take pieces of native passes (``gemm.py``) meanwhile: a run of small
    products that starts after the workers fell asleep would otherwise run on one thread.
    Costs the caller one post per worker; does nothing before the pool's first pass (no
    workers yet) or in a forked child that has not started its own."""
    if _native is None or _state_pid[0] != os.getpid():
        return
    for w in _state.workers[:count]:
        if w.task is None and w.thread.ident is not None and not w.go.pending():
            w.go.post()


def _after_fork_in_child():
    global _state
    _state = _State()  # the parent's worker threads do not exist here
    _state_pid[0] = os.getpid()


_state_pid = [os.getpid()]  # the process whose threads the pool's workers are


def install_fork_hook():
    """Have a forked child start a pool of its own (ember/backend/process.py: "fork_hook").
    Without it, the pool is not used in a forked child. Returns whether it was installed."""
    if not hasattr(os, "register_at_fork"):
        return False
    os.register_at_fork(after_in_child=_after_fork_in_child)
    return True


def enable_pinning():
    """Pin busy pool threads to CPUs (ember/backend/process.py: "pin_threads"); returns
    whether pinning is possible here (the native helpers are built)."""
    global PIN_THREADS
    PIN_THREADS = _native is not None
    return PIN_THREADS


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
    found = _openblas_library()
    if found is None:
        return None
    import ctypes
    get, put = openblas_function("openblas_get_num_threads"), \
        openblas_function("openblas_set_num_threads")
    get.restype, get.argtypes = ctypes.c_int, []
    put.restype, put.argtypes = None, [ctypes.c_int]
    return get, put


_library = []  # [] not looked up yet; [None] or [(ctypes.CDLL, symbol prefix, symbol suffix)]


def _openblas_library():
    """(library, prefix, suffix) of the OpenBLAS NumPy loaded: its symbols are named
    prefix + name + suffix (``scipy_`` and ``64_`` in NumPy's wheels); None if none is
    found."""
    if _library:
        return _library[0]
    found = None
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
                    if hasattr(lib, f"{prefix}openblas_get_num_threads{suffix}") and \
                            hasattr(lib, f"{prefix}openblas_set_num_threads{suffix}"):
                        found = (lib, prefix, suffix)
                        break
                if found:
                    break
            if found:
                break
    except (OSError, ImportError, AttributeError):
        found = None
    _library.append(found)
    return found


def openblas_function(name):
    """The ctypes function ``name`` (e.g. ``"cblas_sgemm"``) of NumPy's OpenBLAS, or None;
    its integers are 64-bit when ``openblas_ilp64()``."""
    found = _openblas_library()
    if found is None:
        return None
    lib, prefix, suffix = found
    return getattr(lib, prefix + name + suffix, None)


def openblas_ilp64():
    """Whether NumPy's OpenBLAS takes 64-bit integers (its symbols end in ``64_``)."""
    found = _openblas_library()
    return found is not None and found[2] == "64_"


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


def sample_blocks(n, per_sample, block_bytes):
    """Consecutive ranges [(lo, hi), ...] covering ``range(n)`` (samples of ``per_sample``
    bytes of scratch each), of at most about ``block_bytes`` each, of near-equal sizes and
    (when more than one) a multiple of 4 of them, so that 2 or 4 threads get equal shares:
    64 samples of 56 KB in 1 MiB blocks make 4 blocks of 16, not 18, 18, 18, 10 (one thread
    would do 36 samples while the other does 28). They depend on the shapes only, never on
    the thread count, so per-block partial results summed in block order give the same bits
    whatever ``get_num_threads()`` is.

    >>> sample_blocks(64, 56 << 10, 1 << 20)
    [(0, 16), (16, 32), (32, 48), (48, 64)]
    """
    size = max(1, min(n, block_bytes // max(1, per_sample)))
    count = -(-n // size) if n else 0
    if count > 1:
        count = min(n, -(-count // 4) * 4)
    return [(n * i // count, n * (i + 1) // count) for i in range(count)]


def host_work(array, work):
    """``work`` for a pass over ``array`` when it is host (NumPy) memory, else 0 (run whole):
    a device array's pass is a kernel launch or a few, which host threads cannot speed up,
    and splitting it multiplies the launches.

    >>> host_work(numpy.zeros(4), 1 << 30)
    1073741824
    """
    return work if type(array) is numpy.ndarray else 0


def run_blocks(blocks, fn, work):
    """``fn(i, lo, hi)`` for every block ``(lo, hi)`` of ``blocks``, spread over the pool when
    ``work`` (bytes touched) is large enough."""
    def chunk(a, b):
        for i in range(a, b):
            fn(i, *blocks[i])
    parallel_for(len(blocks), chunk, work)


def sum_parts(parts):
    """The sum of per-block partial results (fresh arrays each), in block order, into the
    first of them: the same bits whatever thread computed which block."""
    acc = parts[0]
    for part in parts[1:]:
        acc += part
    return acc


def parallel_for(n, fn, work, pieces_per_thread=None):
    """Call ``fn(lo, hi)`` on consecutive slices covering ``range(n)``: on up to
    ``get_num_threads()`` threads when ``work`` (bytes touched) allows, each claiming slices
    until none is left; else once as ``fn(0, n)`` on the calling thread. An exception raised
    in a slice, or a KeyboardInterrupt on the calling thread, ends the pass: slices not
    started are dropped, and once no thread runs one it is re-raised here."""
    k = num_chunks(n, work)
    if k == 1 or getattr(_local, "inside", False):
        fn(0, n)
        return
    state = _state
    if not state.take():  # the pool is busy: another thread's pass
        fn(0, n)
        return
    if _state_pid[0] != os.getpid():  # a forked child without the fork hook: no pool here
        state.owner = None
        fn(0, n)
        return
    try:
        _local.inside = True
        _run_pass(state, n, fn, k, pieces_per_thread or PIECES_PER_THREAD)
    finally:
        # plain stores, then one call: CPython runs a signal handler (KeyboardInterrupt) at a
        # call or a loop's back edge, so none can cut this short
        _local.inside = False
        state.owner = None
        if _native is not None:
            _native.unpin()  # the calling thread's affinity back (a no-op when not pinned)


def _run_pass(state, n, fn, k, pieces_per_thread):
    """The pass of ``parallel_for`` on ``k`` threads, the calling thread one of them."""
    workers = state.ready_workers(k - 1)
    pieces = min(n, k * pieces_per_thread)
    job = _Pass(fn, [n * i // pieces for i in range(pieces + 1)])
    plan = _pin_plan(len(workers))
    try:
        cpus = plan[1] if plan is not None else [-1] * len(workers)
        for w, cpu in zip(workers, cpus):
            w.hand(job, cpu)
        job.handed_out = True
        if plan is not None and pieces > k:
            _native.pin(plan[0])
        job.drain()  # the calling thread takes pieces too
    finally:
        _settle(job, workers)
    if job.errors:
        error = job.errors[0]
        job.errors.clear()
        try:
            raise error
        finally:
            error = None  # no reference cycle through this frame

