"""Rprop: per-coordinate step sizes adapted from the sign agreement of successive
gradients."""
from __future__ import annotations

from typing import Any, Optional, Union

from .._tensor import Tensor
from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import (_lr_check, new_step, zeros_like, full_like, to_number,
                      check_capturable, check_foreach_differentiable)


class Rprop(Optimizer):
    """PyTorch's Rprop: where the gradient keeps its sign the step size grows by
    ``etas[1]``, where it flips the step size shrinks by ``etas[0]`` and that coordinate
    skips this step; step sizes stay within ``step_sizes``; ``p -= sign(g) * step_size``.

    ``foreach`` runs the same arithmetic; ``capturable=True`` fails the first step as
    PyTorch does on a CPU build; ``differentiable=True`` records the step for autograd.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.Rprop([w], lr=0.1)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w ** 2).sum().backward()
    ...     opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.7800, -1.7800], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _lr_check(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One Rprop update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                if isinstance(group["lr"], Tensor) and group["lr"].requires_grad:
                    # PyTorch fills the step sizes with the lr tensor itself, and a fill
                    # value must be a number
                    raise TypeError("full_like(): argument 'fill_value' (position 2) must be "
                                    "Number, not Tensor")
                state["step"] = new_step()
                state["prev"] = zeros_like(p)
                state["step_size"] = full_like(p.grad, to_number(group["lr"]))
        if params:
            check_foreach_differentiable(group)
        check_capturable(group, params)
        for p in params:
            state = self.state[p]
            prev, step_size = state["prev"], state["step_size"]
            grad = p.grad if not group["maximize"] else -p.grad
            state["step"] += 1
            # prev is overwritten below; a differentiable step's mul keeps a copy of it
            factor = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
            factor[factor.gt(0)] = etaplus
            factor[factor.lt(0)] = etaminus
            factor[factor.eq(0)] = 1
            step_size.mul_(factor).clamp_(step_size_min, step_size_max)
            # a coordinate whose gradient changed sign does not move, and its "previous
            # gradient" becomes 0 so that the next step neither grows nor shrinks it
            grad = grad.clone()
            grad[factor.eq(etaminus)] = 0
            p.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)


__all__ = ["Rprop"]
