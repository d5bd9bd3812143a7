"""ember's intra-op thread pool (ember/backend/parallel.py) and the kernels that use it.

Threaded and unthreaded runs of conv / max pool / ReLU (forward and backward) must give
bitwise identical results; the pool's size threshold and conv's block size are lowered here so
that small shapes take the threaded path. Expected values come from the 1-thread run and, for
the thread-count semantics, from PyTorch's documented behaviour (its error messages)."""
import os
import threading
import time

import numpy as np
import pytest

import ember
from ember.backend import parallel
from ember._ops import conv as conv_ops
from ember.utils.data import DataLoader, Dataset

F = ember.nn.functional
RNG = np.random.default_rng(0)


@pytest.fixture
def threads():
    """Restore the thread count afterwards; make small passes eligible for splitting."""
    saved = ember.get_num_threads()
    min_bytes, block = parallel.MIN_CHUNK_BYTES, conv_ops._BLOCK_BYTES
    parallel.MIN_CHUNK_BYTES = 1
    parallel._CHECK_BLAS = False  # split even next to a multi-threaded BLAS
    conv_ops._BLOCK_BYTES = 1  # one sample per block: several blocks even for tiny batches
    yield
    parallel.MIN_CHUNK_BYTES, conv_ops._BLOCK_BYTES = min_bytes, block
    parallel._CHECK_BLAS = True
    ember.set_num_threads(saved)


def _run(fn, arrays, n_threads):
    """fn(*tensors) -> output; returns output and input gradients (a fixed cotangent)."""
    ember.set_num_threads(n_threads)
    ts = [ember.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    cot = np.random.default_rng(1).standard_normal(out.shape).astype(arrays[0].dtype)
    out.backward(ember.tensor(cot))
    return [out.detach().numpy()] + [t.grad.numpy() for t in ts]


def _same_for_threads(fn, *arrays):
    ref = _run(fn, arrays, 1)
    for n in (2, 3):
        got = _run(fn, arrays, n)
        for r, g in zip(ref, got):
            assert r.dtype == g.dtype and r.shape == g.shape
            assert np.array_equal(r, g, equal_nan=True), f"{n} threads differ"
    return ref


def _arr(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


CONVS = [  # (C, O, k, groups, kwargs): short (channels-first) and long (rows) layouts
    (1, 4, 3, 1, dict(padding=1)),
    (4, 6, 3, 2, dict(padding=1, stride=2)),
    (8, 5, 3, 1, dict(padding=1)),
    (8, 6, (3, 2), 2, dict(dilation=(1, 2), padding=(1, 0))),
]


@pytest.mark.parametrize("case", range(len(CONVS)))
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_threaded_matches_unthreaded(threads, case, bias):
    c, o, k, g, kw = CONVS[case]
    kh, kwd = (k, k) if isinstance(k, int) else k
    x, w, b = _arr(5, c, 7, 6), _arr(o, c // g, kh, kwd), _arr(o)
    if bias:
        fn = lambda x, w, b: F.conv2d(x, w, b, groups=g, **kw)  # noqa: E731
        _same_for_threads(fn, x, w, b)
    else:
        _same_for_threads(lambda x, w: F.conv2d(x, w, groups=g, **kw), x, w)


def test_conv1d_and_transpose_threaded(threads):
    _same_for_threads(lambda x, w: F.conv1d(x, w, padding=1), _arr(4, 6, 9), _arr(3, 6, 3))
    _same_for_threads(lambda x, w: F.conv1d(x, w, stride=2), _arr(4, 2, 9), _arr(3, 2, 3))
    _same_for_threads(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1),
                      _arr(4, 6, 4, 5), _arr(6, 3, 3, 3))


def test_conv_blocks_do_not_change_gradients(threads):
    """Per-block partial weight gradients vs one block: equal up to rounding (float64)."""
    x, w, b = _arr(6, 8, 5, 5, dtype=np.float64), _arr(4, 8, 3, 3, dtype=np.float64), \
        _arr(4, dtype=np.float64)
    fn = lambda x, w, b: F.conv2d(x, w, b, padding=1)  # noqa: E731
    blocked = _run(fn, (x, w, b), 2)
    conv_ops._BLOCK_BYTES = 1 << 30
    whole = _run(fn, (x, w, b), 2)
    for a, e in zip(blocked, whole):
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)


def test_conv_second_derivative_threaded(threads):
    x, w = _arr(4, 3, 5, 5, dtype=np.float64), _arr(2, 3, 3, 3, dtype=np.float64)
    res = []
    for n in (1, 2):
        ember.set_num_threads(n)
        xt, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
        y = F.conv2d(xt, wt, padding=1)
        gx, gw = ember.autograd.grad((y * y).sum(), (xt, wt), create_graph=True)
        s = (gx * gx).sum() + (gw * gw).sum()
        res.append([t.numpy() for t in ember.autograd.grad(s, (xt, wt))])
    for a, b in zip(*res):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("k,kw", [(2, {}), ((2, 3), {}), (2, dict(ceil_mode=True)), (3, {})])
def test_max_pool_threaded_matches_unthreaded(threads, k, kw):
    x = np.round(_arr(6, 3, 8, 9) * 2)  # ties: the first maximum must win in every chunk
    _same_for_threads(lambda x: F.max_pool2d(x, k, **kw), x)


def test_max_pool_second_derivative_threaded(threads):
    x, g0 = _arr(5, 2, 4, 4), _arr(5, 2, 2, 2)
    res = []
    for n in (1, 2):
        ember.set_num_threads(n)
        xt = ember.tensor(x, requires_grad=True)
        g = ember.tensor(g0, requires_grad=True)
        gx, = ember.autograd.grad(F.max_pool2d(xt, 2), xt, g, create_graph=True)
        gg, = ember.autograd.grad((gx * ember.tensor(x)).sum(), g)
        res.append((gx.detach().numpy(), gg.numpy()))
    assert all(np.array_equal(a, b) for a, b in zip(*res))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_threaded_matches_unthreaded(threads, dtype):
    x = _arr(3, 5, 4100, dtype=dtype)  # rows of 4096 plus a tail
    x[0, 0, :6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-40]
    ref = _same_for_threads(F.relu, x)
    assert np.array_equal(ref[0], np.maximum(x, 0), equal_nan=True)
    assert np.array_equal(_same_for_threads(lambda t: ember.nn.ReLU()(t), x)[0], ref[0],
                          equal_nan=True)


def test_relu_integer_and_noncontiguous(threads):
    ember.set_num_threads(2)
    xi = RNG.integers(-5, 5, (3, 9000)).astype(np.int32)
    assert np.array_equal(F.relu(ember.tensor(xi)).numpy(), np.maximum(xi, 0))
    xf = _arr(90, 100)
    out = F.relu(ember.tensor(xf).t())
    assert np.array_equal(out.numpy(), np.maximum(xf.T, 0))


def test_cnn_training_step_threaded_matches_unthreaded(threads):
    x, y = _arr(6, 1, 12, 12), RNG.integers(0, 3, 6)
    results = []
    for n in (1, 2):
        ember.set_num_threads(n)
        ember.manual_seed(0)
        nn = ember.nn
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(72, 3))
        loss = F.cross_entropy(model(ember.tensor(x)), ember.tensor(y))
        loss.backward()
        results.append([loss.item()] + [p.grad.numpy() for p in model.parameters()])
    assert results[0][0] == results[1][0]
    assert all(np.array_equal(a, b) for a, b in zip(results[0][1:], results[1][1:]))


# ---- the pool itself -------------------------------------------------------------------------

def test_num_threads_semantics():
    saved = ember.get_num_threads()
    try:
        default = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        assert parallel._default_threads() == (default or parallel._default_threads())
        for n in (1, 3, np.int64(2)):
            ember.set_num_threads(n)
            assert ember.get_num_threads() == int(n) and type(ember.get_num_threads()) is int
        for bad in (0, -1):
            with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
                ember.set_num_threads(bad)
        for bad, name in ((2.5, "float"), ("2", "str"), (True, "bool"), (None, "NoneType")):
            with pytest.raises(RuntimeError,
                               match=f"set_num_threads expects an int, but got {name}"):
                ember.set_num_threads(bad)
        assert ember.get_num_threads() == 2  # failed calls change nothing
    finally:
        ember.set_num_threads(saved)


def test_pool_only_next_to_single_threaded_blas(monkeypatch):
    """OpenBLAS's idle threads busy-wait after each call: the pool stays off while NumPy's BLAS
    may run several threads, or is unknown."""
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        for blas, chunks in ((1, 2), (2, 1), (4, 1), (None, 1)):
            monkeypatch.setattr(parallel, "blas_threads", lambda: blas)
            assert parallel.num_chunks(8, 1 << 30) == chunks
        monkeypatch.setattr(parallel, "_CHECK_BLAS", False)
        assert parallel.num_chunks(8, 1 << 30) == 2
        monkeypatch.undo()
        n = parallel.blas_threads()  # the real query: an int, or None without OpenBLAS
        assert n is None or (type(n) is int and n >= 1)
    finally:
        ember.set_num_threads(saved)


def test_parallel_for_chunks_cover_range_and_errors_propagate(threads):
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(3)
        seen, names = [], set()

        def fn(lo, hi):
            seen.append((lo, hi))
            names.add(threading.current_thread().name)
            time.sleep(0.005)  # the workers wake up and claim pieces too
        parallel.parallel_for(10, fn, 1 << 30)
        assert sorted(seen) == [(i, i + 1) for i in range(10)] and len(names) == 3
        seen.clear()
        parallel.parallel_for(100, fn, 1 << 30)  # 4 pieces per thread, covering the range
        assert sorted(seen) == [(100 * i // 12, 100 * (i + 1) // 12) for i in range(12)]
        seen.clear()
        parallel.MIN_CHUNK_BYTES = 1 << 18
        parallel.parallel_for(10, fn, 100)  # too little work: one call, on this thread
        assert seen == [(0, 10)]

        def boom(lo, hi):
            if lo > 0:
                raise ValueError(f"chunk {lo}")
        with pytest.raises(ValueError, match="chunk"):
            parallel.parallel_for(10, boom, 1 << 30)
        seen.clear()
        parallel.parallel_for(4, fn, 1 << 30)  # the pool still works after an error
        assert sorted(seen) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    finally:
        ember.set_num_threads(saved)


def test_nested_and_concurrent_calls_run_inline(threads):
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        out = np.zeros(8)

        def inner(lo, hi):
            out[lo:hi] += 1

        def outer(lo, hi):
            parallel.parallel_for(8, inner, 1 << 30)  # inside a chunk: runs inline

        parallel.parallel_for(2, outer, 1 << 30)
        assert (out == 2).all()
        # several user threads at once: each gets a correct result
        x = _arr(4, 3, 16, 16)
        ref = F.max_pool2d(ember.tensor(x), 2).numpy()
        errors = []

        def work():
            for _ in range(20):
                if not np.array_equal(F.max_pool2d(ember.tensor(x), 2).numpy(), ref):
                    errors.append("mismatch")
        ts = [threading.Thread(target=work) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert errors == []
    finally:
        ember.set_num_threads(saved)


def test_workers_drop_a_pass_when_it_is_done(pool2):
    """A worker must not keep the last pass's function (and the arrays its closure holds)
    alive: besides the memory, an extra reference to a fresh gradient makes autograd copy it
    instead of taking it."""
    import gc
    import weakref

    class Payload:
        pass
    payload = Payload()
    ref = weakref.ref(payload)
    seen = []

    def fn(lo, hi, payload=payload):
        seen.append(threading.current_thread().name)
        time.sleep(0.005)  # slow enough that the worker takes pieces too
    parallel.parallel_for(8, fn, 1 << 30)
    assert any(name.startswith("ember-worker") for name in seen)  # a worker ran a piece
    del fn, payload
    gc.collect()
    assert ref() is None


def test_linear_weight_gradient_is_taken_not_copied_with_threads(pool2, monkeypatch):
    """The first gradient of a leaf is the product's own array (as with one thread), also
    when the product ran on the pool (a split band product or a side-by-side pair)."""
    from ember._ops import linalg
    produced = []  # data addresses only: holding the arrays would itself force a copy

    def record(fn):
        def wrapped(*args):
            out = fn(*args)
            for arr in (out if isinstance(out, tuple) else (out,)):
                produced.append(arr.__array_interface__["data"][0])
            return out
        return wrapped
    monkeypatch.setattr(linalg, "_gemm", record(linalg._gemm))
    monkeypatch.setattr(linalg, "_gemm_pair", record(linalg._gemm_pair))
    lin1, lin2 = ember.nn.Linear(784, 512), ember.nn.Linear(512, 512)
    x = ember.tensor(np.random.default_rng(0).standard_normal((128, 784)).astype(np.float32))
    lin2(lin1(x).relu()).sum().backward()
    for p in (lin1.weight, lin2.weight):
        assert p.grad.numpy().__array_interface__["data"][0] in produced


class _PooledWork(Dataset):
    """Each sample runs a threaded ReLU in the worker process and reports the pool's size."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        x = ember.tensor(np.full((4, 9000), i - 1.5, dtype=np.float32))
        y = F.relu(x)
        return {"sum": float(y.sum().item()), "workers": len(parallel._state.workers),
                "pid": os.getpid()}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_pool_after_fork_dataloader_workers(threads):
    ember.set_num_threads(2)
    F.relu(ember.tensor(_arr(4, 9000)))  # the parent's pool is started
    assert len(parallel._state.workers) >= 1
    # workers start with one intra-op thread (as PyTorch's); two again to use a pool there
    batches = list(DataLoader(_PooledWork(), batch_size=2, num_workers=2, timeout=60,
                              multiprocessing_context="fork",
                              worker_init_fn=lambda worker_id: ember.set_num_threads(2)))
    sums = [s for b in batches for s in b["sum"].tolist()]
    assert sums == [0.0, 0.0, 0.5 * 36000, 1.5 * 36000]
    assert all(w >= 1 for b in batches for w in b["workers"].tolist())  # the children's own
    assert os.getpid() not in {p for b in batches for p in b["pid"].tolist()}


@pytest.mark.parametrize("c", [3, 8])  # short and rows layouts
def test_conv_empty_batch(c):
    x = ember.zeros(0, c, 5, 5, requires_grad=True)
    w = ember.ones(4, c, 3, 3, requires_grad=True)
    b = ember.ones(4, requires_grad=True)
    y = F.conv2d(x, w, b, padding=1)
    assert tuple(y.shape) == (0, 4, 5, 5)
    y.sum().backward()
    assert tuple(x.grad.shape) == (0, c, 5, 5)
    assert not w.grad.numpy().any() and not b.grad.numpy().any()
