"""Adamax: Adam with the infinity norm in place of the second moment."""
from __future__ import annotations

from typing import Any, Optional, Union

from .._tensor import Tensor
from .._functions import amax, cat
from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import (_lr_check, _weight_decay_check, _eps_check, _betas_check, new_step,
                      zeros_like, maximum, to_number, to_scalar, check_capturable,
                      check_foreach_differentiable)


class Adamax(Optimizer):
    """PyTorch's Adamax: ``m = lerp(m, g, 1 - beta1)``, ``u = max(beta2 u, |g| + eps)``,
    ``p -= lr / (1 - beta1**t) * m / u``.

    ``foreach`` runs the same arithmetic; ``capturable=True`` fails the first step as
    PyTorch does on a CPU build; ``differentiable=True`` records the step for autograd.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.Adamax([w], lr=0.1)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: Optional[bool] = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _lr_check(lr)
        _eps_check(eps)
        _betas_check(betas)
        _weight_decay_check(weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One Adamax update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        eps, wd = group["eps"], group["weight_decay"]
        lr = to_scalar(group["lr"])
        differentiable = group["differentiable"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["exp_avg"] = zeros_like(p)
                state["exp_inf"] = zeros_like(p)
        check_foreach_differentiable(group)
        check_capturable(group, params)
        for p in params:
            state = self.state[p]
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            state["step"] += 1
            grad = p.grad if not group["maximize"] else -p.grad
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            exp_avg.lerp_(grad, 1 - beta1)
            if differentiable:
                # the maximum over a stacked pair, as PyTorch's differentiable step takes it
                # (ties share the gradient), into exp_inf from a fresh tensor
                pair = cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)])
                exp_inf.copy_(amax(pair, 0))
            else:
                exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
            clr = lr / (1 - beta1 ** state["step"].item())
            p.addcdiv_(exp_avg, exp_inf, value=-(clr if differentiable else to_number(clr)))


__all__ = ["Adamax"]
