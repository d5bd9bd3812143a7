"""Adam and AdamW (decoupled weight decay), with amsgrad and maximize."""
from __future__ import annotations

from typing import Any, Optional

import numpy as _np

from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import (_lr_check, _weight_decay_check, _eps_check, new_step, zeros_like, maximum,
                      check_capturable, check_fused, check_fused_params, to_scalar,
                      check_foreach_differentiable, weight_decayed)
from .._tensor import Tensor
from ..autograd.batching import hooks as _batching
from ..autograd.dispatch import active as _dispatch_active
from ..autograd.forward_ad import active as _fw_active
from ..autograd.grad_mode import _state as _grad_state
from ..backend import get_array_module, numpy_ndarray as _ndarray
from ..nn.parameter import Parameter


class Adam(Optimizer):
    """PyTorch's Adam: bias-corrected first and second moments;
    ``decoupled_weight_decay=True`` gives AdamW.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.Adam([w], lr=0.1)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w ** 2).sum().backward()
    ...     opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.8004, -1.8002], requires_grad=True)
    """
    _sparse_gradient_error = ("Adam does not support sparse gradients, please consider "
                              "SparseAdam instead")

    def __init__(self, params: ParamsT, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None, decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        _lr_check(lr)
        _eps_check(eps)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _weight_decay_check(weight_decay)
        betas = _checked_betas(betas, foreach, capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One Adam update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        check_fused_params(group)
        beta1, beta2 = group["betas"]
        lr, eps, wd = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        amsgrad = group["amsgrad"]
        beta1_number = not isinstance(beta1, Tensor)
        if group["differentiable"]:
            return self._update_differentiable(group)
        on_arrays = all(type(v) in (int, float) for v in (lr, eps, wd, beta1, beta2)) and \
            not amsgrad and not group["capturable"] and \
            not _dispatch_active[0] and not _fw_active and _batching[0] is None
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self._state_of(p, amsgrad)
            if on_arrays and _plain_arrays(p, p.grad, state["exp_avg"], state["exp_avg_sq"]):
                _adam_step_arrays(p, state, group, lr, eps, wd)
                continue
            if not group["fused"]:  # the fused step has no device requirement on CPU
                check_capturable(group, [p])
            grad = p.grad if not group["maximize"] else -p.grad
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            step_t = state["step"]
            step_t += 1
            if wd != 0:
                if group.get("decoupled_weight_decay", False):
                    p.mul_(1 - lr * wd)
                else:
                    grad = grad.add(p, alpha=wd)
            # a tensor beta1 is cast to the parameter's dtype, as lerp's weight must match
            exp_avg.lerp_(grad, 1 - beta1 if beta1_number else 1 - beta1.to(p.dtype))
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step = step_t.item()
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2 ** 0.5
            if amsgrad:
                max_sq = state["max_exp_avg_sq"]
                max_sq.copy_(maximum(max_sq, exp_avg_sq))
                denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            p.addcdiv_(exp_avg, denom, value=-step_size)

    def _state_of(self, p, amsgrad):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = zeros_like(p)
        return state

    def _update_differentiable(self, group: dict[str, Any]) -> None:
        """PyTorch's differentiable Adam: the bias corrections and the step size stay
        tensors (from the step counter), so that lr and betas given as tensors that
        require grad receive gradients, and the saved operands are never changed in
        place."""
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            if self._state_of(p, group["amsgrad"])["step"].requires_grad:
                raise RuntimeError("`requires_grad` is not supported for `step` in "
                                   "differentiable mode")
        if not group["fused"]:
            check_capturable(group, params)
        if params:
            check_foreach_differentiable(group)
        for p in params:
            state = self.state[p]
            grad = p.grad if not group["maximize"] else -p.grad
            state["step"] += 1
            _differentiable_adam_step(p, grad, state, group)


def _plain_arrays(*tensors):
    """Whether the update may run on the bare arrays: plain (or Parameter) tensors on
    float32/float64 NumPy arrays of one dtype, none needing autograd."""
    dt = tensors[0]._data.dtype
    return dt in _FLOATS and not _grad_state.enabled and all(
        type(t) in _PLAIN and type(t._data) is _ndarray and t._data.dtype == dt
        for t in tensors)


def _adam_step_arrays(p, state, group, lr, eps, wd):
    """``_update``'s step for one parameter on its arrays: the same operations in the same
    order as the tensor ops there (the same bits) without a tensor and a dispatch per op;
    each tensor written once, its version bumped as the in-place ops would."""
    beta1, beta2 = group["betas"]
    step_t, exp_avg, exp_avg_sq = state["step"], state["exp_avg"], state["exp_avg_sq"]
    d, grad = p._data, p.grad._data
    if group["maximize"]:
        grad = -grad
    step_t._write(step_t._data + 1)
    if wd != 0:
        if group.get("decoupled_weight_decay", False):
            p._write(d * (1 - lr * wd))
        else:
            grad = grad + wd * d
    m = exp_avg._data
    weight = d.dtype.type(1 - beta1).item()  # lerp's weight, rounded as Lerp rounds it
    diff = grad - m
    exp_avg._write(m + weight * diff if abs(weight) < 0.5 else grad - diff * (1 - weight))
    v = exp_avg_sq._data * beta2
    exp_avg_sq._write(v + (1 - beta2) * (grad * grad))
    step = step_t.item()
    step_size = lr / (1 - beta1 ** step)
    denom = get_array_module(d).sqrt(exp_avg_sq._data) / (1 - beta2 ** step) ** 0.5 + eps
    p._write(d + -step_size * (exp_avg._data / denom))


_FLOATS = (_np.dtype(_np.float32), _np.dtype(_np.float64))
_PLAIN = (Tensor, Parameter)


def _differentiable_adam_step(p, grad, state, group):
    beta1, beta2 = (to_scalar(b) for b in group["betas"])
    lr, eps, wd = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
    exp_avg, exp_avg_sq, step = state["exp_avg"], state["exp_avg_sq"], state["step"]
    if wd != 0:
        if group.get("decoupled_weight_decay", False):
            p.mul_(1 - lr * wd)
        elif isinstance(wd, Tensor):
            grad = weight_decayed(grad, p, wd)
        else:
            grad = grad.add(p, alpha=wd)
    exp_avg.lerp_(grad, 1 - (beta1.to(p.dtype) if isinstance(beta1, Tensor) else beta1))
    if _needs_grad(beta2):
        # lerp is the same average with a tensor weight autograd can follow
        exp_avg_sq.lerp_(grad.square(), 1 - beta2)
    else:
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    # the counter is bumped in place next step: a pow that saves it gets a copy
    bias_correction1 = 1 - beta1 ** (step.clone() if _needs_grad(beta1) else step)
    bias_correction2 = 1 - beta2 ** (step.clone() if _needs_grad(beta2) else step)
    step_size_neg = (lr / bias_correction1).neg()
    bias_correction2_sqrt = bias_correction2.sqrt()
    second = exp_avg_sq
    if group["amsgrad"]:
        second = state["max_exp_avg_sq"]
        second.copy_(maximum(second.clone(), exp_avg_sq))
    denom = (second.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps / step_size_neg)
    p.addcdiv_(exp_avg.clone(), denom)


def _checked_betas(betas, foreach, capturable):
    """PyTorch's rules for betas given as tensors (1-element, both or neither, not with
    the multi-tensor step); they are kept as 0-dim tensors."""
    if not (all(isinstance(b, float) for b in betas[:2])
            or all(isinstance(b, Tensor) for b in betas[:2])):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, b in enumerate(betas[:2]):
        if isinstance(b, Tensor):
            if not capturable and foreach:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                 "capturable=False and foreach=True")
            if b.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
    return tuple(to_scalar(b) for b in betas)


def _needs_grad(x):
    return isinstance(x, Tensor) and x.requires_grad


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before the update.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.8500, -1.8000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: Optional[bool] = None, capturable: bool = False,
                 differentiable: bool = False, fused: Optional[bool] = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


__all__ = ["Adam", "AdamW"]
