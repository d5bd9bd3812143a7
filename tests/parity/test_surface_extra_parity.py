"""frombuffer, empty_permuted, hash_tensor, is_signed, orgqr/ormqr, set_anomaly_enabled,
Tensor.module_load, func.linearize/functionalize and optim.swap_in_optimizer_params_and_state
against PyTorch."""
import array

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of


def test_frombuffer_values_sharing_and_errors():
    for dtype, count, offset in [("int32", -1, 0), ("int32", 2, 4), ("int16", -1, 2),
                                 ("uint8", 3, 5), ("float32", -1, 0)]:
        results = []
        for lib in (torch, ember):
            buf = array.array("i", [1, 2, 3, 1065353216])
            t = lib.frombuffer(buf, dtype=getattr(lib, dtype), count=count, offset=offset)
            t[0] = 7
            results.append((t.numpy().tolist(), list(buf), str(t.dtype).split(".")[1]))
        assert results[1] == results[0]
    buf = array.array("i", [1, 2, 3, 4])
    for make in [lambda lib: lib.frombuffer(buf, dtype=lib.float64, count=3),
                 lambda lib: lib.frombuffer(buf, dtype=lib.int32, offset=16),
                 lambda lib: lib.frombuffer(buf, dtype=lib.int32, offset=-1),
                 lambda lib: lib.frombuffer(buf, dtype=lib.int32, offset=2),
                 lambda lib: lib.frombuffer(buf, dtype=lib.int32, count=0),
                 lambda lib: lib.frombuffer(b"", dtype=lib.int32),
                 lambda lib: lib.frombuffer([1, 2], dtype=lib.int32)]:
        assert error_of(lambda: make(ember)) == error_of(lambda: make(torch))
    t = ember.frombuffer(bytearray(b"\x00\x00\x80\x3f"), dtype=ember.float32, requires_grad=True)
    assert t.requires_grad and t.tolist() == [1.0]


def test_frombuffer_read_only_buffer_copies_with_a_warning():
    with pytest.warns(UserWarning, match="not writable"):
        ember._ops.surface_extra._NOT_WRITABLE_WARNED[0] = False
        t = ember.frombuffer(b"\x01\x00\x00\x00", dtype=ember.int32)
    t[0] = 5
    assert t.tolist() == [5]


@pytest.mark.parametrize("size,layout", [((2, 3, 5, 7), (0, 2, 3, 1)), ((2, 3), (1, 0)),
                                         ((4,), (0,)), ((2, 0, 3), (2, 0, 1))])
def test_empty_permuted_strides(size, layout):
    t = torch.empty_permuted(size, layout, dtype=torch.float64)
    e = ember.empty_permuted(size, layout, dtype=ember.float64)
    assert (e.shape, e.stride(), e.dtype.name) == (tuple(t.shape), t.stride(), "float64")
    e = ember.empty_permuted((2, 3), (1, 0), requires_grad=True)
    assert e.requires_grad and e.is_leaf


def test_empty_permuted_errors():
    for args in [((2, 3), (0, 0)), ((2, 3), (0,)), ((2, 3), (0, 2)), ((2, 3), (-1, 0))]:
        assert error_of(lambda: ember.empty_permuted(*args)) == \
            error_of(lambda: torch.empty_permuted(*args))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int64", "bool",
                                   "uint8", "int32"])
def test_hash_tensor_matches(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) * 50).astype(dtype)
    t, e = torch.tensor(a), ember.tensor(a)
    for args, kwargs in [((), {}), ((1,), {}), ((0,), {"keepdim": True}), (((0, 1),), {}),
                         ((-1,), {"keepdim": True})]:
        want, got = torch.hash_tensor(t, *args, **kwargs), ember.hash_tensor(e, *args, **kwargs)
        assert got.dtype == ember.uint64 and tuple(got.shape) == tuple(want.shape)
        assert got.numpy().tolist() == want.numpy().tolist()
    assert e.hash_tensor().item() == t.hash_tensor().item()


def test_hash_tensor_special_values_and_errors():
    for values in ([float("nan")], [-0.0], [1.5, -2.25]):
        assert ember.hash_tensor(ember.tensor(values)).item() == \
            torch.hash_tensor(torch.tensor(values)).item()
    assert ember.hash_tensor(ember.tensor(3.0)).item() == \
        torch.hash_tensor(torch.tensor(3.0)).item()
    for make in [lambda lib: lib.hash_tensor(lib.zeros(0)),
                 lambda lib: lib.hash_tensor(lib.zeros(0, 3), 0),
                 lambda lib: lib.hash_tensor(lib.ones(2, 3), 3),
                 lambda lib: lib.hash_tensor(lib.ones(2), mode=1),
                 lambda lib: lib.hash_tensor(lib.ones(2, dtype=lib.complex64)),
                 lambda lib: lib.hash_tensor(lib.ones(2, dtype=lib.uint64))]:
        assert error_of(lambda: make(ember)) == error_of(lambda: make(torch))
    assert not ember.hash_tensor(ember.ones(2, requires_grad=True)).requires_grad


def test_is_signed():
    for name in ["float32", "int8", "uint8", "bool", "complex64", "int64"]:
        assert ember.is_signed(ember.ones(1, dtype=getattr(ember, name))) == \
            torch.is_signed(torch.ones(1, dtype=getattr(torch, name)))


def _qr(m, n, dtype, seed):
    a = np.random.default_rng(seed).standard_normal((m, n)).astype(dtype)
    ta, tau = torch.geqrf(torch.tensor(a))
    return ta.numpy(), tau.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_orgqr(dtype):
    a, tau = _qr(5, 3, dtype, 0)
    compare(lambda lib, a, tau: lib.orgqr(a, tau), a, tau)
    compare(lambda lib, a, tau: a.orgqr(tau), a, tau)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("left,transpose", [(True, False), (True, True), (False, False),
                                            (False, True)])
def test_ormqr(dtype, left, transpose):
    a, tau = _qr(5, 3, dtype, 1)
    other = np.random.default_rng(2).standard_normal((5, 2) if left else (2, 5)).astype(dtype)
    compare(lambda lib, a, tau, c: lib.ormqr(a, tau, c, left=left, transpose=transpose),
            a, tau, other, rtol=1e-3 if dtype == np.float32 else None)


def test_ormqr_batched_and_errors():
    a = np.random.default_rng(3).standard_normal((2, 4, 2))
    ta, ttau = torch.geqrf(torch.tensor(a))
    other = np.random.default_rng(4).standard_normal((2, 4, 3))
    compare(lambda lib, a, tau, c: lib.ormqr(a, tau, c), ta.numpy(), ttau.numpy(), other)
    a2, tau2 = _qr(4, 2, np.float64, 5)

    def cases(lib):
        A, T = lib.tensor(a2), lib.tensor(tau2)
        C = lib.ones(4, 3, dtype=lib.float64)
        return [lambda: lib.ormqr(A, T, lib.ones(3, 3, dtype=lib.float64)),
                lambda: lib.ormqr(A, T, lib.ones(3, 3, dtype=lib.float64), left=False),
                lambda: lib.ormqr(A, T.float(), C),
                lambda: lib.ormqr(A, T, C.float()),
                lambda: lib.ormqr(A, T[:1], C),
                lambda: lib.ormqr(A, T, lib.ones(4, dtype=lib.float64)),
                lambda: lib.ormqr(lib.ones(4, dtype=lib.float64), T, C),
                lambda: lib.ormqr(A.int(), T.int(), C.int())]
    for t_case, e_case in zip(cases(torch), cases(ember)):
        assert error_of(e_case) == error_of(t_case)


def test_set_anomaly_enabled():
    try:
        for args in [(True,), (True, False), (False,)]:
            torch.set_anomaly_enabled(*args)
            ember.set_anomaly_enabled(*args)
            assert (ember.is_anomaly_enabled(), ember.is_anomaly_check_nan_enabled()) == \
                (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    finally:
        torch.set_anomaly_enabled(False, True)
        ember.set_anomaly_enabled(False, True)
    import ember.autograd.variable as variable
    assert variable.Variable is ember.autograd.Variable


def test_module_load():
    for assign in (False, True):
        results = []
        for lib in (torch, ember):
            p = lib.nn.Parameter(lib.zeros(2))
            other = lib.ones(2, requires_grad=True)
            with lib.no_grad():
                out = p.module_load(other, assign=assign)
            results.append((out.tolist(), p.tolist(), out.requires_grad, out is p,
                            out is other, error_of(lambda: p.module_load(other))))
        assert results[1] == results[0]


def test_linearize_matches_torch():
    x = np.random.default_rng(0).standard_normal((3,))
    y = np.random.default_rng(1).standard_normal((3,))
    outs = []
    for lib in (torch, ember):
        out, jvp_fn = lib.func.linearize(lambda a, b: (a.sin() * b, (a * b).sum()),
                                         lib.tensor(x), lib.tensor(y))
        tangents = jvp_fn(lib.ones(3, dtype=lib.float64), lib.tensor(y))
        outs.append([t.numpy() for t in (*out, *tangents)])
        assert error_of(lambda: jvp_fn(lib.ones(3, dtype=lib.float64))).__class__ is tuple
        assert "tangent:1 with dtype" in error_of(
            lambda: jvp_fn(lib.ones(3, dtype=lib.float64), lib.ones(3)))[1]
    for e, t in zip(outs[1], outs[0]):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_functionalize():
    results = []
    for lib in (torch, ember):
        x = lib.zeros(2)
        out = lib.func.functionalize(lambda x: x.add_(1) * 2)(x)
        results.append((out.tolist(), x.tolist()))
        assert error_of(lambda: lib.func.functionalize(lambda x: x, remove="x"))[0] == \
            "RuntimeError"
    assert results[1] == results[0]
    assert error_of(lambda: ember.func.functionalize(abs, remove="x")) == \
        error_of(lambda: torch.func.functionalize(abs, remove="x"))


def test_swap_in_optimizer_params_and_state():
    results = []
    for lib in (torch, ember):
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.Adam([w], lr=0.1)
        assert "initialized optimizer state" in error_of(
            lambda: lib.optim.swap_in_optimizer_params_and_state(opt, {}, {}).__enter__())[1]
        w.grad = lib.tensor([1.0, -2.0])
        opt.step()
        state = opt.state_dict()
        other = {"w": lib.zeros(2)}
        other["w"].grad = lib.tensor([0.5, 0.5])
        with lib.optim.swap_in_optimizer_params_and_state(opt, other, state):
            opt.step()
            inside = opt.param_groups[0]["params"][0] is other["w"]
        results.append((other["w"].tolist(), w.tolist(), inside,
                        opt.param_groups[0]["params"][0] is w,
                        float(state["state"][0]["step"])))
        bad = dict(state, param_groups=[dict(state["param_groups"][0], extra=1)])
        results.append(error_of(
            lambda: lib.optim.swap_in_optimizer_params_and_state(opt, other, bad).__enter__()))
    assert results[2][1:4] == results[0][1:4] and results[3] == results[1]
    np.testing.assert_allclose(results[2][0], results[0][0], rtol=1e-6)
