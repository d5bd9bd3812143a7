"""Matrix products shared with spinning pool threads without Python (``_pool.gemm``, used by
``ember.backend.gemm.matmul``): values equal NumPy's, layouts BLAS cannot read as they are
and single-threaded settings stay off the path, helpers really take pieces, and the path
survives concurrent callers and fork."""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import ember
from ember.backend import gemm, parallel

pytestmark = pytest.mark.skipif(gemm._native_gemm() is None,
                                reason="no native helpers or no OpenBLAS entry points")

RNG = np.random.default_rng(77)
WAIT_S = 10


def _rand(shape, dtype, order="C"):
    return np.asarray(RNG.standard_normal(shape), dtype=dtype, order=order)


def _tol(dtype):
    if dtype == np.float32:
        return dict(rtol=2e-5, atol=1e-4)
    return dict(rtol=1e-12, atol=1e-11)


@pytest.fixture
def spinning(pool2):
    """The pool's worker started and spinning (waiting for work, GIL released): a native pass
    then cuts products into bands. Returns a function that brings it back to spinning."""
    native = gemm._native_gemm()
    parallel.parallel_for(2, lambda lo, hi: None, 1 << 30)  # starts the worker

    def spin():
        # a wake-up starts a fresh spin (SPIN_US); the sleep lets the worker take the GIL it
        # needs to go back to waiting, so that it spins for the call that follows
        deadline = time.monotonic() + WAIT_S
        while True:
            parallel.wake_idle_workers(1)
            time.sleep(0.0005)
            if native.helpers() >= 1:
                return
            assert time.monotonic() < deadline, "the worker never spun"
    spin()
    return spin


@pytest.fixture
def calls(monkeypatch):
    """The native products made: the bands each was cut into (1: computed alone)."""
    native = gemm._native_gemm()
    real = native.gemm
    seen = []

    def spy(*args):
        bands = real(*args)
        seen.append(bands)
        return bands
    monkeypatch.setattr(native, "gemm", spy)
    return seen


@pytest.fixture
def forced(pool2, monkeypatch):
    """Native products cut into bands whether or not a worker spins at the time (on a busy
    machine it may not): the caller then runs the bands it is not helped with. Returns the
    bands of each product made."""
    native = gemm._native_gemm()
    real = native.gemm
    seen = []

    def spy(*args):
        bands = real(*args, True)
        seen.append(bands)
        return bands
    monkeypatch.setattr(native, "gemm", spy)
    monkeypatch.setattr(native, "helpers", lambda: 1)
    return seen


CASES = {  # name -> (a, b) builder
    "lstm step 20x256@(1024x256).T": lambda dt: (_rand((20, 256), dt), _rand((1024, 256), dt).T),
    "lstm grad 20x1024@1024x256": lambda dt: (_rand((20, 1024), dt), _rand((1024, 256), dt)),
    "128x784@784x512": lambda dt: (_rand((128, 784), dt), _rand((784, 512), dt)),
    "a.T": lambda dt: (_rand((300, 400), dt).T, _rand((300, 256), dt)),
    "fortran": lambda dt: (_rand((512, 200), dt, "F"), _rand((200, 300), dt, "F")),
    "odd n": lambda dt: (_rand((257, 301), dt), _rand((301, 333), dt)),
    "rows of a bigger array": lambda dt: (_rand((64, 500), dt)[:, 100:356],
                                          _rand((256, 700), dt)[:, :640]),
    "narrow: by rows": lambda dt: (_rand((4096, 256), dt), _rand((256, 16), dt)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_native_bands_equal_numpy(forced, dtype, case):
    a, b = CASES[case](dtype)
    got = gemm.matmul(a, b)
    expected = np.matmul(a, b)
    assert forced and forced[0] >= 2, f"not cut into bands: {forced}"
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert got.flags.c_contiguous
    np.testing.assert_allclose(got, expected, **_tol(dtype))


def test_spinning_worker_takes_pieces(spinning, calls):
    """With the worker spinning, gemm.matmul cuts a product into bands and the worker runs
    some (counted by the helper). Retried for a while: on a loaded machine the worker may be
    off its core and stop spinning."""
    native = gemm._native_gemm()
    a, b = _rand((256, 512), np.float32), _rand((512, 1024), np.float32)
    before = native.helped()
    deadline = time.monotonic() + WAIT_S
    while native.helped() == before or not any(n >= 2 for n in calls):
        assert time.monotonic() < deadline, f"no piece taken by the worker: {calls}"
        spinning()
        np.testing.assert_allclose(gemm.matmul(a, b), a @ b, **_tol(np.float32))


@pytest.mark.parametrize("a,b", [
    (_rand((256, 600), np.float32), _rand((600, 1024), np.float32)[:, ::2]),  # strided b
    (_rand((256, 600), np.float32)[::-1], _rand((600, 512), np.float32)),      # negative stride
    (_rand((1, 512), np.float32), _rand((512, 4096), np.float32)),            # a single row
    (_rand((256, 512), np.float32), _rand((512, 1024), np.float64)),          # mixed dtypes
    (_rand((256, 512), np.complex64), _rand((512, 1024), np.complex64)),      # complex
])
def test_layouts_blas_cannot_take_stay_off_the_native_path(forced, a, b):
    got = gemm.matmul(a, b)
    expected = np.matmul(a, b)
    assert forced == []
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-4)


def test_one_thread_or_small_products_stay_alone(forced):
    a, b = _rand((20, 64), np.float32), _rand((64, 256), np.float32)  # 320 Ki FMAs
    assert np.array_equal(gemm.matmul(a, b), np.matmul(a, b))
    assert forced == []
    ember.set_num_threads(1)
    a, b = _rand((20, 256), np.float32), _rand((256, 1024), np.float32)
    assert np.array_equal(gemm.matmul(a, b), np.matmul(a, b))
    assert forced == []


def test_without_native_helpers_the_python_path_runs(pool2, monkeypatch):
    monkeypatch.setattr(gemm, "_native_ready", [None])
    a, b = _rand((300, 400), np.float64), _rand((400, 512), np.float64)
    np.testing.assert_allclose(gemm.matmul(a, b), a @ b, **_tol(np.float64))


def test_native_gemm_rejects_what_it_cannot_do():
    native = gemm._native_gemm()
    a = np.ones((4, 4), np.float32)
    c = np.zeros((4, 4), np.float32)
    args = [a.ctypes.data, 4, a.ctypes.data, 4, c.ctypes.data, 4]
    assert native.gemm(2, False, False, 4, 4, 4, *args, False, 1, 2) == 0   # no such dtype
    assert native.gemm(0, False, False, 0, 4, 4, *args, False, 1, 2) == 0   # empty
    assert native.gemm(0, False, False, 4, 4, 4, *args, False, 0, 2) == 0   # no alignment
    assert native.gemm(0, False, False, 4, 4, 4, *args, False, 1, 1) >= 1
    assert np.array_equal(c, a @ a)


def test_concurrent_callers_get_their_own_products(spinning):
    """Two Python threads: one holds the pass, the other computes alone; both right."""
    pairs = [(_rand((64, 256), np.float32), _rand((256, 1024), np.float32)) for _ in range(4)]
    errors = []

    def work(seed):
        try:
            for i in range(40):
                a, b = pairs[(seed + i) % len(pairs)]
                np.testing.assert_allclose(gemm.matmul(a, b), a @ b, **_tol(np.float32))
        except BaseException as e:  # reported by the main thread
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S * 6)
    assert not any(t.is_alive() for t in threads), "a caller hangs"
    assert errors == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_multiplies(spinning):
    """A child forked while the worker spins has no helpers: its products run alone."""
    code = """
import os, sys, numpy as np, ember
from ember.backend import gemm, parallel
ember.set_num_threads(2)
parallel._CHECK_BLAS = False
parallel.parallel_for(2, lambda lo, hi: None, 1 << 30)
a, b = np.ones((64, 256), np.float32), np.ones((256, 1024), np.float32)
gemm.matmul(a, b)
pid = os.fork()
if pid == 0:
    native = gemm._native_gemm()
    ok = native.helpers() == 0 and bool((gemm.matmul(a, b) == 256).all())
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "0", out.stderr


def test_native_for_extension_says_when_extensions_may_band(pool2, monkeypatch):
    """What a C++ extension asks before banding a product: None with one thread or a
    multi-threaded BLAS; the first call starts the pool; with a worker spinning, _pool."""
    native = gemm._native_gemm()
    ember.set_num_threads(1)
    assert gemm.native_for_extension() is None
    ember.set_num_threads(2)
    monkeypatch.setattr(parallel, "_CHECK_BLAS", True)
    monkeypatch.setattr(parallel, "blas_threads", lambda: 2)
    assert gemm.native_for_extension() is None
    monkeypatch.setattr(parallel, "blas_threads", lambda: 1)
    deadline = time.monotonic() + WAIT_S
    while gemm.native_for_extension() is not native:  # wakes (or starts) the worker
        assert time.monotonic() < deadline, "the worker never spun"
        time.sleep(0.0005)
    assert parallel._state.workers
