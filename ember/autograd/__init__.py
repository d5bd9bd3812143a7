"""Reverse-mode automatic differentiation.

>>> import ember
>>> x = ember.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x ** 3).sum()
>>> g, = ember.autograd.grad(y, x, create_graph=True)   # 3x^2
>>> g
tensor([ 3., 12.], grad_fn=<MulBackward0>)
>>> g.sum().backward(); x.grad                          # 6x
tensor([ 6., 12.])
"""
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                        is_grad_enabled, is_inference_mode_enabled)
from .grad_mode import set_multithreading_enabled, is_multithreading_enabled  # noqa: F401
from . import anomaly_mode  # noqa: F401  (PyTorch's module name for detect_anomaly & co.)
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .anomaly import (detect_anomaly, set_detect_anomaly, is_anomaly_enabled,  # noqa: F401
                      is_anomaly_check_nan_enabled)
from .graph import Node, gradient_edge  # noqa: F401
from .backprop import backward, grad  # noqa: F401
from . import gradcheck  # noqa: F401  (a callable module: gradcheck(...) and gradcheck.gradcheck(...))
from .gradcheck import gradgradcheck, GradcheckError  # noqa: F401
from . import forward_ad  # noqa: F401
from . import tensor_members  # noqa: F401  (attaches Tensor's autograd members)
from . import variable  # noqa: F401  (PyTorch's module name for Variable)
from .variable import Variable  # noqa: F401


def __getattr__(name):
    if name in ("functional", "profiler"):  # they build on later layers: imported on use
        import importlib  # (not "from . import": that asks this __getattr__ again)
        return importlib.import_module(__name__ + "." + name)
    raise AttributeError(f"module 'ember.autograd' has no attribute '{name}'")
