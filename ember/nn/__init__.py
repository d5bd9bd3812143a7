"""``ember.nn``: Modules, Parameters, layers, losses, init and utilities.

>>> import ember
>>> from ember import nn
>>> class Twice(nn.Module):
...     def forward(self, x):
...         return 2 * x
>>> Twice()(ember.ones(2))
tensor([2., 2.])
"""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import *  # noqa: F401,F403
from .modules import Module, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from . import functional, init, utils, parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401
# nn.utils.parametrize(ations) build on the modules, which nn.utils precedes: loaded here
from .utils import parametrize as _parametrize, parametrizations as _parametrizations  # noqa: E402
del _parametrize, _parametrizations
