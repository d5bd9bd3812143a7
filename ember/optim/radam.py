"""RAdam: Adam with a rectified (variance-corrected) adaptive learning rate."""
from __future__ import annotations

from typing import Any, Optional, Union

from .._tensor import Tensor
from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import (_lr_check, _weight_decay_check, _eps_check, _betas_check, new_step,
                      zeros_like, to_number, to_scalar, check_capturable,
                      check_foreach_differentiable)


class RAdam(Optimizer):
    """PyTorch's RAdam: while the approximated SMA length ``rho_t`` is at most 5 the step
    is plain bias-corrected momentum; after that the Adam step scaled by the variance
    rectification term. ``decoupled_weight_decay=True`` decays the parameters directly.

    ``foreach`` runs the same arithmetic; ``capturable=True`` fails the first step as
    PyTorch does on a CPU build; ``differentiable=True`` records the step for autograd.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.RAdam([w], lr=0.1)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _lr_check(lr)
        _eps_check(eps)
        _betas_check(betas)
        _weight_decay_check(weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One RAdam update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        eps, wd = group["eps"], group["weight_decay"]
        lr = to_scalar(group["lr"])
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
        # the longest SMA the approximation reaches
        rho_inf = 2 / (1 - beta2) - 1
        if params:
            check_foreach_differentiable(group)
        check_capturable(group, params)
        for p in params:
            state = self.state[p]
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            grad = p.grad if not group["maximize"] else -p.grad
            state["step"] += 1
            step = state["step"].item()
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * wd if group["differentiable"] else to_number(1 - lr * wd))
                else:
                    grad = grad.add(p, alpha=wd)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            corrected_avg = exp_avg / bias_correction1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                root = exp_avg_sq.sqrt()
                # sqrt's backward reads its result: the differentiable step leaves it intact
                root = root.add(eps) if group["differentiable"] else root.add_(eps)
                adaptive_lr = (bias_correction2 ** 0.5) / root
                p.add_(corrected_avg * lr * adaptive_lr * rect, alpha=-1.0)
            else:
                p.add_(corrected_avg * lr, alpha=-1.0)


__all__ = ["RAdam"]
