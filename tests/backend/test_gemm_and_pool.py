"""ember's native pool helpers (ember/backend/_pool.c), the pool's use of them
(ember/backend/parallel.py), NumPy's BLAS threads at import (``adopt_blas``) and the banded
matrix products (ember/backend/gemm.py).

Expected values come from NumPy (``np.matmul``, serial computations), from the OS
(``os.sched_getaffinity``) and from the documented semantics of the helpers; never from
ember's own output."""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import ember
from ember.backend import gemm, parallel
from tests.helpers import run_in_thread

try:
    from ember.backend import _pool as native
except ImportError:  # built without a C compiler
    native = None

needs_native = pytest.mark.skipif(native is None, reason="ember.backend._pool not built")


def _allowed_cpus():
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return []


needs_pinning = pytest.mark.skipif(
    native is None or not sys.platform.startswith("linux") or len(_allowed_cpus()) < 2,
    reason="pinning needs ember.backend._pool, Linux and at least 2 allowed CPUs")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RNG = np.random.default_rng(1234)
JOIN_S = 10  # generous: a thread still alive after this is deadlocked




# ---- Event -----------------------------------------------------------------------------------

@needs_native
def test_event_post_then_wait_returns_at_once():
    e = native.Event()
    assert e.seq == 0
    e.post()
    assert e.seq == 1
    t0 = time.perf_counter()
    assert e.wait(0, 0) == 1  # the number already differs from `seen`
    assert e.wait(0, 1_000_000) == 1  # a long spin budget is not spent either
    assert e.wait(7, 0) == 1  # any `seen` other than the current number returns
    assert time.perf_counter() - t0 < 0.5
    e.post()
    e.post()
    assert e.seq == 3 and e.wait(1, 0) == 3


@needs_native
@pytest.mark.parametrize("spin_us,delay_s", [
    (0, 0.02),        # sleeps on the condition variable at once
    (1000, 0.0),      # posted while (most likely) still spinning
    (1000, 0.05),     # spun 1 ms, then went to sleep: the post must wake the sleeper
    (200_000, 0.02),  # posted during a long spin
])
def test_event_waiter_is_woken_by_post(spin_us, delay_s):
    e = native.Event()
    got = []
    t = threading.Thread(target=lambda: got.append(e.wait(0, spin_us)))
    t.start()
    time.sleep(delay_s)
    assert not got  # nothing posted yet: still waiting
    e.post()
    t.join(JOIN_S)
    assert not t.is_alive(), "waiter not woken by post"
    assert got == [1]


@needs_native
@pytest.mark.parametrize("spin_us", [0, 50])
def test_event_ping_pong_many_rounds(spin_us):
    rounds = 2000
    ping, pong = native.Event(), native.Event()
    log = []

    def other():
        seen = 0
        for i in range(rounds):
            seen = ping.wait(seen, spin_us)
            log.append(i)
            pong.post()

    t = threading.Thread(target=other, daemon=True)
    t.start()
    seen = 0
    for i in range(rounds):
        ping.post()
        seen = pong.wait(seen, spin_us)
        assert seen == i + 1 and len(log) == i + 1  # strictly alternating
    t.join(JOIN_S)
    assert not t.is_alive(), "ping-pong deadlocked"
    assert ping.seq == pong.seq == rounds and log == list(range(rounds))


_GIL_CHILD = r"""
import threading, time
from ember.backend import _pool
for spin_us in (0, 300_000):  # asleep on the condvar / spinning, both without the GIL
    e = _pool.Event()
    done = []
    waiter = threading.Thread(target=lambda: done.append(e.wait(0, spin_us)))
    count = [0]
    stop = []
    def counter():
        while not stop:
            count[0] += 1
    c = threading.Thread(target=counter)
    waiter.start()
    time.sleep(0.02)  # the waiter is inside wait()
    c.start()
    time.sleep(0.05)
    before = count[0]
    time.sleep(0.1)
    after = count[0]
    assert not done, "wait returned without a post"
    e.post()
    stop.append(1)
    waiter.join(5); c.join(5)
    assert done == [1] and after > before > 0, (spin_us, before, after)
print("ok")
"""


@needs_native
def test_event_wait_releases_the_gil():
    """While one thread waits (sleeping or spinning), other Python threads run. In a child
    process with a timeout: a wait that held the GIL would hang the test process."""
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", _GIL_CHILD], capture_output=True, text=True,
                       env=env, cwd=REPO, timeout=30)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# ---- pin / unpin / current_cpu ---------------------------------------------------------------

@needs_native
def test_current_cpu_is_an_allowed_cpu():
    cpu = native.current_cpu()
    if sys.platform.startswith("linux"):
        assert cpu in set(_allowed_cpus())
    else:
        assert cpu == -1


@needs_pinning
def test_pin_then_unpin_restores_affinity():
    def body():
        orig = os.sched_getaffinity(0)
        cpu = sorted(orig)[-1]
        assert native.pin(cpu) is True
        assert native.current_cpu() == cpu  # moved there at once
        assert os.sched_getaffinity(0) == {cpu}
        assert native.pin(cpu) is True and os.sched_getaffinity(0) == {cpu}  # again: a no-op
        other = sorted(orig)[0]
        assert native.pin(other) is True  # re-pin elsewhere: still within the original mask
        assert native.current_cpu() == other and os.sched_getaffinity(0) == {other}
        native.unpin()
        assert os.sched_getaffinity(0) == orig  # the mask from before the first pin
        native.unpin()  # not pinned: nothing to do
        assert os.sched_getaffinity(0) == orig
        return orig
    main_before = os.sched_getaffinity(0)
    assert run_in_thread(body) == main_before
    assert os.sched_getaffinity(0) == main_before


@needs_pinning
def test_pin_to_disallowed_cpu_fails_and_changes_nothing():
    def body():
        orig = os.sched_getaffinity(0)
        for bad in (100_000, -1, 1 << 40):
            assert native.pin(bad) is False
            assert os.sched_getaffinity(0) == orig
        # a CPU that exists but is outside this thread's mask
        keep, outside = sorted(orig)[0], sorted(orig)[1]
        os.sched_setaffinity(0, {keep})
        assert native.pin(outside) is False
        assert os.sched_getaffinity(0) == {keep}
        assert native.pin(keep) is True and os.sched_getaffinity(0) == {keep}
        native.unpin()
        assert os.sched_getaffinity(0) == {keep}  # restored to the mask pin() found
        return True
    main_before = os.sched_getaffinity(0)
    assert run_in_thread(body)
    assert os.sched_getaffinity(0) == main_before


@needs_pinning
def test_event_wait_unpins_a_thread_before_it_sleeps():
    e = native.Event()
    # posted before the wait: no sleep, the thread stays pinned
    e.post()

    def stays():
        orig = os.sched_getaffinity(0)
        cpu = sorted(orig)[-1]
        assert native.pin(cpu)
        assert e.wait(0, 1000) == 1
        still = os.sched_getaffinity(0)
        native.unpin()
        return still, cpu
    still, cpu = run_in_thread(stays)
    assert still == {cpu}

    # spins 100 us, then sleeps ~50 ms: woken with its original mask back
    e2 = native.Event()
    seen_inside = {}

    def sleeps():
        orig = os.sched_getaffinity(0)
        cpu = sorted(orig)[-1]
        assert native.pin(cpu)
        seen_inside["pinned"] = os.sched_getaffinity(0)
        seen_inside["seq"] = e2.wait(0, 100)
        seen_inside["after"] = os.sched_getaffinity(0)
        seen_inside["orig"] = orig
        # pinning again works after the implicit unpin (and unpin restores again)
        seen_inside["repin"] = native.pin(cpu) and os.sched_getaffinity(0) == {cpu}
        native.unpin()
        seen_inside["final"] = os.sched_getaffinity(0)

    t = threading.Thread(target=sleeps)
    t.start()
    time.sleep(0.05)
    e2.post()
    t.join(JOIN_S)
    assert not t.is_alive()
    orig = seen_inside["orig"]
    assert len(seen_inside["pinned"]) == 1 and seen_inside["seq"] == 1
    assert seen_inside["after"] == orig and len(orig) >= 2
    assert seen_inside["repin"] and seen_inside["final"] == orig


# ---- the pool on these signals ---------------------------------------------------------------

def _square_roots(n, pieces_per_thread):
    x = RNG.standard_normal(n) ** 2
    serial = np.sqrt(x) * 3.0 + np.log1p(x)
    out = np.full(n, np.nan)
    calls = []

    def fn(lo, hi):
        calls.append((lo, hi))
        out[lo:hi] = np.sqrt(x[lo:hi]) * 3.0 + np.log1p(x[lo:hi])
    parallel.parallel_for(n, fn, 1 << 30, pieces_per_thread=pieces_per_thread)
    return out, serial, calls


@needs_native
def test_pool_uses_native_signals(pool2):
    assert isinstance(parallel._signal(), parallel._SpinSignal)
    out, serial, calls = _square_roots(100_003, 4)
    assert np.array_equal(out, serial)
    assert sorted(calls) == [(100_003 * i // 8, 100_003 * (i + 1) // 8) for i in range(8)]


@needs_pinning
@pytest.mark.parametrize("pieces_per_thread", [1, 4])
def test_pool_pass_pins_workers_and_leaves_caller_affinity(pool2, pieces_per_thread,
                                                          monkeypatch):
    monkeypatch.setattr(parallel, "PIN_THREADS", True)  # on by default ("pin_threads")
    ember.set_num_threads(len(_allowed_cpus()))  # pinned only when the pool spans the CPUs
    before = os.sched_getaffinity(0)
    me = threading.current_thread().name
    x = RNG.standard_normal(40_000)
    out = np.empty_like(x)
    worker_seen = False
    for _ in range(3):
        seen = {}  # thread name -> affinities seen during its pieces of this pass

        def fn(lo, hi):
            seen.setdefault(threading.current_thread().name, []).append(
                os.sched_getaffinity(0))
            time.sleep(0.01)  # the worker wakes up and claims pieces too
            out[lo:hi] = np.exp(x[lo:hi])
        parallel.parallel_for(x.size, fn, 1 << 30, pieces_per_thread=pieces_per_thread)
        assert np.array_equal(out, np.exp(x))
        assert os.sched_getaffinity(0) == before  # the caller is unpinned after the pass
        here = seen[me]
        if pieces_per_thread == 1:
            assert all(a == before for a in here)  # one-piece passes do not pin the caller
        else:  # several pieces a thread: the caller runs pinned, on one CPU
            assert all(len(a) == 1 and a == here[0] and a <= before for a in here)
        for name, affs in seen.items():
            if name == me:
                continue
            assert name.startswith("ember-worker")
            worker_seen = True
            for a in affs:  # a worker runs pinned, on another CPU than the caller's
                assert len(a) == 1 and a <= before
                if pieces_per_thread > 1:
                    assert not (a & here[0])
    assert worker_seen, "the worker never took a piece"
    # idle workers sleep after SPIN_US and get their whole mask back
    deadline = time.monotonic() + 5
    while True:
        masks = [os.sched_getaffinity(w.thread.native_id) for w in parallel._state.workers]
        if all(m == before for m in masks) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert masks and all(m == before for m in masks)


def test_pool_lock_signal_fallback(pool2, monkeypatch):
    """Without the native helpers: plain locks, no pinning, the same results."""
    monkeypatch.setattr(parallel, "_native", None)
    monkeypatch.setattr(parallel, "_state", parallel._State())  # workers built on locks
    assert isinstance(parallel._signal(), parallel._LockSignal)
    assert parallel._pin_plan(1) is None
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    for ppt in (1, 4):
        out, serial, calls = _square_roots(50_001, ppt)
        assert np.array_equal(out, serial)
        k = 2 * ppt
        assert sorted(calls) == [(50_001 * i // k, 50_001 * (i + 1) // k) for i in range(k)]
    assert len(parallel._state.workers) == 1
    assert all(isinstance(w.go, parallel._LockSignal) for w in parallel._state.workers)
    if before is not None:
        assert os.sched_getaffinity(0) == before


# ---- NumPy's BLAS threads at import ----------------------------------------------------------

_BLAS_CHILD = ("import ember\nfrom ember.backend import parallel\n"
               "print(parallel.blas_threads(), parallel._adopted)")


def _child(extra_env):
    env = {k: v for k, v in os.environ.items() if k not in parallel.BLAS_ENV}
    env["PYTHONPATH"] = REPO + os.pathsep + os.environ.get("PYTHONPATH", "")
    env.update(extra_env)
    r = subprocess.run([sys.executable, "-c", _BLAS_CHILD], capture_output=True, text=True,
                       env=env, cwd=REPO, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


needs_openblas = pytest.mark.skipif(parallel.blas_threads() is None,
                                    reason="NumPy's BLAS is not an OpenBLAS found by ember")


@needs_openblas
def test_import_sets_openblas_to_one_thread():
    assert _child({}) == "1 [True]"


@needs_openblas
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS caps threads at the CPUs")
@pytest.mark.parametrize("var", ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"])
def test_import_leaves_blas_threads_set_in_environment(var):
    out = _child({var: "2"})
    assert out == "2 [False]"


# ---- gemm.matmul -----------------------------------------------------------------------------

@pytest.fixture
def bands(monkeypatch):
    """Records the parallel passes gemm makes: (n, pieces_per_thread) per call. The native
    bands (tests/backend/test_native_gemm.py) are turned off: whether they apply depends on
    the pool's threads spinning at the time."""
    monkeypatch.setattr(gemm, "NATIVE_MIN_FMAS", 1 << 62)
    calls = []
    real = gemm.parallel_for

    def spy(n, fn, work, pieces_per_thread=parallel.PIECES_PER_THREAD):
        calls.append((n, pieces_per_thread))
        return real(n, fn, work, pieces_per_thread=pieces_per_thread)
    monkeypatch.setattr(gemm, "parallel_for", spy)
    return calls


def _rand(shape, dtype, order="C"):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return np.asarray(a, dtype=dtype, order=order)


def _tol(dtype):
    """Single precision: a few ulps of the sums here (|entries| ~ sqrt(k)); double: tight."""
    if np.dtype(dtype) in (np.float32, np.complex64):
        return dict(rtol=2e-5, atol=1e-4)
    return dict(rtol=1e-12, atol=1e-11)


FLOAT_CASES = {  # name -> (a, b) builder; all large enough to be split
    "1024x64@64x512": lambda dt: (_rand((1024, 64), dt), _rand((64, 512), dt)),
    "128x784@784x512": lambda dt: (_rand((128, 784), dt), _rand((784, 512), dt)),
    "a.T": lambda dt: (_rand((300, 400), dt).T, _rand((300, 256), dt)),
    "b[:, ::2]": lambda dt: (_rand((256, 300), dt), _rand((300, 1024), dt)[:, ::2]),
    "fortran": lambda dt: (_rand((512, 200), dt, "F"), _rand((200, 300), dt, "F")),
    "odd n": lambda dt: (_rand((257, 301), dt), _rand((301, 333), dt)),
    "narrow rows": lambda dt: (_rand((4096, 256), dt), _rand((256, 16), dt)),
    "narrow n=31": lambda dt: (_rand((3000, 200), dt), _rand((200, 31), dt)),
    "narrow n=100": lambda dt: (_rand((2000, 128), dt), _rand((128, 100), dt)),
}


def _split(bands):
    """The product went through one parallel pass of at least 2 bands."""
    return len(bands) == 1 and bands[0][0] >= 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(FLOAT_CASES))
def test_matmul_split_equals_numpy(pool2, bands, dtype, case):
    a, b = FLOAT_CASES[case](dtype)
    expected = np.matmul(a, b)
    got = gemm.matmul(a, b)
    assert _split(bands), f"the product was not split: {bands}"
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.flags.c_contiguous
    np.testing.assert_allclose(got, expected, **_tol(dtype))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_matmul_complex_split(pool2, bands, dtype):
    a, b = _rand((300, 200), dtype), _rand((200, 256), dtype)
    got = gemm.matmul(a, b)
    assert _split(bands)
    np.testing.assert_allclose(got, a @ b, **_tol(dtype))


def test_matmul_one_thread_or_tiny_is_not_split(pool2, bands):
    a, b = _rand((20, 30), np.float32), _rand((30, 40), np.float32)
    assert np.array_equal(gemm.matmul(a, b), np.matmul(a, b))
    a, b = _rand((64, 64), np.float64), _rand((64, 64), np.float64)  # 256 Ki FMAs
    assert np.array_equal(gemm.matmul(a, b), np.matmul(a, b))
    ember.set_num_threads(1)
    a, b = _rand((1024, 64), np.float32), _rand((64, 512), np.float32)
    assert np.array_equal(gemm.matmul(a, b), np.matmul(a, b))
    assert bands == []


@pytest.mark.parametrize("a,b", [
    (RNG.integers(-50, 50, (300, 200)), RNG.integers(-50, 50, (200, 250))),
    (RNG.integers(-50, 50, (300, 200)).astype(np.int32),
     RNG.integers(-50, 50, (200, 250)).astype(np.int32)),
    (RNG.integers(0, 2, (200, 200)).astype(bool), RNG.integers(0, 2, (200, 200)).astype(bool)),
])
def test_matmul_integer_delegates_exactly(pool2, bands, a, b):
    got = gemm.matmul(a, b)
    expected = np.matmul(a, b)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    assert bands == []


@pytest.mark.parametrize("sa,sb", [((64, 300, 1), (64, 1, 10)),   # a long: transposed multiply
                                   ((4, 3, 1), (4, 1, 50)), ((7, 1), (2, 3, 1, 5)),
                                   ((2, 1, 6, 1), (3, 1, 4)), ((0, 5, 1), (0, 1, 3))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, bool])
def test_matmul_stacks_of_outer_products_equal_numpy(sa, sb, dtype):
    """One-term products (per-sample linear weight gradients under vmap) are one broadcast
    multiply, which must equal NumPy's matmul bit for bit, shape and dtype included."""
    a, b = RNG.integers(-9, 9, sa).astype(dtype), RNG.integers(-9, 9, sb).astype(dtype)
    if dtype in (np.float32, np.float64):
        a, b = _rand(sa, dtype), _rand(sb, dtype)
    got, expected = gemm.matmul(a, b), np.matmul(a, b)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("sa,sb", [((64, 3136, 1), (64, 1, 10)),   # vmap's linear layer
                                   ((64, 10, 1), (64, 1, 3136)),
                                   ((3136, 1), (48, 1, 10)),        # a broadcast along the stack
                                   ((2, 1, 2000, 1), (3, 1, 40))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_large_stacks_of_outer_products_split_equal_serial(pool2, bands, sa, sb, dtype):
    """A large stack of one-term products is split along its first axis over the pool; the
    values (and shape) equal the serial multiply and NumPy's matmul bit for bit."""
    a, b = _rand(sa, dtype), _rand(sb, dtype)
    got = gemm.matmul(a, b)
    assert len(bands) == 1 and bands[0][0] >= 2
    expected = np.matmul(a, b)
    ember.set_num_threads(1)
    serial = gemm.matmul(a, b)
    assert len(bands) == 1  # one thread: no pass
    assert got.shape == serial.shape == expected.shape and got.dtype == expected.dtype
    assert np.array_equal(got, serial) and np.array_equal(got, expected)


def test_matmul_mixed_dtypes_and_other_ranks_delegate(pool2, bands):
    a32, b64 = _rand((512, 300), np.float32), _rand((300, 400), np.float64)
    for a, b in ((a32, b64), (b64.T, a32.T)):
        got = gemm.matmul(a, b)
        expected = np.matmul(a, b)
        assert got.dtype == np.float64 and np.array_equal(got, expected)
    v = _rand(300, np.float64)
    for a, b in ((v, b64), (b64.T, v), (v, v)):
        expected = np.matmul(a, b)
        got = gemm.matmul(a, b)
        assert np.shape(got) == np.shape(expected) and np.array_equal(got, expected)
    assert bands == []


def test_matmul_stack_times_one_matrix_is_one_product(pool2, bands):
    # (..., m, k) @ one matrix (2-D, or a stack broadcast along its batch dims, as vmap
    # expands a shared weight): the stack's rows go through one 2-D product (banded over
    # the pool when large), as torch.matmul folds them, instead of NumPy's product per
    # matrix
    x3, w2 = _rand((4, 256, 128), np.float32), _rand((128, 640), np.float32)
    expected = (x3.reshape(-1, 128).astype(np.float64) @ w2).reshape(4, 256, 640)
    for w in (w2, w2[None], np.broadcast_to(w2, (4, 128, 640))):
        bands.clear()
        got = gemm.matmul(x3, w)
        assert got.shape == (4, 256, 640) and got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
        assert bands, "the folded product is large enough to be split"
    # a matrix that widens the batch, or a stack of different matrices: NumPy's matmul
    own = _rand((4, 128, 640), np.float32)
    for a, b in ((x3[:1], np.broadcast_to(w2, (4, 128, 640))), (x3, own)):
        np.testing.assert_array_equal(gemm.matmul(a, b), np.matmul(a, b))


@pytest.mark.parametrize("sa,sb", [((512, 300), (301, 400)), ((300,), (200, 5)),
                                   ((3, 4, 5), (6, 7))])
def test_matmul_shape_mismatch_raises_numpy_error(pool2, sa, sb):
    a, b = _rand(sa, np.float32), _rand(sb, np.float32)
    with pytest.raises(ValueError) as expected:
        np.matmul(a, b)
    with pytest.raises(ValueError) as got:
        gemm.matmul(a, b)
    assert str(got.value) == str(expected.value)


# ---- gemm.matmul_pair ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_pair_side_by_side(pool2, bands, dtype):
    """A linear layer's backward: grad_input = g @ W, grad_weight = g.T @ x."""
    g, w, x = _rand((512, 256), dtype), _rand((256, 384), dtype), _rand((512, 384), dtype)
    gx, gw = gemm.matmul_pair(g, w, g.T, x)
    assert bands == [(2, 1)]  # one pass of two pieces: one whole product per thread
    # each product is one whole BLAS call: bitwise the separate products
    assert np.array_equal(gx, np.matmul(g, w)) and np.array_equal(gw, np.matmul(g.T, x))
    assert gx.shape == (512, 384) and gw.shape == (256, 384)


def test_matmul_pair_unbalanced_and_tiny(pool2, bands):
    big_a, big_b = _rand((1024, 256), np.float32), _rand((256, 512), np.float32)
    small_a, small_b = _rand((64, 64), np.float32), _rand((64, 64), np.float32)
    p, q = gemm.matmul_pair(big_a, big_b, small_a, small_b)
    np.testing.assert_allclose(p, big_a @ big_b, rtol=2e-5, atol=1e-4)
    assert np.array_equal(q, small_a @ small_b)
    assert _split(bands)  # only the big product split, in bands
    bands.clear()
    t1, t2 = _rand((3, 4), np.float64), _rand((4, 5), np.float64)
    p, q = gemm.matmul_pair(t1, t2, t2.T, t1.T)
    assert np.array_equal(p, t1 @ t2) and np.array_equal(q, t2.T @ t1.T)
    assert bands == []
    ia, ib = RNG.integers(-9, 9, (200, 200)), RNG.integers(-9, 9, (200, 200))
    p, q = gemm.matmul_pair(ia, ib, ib, ia)  # not BLAS types: plain products
    assert np.array_equal(p, ia @ ib) and np.array_equal(q, ib @ ia)
    assert bands == []


def test_matmul_stack_of_products_splits_along_the_stack(pool2, bands):
    # a stack of one batch shape (attention's q @ k^T): each slice is the same NumPy matmul
    # of the same matrices, so the split stack equals np.matmul bit for bit
    rng = np.random.default_rng(5)
    a = rng.standard_normal((8, 4, 96, 64)).astype(np.float32)
    b = rng.standard_normal((8, 4, 64, 96)).astype(np.float32)
    for x, y in ((a, b), (a, np.swapaxes(a, -1, -2)), (a.astype(np.float64), b.astype(np.float64))):
        bands.clear()
        got = gemm.matmul(x, y)
        assert bands, "large enough to be split"
        np.testing.assert_array_equal(got, np.matmul(x, y))
    # different batch shapes (broadcasting), mixed dtypes, small stacks: NumPy's own matmul
    for x, y in ((a[:1], b), (a, b.astype(np.float64)), (a[:1, :1, :4, :4], b[:1, :1, :4, :4])):
        bands.clear()
        np.testing.assert_array_equal(gemm.matmul(x, y), np.matmul(x, y))
        assert bands == []


@needs_pinning
def test_pin_plan_spreads_after_the_caller_and_needs_a_full_pool(monkeypatch):
    monkeypatch.setattr(parallel, "PIN_THREADS", True)
    allowed = sorted(_allowed_cpus())
    here = allowed[len(allowed) // 2]
    monkeypatch.setattr(parallel._native, "current_cpu", lambda: here)
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(len(allowed))
        caller, workers = parallel._pin_plan(len(allowed) - 1)
        at = allowed.index(here)
        assert caller == here and workers == allowed[at + 1:] + allowed[:at]
        ember.set_num_threads(len(allowed) - 1)  # a pool smaller than the CPUs: not pinned
        assert parallel._pin_plan(1) is None
        ember.set_num_threads(len(allowed))
        monkeypatch.setattr(parallel, "PIN_THREADS", False)
        assert parallel._pin_plan(1) is None
    finally:
        ember.set_num_threads(saved)
