"""ember.func's forward-mode transforms (jvp, jacfwd, hessian = jacfwd(jacrev)) vs torch.func
in float64 (to 1e-10): random compositions of ops with hand-written jvp rules and of ops
whose tangent comes from their backward, models through functional_call, custom Functions
with and without jvp, and nesting / composition with the reverse-mode transforms."""
import numpy as np
import pytest
import torch
import torch.func as TF

import ember
import ember.func as EF

from tests.parity.compare import error_of
from tests.parity.func.test_transforms_parity import assert_same, both

LIBS = {torch: TF, ember: EF}

# R^4 -> R^4 steps; the first group has jvp rules, the second gets its tangent from backward
RULE_OPS = [
    lambda L, x: L.sin(x), lambda L, x: L.tanh(x) * x, lambda L, x: L.exp(0.3 * x),
    lambda L, x: L.softmax(x, 0) * 3, lambda L, x: L.nn.functional.log_softmax(x, 0),
    lambda L, x: L.nn.functional.gelu(x), lambda L, x: x.cumsum(0) * 0.5,
    lambda L, x: (L.outer(x, x) @ x) * 0.1, lambda L, x: L.sqrt(x * x + 1),
]
FALLBACK_OPS = [
    lambda L, x: L.maximum(x, 0.3 * x.flip(0)), lambda L, x: x.clamp(-0.5, 0.7) + x,
    lambda L, x: x * x.prod(), lambda L, x: x - L.logsumexp(x, 0),
    lambda L, x: x / x.norm(), lambda L, x: x * x.var(), lambda L, x: x - x.amax(),
]
OPS = RULE_OPS + FALLBACK_OPS


def random_function(seed, depth=4):
    """A random composition of two vector inputs, each step from OPS, mixed with ``y``."""
    rng = np.random.default_rng(seed)
    steps = [(rng.integers(len(RULE_OPS)), len(RULE_OPS) + rng.integers(len(FALLBACK_OPS)),
              rng.integers(2)) for _ in range(depth)]

    def f(L, x, y):
        a = x
        for rule, fallback, order in steps:
            first, second = (rule, fallback) if order else (fallback, rule)
            a = OPS[second](L, OPS[first](L, a) * (1 + 0.5 * L.tanh(y)))
        return a
    return f


def arrays(seed, n=4):
    rng = np.random.default_rng(200 + seed)
    return rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)


SEEDS = range(5)


@pytest.mark.parametrize("seed", SEEDS)
def test_jvp_jacfwd_hessian_of_random_compositions(seed):
    f = random_function(seed)
    x, y, v = arrays(seed)
    assert_same(*both(lambda L, x, y, v: LIBS[L].jvp(lambda x, y: f(L, x, y), (x, y), (v, v)),
                      x, y, v))
    assert_same(*both(lambda L, x, y: LIBS[L].jacfwd(lambda x, y: f(L, x, y),
                                                     argnums=(0, 1))(x, y), x, y))
    assert_same(*both(lambda L, x, y: LIBS[L].hessian(lambda x, y: f(L, x, y).sum(),
                                                      argnums=(0, 1))(x, y), x, y))


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_nesting_and_composition_of_random_compositions(seed):
    f = random_function(seed, depth=2)
    x, y, v = arrays(seed)

    def jvp_of_jvp(L, x, y, v):
        F = LIBS[L]
        return F.jvp(lambda x: F.jvp(lambda x: f(L, x, y), (x,), (v,))[1], (x,), (v * 2,))

    def grad_of_jvp(L, x, y, v):
        F = LIBS[L]
        return F.grad(lambda x: F.jvp(lambda x: f(L, x, y), (x,), (v,))[1].sum())(x)

    def jvp_of_grad(L, x, y, v):
        F = LIBS[L]
        return F.jvp(F.grad(lambda x: f(L, x, y).sum()), (x,), (v,))

    def jacfwd_of_jacfwd(L, x, y, v):
        return LIBS[L].jacfwd(LIBS[L].jacfwd(lambda x: f(L, x, y)))(x)

    def jacrev_of_jacfwd(L, x, y, v):
        return LIBS[L].jacrev(LIBS[L].jacfwd(lambda x: f(L, x, y).sum()))(x)

    for case in (jvp_of_jvp, grad_of_jvp, jvp_of_grad, jacfwd_of_jacfwd, jacrev_of_jacfwd):
        assert_same(*both(case, x, y, v))


def test_jvp_of_inner_closure_over_the_outer_primal():
    def run(L):
        F = LIBS[L]
        x = L.tensor([0.4, -0.7, 1.2], dtype=L.float64)
        v = L.tensor([1.0, 0.5, -2.0], dtype=L.float64)
        inner = lambda x: F.jacfwd(lambda y: L.sin(y * x) * x.sum())(x)  # noqa: E731
        return F.jvp(inner, (x,), (v,))
    assert_same(*[run(L) for L in (torch, ember)])


def test_jvp_keeps_a_graph_to_primals_that_require_grad():
    def run(L):
        w = L.tensor([0.3, -1.2, 0.8], dtype=L.float64, requires_grad=True)
        v = L.tensor([1.0, 2.0, -1.0], dtype=L.float64)
        out, product = LIBS[L].jvp(lambda w: L.maximum(w, 0.2 * w).exp() * w.prod(), (w,),
                                   (v,))
        (out.sum() + (product ** 2).sum()).backward()
        return out, product, w.grad
    assert_same(*[run(L) for L in (torch, ember)])


# ---------------------------------------------------------------- models

def _mlp(L, rng_state):
    rng = np.random.default_rng(rng_state)
    model = L.nn.Sequential(L.nn.Linear(4, 3), L.nn.Tanh(), L.nn.Linear(3, 2)).double()
    params = {k: L.tensor(rng.standard_normal(tuple(p.shape)))
              for k, p in model.named_parameters()}
    return model, params, L.tensor(rng.standard_normal((5, 4)))


def test_linear_model_through_functional_call():
    def run(L):
        F = LIBS[L]
        model, params, x = _mlp(L, 0)
        call = lambda p, x: F.functional_call(model, p, (x,))  # noqa: E731
        jac = F.jacfwd(call)(params, x)
        tangent = {k: L.ones_like(v) for k, v in params.items()}
        product = F.jvp(lambda p: call(p, x), (params,), (tangent,))
        hess = F.hessian(lambda x: (call(params, x) ** 2).sum())(x[0])
        loss_hess = F.hessian(lambda p: (call(p, x) ** 2).mean())(params)
        return jac, product, hess, loss_hess["0.bias"]["0.weight"]
    assert_same(*[run(L) for L in (torch, ember)])


def test_conv_model_through_functional_call():
    rng = np.random.default_rng(3)
    w_np, b_np, x_np = (rng.standard_normal((2, 1, 2, 2)), rng.standard_normal(2),
                        rng.standard_normal((1, 1, 4, 4)))

    def run(L):
        F = LIBS[L]
        model = L.nn.Sequential(L.nn.Conv2d(1, 2, 2), L.nn.Softplus()).double()
        params = {"0.weight": L.tensor(w_np), "0.bias": L.tensor(b_np)}
        x = L.tensor(x_np)
        call = lambda p, x: F.functional_call(model, p, (x,))  # noqa: E731
        jac_x = F.jacfwd(lambda x: call(params, x))(x)
        jac_p = F.jacfwd(call)(params, x)
        product = F.jvp(lambda w: call({"0.weight": w, "0.bias": params["0.bias"]}, x),
                        (params["0.weight"],), (L.ones_like(params["0.weight"]),))
        hess = F.hessian(lambda w: call({"0.weight": w, "0.bias": params["0.bias"]},
                                        x).sum())(params["0.weight"])
        return jac_x, jac_p, product, hess
    assert_same(*[run(L) for L in (torch, ember)])


# ---------------------------------------------------------------- custom Functions

def _functions(L):
    class Cube(L.autograd.Function):
        generate_vmap_rule = True  # torch's jacfwd vmaps over the basis

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x ** 2

        @staticmethod
        def jvp(ctx, tangent):
            x, = ctx.saved_tensors
            return tangent * 3 * x ** 2

    class Double(L.autograd.Function):  # no jvp
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    return Cube, Double


def test_custom_function_with_jvp():
    def run(L):
        F = LIBS[L]
        cube, _ = _functions(L)
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64)
        v = L.tensor([1.0, 0.5, -2.0], dtype=L.float64)
        f = lambda x: L.sin(cube.apply(x)) * x  # noqa: E731
        return (F.jvp(f, (x,), (v,)), F.jacfwd(f)(x), F.hessian(lambda x: f(x).sum())(x),
                F.jvp(F.grad(lambda x: f(x).sum()), (x,), (v,)))
    assert_same(*[run(L) for L in (torch, ember)])


FUNCTION_ERRORS = {
    "jvp": lambda L, F, fn, x: F.jvp(lambda x: fn.apply(x).sin(), (x,), (x,)),
    "jacfwd": lambda L, F, fn, x: F.jacfwd(fn.apply)(x),
    "hessian": lambda L, F, fn, x: F.hessian(lambda x: fn.apply(x).sum())(x),
    "jvp of grad": lambda L, F, fn, x: F.jvp(F.grad(lambda x: fn.apply(x).sum()), (x,), (x,)),
}


@pytest.mark.parametrize("case", FUNCTION_ERRORS)
def test_custom_function_without_jvp_is_torch_error(case):
    def run(L):
        _, double = _functions(L)
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64)
        return error_of(lambda: FUNCTION_ERRORS[case](L, LIBS[L], double, x))
    t_error, e_error = run(torch), run(ember)
    assert t_error is not None and e_error == t_error
