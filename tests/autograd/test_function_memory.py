"""Memory of custom Functions: no leaks when outputs are stashed on ``ctx`` (RSS flat over
many iterations), no early frees of saved outputs, chains of 150,000 Functions backprop
and are freed without recursion."""
import gc
import os
import weakref

import numpy as np
import pytest

import ember
from ember.autograd import Function

from tests.autograd.custom_functions import Square, t64


class StashOutput(Function):
    @staticmethod
    def forward(ctx, x):
        out = x * 2
        ctx.out = out          # the pattern that leaks in PyTorch (a reference cycle)
        return out

    @staticmethod
    def backward(ctx, g):
        assert ctx.out.shape == g.shape
        return g * 2


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_stash_output_on_ctx_keeps_rss_flat_over_10000_iterations():
    x = ember.randn(20000, requires_grad=True)      # 80 KB per output: a leak shows at once
    was_enabled = gc.isenabled()
    gc.disable()                                    # no help from the cycle collector
    try:
        for _ in range(200):                        # warm up allocator and caches
            StashOutput.apply(x).sum().backward()
        before = _rss_bytes()
        for _ in range(10000):
            y = StashOutput.apply(x)
            y.sum().backward()
        grown = _rss_bytes() - before
    finally:
        if was_enabled:
            gc.enable()
    # a leak of the outputs alone would be 10000 * 80 KB = 800 MB
    assert grown < 30 * 2 ** 20, f"RSS grew by {grown / 2 ** 20:.1f} MiB"
    np.testing.assert_allclose(x.grad.numpy()[:3], [2.0 * 10200] * 3)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_stash_output_without_backward_keeps_rss_flat():
    x = ember.randn(20000, requires_grad=True)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(100):
            StashOutput.apply(x)
        before = _rss_bytes()
        for _ in range(5000):
            y = StashOutput.apply(x)
            del y
        grown = _rss_bytes() - before
    finally:
        if was_enabled:
            gc.enable()
    assert grown < 30 * 2 ** 20, f"RSS grew by {grown / 2 ** 20:.1f} MiB"


@pytest.mark.parametrize("fn", [StashOutput, Square])
def test_weakref_to_output_dies_when_user_drops_it(fn):
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        x = t64([1.0, 2.0])
        y = fn.apply(x)
        ref, node_ref = weakref.ref(y), weakref.ref(y.grad_fn)
        del y
        assert ref() is None and node_ref() is None
        # after backward too
        y = fn.apply(x)
        z = y * 3
        ref, node_ref = weakref.ref(y), weakref.ref(y.grad_fn)
        z.sum().backward()
        del y, z
        assert ref() is None and node_ref() is None
        # alive while the graph still needs it (no early free)
        y = fn.apply(x)
        z = y * 3
        node_ref = weakref.ref(y.grad_fn)
        del y
        assert node_ref() is not None
        z.sum().backward()
        del z
        assert node_ref() is None
    finally:
        if was_enabled:
            gc.enable()


def test_saved_output_survives_until_backward():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            out, = ctx.saved_tensors
            return g * out

    x = t64([0.0, 1.0])
    z = Exp.apply(x) * 1          # the user drops the output itself
    gc.collect()
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]))


class AddOne(Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1

    @staticmethod
    def backward(ctx, g):
        return g


def test_chain_of_150000_functions_backprops_and_frees():
    x = t64([0.0])
    y = x
    for _ in range(150000):
        y = AddOne.apply(y)
    np.testing.assert_allclose(y.detach().numpy(), [150000.0])
    ref = weakref.ref(y.grad_fn)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])
    del y
    assert ref() is None


def test_chain_of_150000_functions_freed_without_backward():
    x = t64([0.0])
    y = x
    for _ in range(150000):
        y = AddOne.apply(y)
    ref = weakref.ref(y.grad_fn)
    del y                       # freeing a deep graph must not recurse
    assert ref() is None


def test_repeated_create_graph_then_second_order_through_saved_output():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            out, = ctx.saved_tensors
            return g * out

    a = np.array([0.5, -1.0])
    x = t64(a)
    y = Exp.apply(x)
    for _ in range(3):
        g, = ember.autograd.grad(y.sum(), x, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), np.exp(a))
    gg, = ember.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(gg.detach().numpy(), np.exp(a))
    ggg, = ember.autograd.grad(gg.sum(), x)
    np.testing.assert_allclose(ggg.numpy(), np.exp(a))
