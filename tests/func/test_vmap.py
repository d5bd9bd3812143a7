"""ember.vmap: batched results equal a per-sample loop; in/out dims, nesting, randomness,
the loop fallback's warning, autograd inside vmap, autograd.Function under vmap, errors."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.func import vmap


def _loop(f, *xs):
    return ember.stack([f(*[x[i] for x in xs]) for i in range(xs[0].shape[0])])


def _close(a, b, tol=1e-5):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _no_fallback(f, *xs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a loop fallback would warn
        return vmap(f, **kw)(*xs)


X = ember.randn(4, 3, 5, generator=ember.Generator().manual_seed(0))
Y = ember.randn(4, 5, generator=ember.Generator().manual_seed(1))

FAMILIES = {
    "unary": lambda a: a.exp().tanh().relu(),
    "binary_broadcast": lambda a: a * ember.arange(5.0) + 1,
    "activation": lambda a: F.gelu(a) + F.silu(a),
    "comparison_where": lambda a: ember.where(a > 0, a, a * 0.1),
    "sum_dim": lambda a: a.sum(0),
    "sum_all": lambda a: a.sum(),
    "reductions_over_tuples": lambda a: a.var() + a.std((0, 1)) + a.amax((0, 1)) + a.norm()
    + a.logsumexp((0, 1)) + a.mean((-1, 0)) + a.min() + a.prod(),
    "argmax_all": lambda a: a.argmax() + a.argmin(1).sum(),
    "mean_keepdim": lambda a: a.mean(-1, keepdim=True),
    "var": lambda a: a.var(1),
    "amax": lambda a: a.amax(1),
    "max_dim": lambda a: a.max(1)[0],
    "logsumexp": lambda a: a.logsumexp(0),
    "softmax": lambda a: a.softmax(-1),
    "log_softmax": lambda a: F.log_softmax(a, 0),
    "cumsum": lambda a: a.cumsum(1),
    "reshape_view": lambda a: a.reshape(15).view(5, 3),
    "permute_t": lambda a: a.permute(1, 0).t(),
    "transpose": lambda a: a.transpose(0, 1),
    "unsqueeze_squeeze": lambda a: a.unsqueeze(1).squeeze(1),
    "expand": lambda a: a[:, :1].expand(2, 3, 4),
    "flip": lambda a: a.flip(0),
    "repeat": lambda a: a.repeat(2, 1),
    "basic_index": lambda a: a[1:, ::2],
    "select": lambda a: a[0],
    "advanced_index": lambda a: a[:, ember.tensor([0, 2])],
    "cat": lambda a: ember.cat([a, a * 2], 1),
    "stack": lambda a: ember.stack([a, a], 0),
    "matmul": lambda a: a @ a.t(),
    "matvec": lambda a: a @ ember.ones(5),
    "gather": lambda a: a.gather(1, ember.tensor([[0, 1], [2, 3], [4, 0]])),
    "tril": lambda a: a.tril(),
    "diagonal": lambda a: a[:, :3].diagonal() + ember.diag_embed(a[0, :3]).sum(0),
    "mse_huber": lambda a: F.mse_loss(a, a.flip(0)) + F.huber_loss(a, a * 2, reduction="sum"),
    "bce": lambda a: F.binary_cross_entropy(a.sigmoid(), (a > 0).float())
    + F.binary_cross_entropy_with_logits(a, (a > 0).float(), reduction="none").sum(),
    "cross_entropy": lambda a: F.cross_entropy(a, ember.tensor([0, 4, 2])),
    "einsum": lambda a: ember.einsum("ij,kj->ik", a, a) + ember.einsum("ij,j->i", a, a[0]),
    "unfold_fold": lambda a: F.fold(F.unfold(a.reshape(1, 1, 3, 5), 2), (3, 5), 2),
    "attention": lambda a: F.scaled_dot_product_attention(a, a, a),
    "one_hot": lambda a: F.one_hot((a > 0).long(), 3).float(),
}


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "cholesky", "qr", "svd", "eigh",
                                  "pinv"])
def test_matrix_functions_match_loop(name):
    a = ember.randn(4, 3, 3, generator=ember.Generator().manual_seed(13))
    spd = a @ a.transpose(-1, -2) + 3 * ember.eye(3)
    f = {"inv": ember.linalg.inv, "det": ember.linalg.det,
         "slogdet": lambda m: ember.linalg.slogdet(m)[1], "cholesky": ember.linalg.cholesky,
         "qr": lambda m: ember.linalg.qr(m)[1].abs(), "svd": lambda m: ember.linalg.svd(m)[1],
         "eigh": lambda m: ember.linalg.eigh(m)[0], "pinv": ember.linalg.pinv}[name]
    _close(_no_fallback(f, spd), _loop(f, spd), 1e-4)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_op_family_matches_loop(name):
    f = FAMILIES[name]
    _close(_no_fallback(f, X), _loop(f, X))


def test_two_batched_inputs_and_matmul_vector():
    _close(_no_fallback(lambda a, b: a @ b, X, Y), _loop(lambda a, b: a @ b, X, Y))
    _close(_no_fallback(lambda a, b: b @ a.t(), X, Y), _loop(lambda a, b: b @ a.t(), X, Y))


def test_linear_conv_with_batched_input_and_weights():
    g = ember.Generator().manual_seed(3)
    img, w = ember.randn(5, 1, 2, 6, 6, generator=g), ember.randn(5, 3, 2, 3, 3, generator=g)
    b = ember.randn(5, 3, generator=g)

    def conv(a, ww, bb):
        return F.conv2d(a, ww, bb, padding=1)
    _close(_no_fallback(conv, img, w, b), _loop(conv, img, w, b))
    _close(_no_fallback(conv, img, w[0], b[0], in_dims=(0, None, None)),
           _loop(lambda a: conv(a, w[0], b[0]), img))
    lw, lb = ember.randn(4, 2, 5, generator=g), ember.randn(4, 2, generator=g)
    _close(_no_fallback(F.linear, Y, lw, lb), _loop(F.linear, Y, lw, lb))


def test_in_dims_and_out_dims():
    x = ember.randn(3, 4)
    _close(vmap(lambda a: a * 2, in_dims=1)(x), (x * 2).t())
    _close(vmap(lambda a: a * 2, in_dims=1, out_dims=1)(x), x * 2)
    out = vmap(lambda a, b: a + b, in_dims=(0, None))(x, ember.ones(4))
    _close(out, x + 1)
    tree = vmap(lambda d: d["a"] * d["b"], in_dims=({"a": 0, "b": None},))(
        {"a": x, "b": ember.full((4,), 2.0)})
    _close(tree, x * 2)
    o1, o2 = vmap(lambda a: (a, a.sum()), out_dims=(1, 0))(x)
    _close(o1, x.t())
    _close(o2, x.sum(1))
    same = vmap(lambda a: ember.ones(2))(x)  # an unbatched output is expanded
    _close(same, ember.ones(3, 2))
    assert vmap(lambda a: 3, out_dims=None)(x) == 3


def test_nested_vmap():
    x = ember.randn(2, 3, 4)
    _close(vmap(vmap(lambda a: (a * a).sum()))(x), (x * x).sum(-1))
    y = ember.randn(3, 4)
    outer = vmap(vmap(lambda a, b: a @ b, in_dims=(None, 0)), in_dims=(0, None))(y, y)
    _close(outer, y @ y.t())


def test_chunk_size_gives_the_same_result():
    _close(vmap(lambda a: a.softmax(-1), chunk_size=3)(X), vmap(lambda a: a.softmax(-1))(X))


def test_randomness_modes():
    x = ember.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: a + ember.randn(3))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: F.dropout(a + 1, 0.5))(x)
    diff = vmap(lambda a: a + ember.randn(3), randomness="different")(x)
    assert not np.allclose(diff[0].numpy(), diff[1].numpy())
    same = vmap(lambda a: a + ember.randn(3), randomness="same")(x)
    np.testing.assert_array_equal(same[0].numpy(), same[3].numpy())
    drop = vmap(lambda a: F.dropout(a + 1, 0.5), randomness="different")(ember.zeros(8, 50))
    assert not np.array_equal(drop[0].numpy(), drop[1].numpy())
    drop = vmap(lambda a: F.dropout(a + 1, 0.5), randomness="same")(ember.zeros(8, 50))
    np.testing.assert_array_equal(drop[0].numpy(), drop[5].numpy())
    assert set(np.unique(drop.numpy())) <= {0.0, 2.0}


def test_fallback_loops_and_warns_once_naming_the_op():
    x = ember.randn(4, 3, 3)

    def square(a):
        return a.view(ember.int32)  # a dtype view: no batching rule
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = vmap(square)(x)
        vmap(square)(x)
    np.testing.assert_array_equal(out.numpy(), _loop(square, x).numpy())
    msgs = [str(w.message) for w in caught if "batching rule" in str(w.message)]
    assert len(msgs) == 1 and "ViewDtype" in msgs[0]


def test_per_sample_gradients_with_autograd_grad():
    g = ember.Generator().manual_seed(5)
    w = ember.randn(5, 2, generator=g, requires_grad=True)
    x = ember.randn(6, 5, generator=g)
    t = ember.tensor([0, 1, 1, 0, 1, 0])

    def grad_of(xi, ti):
        loss = F.cross_entropy((xi @ w).unsqueeze(0), ti.unsqueeze(0))
        return ember.autograd.grad(loss, w)[0]
    _close(vmap(grad_of)(x, t), _loop(grad_of, x, t))

    def grad_x(xi):
        xi = xi.detach().requires_grad_()
        return ember.autograd.grad((xi.sin() * xi).sum(), xi)[0]
    _close(vmap(grad_x)(x), x.sin() + x * x.cos())


def test_backward_through_vmap_sums_over_the_batch():
    w = ember.randn(5, requires_grad=True)
    vmap(lambda a: (a * w).sum())(Y).sum().backward()
    _close(w.grad, Y.sum(0))


class _GeneratedSquare(ember.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 2 * x * grad


class _CustomRuleCube(ember.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 3 * x * x * grad

    @staticmethod
    def vmap(info, in_dims, x):
        _CustomRuleCube.seen = (info.batch_size, info.randomness, in_dims)
        return x ** 3, in_dims[0]


def test_autograd_function_under_vmap():
    x = ember.randn(4, 3, requires_grad=True)
    out = vmap(_GeneratedSquare.apply)(x)
    _close(out, x * x)
    out.sum().backward()
    _close(x.grad, 2 * x)
    x.grad = None
    out = vmap(_CustomRuleCube.apply, in_dims=1, out_dims=1)(x)
    assert _CustomRuleCube.seen == (3, "error", (0,))
    _close(out, x ** 3)
    out.sum().backward()
    _close(x.grad, 3 * x * x)


def test_autograd_function_without_vmap_support():
    class Plain(ember.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2
    with pytest.raises(RuntimeError, match="You tried to vmap over Plain, but it does not have "
                                           "vmap support"):
        vmap(Plain.apply)(X)


def test_errors():
    x, y = ember.randn(2, 3), ember.randn(3, 3)
    with pytest.raises(ValueError, match=r"got sizes \[2, 3\] for the mapped dimension"):
        vmap(ember.add)(x, y)
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        vmap(ember.add, in_dims=(0,))(x, y)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda a: bool(a.sum()))(x)
    with pytest.raises(RuntimeError, match=r"calling \.item\(\)"):
        vmap(lambda a: a.sum().item())(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda a: 3)(x)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        vmap(lambda a: a, out_dims=None)(x)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(lambda a: a, randomness="foo")


def test_gradcheck_check_batched_grad_runs_the_backward_batched():
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: (a.sin() * a).cumsum(0), (x,),
                                    check_batched_grad=True)

    class OneSampleBackward(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return ember.tensor(g._data * 2)  # works on its array: not batch-safe
    assert ember.autograd.gradcheck(OneSampleBackward.apply, (x,))
    assert not ember.autograd.gradcheck(OneSampleBackward.apply, (x,), check_batched_grad=True,
                                        raise_exception=False)


def test_is_grads_batched():
    x = ember.randn(4, requires_grad=True)
    y = x.exp()
    vectors = ember.eye(4)
    jac, = ember.autograd.grad(y, x, vectors, is_grads_batched=True)
    _close(jac, ember.diag(x.exp()))


def test_functions_that_read_arrays_run_per_sample_or_folded():
    g = ember.Generator().manual_seed(7)
    img = ember.randn(3, 2, 6, 6, generator=g)
    for f in (lambda a: F.max_pool2d(a, 2), lambda a: F.max_pool2d(a, 3, 1, 1),
              lambda a: F.adaptive_max_pool2d(a, 2), lambda a: F.avg_pool2d(a, 2),
              lambda a: F.avg_pool2d(a, 3, 1, 1), lambda a: F.adaptive_avg_pool2d(a, 3),
              lambda a: F.avg_pool3d(a[None], 2), lambda a: F.adaptive_avg_pool3d(a[None], 1)):
        _close(_no_fallback(f, img), _loop(f, img))
    y = ember.randn(4, 5, generator=g)
    idx = ember.tensor([[0, 1], [2, 3], [4, 0], [1, 1]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        def positions(a):
            return ember.searchsorted(a.sort()[0], a * 0.5)
        np.testing.assert_array_equal(vmap(positions)(y).numpy(), _loop(positions, y).numpy())
        _close(vmap(lambda a, i: a[i])(y, idx), _loop(lambda a, i: a[i], y, idx))

        def put(a, i):
            a = a.clone()
            a[i] = 0.0
            return a
        _close(vmap(put)(y, idx[:, 0]), _loop(put, y, idx[:, 0]))
    assert any("for searchsorted" in str(w.message) for w in caught)


def test_embedding_with_batched_indices_or_tables():
    g = ember.Generator().manual_seed(8)
    idx = ember.tensor([[0, 1], [2, 3], [4, 0], [1, 1]])
    emb = ember.nn.Embedding(6, 3)
    _close(_no_fallback(emb, idx), _loop(emb, idx))
    tables = ember.randn(4, 6, 3, generator=g)
    _close(_no_fallback(lambda w, i: F.embedding(i, w), tables, idx),
           _loop(lambda w, i: F.embedding(i, w), tables, idx))


def test_inplace_on_an_unbatched_tensor_with_a_batched_value_raises():
    with pytest.raises(RuntimeError, match="inplace arithmetic"):
        vmap(lambda a: ember.ones(5).mul_(a))(Y)

    def write(a):
        t = ember.zeros(3)
        t[0] = a[0]
        return t
    with pytest.raises(RuntimeError, match="inplace arithmetic"):
        vmap(write)(Y)


def test_inplace_on_a_batched_tensor():
    def f(a):
        a = a.clone()
        a.mul_(2).add_(ember.arange(5.0))
        return a
    _close(_no_fallback(f, Y), _loop(f, Y))


def test_per_sample_gradient_of_a_plain_input_used_along_several_paths():
    x = ember.randn(4, 3, generator=ember.Generator().manual_seed(9))
    w = ember.randn(3, requires_grad=True)

    def grad_of(xi):
        out = (xi * w).sum() + (w * w).sum() * xi.sum() + (w.exp() * xi).sum()
        return ember.autograd.grad(out, w)[0]
    _close(vmap(grad_of)(x), _loop(grad_of, x))


@pytest.mark.parametrize("loss", [
    lambda a, w: ((a * w)[ember.tensor([0, 2, 2])] ** 2).sum(),
    lambda a, w: ((a * w).mean(1) ** 2).sum(),
    lambda a, w: ((a @ w.t()).tanh() ** 2).sum(),
])
def test_second_order_per_sample_gradients(loss):
    x = ember.randn(4, 3, 5, generator=ember.Generator().manual_seed(10))
    w = ember.randn(3, 5, requires_grad=True)

    def grad_of_grad_norm(a):
        g, = ember.autograd.grad(loss(a, w), w, create_graph=True)
        return ember.autograd.grad((g * g).sum(), w)[0]
    _close(_no_fallback(grad_of_grad_norm, x), _loop(grad_of_grad_norm, x), 1e-4)


def test_randomness_of_randint_and_inplace_fills():
    x = ember.zeros(6, 3)
    ints = vmap(lambda a: a + ember.randint(0, 1000, (3,)), randomness="different")(x)
    assert len({tuple(r) for r in ints.tolist()}) > 1
    ints = vmap(lambda a: a + ember.randint(0, 1000, (3,)), randomness="same")(x)
    assert len({tuple(r) for r in ints.tolist()}) == 1
    with pytest.raises(RuntimeError, match="different inplace randomness on an unbatched"):
        vmap(lambda a: ember.ones(3).uniform_(), randomness="different")(x)
    filled = vmap(lambda a: a.clone().uniform_(), randomness="different")(x)
    assert not np.array_equal(filled[0].numpy(), filled[1].numpy())
    filled = vmap(lambda a: a.clone().normal_(), randomness="same")(x)
    np.testing.assert_array_equal(filled[0].numpy(), filled[4].numpy())


def _t64(*shape, seed):
    return ember.randn(*shape, dtype=ember.float64,
                       generator=ember.Generator().manual_seed(seed)).requires_grad_()


BATCHED_GRAD_CASES = {
    "tanh_mul": (lambda a, b: (a * b).tanh(), [(3, 4), (4,)]),
    "reductions": (lambda a: a.sum(1) + a.amax(1) + a.var(1) + a.logsumexp(1), [(3, 4)]),
    "softmax": (lambda a: F.log_softmax(a, 1) + a.softmax(0), [(3, 4)]),
    "matmul_linear": (lambda a, w: F.linear(a, w) @ w, [(3, 4), (2, 4)]),
    "index_views": (lambda a: a[ember.tensor([0, 2, 2])].permute(1, 0)[1:], [(3, 4)]),
    "conv": (lambda x, w: F.conv2d(x, w, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3)]),
    "avg_pool": (lambda x: F.avg_pool2d(x, 2), [(1, 2, 4, 4)]),
    "losses": (lambda a, b: F.mse_loss(a, b) + F.cross_entropy(a, ember.tensor([0, 3, 1])),
               [(3, 4), (3, 4)]),
    "gather_scatter": (lambda a: a.gather(1, ember.tensor([[0], [2], [3]])), [(3, 4)]),
    "embedding": (lambda w: F.embedding(ember.tensor([0, 2, 1]), w), [(4, 3)]),
}


@pytest.mark.parametrize("name", sorted(BATCHED_GRAD_CASES))
def test_backward_formulas_are_batch_safe(name):
    f, shapes = BATCHED_GRAD_CASES[name]
    args = [_t64(*s, seed=k) for k, s in enumerate(shapes)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every backward op has a rule
        assert ember.autograd.gradcheck(f, args, check_batched_grad=True)


def test_second_order_per_sample_gradients_of_a_conv():
    x = ember.randn(3, 2, 5, 5, generator=ember.Generator().manual_seed(12))
    w = ember.randn(3, 2, 3, 3, requires_grad=True)

    def grad_of_grad_norm(a):
        out = F.conv2d(a.unsqueeze(0), w, padding=1).tanh().sum()
        g, = ember.autograd.grad(out, w, create_graph=True)
        return ember.autograd.grad((g * g).sum(), w)[0]
    _close(_no_fallback(grad_of_grad_norm, x), _loop(grad_of_grad_norm, x), 1e-4)


def test_writes_into_batched_tensors():
    def fill_rows(a):
        out = ember.zeros_like(a)  # batched like a, as in PyTorch
        out[0] = a[0]
        out[1:] = a[1:] * 2
        return out

    def inplace_chain(a):
        b = a.clone()
        b.copy_(a * 3)
        b.fill_(1.0)
        b.zero_()
        b.add_(a)
        b.masked_fill_(a > 0, 0.5)
        return b.clamp_(-1, 1)

    def write_constant(a):
        b = ember.ones_like(a)
        b[2] = 7.0
        return b * a
    for f in (fill_rows, inplace_chain, write_constant):
        _close(_no_fallback(f, Y), _loop(f, Y))


def test_autograd_function_under_nested_vmap():
    x = ember.randn(2, 3, 4, requires_grad=True)
    out = vmap(vmap(_GeneratedSquare.apply))(x)
    _close(out, x * x)
    out.sum().backward()
    _close(x.grad, 2 * x)
    _close(vmap(vmap(_CustomRuleCube.apply))(x), x ** 3)


def test_nested_per_sample_gradients_of_an_outer_batched_tensor():
    x = ember.randn(2, 3, 4, generator=ember.Generator().manual_seed(14))
    w = ember.randn(2, 4, generator=ember.Generator().manual_seed(15))

    def inner(xi, wi):
        return ember.autograd.grad((xi * wi).sin().sum(), wi)[0]

    def outer(xo, wo):
        return vmap(inner, in_dims=(0, None))(xo, wo.detach().requires_grad_())
    want = ember.stack([ember.stack([inner(x[i, j], w[i].detach().requires_grad_())
                                     for j in range(3)]) for i in range(2)])
    _close(vmap(outer)(x, w), want)


def test_vmap_is_per_thread():
    import threading
    drawn = []

    def other_thread():
        drawn.append(ember.randn(2) * ember.ones(2))  # not inside this thread's vmap

    def f(a):
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        return a * 2
    _close(vmap(f)(Y), Y * 2)
    assert type(drawn[0]) is ember.Tensor and tuple(drawn[0].shape) == (2,)


def test_backward_inside_vmap_raises():
    x = ember.randn(2, 3, requires_grad=True)

    def f(a):
        a.sum().backward()
        return a
    with pytest.raises(RuntimeError, match=r"backward\(\) called inside a functorch transform"):
        vmap(f)(x)
