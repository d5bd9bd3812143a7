"""``DistributedDataParallel``: one model replica per process, gradients averaged by MPI.

At construction rank 0's parameters and buffers are broadcast to every rank; each
synchronised forward broadcasts the buffers again (``broadcast_buffers``) and arms the
reducer (``ember.distributed.reducer``), which all-reduces the gradients in buckets while
backward runs and leaves every rank's ``.grad`` equal to the average over the ranks.
"""
import contextlib

from ... import distributed as dist
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...distributed.reducer import Reducer
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


def _refuse(name, value, default):
    if value is not default and value != default:
        raise NotImplementedError(f"DistributedDataParallel({name}={value!r}) is not supported "
                                  "by ember")


class DistributedDataParallel(Module):
    """Wrap ``module`` so that backward averages its gradients over the ranks of the
    default process group (or ``process_group``).

    ``bucket_cap_mb`` (default 25) sizes the gradient buckets; ``find_unused_parameters``
    lets some parameters go without a gradient in a pass; ``no_sync()`` accumulates
    gradients locally; ``.module`` is the wrapped module (state_dict keys ``module.*``).

    >>> import ember.nn as nn
    >>> try:
    ...     nn.parallel.DistributedDataParallel(nn.Linear(2, 2))
    ... except ValueError as e:
    ...     print(e)
    Default process group has not been initialized, please make sure to call init_process_group.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        super().__init__()
        group = dist.process_group.default_group(process_group)
        for name, value, default in [
                ("gradient_as_bucket_view", gradient_as_bucket_view, False),
                ("static_graph", static_graph, False),
                ("delay_all_reduce_named_params", delay_all_reduce_named_params, None),
                ("param_to_hook_all_reduce", param_to_hook_all_reduce, None),
                ("mixed_precision", mixed_precision, None), ("device_mesh", device_mesh, None),
                ("skip_all_reduce_unused_params", skip_all_reduce_unused_params, False),
                ("bucket_cap_mb_list", bucket_cap_mb_list, None),
                ("batched_grad_copy", batched_grad_copy, False)]:
            _refuse(name, value, default)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids or output_device is not None:
            devices = {p.device for p in module.parameters()}
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                f"{devices}.")
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.process_group = group
        self.broadcast_buffers = True if broadcast_buffers is None else broadcast_buffers
        self.forward_sync_buffers = (self.broadcast_buffers if forward_sync_buffers is None
                                     else forward_sync_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb)
                                    * 1024 * 1024)
        if init_sync:
            self._broadcast_state(list(module.parameters()) + list(module.buffers()))
        self.reducer = Reducer(params, group, self.bucket_bytes_cap, find_unused_parameters)

    def _broadcast_state(self, tensors):
        """Rank 0's values of ``tensors`` on every rank."""
        src = self.process_group.ranks[0]
        with no_grad():
            for t in tensors:
                dist.broadcast(t, src=src, group=self.process_group)

    def forward(self, *inputs, **kwargs):
        if self.forward_sync_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast_state(buffers)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward()
        else:
            self.reducer.disarm()
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes of forwards run inside accumulate gradients locally; the first
        synchronised backward after it averages the accumulated sums.

        >>> import ember.nn as nn
        >>> nn.parallel.DistributedDataParallel.no_sync.__doc__.split()[0]
        'Backward'
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
