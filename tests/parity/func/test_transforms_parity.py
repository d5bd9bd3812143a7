"""ember.func and ember.autograd.functional vs torch.func / torch.autograd.functional: random
compositions of ops in float64 (to 1e-10), the examples of torch.func's documentation and
the error messages."""
import numpy as np
import pytest
import torch
import torch.autograd.functional as TAF
import torch.func as TF

import ember
import ember.autograd.functional as EAF
import ember.func as EF

from tests.parity.compare import error_of

TOL = dict(rtol=1e-10, atol=1e-10)
LIBS = {torch: TF, ember: EF}
FUNCTIONAL = {torch: TAF, ember: EAF}

UNARY = [lambda L, x: L.sin(x), lambda L, x: L.tanh(x), lambda L, x: L.exp(0.3 * x),
         lambda L, x: x * x, lambda L, x: L.sigmoid(x), lambda L, x: L.cos(x) * 2,
         lambda L, x: L.log(1 + x * x)]
BINARY = [lambda L, a, b: a * b, lambda L, a, b: a + 2 * b, lambda L, a, b: a / (2 + L.cos(b)),
          lambda L, a, b: L.maximum(a, b) + a]


def random_function(seed, depth=4):
    """A random composition of unary and binary ops of two vector inputs: vector output."""
    rng = np.random.default_rng(seed)
    steps = [(rng.integers(len(UNARY)), rng.integers(len(BINARY)), rng.integers(2))
             for _ in range(depth)]

    def f(L, x, y):
        a, b = x, y
        for u, bi, swap in steps:
            a, b = (BINARY[bi](L, UNARY[u](L, a), b), a) if swap else (UNARY[u](L, a) + b, a)
        return a
    return f


def arrays(seed, n=4):
    rng = np.random.default_rng(100 + seed)
    return rng.standard_normal(n), rng.standard_normal(n)


def both(fn, *arrs):
    """``fn(lib, *tensors)`` for torch and ember on float64 tensors of the same arrays."""
    return [fn(lib, *[lib.tensor(a, dtype=lib.float64) for a in arrs]) for lib in (torch, ember)]


def assert_same(t_value, e_value):
    if isinstance(t_value, torch.Tensor):
        assert isinstance(e_value, ember.Tensor)
        assert tuple(t_value.shape) == tuple(e_value.shape)
        assert t_value.requires_grad == e_value.requires_grad
        np.testing.assert_allclose(e_value.detach().numpy(), t_value.detach().numpy(), **TOL)
    elif isinstance(t_value, dict):
        assert list(t_value) == list(e_value)
        for k in t_value:
            assert_same(t_value[k], e_value[k])
    elif isinstance(t_value, (tuple, list)):
        assert type(t_value) is type(e_value) and len(t_value) == len(e_value)
        for t, e in zip(t_value, e_value):
            assert_same(t, e)
    else:
        assert t_value == e_value


SEEDS = range(6)


@pytest.mark.parametrize("seed", SEEDS)
def test_grad_of_random_compositions(seed):
    f = random_function(seed)
    assert_same(*both(lambda L, x, y: LIBS[L].grad(lambda x, y: f(L, x, y).sum(),
                                                   argnums=(0, 1))(x, y), *arrays(seed)))
    assert_same(*both(lambda L, x, y: LIBS[L].grad_and_value(
        lambda x: (f(L, x, y) ** 2).sum())(x), *arrays(seed)))


@pytest.mark.parametrize("seed", SEEDS)
def test_jacobians_of_random_compositions(seed):
    f = random_function(seed)
    for name in ("jacrev", "jacfwd"):
        assert_same(*both(lambda L, x, y: getattr(LIBS[L], name)(
            lambda x, y: f(L, x, y), argnums=(0, 1))(x, y), *arrays(seed)))
    assert_same(*both(lambda L, x, y: LIBS[L].hessian(lambda x: f(L, x, y).sum())(x),
                      *arrays(seed)))
    assert_same(*both(lambda L, x, y: LIBS[L].jacrev(LIBS[L].grad(
        lambda x: f(L, x, y).sum()))(x), *arrays(seed)))


@pytest.mark.parametrize("seed", SEEDS)
def test_products_of_random_compositions(seed):
    f = random_function(seed)
    rng = np.random.default_rng(seed)
    u, v = rng.standard_normal(4), rng.standard_normal(4)

    def vjp(L, x, y, u):
        out, fn = LIBS[L].vjp(lambda x, y: (f(L, x, y), x * y), x, y)
        return out, fn((u, u * 2))
    assert_same(*both(vjp, *arrays(seed), u))
    assert_same(*both(lambda L, x, y, v: LIBS[L].jvp(lambda x: f(L, x, y), (x,), (v,)),
                      *arrays(seed), v))
    assert_same(*both(lambda L, x, y: LIBS[L].grad(LIBS[L].grad(
        lambda s: f(L, x * s, y).sum()))(L.tensor(0.7, dtype=L.float64)), *arrays(seed)))


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_autograd_functional_of_random_compositions(seed):
    f = random_function(seed)
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(4)
    x, y = arrays(seed)
    assert_same(*both(lambda L, x, y, v: FUNCTIONAL[L].vjp(lambda x, y: f(L, x, y), (x, y), v),
                      x, y, v))
    assert_same(*both(lambda L, x, y, v: FUNCTIONAL[L].jvp(lambda x, y: f(L, x, y), (x, y),
                                                           (v, v)), x, y, v))
    assert_same(*both(lambda L, x, y: FUNCTIONAL[L].jacobian(lambda x, y: (f(L, x, y), x.sum()),
                                                             (x, y)), x, y))
    scalar = lambda L: (lambda x, y: f(L, x, y).sum())  # noqa: E731
    assert_same(*both(lambda L, x, y: FUNCTIONAL[L].hessian(scalar(L), (x, y)), x, y))
    for name in ("hvp", "vhp"):
        assert_same(*both(lambda L, x, y, v: getattr(FUNCTIONAL[L], name)(
            scalar(L), (x, y), (v, v)), x, y, v))


def test_strict_accepts_a_constant_hessian():
    assert_same(*both(lambda L, x: FUNCTIONAL[L].hvp(lambda x: (x * x).sum(), x, x, strict=True),
                      np.arange(3.0)))


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_of_pytrees_with_aux(name):
    def run(L):
        F = LIBS[L]
        a = {"u": L.tensor([0.3, -0.2], dtype=L.float64), "v": L.tensor(1.5, dtype=L.float64)}
        b = [L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64)]

        def f(a, b, scale):
            prod = (b[0] @ a["u"]) * a["v"]
            return {"prod": prod, "norm": (prod ** 2).sum() * scale}, {"prod": prod * 2}
        return getattr(F, name)(f, argnums=(0, 1), has_aux=True)(a, b, 3.0)
    assert_same(*[run(L) for L in (torch, ember)])


def test_hessian_of_several_arguments():
    def run(L):
        x = L.tensor([0.3, -0.2], dtype=L.float64)
        y = L.tensor(1.5, dtype=L.float64)
        return LIBS[L].hessian(lambda x, y: (L.sin(x) * y ** 3).sum(), argnums=(0, 1))(x, y)
    assert_same(*[run(L) for L in (torch, ember)])


def test_vjp_and_jvp_of_pytrees():
    def run(L):
        F = LIBS[L]
        x = {"a": L.tensor([0.3, -0.2], dtype=L.float64), "b": L.tensor(2.0, dtype=L.float64)}
        f = lambda x: [x["a"] * x["b"], {"s": x["a"].sum()}]  # noqa: E731
        out, vjp_fn = F.vjp(f, x)
        cot = [L.tensor([1.0, 2.0], dtype=L.float64), {"s": L.tensor(3.0, dtype=L.float64)}]
        tangent = {"a": L.tensor([1.0, 0.5], dtype=L.float64), "b": L.tensor(-1.0,
                                                                                dtype=L.float64)}
        return out, vjp_fn(cot), F.jvp(f, (x,), (tangent,))
    assert_same(*[run(L) for L in (torch, ember)])


def test_create_graph_keeps_the_graph():
    def run(L):
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
        jac = FUNCTIONAL[L].jacobian(lambda x: L.sin(x) * x, x, create_graph=True)
        hv = FUNCTIONAL[L].hvp(lambda x: (x ** 3).sum(), x, x, create_graph=True)[1]
        (jac.sum() + hv.sum()).backward()
        return jac, x.grad
    assert_same(*[run(L) for L in (torch, ember)])


def test_jvp_strict_accepts_a_zero_derivative():
    assert_same(*both(lambda L, x: LIBS[L].jvp(lambda x: x * 0 + 1, (x,), (x,), strict=True),
                      np.ones(3)))


def test_input_that_requires_grad_stays_attached():
    def run(L):
        w = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        g, value = LIBS[L].grad_and_value(lambda w: (w ** 3).sum())(w)
        jac = LIBS[L].jacrev(lambda w: w.sin())(w)
        out, product = LIBS[L].jvp(lambda w: w ** 2, (w,), (L.ones(2, dtype=L.float64),))
        (g.sum() + jac.sum() + product.sum()).backward()
        return g, value, jac, out, product, w.grad
    assert_same(*[run(L) for L in (torch, ember)])


def test_captured_parameter_composes_with_autograd():
    def run(L):
        w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        x = L.tensor([0.1, 0.2, 0.3], dtype=L.float64)
        g = LIBS[L].grad(lambda x: (L.sin(x * w)).sum())(x)
        g.sum().backward()
        return g, w.grad, x.requires_grad, x.grad
    assert_same(*[run(L) for L in (torch, ember)])


# ---------------------------------------------------------------- the torch.func doc examples

def test_doc_examples_grad_vjp_jacrev_hessian():
    def run(L):
        F = LIBS[L]
        x = L.tensor(np.linspace(-1, 1, 5), dtype=L.float64)
        first = F.grad(L.sin)(x[0])
        second = F.grad(F.grad(L.sin))(x[0])
        _, vjp_fn = F.vjp(lambda x: (x.sin(), x.cos()), x)
        vjps = vjp_fn((L.ones(5, dtype=L.float64), L.ones(5, dtype=L.float64)))
        jac = F.jacrev(L.sin)(x)
        hess = F.hessian(L.sin)(x)
        _, jvp_out = F.jvp(L.sin, (x,), (L.ones(5, dtype=L.float64),))
        jac_x, jac_y = F.jacrev(lambda x, y: x.sin() + y, argnums=(0, 1))(x, x)
        negative = F.grad(lambda x, y: (x * y).sum(), argnums=(-1, 0))(x, x * 3)
        return first, second, vjps, jac, hess, jvp_out, jac_x, jac_y, negative
    assert_same(*[run(L) for L in (torch, ember)])


def _linear_params(rng):
    return {"weight": rng.standard_normal((3, 3)), "bias": rng.standard_normal(3)}


def test_doc_example_functional_call_grad():
    rng = np.random.default_rng(0)
    params_np, x_np, t_np = _linear_params(rng), rng.standard_normal((4, 3)), \
        rng.standard_normal((4, 3))

    def run(L):
        model = L.nn.Linear(3, 3).double()
        params = {k: L.tensor(v) for k, v in params_np.items()}
        x, t = L.tensor(x_np), L.tensor(t_np)

        def compute_loss(params, x, t):
            y = LIBS[L].functional_call(model, params, (x,))
            return L.nn.functional.mse_loss(y, t)
        return LIBS[L].grad(compute_loss)(params, x, t)
    assert_same(*[run(L) for L in (torch, ember)])


def test_doc_example_model_ensembling_with_a_loop():
    """stack_module_state + functional_call; torch's example vmaps over the models, here a
    loop over them does the same."""
    rng = np.random.default_rng(1)
    states = [_linear_params(rng) for _ in range(3)]
    x_np = rng.standard_normal((2, 3))

    def run(L):
        models = []
        for state in states:
            m = L.nn.Linear(3, 3).double()
            with L.no_grad():
                m.weight.copy_(L.tensor(state["weight"]))
                m.bias.copy_(L.tensor(state["bias"]))
            models.append(m)
        params, buffers = LIBS[L].stack_module_state(models)
        base = models[0]
        outs = [LIBS[L].functional_call(base, ({k: v[i] for k, v in params.items()}, buffers),
                                        (L.tensor(x_np),)) for i in range(len(models))]
        return params, buffers, L.stack(outs).detach()
    assert_same(*[run(L) for L in (torch, ember)])


def _tied(L):
    m = L.nn.Sequential(L.nn.Linear(2, 2, bias=False), L.nn.Linear(2, 2, bias=False))
    m[1].weight = m[0].weight
    return m


TIED_CALLS = {
    "both given": lambda L, m, x: LIBS[L].functional_call(
        m, {"0.weight": L.eye(2), "1.weight": L.eye(2) * 2}, x),
    "one given strict": lambda L, m, x: LIBS[L].functional_call(m, {"0.weight": L.eye(2)}, x,
                                                                strict=True),
    "untied": lambda L, m, x: LIBS[L].functional_call(
        m, {"0.weight": L.eye(2), "1.weight": L.eye(2) * 2}, x, tie_weights=False),
    "second given": lambda L, m, x: LIBS[L].functional_call(m, {"1.weight": L.eye(2) * 2}, x),
    "untied strict": lambda L, m, x: LIBS[L].functional_call(m, {"0.weight": L.eye(2)}, x,
                                                             strict=True, tie_weights=False),
}


@pytest.mark.parametrize("case", TIED_CALLS)
def test_functional_call_tied_weights(case):
    def run(L):
        m = _tied(L)
        with L.no_grad():
            m[0].weight.copy_(L.tensor([[1.0, 2.0], [3.0, 4.0]]))
        x = L.tensor([1.0, -1.0])
        error = _normalized(error_of(lambda: TIED_CALLS[case](L, m, x)))
        return error or TIED_CALLS[case](L, m, x).detach(), m[1].weight is m[0].weight
    t_result, e_result = run(torch), run(ember)
    if isinstance(t_result[0], tuple):
        assert e_result == t_result
    else:
        assert_same(t_result, e_result)


# ---------------------------------------------------------------- errors

ERROR_CASES = {
    "grad non-scalar": lambda L, x: LIBS[L].grad(lambda x: x)(x),
    "grad argnum": lambda L, x: LIBS[L].grad(lambda x: x.sum(), argnums=2)(x),
    "grad empty argnums": lambda L, x: LIBS[L].grad(lambda x: x.sum(), argnums=())(x),
    "grad repeated argnums": lambda L, x: LIBS[L].grad(lambda x: x.sum(), argnums=(0, 0))(x),
    "grad float argnums": lambda L, x: LIBS[L].grad(lambda x: x.sum(), argnums=1.0)(x),
    "grad str output": lambda L, x: LIBS[L].grad(lambda x: "a")(x),
    "grad tuple output": lambda L, x: LIBS[L].grad(lambda x: (x.sum(), 1))(x),
    "grad aux missing": lambda L, x: LIBS[L].grad(lambda x: x.sum(), has_aux=True)(x),
    "grad aux int": lambda L, x: LIBS[L].grad(lambda x: (x.sum(), 1), has_aux=True)(x),
    "grad float input": lambda L, x: LIBS[L].grad(lambda x: x)(1.0),
    "vjp str output": lambda L, x: LIBS[L].vjp(lambda x: "a", x),
    "vjp aux missing": lambda L, x: LIBS[L].vjp(lambda x: x, x, has_aux=True),
    "vjp structure": lambda L, x: LIBS[L].vjp(lambda x: (x, x), x)[1](L.ones(3)),
    "vjp tuple cotangent": lambda L, x: LIBS[L].vjp(lambda x: x, x)[1]((L.ones(3),)),
    "jacrev str output": lambda L, x: LIBS[L].jacrev(lambda x: "a")(x),
    "jacrev argnum": lambda L, x: LIBS[L].jacrev(lambda x: x, argnums=3)(x),
    "jacrev chunk": lambda L, x: LIBS[L].jacrev(lambda x: x, chunk_size=0)(x),
    "jvp size": lambda L, x: LIBS[L].jvp(lambda x: x, (x,), (L.ones(2),)),
    "jvp not tuple": lambda L, x: LIBS[L].jvp(lambda x: x, x, x),
    "jvp structure": lambda L, x: LIBS[L].jvp(lambda x: x, (x,), (x, x)),
    "jvp nested structure": lambda L, x: LIBS[L].jvp(lambda x, y: x, (x, {"a": [x, x]}),
                                                     (x, {"a": (x, x)})),
    "grad negative argnums": lambda L, x: LIBS[L].grad(lambda x: x.sum(), argnums=-2)(x),
    "jvp str output": lambda L, x: LIBS[L].jvp(lambda x: "a", (x,), (x,)),
    "jvp int tangent": lambda L, x: LIBS[L].jvp(lambda x: x, (x,), (x.int(),)),
    "jvp strict": lambda L, x: LIBS[L].jvp(lambda x: (x, L.ones(3)), (x,), (x,), strict=True),
    "jvp empty": lambda L, x: LIBS[L].jvp(lambda x: x, (), ()),
    "functional_call strict": lambda L, x: LIBS[L].functional_call(
        L.nn.Linear(3, 2), {"weight": L.zeros(2, 3), "foo": L.zeros(1)}, (x,), strict=True),
    "functional_call repeated": lambda L, x: LIBS[L].functional_call(
        L.nn.Linear(3, 2), ({"weight": L.zeros(2, 3)}, {"weight": L.zeros(2, 3)}), (x,)),
    "stack none": lambda L, x: LIBS[L].stack_module_state([]),
    "stack modes": lambda L, x: LIBS[L].stack_module_state([L.nn.Linear(2, 2),
                                                           L.nn.Linear(2, 2).eval()]),
    "af vjp output": lambda L, x: FUNCTIONAL[L].vjp(lambda x: "a", x),
    "af vjp v None": lambda L, x: FUNCTIONAL[L].vjp(lambda x: x, x),
    "af vjp v length": lambda L, x: FUNCTIONAL[L].vjp(lambda x: x, x, (L.ones(3), L.ones(3))),
    "af vjp strict": lambda L, x: FUNCTIONAL[L].vjp(lambda x, y: x, (x, x), L.ones(3),
                                                    strict=True),
    "af jvp strict": lambda L, x: FUNCTIONAL[L].jvp(lambda x, y: x, (x, x), (x, x), strict=True),
    "af jvp v None": lambda L, x: FUNCTIONAL[L].jvp(lambda x: x, x),
    "af jacobian strict": lambda L, x: FUNCTIONAL[L].jacobian(lambda x, y: x, (x, x),
                                                              strict=True),
    "af jacobian detached": lambda L, x: FUNCTIONAL[L].jacobian(lambda x: x.detach(), x,
                                                                strict=True),
    "af jacobian strategy": lambda L, x: FUNCTIONAL[L].jacobian(lambda x: x, x, strategy="bad"),
    "af jacobian forward": lambda L, x: FUNCTIONAL[L].jacobian(lambda x: x, x,
                                                               strategy="forward-mode"),
    "af jacobian strict vectorize": lambda L, x: FUNCTIONAL[L].jacobian(
        lambda x: x, x, vectorize=True, strict=True),
    "af hessian vector": lambda L, x: FUNCTIONAL[L].hessian(lambda x: x, x),
    "af hessian strict": lambda L, x: FUNCTIONAL[L].hessian(lambda x, y: (x ** 2).sum(), (x, x),
                                                            strict=True),
    "af hvp vector": lambda L, x: FUNCTIONAL[L].hvp(lambda x: x, x, x),
    "af hvp strict": lambda L, x: FUNCTIONAL[L].hvp(lambda x: x.sum(), x, x, strict=True),
    "af hessian tuple output": lambda L, x: FUNCTIONAL[L].hessian(lambda x: (x.sum(), x.sum()),
                                                                  x),
    "af hessian strategy": lambda L, x: FUNCTIONAL[L].hessian(
        lambda x: x.sum(), x, outer_jacobian_strategy="bad"),
    "af hessian linear strict": lambda L, x: FUNCTIONAL[L].hessian(lambda x: x.sum() * 2, x,
                                                                   strict=True),
    "af hvp tuple output": lambda L, x: FUNCTIONAL[L].hvp(lambda x: (x.sum(),), x, x),
    "af vhp linear strict": lambda L, x: FUNCTIONAL[L].vhp(lambda x: x.sum(), x, x, strict=True),
    "af vhp v length": lambda L, x: FUNCTIONAL[L].vhp(lambda x: x.sum(), (x, x), (x,)),
    "af jvp constant strict": lambda L, x: FUNCTIONAL[L].jvp(lambda x: x.detach(), x, x,
                                                             strict=True),
    "af jvp linear strict create_graph": lambda L, x: FUNCTIONAL[L].jvp(
        lambda x: x * 2, x, x, strict=True, create_graph=True),
    "af vjp linear strict create_graph": lambda L, x: FUNCTIONAL[L].vjp(
        lambda x: x * 2, x, x, strict=True, create_graph=True),
    "af jacobian linear strict create_graph": lambda L, x: FUNCTIONAL[L].jacobian(
        lambda x: x * 2, x, strict=True, create_graph=True),
    "af inputs type": lambda L, x: FUNCTIONAL[L].jacobian(lambda x: x, (x, 1)),
    "af inputs list": lambda L, x: FUNCTIONAL[L].vjp(lambda x: x, [x], x),
    "af vhp v None": lambda L, x: FUNCTIONAL[L].vhp(lambda x: (x ** 2).sum(), x),
}


def _normalized(error):
    return None if error is None else (error[0], error[1].replace("torch.", "ember."))


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors(case):
    def run(L):
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64)
        return _normalized(error_of(lambda: ERROR_CASES[case](L, x)))
    t_error, e_error = run(torch), run(ember)
    assert t_error is not None
    assert e_error == t_error
