"""RMSprop: running average of squared gradients, optional momentum and centering."""
from __future__ import annotations

from typing import Any, Optional

from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import (_lr_check, _weight_decay_check, _eps_check, new_step, zeros_like,
                      check_capturable, to_scalar, check_foreach_differentiable)


class RMSprop(Optimizer):
    """PyTorch's RMSprop: ``v = alpha v + (1 - alpha) g**2``; ``p -= lr g / (sqrt(v) + eps)``
    (``v - mean(g)**2`` when centered; through a momentum buffer when momentum > 0).

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.RMSprop([w], lr=0.01, alpha=0.75)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.9800, -1.9800], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _lr_check(lr)
        _eps_check(eps)
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        _weight_decay_check(weight_decay)
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One RMSprop update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        lr, alpha, eps = to_scalar(group["lr"]), group["alpha"], group["eps"]
        wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
        differentiable = group["differentiable"]
        refuse_foreach = differentiable and group["foreach"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["square_avg"] = zeros_like(p)
                if momentum > 0:
                    state["momentum_buffer"] = zeros_like(p)
                if centered:
                    state["grad_avg"] = zeros_like(p)
            if refuse_foreach:
                check_foreach_differentiable(group)
            check_capturable(group, [p])
            grad = p.grad if not group["maximize"] else -p.grad
            square_avg = state["square_avg"]
            state["step"] += 1
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            if centered:
                grad_avg = state["grad_avg"]
                grad_avg.lerp_(grad, 1 - alpha)
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            else:
                avg = square_avg.sqrt()
            # sqrt's backward reads its result: the differentiable step leaves it intact
            avg = avg.add(eps) if differentiable else avg.add_(eps)
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.mul_(momentum).addcdiv_(grad, avg)
                p.add_(buf, alpha=-lr)
            else:
                p.addcdiv_(grad, avg, value=-lr)


__all__ = ["RMSprop"]
