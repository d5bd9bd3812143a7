"""``differentiable=True``: the optimizer step is recorded by autograd, so the updated
parameters are differentiable functions of the initial parameters, the gradients and a
tensor lr. Checked by finite differences (gradcheck) on a two-step update in float64, and
PyTorch's errors around it (leaf parameters, fused, foreach, tensor lr where a number is
needed)."""
import pytest

import ember
from ember.autograd import gradcheck

P0 = [0.7, -1.3, 0.4]
G1 = [0.5, -0.2, 0.9]
G2 = [-0.3, 0.6, 0.25]


def _leaf(values):
    return ember.tensor(values, dtype=ember.float64, requires_grad=True)


def _two_steps(name, steps=2, tensor_lr=False, grads_require_grad=True, **kwargs):
    """``fn(p0, g1, g2[, lr])``: the parameters after ``steps`` updates with gradients g1,
    g2 (a fresh optimizer on a copy of p0 each call, as gradcheck perturbs the inputs)."""
    def fn(p0, g1, g2, *lr):
        p = p0.clone()
        opt = getattr(ember.optim, name)([p], lr=lr[0] if lr else 0.1, differentiable=True,
                                         **kwargs)
        for g in (g1, g2)[:steps]:
            p.grad = g * 1.0
            opt.step()
        return p
    inputs = [_leaf(P0), _leaf(G1), _leaf(G2)]
    if not grads_require_grad:
        inputs[1:] = [g.detach() for g in inputs[1:]]
    if tensor_lr:
        inputs.append(_leaf(0.1))
    return fn, inputs


# (name, kwargs, tensor lr): configurations whose two steps PyTorch can differentiate
# (elsewhere a saved state tensor is changed in place by the second step: see below)
CASES = [
    ("SGD", {}, True),
    ("SGD", dict(weight_decay=0.1, maximize=True), True),
    ("Adam", {}, True),
    ("Adam", dict(weight_decay=0.1, maximize=True), True),
    ("AdamW", dict(weight_decay=0.3), True),
    ("RMSprop", dict(momentum=0.5, weight_decay=0.1), False),
    ("Adagrad", dict(lr_decay=0.1, initial_accumulator_value=0.2), False),
    ("Adadelta", dict(weight_decay=0.1), False),
    ("NAdam", dict(weight_decay=0.1), False),
    ("RAdam", dict(betas=(0.9, 0.7)), True),
    ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True), True),
    # ASGD's step size is read out of its state as a number: no gradient reaches lr
    ("ASGD", dict(t0=1, lambd=0.1), False),
]


@pytest.mark.parametrize("name, kwargs, tensor_lr", CASES, ids=str)
def test_two_step_update_passes_gradcheck(name, kwargs, tensor_lr):
    fn, inputs = _two_steps(name, tensor_lr=tensor_lr, **kwargs)
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("kwargs, tensor_lr", [(dict(momentum=0.9, nesterov=True), True),
                                               (dict(momentum=0.5, dampening=0.2), False)],
                         ids=str)
def test_sgd_momentum_update_passes_gradcheck_in_p0_and_lr(kwargs, tensor_lr):
    # PyTorch's first momentum buffer is a detached copy of the gradient: the update is
    # differentiable in p0 (and lr), not in the gradient the buffer started from; without
    # nesterov an lr that requires grad saves the buffer the next step changes in place
    fn, inputs = _two_steps("SGD", tensor_lr=tensor_lr, grads_require_grad=False, **kwargs)
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name, kwargs", [("Adamax", {}), ("Rprop", {}),
                                          ("Adam", dict(amsgrad=True)),
                                          ("RMSprop", dict(centered=True))], ids=str)
def test_one_step_update_passes_gradcheck(name, kwargs):
    fn, inputs = _two_steps(name, steps=1, **kwargs)
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["Adamax", "Rprop"])
def test_a_saved_state_changed_by_the_next_step_fails_backward(name):
    # as in PyTorch: the second step updates in place a state tensor the first one saved
    fn, inputs = _two_steps(name)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        fn(*inputs).sum().backward()


def test_lr_gradient_of_sgd_is_minus_the_gradient():
    p0, lr = _leaf(P0), _leaf(0.1)
    p = p0.clone()
    opt = ember.optim.SGD([p], lr=lr, differentiable=True)
    p.grad = ember.tensor(G1, dtype=ember.float64)
    opt.step()
    d_lr, d_p0 = ember.autograd.grad(p.sum(), [lr, p0])
    assert d_lr.item() == pytest.approx(-sum(G1))
    assert d_p0.tolist() == [1.0, 1.0, 1.0]


def test_step_records_even_under_no_grad():
    p = _leaf(P0).clone()
    opt = ember.optim.Adam([p], lr=0.1, differentiable=True)
    p.grad = _leaf(G1) * 1.0
    with ember.no_grad():
        opt.step()
    assert p.grad_fn is not None
    # and the plain step records nothing
    q = _leaf(P0).detach()
    q.grad = ember.tensor(G1, dtype=ember.float64, requires_grad=True)
    ember.optim.Adam([q], lr=0.1).step()
    assert q.grad_fn is None and not q.requires_grad


def test_non_leaf_parameters_need_differentiable():
    p = _leaf(P0).clone()
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        ember.optim.SGD([p], lr=0.1)
    ember.optim.SGD([p], lr=0.1, differentiable=True)


def test_a_leaf_that_requires_grad_cannot_be_updated_in_place():
    w = _leaf(P0)
    w.grad = ember.ones(3, dtype=ember.float64)
    opt = ember.optim.SGD([w], lr=0.1, differentiable=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation."):
        opt.step()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_refuses_differentiable(name):
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        getattr(ember.optim, name)([_leaf(P0).clone()], lr=0.1, fused=True,
                                   differentiable=True)


@pytest.mark.parametrize("name", ["Adam", "RMSprop", "Adagrad", "Adadelta", "Adamax",
                                  "NAdam", "RAdam", "ASGD", "Rprop"])
def test_foreach_refuses_differentiable_at_the_step(name):
    p = _leaf(P0).clone()
    opt = getattr(ember.optim, name)([p], lr=0.1, foreach=True, differentiable=True)
    p.grad = ember.ones(3, dtype=ember.float64)
    with pytest.raises(AssertionError, match="_foreach ops don't support autograd"):
        opt.step()
    assert "step" in opt.state[p]  # the state is made first


def test_foreach_sgd_is_differentiable_with_a_number_lr():
    fn, inputs = _two_steps("SGD", foreach=True, grads_require_grad=False, momentum=0.9)
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name, message", [
    ("RMSprop", "addcdiv_(): argument 'value' must be Number, not Tensor"),
    ("Adagrad", "addcdiv_(): argument 'value' must be Number, not Tensor"),
    ("Adadelta", "add_(): argument 'alpha' must be Number, not Tensor"),
    ("Adamax", "addcdiv_(): argument 'value' must be Number, not Tensor"),
    ("Rprop", "full_like(): argument 'fill_value' (position 2) must be Number, not Tensor"),
    ("SGD", "_foreach_add_() received an invalid combination of arguments")])
def test_lr_that_requires_grad_where_a_number_is_needed(name, message):
    p = _leaf(P0).clone()
    kwargs = dict(foreach=True) if name == "SGD" else {}
    opt = getattr(ember.optim, name)([p], lr=_leaf(0.1), differentiable=True, **kwargs)
    p.grad = ember.ones(3, dtype=ember.float64)
    with pytest.raises(TypeError) as info:
        opt.step()
    assert str(info.value).startswith(message)


def test_adam_refuses_a_step_counter_that_requires_grad():
    p = _leaf(P0).clone()
    opt = ember.optim.Adam([p], lr=0.1, differentiable=True)
    opt.state[p]["step"] = ember.tensor(0.0, requires_grad=True)
    opt.state[p]["exp_avg"] = ember.zeros(3, dtype=ember.float64)
    opt.state[p]["exp_avg_sq"] = ember.zeros(3, dtype=ember.float64)
    p.grad = ember.ones(3, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="`requires_grad` is not supported for `step` in "
                                           "differentiable mode"):
        opt.step()


def test_adam_tensor_betas_receive_gradients():
    beta1, beta2 = _leaf(0.9), _leaf(0.99)

    def fn(p0, g1, g2, b1, b2):
        p = p0.clone()
        opt = ember.optim.Adam([p], lr=0.1, betas=(b1, b2), differentiable=True)
        for g in (g1, g2):
            p.grad = g * 1.0
            opt.step()
        return p
    assert gradcheck(fn, [_leaf(P0), _leaf(G1), _leaf(G2), beta1, beta2])
    with pytest.raises(ValueError, match="betas must be either both floats or both Tensors"):
        ember.optim.Adam([_leaf(P0)], betas=(beta1, 0.99))
