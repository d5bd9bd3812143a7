"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from typing import Any, Optional, Union

from .._tensor import Tensor
from ..backend import kernels as _kernels
from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import (_lr_check, reject_differentiable, check_fused, check_fused_params,
                      to_scalar)


class SGD(Optimizer):
    """PyTorch's SGD: ``buf = momentum * buf + (1 - dampening) * g``;
    ``p -= lr * (g + momentum * buf if nesterov else buf)``.

    ``foreach`` and ``fused`` are accepted for PyTorch compatibility and select no other
    kernel (the arithmetic is the same); their argument checks are PyTorch's.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w ** 2).sum().backward()
    ...     opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.4600, -0.9200], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: Optional[bool] = None,
                 differentiable: bool = False, fused: Optional[bool] = None) -> None:
        _lr_check(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if not fused:  # PyTorch's fused check below names the conflict
            reject_differentiable("SGD", differentiable)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def step(self, closure: Optional[LossClosure] = None) -> Any:
        """One SGD update of every parameter that has a gradient."""
        return self._run_step(closure, self._update)

    def _update(self, group: dict[str, Any]) -> None:
        check_fused_params(group)
        lr, momentum, dampening = to_scalar(group["lr"]), group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        if not group["differentiable"] and not any(
                isinstance(v, Tensor) for v in (lr, momentum, dampening, weight_decay)):
            return self._update_arrays(group)
        for p in group["params"]:
            if p.grad is None:
                continue
            grad = p.grad if not group["maximize"] else -p.grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = grad.clone().detach()
                    state["momentum_buffer"] = buf
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if nesterov else buf
            p.add_(grad, alpha=-lr)

    def _update_arrays(self, group: dict[str, Any]) -> None:
        """The same update in place on the arrays: no temporaries beyond ``lr * step``, no
        graph; version counters of parameters and buffers still bump."""
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        maximize = group["maximize"]
        state = self.state
        for p in group["params"]:
            g = p._grad
            if g is None:
                continue
            pd = p._data
            gd = g._data
            if maximize:
                gd = -gd
            if weight_decay != 0:
                gd = gd + weight_decay * pd
            if momentum != 0:
                st = state[p]
                buf = st.get("momentum_buffer")
                if buf is None:
                    st["momentum_buffer"] = Tensor._make(gd.copy())
                    bd = gd
                elif (dampening == 0 and not nesterov and type(lr) in (float, int)
                      and type(momentum) in (float, int)
                      and _kernels.native_for(pd, gd, buf._data) and pd.shape == gd.shape):
                    # the three passes below as one: buf = buf * momentum + g; p -= lr * buf
                    _kernels.sgd_momentum_(pd, gd, buf._data, lr, momentum)
                    buf._vc[0] += 1
                    p._vc[0] += 1
                    continue
                else:
                    bd = buf._data
                    bd *= momentum
                    if dampening != 0:
                        bd += (1 - dampening) * gd
                    else:
                        bd += gd
                    buf._vc[0] += 1
                gd = gd + momentum * bd if nesterov else bd
            if type(lr) in (float, int) and pd.shape == gd.shape and _kernels.native_for(pd, gd):
                _kernels.sub_scaled_(pd, lr, gd)  # one pass, no temporary; NumPy's bits
            else:
                pd -= lr * gd
            p._vc[0] += 1


__all__ = ["SGD"]
