"""GradScaler("cpu") follows torch's: same parameters, scales and skipped steps over a run
with injected overflows."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _run(lib, w0, injected):
    w = lib.nn.Parameter(lib.tensor(w0))
    opt = lib.optim.Adam([w], lr=0.05)
    scaler = lib.amp.GradScaler("cpu", init_scale=256.0, growth_interval=3)
    trace = []
    for step in range(12):
        opt.zero_grad()
        scaler.scale((w ** 2).sum() + w.sum()).backward()
        if step in injected:
            w.grad[0] = math.inf if step % 2 else math.nan
        scaler.step(opt)
        scaler.update()
        trace.append((w.detach().numpy().copy(), scaler.get_scale(),
                      scaler.state_dict()["_growth_tracker"]))
    return trace


def test_scaler_run_matches_torch():
    w0 = np.random.default_rng(0).standard_normal(5)
    ours, theirs = _run(ember, w0, {2, 3, 8}), _run(torch, w0, {2, 3, 8})
    for (wa, sa, ga), (wb, sb, gb) in zip(ours, theirs):
        np.testing.assert_allclose(wa, wb, rtol=1e-12, atol=1e-14)
        assert (sa, ga) == (sb, gb)
