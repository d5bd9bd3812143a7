"""Dispatch on ember and torch: the ops a logging mode sees for simple programs (where
ember's Primitives are ATen's ops) and a wrapper subclass's values and gradients."""
import numpy as np
import pytest
import torch
import torch.utils._python_dispatch as torch_dispatch
import torch.utils._pytree as torch_pytree

import ember
import ember.utils._python_dispatch as ember_dispatch
import ember.utils._pytree as ember_pytree
from tests.overrides.dispatch_helpers import logging_mode, logging_tensor

MODE_BASE = {torch: torch_dispatch.TorchDispatchMode, ember: ember_dispatch.TorchDispatchMode}
TREE_MAP = {torch: torch_pytree.tree_map, ember: ember_pytree.tree_map}

rng = np.random.default_rng(0)
A = rng.standard_normal((2, 3)).astype(np.float32)
B = rng.standard_normal((3, 4)).astype(np.float32)

# Programs whose ops are the same on both: ember's Primitive is ATen's op.
PROGRAMS = {
    "mm_relu_mean": lambda lib, a, b: lib.mm(a, b).relu().mean(),
    "arith_scalar": lambda lib, a, b: (a * 2 - 1) / 3,
    "sum_dim": lambda lib, a, b: a.sum(1),
    "exp_sub": lambda lib, a, b: a.exp() - a,
    "views": lambda lib, a, b: (a.view(6), a.t(), a.transpose(0, 1), a.unsqueeze(0),
                                a.permute(1, 0)),
    "select": lambda lib, a, b: a[0],
    "cat": lambda lib, a, b: lib.cat([a, a], 0),
    "unary": lambda lib, a, b: (a.neg(), a.abs(), a.sin(), a.tanh(), a.sigmoid(), a.clone()),
    "pow_cmp_where": lambda lib, a, b: lib.where(a > 0, a ** 2, a),
    "softmax": lambda lib, a, b: a.softmax(-1),
    "max_min": lambda lib, a, b: (a.max(), a.min(), a.amax(1), a.argmax()),
    "bmm": lambda lib, a, b: lib.bmm(a.unsqueeze(0), b.unsqueeze(0)),
    "maximum_clamp": lambda lib, a, b: lib.maximum(a, a.neg()).clamp(0.5),
}


def _run_logged(lib, program):
    mode = logging_mode(lib, MODE_BASE[lib])()
    a, b = lib.tensor(A), lib.tensor(B)
    with mode:
        out = program(lib, a, b)
    return mode.ops, out


def _values(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [o.detach().numpy() for o in outs]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_mode_sees_the_same_ops(name):
    t_ops, t_out = _run_logged(torch, PROGRAMS[name])
    e_ops, e_out = _run_logged(ember, PROGRAMS[name])
    assert e_ops == t_ops
    for t, e in zip(_values(t_out), _values(e_out)):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


# ember's reductions go back through their own op where ATen expands.
EMBER_TO_ATEN = {"aten.expand_back.default": "aten.expand.default"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mode_sees_backward_ops(dtype):
    v = np.array([0.5, 1.0, 2.0], dtype=dtype)
    logs, grads = {}, {}
    for lib in (torch, ember):
        x = lib.tensor(v, requires_grad=True)
        mode = logging_mode(lib, MODE_BASE[lib])()
        with mode:
            x.sin().sum().backward()
        logs[lib] = [EMBER_TO_ATEN.get(op, op) for op in mode.ops]
        grads[lib] = x.grad.numpy()
    assert logs[ember] == logs[torch]
    np.testing.assert_allclose(grads[ember], grads[torch], rtol=1e-6)
    assert grads[ember].dtype == dtype


def _wrapped_run(lib, program, arrays, requires_grad, noncontiguous=False):
    log = []
    cls = logging_tensor(lib, TREE_MAP[lib], log)
    if noncontiguous:  # wrap transposed views: the wrappers take their strides
        elems = [lib.tensor(np.ascontiguousarray(a.T)).T for a in arrays]
    else:
        elems = [lib.tensor(a) for a in arrays]
    inputs = [cls(e, requires_grad=requires_grad) for e in elems]
    if noncontiguous:
        assert not inputs[0].is_contiguous() and inputs[0].stride() == elems[0].stride()
    out = program(lib, *inputs)
    grads = None
    if requires_grad:
        out.backward()
        grads = [x.grad for x in inputs]
    return log, out, grads, cls


WRAPPED = {
    "sin_sum": lambda lib, a, b: a.sin().sum(),
    "mm_tanh_mean": lambda lib, a, b: lib.mm(a, b).tanh().mean(),
    "exp_mul": lambda lib, a, b: (a.exp() * a).sum(),
    "broadcast": lambda lib, a, b: (a.sum(0, keepdim=True).T * b).sum(),
    "linear": lambda lib, a, b: lib.nn.functional.linear(a, b.T, b[0]).sigmoid().sum(),
}
# ember's linear is one op (aten.linear), ATen's is t + addmm: values compared, not ops
OPS_DIFFER = {"linear"}


@pytest.mark.parametrize("noncontiguous", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(WRAPPED))
def test_wrapper_subclass_values_and_gradients(name, dtype, noncontiguous):
    arrays = [A.astype(dtype), B.astype(dtype)]
    t_log, t_out, t_grads, _ = _wrapped_run(torch, WRAPPED[name], arrays, True, noncontiguous)
    e_log, e_out, e_grads, e_cls = _wrapped_run(ember, WRAPPED[name], arrays, True,
                                                noncontiguous)
    assert type(e_out) is e_cls
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10)
    np.testing.assert_allclose(e_out.elem.numpy(), t_out.elem.detach().numpy(), **tol)
    for t, e in zip(t_grads, e_grads):
        if t is None:
            assert e is None
            continue
        assert type(e) is e_cls and e.dtype.name == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(e.elem.numpy(), t.elem.numpy(), **tol)
    if name in OPS_DIFFER:
        return
    # forward's ops, then backward's seed; torch also detaches the outputs it saves
    t_log = [op for op in t_log if op != "aten.detach.default"]
    n_forward = t_log.index("aten.ones_like.default")
    assert e_log[:n_forward + 1] == t_log[:n_forward + 1]


def test_wrapper_subclass_without_grad_matches():
    program = PROGRAMS["mm_relu_mean"]
    t_log, t_out, _, _ = _wrapped_run(torch, program, [A, B], False)
    e_log, e_out, _, _ = _wrapped_run(ember, program, [A, B], False)
    assert e_log == t_log
    np.testing.assert_allclose(e_out.elem.numpy(), t_out.elem.numpy(), rtol=1e-6)
    assert tuple(e_out.shape) == tuple(t_out.shape) and e_out.stride() == t_out.stride()


def test_wrapper_metadata_matches():
    for strides in (None, (1, 2)):
        made = {}
        for lib in (torch, ember):
            class W(lib.Tensor):
                @classmethod
                def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                    return NotImplemented
            w = lib.Tensor._make_wrapper_subclass(W, (2, 3) if strides is None else (2, 2),
                                                  strides=strides, dtype=lib.float64,
                                                  requires_grad=True)
            made[lib] = (tuple(w.shape), w.stride(), w.is_contiguous(), w.requires_grad,
                         w.is_leaf, str(w.dtype).split(".")[-1])
        assert made[ember] == made[torch]


def test_not_implemented_message_matches_up_to_the_op_path():
    msgs = {}
    for lib in (torch, ember):
        class Refusing(MODE_BASE[lib]):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return NotImplemented

            def __repr__(self):
                return "Refusing()"
        x = lib.ones(2)
        with pytest.raises(TypeError) as info, Refusing():
            x.neg()
        msgs[lib] = str(info.value)
    assert msgs[torch].startswith(msgs[ember].replace("ember.ops.aten", "torch._ops.aten"))
