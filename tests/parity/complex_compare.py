"""``compare_complex``: compare.py's check for functions of complex tensors (or with complex
results): values, dtypes, then the gradient of every input for one random cotangent
(complex where the output is), against torch. Runs ember on EMBER_PARITY_DEVICE too."""
import numpy as np
import torch

import ember
from tests.parity.compare import DEVICE, _on_device, _host

_TOL = {"float32": (1e-4, 1e-5), "complex64": (1e-4, 1e-5),
        "float64": (1e-7, 1e-9), "complex128": (1e-7, 1e-9)}


def _tensor(lib, a, grad):
    device = DEVICE if lib is ember else None
    return lib.tensor(a, requires_grad=grad, device=device)


def _values(t):
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy()
    return _host(t)


def _cotangent(rng, shape, dtype_name):
    v = rng.standard_normal(shape)
    if dtype_name.startswith("complex"):
        v = v + 1j * rng.standard_normal(shape)
    return v


def _tol(dtype_name, rtol, atol):
    r, a = _TOL.get(dtype_name, _TOL["float32"])
    return dict(rtol=r if rtol is None else rtol, atol=a if atol is None else atol)


def compare_complex(fn, *arrays, grad=True, rtol=None, atol=None, seed=0):
    """``fn(lib, *tensors)`` on torch and ember: outputs and input gradients must agree.
    Arrays of floating or complex dtype require grad (when ``grad``)."""
    arrays = [np.asarray(a) for a in arrays]
    wants = [grad and a.dtype.kind in "fc" for a in arrays]
    ins = {lib: [_tensor(lib, a, w) for a, w in zip(arrays, wants)] for lib in (torch, ember)}
    t_out = fn(torch, *ins[torch])
    e_out = _on_device(fn, ember, *ins[ember])
    t_outs = list(t_out) if isinstance(t_out, (tuple, list)) else [t_out]
    e_outs = list(e_out) if isinstance(e_out, (tuple, list)) else [e_out]
    assert len(t_outs) == len(e_outs)
    for t, e in zip(t_outs, e_outs):
        name = str(t.dtype).split(".")[-1]
        assert str(e.dtype).split(".")[-1] == name, (e.dtype, t.dtype)
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(_values(e), _values(t), equal_nan=True,
                                   **_tol(name, rtol, atol))
    if not any(wants):
        return
    rng = np.random.default_rng(seed)
    pairs = [(t, e) for t, e in zip(t_outs, e_outs) if t.requires_grad]
    assert all(e.requires_grad for _, e in pairs)
    cots = [_cotangent(rng, tuple(t.shape), str(t.dtype).split(".")[-1]) for t, _ in pairs]
    leaves_t = [x for x, w in zip(ins[torch], wants) if w]
    leaves_e = [x for x, w in zip(ins[ember], wants) if w]
    g_t = torch.autograd.grad([t for t, _ in pairs], leaves_t,
                              [torch.tensor(v).to(t.dtype) for v, (t, _) in zip(cots, pairs)],
                              allow_unused=True)
    g_e = ember.autograd.grad([e for _, e in pairs], leaves_e,
                              [_tensor(ember, v, False).to(e.dtype)
                               for v, (_, e) in zip(cots, pairs)], allow_unused=True)
    for gt, ge, leaf in zip(g_t, g_e, leaves_t):
        if gt is None:
            assert ge is None or not _values(ge).any()
            continue
        name = str(leaf.dtype).split(".")[-1]
        assert str(ge.dtype).split(".")[-1] == str(gt.dtype).split(".")[-1]
        np.testing.assert_allclose(_values(ge), _values(gt), **_tol(name, rtol, atol))
