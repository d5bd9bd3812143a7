"""``DataParallel`` and ``data_parallel`` as a CPU-only PyTorch build has them.

ember has no accelerator, so there is nothing to split a batch across: DataParallel wraps
the module (``.module``, state_dict keys prefixed ``module.``) and runs it as it is, the
way PyTorch's DataParallel does when no GPU is found; ``data_parallel`` raises PyTorch's
error for that case.
"""
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Run ``module`` on the batch; with no accelerator it is called as it is
    (``device_ids`` becomes ``[]``), and its parameters appear under ``module.``.

    >>> import ember, ember.nn as nn
    >>> model = nn.DataParallel(nn.Linear(2, 3))
    >>> list(model.state_dict())
    ['module.weight', 'module.bias']
    >>> model(ember.ones(4, 2)).shape
    ember.Size([4, 3])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        # PyTorch's CPU path keeps only these two attributes
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """The functional DataParallel. It needs an accelerator: without one (always, in
    ember) it raises PyTorch's ``RuntimeError``.

    >>> import ember, ember.nn as nn
    >>> try:
    ...     nn.parallel.data_parallel(nn.Linear(2, 3), ember.ones(4, 2))
    ... except RuntimeError as e:
    ...     print(e)
    device type could not be determined
    """
    raise RuntimeError("device type could not be determined")
