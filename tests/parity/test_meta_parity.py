"""'meta' tensors on ember and torch: the same shapes, dtypes, strides, reprs and errors.

Each case builds its inputs on the meta device with the library given and returns the
result(s); both libraries must give meta tensors of the same shapes and dtypes.
"""
import pytest
import torch

import ember


def _m(lib, *shape, dtype="float32", grad=False):
    return lib.empty(*shape, device="meta", dtype=getattr(lib, dtype), requires_grad=grad)


def _idx(lib, *shape, high=2):
    return lib.zeros(*shape, dtype=lib.int64, device="meta")


CASES = {
    # elementwise and broadcasting
    "add": lambda L, dt: _m(L, 3, 1, dtype=dt) + _m(L, 4, dtype=dt),
    "mul_scalar": lambda L, dt: _m(L, 2, 3, dtype=dt) * 2,
    "int_plus_float": lambda L, dt: _m(L, 3, dtype="int64") + 1.5,
    "int_div": lambda L, dt: _m(L, 3, dtype="int64") / 2,
    "cpu_scalar_tensor": lambda L, dt: _m(L, 2, 3, dtype=dt) * L.tensor(2.0),
    "exp_log": lambda L, dt: _m(L, 2, 3, dtype=dt).exp().log(),
    "where": lambda L, dt: L.where(_m(L, 3, 1, dtype="bool"), _m(L, 3, 4, dtype=dt), 0.0),
    "compare": lambda L, dt: _m(L, 2, 3, dtype=dt) > 0,
    "clamp_pow": lambda L, dt: _m(L, 4, dtype=dt).clamp(0, 1) ** 2,
    # products
    "matmul": lambda L, dt: _m(L, 5, 3, dtype=dt) @ _m(L, 3, 7, dtype=dt),
    "matmul_batched": lambda L, dt: _m(L, 2, 1, 5, 3, dtype=dt) @ _m(L, 4, 3, 7, dtype=dt),
    "matmul_vec": lambda L, dt: _m(L, 5, 3, dtype=dt) @ _m(L, 3, dtype=dt),
    "bmm": lambda L, dt: L.bmm(_m(L, 2, 5, 3, dtype=dt), _m(L, 2, 3, 4, dtype=dt)),
    "einsum": lambda L, dt: L.einsum("bij,bjk->bik", _m(L, 2, 5, 3, dtype=dt),
                                     _m(L, 2, 3, 4, dtype=dt)),
    "linear": lambda L, dt: L.nn.functional.linear(_m(L, 8, 5, dtype=dt), _m(L, 3, 5, dtype=dt),
                                                   _m(L, 3, dtype=dt)),
    "conv2d": lambda L, dt: L.nn.functional.conv2d(_m(L, 2, 3, 9, 9, dtype=dt),
                                                   _m(L, 4, 3, 3, 3, dtype=dt), stride=2,
                                                   padding=1),
    "conv1d_groups": lambda L, dt: L.nn.functional.conv1d(_m(L, 2, 4, 9, dtype=dt),
                                                          _m(L, 6, 2, 3, dtype=dt), groups=2),
    "conv_transpose2d": lambda L, dt: L.nn.functional.conv_transpose2d(
        _m(L, 1, 4, 5, 5, dtype=dt), _m(L, 4, 2, 3, 3, dtype=dt), stride=2),
    # reductions
    "sum_dim": lambda L, dt: _m(L, 3, 4, 5, dtype=dt).sum((0, 2), keepdim=True),
    "mean": lambda L, dt: _m(L, 3, 4, dtype=dt).mean(),
    "sum_int": lambda L, dt: _m(L, 3, 4, dtype="int32").sum(1),
    "max_dim": lambda L, dt: _m(L, 3, 4, dtype=dt).max(1),
    "argmax": lambda L, dt: _m(L, 3, 4, dtype=dt).argmax(-1),
    "var_std": lambda L, dt: (_m(L, 3, 4, dtype=dt).var(0), _m(L, 3, 4, dtype=dt).std()),
    "logsumexp": lambda L, dt: _m(L, 3, 4, dtype=dt).logsumexp(1),
    "cumsum": lambda L, dt: _m(L, 3, 4, dtype=dt).cumsum(1),
    "norm": lambda L, dt: _m(L, 3, 4, dtype=dt).norm(dim=1),
    "topk_sort": lambda L, dt: (_m(L, 3, 6, dtype=dt).topk(2), _m(L, 3, 6, dtype=dt).sort(1)),
    # views, joins, indexing
    "view_permute": lambda L, dt: _m(L, 2, 3, 4, dtype=dt).view(6, 4).t().unsqueeze(0),
    "reshape_flatten": lambda L, dt: _m(L, 2, 3, 4, dtype=dt).permute(2, 0, 1).reshape(4, -1),
    "expand": lambda L, dt: _m(L, 3, 1, dtype=dt).expand(2, 3, 5),
    "cat_stack": lambda L, dt: (L.cat([_m(L, 2, 3, dtype=dt), _m(L, 4, 3, dtype=dt)]),
                                L.stack([_m(L, 2, 3, dtype=dt)] * 3, 1)),
    "split_chunk": lambda L, dt: _m(L, 7, 3, dtype=dt).split(3) + _m(L, 7, 3, dtype=dt).chunk(2),
    "slice": lambda L, dt: _m(L, 5, 6, dtype=dt)[1:4, ::2],
    "index_tensor": lambda L, dt: _m(L, 5, 6, dtype=dt)[_idx(L, 2, 3)],
    "index_select": lambda L, dt: _m(L, 5, 6, dtype=dt).index_select(1, _idx(L, 4)),
    "gather": lambda L, dt: _m(L, 5, 6, dtype=dt).gather(1, _idx(L, 5, 2)),
    "flip_roll": lambda L, dt: (_m(L, 3, 4, dtype=dt).flip(0), _m(L, 3, 4, dtype=dt).roll(1, 1)),
    "tril_repeat": lambda L, dt: (_m(L, 3, 4, dtype=dt).tril(), _m(L, 3, 4, dtype=dt).repeat(2, 1)),
    "pad": lambda L, dt: L.nn.functional.pad(_m(L, 2, 3, 4, dtype=dt), (1, 2, 0, 1)),
    # activations, normalization, pooling
    "activations": lambda L, dt: tuple(f(_m(L, 2, 5, dtype=dt)) for f in (
        L.relu, L.sigmoid, L.tanh, L.nn.functional.gelu, L.nn.functional.silu,
        L.nn.functional.leaky_relu, L.nn.functional.elu, L.nn.functional.softplus)),
    "softmax": lambda L, dt: (_m(L, 2, 5, dtype=dt).softmax(-1),
                              L.log_softmax(_m(L, 2, 5, dtype=dt), 1)),
    "layer_norm": lambda L, dt: L.nn.functional.layer_norm(_m(L, 2, 3, 5, dtype=dt), (5,)),
    "batch_norm": lambda L, dt: L.nn.functional.batch_norm(
        _m(L, 4, 3, 5, dtype=dt), None, None, training=True),
    "max_pool2d": lambda L, dt: L.nn.functional.max_pool2d(_m(L, 2, 3, 8, 8, dtype=dt), 2),
    "avg_pool2d": lambda L, dt: L.nn.functional.avg_pool2d(_m(L, 2, 3, 8, 8, dtype=dt), 3, 2),
    "adaptive_avg_pool2d": lambda L, dt: L.nn.functional.adaptive_avg_pool2d(
        _m(L, 2, 3, 8, 8, dtype=dt), (1, 1)),
    "dropout": lambda L, dt: L.nn.functional.dropout(_m(L, 4, 5, dtype=dt), 0.5),
    "embedding": lambda L, dt: L.nn.functional.embedding(_idx(L, 2, 3), _m(L, 10, 4, dtype=dt)),
    # losses
    "mse": lambda L, dt: L.nn.functional.mse_loss(_m(L, 4, 3, dtype=dt), _m(L, 4, 3, dtype=dt)),
    "cross_entropy": lambda L, dt: L.nn.functional.cross_entropy(_m(L, 4, 5, dtype=dt),
                                                                 _idx(L, 4)),
    "cross_entropy_none": lambda L, dt: L.nn.functional.cross_entropy(
        _m(L, 4, 5, dtype=dt), _idx(L, 4), reduction="none"),
    "nll": lambda L, dt: L.nn.functional.nll_loss(_m(L, 4, 5, dtype=dt), _idx(L, 4)),
    "bce_logits": lambda L, dt: L.nn.functional.binary_cross_entropy_with_logits(
        _m(L, 4, 3, dtype=dt), _m(L, 4, 3, dtype=dt)),
    # casts and creation
    "to_dtype": lambda L, dt: (_m(L, 2, 3, dtype=dt).to(L.float16), _m(L, 2, dtype=dt).long()),
    "like": lambda L, dt: (L.zeros_like(_m(L, 2, 3, dtype=dt)),
                           L.empty_like(_m(L, 2, 3, dtype=dt)),
                           L.randn_like(_m(L, 2, 3, dtype=dt)), _m(L, 2, dtype=dt).new_ones(4)),
    "factories": lambda L, dt: (L.arange(5, device="meta"), L.full((2,), 3, device="meta"),
                                L.rand(2, 3, device="meta", dtype=getattr(L, dt)),
                                L.randint(0, 5, (2, 3), device="meta"),
                                L.eye(3, device="meta"), L.linspace(0, 1, 5, device="meta"),
                                L.tensor([1, 2], device="meta")),
    "to_meta": lambda L, dt: L.ones(2, 3, dtype=getattr(L, dt)).to("meta"),
    "clone_detach": lambda L, dt: (_m(L, 2, 3, dtype=dt).clone(), _m(L, 2, dtype=dt).detach()),
}


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_meta_results_match_torch(name, dt):
    t_out, e_out = _flat(CASES[name](torch, dt)), _flat(CASES[name](ember, dt))
    assert len(t_out) == len(e_out)
    for t, e in zip(t_out, e_out):
        assert e.device == ember.device("meta") and e.is_meta, name
        assert t.device.type == "meta"
        assert tuple(e.shape) == tuple(t.shape), (name, e.shape, t.shape)
        assert e.dtype.name == str(t.dtype).split(".")[-1], (name, e.dtype, t.dtype)


REPRS = {
    "plain": lambda L: L.empty(3, 4, device="meta"),
    "vector": lambda L: L.empty(2, device="meta"),
    "scalar": lambda L: L.empty((), device="meta"),
    "empty": lambda L: L.empty(0, 2, device="meta"),
    "int64": lambda L: L.arange(4, device="meta"),
    "bool": lambda L: L.empty(2, device="meta") > 0,
    "float64_grad": lambda L: L.empty(2, device="meta", dtype=L.float64, requires_grad=True),
    "grad_fn": lambda L: L.empty(64, 128, 128, 128, device="meta", requires_grad=True) * 2,
    "parameter": lambda L: L.nn.Linear(3, 2, device="meta").weight,
}


@pytest.mark.parametrize("name", sorted(REPRS))
def test_meta_repr_matches_torch(name):
    assert repr(REPRS[name](ember)) == repr(REPRS[name](torch)).replace("torch.", "ember.")


@pytest.mark.parametrize("name", ["matmul", "conv2d", "sum_dim", "clone_detach", "add",
                                  "cat_stack", "softmax"])
def test_strides_of_computed_results_match_torch(name):
    for t, e in zip(_flat(CASES[name](torch, "float32")), _flat(CASES[name](ember, "float32"))):
        assert e.stride() == t.stride() and e.is_contiguous() == t.is_contiguous()


def _error(fn):
    try:
        fn()
    except Exception as exc:  # the class and text are compared
        return type(exc).__name__, str(exc)
    return None


ERRORS = {
    "item_many": lambda L: L.empty(3, 4, device="meta").item(),
    "item_one": lambda L: L.empty(1, device="meta").item(),
    "bool": lambda L: bool(L.empty(1, device="meta")),
    "tolist": lambda L: L.empty(3, device="meta").tolist(),
    "numpy": lambda L: L.empty(3, device="meta").numpy(),
    "numpy_grad": lambda L: L.empty(3, device="meta", requires_grad=True).numpy(),
    "cpu": lambda L: L.empty(3, device="meta").cpu(),
    "to_cpu": lambda L: L.empty(3, device="meta").to("cpu"),
    "meta_plus_cpu": lambda L: L.empty(3, device="meta") + L.ones(3),
    "cpu_times_meta": lambda L: L.ones(3) * L.empty(3, device="meta"),
    "cat_mixed": lambda L: L.cat([L.empty(3, device="meta"), L.ones(3)]),
    "where_mixed": lambda L: L.where(L.empty(3, device="meta") > 0, L.empty(3, device="meta"),
                                     L.ones(3)),
    "module_to_cpu": lambda L: L.nn.Linear(2, 2, device="meta").to("cpu"),
}


@pytest.mark.parametrize("name", ["add", "mm"])
def test_shape_errors_are_the_cpu_ones(name):
    # torch's meta kernels word shape errors their own way; ember's meta ops raise the CPU
    # op's error (same class), so a program gets the message it gets on the CPU
    op = {"add": lambda L, d: L.empty(3, device=d) + L.empty(4, device=d),
          "mm": lambda L, d: L.mm(L.empty(2, 3, device=d), L.empty(4, 2, device=d))}[name]
    expected = _error(lambda: op(torch, "cpu"))
    assert _error(lambda: op(ember, "meta")) == expected
    assert _error(lambda: op(torch, "meta"))[0] == expected[0]


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_meta_errors_match_torch(name):
    expected = _error(lambda: ERRORS[name](torch))
    assert expected is not None
    assert _error(lambda: ERRORS[name](ember)) == expected


@pytest.mark.parametrize("name", ["nonzero", "masked_select", "mask_index"])
def test_data_dependent_ops_raise_not_implemented_as_torch(name):
    op = {"nonzero": lambda L, m: m.nonzero(),
          "masked_select": lambda L, m: m.masked_select(m > 0),
          "mask_index": lambda L, m: m[m > 0]}[name]
    for lib in (torch, ember):
        with pytest.raises(NotImplementedError):
            op(lib, lib.empty(3, 4, device="meta"))
