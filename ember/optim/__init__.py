"""``ember.optim``: optimizers and learning-rate schedulers, as in ``torch.optim``.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
>>> opt = ember.optim.SGD([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([0.8000, 1.6000], requires_grad=True)
"""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .asgd import ASGD
from .rprop import Rprop
from .lbfgs import LBFGS
from .adafactor import Adafactor
from .muon import Muon
from .sparse_adam import SparseAdam
from ._stateless import swap_in_optimizer_params_and_state


def __getattr__(name):
    if name in ("lr_scheduler", "swa_utils"):  # imported on first use (import time)
        import importlib  # (not "from . import": that asks this __getattr__ again)
        return importlib.import_module(__name__ + "." + name)
    raise AttributeError(f"module 'ember.optim' has no attribute '{name}'")


__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS", "Adafactor", "Muon", "SparseAdam",
           "lr_scheduler", "swa_utils", "swap_in_optimizer_params_and_state"]
