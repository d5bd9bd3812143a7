"""CPU autocast against PyTorch's: for each op, in a region of each lower-precision dtype,
the output's dtype and values and the float32 inputs' gradient dtypes and values.

The same float32 (or lower-precision) inputs go to both libraries; each side runs the op in
``autocast("cpu", dtype)``, then backpropagates the same random cotangent outside the
region through ``out.float()`` (as training code does: the loss leaves the region).
"""
import numpy as np
import pytest
import torch

import ember

LOWER = {"bfloat16": (torch.bfloat16, ember.bfloat16), "float16": (torch.float16, ember.float16)}
# both libraries accumulate lower-precision products in float32 and round once, so most
# results agree to a unit or two in the last place of the output dtype (bfloat16 keeps 8
# bits of mantissa: 2**-8 ~ 4e-3 relative; float16 11 bits: ~5e-4); reductions over the
# rounded values (losses, norms) add a few such units
TOL = {"bfloat16": dict(rtol=3e-2, atol=3e-2), "float16": dict(rtol=4e-3, atol=4e-3)}


def _flat(out):
    if isinstance(out, tuple):
        for o in out:
            yield from _flat(o)
    else:
        yield out


def _run(lib, fn, arrays, lower, input_dtypes, seed_cotangent=0):
    tensors = []
    for a, kind in zip(arrays, input_dtypes):
        t = lib.tensor(a)
        if kind == "lower":
            t = t.to(lower)
        elif kind == "float64":
            t = t.double()
        elif kind == "long":
            t = t.long()
        if t.is_floating_point():
            t.requires_grad_()
        tensors.append(t)
    with lib.autocast("cpu", dtype=lower):
        out = fn(lib, *tensors)
    outs = tuple(_flat(out))
    rng = np.random.default_rng(seed_cotangent)
    loss = 0
    for o in outs:
        if o.is_floating_point() and o.requires_grad:
            cot = lib.tensor(rng.standard_normal(tuple(o.shape)).astype(np.float32))
            loss = loss + (o.float() * cot).sum()
    if isinstance(loss, (torch.Tensor, ember.Tensor)):
        loss.backward()
    return outs, tensors


def _host(t):
    return t.detach().float().numpy() if isinstance(t, torch.Tensor) else \
        t.detach().float().numpy()


def _check(fn, shapes, dtype_name, input_dtypes=None, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) if not isinstance(s, np.ndarray) else s
              for s in shapes]
    input_dtypes = input_dtypes or ["float32"] * len(arrays)
    t_lower, e_lower = LOWER[dtype_name]
    t_outs, t_in = _run(torch, fn, arrays, t_lower, input_dtypes)
    e_outs, e_in = _run(ember, fn, arrays, e_lower, input_dtypes)
    assert len(t_outs) == len(e_outs)
    for t, e in zip(t_outs, e_outs):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
        np.testing.assert_allclose(_host(e), _host(t), **TOL[dtype_name])
    for t, e in zip(t_in, e_in):
        if t.grad is None:
            assert e.grad is None
            continue
        assert e.grad is not None
        assert str(e.grad.dtype).split(".")[-1] == str(t.grad.dtype).split(".")[-1]
        np.testing.assert_allclose(_host(e.grad), _host(t.grad), **TOL[dtype_name])


def _F(lib):
    return lib.nn.functional


# name -> (fn(lib, *tensors), input shapes, input kinds)
CASES = {
    # PyTorch's CPU lower-precision list
    "mm": (lambda lib, a, b: lib.mm(a, b), [(4, 6), (6, 5)], None),
    "matmul_3d_2d": (lambda lib, a, b: lib.matmul(a, b), [(2, 4, 6), (6, 5)], None),
    "matmul_1d": (lambda lib, a, b: lib.matmul(a, b), [(6,), (6,)], None),
    "matmul_operator": (lambda lib, a, b: a @ b, [(4, 6), (6, 5)], None),
    "method_mm": (lambda lib, a, b: a.mm(b), [(4, 6), (6, 5)], None),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), [(3, 4, 6), (3, 6, 5)], None),
    "addmm": (lambda lib, c, a, b: lib.addmm(c, a, b), [(4, 5), (4, 6), (6, 5)], None),
    "baddbmm": (lambda lib, c, a, b: lib.baddbmm(c, a, b), [(3, 4, 5), (3, 4, 6), (3, 6, 5)],
                None),
    "linear": (lambda lib, x, w, b: _F(lib).linear(x, w, b), [(4, 6), (5, 6), (5,)], None),
    "conv1d": (lambda lib, x, w: _F(lib).conv1d(x, w, padding=1), [(2, 3, 9), (4, 3, 3)], None),
    "conv2d": (lambda lib, x, w, b: _F(lib).conv2d(x, w, b),
               [(2, 3, 6, 6), (4, 3, 3, 3), (4,)], None),
    "conv_transpose2d": (lambda lib, x, w: _F(lib).conv_transpose2d(x, w, stride=2),
                         [(2, 3, 4, 4), (3, 2, 3, 3)], None),
    "prelu": (lambda lib, x, w: _F(lib).prelu(x, w), [(4, 3, 5), (3,)], None),
    "einsum": (lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)],
               None),
    "sdpa": (lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q, k, v),
             [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8)], None),
    # the CPU float32 list: lower-precision inputs come out float32
    "mse_loss": (lambda lib, a, b: _F(lib).mse_loss(a, b), [(4, 5), (4, 5)],
                 ["lower", "lower"]),
    "l1_loss": (lambda lib, a, b: _F(lib).l1_loss(a, b), [(4, 5), (4, 5)], ["lower", "lower"]),
    "cross_entropy": (lambda lib, x, t: _F(lib).cross_entropy(x, t),
                      [(6, 5), np.array([0, 4, 2, 1, 3, 0], dtype=np.int64)],
                      ["lower", "long"]),
    "bce_with_logits": (lambda lib, x, y: _F(lib).binary_cross_entropy_with_logits(x, y),
                        [(4, 5), np.full((4, 5), 0.25, dtype=np.float32)], ["lower", "lower"]),
    "cdist": (lambda lib, a, b: lib.cdist(a, b), [(4, 3), (5, 3)], ["lower", "lower"]),
    "prod": (lambda lib, a: a.prod(-1), [(3, 4)], ["lower"]),
    "reflect_pad": (lambda lib, x: _F(lib).pad(x, (2, 1), mode="reflect"), [(2, 3, 6)],
                    ["lower"]),
    "avg_pool3d": (lambda lib, x: _F(lib).avg_pool3d(x, 2), [(1, 2, 4, 4, 4)], ["lower"]),
    # promote: the widest floating input wins
    "cat": (lambda lib, a, b: lib.cat([a, b]), [(2, 3), (4, 3)], ["lower", "float32"]),
    "stack": (lambda lib, a, b: lib.stack([a, b]), [(2, 3), (2, 3)], ["float32", "lower"]),
    # not on the CPU's lists: the inputs' dtypes decide
    "softmax": (lambda lib, x: _F(lib).softmax(x, -1), [(3, 5)], ["lower"]),
    "exp_sum": (lambda lib, x: x.exp().sum(), [(3, 5)], ["lower"]),
    "constant_pad": (lambda lib, x: _F(lib).pad(x, (2, 1)), [(2, 3, 6)], ["lower"]),
    "layer_norm_lower": (lambda lib, x: _F(lib).layer_norm(x, (5,)), [(3, 5)], ["lower"]),
    "add_mixed": (lambda lib, a, b: a + b, [(3, 5), (3, 5)], ["lower", "float32"]),
    "pow": (lambda lib, x: (x ** 2, 2 ** x), [(3, 4)], ["lower"]),
    "mv_not_listed": (lambda lib, a, b: lib.mv(a, b), [(4, 6), (6,)], None),
    # float64 inputs are never cast (the float32 one is: PyTorch's mm then refuses the pair)
    "mm_float64": (lambda lib, a, b: lib.mm(a, b), [(4, 6), (6, 5)], ["float64", "float64"]),
}


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_autocast_op_matches_torch(case, dtype_name):
    fn, shapes, kinds = CASES[case]
    _check(fn, shapes, dtype_name, kinds)


def _module_case(build, shapes, dtype_name, seed=0):
    """Build the same module in both libraries (ember's weights copied from torch's)."""
    torch.manual_seed(seed)
    t_mod = build(torch)
    e_mod = build(ember)
    e_mod.load_state_dict({k: ember.tensor(v.detach().numpy())
                           for k, v in t_mod.state_dict().items()})
    t_mod.train(False)
    e_mod.train(False)
    _check(lambda lib, *xs: (t_mod if lib is torch else e_mod)(*xs), shapes, dtype_name)
    t_params = dict(t_mod.named_parameters())
    for name, p in e_mod.named_parameters():
        t = t_params[name]
        assert (p.grad is None) == (t.grad is None), name
        if p.grad is not None:
            assert p.grad.dtype is ember.float32 and t.grad.dtype is torch.float32
            np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), **TOL[dtype_name])


MODULES = {
    "linear_relu_linear": (lambda lib: lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.ReLU(),
                                                         lib.nn.Linear(8, 3)), [(4, 6)]),
    "conv_bn_pool": (lambda lib: lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4),
                                                   lib.nn.ReLU(), lib.nn.MaxPool2d(2)),
                     [(2, 3, 6, 6)]),
    "gru_stays_float32": (lambda lib: lib.nn.GRU(5, 4, batch_first=True), [(2, 3, 5)]),
    "lstm_cell_stays_float32": (lambda lib: lib.nn.LSTMCell(5, 4), [(2, 5)]),
    "multihead_attention": (lambda lib: lib.nn.MultiheadAttention(8, 2, batch_first=True),
                            [(2, 3, 8), (2, 4, 8), (2, 4, 8)]),
    "transformer_encoder_layer": (lambda lib: lib.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True), [(2, 3, 8)]),
}


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", sorted(MODULES))
def test_autocast_module_matches_torch(case, dtype_name):
    build, shapes = MODULES[case]
    _module_case(build, shapes, dtype_name)


def test_autocast_lstm_runs_in_bfloat16_as_torch():
    # PyTorch's CPU LSTM is oneDNN's fused layer, on the lower-precision list (its float16
    # form is refused by oneDNN on this CPU, so only bfloat16 is compared)
    _module_case(lambda lib: lib.nn.LSTM(5, 4, batch_first=True), [(2, 3, 5)], "bfloat16")


def test_autocast_state_functions_match_torch():
    for lib in (torch, ember):
        assert not lib.is_autocast_enabled("cpu")
        assert lib.get_autocast_dtype("cpu") == getattr(lib, "bfloat16")
        assert lib.get_autocast_dtype("cuda") == getattr(lib, "float16")
        with lib.autocast("cpu", dtype=lib.float16):
            assert lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled("cuda")
            assert lib.get_autocast_dtype("cpu") == lib.float16
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
            assert lib.is_autocast_enabled("cpu")
        assert not lib.is_autocast_enabled("cpu")
        assert lib.get_autocast_dtype("cpu") == lib.bfloat16


def test_unsupported_dtype_warns_and_disables_as_torch():
    messages = []
    for lib in (torch, ember):
        with pytest.warns(UserWarning) as caught:
            with lib.autocast("cpu", dtype=lib.float64):
                assert not lib.is_autocast_enabled("cpu")
        messages.append(str(caught[0].message))
    assert messages[0] == messages[1]


def test_weight_cast_is_cached_within_a_region_as_torch():
    for lib in (torch, ember):
        w = lib.ones(3, 3, requires_grad=True)
        x = lib.ones(2, 3)
        with lib.autocast("cpu"):
            a, b = lib.mm(x, w), lib.mm(x, w)
            assert a.grad_fn.next_functions[1][0] is b.grad_fn.next_functions[1][0]
        with lib.autocast("cpu", cache_enabled=False):
            a, b = lib.mm(x, w), lib.mm(x, w)
            assert a.grad_fn.next_functions[1][0] is not b.grad_fn.next_functions[1][0]


def test_explicit_dtype_and_inplace_are_not_cast_as_torch():
    for lib in (torch, ember):
        x = lib.ones(3, 3)
        with lib.autocast("cpu"):
            assert x.to(lib.bfloat16).sum(dtype=lib.float64).dtype == lib.float64
            assert x.clone().addmm_(x, x).dtype == lib.float32


def test_custom_fwd_casts_inputs_and_custom_bwd_restores_state_as_torch():
    seen = {}
    for lib in (torch, ember):
        class Scale(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return lib.mm(x, w)  # autocast is off inside: float32

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad):
                x, w = ctx.saved_tensors
                seen[lib] = lib.is_autocast_enabled("cpu")
                return grad.mm(w.t()), x.t().mm(grad)

        x = lib.ones(2, 3, dtype=lib.bfloat16, requires_grad=True)
        w = lib.ones(3, 4, requires_grad=True)
        with lib.autocast("cpu"):
            y = Scale.apply(x, w)
        assert y.dtype == lib.float32
        y.sum().backward()
        assert x.grad.dtype == lib.bfloat16 and w.grad.dtype == lib.float32
    assert seen[torch] is False and seen[ember] is False


def test_register_autocast_casts_a_custom_ops_inputs_as_torch():
    dtypes = {}
    for lib, ns in ((torch, "amp_parity_torch"), (ember, "amp_parity_ember")):
        @lib.library.custom_op(f"{ns}::scaled_sum", mutates_args=())
        def scaled_sum(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
            dtypes[lib] = (x.dtype, y.dtype, lib.is_autocast_enabled("cpu"))
            return x + y

        lib.library.register_autocast(f"{ns}::scaled_sum", "cpu", lib.float16)
        a, b = lib.ones(2), lib.ones(2, dtype=lib.bfloat16)
        with lib.autocast("cpu"):
            out = scaled_sum(a, b)
        assert out.dtype == lib.float16
    assert str(dtypes[torch]) == str(dtypes[ember]).replace("ember", "torch")


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_recomputes_under_the_forwards_autocast_state_as_torch(use_reentrant):
    grads = {}
    for lib in (torch, ember):
        w = lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3),
                       requires_grad=True)
        x = lib.tensor(np.linspace(0, 2, 8, dtype=np.float32).reshape(2, 4),
                       requires_grad=True)
        with lib.autocast("cpu"):
            y = lib.utils.checkpoint.checkpoint(lambda a: lib.relu(a @ w), x,
                                                use_reentrant=use_reentrant)
            assert y.dtype == lib.bfloat16
        y.float().pow(2).sum().backward()  # recomputation outside the region
        grads[lib] = (x.grad.float().numpy(), w.grad.float().numpy())
        assert x.grad.dtype == lib.float32 and w.grad.dtype == lib.float32
    for e, t in zip(grads[ember], grads[torch]):
        np.testing.assert_allclose(e, t, **TOL["bfloat16"])


def test_function_transforms_under_autocast_as_torch():
    for lib in (torch, ember):
        w = lib.ones(3, 3)
        x = lib.ones(4, 3)
        with lib.autocast("cpu"):
            assert lib.func.vmap(lambda r: r @ w)(x).dtype == lib.bfloat16
            assert lib.func.grad(lambda r: (r @ w).float().sum())(x[0]).dtype == lib.float32
