"""Muon: momentum whose update is orthogonalized by a Newton-Schulz iteration (in bfloat16),
for the 2-D weights of hidden layers."""
from __future__ import annotations

import math
from typing import Any, Optional, Union

from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import zeros_like, to_scalar
from .._tensor import Tensor

_ADJUST_LR_FNS = ("original", "match_rms_adamw")


def _rounded_once(mat1: Tensor, mat2: Tensor, input: Optional[Tensor] = None,
                  beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """``beta * input + alpha * mat1 @ mat2`` (or the product alone) of bfloat16 matrices,
    computed in float32 and rounded to bfloat16 once, as PyTorch's reduced-precision
    mm and addmm do."""
    out = mat1.float() @ mat2.float()
    if alpha != 1:
        out = out.mul_(alpha)
    if input is not None:
        out = out.add_(input.float(), alpha=beta)
    return out.bfloat16()


def _orthogonalize(grad: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int,
                   eps: float) -> Tensor:
    """Newton-Schulz's quintic iteration toward the orthogonal factor of ``grad``
    (roughly ``U V^T`` of its SVD), in bfloat16, on the wide orientation of the matrix."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if tall:
        x = x.T
    # Frobenius norm >= spectral norm: singular values <= 1. In place, as PyTorch does: for
    # bfloat16 parameters without nesterov that rescales the momentum buffer itself
    x.div_(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = _rounded_once(x, x.T)
        poly = _rounded_once(gram, gram, gram, beta=b, alpha=c)
        x = _rounded_once(poly, x, x, beta=a)
    return x.T if tall else x


def _adjusted_lr(lr: Any, adjust_lr_fn: Optional[str], shape: tuple[int, ...]) -> Any:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """PyTorch's Muon, for 2-D parameters only: ``buf = lerp(buf, g, 1 - momentum)``; the
    update (``lerp(g, buf, momentum)`` with ``nesterov``, else ``buf``) is orthogonalized by
    ``ns_steps`` Newton-Schulz steps with coefficients ``ns_coefficients`` in bfloat16; then
    ``p *= 1 - lr * weight_decay`` and ``p -= lr' * update``, where ``lr'`` is ``lr`` scaled
    by ``sqrt(max(1, rows / cols))`` (``adjust_lr_fn=None`` or ``"original"``) or by
    ``0.2 * sqrt(max(rows, cols))`` (``"match_rms_adamw"``).

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([[2.0, 0.0], [0.0, 1.0]]))
    >>> opt = ember.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w  # steps near lr in both directions, though one gradient is twice the other
    Parameter containing:
    tensor([[1.9309, 0.0000],
            [0.0000, 0.8883]], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3,
                 weight_decay: float = 0.1, momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
                 eps: float = 1e-07, ns_steps: int = 5,
                 adjust_lr_fn: Optional[str] = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One Muon update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        params = [p for p in group["params"] if p.grad is not None]
        bufs = []
        for p in params:  # PyTorch checks and creates every buffer before updating any
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = zeros_like(p.grad)
            bufs.append(state["momentum_buffer"])
        lr, momentum, wd = to_scalar(group["lr"]), group["momentum"], group["weight_decay"]
        for p, buf in zip(params, bufs):
            grad = p.grad
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = _orthogonalize(update, group["ns_coefficients"], group["ns_steps"],
                                    group["eps"])
            adjusted = _adjusted_lr(lr, group["adjust_lr_fn"], tuple(p.shape))
            p.mul_(1 - lr * wd)
            p.add_(update, alpha=-adjusted)


__all__ = ["Muon"]
