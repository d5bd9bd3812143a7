"""Helpers shared by the optimizers (state tensors, scalar steps, argument checks)."""
from .._creation import tensor, zeros_like, full_like  # noqa: F401
from .._functions import maximum  # noqa: F401
from .._tensor import Tensor
from ..backend.dtypes import get_default_dtype, float64, float32

#: the devices PyTorch's ``capturable=True`` requires (CUDA graphs); ember has none of them
_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


def scalar_dtype():
    """The dtype of per-parameter scalar state (``step``, NAdam's ``mu_product``...):
    float64 when it is the default dtype, else float32, as in PyTorch."""
    return float64 if get_default_dtype() == float64 else float32


def new_step():
    """The per-parameter step counter: a 0-dim float tensor, as PyTorch stores it."""
    return tensor(0.0, dtype=scalar_dtype())


def new_scalar(value):
    """A 0-dim state tensor of the scalar dtype holding ``value`` (a number or a tensor)."""
    return tensor(to_number(value), dtype=scalar_dtype())


def as_tensor(x):
    """``x`` if it is a tensor, else a 0-dim tensor of the default dtype."""
    return x if isinstance(x, Tensor) else tensor(x)


def to_number(x):
    """A tensor hyperparameter (``lr=torch.tensor(0.01)``) as a Python number; numbers pass."""
    return x.item() if isinstance(x, Tensor) else x


def to_scalar(x):
    """A 1-element tensor hyperparameter as a 0-dim tensor (arithmetic with it then rounds
    in its dtype, as PyTorch's does); numbers pass unchanged."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def check_positive(name, value, label=None):
    if not 0.0 <= value:
        raise ValueError(f"Invalid {label or name} value: {value}")


def _lr_check(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _eps_check(eps):
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")


def _weight_decay_check(weight_decay):
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _betas_check(betas):
    for i, beta in enumerate(betas[:2]):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def check_foreach_differentiable(group):
    """PyTorch's multi-tensor kernels are not recorded by autograd: ``foreach=True`` with
    ``differentiable=True`` fails the step (once the state is made), as there."""
    if group["foreach"] and group["differentiable"]:
        raise AssertionError("_foreach ops don't support autograd")


def weight_decayed(grad, p, weight_decay):
    """``grad + weight_decay * p``; a weight decay tensor that requires grad is multiplied
    in (into ``grad`` itself, as PyTorch's differentiable step does) so that autograd
    sees it, where ``alpha=`` would take a number only."""
    if isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
        return grad.addcmul_(p.clone(), weight_decay)
    return grad.add(p, alpha=weight_decay)


#: the devices PyTorch names in its ``fused=True`` parameter check
_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def check_fused(fused, foreach, differentiable):
    """PyTorch's construction-time checks of ``fused=True``. ember runs the same arithmetic
    with or without the flag (there is no separate fused kernel), so only these checks and
    the parameter check below differ."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def check_fused_params(group):
    """``fused=True`` needs floating-point parameters: PyTorch checks those with a gradient
    when it first steps them."""
    if group.get("fused"):
        for p in group["params"]:
            if p.grad is not None and not p.is_floating_point():
                raise RuntimeError(f"`fused=True` requires all the params to be floating point "
                                   f"Tensors of supported devices: {_FUSED_DEVICES} but "
                                   f"{p.dtype} and {p.device.type}")


def check_capturable(group, params, what="params and state_steps", devices=None):
    """``capturable=True`` needs parameters on a CUDA-graph device; on a CPU-only build
    PyTorch fails the first step with this AssertionError, and so does ember."""
    if group["capturable"] and params:
        devices = _CAPTURABLE_DEVICES if devices is None else devices
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: "
                             f"{devices}.")
