"""Everything importing ember changes in the Python process, in one place.

``import ember`` calls ``apply()`` once. Each change has a name; the environment variable
``EMBER_PROCESS_TUNING`` picks them, as a comma-separated list read left to right:
``default`` (the five marked below), ``none``, a name (turn it on) or ``-name`` (turn it off).
Unset, it means ``default``. ``python -m ember.utils.collect_env`` lists what took effect.

* ``blas_threads`` (default): NumPy's OpenBLAS runs on one thread, so that ember's own pool
  does the threading (matmuls in column bands, convolutions by samples), as
  ``torch.set_num_threads`` sets MKL's threads. Skipped when ``OPENBLAS_NUM_THREADS``,
  ``GOTO_NUM_THREADS`` or ``OMP_NUM_THREADS`` is set. OpenBLAS's own idle threads busy-wait
  ~0.1 s after each call and would take the pool's cores.
* ``malloc_priming`` (default, glibc only): one 31 MiB block is allocated and freed, so that
  glibc keeps freed activation arrays in its heap instead of trimming and re-faulting them
  at every training step (~2,500 page faults, ~15% of a small CNN's step).
* ``warnings_filter`` (default): NumPy's floating-point RuntimeWarnings ("overflow
  encountered in multiply") are hidden when ember's own code made the NumPy call, as
  PyTorch computes inf and nan silently; the user's NumPy code still warns.
* ``fork_hook`` (default): ``os.register_at_fork`` makes a forked child (a DataLoader worker)
  drop the parent's pool threads, which do not exist there, and start its own on first use.
  Off, the pool simply is not used in a forked child.
* ``pin_threads`` (default): while the pool is busy, each worker is pinned to a CPU other
  than the calling thread's (the CPUs after it, cyclically), and the calling thread to its
  own for passes of several pieces; a worker is unpinned before it sleeps. On a 2-core VM
  Linux otherwise stacked a pass's two threads on one CPU, or queued a woken worker behind
  its waker, for the first steps after a pause (CNN steps of 20-25 ms instead of 12.5;
  benchmarks/run.py's CNN ratio 1.32 -> 1.06-1.11 with pinning). Only when the pool is as
  large as the CPUs the process may use (``set_num_threads`` smaller: the user is sharing
  the CPUs out, and pinned threads would crowd the first ones).

>>> from ember.backend import process
>>> sorted(process.DEFAULT)
['blas_threads', 'fork_hook', 'malloc_priming', 'pin_threads', 'warnings_filter']
>>> sorted(process.requested("default,-malloc_priming,-pin_threads"))
['blas_threads', 'fork_hook', 'warnings_filter']
"""
import os
import warnings

from . import parallel

ENV_VAR = "EMBER_PROCESS_TUNING"
DEFAULT = frozenset({"blas_threads", "malloc_priming", "warnings_filter", "fork_hook",
                     "pin_threads"})
ALL = DEFAULT

_applied = {}  # name -> whether it took effect (filled by apply)


def requested(spec=None):
    """The set of changes ``spec`` (default: ``$EMBER_PROCESS_TUNING``) asks for."""
    if spec is None:
        spec = os.environ.get(ENV_VAR, "default")
    chosen = set()
    for token in (t.strip() for t in spec.split(",")):
        if not token:
            continue
        if token == "default":
            chosen |= DEFAULT
        elif token == "none":
            chosen.clear()
        elif token.lstrip("-") in ALL:
            if token.startswith("-"):
                chosen.discard(token[1:])
            else:
                chosen.add(token)
        else:
            warnings.warn(f"{ENV_VAR}: unknown entry {token!r} ignored (known: default, none, "
                          f"{', '.join(sorted(ALL))})", RuntimeWarning, stacklevel=2)
    return chosen


def apply(spec=None):
    """Make the changes ``spec`` asks for (once per process; ``import ember`` calls it)."""
    if _applied:
        return dict(_applied)
    chosen = requested(spec)
    _applied["warnings_filter"] = "warnings_filter" in chosen and _filter_warnings()
    _applied["malloc_priming"] = "malloc_priming" in chosen and _prime_malloc()
    _applied["blas_threads"] = "blas_threads" in chosen and parallel.adopt_blas()
    _applied["fork_hook"] = "fork_hook" in chosen and parallel.install_fork_hook()
    _applied["pin_threads"] = "pin_threads" in chosen and parallel.enable_pinning()
    return dict(_applied)


def applied():
    """``{name: whether it took effect}`` for every change (all False before ``apply``)."""
    return {name: _applied.get(name, False) for name in sorted(ALL)}


def _filter_warnings():
    # np.errstate around every small op costs more than the op, so the warnings are filtered
    # by the module that made the NumPy call (an ember module) instead.
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ember(\.|$)",
                            message=r".*(encountered in|divide by zero)")
    return True


def _prime_malloc():
    """Let glibc keep big freed arrays in its heap, as it does once a program has freed a
    big block.

    glibc serves allocations above its mmap threshold (128 KiB at start) with fresh pages
    and adapts: freeing an mmap'd block raises the threshold to that block's size and the
    heap's trim threshold to twice it. Freeing one block just under glibc's 32 MiB cap moves
    the thresholds to where a program that once freed such a block has them; an explicit
    M_MMAP_THRESHOLD or GLIBC_TUNABLES setting turns the adaptation, and so this, off.
    """
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (AttributeError, ValueError, OSError):  # not glibc
        return False
    import numpy
    block = numpy.empty(31 << 20, dtype=numpy.uint8)  # mmap'd, then freed at once
    del block
    return True
