"""Adam/AdamW's step on bare arrays (``adam._adam_step_arrays``) gives the bits and the
version counts of the tensor-op step it stands in for."""
import numpy as np
import pytest

import ember
import ember.optim.adam as adam


def _run(monkeypatch, on_arrays, dtype, cls, **kw):
    if not on_arrays:
        monkeypatch.setattr(adam, "_plain_arrays", lambda *t: False)
    rs = np.random.RandomState(0)
    ps = [ember.nn.Parameter(ember.tensor(rs.randn(5, 3), dtype=dtype)),
          ember.nn.Parameter(ember.tensor(rs.randn(4), dtype=dtype))]
    opt = cls(ps, lr=0.01, **kw)
    for _ in range(4):
        for p in ps:
            p.grad = ember.tensor(rs.randn(*p.shape), dtype=dtype)
        opt.step()
    monkeypatch.undo()
    arrays = [p.detach().numpy() for p in ps] + [
        opt.state[p][k].numpy() for p in ps for k in ("exp_avg", "exp_avg_sq", "step")]
    return arrays, [p._version for p in ps]


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("cls,kw", [(ember.optim.Adam, {}),
                                    (ember.optim.Adam, dict(weight_decay=0.1, maximize=True)),
                                    (ember.optim.Adam, dict(betas=(0.3, 0.9))),
                                    (ember.optim.AdamW, dict(weight_decay=0.1))])
def test_array_step_matches_the_tensor_ops(monkeypatch, dtype, cls, kw):
    fast, fast_versions = _run(monkeypatch, True, dtype, cls, **kw)
    slow, slow_versions = _run(monkeypatch, False, dtype, cls, **kw)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)
    assert fast_versions == slow_versions



def test_array_step_is_taken_for_plain_parameters(monkeypatch, no_dispatch):
    taken = []
    monkeypatch.setattr(adam, "_adam_step_arrays",
                        lambda *a, _f=adam._adam_step_arrays: taken.append(1) or _f(*a))
    w = ember.nn.Parameter(ember.ones(3))
    w.grad = ember.ones(3)
    ember.optim.Adam([w]).step()
    assert taken
    w.grad = ember.ones(3)
    ember.optim.Adam([w], lr=ember.tensor(0.1)).step()  # a tensor lr: the tensor ops
    assert len(taken) == 1
