"""Adafactor: second moments factored into row and column statistics (Shazeer & Stern, 2018),
with PyTorch's variant (relative step size, update clipping by ``d``, decoupled weight decay)."""
from __future__ import annotations

from typing import Any, Optional, Union

from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import new_step, new_scalar, zeros_like, to_scalar
from .._tensor import Tensor
from ..backend.dtypes import finfo


class Adafactor(Optimizer):
    """PyTorch's Adafactor. At step ``t`` the second-moment averages move toward the new
    statistics by ``t ** beta2_decay``; a matrix (or batch of matrices) keeps only a row and a
    column mean of ``g ** 2``, a vector keeps the full ``g ** 2`` average. The update
    ``g / sqrt(v)`` is scaled down to RMS ``d`` at most and applied with step
    ``max(eps2, RMS(p)) * min(lr, t ** -0.5)``; ``weight_decay`` multiplies ``p`` by
    ``1 - lr * weight_decay`` first. ``eps=(eps1, eps2)``: ``eps1=None`` is the machine
    epsilon of the parameter's dtype.

    ``foreach=True`` is PyTorch's multi-tensor path, which computes the same numbers.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([[1.0, -2.0], [3.0, 0.5]]))
    >>> opt = ember.optim.Adafactor([w], lr=0.1)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([[ 0.9044, -1.7067],
            [ 2.7892,  0.4461]], requires_grad=True)
    >>> sorted(opt.state[w])
    ['col_var', 'row_var', 'step']
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-2,
                 beta2_decay: float = -0.8, eps: tuple[Optional[float], float] = (None, 1e-3),
                 d: float = 1.0, weight_decay: float = 0.0, *, foreach: Optional[bool] = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                p_state = self.state.get(p, {})
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = new_scalar(float(p_state["step"]))

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One Adafactor update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _init_state(self, p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            grad = p.grad
            if grad.dim() > 1:
                row_shape, col_shape = list(grad.shape), list(grad.shape)
                row_shape[-1] = 1
                col_shape[-2] = 1
                state["row_var"] = grad.new_zeros(row_shape)
                state["col_var"] = grad.new_zeros(col_shape)
            else:
                state["variance"] = zeros_like(grad)
        return state

    def _update(self, group: dict[str, Any]) -> None:
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:  # PyTorch checks every parameter before updating any
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
        states = [self._init_state(p) for p in params]
        lr = to_scalar(group["lr"])
        eps1, eps2 = group["eps"]
        if eps1 is None and params:
            # one value for the whole group, as in PyTorch: the first parameter's dtype's, or
            # with foreach that of the first dtype group its multi-tensor path visits, which
            # for two dtypes is the one met last (more: an order ember does not reproduce)
            dtypes = list(dict.fromkeys(p.dtype for p in params))
            eps1 = finfo(dtypes[-1] if group["foreach"] else dtypes[0]).eps
        for p, state in zip(params, states):
            self._update_one(p, state, group, lr, eps1, eps2)

    @staticmethod
    def _update_one(p: Tensor, state: dict[str, Any], group: dict[str, Any], lr: Any,
                    eps1: float, eps2: float) -> None:
        grad = p.grad if not group["maximize"] else -p.grad
        step_t = state["step"]
        step_t += 1
        step = step_t.item()
        beta2_weight = step ** group["beta2_decay"]  # 1 - beta2 at this step
        rho = min(lr, 1 / step ** 0.5)
        alpha = max(eps2, p.norm(2).item() / p.numel() ** 0.5) * rho
        wd = group["weight_decay"]
        if wd != 0:
            p.mul_(1 - lr * wd)
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            # mean of g ** 2 along a dim, through the norm (no g-sized temporary)
            row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)),
                          beta2_weight)
            col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)),
                          beta2_weight)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, beta2_weight)
            var_estimate = variance.clone()
        # eps1 squared: the square root below brings it back to eps1's scale
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * group["d"]))
        p.add_(update, alpha=-alpha / denom)


__all__ = ["Adafactor"]
