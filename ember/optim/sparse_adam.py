"""SparseAdam: Adam for sparse gradients (``nn.Embedding(sparse=True)``'s): only the rows a
gradient names have their moments and values updated."""
from __future__ import annotations

import math
from typing import Any, Optional, Union

from .optimizer import LossClosure, Optimizer, ParamsT
from .._tensor import Tensor
from .._creation import zeros_like
from .._sparse.tensor import accumulate_


class SparseAdam(Optimizer):
    """PyTorch's SparseAdam: Adam's update on the rows a sparse gradient names (its moments
    elsewhere are left as they are); a dense gradient raises PyTorch's error.

    >>> import ember
    >>> emb = ember.nn.Embedding(4, 2, sparse=True)
    >>> opt = ember.optim.SparseAdam(emb.parameters(), lr=0.1)
    >>> before = emb.weight.detach().clone()
    >>> emb(ember.tensor([1])).sum().backward()
    >>> opt.step()
    >>> (emb.weight != before).any(1).tolist()  # only the row looked up moved
    [False, True, False, False]
    """
    _sparse_gradient_error = None  # sparse gradients update only their rows

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas[:2]):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """Runs the closure, then one update of each parameter with a sparse gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        lr = group["lr"]
        beta1, beta2 = group["betas"]
        eps = group["eps"]
        for p in group["params"]:
            if p.grad is None:
                continue
            grad = p.grad
            if not grad.is_sparse:
                raise RuntimeError("SparseAdam does not support dense gradients, please "
                                   "consider Adam instead")
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
            grad = (-grad if group["maximize"] else grad).coalesce()
            values = grad._values()
            if values.numel() == 0:
                continue
            idx = grad._indices()
            at = tuple(idx[d] for d in range(idx.shape[0]))
            state["step"] += 1
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            # old <- b * old + (1 - b) * new, written old += (1 - b) * (new - old)
            old_avg = exp_avg[at]
            avg_step = (values - old_avg).mul_(1 - beta1)
            accumulate_(exp_avg, idx, avg_step)
            old_sq = exp_avg_sq[at]
            sq_step = values.pow(2).sub_(old_sq).mul_(1 - beta2)
            accumulate_(exp_avg_sq, idx, sq_step)
            numer = avg_step.add_(old_avg)
            denom = sq_step.add_(old_sq).sqrt_().add_(eps)
            step = state["step"]
            step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
            accumulate_(p, idx, numer.div_(denom) * -step_size)


__all__ = ["SparseAdam"]
