"""Test helpers that need only ember and NumPy.

``check_grad(fn, *arrays)`` compares ember's backward with central finite
differences in float64; ``check_second_grad`` does the same for the gradient
of the gradient (``create_graph=True``).
"""
import numpy as np

import ember


def _numeric_jacobian_vector(fn, arrays, i, v, eps):
    """d <v, fn(arrays)> / d arrays[i], by central differences."""
    x = arrays[i]
    grad = np.zeros_like(x)
    flat = x.reshape(-1)
    for k in range(flat.size):
        orig = flat[k]
        flat[k] = orig + eps
        plus = np.sum(_forward_value(fn, arrays) * v)
        flat[k] = orig - eps
        minus = np.sum(_forward_value(fn, arrays) * v)
        flat[k] = orig
        grad.reshape(-1)[k] = (plus - minus) / (2 * eps)
    return grad


def _forward_value(fn, arrays):
    with ember.no_grad():
        out = fn(*[ember.tensor(a) for a in arrays])
    return out.numpy().astype(np.float64)


def check_grad(fn, *arrays, eps=1e-6, atol=1e-5, rtol=1e-4, seed=0):
    """Assert that backward of ``fn`` matches finite differences for every input."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    inputs = [ember.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*inputs)
    v = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(ember.tensor(v))
    for i, t in enumerate(inputs):
        expected = _numeric_jacobian_vector(fn, arrays, i, v, eps)
        got = np.zeros_like(arrays[i]) if t.grad is None else t.grad.numpy()
        np.testing.assert_allclose(got, expected, atol=atol, rtol=rtol,
                                   err_msg=f"gradient of input {i}")


def check_second_grad(fn, *arrays, eps=1e-6, atol=1e-4, rtol=1e-3, seed=1):
    """Assert that the gradient of <v, grad fn> matches finite differences."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    v = None

    def first_grad_dot(*ts):
        nonlocal v
        ts = [t if t.requires_grad else t.detach().requires_grad_() for t in ts]
        with ember.enable_grad():
            out = fn(*ts)
            if v is None:
                v = np.random.default_rng(seed).standard_normal(out.shape)
            grads = ember.autograd.grad(out, ts, ember.tensor(v), create_graph=True,
                                        allow_unused=True)
        total = None
        for g in grads:
            if g is not None:
                s = g.sum() if total is None else total + g.sum()
                total = s
        return total

    check_grad(first_grad_dot, *arrays, eps=eps, atol=atol, rtol=rtol, seed=seed)


def run_in_thread(fn, join_s=10):
    """Run ``fn()`` on a fresh thread and return its result, re-raising its exception: the
    test thread's CPU affinity is never touched, and a deadlock fails the test after
    ``join_s`` seconds instead of hanging it."""
    import threading
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as e:  # handed back to the test
            box["error"] = e
    t = threading.Thread(target=target)
    t.start()
    t.join(join_s)
    assert not t.is_alive(), "thread did not finish (deadlock?)"
    if "error" in box:
        raise box["error"]
    return box.get("value")
