"""Built-in ops' array-level gradients (``Primitive.backward_arrays``) and the engine's
bare-array gradients.

Every op that defines ``backward_arrays`` has two gradient formulas: the tensor one
(``backward``, used with ``create_graph=True``) and the array one (used by a plain
``backward()``). They must agree with each other and with finite differences; the
engine must still hand tensors to everything outside the built-in ops (user Functions,
hooks, ``autograd.grad``) and must never let two leaves share one gradient's storage.
"""
import numpy as np
import pytest

import ember
from ember._ops.primitive import Primitive
from ember._ops.rnn_ops import lstm_layer
from ember._ops.rnn_cell_ops import FusedGRUCell, FusedLSTMCell
from ember._ops.batch_norm_ops import FusedBatchNorm
from tests.helpers import check_grad

RNG = np.random.default_rng(0)


def _primitives_with_array_backward():
    found, stack = set(), [Primitive]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.backward_arrays is not None:
                found.add(sub.__name__)
    return found


# name of the op class -> cases: (function, input shapes); every op with an array-level
# gradient must appear here (test_every_array_backward_is_covered)
CASES = {
    "Add": [(lambda a, b: a + b, [(3, 4), (3, 4)]),
            (lambda a, b: a + b, [(3, 4), (4,)]),        # broadcast: b's gradient is summed
            (lambda a, b: a + b, [(1, 4), (3, 1)]),
            (lambda a: a + 0.5, [(3, 4)]),
            (lambda a, b: ember.add(a, b, alpha=2.5), [(2, 3), (2, 3)])],
    "Sub": [(lambda a, b: a - b, [(3, 4), (3, 4)]),
            (lambda a, b: a - b, [(2, 3, 4), (3, 1)]),
            (lambda a: a - 2.0, [(5,)]),
            (lambda a, b: ember.sub(a, b, alpha=-3), [(2, 3), (3,)])],
    "Mul": [(lambda a, b: a * b, [(3, 4), (3, 4)]),
            (lambda a, b: a * b, [(3, 4), (4,)]),
            (lambda a, b: a * b, [(2, 1, 4), (3, 1)]),
            (lambda a: a * 1.5, [(3, 4)]),
            (lambda a: a * np.float64(1.5), [(3, 4)])],
    "Neg": [(lambda a: -a, [(3, 4)])],
    "Tanh": [(lambda a: a.tanh(), [(3, 4)])],
    "Sigmoid": [(lambda a: a.sigmoid(), [(3, 4)])],
    "Exp": [(lambda a: a.exp(), [(3, 4)])],
    "Exp2": [(lambda a: ember.exp2(a), [(3, 4)])],
    "Expm1": [(lambda a: ember.expm1(a), [(3, 4)])],
    "Relu": [(lambda a: ember.relu(a), [(3, 4)]),
             (lambda a: ember.nn.functional.relu(a), [(3, 4)]),     # activation_ops.Relu
             (lambda a: ember.nn.functional.relu(a), [(4, 4100)])],  # its row-split kernel
    # ops with a restricted domain get inputs moved into it (a * a + 0.5 > 0)
    "Div": [(lambda a, b: a / (b * b + 0.5), [(3, 4), (3, 4)]),
            (lambda a, b: a / (b * b + 0.5), [(2, 3, 4), (4,)]),
            (lambda a: a / 4.0, [(3, 4)]),
            (lambda a: a / np.int64(3), [(3, 4)])],
    "Log": [(lambda a: (a * a + 0.5).log(), [(3, 4)])],
    "Log2": [(lambda a: ember.log2(a * a + 0.5), [(3, 4)])],
    "Log1p": [(lambda a: ember.log1p(a * a), [(3, 4)])],
    "Sqrt": [(lambda a: (a * a + 0.5).sqrt(), [(3, 4)])],
    "NllLoss": [(lambda a: ember.nn.functional.nll_loss(a, ember.tensor([0, 3, 1])), [(3, 4)]),
                (lambda a: ember.nn.functional.nll_loss(a, ember.tensor([2, 0]),
                                                        reduction="none"), [(2, 3)]),
                (lambda a: ember.nn.functional.nll_loss(a, ember.tensor(2), reduction="sum"),
                 [(4,)])],
    "NllLoss2d": [(lambda a: ember.nn.functional.nll_loss(
        a, ember.tensor([[[0, 1], [2, 2]]]), reduction="none"), [(1, 3, 2, 2)])],
    "LogSoftmax": [(lambda a: ember.nn.functional.log_softmax(a, 1), [(3, 4)]),
                   (lambda a: ember.nn.functional.log_softmax(a, 0), [(3, 4, 2)]),
                   (lambda a: ember.nn.functional.log_softmax(a, -1), [(5,)])],
    # (the row-split path of large arrays: tests/ops/test_log_softmax_rows.py)
    # a whole LSTM layer direction: (x, h0, c0, w_ih, w_hh[, b_ih, b_hh]), all three
    # outputs in one tensor so that each gets a gradient
    "LSTMLayer": [(lambda *ts: _lstm_outputs(*ts), [(4, 3, 2), (3, 5), (3, 5), (20, 2),
                                                     (20, 5), (20,), (20,)]),
                  (lambda *ts: _lstm_outputs(*ts, None, None, reverse=True),
                   [(4, 3, 2), (3, 5), (3, 5), (20, 2), (20, 5)]),
                  (lambda *ts: lstm_layer(*ts)[0], [(2, 1, 3), (1, 2), (1, 2), (8, 3), (8, 2),
                                                    (8,), (8,)])],
    # reductions: the gradient spread back over the input (0-d for a full reduction)
    "SumAll": [(lambda a: a.sum(), [(3, 4)]), (lambda a: a.sum(), [()])],
    "Sum": [(lambda a: a.sum(1), [(3, 4)]), (lambda a: a.sum((0, 2), keepdim=True), [(2, 3, 4)]),
            (lambda a: ember.sum(a, 0), [(5,)])],
    "MeanAll": [(lambda a: a.mean(), [(3, 4)]), (lambda a: a.mean(), [(1,)])],
    "Mean": [(lambda a: a.mean(0), [(3, 4)]), (lambda a: a.mean((1, 2), keepdim=True),
                                                [(2, 3, 4)]),
             (lambda a: a.mean(-1), [(2, 7)])],
    # repeated indices add up (rounds of distinct rows); padding_idx and scale_grad_by_freq
    # (no finite-difference gradients): test_embedding_options_take_the_tensor_formula
    "Embedding": [(lambda w: ember.nn.functional.embedding(ember.tensor([[1, 3, 1], [0, 1, 3]]),
                                                           w), [(5, 4)])],
    # layer normalization (x, weight, bias): one or two normalized dims, no affine
    "NativeLayerNorm": [(lambda x, w, b: ember.nn.functional.layer_norm(x, (4,), w, b),
                         [(3, 4), (4,), (4,)]),
                        (lambda x, w, b: ember.nn.functional.layer_norm(x, (3, 5), w, b),
                         [(2, 3, 5), (3, 5), (3, 5)]),
                        (lambda x: ember.nn.functional.layer_norm(x, (6,)), [(2, 2, 6)])],
    "Reciprocal": [(lambda a: (a * a + 0.5).reciprocal(), [(3, 4)]),
                   (lambda a: 2.5 / (a * a + 0.5), [(3, 4)])],   # scalar / tensor
    # products: 1-D promotion, broadcast batches summed back, a stack times one matrix
    "Matmul": [(lambda a, b: a @ b, [(3, 4), (4, 2)]), (lambda a, b: a @ b, [(4,), (4, 2)]),
               (lambda a, b: a @ b, [(3, 4), (4,)]), (lambda a, b: a @ b, [(4,), (4,)]),
               (lambda a, b: a @ b, [(2, 3, 4), (4, 2)]),
               (lambda a, b: a @ b, [(3, 4), (2, 4, 2)]),
               (lambda a, b: a @ b, [(2, 1, 3, 4), (3, 4, 2)])],
    "Mm": [(lambda a, b: ember.mm(a, b.t()), [(3, 4), (2, 4)])],
    "Bmm": [(lambda a, b: ember.bmm(a, b), [(2, 3, 4), (2, 4, 5)])],
    # views: the gradient reshaped or transposed back
    "View": [(lambda a: a.view(6, 2), [(3, 4)]), (lambda a: a.reshape(-1), [(2, 3, 2)])],
    "Unsqueeze": [(lambda a: a.unsqueeze(1), [(3, 4)])],
    "Squeeze": [(lambda a: a.squeeze(), [(3, 1, 4)])],
    "SqueezeDim": [(lambda a: a.squeeze(1), [(3, 1, 4)])],
    "SqueezeDims": [(lambda a: a.squeeze((0, 2)), [(1, 3, 1, 4)])],
    "Permute": [(lambda a: a.permute(2, 0, 1), [(2, 3, 4)])],
    "Transpose": [(lambda a: a.transpose(0, 2), [(2, 3, 4)])],
    "T": [(lambda a: a.t(), [(3, 4)])],
    "Cat": [(lambda a, b: ember.cat([a, b], 1), [(2, 3), (2, 4)]),
            (lambda a, b, c: ember.cat([a, b, c]), [(1, 3), (2, 3), (1, 3)]),
            (lambda a, b: ember.cat([a, b], -1), [(2, 2, 1), (2, 2, 3)])],
    # the fused recurrent cells (xi, gh, state): h and c in one tensor for the LSTM
    "FusedLSTMCell": [(lambda x, g, c: ember.cat(FusedLSTMCell.apply(x, g, c), 1),
                       [(3, 8), (3, 8), (3, 2)])],
    "FusedGRUCell": [(lambda x, g, h: FusedGRUCell.apply(x, g, h), [(3, 6), (3, 6), (3, 2)])],
    # training-mode batch norm (x, weight, bias): (N, C), (N, C, L), (N, C, H, W), no affine
    "FusedBatchNorm": [(lambda x, w, b: FusedBatchNorm.apply(x, w, b, 1e-5)[0],
                        [(4, 3), (3,), (3,)]),
                       (lambda x, w, b: FusedBatchNorm.apply(x, w, b, 1e-5)[0],
                        [(2, 3, 4, 2), (3,), (3,)]),
                       (lambda x: FusedBatchNorm.apply(x, None, None, 1e-5)[0], [(3, 2, 5)])],
}


def _lstm_outputs(*ts, reverse=False):
    hs, h, c = lstm_layer(*ts, reverse=reverse)
    return ember.cat([hs.reshape(-1), h.reshape(-1), c.reshape(-1)])


FLAT = [(name, fn, shapes) for name, cases in CASES.items() for fn, shapes in cases]
IDS = [f"{name}-{i}" for i, (name, _, _) in enumerate(FLAT)]


_TOLERANCE = dict(rtol=1e-6, atol=1e-7)
# ops whose two formulas add many float32 terms in different orders: the array BPTT of
# LSTMLayer sums each step's terms in its own order, the recomputed graph in another; the
# compiled layer norm's gradient is computed in double, the recomputed graph in float32
FLOAT32_TOLERANCE = {"LSTMLayer": dict(rtol=1e-5, atol=1e-6),
                     "NativeLayerNorm": dict(rtol=1e-5, atol=1e-6)}


def test_every_array_backward_is_covered():
    missing = _primitives_with_array_backward() - set(CASES)
    assert not missing, f"add test cases for the array-level gradients of {sorted(missing)}"


def _grads(fn, arrays, cot, create_graph):
    xs = [ember.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*xs)
    return ember.autograd.grad(out, xs, ember.tensor(cot), create_graph=create_graph)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,fn,shapes", FLAT, ids=IDS)
def test_array_and_tensor_formulas_agree(name, fn, shapes, dtype):
    arrays = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    with ember.no_grad():
        out_shape = fn(*[ember.tensor(a) for a in arrays]).shape
    cot = RNG.standard_normal(tuple(out_shape)).astype(dtype)
    on_arrays = _grads(fn, arrays, cot, create_graph=False)
    on_tensors = _grads(fn, arrays, cot, create_graph=True)
    for a, ga, gt in zip(arrays, on_arrays, on_tensors):
        assert isinstance(ga, ember.Tensor) and isinstance(gt, ember.Tensor)
        assert ga.shape == a.shape and ga.dtype == gt.dtype
        assert ga.numpy().dtype == dtype
        tol = FLOAT32_TOLERANCE.get(name, _TOLERANCE) if dtype is np.float32 else _TOLERANCE
        np.testing.assert_allclose(ga.numpy(), gt.detach().numpy(), **tol)


@pytest.mark.parametrize("name,fn,shapes", FLAT, ids=IDS)
def test_array_formula_matches_finite_differences(name, fn, shapes):
    check_grad(fn, *[RNG.standard_normal(s) for s in shapes])


def test_shared_gradient_is_copied_not_shared_between_leaves():
    x = ember.randn(4, requires_grad=True)
    y = ember.randn(4, requires_grad=True)
    (x + y).sum().backward()  # Add hands the same gradient array to both inputs
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    x.grad.add_(1.0)
    np.testing.assert_array_equal(y.grad.numpy(), np.ones(4, np.float32))


def test_gradient_held_elsewhere_is_not_taken_as_leaf_storage():
    kept = []

    class Keep(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            out = g * 2
            kept.append(out)
            return out

    x = ember.randn(3, requires_grad=True)
    Keep.apply(x).sum().backward()
    assert not np.shares_memory(x.grad.numpy(), kept[0].numpy())
    kept[0].add_(100.0)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0, np.float32))


def test_leaf_gradients_accumulate_over_calls():
    x = ember.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = ember.tensor([0.5, 0.25, 2.0])
    for _ in range(3):
        ((x * w).tanh() * 2.0).sum().backward()
    expected = 3 * 2.0 * w.numpy() * (1 - np.tanh(x.detach().numpy() * w.numpy()) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_hooks_and_user_functions_receive_tensors():
    seen = []

    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(("function", type(g)))
            return g * 2

    x = ember.randn(3, requires_grad=True)
    h = (x * 3.0).tanh()
    h.register_hook(lambda g: seen.append(("tensor hook", type(g))))
    h.grad_fn.register_hook(lambda gi, go: seen.append(("node hook", type(gi[0]), type(go[0]))))
    x.register_hook(lambda g: seen.append(("leaf hook", type(g))))
    out = Double.apply(h).exp().sum()
    out.backward()
    kinds = {entry[0] for entry in seen}
    assert kinds == {"function", "tensor hook", "node hook", "leaf hook"}
    for entry in seen:
        assert all(t is ember.Tensor for t in entry[1:]), entry


def test_hook_can_replace_gradient_between_builtin_ops():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.register_hook(lambda g: g * 10)
    (y.exp()).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 20 * np.exp(2 * np.array([1.0, 2.0])), rtol=1e-6)


def test_autograd_grad_returns_tensors():
    x = ember.randn(3, requires_grad=True)
    y = ember.randn(3, requires_grad=True)
    gx, gy = ember.autograd.grad(((x * y).tanh() - y).sum(), [x, y])
    assert type(gx) is ember.Tensor and type(gy) is ember.Tensor
    t = np.tanh(x.detach().numpy() * y.detach().numpy())
    np.testing.assert_allclose(gx.numpy(), (1 - t ** 2) * y.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(gy.numpy(), (1 - t ** 2) * x.detach().numpy() - 1, rtol=1e-5)


def test_mixed_dtypes_cast_back_on_the_array_path():
    x = ember.randn(3, dtype=ember.float32, requires_grad=True)
    y = ember.randn(3, dtype=ember.float64, requires_grad=True)
    (x * y).sum().backward()
    assert x.grad.dtype == ember.float32 and y.grad.dtype == ember.float64
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy().astype(np.float32))


def test_in_place_change_of_saved_output_is_reported():
    x = ember.randn(3, requires_grad=True)
    y = x.tanh()
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*output 0 of Tanh"):
        y.sum().backward()


def test_anomaly_mode_checks_array_gradients_for_nan():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning):
        with ember.autograd.detect_anomaly():
            y = (x * float("nan")).sum()
            with pytest.raises(RuntimeError, match="returned nan values"):
                y.backward()


def test_numpy_floating_point_warnings_are_silent_like_pytorch():
    # PyTorch gives inf/nan without a word; NumPy would warn from inside ember's kernels.
    # A fresh interpreter, so no test framework's warning filters are involved.
    import subprocess
    import sys
    code = (
        "import warnings, numpy as np, ember\n"
        "x = ember.tensor([1e38, 0.0, -1.0], requires_grad=True)\n"
        "y = (x * 1e10).sum() + ((x * 0) * float('inf')).sum() + x.log().sum() + (x / 0).sum()\n"
        "y = y + x.exp().sum() + (1 / x).sum() + x.sqrt().sum()\n"
        "y.backward()\n"
        "np.array([1e38], np.float32) * np.float32(1e10)  # the user's own NumPy still warns\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    warnings_seen = [line for line in done.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warnings_seen) == 1 and warnings_seen[0].startswith("<string>:6"), done.stderr


@pytest.mark.parametrize("options", [dict(padding_idx=0), dict(scale_grad_by_freq=True)])
def test_embedding_options_take_the_tensor_formula(options):
    weight = RNG.standard_normal((4, 3))
    cot = RNG.standard_normal((3, 3))

    def fn(w):
        return ember.nn.functional.embedding(ember.tensor([2, 0, 2]), w, **options)
    on_arrays, = _grads(fn, [weight], cot, create_graph=False)
    on_tensors, = _grads(fn, [weight], cot, create_graph=True)
    np.testing.assert_allclose(on_arrays.numpy(), on_tensors.detach().numpy(), rtol=1e-12)
    expected = np.zeros((4, 3))
    expected[2] = (cot[0] + cot[2]) / (2 if "scale_grad_by_freq" in options else 1)
    if "scale_grad_by_freq" in options:
        expected[0] = cot[1]
    np.testing.assert_allclose(on_arrays.numpy(), expected, rtol=1e-12)
