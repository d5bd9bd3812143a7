"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from typing import Any, Optional, Union

from .._tensor import Tensor
from ..backend import kernels as _kernels
from .optimizer import LossClosure, Optimizer, ParamsT, has_sparse_grad
from ._common import _lr_check, check_fused, check_fused_params, to_scalar, weight_decayed


def _foreach_alpha_error(fn, first="list"):
    """PyTorch's multi-tensor SGD passes weight_decay and ``-lr`` as ``alpha=`` to
    ``_foreach_add(_)``, whose argument parser refuses a tensor that requires grad."""
    return TypeError(
        f"{fn}() received an invalid combination of arguments - got ({first}, list, "
        "alpha=Tensor), but expected one of:\n"
        " * (tuple of Tensors self, Number scalar)\n"
        " * (tuple of Tensors self, tuple of Scalars scalars)\n"
        " * (tuple of Tensors self, Tensor other, *, Number alpha = 1)\n"
        " * (tuple of Tensors self, tuple of Tensors other, *, Number alpha = 1)\n")


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

    ``differentiable=True`` records the step for autograd (the parameters are then
    non-leaf tensors, or leaves that do not require grad), here for the gradient of the
    updated parameters w.r.t. a tensor lr:

    >>> w0 = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> lr = ember.tensor(0.1, requires_grad=True)
    >>> p = w0.clone()
    >>> p.grad = ember.tensor([0.5, 1.0])
    >>> ember.optim.SGD([p], lr=lr, differentiable=True).step()
    >>> ember.autograd.grad(p.sum(), lr)
    (tensor(-1.5000),)
    """
    _sparse_gradient_error = None  # sparse gradients update only their rows

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
                isinstance(v, Tensor) for v in (lr, momentum, dampening, weight_decay)) \
                and not has_sparse_grad(group):
            return self._update_arrays(group)
        if group["foreach"] and any(p.grad is not None for p in group["params"]):
            wd_needs_grad = isinstance(weight_decay, Tensor) and weight_decay.requires_grad
            if weight_decay != 0 and wd_needs_grad:
                raise (_foreach_alpha_error("_foreach_add_", "tuple") if group["maximize"]
                       else _foreach_alpha_error("_foreach_add"))
            if group["differentiable"] and isinstance(lr, Tensor) and lr.requires_grad:
                raise _foreach_alpha_error("_foreach_add_")
        for p in group["params"]:
            if p.grad is None:
                continue
            grad = p.grad if not group["maximize"] else -p.grad
            if weight_decay != 0:
                grad = weight_decayed(grad, p, weight_decay)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    # detached, as in PyTorch: the first step's update carries no gradient
                    # back to the gradient it was made from
                    buf = grad.detach().clone()
                    state["momentum_buffer"] = buf
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if nesterov else buf
            if isinstance(lr, Tensor) and lr.requires_grad:
                p.addcmul_(grad, lr, value=-1)  # alpha= takes a number, not a graph node
            else:
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
