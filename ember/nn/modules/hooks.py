"""Module hooks: forward pre-hooks, forward hooks and full backward hooks, per module
and global (``register_module_*``: they run before every module's own hooks).

Full backward hooks work as in PyTorch: the module's tensor inputs and
outputs pass through identity Functions whose backward nodes see the
gradients with respect to the outputs (``grad_output``, first) and then to the
inputs (``grad_input``); the hooks run there and may replace them.
"""
import itertools
import warnings
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.function import Function
from ...autograd.graph import RemovableHandle

_ids = itertools.count()


# global hooks: one registry per kind, shared by every Module
global_forward_pre_hooks = OrderedDict()
global_forward_hooks = OrderedDict()
global_forward_hooks_always_called = set()
global_forward_hooks_with_kwargs = set()
global_backward_pre_hooks = OrderedDict()
global_backward_hooks = OrderedDict()
global_buffer_registration_hooks = OrderedDict()
global_module_registration_hooks = OrderedDict()
global_parameter_registration_hooks = OrderedDict()


def has_global_hooks():
    return bool(global_forward_pre_hooks or global_forward_hooks or global_backward_pre_hooks
                or global_backward_hooks)


def add_global(hooks, hook):
    key = next(_ids)
    hooks[key] = hook
    return RemovableHandle(hooks, key)


def run_registration_hooks(hooks, module, name, value):
    """``hook(module, name, value)`` for each global registration hook; one may return a
    replacement value."""
    for hook in list(hooks.values()):
        result = hook(module, name, value)
        if result is not None:
            value = result
    return value


def add(module, attr, hook, prepend, kwargs_attr):
    hooks = getattr(module, attr)
    key = next(_ids)
    hooks[key] = hook
    if prepend:
        hooks.move_to_end(key, last=False)
    if kwargs_attr is not None:
        getattr(module, kwargs_attr).add(key)
    return RemovableHandle(hooks, key)


def call_with_hooks(module, args, kwargs):
    pre_hooks = (*global_forward_pre_hooks.items(), *module._forward_pre_hooks.items())
    for key, hook in pre_hooks:
        if key in module._forward_pre_hooks_with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    state = None
    if (module._backward_hooks or module._backward_pre_hooks or global_backward_hooks
            or global_backward_pre_hooks) and grad_mode.is_grad_enabled():
        state = _BackwardHookState(module)
        args = state.wrap_inputs(args)
    called = set()
    output = None
    try:
        output = module.forward(*args, **kwargs)
        for key, hook in (*global_forward_hooks.items(), *module._forward_hooks.items()):
            called.add(key)
            result = _call_forward_hook(module, key, hook, args, kwargs, output)
            if result is not None:
                output = result
    except Exception:
        _call_always_hooks(module, called, args, kwargs, output)
        raise
    if state is not None:
        output = state.wrap_outputs(output)
    return output


def _call_forward_hook(module, key, hook, args, kwargs, output):
    if key in module._forward_hooks_with_kwargs or key in global_forward_hooks_with_kwargs:
        return hook(module, args, kwargs, output)
    return hook(module, args, output)


def _call_always_hooks(module, called, args, kwargs, output):
    """After forward (or a forward hook) raised: the ``always_call`` hooks not yet run get
    the output so far (None when forward raised); what they raise becomes a warning and the
    first error goes on."""
    for scope, hooks, always in (("global module", global_forward_hooks,
                                  global_forward_hooks_always_called),
                                 ("module", module._forward_hooks,
                                  module._forward_hooks_always_called)):
        for key, hook in list(hooks.items()):
            if key in called or key not in always:
                continue
            try:
                # as in PyTorch, a global hook gets no kwargs here even if registered for them
                result = hook(module, args, output) if hooks is global_forward_hooks else \
                    _call_forward_hook(module, key, hook, args, kwargs, output)
                if result is not None:
                    output = result
            except Exception as error:
                warnings.warn(f"{scope} forward hook with ``always_call=True`` raised an "
                              f"exception that was silenced as another error was raised in "
                              f"forward: {error}", stacklevel=3)


class _Identity(Function):
    """Passes tensors through; its backward hands their gradients to the hook state."""

    @staticmethod
    def forward(ctx, state, role, *tensors):
        ctx.state, ctx.role = state, role
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        grads = ctx.state.on_backward(ctx.role, grads)
        return (None, None) + tuple(grads)


class _BackwardHookState:
    def __init__(self, module):
        self.module = module
        self.grad_outputs = None
        self.input_positions = []
        self.n_inputs = 0

    def wrap_inputs(self, args):
        self.n_inputs = len(args)
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        self.input_positions = positions
        if not positions:
            return args
        wrapped = _Identity.apply(self, "input", *[args[i] for i in positions])
        args = list(args)
        for i, t in zip(positions, wrapped):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, output):
        single = isinstance(output, Tensor)
        outs = (output,) if single else output
        if not isinstance(outs, tuple):
            return output
        positions = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
        if not positions:
            return output
        wrapped = _Identity.apply(self, "output", *[outs[i] for i in positions])
        outs = list(outs)
        for i, t in zip(positions, wrapped):
            outs[i] = t
        return outs[0] if single else tuple(outs)

    def on_backward(self, role, grads):
        module = self.module
        if role == "output":
            pre_hooks = (*global_backward_pre_hooks.values(),
                         *module._backward_pre_hooks.values())
            for hook in pre_hooks:
                result = hook(module, tuple(grads))
                if result is not None:
                    grads = tuple(result)
            self.grad_outputs = tuple(grads)
            if not self.input_positions:  # no input needs a gradient: call the hooks now
                self._call_hooks((None,) * self.n_inputs)
            return grads
        grad_input = [None] * self.n_inputs
        for i, g in zip(self.input_positions, grads):
            grad_input[i] = g
        grad_input = self._call_hooks(tuple(grad_input))
        return [grad_input[i] for i in self.input_positions]

    def _call_hooks(self, grad_input):
        module = self.module
        for hook in (*global_backward_hooks.values(), *module._backward_hooks.values()):
            result = hook(module, grad_input, self.grad_outputs)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                       f"got {len(result)}, but expected {len(grad_input)}")
                grad_input = result
        return grad_input


__all__ = ["RemovableHandle"]
