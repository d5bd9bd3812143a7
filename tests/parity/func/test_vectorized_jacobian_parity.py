"""The vmapped Jacobians against torch in float64 (to 1e-10): ``func.jacrev`` in chunks
(``chunk_size``, ``_preallocate_and_copy``) and ``autograd.functional.jacobian`` /
``hessian`` with ``vectorize=True`` in both strategies, plus their error messages."""
import warnings

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import error_of
from tests.parity.func.test_transforms_parity import (FUNCTIONAL, LIBS, SEEDS, _normalized,
                                                       arrays, assert_same, both,
                                                       random_function)

CHUNKS = [None, 1, 2, 3, 7, 8, 100]


@pytest.fixture(autouse=True)
def _quiet_fallbacks():
    # ops without a batching rule run per sample with a performance warning (torch too)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def two_outputs(f):
    """A tuple and a dict output of ``f``'s vector: chunks cut across output boundaries."""
    def g(L, x, y):
        out = f(L, x, y)
        return {"v": out, "m": L.outer(out, y).sin(), "s": out.sum() * x[0]}
    return g


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_jacrev_chunks_of_random_compositions(seed, chunk_size):
    g = two_outputs(random_function(seed))
    for pre in (False, True):
        assert_same(*both(lambda L, x, y: LIBS[L].jacrev(
            lambda x, y: g(L, x, y), argnums=(0, 1), chunk_size=chunk_size,
            _preallocate_and_copy=pre)(x, y), *arrays(seed)))


@pytest.mark.parametrize("chunk_size", [None, 1, 3])
def test_jacrev_chunks_aux_hessian_and_vmap(chunk_size):
    def aux_fn(L, x, y):
        return LIBS[L].jacrev(lambda x: ((x * y).tanh(), {"y": y * 2}), has_aux=True,
                              chunk_size=chunk_size)(x)
    assert_same(*both(aux_fn, *arrays(0)))

    def hess(L, x, y):
        inner = LIBS[L].jacrev(lambda x: (x.sin() * y).sum() * x, chunk_size=chunk_size)
        return LIBS[L].jacrev(inner, chunk_size=chunk_size)(x)
    assert_same(*both(hess, *arrays(1)))

    def batched(L, x, y):
        per_row = LIBS[L].jacrev(lambda r: r.tanh() * r.sum(), chunk_size=chunk_size)
        # values only: ember's vmap(jacrev(f)) result still requires grad (torch's does not)
        return L.vmap(per_row)(L.outer(x, y)).detach()
    assert_same(*both(batched, *arrays(2)))


def test_jacrev_zero_element_and_unused_outputs():
    def f(L, x, y):
        return LIBS[L].jacrev(lambda x, y: (x[:0], y * 2, x.detach()), argnums=(0, 1),
                              chunk_size=3)(x, y)
    assert_same(*both(f, *arrays(3)))


STRATEGIES = ["reverse-mode", "forward-mode"]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_functional_jacobian_vectorized(seed, strategy):
    f = random_function(seed)
    af = FUNCTIONAL

    assert_same(*both(lambda L, x, y: af[L].jacobian(
        lambda x, y: f(L, x, y), (x, y), vectorize=True, strategy=strategy), *arrays(seed)))
    assert_same(*both(lambda L, x, y: af[L].jacobian(
        lambda x: f(L, x, y), x, vectorize=True, strategy=strategy), *arrays(seed)))
    # tuple outputs, one independent of the inputs, one not using input 1
    assert_same(*both(lambda L, x, y: af[L].jacobian(
        lambda x, y: (f(L, x, y).sum(), x.detach() * 2, L.outer(x, x).exp()), (x, y),
        vectorize=True, strategy=strategy), *arrays(seed)))
    assert_same(*both(lambda L, x, y: af[L].jacobian(
        lambda x: (f(L, x, y), x.sum()), x, vectorize=True, strategy=strategy), *arrays(seed)))


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_functional_jacobian_vectorized_create_graph(seed):
    f = random_function(seed)

    def second_order(L, x, y):
        x = x.requires_grad_()
        jac = FUNCTIONAL[L].jacobian(lambda x: f(L, x, y), x, create_graph=True,
                                     vectorize=True)
        return jac, L.autograd.grad(jac.sin().sum(), x)
    assert_same(*both(second_order, *arrays(seed)))
    # without create_graph the result is detached even for inputs requiring grad
    assert_same(*both(lambda L, x, y: FUNCTIONAL[L].jacobian(
        lambda x: f(L, x, y), x.requires_grad_(), vectorize=True), *arrays(seed)))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_functional_hessian_vectorized(seed, strategy):
    f = random_function(seed)
    kw = dict(vectorize=True, outer_jacobian_strategy=strategy)
    assert_same(*both(lambda L, x, y: FUNCTIONAL[L].hessian(
        lambda x, y: (f(L, x, y) ** 2).sum(), (x, y), **kw), *arrays(seed)))
    assert_same(*both(lambda L, x, y: FUNCTIONAL[L].hessian(
        lambda x: (f(L, x, y) ** 2).sum(), x, **kw), *arrays(seed)))
    # an input the function does not use
    assert_same(*both(lambda L, x, y: FUNCTIONAL[L].hessian(
        lambda x, y: (x.sin() ** 3).sum(), (x, y), **kw), *arrays(seed)))


def test_functional_hessian_vectorized_create_graph():
    def third_order(L, x, y):
        x = x.requires_grad_()
        hess = FUNCTIONAL[L].hessian(lambda x: (x.sin() * y).sum() ** 2, x, create_graph=True,
                                     vectorize=True)
        return hess, L.autograd.grad(hess.sum(), x)
    assert_same(*both(third_order, *arrays(4)))


ERROR_CASES = {
    "jacrev negative chunk": lambda L, x: LIBS[L].jacrev(lambda x: x, chunk_size=-2)(x),
    "af jacobian vectorize detached strict": lambda L, x: FUNCTIONAL[L].jacobian(
        lambda x: x.detach(), x, vectorize=True, strict=True),
    "af jacobian forward strict": lambda L, x: FUNCTIONAL[L].jacobian(
        lambda x: x, x, vectorize=True, strict=True, strategy="forward-mode"),
    "af jacobian forward create_graph": lambda L, x: FUNCTIONAL[L].jacobian(
        lambda x: x, x, vectorize=True, create_graph=True, strategy="forward-mode"),
    "af jacobian forward create_graph loop": lambda L, x: FUNCTIONAL[L].jacobian(
        lambda x: x, x, create_graph=True, strict=True, strategy="forward-mode"),
    "af hessian forward loop": lambda L, x: FUNCTIONAL[L].hessian(
        lambda x: (x ** 3).sum(), x, outer_jacobian_strategy="forward-mode"),
    "af hessian forward strict": lambda L, x: FUNCTIONAL[L].hessian(
        lambda x: (x ** 3).sum(), x, strict=True, vectorize=True,
        outer_jacobian_strategy="forward-mode"),
    "af hessian forward create_graph": lambda L, x: FUNCTIONAL[L].hessian(
        lambda x: (x ** 3).sum(), x, create_graph=True, vectorize=True,
        outer_jacobian_strategy="forward-mode"),
    "af hessian strict vectorize": lambda L, x: FUNCTIONAL[L].hessian(
        lambda x: (x ** 3).sum(), x, strict=True, vectorize=True),
    "af hessian vectorize vector output": lambda L, x: FUNCTIONAL[L].hessian(
        lambda x: x, x, vectorize=True),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors(case):
    def run(L):
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64)
        return _normalized(error_of(lambda: ERROR_CASES[case](L, x)))
    t_error, e_error = run(torch), run(ember)
    assert t_error is not None
    assert e_error == t_error


def test_forward_mode_returns_lists_like_torch():
    # torch's forward-mode path leaves the nesting as lists where nothing is unpacked
    def run(L):
        x = L.tensor(np.arange(3.0), dtype=L.float64)
        res = FUNCTIONAL[L].jacobian(lambda a, b: (a * b, a.sum()), (x, x),
                                     vectorize=True, strategy="forward-mode")
        return type(res), type(res[0])
    assert run(ember) == run(torch)
