"""``GradScaler``: dynamic loss scaling (scale, unscale_, step, update)."""
import math
import warnings

from .. import _functions as F
from .._creation import tensor
from ..backend.dtypes import float32
from ..autograd.grad_mode import no_grad
from ..backend import device_module
from ..device import device as _device

# Where each optimizer is in the scale -> unscale_ -> step -> update cycle.
_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


class GradScaler:
    """Scales the loss by ``scale``; halves it (``backoff_factor``) when gradients
    overflow and the step is skipped, doubles it (``growth_factor``) after
    ``growth_interval`` clean steps.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.ones(2))
    >>> opt = ember.optim.SGD([w], lr=0.1)
    >>> scaler = ember.amp.GradScaler("cpu")
    >>> scaler.scale((w * w).sum()).backward()
    >>> scaler.step(opt); scaler.update()
    >>> w
    Parameter containing:
    tensor([0.8000, 0.8000], requires_grad=True)
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = _device(device).type
        if enabled and self._device == "cuda" and device_module("cuda") is None:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._scale_value = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval, self._growth_tracker = int(growth_interval), 0
        self._per_optimizer = {}  # id(optimizer) -> {"stage": ..., "found_inf": bool}

    def is_enabled(self):
        return self._enabled

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY,
                                                              "found_inf": False})

    def scale(self, outputs):
        """``outputs * scale`` (a tensor, or nested lists/tuples of tensors)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * tensor(self._scale_value, dtype=float32, device=outputs.device)

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale in place, noting overflows."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = {}  # device -> 1 / scale there (a float32 scalar tensor, as PyTorch's)
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    where = p.grad.device
                    if where not in inv_scale:
                        inv_scale[where] = tensor(1.0 / self._scale_value, dtype=float32,
                                                  device=where)
                    p.grad.mul_(inv_scale[where])
                    found_inf = found_inf or _has_inf_or_nan(p.grad)
        state["stage"], state["found_inf"] = _UNSCALED, found_inf

    def step(self, optimizer, *args, **kwargs):
        """Unscales (if not done yet) and runs ``optimizer.step`` unless gradients
        overflowed; returns what the step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._state(optimizer)
        if state["stage"] is _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None):
        """Adjusts the scale for the next iteration (or sets ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale_value = float(new_scale)
        else:
            checked = [s for s in self._per_optimizer.values() if s["stage"] is not _READY]
            if not checked:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in checked):
                self._scale_value *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale_value *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer.clear()

    def get_scale(self):
        return self._scale_value if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self):
        return self._growth_tracker if self._enabled else 0

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self._scale_value, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale_value = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])



def _has_inf_or_nan(grad):
    return bool(F.isnan(grad).any()) or bool((grad.abs() == math.inf).any())
