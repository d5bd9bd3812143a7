"""SparseAdam: Adam for sparse gradients. ember has no sparse tensors, so every gradient is
dense and, as in PyTorch, a step with one fails (use Adam instead)."""
from __future__ import annotations

from typing import Any, Optional, Union

from .optimizer import LossClosure, Optimizer, ParamsT
from .._tensor import Tensor


class SparseAdam(Optimizer):
    """PyTorch's SparseAdam: its argument checks, and its error at the first ``step`` that
    meets a dense gradient (ember's gradients are all dense); a step with no gradients at all
    does nothing.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.ones(2))
    >>> opt = ember.optim.SparseAdam([w], lr=0.1)
    >>> w.sum().backward()
    >>> opt.step()
    Traceback (most recent call last):
      ...
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead
    """

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
        """Runs the closure; fails on the first parameter with a (dense) gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        for p in group["params"]:
            if p.grad is not None:
                raise RuntimeError("SparseAdam does not support dense gradients, please "
                                   "consider Adam instead")


__all__ = ["SparseAdam"]
