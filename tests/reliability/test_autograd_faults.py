"""Autograd under faults: bad hook results, concurrent backward, stale saved tensors,
bad backward results, anomaly mode seen from other threads."""
import threading

import numpy as np
import pytest

import ember


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- the class and message are what is compared
        return type(e), str(e)
    return None


def _hooked_backward(lib, hook, dtype="float32"):
    """backward through ``x * 2`` with ``hook`` on the leaf ``x``."""
    x = lib.ones(2, dtype=getattr(lib, dtype), requires_grad=True)
    x.register_hook(hook)
    (x * 2).sum().backward()
    return x.grad


def _named_hook(g):
    return g.double()


HOOKS = {
    "wider": lambda lib: (lambda g: lib.ones(2, 2)),
    "shorter": lambda lib: (lambda g: lib.ones(1)),
    "other_dtype": lambda lib: _named_hook,
    "integer": lambda lib: (lambda g: g.int()),
    "not_a_tensor": lambda lib: (lambda g: 1.0),
}


@pytest.mark.parametrize("case", sorted(HOOKS))
def test_leaf_hook_may_not_change_size_or_type(case):
    hook = HOOKS[case](ember)
    err = _error(lambda: _hooked_backward(ember, hook))
    assert err is not None, "the hook's result was silently broadcast or cast into .grad"
    expected = {
        "wider": (RuntimeError, "hook '<lambda>' has changed the size of value"),
        "shorter": (RuntimeError, "hook '<lambda>' has changed the size of value"),
        "other_dtype": (RuntimeError, "hook '_named_hook' has changed the type of value "
                        "(was ember.FloatTensor got ember.DoubleTensor)"),
        "integer": (RuntimeError, "hook '<lambda>' has changed the type of value "
                    "(was ember.FloatTensor got ember.IntTensor)"),
        "not_a_tensor": (TypeError, "expected Variable, but hook returned 'float'"),
    }[case]
    assert err == expected


@pytest.mark.parametrize("case", sorted(HOOKS))
def test_leaf_hook_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    theirs = _error(lambda: _hooked_backward(torch, HOOKS[case](torch)))
    ours = _error(lambda: _hooked_backward(ember, HOOKS[case](ember)))
    assert ours[0] is theirs[0]
    assert ours[1] == theirs[1].replace("torch.", "ember.")


def _node_hook_errors(lib):
    """Errors of node pre-/post-hooks that return the wrong number, size or type."""
    def run(register):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        register(y.grad_fn)
        y.sum().backward()
        return x.grad

    cases = [
        lambda n: n.register_prehook(lambda go: (go[0], go[0])),
        lambda n: n.register_prehook(lambda go: (lib.ones(3),)),
        lambda n: n.register_prehook(lambda go: (go[0].double(),)),
        lambda n: n.register_prehook(lambda go: (3.0,)),
        lambda n: n.register_hook(lambda gi, go: (gi[0],)),
        lambda n: n.register_hook(lambda gi, go: (lib.ones(3), None)),
        lambda n: n.register_hook(lambda gi, go: (gi[0].double(), None)),
    ]
    return [_error(lambda: run(c)) for c in cases]


def test_node_hooks_are_validated_like_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = _node_hook_errors(ember), _node_hook_errors(torch)
    for o, t in zip(ours, theirs):
        assert t is not None and o is not None
        assert (o[0], o[1]) == (t[0], t[1].replace("torch.", "ember."))


def test_node_hook_returning_none_entries_drops_the_gradient():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    y.grad_fn.register_prehook(lambda go: (None,))
    y.sum().backward()
    assert x.grad is None  # as in PyTorch: None replaces the gradient


def test_hook_returning_same_size_and_type_still_replaces():
    x = ember.ones(3, requires_grad=True)
    x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 20, np.float32))


def test_concurrent_backward_into_a_shared_leaf_loses_no_update():
    # Large enough that NumPy's in-place add releases the GIL: two threads summing into
    # one .grad without a lock drop updates.
    n, threads, steps = 200_000, 8, 25
    w = ember.zeros(n, dtype=ember.float64, requires_grad=True)
    barrier = threading.Barrier(threads)
    errors = []

    def worker(k):
        try:
            x = ember.full((n,), float(k + 1), dtype=ember.float64)
            barrier.wait()
            for _ in range(steps):
                (w * x).sum().backward()
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=120)
    assert not errors
    expected = steps * sum(range(1, threads + 1))  # each thread adds (k + 1) per step
    np.testing.assert_array_equal(w.grad.numpy(), np.full(n, expected, np.float64))


def test_concurrent_backward_with_create_graph_sums_every_gradient():
    w = ember.ones(4, dtype=ember.float64, requires_grad=True)
    threads, steps = 4, 30

    def worker():
        for _ in range(steps):
            (w * w).sum().backward(create_graph=True)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=120)
    np.testing.assert_array_equal(w.grad.detach().numpy(), np.full(4, 2.0 * threads * steps))


def _saved_output_modified(lib):
    a = lib.randn(3, requires_grad=True)
    b = a.exp()    # Exp saves its output b
    c = b * 2      # Mul by a number reads no tensor values in backward
    b.add_(1)
    c.sum().backward()


def _unread_saved_input_modified(lib):
    a = lib.randn(3, requires_grad=True)
    w = lib.randn(3)
    b = a * 1
    c = b * w      # only b needs a gradient: w's values matter, b's do not
    b.add_(1)
    c.sum().backward()
    return a.grad


def _read_saved_input_modified(lib):
    a = lib.randn(3, requires_grad=True)
    w = lib.randn(3, requires_grad=True)
    b = a.exp()
    c = b * w      # w's gradient reads b
    b.add_(1)
    c.sum().backward()


def _twice_modified(lib):
    a = lib.randn(3, requires_grad=True)
    b = a.sin()
    c = b.sin()
    b.mul_(2)
    b.add_(1)
    c.sum().backward()


def _function_saved_input_modified(lib):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2

    a = lib.randn(3, requires_grad=True)
    b = a.exp()
    c = Twice.apply(b)
    b.mul_(3)
    c.sum().backward()


def _matmul_operand_modified(lib):
    a = lib.randn(3, 3, requires_grad=True)
    w = lib.randn(3, 3)
    b = a * 1
    c = b @ w      # b's gradient reads w only
    b.add_(1)
    c.sum().backward()
    return a.grad


SAVED_SCENARIOS = [_saved_output_modified, _unread_saved_input_modified,
                   _read_saved_input_modified, _twice_modified,
                   _function_saved_input_modified, _matmul_operand_modified]


def test_inplace_error_names_the_op_whose_saved_output_changed():
    err = _error(lambda: _saved_output_modified(ember))
    assert err[0] is RuntimeError
    assert "which is output 0 of Exp," in err[1]


@pytest.mark.parametrize("scenario", [_unread_saved_input_modified, _matmul_operand_modified])
def test_modifying_a_saved_tensor_no_gradient_reads_is_allowed(scenario):
    assert _error(lambda: scenario(ember)) is None


@pytest.mark.parametrize("scenario", SAVED_SCENARIOS)
def test_inplace_error_matches_torch(scenario):
    torch = pytest.importorskip("torch")
    theirs = _error(lambda: scenario(torch))
    ours = _error(lambda: scenario(ember))
    if theirs is None:
        assert ours is None
    else:
        assert ours[0] is theirs[0]
        assert ours[1] == theirs[1].replace("torch.", "ember.")


@pytest.mark.parametrize("bad, name", [(1.0, "float"), ("s", "str"),
                                       (np.ones(2), "numpy.ndarray"), ([1.0], "list")])
def test_backward_returning_a_non_tensor_is_torchs_runtime_error(bad, name):
    class Bad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return bad

    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"^expected Variable or None \(got {name}\)$"):
        Bad.apply(x).sum().backward()


def test_backward_returning_a_non_tensor_matches_torch():
    torch = pytest.importorskip("torch")

    class Custom:
        pass

    def run(lib, bad):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return bad

        Bad.apply(lib.ones(2, requires_grad=True)).sum().backward()

    for bad in (1.0, "s", np.ones(2), np.float64(1.0), Custom(), (1,)):
        assert _error(lambda: run(ember, bad)) == _error(lambda: run(torch, bad)), bad


def test_anomaly_mode_is_process_wide():
    seen = {}
    ember.autograd.set_detect_anomaly(True)
    try:
        t = threading.Thread(target=lambda: seen.update(
            on=ember.is_anomaly_enabled() if hasattr(ember, "is_anomaly_enabled")
            else ember.autograd.anomaly.is_anomaly_enabled()))
        t.start()
        t.join()
    finally:
        ember.autograd.set_detect_anomaly(False)
    assert seen["on"] is True


def test_anomaly_enabled_in_one_thread_catches_nan_in_another():
    class NaNGrad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    result = {}

    def other_thread():
        x = ember.ones(2, requires_grad=True)
        result["error"] = _error(lambda: NaNGrad.apply(x).sum().backward())

    with pytest.warns(UserWarning):
        with ember.autograd.detect_anomaly():
            t = threading.Thread(target=other_thread)
            t.start()
            t.join()
    assert result["error"] == (RuntimeError,
                               "Function 'NaNGradBackward' returned nan values in its 0th output.")
