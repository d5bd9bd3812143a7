"""log_softmax over the last dim of a large array runs in blocks of rows on the thread pool:
every row is computed as the unsplit NumPy formula computes it (the same bits, for any thread
count), forward and backward; other layouts take the unsplit path."""
import numpy as np
import pytest

import ember
from ember.backend.parallel import get_num_threads, set_num_threads
from ember._ops import nn_ops


def _reference(x, g, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    out = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return out, g - np.exp(out) * g.sum(axis=axis, keepdims=True)


@pytest.fixture(params=[1, 2])
def threads(request):
    before = get_num_threads()
    set_num_threads(request.param)
    yield request.param
    set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((300, 1100), -1), ((3, 70, 1300), 2),
                                       ((1100, 300), 0), ((4, 1300, 60), 1)])
def test_log_softmax_rows_give_the_unsplit_bits(threads, dtype, shape, dim):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 5).astype(dtype)
    x.reshape(-1)[:3] = [-np.inf, 1e30 if dtype == np.float64 else 1e30, -1e30]
    g = rng.standard_normal(shape).astype(dtype)
    t = ember.tensor(x, requires_grad=True)
    y = ember.nn.functional.log_softmax(t, dim)
    y.backward(ember.tensor(g))
    with np.errstate(invalid="ignore", over="ignore"):
        out, grad = _reference(x, g, dim)
    np.testing.assert_array_equal(y.detach().numpy(), out)
    np.testing.assert_array_equal(t.grad.numpy(), grad)


def test_small_or_strided_inputs_take_the_unsplit_path(monkeypatch):
    calls = []
    real = nn_ops.parallel_for
    monkeypatch.setattr(nn_ops, "parallel_for", lambda *a, **k: calls.append(a) or real(*a, **k))
    x = ember.randn(8, 5, dtype=ember.float64)
    ember.nn.functional.log_softmax(x, 1)                            # small
    big = ember.randn(1100, 300, dtype=ember.float64)
    ember.nn.functional.log_softmax(big.t(), 1)                      # not contiguous
    ember.nn.functional.log_softmax(big, 0)                          # not the last dim
    assert calls == []
    ember.nn.functional.log_softmax(big, 1)
    assert len(calls) == 1
