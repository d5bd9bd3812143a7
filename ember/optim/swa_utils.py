"""Stochastic Weight Averaging and exponential moving averages of a model's weights:
``AveragedModel``, the ``SWALR`` schedule, ``update_bn``, and the averaging functions."""
from __future__ import annotations

import itertools
import math
from copy import deepcopy
from typing import Any, Callable, Iterable, Literal, Optional, Sequence, Union

from .._creation import tensor
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..backend.dtypes import int64
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from .lr_scheduler import LRScheduler, _format_param, _warn_get_lr_called_within_step
from .optimizer import Optimizer

ParamList = Sequence[Tensor]
#: ``avg_fn(averaged, current, num_averaged)``: the new average of one tensor
AvgFn = Callable[[Tensor, Tensor, Union[Tensor, int]], Tensor]
#: ``multi_avg_fn(averaged_list, current_list, num_averaged)``: updates the averages in place
MultiAvgFn = Callable[[ParamList, ParamList, Union[Tensor, int]], None]

#: devices whose tensors PyTorch averages with its multi-tensor (lerp) kernels by default
_FOREACH_DEVICES = ("cuda", "xpu", "mtia")


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def _lerps(first: Tensor) -> bool:
    """Float and complex averages move by ``lerp_``; integer ones by plain arithmetic."""
    return first.is_floating_point() or first.is_complex()


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """The in-place exponential moving average over lists of tensors:
    ``ema = decay * ema + (1 - decay) * current``.

    >>> import ember
    >>> ema, cur = [ember.tensor([1.0, 2.0])], [ember.tensor([3.0, 0.0])]
    >>> ember.optim.swa_utils.get_ema_multi_avg_fn(0.75)(ema, cur, 1)
    >>> ema[0]
    tensor([1.5000, 1.5000])
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: ParamList, current_param_list: ParamList, _: Any) -> None:
        if _lerps(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """The in-place equal-weight running average over lists of tensors:
    ``avg += (current - avg) / (num_averaged + 1)``.

    >>> import ember
    >>> avg, cur = [ember.tensor([1.0, 2.0])], [ember.tensor([4.0, 8.0])]
    >>> ember.optim.swa_utils.get_swa_multi_avg_fn()(avg, cur, ember.tensor(2))
    >>> avg[0]
    tensor([2., 4.])
    """
    @no_grad()
    def swa_update(averaged_param_list: ParamList, current_param_list: ParamList,
                   num_averaged: Union[Tensor, int]) -> None:
        if _lerps(averaged_param_list[0]):
            weight = 1 / (num_averaged + 1)
            if isinstance(weight, Tensor):  # a float32 0-d tensor, read as a number
                weight = weight.item()
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
            return
        diffs = [c - a for c, a in zip(current_param_list, averaged_param_list)]
        for p_avg, diff in zip(averaged_param_list, diffs):
            if isinstance(num_averaged, Tensor):
                p_avg.addcdiv_(diff, num_averaged + 1)
            else:
                p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """The exponential moving average of one tensor: ``decay * ema + (1 - decay) * current``.

    >>> import ember
    >>> ember.optim.swa_utils.get_ema_avg_fn(0.5)(ember.tensor([2.0]), ember.tensor([4.0]), 3)
    tensor([3.])
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """The equal-weight running average of one tensor:
    ``avg + (current - avg) / (num_averaged + 1)``.

    >>> import ember
    >>> ember.optim.swa_utils.get_swa_avg_fn()(ember.tensor([1.0]), ember.tensor([4.0]), 2)
    tensor([2.])
    """
    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor,
                   num_averaged: Union[Tensor, int]) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


def _group_by_device_and_dtype(averaged: list[Tensor], current: list[Tensor]
                               ) -> dict[tuple[Any, Any], tuple[list[Tensor], list[Tensor]]]:
    """Pairs grouped by the averaged tensor's device and dtype, groups in order of first
    appearance."""
    groups: dict[tuple[Any, Any], tuple[list[Tensor], list[Tensor]]] = {}
    for a, c in zip(averaged, current):
        group = groups.setdefault((a.device, a.dtype), ([], []))
        group[0].append(a)
        group[1].append(c)
    return groups


class AveragedModel(Module):
    """A copy of ``model`` (on ``device`` if given) whose parameters are running averages
    of ``model``'s, updated by ``update_parameters(model)``: equal weights (SWA) by default,
    or ``avg_fn`` (per tensor) / ``multi_avg_fn`` (per list). The first update copies the
    parameters. ``use_buffers=True`` averages the buffers too; otherwise they are copied
    from ``model``. ``n_averaged`` (a buffer, so in ``state_dict`` next to ``module.*``)
    counts the updates.

    >>> import ember
    >>> model = ember.nn.Linear(1, 1, bias=False)
    >>> swa = ember.optim.swa_utils.AveragedModel(model)
    >>> for value in (1.0, 2.0, 6.0):
    ...     with ember.no_grad():
    ...         _ = model.weight.fill_(value)
    ...     swa.update_parameters(model)
    >>> swa.module.weight, swa.n_averaged
    (Parameter containing:
    tensor([[3.]], requires_grad=True), tensor(3))
    >>> list(swa.state_dict())
    ['n_averaged', 'module.weight']
    """
    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None, avg_fn: Optional[AvgFn] = None,
                 multi_avg_fn: Optional[MultiAvgFn] = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged module's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers with ``use_buffers``) into the
        averages; the first call copies them."""
        if self.use_buffers:
            own = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            own, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(own, theirs):
            p_model_ = p_model.detach().to(p_avg.device)
            averaged.append(p_avg.detach())
            current.append(p_model_)
            if first:
                p_avg.detach().copy_(p_model_)
        if self.n_averaged > 0:
            self._average(averaged, current)
        if not self.use_buffers:  # buffers follow the source model
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1

    def _average(self, averaged: list[Tensor], current: list[Tensor]) -> None:
        if self.multi_avg_fn is None and self.avg_fn is not None:
            for p_avg, p_model in zip(averaged, current, strict=True):
                n_averaged = self.n_averaged.to(p_avg.device)
                p_avg.detach().copy_(self.avg_fn(p_avg.detach(), p_model, n_averaged))
            return
        groups = _group_by_device_and_dtype(averaged, current)
        for (device, _), (own, theirs) in groups.items():
            n_averaged = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(own, theirs, n_averaged)
            elif device.type in _FOREACH_DEVICES:  # PyTorch's multi-tensor default there
                get_swa_multi_avg_fn()(own, theirs, n_averaged)
            else:
                avg_fn = get_swa_avg_fn()
                for p_avg, p_model in zip(own, theirs, strict=True):
                    p_avg.copy_(avg_fn(p_avg, p_model, n_averaged))


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s batch-norm layers with one pass over
    ``loader`` (each batch a tensor, or a list/tuple whose first item is the input), as
    cumulative averages; the layers' momenta and the model's mode are restored after.

    >>> import ember
    >>> model = ember.nn.BatchNorm1d(1)
    >>> loader = [ember.tensor([[1.0], [3.0]]), (ember.tensor([[5.0], [7.0]]), None)]
    >>> ember.optim.swa_utils.update_bn(loader, model)
    >>> model.running_mean, model.num_batches_tracked
    (tensor([4.]), tensor(2))
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None  # a cumulative average over the whole pass
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to ``swa_lr`` (a number, or one per group) over
    ``anneal_epochs`` epochs, along a half cosine (``anneal_strategy='cos'``) or a line
    (``'linear'``), then holds it there.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=1.0)
    >>> sched = ember.optim.swa_utils.SWALR(opt, swa_lr=0.5, anneal_epochs=2,
    ...                                     anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.75, 0.5, 0.5]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: Union[float, list[float]],
                 anneal_epochs: int = 10, anneal_strategy: Literal["cos", "linear"] = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal

    def get_lr(self) -> list[Any]:
        """The next lrs: the schedule's start is recovered from the current lrs (so SWALR
        composes with a scheduler run before it), then moved one step toward ``swa_lr``."""
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes; the annealing function follows ``_anneal_strategy``."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)


__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]
