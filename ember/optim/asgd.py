"""ASGD: SGD with a decaying step size and a running (Polyak) average of the iterates."""
from __future__ import annotations

from typing import Any, Optional, Union

from .._tensor import Tensor
from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import (_lr_check, _weight_decay_check, new_step, new_scalar, zeros_like, to_scalar,
                      as_tensor, check_capturable, check_foreach_differentiable)


class ASGD(Optimizer):
    """PyTorch's averaged SGD: ``p = p (1 - lambd eta) - eta g``; the average ``ax``
    follows ``p`` (exactly until step ``t0``, then with weight ``mu = 1 / (t - t0)``);
    ``eta = lr / (1 + lambd lr t) ** alpha``. ``eta`` and ``mu`` are 0-dim state tensors.

    ``foreach=True`` follows PyTorch's multi-tensor rounding (the decay folded into the
    gradient, ``eta`` from the step tensor); ``capturable=True`` fails the first step as
    PyTorch does on a CPU build; ``differentiable=True`` records the step for autograd.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.ASGD([w], lr=0.1, lambd=0.0)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.8000, -1.6000], requires_grad=True)
    >>> opt.state[w]["ax"]
    tensor([ 0.8000, -1.6000])
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _lr_check(lr)
        _weight_decay_check(weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One ASGD update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        lambd, alpha, t0, wd = group["lambd"], group["alpha"], group["t0"], group["weight_decay"]
        lr = to_scalar(group["lr"])
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["eta"] = new_scalar(lr)
                state["mu"] = new_scalar(1.0)
                state["ax"] = zeros_like(p)
        if params:
            check_foreach_differentiable(group)
        check_capturable(group, params, "params, mus, etas, and state_steps")
        if group["foreach"]:
            return self._update_foreach(group, params, lr)
        for p in params:
            state = self.state[p]
            mu, ax, eta = state["mu"], state["ax"], state["eta"]
            grad = p.grad if not group["maximize"] else -p.grad
            state["step"] += 1
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            eta_value = eta.item()
            p.mul_(1 - lambd * eta_value)
            p.add_(grad, alpha=-eta_value)
            if mu.item() != 1:
                ax.add_(p.sub(ax).mul_(mu))
            else:
                ax.copy_(p)
            step = state["step"].item()
            # through a tensor of the default dtype, as PyTorch's as_tensor rounds them
            eta.copy_(as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            mu.copy_(as_tensor(1 / max(1, step - t0)))

    def _update_foreach(self, group: dict[str, Any], params: list, lr: Any) -> None:
        """PyTorch's multi-tensor ASGD rounds differently from its single-tensor one
        (decay folded into the gradient, ``eta`` recomputed from the step tensor in its
        dtype); ``foreach=True`` follows it."""
        lambd, alpha, t0, wd = group["lambd"], group["alpha"], group["t0"], group["weight_decay"]
        for p in params:
            state = self.state[p]
            mu, ax, eta, step_t = state["mu"], state["ax"], state["eta"], state["step"]
            grad = p.grad if not group["maximize"] else -p.grad
            step_t += 1
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            p.addcmul_(grad.add(p, alpha=lambd), eta, value=-1)
            ax.addcmul_(p.sub(ax), mu)
            eta.copy_(lr / ((1 + lambd * lr * step_t) ** alpha))
            mu.copy_(as_tensor(1 / max(1, step_t.item() - t0)))


__all__ = ["ASGD"]
