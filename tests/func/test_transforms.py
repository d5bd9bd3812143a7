"""ember.func and ember.autograd.functional against float64 finite differences, plus the
semantics of the transforms: composition, no leaked requires_grad, pytrees, aux, errors."""
import numpy as np
import pytest

import ember
from ember import func
from ember.autograd import functional as AF

RNG = np.random.default_rng(0)


def t64(a, requires_grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def numeric_jacobian(f, x, eps=1e-6):
    """d f(x) / d x by central differences: shape out.shape + x.shape."""
    x = np.asarray(x, dtype=np.float64)
    cols = []
    for k in range(x.size):
        step = np.zeros(x.size)
        step[k] = eps
        plus = f(t64(x + step.reshape(x.shape))).detach().numpy()
        minus = f(t64(x - step.reshape(x.shape))).detach().numpy()
        cols.append((plus - minus) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(cols[0].shape + x.shape)


def scalar_fn(x):
    return (ember.sin(x) * ember.exp(0.3 * x)).sum() + (x ** 2).prod()


def vector_fn(x):
    w = t64(np.arange(12).reshape(4, 3) / 7.0)
    return ember.tanh(w @ x) * x.sum()


X = RNG.standard_normal(3)


def close(a, b, tol=1e-6):
    a = a.detach().numpy() if isinstance(a, ember.Tensor) else a
    b = b.detach().numpy() if isinstance(b, ember.Tensor) else b
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_grad_matches_finite_differences():
    close(func.grad(scalar_fn)(t64(X)), numeric_jacobian(scalar_fn, X))


def test_jacrev_and_jacfwd_match_finite_differences():
    expected = numeric_jacobian(vector_fn, X)
    close(func.jacrev(vector_fn)(t64(X)), expected)
    close(func.jacfwd(vector_fn)(t64(X)), expected)


def test_hessian_is_the_jacobian_of_the_gradient():
    expected = numeric_jacobian(lambda x: func.grad(scalar_fn)(x), X)
    close(func.hessian(scalar_fn)(t64(X)), expected, tol=1e-5)


def test_jvp_is_the_directional_derivative():
    tangent = RNG.standard_normal(3)
    out, product = func.jvp(vector_fn, (t64(X),), (t64(tangent),))
    close(out, vector_fn(t64(X)))
    close(product, numeric_jacobian(vector_fn, X) @ tangent)


def test_jvp_runs_on_forward_mode_ad():
    class Double(ember.autograd.Function):  # backward only: forward mode cannot use it
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    assert func.grad(lambda x: Double.apply(x).sum())(t64([1.0])).item() == 2.0
    with pytest.raises(NotImplementedError, match="must implement the jvp function"):
        func.jvp(Double.apply, (t64([1.0]),), (t64([1.0]),))


def test_nested_forward_transforms_match_finite_differences():
    # the inner jvp / jacfwd runs below the outer one's dual level (double-vjp products)
    hess = numeric_jacobian(lambda x: func.grad(scalar_fn)(x), X)
    close(func.jacfwd(func.jacfwd(scalar_fn))(t64(X)), hess, tol=1e-5)
    u, v = RNG.standard_normal(3), RNG.standard_normal(3)
    inner = lambda x: func.jvp(scalar_fn, (x,), (t64(u),))[1]  # noqa: E731
    _, second = func.jvp(inner, (t64(X),), (t64(v),))
    close(second, u @ hess @ v, tol=1e-5)
    close(func.grad(inner)(t64(X)), hess @ u, tol=1e-5)
    close(func.jvp(func.grad(scalar_fn), (t64(X),), (t64(v),))[1], hess @ v, tol=1e-5)


def test_hessian_through_an_op_whose_arguments_share_an_input():
    # maximum's tangent comes from its backward; its arguments x and 0.3 x are not
    # independent, which forward-over-reverse must not count twice
    def f(x):
        return (ember.maximum(x, 0.3 * x) * x.exp()).sum()
    x = np.array([0.5, -0.3, 1.5])
    close(func.hessian(f)(t64(x)), numeric_jacobian(lambda x: func.grad(f)(x), x), tol=1e-5)


def test_vjp_of_a_tuple_output():
    cots = RNG.standard_normal(4), RNG.standard_normal(3)
    out, vjp_fn = func.vjp(lambda x: (vector_fn(x), ember.cos(x)), t64(X))
    grads = vjp_fn((t64(cots[0]), t64(cots[1])))
    assert isinstance(grads, tuple) and len(grads) == 1
    expected = cots[0] @ numeric_jacobian(vector_fn, X) - np.sin(X) * cots[1]
    close(grads[0], expected)
    close(vjp_fn((t64(cots[0]), t64(cots[1])))[0], expected)  # the graph is kept


def test_higher_derivatives_compose():
    x = t64(1.5)
    close(func.grad(func.grad(func.grad(lambda x: x ** 4)))(x), 24 * 1.5)
    close(func.jacrev(func.grad(scalar_fn))(t64(X)), func.hessian(scalar_fn)(t64(X)))
    close(func.jacfwd(func.jacrev(scalar_fn))(t64(X)), func.hessian(scalar_fn)(t64(X)))


def test_nested_closures_differentiate_the_right_variable():
    # d/dx [x * d/dy (x * y)] = d/dx x^2 = 2x
    def outer(x):
        return (x * func.grad(lambda y: (x * y).sum())(t64([1.0, 1.0]))).sum()
    close(func.grad(outer)(t64([2.0, 3.0])), [4.0, 6.0])


def test_no_requires_grad_leaks_and_no_grad_is_filled():
    x = t64(X)
    model = ember.nn.Linear(3, 2).double()
    g = func.grad(lambda p, x: func.functional_call(model, p, (x,)).sum())(
        {k: v.detach() for k, v in model.named_parameters()}, x)
    assert not x.requires_grad and x.grad is None
    assert all(p.grad is None for p in model.parameters())
    assert not g["weight"].requires_grad
    for result in (func.grad(scalar_fn)(x), func.jacrev(vector_fn)(x),
                   func.jvp(vector_fn, (x,), (x,))[1], func.vjp(vector_fn, x)[0]):
        assert not result.requires_grad


def test_captured_parameters_stay_differentiable():
    w = t64([1.0, 2.0, 3.0], requires_grad=True)
    g = func.grad(lambda x: (x * x * w).sum())(t64(X))   # 2 x w
    assert g.requires_grad
    g.sum().backward()
    close(w.grad, 2 * X)


def test_under_no_grad():
    with ember.no_grad():
        g = func.grad(scalar_fn)(t64(X))
    assert not g.requires_grad
    close(g, numeric_jacobian(scalar_fn, X))


def test_argnums_and_pytrees():
    def f(a, b, c):
        return (a["u"] * b[0] * b[1]).sum() + c.sum()
    a, b, c = {"u": t64([1.0, 2.0])}, (t64([3.0, 4.0]), t64([5.0, 6.0])), t64([0.0])
    ga, gb = func.grad(f, argnums=(0, 1))(a, b, c)
    close(ga["u"], [15.0, 24.0])
    close(gb[0], [5.0, 12.0])
    close(gb[1], [3.0, 8.0])
    close(func.grad(f, argnums=-1)(a, b, c), [1.0])
    jac = func.jacrev(lambda x, y: {"p": x * y, "s": (x + y).sum()}, argnums=(0, 1))(
        t64([1.0, 2.0]), t64([3.0, 4.0]))
    close(jac["p"][0], np.diag([3.0, 4.0]))
    close(jac["s"][1], [1.0, 1.0])


def test_has_aux():
    g, aux = func.grad(lambda x: ((x ** 2).sum(), {"x": x * 2}), has_aux=True)(t64([1.0]))
    close(g, [2.0])
    close(aux["x"], [2.0])
    assert not aux["x"].requires_grad
    g, (value, aux) = func.grad_and_value(lambda x: ((x ** 2).sum(), [x]), has_aux=True)(
        t64([3.0]))
    close(value, 9.0)
    close(aux[0], [3.0])
    with pytest.raises(RuntimeError, match="Expected tensors, got unsupported type"):
        func.grad(lambda x: ((x ** 2).sum(), 7), has_aux=True)(t64([3.0]))
    out, vjp_fn, aux = func.vjp(lambda x: (x * 2, x), t64([1.0]), has_aux=True)
    close(vjp_fn(t64([1.0]))[0], [2.0])
    jac, aux = func.jacrev(lambda x: (x * 3, x), has_aux=True)(t64([1.0]))
    close(jac, [[3.0]])
    _, product, aux = func.jvp(lambda x: (x * 3, x), (t64([1.0]),), (t64([1.0]),),
                               has_aux=True)
    close(product, [3.0])


def test_unused_input_gives_zeros():
    close(func.grad(lambda x, y: x.sum(), argnums=1)(t64([1.0]), t64([2.0, 3.0])), [0.0, 0.0])
    close(func.jacrev(lambda x: t64([1.0, 2.0]))(t64([1.0])), [[0.0], [0.0]])


@pytest.mark.parametrize("call, message", [
    (lambda: func.grad(lambda x: x)(t64([1.0, 2.0])), "got tensor with 1 dims"),
    (lambda: func.grad(lambda x: x.sum(), argnums=2)(t64([1.0])),
     "Got argnum=2, but only 1 positional inputs"),
    (lambda: func.grad(lambda x: "a")(t64([1.0])), "to return a Tensor, got <class 'str'>"),
    (lambda: func.grad(lambda x: x.sum(), argnums=())(t64([1.0])), "argnums must be non-empty"),
    (lambda: func.grad(lambda x: x.sum(), has_aux=True)(t64([1.0])),
     "should be a tuple: (output, aux)"),
    (lambda: func.vjp(lambda x: x, t64([1.0]))[1]((t64([1.0]),)),
     "Expected pytree structure of cotangents"),
    (lambda: func.jvp(lambda x: x, (t64([1.0]),), (t64([1.0, 2.0]),)),
     "different size than that of the original Tensor"),
])
def test_errors(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert message in str(info.value)


def test_non_tensor_input_is_a_value_error():
    with pytest.raises(ValueError, match="must be Tensor"):
        func.grad(lambda x: x)(1.0)


# ---------------------------------------------------------------- functional_call

def test_functional_call_swaps_and_restores():
    model = ember.nn.Linear(2, 1)
    weight = model.weight
    out = func.functional_call(model, {"weight": ember.ones(1, 2), "bias": ember.zeros(1)},
                               (ember.tensor([1.0, 2.0]),))
    close(out, [3.0])
    assert model.weight is weight

    def boom(x):
        raise ValueError("inside")
    model.forward = boom
    with pytest.raises(ValueError):
        func.functional_call(model, {"weight": ember.zeros(1, 2)}, (ember.ones(2),))
    assert model.weight is weight


def test_functional_call_kwargs_strict_and_tied():
    model = ember.nn.Linear(2, 1)
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        func.functional_call(model, {"weight": ember.ones(1, 2)}, (ember.ones(2),), strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        func.functional_call(model, ({"bias": ember.ones(1)}, {"bias": ember.ones(1)}),
                             (ember.ones(2),))
    tied = ember.nn.Sequential(ember.nn.Linear(2, 2, bias=False), ember.nn.Linear(2, 2, bias=False))
    tied[1].weight = tied[0].weight
    x = ember.tensor([1.0, 2.0])
    out = func.functional_call(tied, {"0.weight": 2 * ember.eye(2)}, x)
    close(out, [4.0, 8.0])
    out = func.functional_call(tied, {"0.weight": 2 * ember.eye(2)}, x, tie_weights=False)
    close(out, (tied[0].weight.detach() @ (2 * x)))


def test_stack_module_state_and_an_ensemble_loop():
    models = [ember.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = func.stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and buffers == {}
    assert params["weight"].is_leaf and params["weight"].requires_grad
    x = ember.randn(5, 3)
    for i, m in enumerate(models):
        one = {k: v[i] for k, v in params.items()}
        close(func.functional_call(m, one, (x,)), m(x))
    with pytest.raises(RuntimeError, match="Expected at least one model"):
        func.stack_module_state([])


# ---------------------------------------------------------------- autograd.functional

def test_autograd_functional_products():
    v = RNG.standard_normal(3)
    jac = numeric_jacobian(vector_fn, X)
    close(AF.jacobian(vector_fn, t64(X)), jac)
    close(AF.jvp(vector_fn, t64(X), t64(v))[1], jac @ v)
    w = RNG.standard_normal(4)
    close(AF.vjp(vector_fn, t64(X), t64(w))[1], w @ jac)
    hess = numeric_jacobian(lambda x: func.grad(scalar_fn)(x), X)
    close(AF.hessian(scalar_fn, t64(X)), hess, tol=1e-5)
    close(AF.hvp(scalar_fn, t64(X), t64(v))[1], hess @ v, tol=1e-5)
    close(AF.vhp(scalar_fn, t64(X), t64(v))[1], v @ hess, tol=1e-5)


def test_autograd_functional_create_graph():
    x = t64(X, requires_grad=True)
    jac = AF.jacobian(lambda x: x ** 3, x, create_graph=True)
    assert jac.requires_grad
    jac.sum().backward()
    close(x.grad, 6 * X)
    assert not AF.jacobian(lambda x: x ** 3, x).requires_grad


def test_autograd_functional_strict():
    x = t64(X)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.jacobian(lambda a, b: a * 2, (x, x), strict=True)
    close(AF.jacobian(lambda a, b: a * 2, (x, x))[1], np.zeros((3, 3)))
    with pytest.raises(RuntimeError, match="not supported together"):
        AF.jacobian(vector_fn, x, vectorize=True, strict=True)


def test_autograd_functional_vectorized_matches_loop():
    x = t64(X)
    expected = AF.jacobian(vector_fn, x)
    for strategy in ("reverse-mode", "forward-mode"):
        close(AF.jacobian(vector_fn, x, vectorize=True, strategy=strategy), expected)
        close(AF.hessian(scalar_fn, x, vectorize=True, outer_jacobian_strategy=strategy),
              AF.hessian(scalar_fn, x))
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.hessian(scalar_fn, x, outer_jacobian_strategy="forward-mode")


@pytest.mark.parametrize("chunk_size", [None, 1, 3, 5, 12, 13])
def test_jacrev_chunks_match_finite_differences(chunk_size):
    # two outputs (12 entries in all) of two inputs: chunks straddle the outputs
    def f(x, y):
        return {"m": ember.outer(ember.tanh(x), y), "s": (x * x.sum()).sin()}
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    for pre in (False, True):
        jac = func.jacrev(f, argnums=(0, 1), chunk_size=chunk_size,
                          _preallocate_and_copy=pre)(t64(x), t64(y))
        close(jac["m"][0], numeric_jacobian(lambda a: f(a, t64(y))["m"], x))
        close(jac["m"][1], numeric_jacobian(lambda b: f(t64(x), b)["m"], y))
        close(jac["s"][0], numeric_jacobian(lambda a: f(a, t64(y))["s"], x))
        close(jac["s"][1], np.zeros((3, 3)))
    with pytest.raises(ValueError, match="greater than 0"):
        func.jacrev(f, chunk_size=-1)


def test_jvp_inside_vmap_equals_a_loop():
    # under vmap, jvp runs forward AD on the physical batch (a BatchedTensor's tangent is
    # its physical tensor's); the products must be the per-sample ones
    g = ember.Generator().manual_seed(3)
    x = ember.randn(3, 4, dtype=ember.float64, generator=g)
    w = ember.randn(4, dtype=ember.float64, generator=g)
    t = ember.randn(4, dtype=ember.float64, generator=g)

    def f(xi, W):
        return (xi.sum() * W).sin()
    batched = ember.vmap(lambda xi: ember.func.jvp(lambda W: f(xi, W), (w,), (t,))[1])(x)
    looped = ember.stack([ember.func.jvp(lambda W: f(x[i], W), (w,), (t,))[1]
                          for i in range(3)])
    np.testing.assert_allclose(batched.numpy(), looped.numpy(), rtol=1e-12, atol=1e-12)
    expected = (x.sum(1, keepdim=True) * w).cos() * x.sum(1, keepdim=True) * t
    np.testing.assert_allclose(batched.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
