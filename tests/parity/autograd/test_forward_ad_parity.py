"""Forward-mode AD against torch.autograd.forward_ad: tangents of ops and of random
compositions (float64, equal to 1e-10), custom Function.jvp, errors."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember
import ember.autograd.forward_ad as efw

RNG = np.random.default_rng(0)


def _jvp(lib, fw, fn, arrays, tangents):
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip(arrays, tangents)]
        out = fn(lib, *duals)
        outs = out if isinstance(out, tuple) else (out,)
        return [(o.detach().numpy().copy(),
                 None if fw.unpack_dual(o).tangent is None
                 else fw.unpack_dual(o).tangent.detach().numpy().copy()) for o in outs]


def check_jvp(fn, *shapes, dtype=np.float64, positive=False, rtol=1e-10, atol=1e-10):
    arrays = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    if positive:
        arrays = [np.abs(a) + 0.5 for a in arrays]
    tangents = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    expected = _jvp(torch, tfw, fn, arrays, tangents)
    got = _jvp(ember, efw, fn, arrays, tangents)
    assert len(got) == len(expected)
    for (p, t), (ep, et) in zip(got, expected):
        np.testing.assert_allclose(p, ep, rtol=rtol, atol=atol)
        assert (t is None) == (et is None)
        if t is not None:
            assert t.dtype == et.dtype
            np.testing.assert_allclose(t, et, rtol=rtol, atol=atol)


def F(lib):
    return lib.nn.functional


OPS = {
    "add": (lambda L, a, b: a + b, [(3, 4), (4,)]),
    "sub_alpha": (lambda L, a, b: L.sub(a, b, alpha=2), [(3, 4), (3, 4)]),
    "mul": (lambda L, a, b: a * b, [(3, 4), (3, 1)]),
    "div": (lambda L, a, b: a / b, [(3, 4), (3, 4)]),
    "scalar_ops": (lambda L, a: (2 - a * 3) / 4 + 1, [(5,)]),
    "rdiv": (lambda L, a: 2 / a, [(5,)]),
    "pow": (lambda L, a: a ** 3, [(5,)]),
    "pow_tensor": (lambda L, a, b: a.abs() ** b, [(5,), (5,)]),
    "neg_exp_log": (lambda L, a: (-a).exp() + a.abs().log(), [(3, 2)]),
    "sqrt_rsqrt": (lambda L, a: a.abs().sqrt() + (a.abs() + 1).rsqrt(), [(6,)]),
    "trig": (lambda L, a: a.sin() * a.cos() + a.tan(), [(6,)]),
    "tanh_sigmoid": (lambda L, a: a.tanh() + a.sigmoid(), [(6,)]),
    "relu": (lambda L, a: L.relu(a), [(7,)]),
    "activations": (lambda L, a: F(L).gelu(a) + F(L).silu(a) + F(L).elu(a) + F(L).softplus(a)
                    + F(L).leaky_relu(a, 0.1) + F(L).mish(a) + F(L).hardtanh(a, -0.5, 0.5),
                    [(8,)]),
    "softmax": (lambda L, a: F(L).softmax(a, dim=1), [(3, 5)]),
    "log_softmax": (lambda L, a: F(L).log_softmax(a, dim=0), [(3, 5)]),
    "logsigmoid": (lambda L, a: F(L).logsigmoid(a), [(3, 5)]),
    "matmul": (lambda L, a, b: a @ b, [(3, 4), (4, 2)]),
    "matmul_batched": (lambda L, a, b: L.matmul(a, b), [(2, 3, 4), (4,)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 3, 4), (2, 4, 2)]),
    "linear": (lambda L, x, w, b: F(L).linear(x, w, b), [(5, 3), (4, 3), (4,)]),
    "linear_nobias": (lambda L, x, w: F(L).linear(x, w), [(5, 3), (4, 3)]),
    "conv2d": (lambda L, x, w, b: F(L).conv2d(x, w, b, padding=1), [(2, 3, 5, 5), (4, 3, 3, 3),
                                                                     (4,)]),
    "conv1d_stride": (lambda L, x, w: F(L).conv1d(x, w, stride=2), [(2, 3, 9), (4, 3, 3)]),
    "sum_mean": (lambda L, a: a.sum(1) + a.mean(1) + a.sum() - a.mean(), [(3, 4)]),
    "sum_keepdim": (lambda L, a: a.sum(dim=(0, 2), keepdim=True), [(2, 3, 4)]),
    "prod_var_std": (lambda L, a: a.prod(1) + a.var(1) + a.std(1), [(3, 4)]),
    "max_min": (lambda L, a: a.max(1)[0] + a.min() + a.amax(0).sum(), [(3, 4)]),
    "logsumexp_norm": (lambda L, a: a.logsumexp(1) + a.norm(), [(3, 4)]),
    "cumsum_cumprod": (lambda L, a: a.cumsum(1) + a.cumprod(0), [(3, 4)]),
    "views": (lambda L, a: a.view(4, 3).t()[1:].reshape(-1).unsqueeze(0).expand(2, 8)
              .permute(1, 0).flip(0).squeeze(), [(3, 4)]),
    "indexing": (lambda L, a: a[[0, 2]][:, 1:3] + a[1].sum() + a.index_select(1, L.tensor([0, 0]))
                 .sum() + a.gather(1, L.tensor([[0], [1], [2]])).sum(), [(3, 4)]),
    "cat_stack": (lambda L, a, b: L.cat([a, b], 0) + L.stack([a, b]).sum(0).repeat(2, 1),
                  [(2, 3), (2, 3)]),
    "where_clamp": (lambda L, a: L.where(a > 0, a * 2, a.clamp(-0.5, 0.3)), [(10,)]),
    "maximum": (lambda L, a, b: L.maximum(a, b) + L.minimum(a, b) * 2, [(6,), (6,)]),
    "mse_l1_huber": (lambda L, a, b: F(L).mse_loss(a, b) + F(L).l1_loss(a, b)
                     + F(L).smooth_l1_loss(a, b) + F(L).huber_loss(a, b, reduction="sum"),
                     [(4, 3), (4, 3)]),
    "cross_entropy": (lambda L, a: F(L).cross_entropy(a, L.tensor([0, 2, 1, 2])), [(4, 3)]),
    "nll": (lambda L, a: F(L).nll_loss(F(L).log_softmax(a, 1), L.tensor([0, 2, 1, 2]),
                                        reduction="sum"), [(4, 3)]),
    "bce": (lambda L, a, b: F(L).binary_cross_entropy(a.sigmoid(), b.sigmoid())
            + F(L).binary_cross_entropy_with_logits(a, b.sigmoid()), [(5,), (5,)]),
    "pooling": (lambda L, a: F(L).max_pool2d(a, 2) .sum() + F(L).avg_pool2d(a, 2).sum()
                + F(L).adaptive_avg_pool2d(a, 1).sum(), [(1, 2, 4, 4)]),
    "layer_norm": (lambda L, a, w: F(L).layer_norm(a, (4,), w), [(3, 4), (4,)]),
    "addcmul_lerp": (lambda L, a, b, c: L.addcmul(a, b, c, value=0.5) + L.lerp(a, b, 0.3)
                     + L.addcdiv(a, b, c.abs() + 1), [(4,), (4,), (4,)]),
    "einsum": (lambda L, a, b: L.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)]),
    "linalg": (lambda L, a: L.linalg.inv(a + 3 * L.eye(3, dtype=a.dtype)) + L.det(a)
               + a.diagonal().sum() + L.triu(a) + L.tril(a, -1), [(3, 3)]),
    "atan2_hypot": (lambda L, a, b: L.atan2(a, b) + L.hypot(a, b) + L.logaddexp(a, b),
                    [(5,), (5,)]),
    "embedding": (lambda L, w: F(L).embedding(L.tensor([[0, 2], [1, 1]]), w), [(3, 4)]),
    "dropout_eval": (lambda L, a: F(L).dropout(a, 0.5, training=False), [(4,)]),
    "multiple_outputs": (lambda L, a: a.sort(1)[0] + a.max(0, keepdim=True)[0], [(3, 4)]),
    "unbind_split": (lambda L, a: a.split(2, 1)[1] * a.unbind(1)[0].unsqueeze(1), [(3, 4)]),
    "erf_lgamma": (lambda L, a: L.erf(a) + L.lgamma(a.abs() + 1), [(5,)]),
}

OPS.update({
    "mse_none": (lambda L, x, y: F(L).mse_loss(x, y, reduction="none"), [(3, 4), (3, 4)]),
    "huber_delta": (lambda L, x, y: F(L).huber_loss(x, y, delta=0.5, reduction="sum")
                    + F(L).smooth_l1_loss(x, y, beta=0.3), [(3, 4), (3, 4)]),
    "bce_weight": (lambda L, x, y: F(L).binary_cross_entropy(
        x.sigmoid(), y.sigmoid(), weight=y.detach().abs(), reduction="none"), [(3, 4), (3, 4)]),
    "bce_logits_pos_weight": (lambda L, x, y: F(L).binary_cross_entropy_with_logits(
        x, y.sigmoid(), pos_weight=y.detach()[0].abs() + 0.5, weight=y.detach().abs()),
        [(3, 4), (3, 4)]),
    "nll_weight_ignore": (lambda L, x: F(L).nll_loss(
        F(L).log_softmax(x, 1), L.tensor([0, 2, 3]), weight=L.tensor([1., 2, 3, 4],
                                                                    dtype=x.dtype),
        ignore_index=2), [(3, 4)]),
    "nll_none": (lambda L, x: F(L).nll_loss(x, L.tensor([0, 2, 3]), reduction="none"),
                 [(3, 4)]),
    "cross_entropy_2d": (lambda L, x: F(L).cross_entropy(
        x.reshape(1, 3, 2, 2), L.tensor([[[0, 2], [1, 1]]]), label_smoothing=0.1), [(3, 4)]),
    "activation_params": (lambda L, x: F(L).leaky_relu(x, 0.3) + F(L).hardtanh(x, -0.2, 0.4)
                          + F(L).gelu(x, approximate="tanh")
                          + F(L).softplus(x, beta=2, threshold=1) + F(L).elu(x, alpha=0.7),
                          [(3, 4)]),
    "batch_norm": (lambda L, x, w, b: F(L).batch_norm(
        x, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype), w, b, training=True),
        [(4, 3), (3,), (3,)]),
    "gru": (lambda L, x: _gru(L)(x.reshape(1, 3, 4))[0], [(3, 4)]),
    "attention": (lambda L, q, k: F(L).scaled_dot_product_attention(
        q.reshape(1, 3, 4), k.reshape(1, 3, 4), q.reshape(1, 3, 4)), [(3, 4), (3, 4)]),
    "linalg_decompositions": (lambda L, x, y: _decompositions(L, x, y), [(3, 4), (3, 4)]),
    "pow_cases": (lambda L, x, y: x ** 0 + x ** 2.5 * 0 + x.abs() ** 2.5 + x ** -1
                  + L.pow(x.clamp(min=0), y.abs()), [(3, 4), (3, 4)]),
    "where_scalars": (lambda L, x, y: L.where(x > 0, x, 0.5) + L.where(y > 0, 1.0, y), [(3, 4),
                                                                                       (3, 4)]),
    "inverse_trig": (lambda L, x: (x.tanh() * 0.9).asin() + (x.tanh() * 0.9).acos() + x.atan()
                     + x.asinh() + (x.abs() + 1.5).acosh() + (x.tanh() * 0.9).atanh()
                     + x.sinh() + x.cosh(), [(3, 4)]),
})


def _gru(L):
    L.manual_seed(0)
    m = L.nn.GRU(4, 2, batch_first=True).double()
    for p in m.parameters():  # the same weights on both sides
        p.data = L.linspace(-0.5, 0.5, p.numel(), dtype=L.float64).reshape(p.shape)
    return m


def _decompositions(L, x, y):
    a = x[:, :3]
    s = a @ a.mT + 3 * L.eye(3, dtype=a.dtype)
    return (L.linalg.cholesky(s).sum() + L.linalg.solve(s, y).sum()
            + L.linalg.eigh(s)[0].sum() + L.linalg.svd(a)[1].sum()
            + L.linalg.slogdet(s)[1] + L.linalg.qr(a)[1].sum())


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_tangent(name):
    fn, shapes = OPS[name]
    check_jvp(fn, *shapes)


def test_digamma_tangent():
    """Its derivative (trigamma) is a series in ember: equal to 1e-7, not 1e-10."""
    check_jvp(lambda L, a: L.digamma(a), (5,), positive=True, rtol=1e-7)


def test_float32_tangent():
    check_jvp(lambda L, a, b: (a @ b).tanh().sum(0), (3, 4), (4, 2), dtype=np.float32,
              rtol=1e-5, atol=1e-6)


def test_noncontiguous_input():
    def fn(L, a):
        return (a.t() * 2).exp() @ a
    check_jvp(fn, (3, 3))


def test_random_compositions():
    unary = [lambda L, x: x.sin(), lambda L, x: x.tanh(), lambda L, x: x * x,
             lambda L, x: L.relu(x) + x, lambda L, x: F(L).softmax(x, -1),
             lambda L, x: x.exp() / (1 + x.exp()), lambda L, x: x.t() @ x if x.dim() == 2 else x,
             lambda L, x: x.cumsum(0), lambda L, x: x - x.mean(0, keepdim=True),
             lambda L, x: F(L).gelu(x), lambda L, x: x.flip(0) * x]
    rng = np.random.default_rng(7)
    for trial in range(20):
        picks = rng.integers(0, len(unary), size=5)

        def fn(L, x, picks=picks):
            for p in picks:
                x = unary[p](L, x)
            return x
        check_jvp(fn, (3, 3))


def test_nn_modules():
    def fn(L, x):
        L.manual_seed(0)
        net = L.nn.Sequential(L.nn.Conv2d(2, 3, 3), L.nn.ReLU(), L.nn.Flatten(),
                              L.nn.Linear(12, 4), L.nn.Tanh()).double()
        for p in net.parameters():  # the same weights on both sides
            p.data = L.linspace(-0.5, 0.5, p.numel(), dtype=L.float64).reshape(p.shape)
        return F(L).cross_entropy(net(x), L.tensor([1, 3]))
    check_jvp(fn, (2, 2, 4, 4))


def _inplace_on_dual(lib, fw):
    with fw.dual_level():
        tangent = lib.tensor([1.0, 2.0, 3.0])
        x = fw.make_dual(lib.ones(3), tangent)
        x.mul_(2)  # the tangent given to make_dual is updated in place, as in PyTorch
        view = x[:2]
        x.add_(1)
        y = lib.zeros(3)
        y.copy_(x)
        w = lib.ones(2, 3)
        w[0] = x
        z = lib.ones(3)
        z.add_(x.detach())
        q = x.clone()
        q.zero_()
        s = x.clone()
        s.detach_()
        tangents = [fw.unpack_dual(t).tangent for t in (x, view, y, w, z, q, s)]
        return [tangent.tolist()] + [None if t is None else t.tolist() for t in tangents]


def _inplace_on_copies(lib, fw):
    with fw.dual_level():
        x = fw.make_dual(lib.ones(2, 2), lib.tensor([[1.0, 2.0], [3.0, 4.0]]).t())
        y = x.t().reshape(-1)  # a copy of the primal: its tangent must not alias x's
        y.mul_(2)
        z = x.contiguous()  # x itself
        z.mul_(3)
        return [fw.unpack_dual(t).tangent.tolist() for t in (x, y, z)]


def test_inplace_on_copies_of_dual_tensor():
    assert _inplace_on_copies(ember, efw) == _inplace_on_copies(torch, tfw)


def test_inplace_on_dual_tensor():
    assert _inplace_on_dual(ember, efw) == _inplace_on_dual(torch, tfw)


def test_inplace_and_views():
    def fn(L, x):
        y = x.clone()
        v = y[1:]
        v.mul_(3)
        y.add_(x)
        z = L.zeros(4, dtype=x.dtype)
        z[1:3] = x[:2]
        return y, v, z
    check_jvp(fn, (4,))


# ---- custom Functions: the examples of the "Extending PyTorch" note, import changed --------
def _extending_example(lib, fw):
    class MyMul(lib.autograd.Function):
        @staticmethod
        def forward(foo):
            return foo * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            foo, = inputs
            ctx.save_for_forward(foo)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

        @staticmethod
        def jvp(ctx, gI):
            return gI * 2

    class MySquare(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return 2 * x * grad

        @staticmethod
        def jvp(ctx, x_t):
            x, = ctx.saved_tensors
            return 2 * x * x_t

    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
    t = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)
    with fw.dual_level():
        d = fw.make_dual(x, t)
        a = fw.unpack_dual(MySquare.apply(d) + d).tangent
    with fw.dual_level():
        b = fw.unpack_dual(MyMul.apply(fw.make_dual(x, t))).tangent
    return a.numpy(), b.numpy()


def test_function_jvp_examples():
    for got, expected in zip(_extending_example(ember, efw), _extending_example(torch, tfw)):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def _dirty_and_nondiff(lib, fw):
    class ScaleInplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            idx = x.argmax().view(1).to(x.dtype)
            ctx.mark_non_differentiable(idx)
            return x, idx

        @staticmethod
        def backward(ctx, g, gi):
            return g * 2

        @staticmethod
        def jvp(ctx, x_t):
            x_t.mul_(2)
            return x_t, None

    with fw.dual_level():
        base = lib.tensor([1.0, 3.0, 2.0], dtype=lib.float64)
        d = fw.make_dual(base.clone(), lib.tensor([1.0, 1.0, 1.0], dtype=lib.float64))
        out, idx = ScaleInplace.apply(d)
        return (out is d, fw.unpack_dual(out).tangent.numpy().copy(),
                fw.unpack_dual(idx).tangent is None)


def test_function_jvp_dirty_and_non_differentiable():
    got, expected = _dirty_and_nondiff(ember, efw), _dirty_and_nondiff(torch, tfw)
    assert got[0] == expected[0] and got[2] == expected[2]
    np.testing.assert_allclose(got[1], expected[1])


def _error(lib, fw, fn):
    try:
        fn(lib, fw)
    except Exception as e:  # noqa: BLE001 -- the class and message are what is compared
        return type(e).__name__, str(e).replace("ember.", "torch.")
    return None


def test_function_returning_input_gets_a_view_tangent():
    results = []
    for lib, fw in ((ember, efw), (torch, tfw)):
        with fw.dual_level():
            results.append(str(_returns_input(lambda ctx, t: t[:])(lib, fw)))
    assert results[0] == results[1] == "[1.0, 1.0]"


class _Scale:
    """Function factories for the jvp error cases (one per library)."""

    @staticmethod
    def make(L, jvp):
        class Scale(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_forward(y)
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g, g
        Scale.jvp = staticmethod(jvp)
        return Scale


def _jvp_case(jvp):
    def run(L, fw):
        return _Scale.make(L, jvp).apply(fw.make_dual(L.ones(2), L.ones(2)), L.ones(2))
    return run


def _returns_input(jvp):
    def run(L, fw):
        class Identity(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g
        Identity.jvp = staticmethod(jvp)
        x = fw.make_dual(L.ones(2), L.ones(2))
        out = Identity.apply(x)
        assert out is not x
        return RuntimeError(str(fw.unpack_dual(out).tangent.tolist()))  # compared, not raised
    return run


def _save_non_tensor(L, fw):
    class SavesInt(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x, 3)
            return x * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2
    return SavesInt.apply(fw.make_dual(L.ones(1), L.ones(1)))


def _dirty_new_tangent(L, fw):
    class Double_(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2  # not in place
    return Double_.apply(fw.make_dual(L.ones(2), L.ones(2)))


ERRORS = {
    "dirty_input_new_tangent": _dirty_new_tangent,
    "save_for_forward_non_tensor": _save_non_tensor,
    "jvp_not_a_view": _returns_input(lambda ctx, t: t),
    "jvp_size": _jvp_case(lambda ctx, tx, ty: tx.new_ones(5)),
    "jvp_count": _jvp_case(lambda ctx, tx, ty: (tx, tx)),
    "jvp_saved_count": _jvp_case(lambda ctx, tx, ty: ctx.saved_tensors * 2),
    "size": lambda L, fw: fw.make_dual(L.ones(2), L.ones(3)),
    "no_level": lambda L, fw: fw.make_dual(L.ones(2), L.ones(2)),
    "nested": lambda L, fw: [fw.enter_dual_level(), fw.enter_dual_level()],
    "exit_without_level": lambda L, fw: fw.exit_dual_level(),
    "exit_wrong_level": lambda L, fw: fw.exit_dual_level(level=1),
    "exit_closed_level": lambda L, fw: fw.exit_dual_level(level=0),
    "integer_primal": lambda L, fw: fw.make_dual(L.ones(2, dtype=L.int64), L.ones(2)),
    "no_jvp": lambda L, fw: _no_jvp(L, fw),
}


def _no_jvp(L, fw):
    class Twice(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Twice.apply(fw.make_dual(L.ones(2), L.ones(2)))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    results = []
    for lib, fw in ((ember, efw), (torch, tfw)):
        needs_level = name not in ("no_level", "nested", "exit_without_level",
                                   "exit_closed_level")
        try:
            if needs_level:
                with fw.dual_level():
                    results.append(_error(lib, fw, ERRORS[name]))
            else:
                results.append(_error(lib, fw, ERRORS[name]))
        finally:
            while True:  # "nested" leaves its first level open
                try:
                    fw.exit_dual_level()
                except RuntimeError:
                    break
    assert results[0] is not None
    assert results[0] == results[1]


def test_function_jvp_gets_zeros_for_inputs_without_tangent():
    seen = []
    for lib, fw in ((ember, efw), (torch, tfw)):
        def jvp(ctx, tx, ty):
            y, = ctx.saved_tensors
            seen.append(ty.tolist())
            return tx * y + ty
        with fw.dual_level():
            x = fw.make_dual(lib.ones(2), lib.tensor([1.0, 2.0]))
            out = _Scale.make(lib, jvp).apply(x, lib.tensor([3.0, 4.0]))
            seen.append(fw.unpack_dual(out).tangent.tolist())
    assert seen[:2] == seen[2:] == [[0.0, 0.0], [3.0, 8.0]]


def test_backward_through_dual():
    """The primal of a dual tensor still backpropagates; tangents need not be float64."""
    for lib, fw in ((ember, efw), (torch, tfw)):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, lib.ones(2))
            (d * d).sum().backward()
        assert x.grad.tolist() == [2.0, 4.0]


HVP_FUNCTIONS = {
    "mul": lambda L, d: (d * d * d).sum(),
    "exp_sqrt": lambda L, d: (d.exp() + d.abs().sqrt()).sum(),  # backward reads saved outputs
    "gelu": lambda L, d: L.nn.functional.gelu(d).sum(),
    "inv": lambda L, d: L.linalg.inv(d + 3 * L.eye(3, dtype=d.dtype)).sum(),
    "prod": lambda L, d: d.prod(1).sum(),
    "matmul_tanh": lambda L, d: (d.sin() @ d).tanh().sum(),
    "tanh_sigmoid_mlp": lambda L, d: ((d @ d.t()).tanh() @ d).sigmoid().sum(),
    "sigmoid_softplus": lambda L, d: (d.sigmoid() * L.nn.functional.softplus(d)).sum(),
}


def _second_order(lib, fw, fn):
    a = np.random.default_rng(0).standard_normal((3, 3))
    u = np.random.default_rng(1).standard_normal((3, 3))
    x, t = lib.tensor(a, requires_grad=True), lib.tensor(u, requires_grad=True)
    with fw.dual_level():  # reverse over forward: differentiate the tangent
        tangent = fw.unpack_dual(fn(lib, fw.make_dual(x, t))).tangent
        gx, gt = lib.autograd.grad(tangent, (x, t))
    with fw.dual_level():  # forward over reverse: the tangent of a gradient (H u)
        dual = fw.make_dual(lib.tensor(a, requires_grad=True), lib.tensor(u))
        g, = lib.autograd.grad(fn(lib, dual), dual, create_graph=True)
        hvp = fw.unpack_dual(g).tangent
    return [r.detach().numpy() for r in (tangent, gx, gt, hvp)]


@pytest.mark.parametrize("name", sorted(HVP_FUNCTIONS))
def test_second_order_mixed_modes(name):
    got = _second_order(ember, efw, HVP_FUNCTIONS[name])
    expected = _second_order(torch, tfw, HVP_FUNCTIONS[name])
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-10)


def _reprs(lib, fw):
    with fw.dual_level():
        x = fw.make_dual(lib.ones(2), lib.ones(2))
        y = fw.make_dual(lib.ones(2, requires_grad=True), lib.tensor([1.0, 2.0]))
        inside = [repr(x), repr(x * 2), repr(y)]
    return inside + [repr(x)]


def test_repr_shows_tangent():
    assert _reprs(ember, efw) == _reprs(torch, tfw)


def _random_program(lib, fw, seed, steps=8):
    """Views, in-place ops (on views too) and new tensors mixed at random; returns every
    tensor's value and tangent. A step that raises adds a marker instead."""
    rng = np.random.default_rng(seed)
    a, ta, b = (rng.standard_normal((4, 4)) for _ in range(3))
    with fw.dual_level():
        x = fw.make_dual(lib.tensor(a), lib.tensor(ta))
        pool = [x, lib.tensor(b), x * 1]
        for _ in range(steps):
            op = rng.integers(0, 10)
            s, o = pool[rng.integers(0, len(pool))], pool[rng.integers(0, len(pool))]
            try:
                if op == 0:
                    pool.append(s.t())
                elif op == 1:
                    pool.append(s[1:3])
                elif op == 2:
                    pool.append((s * o.sum()).sin())
                elif op == 3 and s._base is None:
                    s.mul_(1.5)
                elif op == 4:
                    s.add_(o.detach().clone() if rng.integers(0, 2) else o.sum())
                elif op == 5:
                    pool.append(s.reshape(-1)[:8].view(2, 4))
                elif op == 6:
                    s[0] = o[1] if o.shape == s.shape else s[0] * 2
                elif op == 7:
                    pool.append(s.clone())
                elif op == 8:
                    s.tanh_()
                elif op == 9:
                    pool.append(lib.cat([s, o], 0)[::2])
            except RuntimeError:
                pool.append(lib.zeros(1))
        return [(t.detach().numpy().copy(), None if fw.unpack_dual(t).tangent is None
                 else fw.unpack_dual(t).tangent.numpy().copy()) for t in pool]


@pytest.mark.parametrize("seed", range(0, 120, 3))
def test_random_programs_with_views_and_inplace(seed):
    got, expected = _random_program(ember, efw, seed), _random_program(torch, tfw, seed)
    assert len(got) == len(expected)
    for (p, t), (ep, et) in zip(got, expected):
        np.testing.assert_allclose(p, ep, rtol=1e-10, atol=1e-12)
        assert (t is None) == (et is None)
        if t is not None:
            np.testing.assert_allclose(t, et, rtol=1e-10, atol=1e-12)
