"""Process groups on MPI: the default (world) group, ``new_group`` and the job's state.

mpi4py is imported when a group is made, not when ember is: importing ``mpi4py.MPI``
initializes MPI, which a single-process program must not pay for. The ranks and the
world size are MPI's (``mpiexec -n N``); ``init_process_group``'s ``rank`` and
``world_size`` arguments and the env:// variables are checked against them.
"""
import datetime
import importlib.util
import os
import sys
import threading
import time
import traceback

__all__ = ["Backend", "ProcessGroup", "GroupMember", "group", "is_available",
           "is_mpi_available", "init_process_group", "is_initialized", "destroy_process_group",
           "get_rank", "get_world_size", "get_backend", "new_group", "default_pg_timeout"]

default_pg_timeout = datetime.timedelta(minutes=30)  # PyTorch's default for CPU backends

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to "
                    "call init_process_group.")


class Backend(str):
    """A backend's name (a ``str``); ember has one, ``Backend.MPI == "mpi"``.

    >>> import ember.distributed as dist
    >>> dist.Backend("MPI"), dist.Backend.MPI == "mpi"
    ('mpi', True)
    """
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        value = name.lower()
        if value != "mpi":
            raise ValueError(f"ember.distributed runs on MPI only: backend {name!r} is not "
                             "available (use 'mpi')")
        return super().__new__(cls, value)


class ProcessGroup:
    """A set of ranks and the MPI communicator that joins them.

    ``ranks`` are global ranks in group order; ``comm`` is None on a rank outside it.
    """

    def __init__(self, comm, ranks, timeout):
        self.comm = comm
        self.ranks = list(ranks)
        self.timeout = timeout

    def rank(self):
        """This process's rank in the group (-1 outside it)."""
        return self.comm.Get_rank() if self.comm is not None else -1

    def size(self):
        return len(self.ranks)

    def name(self):
        return "mpi"

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup mpi ranks={self.ranks}>"


class GroupMember:
    """``GroupMember.WORLD``: the default group once made; ``NON_GROUP_MEMBER``: what
    ``new_group`` returns on a rank it leaves out."""
    WORLD = None
    NON_GROUP_MEMBER = object()


class _World:
    """``dist.group.WORLD``: the default process group (None before init)."""

    @property
    def WORLD(self):
        return GroupMember.WORLD


group = _World()


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise RuntimeError("ember.distributed needs mpi4py and an MPI library: "
                           "pip install 'ember[distributed]' (mpi4py, mpich)") from exc
    return MPI


def is_available():
    """Whether ember.distributed can run here (mpi4py is installed).

    >>> import ember.distributed as dist
    >>> isinstance(dist.is_available(), bool)
    True
    """
    return importlib.util.find_spec("mpi4py") is not None


is_mpi_available = is_available


def is_initialized():
    """Whether the default process group exists.

    >>> import ember.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return GroupMember.WORLD is not None


def default_group(group=None):
    """``group``, or the default group; PyTorch's error when there is none."""
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    if group is None or group is GroupMember.WORLD:
        return GroupMember.WORLD
    if group is GroupMember.NON_GROUP_MEMBER:
        return group
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def _env_int(name):
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"Error initializing ember.distributed using env:// rendezvous: "
                         f"environment variable {name} is not an integer: {value!r}") from None


def _check_agrees(what, given, source, actual):
    if given is not None and given != -1 and given != actual:
        raise ValueError(f"{what} {given} (from {source}) does not match MPI's {what} {actual}: "
                         "under MPI the ranks come from mpiexec")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the job's processes (MPI's ``COMM_WORLD``) as the default process group.

    Start the job with ``python -m ember.distributed.run -n 4 script.py``; rank and world
    size are MPI's. ``rank``/``world_size`` and the env:// variables (RANK, WORLD_SIZE;
    MASTER_ADDR/MASTER_PORT are accepted, MPI needs no address) must agree with MPI's.
    ``timeout`` bounds every wait on a collective; a rank that raises aborts the job.

    >>> import ember.distributed as dist
    >>> dist.init_process_group("mpi")        # doctest: +SKIP
    >>> dist.get_rank(), dist.get_world_size()  # doctest: +SKIP
    (0, 1)
    """
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    Backend(backend if backend is not None else "mpi")  # checks the name
    if store is not None or pg_options is not None or device_id is not None:
        raise NotImplementedError("ember.distributed on MPI takes no store, pg_options or "
                                  "device_id")
    if init_method not in (None, "env://"):
        raise NotImplementedError(f"init_method {init_method!r}: under MPI the processes meet "
                                  "through mpiexec; use None or 'env://'")
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{timeout}")
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    actual_rank, actual_size = comm.Get_rank(), comm.Get_size()
    _check_agrees("rank", rank, "the rank argument", actual_rank)
    _check_agrees("world_size", world_size, "the world_size argument", actual_size)
    _check_agrees("rank", _env_int("RANK"), "the RANK variable", actual_rank)
    _check_agrees("world_size", _env_int("WORLD_SIZE"), "the WORLD_SIZE variable", actual_size)
    GroupMember.WORLD = ProcessGroup(comm, range(actual_size), timeout)
    _install_abort_hook(comm, actual_rank)
    watchdog.start(comm, actual_rank)


def destroy_process_group(group=None):
    """Forget ``group`` (the default group: all of them). MPI itself is finalized at exit,
    so a later ``init_process_group`` works."""
    pg = default_group(group)
    if pg is GroupMember.WORLD:
        GroupMember.WORLD = None
        _remove_abort_hook()
        watchdog.stop()
    elif pg is not GroupMember.NON_GROUP_MEMBER and pg.comm is not None:
        pg.comm.Free()
        pg.comm = None


def get_rank(group=None):
    """This process's rank in ``group`` (the default group: its global rank); -1 outside
    the group."""
    pg = default_group(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        return -1
    return pg.rank()


def get_world_size(group=None):
    """The number of processes in ``group``; -1 on a rank outside it."""
    pg = default_group(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        return -1
    return pg.size()


def get_backend(group=None):
    """The group's backend: always ``"mpi"``."""
    pg = default_group(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return Backend("mpi")


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    """A group of some of the ranks (every rank must call it, with the same ``ranks``).

    Ranks left out get ``GroupMember.NON_GROUP_MEMBER``.
    """
    world = default_group()
    if backend is not None:
        Backend(backend)
    if pg_options is not None or use_local_synchronization or device_id is not None:
        raise NotImplementedError("new_group: pg_options, use_local_synchronization and "
                                  "device_id are not supported on MPI")
    size = world.size()
    ranks = list(range(size)) if ranks is None else [int(r) for r in ranks]
    if sort_ranks:
        ranks = sorted(ranks)
    for r in ranks:
        if r < 0 or r >= size:
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    mpi_group = world.comm.Get_group().Incl(ranks)
    comm = world.comm.Create(mpi_group)  # collective over the world
    mpi_group.Free()
    if comm == _mpi().COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(comm, ranks, timeout or world.timeout)


class _Watchdog:
    """Bounds every blocking wait: a wait registers its deadline, and a thread aborts the
    MPI job (naming the operation and the rank) when one passes before the wait ends.

    Waits block in MPI itself (``Waitall``), which moves the transfer along far faster
    than a loop of ``Test`` calls; MPI cannot interrupt such a wait, so a timeout ends the
    job, as the watchdog of PyTorch's NCCL backend does."""

    def __init__(self):
        self._cond = threading.Condition()
        self._waits = {}
        self._next = 0
        self._thread = None
        self._comm = self._rank = None
        self._wake_at = float("inf")  # when the watching thread wakes next by itself

    def start(self, comm, rank):
        with self._cond:
            self._comm, self._rank = comm, rank
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="ember-dist-watchdog",
                                                daemon=True)
                self._thread.start()

    def stop(self):
        with self._cond:
            self._comm = None
            self._cond.notify()

    def guard(self, what, seconds):
        """Register a wait; returns the key to pass to ``done``."""
        with self._cond:
            self._next += 1
            deadline = time.monotonic() + seconds
            self._waits[self._next] = (deadline, what, seconds)
            # Wake the thread only when it would look too late: every wait of a job usually
            # has the same timeout, and a wake-up per collective takes a core from MPI.
            if deadline < self._wake_at:
                self._cond.notify()
            return self._next

    def done(self, key):
        with self._cond:
            self._waits.pop(key, None)

    def _watch(self):
        with self._cond:
            while True:
                if self._comm is None:
                    self._thread = None
                    return
                now = time.monotonic()
                late = [w for w in self._waits.values() if w[0] <= now]
                if late:
                    _, what, seconds = late[0]
                    sys.stderr.write(f"ember.distributed: {what} on rank {self._rank} timed out "
                                     f"after {int(seconds * 1000)} ms waiting for the other "
                                     "ranks; aborting the job\n")
                    sys.stderr.flush()
                    self._comm.Abort(1)
                soonest = min((w[0] for w in self._waits.values()), default=now + 3600)
                self._wake_at = soonest
                self._cond.wait(max(soonest - now, 0.001))
                self._wake_at = float("inf")


watchdog = _Watchdog()


# A rank that dies of an exception must not leave the others waiting in a collective
# forever: the hook prints the traceback, names the rank and aborts the whole MPI job
# (mpiexec then stops every rank and exits non-zero).
_previous_hook = None


def _install_abort_hook(comm, rank):
    global _previous_hook
    if _previous_hook is not None:
        return
    _previous_hook = sys.excepthook

    def abort_job(exc_type, exc, tb):
        traceback.print_exception(exc_type, exc, _user_frames(tb))
        sys.stderr.write(f"ember.distributed: rank {rank} raised {exc_type.__name__}: {exc}; "
                         "aborting the job\n")
        sys.stderr.flush()
        comm.Abort(1)

    sys.excepthook = abort_job


_LAUNCHER_FILES = ("<frozen runpy>", os.path.join(os.path.dirname(__file__), "_launched.py"))


def _user_frames(tb):
    """The traceback without the launcher's frames (runpy, _launched) in front."""
    start = tb
    while tb is not None and tb.tb_frame.f_code.co_filename in _LAUNCHER_FILES:
        tb = tb.tb_next
    return tb if tb is not None else start


def _remove_abort_hook():
    global _previous_hook
    if _previous_hook is not None:
        sys.excepthook = _previous_hook
        _previous_hook = None
