"""Run the same code on ember and torch and compare values and gradients.

``compare(fn, *arrays)`` calls ``fn(lib, *tensors)`` once with ``lib=torch``
and once with ``lib=ember`` on tensors made from the same NumPy arrays
(requiring grad where floating point), checks output values, shape and dtype,
then backpropagates the same random cotangent and checks every input gradient.
``noncontiguous=True`` feeds transposed views instead of contiguous tensors.
"""
import os

import numpy as np
import torch

import ember

TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-7, atol=1e-9)}


def _dtype_name(d):
    return str(d).split(".")[-1]


#: where compare() makes ember's tensors: EMBER_PARITY_DEVICE=cuda (or fake-cuda, the stand-in
#: module installed by tests/parity/conftest.py); results come back to the host to be compared
DEVICE = {None: None, "": None, "fake-cuda": "cuda"}.get(os.environ.get("EMBER_PARITY_DEVICE"),
                                                       os.environ.get("EMBER_PARITY_DEVICE"))


def _make(lib, a, grad, noncontiguous):
    device = DEVICE if lib is ember else None
    if noncontiguous and a.ndim >= 2:
        base = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        t = lib.tensor(base, requires_grad=grad, device=device)
        return t, t.transpose(-1, -2)
    t = lib.tensor(a, requires_grad=grad, device=device)
    return t, t


def _on_device(fn, *args):
    """``fn(*args)`` with DEVICE as the default device (tensors ``fn`` makes land there too)."""
    if DEVICE is None:
        return fn(*args)
    previous = ember.get_default_device()
    ember.set_default_device(DEVICE)
    try:
        return fn(*args)
    finally:
        ember.set_default_device(previous)


def _host(t):
    """``t``'s values as a NumPy array (copied from the device where ember ran)."""
    return t.detach().cpu().numpy()


def _flatten(out):
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, (torch.Tensor, ember.Tensor))]
    return [out]


def compare(fn, *arrays, grad=True, noncontiguous=False, rtol=None, atol=None, seed=0):
    arrays = [np.asarray(a) for a in arrays]
    dtype = next((a.dtype.type for a in arrays if a.dtype.kind == "f"), None)

    def tolerance(dt):
        tol = dict(TOL.get(dt, TOL[np.float32]))
        if rtol is not None:
            tol["rtol"] = rtol
        if atol is not None:
            tol["atol"] = atol
        return tol
    # no float input: judge each output by its own dtype (int -> float32 ops)
    tol = tolerance(np.float64 if dtype is None else dtype)
    leaves, views = {}, {}
    for lib in (torch, ember):
        made = [_make(lib, a, grad and a.dtype.kind == "f", noncontiguous) for a in arrays]
        leaves[lib], views[lib] = [m[0] for m in made], [m[1] for m in made]
    t_out = _flatten(fn(torch, *views[torch]))
    e_out = _flatten(_on_device(fn, ember, *views[ember]))
    assert len(t_out) == len(e_out)
    for t, e in zip(t_out, e_out):
        assert tuple(t.shape) == tuple(e.shape), (t.shape, e.shape)
        assert _dtype_name(t.dtype) == e.dtype.name, (t.dtype, e.dtype)
        e_np = _host(e)
        if e_np.dtype.kind not in "fc":  # integer and bool results must match exactly
            np.testing.assert_array_equal(e_np, t.detach().numpy())
            continue
        out_tol = tol if dtype is not None else tolerance(e_np.dtype.type)
        np.testing.assert_allclose(e_np, t.detach().numpy(), **out_tol)
        if DEVICE is not None and isinstance(e, ember.Tensor):
            assert e.device.type == DEVICE, f"output on {e.device}, inputs on {DEVICE}"
    diff = [(t, e) for t, e in zip(t_out, e_out) if t.requires_grad]
    assert [e.requires_grad for e in e_out] == [t.requires_grad for t in t_out]
    if not diff:
        return
    rng = np.random.default_rng(seed)
    cots = [rng.standard_normal(tuple(t.shape)).astype(_dtype_name(t.dtype)) for t, _ in diff]
    torch.autograd.backward([t for t, _ in diff], [torch.tensor(c) for c in cots])
    ember.autograd.backward([e for _, e in diff], [ember.tensor(c, device=DEVICE) for c in cots])
    for i, (t, e) in enumerate(zip(leaves[torch], leaves[ember])):
        if t.grad is None:
            assert e.grad is None, f"input {i}: torch has no grad, ember has one"
            continue
        assert e.grad is not None, f"input {i}: ember has no grad"
        np.testing.assert_allclose(_host(e.grad), t.grad.numpy(), err_msg=f"grad of input {i}",
                                   **tol)


def error_of(fn):
    """(exception type name, message) that ``fn()`` raises, or None: to compare errors."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - whatever each library raises
        return type(e).__name__, str(e)
    return None
