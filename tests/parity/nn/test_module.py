"""nn.Module behaviour compared with torch.nn.Module on the same custom modules."""
import numpy as np
import pytest
import torch

import ember


def _build(lib):
    nn = lib.nn

    class Affine(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(3))
            self.bias = nn.Parameter(lib.zeros(3))
            self.register_buffer("running", lib.zeros(3))
            self.register_buffer("tmp", lib.zeros(3), persistent=False)

        def forward(self, x):
            return x * self.weight + self.bias

        def extra_repr(self):
            return "n=3"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Affine()
            self.b = nn.Sequential(Affine(), nn.ModuleList([Affine()]))
            self.d = nn.ModuleDict({"k": Affine()})
            self.scale = nn.Parameter(lib.tensor(2.0))

        def forward(self, x):
            return self.b[0](self.a(x)) * self.scale

    return Net()


def test_listings_match_torch():
    t, e = _build(torch), _build(ember)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert list(e.state_dict().keys()) == list(t.state_dict().keys())


def test_repr_matches_torch():
    assert repr(_build(ember)) == repr(_build(torch))


def test_load_state_dict_error_matches_torch():
    msgs = []
    for lib in (torch, ember):
        net = _build(lib)
        sd = net.state_dict()
        del sd["a.bias"]
        sd["zzz"] = lib.zeros(1)
        sd["scale"] = lib.zeros(2)
        with pytest.raises(RuntimeError) as e:
            net.load_state_dict(sd)
        msgs.append(str(e.value).replace("torch.", "ember."))
    assert msgs[0] == msgs[1]


def test_state_dict_transfers_from_torch():
    t, e = _build(torch), _build(ember)
    with torch.no_grad():
        for p in t.parameters():
            p.uniform_(-1, 1)
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(e(ember.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-6)


def test_full_backward_hook_matches_torch():
    results = []
    for lib in (torch, ember):
        net = _build(lib)
        seen = []
        net.a.register_full_backward_hook(
            lambda m, gi, go: seen.append((gi[0].numpy().copy(), go[0].numpy().copy())))
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        (net(x) ** 2).sum().backward()
        results.append((seen, x.grad.numpy().copy()))
    (t_seen, t_grad), (e_seen, e_grad) = results
    assert len(t_seen) == len(e_seen) == 1
    np.testing.assert_allclose(e_seen[0][0], t_seen[0][0])
    np.testing.assert_allclose(e_seen[0][1], t_seen[0][1])
    np.testing.assert_allclose(e_grad, t_grad)
