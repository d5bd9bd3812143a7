"""Adadelta: step sizes from running averages of squared gradients and squared updates."""
from __future__ import annotations

from typing import Any, Optional, Union

from .._tensor import Tensor
from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import (_lr_check, _weight_decay_check, _eps_check, new_step, zeros_like, to_number,
                      to_scalar, check_capturable, check_foreach_differentiable)


class Adadelta(Optimizer):
    """PyTorch's Adadelta: ``v = rho v + (1 - rho) g**2``,
    ``dx = sqrt(u + eps) / sqrt(v + eps) * g``, ``u = rho u + (1 - rho) dx**2``,
    ``p -= lr dx``.

    ``foreach`` runs the same arithmetic; ``capturable=True`` fails the first step as
    PyTorch does on a CPU build; ``differentiable=True`` records the step for autograd.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.Adadelta([w], lr=1.0)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.9968, -1.9968], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: Optional[bool] = None,
                 *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _lr_check(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _eps_check(eps)
        _weight_decay_check(weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, capturable=capturable, foreach=foreach,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One Adadelta update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
        differentiable = group["differentiable"]
        lr = to_scalar(group["lr"]) if differentiable else to_number(to_scalar(group["lr"]))
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["square_avg"] = zeros_like(p)
                state["acc_delta"] = zeros_like(p)
        check_foreach_differentiable(group)
        check_capturable(group, params, devices=["cuda", "xpu", "hpu", "privateuseone"])
        for p in params:
            state = self.state[p]
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            state["step"] += 1
            grad = p.grad if not group["maximize"] else -p.grad
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_()
            if differentiable:  # sqrt_'s backward reads its result: divide a copy
                delta = delta.clone()
            delta.div_(std).mul_(grad)
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            p.add_(delta, alpha=-lr)


__all__ = ["Adadelta"]
