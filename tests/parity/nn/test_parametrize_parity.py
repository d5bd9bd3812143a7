"""nn.utils.parametrize / parametrizations against PyTorch: the parametrizations
tutorial's classes, orthogonal / weight_norm / spectral_norm values and parameters after
a few optimizer steps (state copied across, never drawn from both RNGs), state_dict
keys, errors, and the matrix functions under them."""
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of

LIBS = {"torch": torch, "ember": ember}


def _to(lib, value):
    return lib.tensor(value.detach().numpy() if hasattr(value, "detach") else value)


def _copy_state(src, dst, lib):
    dst.load_state_dict({k: _to(lib, v) for k, v in src.state_dict().items()})


def _classes(lib):
    """The parametrizations of the tutorial, written once against ``lib``."""
    nn = lib.nn

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu(1)

    class CayleyMap(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.register_buffer("Id", lib.eye(n))

        def forward(self, X):
            return lib.linalg.solve(self.Id - X, self.Id + X)

        def right_inverse(self, A):
            return lib.linalg.solve(A + self.Id, self.Id - A)

    class MatrixExponential(nn.Module):
        def forward(self, X):
            return lib.matrix_exp(X)

    class PruningParametrization(nn.Module):
        def __init__(self, mask):
            super().__init__()
            self.mask = mask

        def forward(self, X):
            return X * self.mask

        def right_inverse(self, A):
            return A

    return dict(Symmetric=Symmetric, Skew=Skew, CayleyMap=CayleyMap,
                MatrixExponential=MatrixExponential, Pruning=PruningParametrization)


def _linear_pair(out_features, in_features, dtype="float32"):
    torch.manual_seed(0)
    layers = {"torch": torch.nn.Linear(in_features, out_features,
                                       dtype=getattr(torch, dtype))}
    layers["ember"] = ember.nn.Linear(in_features, out_features, dtype=getattr(ember, dtype))
    _copy_state(layers["torch"], layers["ember"], ember)
    return layers


TUTORIAL_CHAINS = [["Symmetric"], ["Skew"], ["Skew", "CayleyMap"],
                   ["Skew", "MatrixExponential"], ["Symmetric", "MatrixExponential"]]


@pytest.mark.parametrize("chain", TUTORIAL_CHAINS, ids="+".join)
def test_tutorial_parametrizations_train_alike(chain):
    layers = _linear_pair(3, 3)
    x = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)
    weights = {}
    for name, lib in LIBS.items():
        layer = layers[name]
        classes = _classes(lib)
        for cls in chain:
            args = (3,) if cls == "CayleyMap" else ()
            lib.nn.utils.parametrize.register_parametrization(layer, "weight",
                                                              classes[cls](*args))
        assert type(layer).__name__ == "ParametrizedLinear"
        opt = lib.optim.Adam(layer.parameters(), lr=0.05)
        for _ in range(3):
            opt.zero_grad()
            layer(lib.tensor(x)).pow(2).mean().backward()
            opt.step()
        weights[name] = (layer.weight.detach().numpy(),
                         layer.parametrizations.weight.original.detach().numpy(),
                         list(layer.state_dict()), repr(layer))
    np.testing.assert_allclose(weights["ember"][0], weights["torch"][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(weights["ember"][1], weights["torch"][1], rtol=1e-4, atol=1e-5)
    assert weights["ember"][2] == weights["torch"][2]
    assert weights["ember"][3] == weights["torch"][3]


def test_tutorial_right_inverse_initialization_and_pruning():
    rng = np.random.default_rng(1)
    X = rng.random((3, 3)).astype(np.float32)
    orth, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    if np.linalg.det(orth) < 0:
        orth[0] *= -1
    mask = (rng.random((4, 3)) > 0.2).astype(np.float32)
    pruned_x = rng.random((4, 3)).astype(np.float32)
    results = {}
    for name, lib in LIBS.items():
        P, classes = lib.nn.utils.parametrize, _classes(lib)
        layer = _linear_pair(3, 3)[name]
        P.register_parametrization(layer, "weight", classes["Skew"]())
        layer.weight = lib.tensor(X - X.T)
        skew = lib.dist(layer.weight, lib.tensor(X - X.T)).item()
        ortho = _linear_pair(3, 3)[name]
        P.register_parametrization(ortho, "weight", classes["Skew"]())
        P.register_parametrization(ortho, "weight", classes["CayleyMap"](3))
        ortho.weight = lib.tensor(orth.astype(np.float32))
        pruned = _linear_pair(4, 3)[name]
        P.register_parametrization(pruned, "weight", classes["Pruning"](lib.tensor(mask)))
        pruned.weight = lib.tensor(pruned_x)
        results[name] = (skew, ortho.weight.detach().numpy(), pruned.weight.detach().numpy())
    assert results["ember"][0] == pytest.approx(results["torch"][0], abs=1e-6)
    np.testing.assert_allclose(results["ember"][1], results["torch"][1], atol=1e-5)
    np.testing.assert_allclose(results["ember"][2], results["torch"][2])


def test_tutorial_caching_calls():
    counts = {}
    for name, lib in LIBS.items():
        calls = []

        class Noisy(lib.nn.Module):
            def forward(self, X):
                calls.append(1)
                return X

        P = lib.nn.utils.parametrize
        layer = lib.nn.Linear(4, 4)
        P.register_parametrization(layer, "weight", Noisy())
        outside = len(calls)
        layer.weight + layer.weight.T
        layer.weight.sum()
        uncached = len(calls) - outside
        with P.cached():
            layer.weight + layer.weight.T
            layer.weight.sum()
        counts[name] = (outside, uncached, len(calls) - outside - uncached)
    assert counts["ember"] == counts["torch"] == (1, 3, 1)


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_tutorial_removing(leave_parametrized):
    out = {}
    for name, lib in LIBS.items():
        layer = _linear_pair(3, 3)[name]
        lib.nn.utils.parametrize.register_parametrization(layer, "weight",
                                                          _classes(lib)["Skew"]())
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight", leave_parametrized)
        out[name] = (repr(layer), type(layer.weight).__name__, layer.weight.detach().numpy())
    assert out["ember"][:2] == out["torch"][:2]
    np.testing.assert_allclose(out["ember"][2], out["torch"][2])


def _train(layers, steps=3, dtype="float64", lr=0.1):
    x = np.random.default_rng(2).standard_normal((5, layers["torch"].in_features)).astype(dtype)
    for name, lib in LIBS.items():
        layer = layers[name]
        opt = lib.optim.SGD(layer.parameters(), lr=lr)
        for _ in range(steps):
            opt.zero_grad()
            layer(lib.tensor(x)).pow(2).sum().backward()
            opt.step()
    t, e = layers["torch"], layers["ember"]
    tol = dict(rtol=1e-9, atol=1e-11) if dtype == "float64" else dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), **tol)
    for (tn, tp), (en, ep) in zip(t.named_parameters(), e.named_parameters()):
        assert tn == en
        np.testing.assert_allclose(ep.detach().numpy(), tp.detach().numpy(), err_msg=tn, **tol)
    for (tn, tb), (en, eb) in zip(t.named_buffers(), e.named_buffers()):
        assert tn == en
        np.testing.assert_allclose(eb.detach().numpy(), tb.detach().numpy(), err_msg=tn, **tol)


def _parametrized_pair(shape, fn_name, dtype="float64", copy_state=True, **kwargs):
    layers = _linear_pair(*shape, dtype=dtype)
    for name, lib in LIBS.items():
        getattr(lib.nn.utils.parametrizations, fn_name)(layers[name], **kwargs)
    assert list(layers["ember"].state_dict()) == list(layers["torch"].state_dict())
    if copy_state:  # random parts (a base completed by randn, spectral norm's u, v)
        _copy_state(layers["torch"], layers["ember"], ember)
    return layers


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("trivialization", [True, False])
def test_orthogonal_trains_alike(shape, orthogonal_map, trivialization):
    layers = _parametrized_pair(shape, "orthogonal", orthogonal_map=orthogonal_map,
                                use_trivialization=trivialization)
    _train(layers)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_registration_values_square(orthogonal_map):
    # square matrices: right_inverse is deterministic (QR), no state copied
    layers = _parametrized_pair((4, 4), "orthogonal", copy_state=False,
                                orthogonal_map=orthogonal_map)
    np.testing.assert_allclose(layers["ember"].weight.detach().numpy(),
                               layers["torch"].weight.detach().numpy(), atol=1e-12)
    _train(layers)


def test_orthogonal_float32():
    _train(_parametrized_pair((4, 4), "orthogonal", dtype="float32"), dtype="float32")


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_trains_alike(dim):
    layers = _parametrized_pair((4, 3), "weight_norm", copy_state=False, dim=dim)
    names = [layer.weight.grad_fn.name() for layer in layers.values()]
    assert names[0] == names[1]  # WeightNormInterfaceBackward0 for the first or last dim
    _train(layers)


@pytest.mark.parametrize("dim", [0, 1, 3, None])
def test_weight_norm_conv_weights(dim):
    torch.manual_seed(0)
    t = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv2d(3, 4, 2), dim=dim)
    e = ember.nn.utils.parametrizations.weight_norm(ember.nn.Conv2d(3, 4, 2), dim=dim)
    _copy_state(t, e, ember)
    x = np.random.default_rng(4).standard_normal((2, 3, 4, 4)).astype(np.float32)
    outs = {}
    for name, lib, layer in (("torch", torch, t), ("ember", ember, e)):
        layer(lib.tensor(x)).square().sum().backward()
        outs[name] = [layer.weight.grad_fn.name()] + [
            p.grad.numpy() for p in layer.parameters()]
    assert outs["ember"][0] == outs["torch"][0]
    for got, want in zip(outs["ember"][1:], outs["torch"][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kwargs", [{}, {"n_power_iterations": 3}, {"eps": 1e-3}])
def test_spectral_norm_trains_alike(kwargs):
    _train(_parametrized_pair((4, 3), "spectral_norm", **kwargs))


def test_spectral_norm_eval_and_float32():
    layers = _parametrized_pair((4, 3), "spectral_norm", dtype="float32")
    for layer in layers.values():
        layer.eval()
    _train(layers, dtype="float32")


def test_spectral_norm_conv_transpose():
    torch.manual_seed(0)
    t = torch.nn.utils.parametrizations.spectral_norm(torch.nn.ConvTranspose2d(3, 4, 2))
    e = ember.nn.utils.parametrizations.spectral_norm(ember.nn.ConvTranspose2d(3, 4, 2))
    assert list(e.state_dict()) == list(t.state_dict())
    _copy_state(t, e, ember)
    x = np.random.default_rng(3).standard_normal((1, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(e(ember.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


def _register_error(lib, case):
    nn, P = lib.nn, lib.nn.utils.parametrize
    layer = nn.Linear(3, 3)

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:2]

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    class NotTensor(nn.Module):
        def forward(self, X):
            return 1

    class BadInverse(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return 3

    if case == "missing":
        return lambda: P.register_parametrization(layer, "nope", Shrink())
    if case == "remove_changed_dtype":
        P.register_parametrization(layer, "weight", ToDouble(), unsafe=True)
        return lambda: P.remove_parametrizations(layer, "weight")
    if case == "remove_changed_dtype_buffer":
        norm = nn.BatchNorm1d(2)
        P.register_parametrization(norm, "running_mean", ToDouble(), unsafe=True)
        return lambda: P.remove_parametrizations(norm, "running_mean")
    if case == "not_a_module":
        return lambda: P.register_parametrization(layer, "weight", lambda x: x)
    if case == "shape":
        return lambda: P.register_parametrization(layer, "weight", Shrink())
    if case == "dtype":
        return lambda: P.register_parametrization(layer, "weight", ToDouble())
    if case == "not_tensor":
        return lambda: P.register_parametrization(layer, "weight", NotTensor())
    if case == "bad_inverse":
        return lambda: P.register_parametrization(layer, "weight", BadInverse())
    P.register_parametrization(layer, "weight", _classes(lib)["Symmetric"]())
    if case == "chained_shape":
        return lambda: P.register_parametrization(layer, "weight", Shrink())
    if case == "chained_dtype":
        return lambda: P.register_parametrization(layer, "weight", ToDouble())
    if case == "assign":
        return lambda: setattr(layer, "weight", lib.zeros(3, 3))
    if case == "remove_missing":
        return lambda: P.remove_parametrizations(layer, "bias")
    if case == "assign_parameter":
        return lambda: setattr(layer, "weight", nn.Parameter(lib.zeros(3, 3)))
    if case == "delete":
        return lambda: delattr(layer, "weight")
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["missing", "shape", "dtype", "not_tensor", "bad_inverse",
                                  "chained_shape", "chained_dtype", "assign",
                                  "remove_missing", "remove_changed_dtype",
                                  "remove_changed_dtype_buffer", "not_a_module",
                                  "assign_parameter", "delete"])
def test_parametrize_errors_match(case):
    t = error_of(_register_error(torch, case))
    e = error_of(_register_error(ember, case))
    assert t is not None
    assert e[0] == t[0]
    assert e[1].replace("ember", "torch") == t[1]


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "bias"),
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2),
                                                         orthogonal_map="qr"),
    lambda lib: setattr(lib.nn.utils.parametrizations.orthogonal(
        lib.nn.Linear(2, 2), use_trivialization=False), "weight", lib.eye(2)),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=2),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2),
                                                            n_power_iterations=0),
    lambda lib: setattr(lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2)),
                        "weight", lib.eye(3)),
])
def test_parametrizations_errors_match(call):
    t = error_of(lambda: call(torch))
    e = error_of(lambda: call(ember))
    assert t is not None and e is not None
    assert e[0] == t[0]
    assert e[1].replace("ember", "torch") == t[1]


# ---- the matrix functions under them ------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matrix_exp_parity(dtype):
    rng = np.random.default_rng(4)
    compare(lambda lib, a: lib.linalg.matrix_exp(a), rng.standard_normal((2, 4, 4)).astype(dtype))
    compare(lambda lib, a: lib.matrix_exp(a), 4 * rng.standard_normal((3, 3)).astype(dtype),
            noncontiguous=True)
    compare(lambda lib, a: a.matrix_exp(), rng.standard_normal((1, 1)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_householder_product_parity(dtype):
    rng = np.random.default_rng(5)
    compare(lambda lib, a, tau: lib.linalg.householder_product(a, tau),
            rng.standard_normal((5, 3)).astype(dtype), rng.standard_normal(2).astype(dtype))
    compare(lambda lib, a, tau: lib.linalg.householder_product(a, tau),
            rng.standard_normal((2, 4, 4)).astype(dtype), rng.standard_normal((2, 4)).astype(dtype),
            noncontiguous=True)


def test_geqrf_vdot_sgn_dist_parity():
    rng = np.random.default_rng(6)
    compare(lambda lib, a: tuple(lib.geqrf(a)), rng.standard_normal((2, 5, 3)), grad=False)
    compare(lambda lib, a: tuple(a.geqrf()), rng.standard_normal((3, 4)), grad=False)
    compare(lambda lib, a, b: lib.vdot(a, b), rng.standard_normal(4), rng.standard_normal(4))
    compare(lambda lib, a: lib.sgn(a), np.array([-2.0, 0.0, 3.0]), grad=False)
    compare(lambda lib, a, b: lib.dist(a, b), rng.standard_normal((2, 3)),
            rng.standard_normal(3).astype(np.float64))
    for p in (1, 3, 0.5, float("inf")):
        compare(lambda lib, a, b: lib.dist(a, b, p), rng.standard_normal((2, 3)),
                rng.standard_normal((2, 3)).astype(np.float32))
    names = {lib.__name__: lib.dist(lib.ones(2, requires_grad=True), lib.zeros(2))
             for lib in LIBS.values()}
    assert names["ember"].grad_fn.name() == names["torch"].grad_fn.name() == "DistBackward0"


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.matrix_exp(lib.zeros(2, 3)),
    lambda lib: lib.linalg.matrix_exp(lib.ones(2, 2, dtype=lib.long)),
    lambda lib: lib.linalg.householder_product(lib.zeros(3), lib.zeros(2)),
    lambda lib: lib.linalg.householder_product(lib.zeros(2, 3), lib.zeros(2)),
    lambda lib: lib.linalg.householder_product(lib.zeros(3, 2), lib.zeros(3)),
    lambda lib: lib.linalg.householder_product(lib.zeros(2, 3, 2), lib.zeros(3, 2)),
    lambda lib: lib.linalg.householder_product(lib.zeros(3, 2), lib.zeros(2).double()),
    lambda lib: lib.geqrf(lib.zeros(3)),
    lambda lib: lib.geqrf(lib.ones(2, 2, dtype=lib.long)),
    lambda lib: lib.geqrf(lib.ones(2, 2, requires_grad=True))[0].sum().backward(),
    lambda lib: lib.vdot(lib.zeros(3), lib.zeros(2)),
    lambda lib: lib.vdot(lib.zeros(3), lib.zeros(3).double()),
    lambda lib: lib.dist(lib.ones(3, dtype=lib.long), lib.ones(3, dtype=lib.long)),
    lambda lib: lib.dist(lib.ones(3), lib.ones(2)),
])
def test_matrix_function_errors_match(call):
    t = error_of(lambda: call(torch))
    e = error_of(lambda: call(ember))
    assert t is not None
    assert e == t


# ---- the hook-based nn.utils.weight_norm / spectral_norm ----------------------------------
def _hooked_pair(fn_name, dtype="float64", **kwargs):
    layers = _linear_pair(4, 3, dtype=dtype)
    for name, lib in LIBS.items():
        getattr(lib.nn.utils, fn_name)(layers[name], **kwargs)
    assert list(layers["ember"].state_dict()) == list(layers["torch"].state_dict())
    _copy_state(layers["torch"], layers["ember"], ember)  # spectral norm's u, v are random
    return layers


@pytest.mark.parametrize("dim", [0, 1, None])
def test_old_weight_norm_trains_alike(dim):
    for lib in LIBS.values():
        with pytest.warns(FutureWarning, match=r"`torch.nn.utils.weight_norm` is deprecated in "
                                               r"favor of `torch.nn.utils.parametrizations"):
            lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))
    with pytest.warns(FutureWarning):
        layers = _hooked_pair("weight_norm", dim=dim)
    assert [n for n, _ in layers["ember"].named_parameters()] == ["bias", "weight_g", "weight_v"]
    _train(layers)
    for name, lib in LIBS.items():
        lib.nn.utils.remove_weight_norm(layers[name])
    _train(layers)
    assert list(layers["ember"].state_dict()) == list(layers["torch"].state_dict())


@pytest.mark.parametrize("kwargs", [{}, {"n_power_iterations": 2}])
def test_old_spectral_norm_trains_alike(kwargs):
    layers = _hooked_pair("spectral_norm", **kwargs)
    _train(layers)
    t_meta = layers["torch"].state_dict()._metadata[""]["spectral_norm"]
    assert layers["ember"].state_dict()._metadata[""]["spectral_norm"] == t_meta
    for layer in layers.values():
        layer.eval()
    _train(layers)
    for name, lib in LIBS.items():
        lib.nn.utils.remove_spectral_norm(layers[name])
    assert list(layers["ember"].state_dict()) == list(layers["torch"].state_dict())
    _train(layers)


def test_old_spectral_norm_loads_unversioned_state_dict():
    layers = _hooked_pair("spectral_norm")
    _train(layers, steps=1)
    old = {}
    for name, lib in LIBS.items():
        layer = layers[name]
        state = {k: v for k, v in layer.state_dict().items() if k != "weight_v"}
        state["weight"] = layer.weight.detach()
        fresh = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4, dtype=lib.float64))
        fresh.load_state_dict(state)  # no metadata: the pre-version format
        old[name] = fresh.weight_v.detach().numpy()
    np.testing.assert_allclose(old["ember"], old["torch"], rtol=1e-7)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))),
    lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2)),
    lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2))),
    lambda lib: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2)),
    lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0),
    lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2, bias=False), "bias"),
])
def test_old_api_errors_match(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        t = error_of(lambda: call(torch))
        e = error_of(lambda: call(ember))
    assert t is not None
    assert e[0] == t[0]
    assert e[1].replace("ember", "torch") == t[1]



def _model(lib):
    P = lib.nn.utils.parametrizations
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh(), lib.nn.Linear(3, 2))
    P.orthogonal(model[0])
    P.weight_norm(model[2])
    return model


def test_torch_checkpoint_of_a_parametrized_model_loads(tmp_path):
    torch.manual_seed(0)
    t = _model(torch)
    torch.save(t.state_dict(), tmp_path / "model.pt")
    e = _model(ember)
    assert str(e.load_state_dict(ember.load(tmp_path / "model.pt"))) == \
        "<All keys matched successfully>"
    x = np.random.default_rng(5).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(e(ember.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    ember.save(e.state_dict(), tmp_path / "model.ember")
    again = _model(ember)
    again.load_state_dict(ember.load(tmp_path / "model.ember"))
    assert ember.equal(again(ember.tensor(x)), e(ember.tensor(x)))


@pytest.mark.parametrize("shape", [(2, 3, 3), (2, 4, 3), (2, 2, 3, 5)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("trivialization", [True, False])
def test_orthogonal_batches_of_matrices(shape, orthogonal_map, trivialization):
    W = np.random.default_rng(8).standard_normal(shape)
    weight = np.arange(W.size).reshape(shape) / 10.0
    out = {}
    for name, lib in LIBS.items():
        module = lib.nn.Module()
        module.weight = lib.nn.Parameter(lib.tensor(W))
        lib.nn.utils.parametrizations.orthogonal(module, orthogonal_map=orthogonal_map,
                                                 use_trivialization=trivialization)
        if name == "ember":
            _copy_state(out["torch"][0], module, ember)
        (module.weight * lib.tensor(weight)).sum().backward()
        out[name] = (module, module.weight.detach().numpy(),
                     module.parametrizations.weight.original.grad.numpy())
    np.testing.assert_allclose(out["ember"][1], out["torch"][1], atol=1e-12)
    np.testing.assert_allclose(out["ember"][2], out["torch"][2], atol=1e-12)


def test_spectral_norm_conv_training_steps():
    torch.manual_seed(0)
    t = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Conv2d(3, 4, 3),
                                                      n_power_iterations=2)
    e = ember.nn.utils.parametrizations.spectral_norm(ember.nn.Conv2d(3, 4, 3),
                                                      n_power_iterations=2)
    _copy_state(t, e, ember)
    x = np.random.default_rng(9).standard_normal((2, 3, 5, 5)).astype(np.float32)
    for _ in range(3):
        a, b = t(torch.tensor(x)), e(ember.tensor(x))
        a.sum().backward()
        b.sum().backward()
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(e.parametrizations.weight.original.grad.numpy(),
                               t.parametrizations.weight.original.grad.numpy(), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(e.parametrizations.weight[0]._u.numpy(),
                               t.parametrizations.weight[0]._u.numpy(), rtol=1e-4, atol=1e-5)
