"""NAdam: Adam with Nesterov momentum and a momentum-decay schedule."""
from __future__ import annotations

from typing import Any, Optional, Union

from .._tensor import Tensor
from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import (_lr_check, _weight_decay_check, _eps_check, _betas_check, new_step,
                      new_scalar, zeros_like, to_number, to_scalar, check_capturable,
                      check_foreach_differentiable)


class NAdam(Optimizer):
    """PyTorch's NAdam: momentum coefficients
    ``mu_t = beta1 (1 - 0.5 * 0.96 ** (t * momentum_decay))`` whose running product is
    kept in the state as ``mu_product``; the update mixes the current gradient and the
    first moment with Nesterov weights. ``decoupled_weight_decay=True`` decays the
    parameters directly (NAdamW).

    ``foreach`` runs the same arithmetic; ``capturable=True`` fails the first step as
    PyTorch does on a CPU build; ``differentiable=True`` records the step for autograd.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.NAdam([w], lr=0.1)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.8944, -1.8944], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: Optional[bool] = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _lr_check(lr)
        _eps_check(eps)
        _betas_check(betas)
        _weight_decay_check(weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One NAdam update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        eps, wd, momentum_decay = group["eps"], group["weight_decay"], group["momentum_decay"]
        lr = to_scalar(group["lr"])
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["mu_product"] = new_scalar(1.0)
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
        if params:
            check_foreach_differentiable(group)
        for p in params:
            check_capturable(group, params, "params, mu_products and state_steps")
            state = self.state[p]
            exp_avg, exp_avg_sq, mu_product = (state["exp_avg"], state["exp_avg_sq"],
                                               state["mu_product"])
            grad = p.grad if not group["maximize"] else -p.grad
            state["step"] += 1
            step = state["step"].item()
            bias_correction2 = 1 - beta2 ** step
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * wd if group["differentiable"] else to_number(1 - lr * wd))
                else:
                    grad = grad.add(p, alpha=wd)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product *= mu
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(bias_correction2).sqrt()
            if group["differentiable"]:
                _differentiable_nadam_update(p, grad, exp_avg, denom.add(eps), lr, mu, mu_next,
                                             mu_product)
                continue
            denom.add_(eps)
            product = mu_product.item()
            product_next = product * mu_next
            p.addcdiv_(grad, denom, value=to_number(-lr * (1.0 - mu) / (1.0 - product)))
            p.addcdiv_(exp_avg, denom, value=to_number((-lr * mu_next) / (1.0 - product_next)))



def _differentiable_nadam_update(p, grad, exp_avg, denom, lr, mu, mu_next, mu_product):
    """The two NAdam terms scaled as tensors (``value=`` takes a number only), so that lr
    and the running momentum product reach autograd, as in PyTorch's differentiable step."""
    product_next = mu_product * mu_next
    p.addcdiv_(grad * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom)
    p.addcdiv_(exp_avg * (-lr * mu_next / (1.0 - product_next)), denom)


__all__ = ["NAdam"]
