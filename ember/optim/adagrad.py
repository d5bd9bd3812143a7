"""Adagrad: per-coordinate learning rates from the sum of squared gradients."""
from __future__ import annotations

from typing import Any, Optional

from .optimizer import LossClosure, Optimizer, ParamsT
from .._tensor import Tensor
from .._sparse.tensor import accumulate_
from ._common import (_lr_check, _weight_decay_check, _eps_check, new_step, full_like,
                      check_fused, check_fused_params, to_scalar, check_foreach_differentiable)


class Adagrad(Optimizer):
    """PyTorch's Adagrad: ``s += g**2``; ``p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)``.
    State is created for every parameter at construction, as in PyTorch.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.Adagrad([w], lr=0.5)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.5000, -1.5000], requires_grad=True)
    """
    _sparse_gradient_error = None  # sparse gradients update only their rows

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: Optional[bool] = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: Optional[bool] = None) -> None:
        _lr_check(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        _weight_decay_check(weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        _eps_check(eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = new_step()
                state["sum"] = full_like(p, group["initial_accumulator_value"])

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One Adagrad update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        check_fused_params(group)
        lr, lr_decay = to_scalar(group["lr"]), group["lr_decay"]
        wd, eps = group["weight_decay"], group["eps"]
        check_foreach_differentiable(group)
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            step_t = state["step"]
            step_t += 1
            step = step_t.item()
            grad = p.grad if not group["maximize"] else -p.grad
            if grad.is_sparse:
                if wd != 0:
                    raise RuntimeError("weight_decay option is not compatible with sparse "
                                       "gradients")
                _sparse_step(p, grad, state["sum"], lr / (1 + (step - 1) * lr_decay), eps)
                continue
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            clr = lr / (1 + (step - 1) * lr_decay)
            state_sum = state["sum"]
            state_sum.addcmul_(grad, grad, value=1)
            # sqrt's backward reads its result: the differentiable step leaves it intact
            std = state_sum.sqrt() + eps if group["differentiable"] else state_sum.sqrt().add_(eps)
            p.addcdiv_(grad, std, value=-clr)


def _sparse_step(p: Tensor, grad: Tensor, state_sum: Tensor, clr: float, eps: float) -> None:
    """Adagrad on the rows a sparse gradient names: only their sums and values change."""
    grad = grad.coalesce()
    idx = grad._indices()
    at = tuple(idx[d] for d in range(idx.shape[0]))
    values = grad._values()
    accumulate_(state_sum, idx, values.pow(2))
    std = state_sum[at].sqrt_().add_(eps)
    accumulate_(p, idx, (values / std) * -clr)


__all__ = ["Adagrad"]
