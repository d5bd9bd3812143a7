"""nn.utils.parametrize and nn.utils.parametrizations: bookkeeping, caching, removal,
errors, and float64 gradients through parametrizations (finite differences)."""
import copy
import pickle

import numpy as np
import pytest

import ember
from ember import nn
from ember.func import functional_call
from ember.nn.utils import parametrize as P
from ember.nn.utils import parametrizations as PS
from tests.helpers import check_grad, check_second_grad


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.mT

    def right_inverse(self, A):
        return A.triu(1)


class RankOne(nn.Module):
    def forward(self, x, y):
        return x.unsqueeze(-1) @ y.unsqueeze(-2)

    def right_inverse(self, Z):
        return Z[:, 0].clone(), Z[0, :].clone()


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, X):
        self.calls += 1
        return 2 * X


def test_register_moves_the_tensor_and_makes_a_property():
    layer = nn.Linear(3, 3)
    weight = layer.weight
    assert P.register_parametrization(layer, "weight", Symmetric()) is layer
    assert type(layer).__name__ == "ParametrizedLinear"
    assert isinstance(layer, nn.Linear) and P.type_before_parametrizations(layer) is nn.Linear
    assert isinstance(type(layer).__dict__["weight"], property)
    assert layer.parametrizations.weight.original is weight  # same Parameter object
    assert [n for n, _ in layer.named_parameters()] == ["bias", "parametrizations.weight.original"]
    assert list(layer.state_dict()) == ["bias", "parametrizations.weight.original"]
    w = weight.detach().numpy()
    np.testing.assert_allclose(layer.weight.detach().numpy(), np.triu(w) + np.triu(w, 1).T)
    assert layer.weight.grad_fn is not None
    assert P.is_parametrized(layer) and P.is_parametrized(layer, "weight")
    assert not P.is_parametrized(layer, "bias") and not P.is_parametrized(nn.Linear(2, 2))
    # other instances of the class are untouched
    assert type(nn.Linear(2, 2)) is nn.Linear and "weight" not in nn.Linear.__dict__


def test_repr_shows_the_parametrizations():
    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    assert repr(layer) == (
        "ParametrizedLinear(\n  in_features=3, out_features=3, bias=True\n"
        "  (parametrizations): ModuleDict(\n    (weight): ParametrizationList(\n"
        "      (0): Symmetric()\n    )\n  )\n)")


def test_right_inverse_on_registration_and_assignment():
    layer = nn.Linear(3, 3)
    w = layer.weight.detach().numpy().copy()
    P.register_parametrization(layer, "weight", Skew())
    np.testing.assert_allclose(layer.parametrizations.weight.original.detach().numpy(),
                               np.triu(w, 1))
    X = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
    X = X - X.T
    layer.weight = ember.tensor(X)
    np.testing.assert_allclose(layer.weight.detach().numpy(), X, atol=1e-6)


def test_assigning_without_right_inverse_raises():
    layer = P.register_parametrization(nn.Linear(2, 2), "weight", Symmetric())
    with pytest.raises(RuntimeError, match="parametrization Symmetric does not implement "
                                           "right_inverse."):
        layer.weight = ember.zeros(2, 2)


def test_right_inverse_returning_a_tuple_registers_original0_original1():
    layer = nn.Linear(3, 3)
    z = layer.weight.detach().numpy().copy()
    P.register_parametrization(layer, "weight", RankOne())
    chain = layer.parametrizations.weight
    assert not chain.is_tensor and chain.ntensors == 2
    assert not hasattr(chain, "original")
    assert isinstance(chain.original0, nn.Parameter) and chain.original0.requires_grad
    assert sorted(layer.state_dict()) == ["bias", "parametrizations.weight.original0",
                                          "parametrizations.weight.original1"]
    np.testing.assert_allclose(layer.weight.detach().numpy(), np.outer(z[:, 0], z[0, :]),
                               rtol=1e-6)
    layer.weight = ember.ones(3, 3)
    np.testing.assert_allclose(chain.original0.detach().numpy(), np.ones(3))
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        P.remove_parametrizations(layer, "weight", leave_parametrized=False)
    P.remove_parametrizations(layer, "weight")
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.is_leaf
    np.testing.assert_allclose(layer.weight.detach().numpy(), np.ones((3, 3)))


def test_cached_computes_once_per_block():
    layer = nn.Linear(2, 2)
    counter = Counting()
    P.register_parametrization(layer, "weight", counter)
    counter.calls = 0
    layer.weight + layer.weight
    assert counter.calls == 2
    with P.cached():
        a = layer.weight
        with P.cached():  # nested blocks share the cache
            b = layer.weight
        assert layer.weight is a is b
    assert counter.calls == 3
    assert P._cache == {}
    layer.weight
    assert counter.calls == 4


def test_chained_parametrizations_run_in_order():
    layer = nn.Linear(3, 3)
    P.register_parametrization(layer, "weight", Skew())
    P.register_parametrization(layer, "weight", Counting())
    orig = layer.parametrizations.weight.original.detach().numpy()
    skew = np.triu(orig, 1) - np.triu(orig, 1).T
    np.testing.assert_allclose(layer.weight.detach().numpy(), 2 * skew)
    assert len(layer.parametrizations.weight) == 2


def test_parametrization_parameters_and_buffers_are_registered():
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(ember.tensor(3.0))
            self.register_buffer("shift", ember.tensor(1.0))

        def forward(self, X):
            return X * self.scale + self.shift

    layer = P.register_parametrization(nn.Linear(2, 2), "weight", Scale())
    assert sorted(layer.state_dict()) == [
        "bias", "parametrizations.weight.0.scale", "parametrizations.weight.0.shift",
        "parametrizations.weight.original"]
    layer(ember.ones(1, 2)).sum().backward()
    assert layer.parametrizations.weight[0].scale.grad is not None


def test_buffers_can_be_parametrized():
    m = nn.BatchNorm1d(3)
    P.register_parametrization(m, "running_var", Counting())
    assert list(m.state_dict())[:2] == ["weight", "bias"]
    assert "parametrizations.running_var.original" in m.state_dict()
    np.testing.assert_allclose(m.running_var.numpy(), 2 * np.ones(3))
    assert not m.parametrizations.running_var.original.requires_grad


def test_training_mode_follows_the_module():
    layer = nn.Linear(2, 2).eval()
    p = Counting()
    P.register_parametrization(layer, "weight", p)
    assert p.training is False


def test_remove_leave_parametrized_keeps_the_parameter_object():
    layer = nn.Linear(3, 3)
    weight = layer.weight
    w = weight.detach().numpy().copy()
    opt = ember.optim.SGD(layer.parameters(), lr=0.1)
    P.register_parametrization(layer, "weight", Counting())
    P.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Linear and not hasattr(layer, "parametrizations")
    assert layer.weight is weight and "weight" not in type(layer).__dict__
    np.testing.assert_allclose(layer.weight.detach().numpy(), 2 * w)
    layer(ember.ones(1, 3)).sum().backward()
    opt.step()  # the optimizer still holds the registered parameter
    assert not np.allclose(layer.weight.detach().numpy(), 2 * w)


def test_remove_leave_unparametrized_restores_original():
    layer = nn.Linear(3, 3)
    w = layer.weight.detach().numpy().copy()
    P.register_parametrization(layer, "weight", Skew())
    P.register_parametrization(layer, "bias", Counting())
    P.remove_parametrizations(layer, "weight", leave_parametrized=False)
    assert type(layer).__name__ == "ParametrizedLinear"  # bias is still parametrized
    np.testing.assert_allclose(layer.weight.detach().numpy(), np.triu(w, 1))
    P.remove_parametrizations(layer, "bias")
    assert type(layer) is nn.Linear


def test_transfer_parametrizations_and_params():
    a, b = nn.Linear(3, 3), nn.Linear(3, 3)
    P.register_parametrization(a, "weight", Skew())
    P.transfer_parametrizations_and_params(a, b)
    assert b.parametrizations.weight.original is a.parametrizations.weight.original
    assert b.parametrizations.weight[0] is a.parametrizations.weight[0]
    assert ember.equal(a.weight, b.weight)
    c = nn.Module()  # lacks the tensor: created first
    P.transfer_parametrizations_and_params(a, c, "weight")
    assert ember.equal(c.weight, a.weight)
    assert P.transfer_parametrizations_and_params(nn.Linear(2, 2), b) is b


def test_deepcopy_works_and_pickle_is_refused():
    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Skew())
    clone = copy.deepcopy(layer)
    assert type(clone) is type(layer)
    assert clone.parametrizations.weight.original is not layer.parametrizations.weight.original
    assert ember.equal(clone.weight, layer.weight)
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only "
                                           "supported through state_dict()"):
        pickle.dumps(layer)


def test_registration_errors():
    layer = nn.Linear(3, 3)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                         "parametrized element with name 'nope'"):
        P.register_parametrization(layer, "nope", Symmetric())

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:2]

    with pytest.raises(ValueError, match="may not change the shape of the tensor, unless "
                                         "`unsafe` flag is enabled"):
        P.register_parametrization(layer, "weight", Shrink())
    assert type(layer) is nn.Linear  # nothing registered
    P.register_parametrization(layer, "weight", Shrink(), unsafe=True)
    assert layer.weight.shape == (2, 3)

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    with pytest.raises(ValueError, match=r"module.weight.dtype: ember.float32\n"
                                         r"parametrization\(module.weight\).dtype: "
                                         "ember.float64"):
        P.register_parametrization(layer, "weight", ToDouble())
    with pytest.raises(ValueError, match="ParametrizationList requires one or more modules."):
        P.ParametrizationList([], ember.zeros(2))
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        P.remove_parametrizations(layer, "bias")


def _skew(x):
    a = x.triu(1)
    return a - a.mT


def test_gradients_through_a_parametrization_float64():
    layer = P.register_parametrization(nn.Linear(3, 3).double(), "weight", Skew())
    layer.bias.requires_grad_(False)

    def run(w, x):
        return functional_call(layer, {"parametrizations.weight.original": w}, (x,))

    rng = np.random.default_rng(0)
    check_grad(run, rng.standard_normal((3, 3)), rng.standard_normal((2, 3)))


# ---- matrix functions the parametrizations use --------------------------------------------
def test_matrix_exp_values():
    rng = np.random.default_rng(0)
    s = rng.standard_normal((2, 4, 4))
    s = s + np.swapaxes(s, -1, -2)  # symmetric: exp through the eigen-decomposition
    w, v = np.linalg.eigh(s)
    expected = v @ (np.exp(w)[..., None] * np.swapaxes(v, -1, -2))
    np.testing.assert_allclose(ember.linalg.matrix_exp(ember.tensor(s)).numpy(), expected,
                               rtol=1e-10)
    big = 30 * s[0]  # needs squarings
    w, v = np.linalg.eigh(big)
    np.testing.assert_allclose(ember.matrix_exp(ember.tensor(big)).numpy(),
                               v @ np.diag(np.exp(w)) @ v.T, rtol=1e-9)
    theta = 0.7
    rot = ember.tensor([[0.0, -theta], [theta, 0.0]]).matrix_exp().numpy()
    np.testing.assert_allclose(rot, [[np.cos(theta), -np.sin(theta)],
                                     [np.sin(theta), np.cos(theta)]], rtol=1e-6)
    with pytest.raises(RuntimeError, match="linalg.matrix_exp: A must be batches of square "
                                           "matrices, but they are 2 by 3 matrices"):
        ember.linalg.matrix_exp(ember.zeros(2, 3))


def test_matrix_exp_gradients():
    a = np.random.default_rng(1).standard_normal((2, 3, 3))
    check_grad(ember.linalg.matrix_exp, a)
    check_second_grad(ember.linalg.matrix_exp, a[0])


def test_geqrf_and_householder_product_rebuild_qr():
    A = np.random.default_rng(2).standard_normal((2, 5, 3))
    a, tau = ember.geqrf(ember.tensor(A))
    assert a.shape == (2, 5, 3) and tau.shape == (2, 3)
    Q = ember.linalg.householder_product(a, tau)
    np.testing.assert_allclose((Q @ a.triu()[:, :3]).numpy(), A, atol=1e-12)
    np.testing.assert_allclose((Q.mT @ Q).numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)),
                               atol=1e-12)
    x = ember.tensor(A, requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not "
                                                  "implemented."):
        ember.geqrf(x)[0].sum().backward()


def test_householder_product_gradients():
    rng = np.random.default_rng(3)
    check_grad(ember.linalg.householder_product, rng.standard_normal((4, 3)),
               rng.standard_normal(2))
    check_second_grad(ember.linalg.householder_product, rng.standard_normal((3, 2)),
                      rng.standard_normal(2))


def test_vdot_sgn_dist():
    assert ember.vdot(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])).item() == 11.0
    z = ember.sgn(ember.tensor([3 + 4j, 0j]))
    np.testing.assert_allclose(z.numpy(), [0.6 + 0.8j, 0])
    assert ember.dist(ember.tensor([1.0, 1.0]), ember.tensor([4.0, 5.0])).item() == 5.0
    assert ember.dist(ember.tensor([1.0, 1.0]), ember.tensor([4.0, 5.0]), 1).item() == 7.0
    rng = np.random.default_rng(6)
    for p in (2, 3, 1.5):
        check_grad(lambda a, b: ember.dist(a, b, p), rng.standard_normal((2, 3)),
                   rng.standard_normal(3))
    check_second_grad(ember.dist, rng.standard_normal((2, 3)), rng.standard_normal(3))
    zero = ember.zeros(3, requires_grad=True)
    ember.dist(zero, ember.zeros(3)).backward()
    assert zero.grad.abs().sum().item() == 0.0  # the subgradient 0 at a zero distance


# ---- nn.utils.parametrizations ------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("trivialization", [True, False])
def test_orthogonal_gives_orthonormal_weights(shape, orthogonal_map, trivialization):
    layer = nn.Linear(shape[1], shape[0]).double()
    PS.orthogonal(layer, orthogonal_map=orthogonal_map, use_trivialization=trivialization)
    w = layer.weight.detach().numpy()
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    if orthogonal_map == "householder" and not trivialization:
        # columns whose diagonal entry's integer part is 0 are zero (as in PyTorch)
        nonzero = np.abs(gram.diagonal()) > 0.5
        gram = gram[np.ix_(nonzero, nonzero)]
    np.testing.assert_allclose(gram, np.eye(len(gram)), atol=1e-12)
    assert list(layer.state_dict())[:2] == ["bias", "parametrizations.weight.original"]
    assert ("parametrizations.weight.0.base" in layer.state_dict()) == trivialization


def test_orthogonal_trivialization_keeps_the_q_of_qr():
    layer = nn.Linear(3, 3).double()
    w = layer.weight.detach().numpy().copy()
    PS.orthogonal(layer)
    q, r = np.linalg.qr(w)
    q = q * np.sign(np.diag(r))
    np.testing.assert_allclose(layer.weight.detach().numpy(), q, atol=1e-12)
    eye = np.eye(3)[[1, 0, 2]]
    layer.weight = ember.tensor(eye)  # an orthogonal matrix is stored exactly
    np.testing.assert_allclose(layer.weight.detach().numpy(), eye, atol=1e-12)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a "
                                         "tensor of 1 dimensions."):
        PS.orthogonal(nn.Linear(2, 2), "bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", '
                                         '"cayley", "householder". Got: qr'):
        PS.orthogonal(nn.Linear(2, 2), orthogonal_map="qr")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        PS.orthogonal(nn.Linear(2, 2), "w")
    layer = PS.orthogonal(nn.Linear(2, 2), use_trivialization=False)
    with pytest.raises(NotImplementedError, match="It is not possible to assign to the matrix "
                                                  "exponential"):
        layer.weight = ember.eye(2)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_gradients_float64(orthogonal_map):
    layer = PS.orthogonal(nn.Linear(3, 4).double(), orthogonal_map=orthogonal_map)
    layer.bias.requires_grad_(False)
    rng = np.random.default_rng(4)
    original = layer.parametrizations.weight.original.detach().numpy()
    original = original + 0.3 * np.tril(rng.standard_normal(original.shape), -1)
    # householder reads the diagonal's integer part: keep it away from the jumps
    np.fill_diagonal(original, -1.5)

    def run(w, x):
        return functional_call(layer, {"parametrizations.weight.original": w}, (x,))

    check_grad(run, original, rng.standard_normal((2, 3)))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm(dim):
    layer = nn.Linear(3, 4).double()
    w = layer.weight.detach().numpy().copy()
    PS.weight_norm(layer, dim=dim)
    g = layer.parametrizations.weight.original0
    axis = None if dim is None else 1 - dim
    norms = np.sqrt((w ** 2).sum(axis=axis, keepdims=dim is not None))
    np.testing.assert_allclose(g.detach().numpy(), norms)
    np.testing.assert_allclose(layer.weight.detach().numpy(), w, rtol=1e-12)
    with ember.no_grad():
        g.mul_(2)
    np.testing.assert_allclose(layer.weight.detach().numpy(), 2 * w, rtol=1e-12)

    def run(g, v):
        return functional_call(layer, {"parametrizations.weight.original0": g,
                                       "parametrizations.weight.original1": v},
                               (ember.ones(1, 3, dtype=ember.float64),))

    check_grad(run, norms, w)


def test_weight_norm_loads_old_state_dict_keys():
    layer = PS.weight_norm(nn.Linear(3, 2))
    old = {"bias": ember.zeros(2), "weight_g": ember.full((2, 1), 2.0),
           "weight_v": ember.ones(2, 3)}
    layer.load_state_dict(old)
    np.testing.assert_allclose(layer.weight.detach().numpy(),
                               np.full((2, 3), 2 / np.sqrt(3)), rtol=1e-6)


def test_spectral_norm_power_iteration_and_eval_mode():
    ember.manual_seed(0)  # the convergence rate depends on the singular-value gap
    layer = PS.spectral_norm(nn.Linear(5, 4).double())
    original = layer.parametrizations.weight.original.detach().numpy()
    sigma = np.linalg.svd(original, compute_uv=False)[0]
    for _ in range(20):  # each training forward runs one power step
        w = layer.weight.detach().numpy()
    np.testing.assert_allclose(w, original / sigma, rtol=1e-8)
    sn = layer.parametrizations.weight[0]
    u = sn._u.clone()
    layer.eval()
    layer.weight
    assert ember.equal(sn._u, u)  # no power step in eval mode
    layer.train()
    _ = layer.weight
    assert sn._u.shape == (4,) and sn._v.shape == (5,)


def test_spectral_norm_dims_and_errors():
    conv_t = PS.spectral_norm(nn.ConvTranspose2d(3, 5, 2))  # dim 1: the output channels
    assert conv_t.parametrizations.weight[0]._u.shape == (5,)
    assert PS.spectral_norm(nn.Conv2d(3, 5, 2)).parametrizations.weight[0]._u.shape == (5,)
    b = PS.spectral_norm(nn.Linear(3, 4), "bias")  # a vector is just normalized
    np.testing.assert_allclose(b.bias.detach().norm().item(), 1.0, rtol=1e-6)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-2, 1\] but got 2\)"):
        PS.spectral_norm(nn.Linear(2, 2), dim=2)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but got "
                                         "n_power_iterations=0"):
        PS.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


def test_spectral_norm_gradients_eval_mode_float64():
    layer = PS.spectral_norm(nn.Linear(3, 4).double()).eval()
    layer.bias.requires_grad_(False)
    rng = np.random.default_rng(5)

    def run(w, x):
        return functional_call(layer, {"parametrizations.weight.original": w}, (x,))

    check_grad(run, rng.standard_normal((4, 3)), rng.standard_normal((2, 3)))


# ---- the hook-based nn.utils.weight_norm / spectral_norm ----------------------------------
def test_old_weight_norm_recomputes_before_forward():
    layer = nn.Linear(3, 4).double()
    w = layer.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning, match="is deprecated"):
        nn.utils.weight_norm(layer)
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(layer.weight_g.detach().numpy(),
                               np.linalg.norm(w, axis=1, keepdims=True))
    with ember.no_grad():
        layer.weight_g.mul_(3)
    layer(ember.ones(1, 3, dtype=ember.float64))  # the pre-hook recomputes layer.weight
    np.testing.assert_allclose(layer.weight.detach().numpy(), 3 * w, rtol=1e-12)

    def run(g, v):
        return functional_call(layer, {"weight_g": g, "weight_v": v},
                               (ember.ones(2, 3, dtype=ember.float64),))

    check_grad(run, np.linalg.norm(w, axis=1, keepdims=True), w)
    nn.utils.remove_weight_norm(layer)
    assert isinstance(layer.weight, nn.Parameter) and not layer._forward_pre_hooks
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(layer)


def test_old_spectral_norm_power_iteration():
    ember.manual_seed(0)  # the convergence rate depends on the singular-value gap
    layer = nn.utils.spectral_norm(nn.Linear(5, 4).double())
    assert sorted(layer.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    sigma = np.linalg.svd(layer.weight_orig.detach().numpy(), compute_uv=False)[0]
    x = ember.ones(1, 5, dtype=ember.float64)
    for _ in range(100):
        layer(x)
    np.testing.assert_allclose(layer.weight.detach().numpy(),
                               layer.weight_orig.detach().numpy() / sigma, rtol=1e-6)
    u = layer.weight_u.clone()
    layer.eval()(x)
    assert ember.equal(layer.weight_u, u)
    assert layer.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    nn.utils.remove_spectral_norm(layer)
    assert sorted(layer.state_dict()) == ["bias", "weight"]
    assert not layer._state_dict_hooks and not layer._load_state_dict_pre_hooks
    assert nn.utils.spectral_norm(nn.ConvTranspose1d(2, 3, 2)).weight_u.shape == (3,)


def test_matrix_functions_under_vmap(recwarn):
    x = ember.tensor(np.random.default_rng(7).standard_normal((4, 3, 3)))
    np.testing.assert_allclose(ember.vmap(ember.linalg.matrix_exp)(x).numpy(),
                               ember.linalg.matrix_exp(x).numpy())
    a, tau = ember.vmap(ember.geqrf)(x)  # a named tuple comes back as one
    np.testing.assert_allclose(a.numpy(), ember.geqrf(x).a.numpy())
    assert type(ember.vmap(ember.geqrf)(x)).__name__ == "geqrf"
    jac = ember.func.jacrev(ember.linalg.matrix_exp)(x[0])
    assert jac.shape == (3, 3, 3, 3)
    assert not [w for w in recwarn if "batching rule" in str(w.message)]  # rules ran
