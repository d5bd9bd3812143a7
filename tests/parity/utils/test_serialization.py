"""Checkpoints written by real torch.save, read by ember.load (restricted unpickler, no code)."""
import io
import pickle

import numpy as np
import pytest
import torch

import ember
from ember import nn, optim
from ember.serialization import load

TORCH_DTYPES = [torch.float16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
                torch.int64, torch.uint8, torch.bool]


def _torch_file(obj, tmp_path, name="t.pt", **kw):
    path = tmp_path / name
    torch.save(obj, path, **kw)
    return path


@pytest.mark.parametrize("dt", TORCH_DTYPES, ids=str)
def test_dtypes_from_torch(tmp_path, dt):
    g = torch.Generator().manual_seed(0)
    t = (torch.randn(3, 4, generator=g) * 100).to(dt)
    out = load(_torch_file(t, tmp_path))
    assert out.dtype.name == str(dt).split(".")[-1]
    assert out.numpy().tobytes() == t.numpy().tobytes()


def test_views_offsets_and_shared_storage(tmp_path):
    base = torch.arange(24.).reshape(4, 6)
    obj = {"slice": base[1:, ::2], "t": base.t(), "expand": torch.ones(1, 3).expand(4, 3),
           "row": base[2], "scalar": base[1, 1], "base": base, "empty": torch.zeros(0, 2)}
    out = load(_torch_file(obj, tmp_path))
    for k, v in obj.items():
        assert out[k].shape == tuple(v.shape), k
        np.testing.assert_array_equal(out[k].numpy(), v.numpy(), err_msg=k)


def test_parameters_and_requires_grad(tmp_path):
    obj = [torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2), False),
           torch.ones(2, requires_grad=True), torch.ones(2)]
    out = load(_torch_file(obj, tmp_path))
    assert type(out[0]) is nn.Parameter and out[0].requires_grad
    assert type(out[1]) is nn.Parameter and not out[1].requires_grad
    assert type(out[2]) is ember.Tensor and out[2].requires_grad
    assert not out[3].requires_grad


def test_plain_values_from_torch(tmp_path):
    obj = {"i": 3, "f": 0.1, "s": "x", "n": None, "b": True, "l": [1, (2, 3)], 4: b"\x00\x01",
           "nan": float("nan")}
    out = load(_torch_file(obj, tmp_path))
    assert {k: v for k, v in out.items() if k != "nan"} == \
        {k: v for k, v in obj.items() if k != "nan"}
    assert out["nan"] != out["nan"]


def _torch_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 3, 3, padding=1), torch.nn.BatchNorm2d(3),
                               torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(48, 5))


def _ember_net():
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(),
                         nn.Flatten(), nn.Linear(48, 5))


def test_torch_state_dict_into_ember_model(tmp_path):
    tnet = _torch_net()
    x = torch.randn(2, 1, 4, 4)
    tnet.train()
    tnet(x)  # move the running stats away from their defaults
    tnet.eval()
    path = _torch_file(tnet.state_dict(), tmp_path)
    sd = load(path)
    assert list(sd) == list(tnet.state_dict())
    assert sd["1.num_batches_tracked"].dtype is ember.int64
    enet = _ember_net()
    enet.load_state_dict(sd)
    enet.eval()
    got = enet(ember.tensor(x.numpy())).detach().numpy()
    np.testing.assert_allclose(got, tnet(x).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_torch_checkpoint_from_file_object():
    buf = io.BytesIO()
    torch.save({"w": torch.arange(4)}, buf)
    buf.seek(0)
    assert load(buf)["w"].tolist() == [0, 1, 2, 3]


def test_torch_optimizer_state_resumes_in_ember(tmp_path):
    torch.manual_seed(1)
    tm = torch.nn.Linear(3, 2).double()
    topt = torch.optim.Adam(tm.parameters(), lr=0.1)
    x, y = torch.randn(5, 3, dtype=torch.float64), torch.randn(5, 2, dtype=torch.float64)

    def tstep():
        topt.zero_grad()
        ((tm(x) - y) ** 2).mean().backward()
        topt.step()

    for _ in range(3):
        tstep()
    path = _torch_file({"model": tm.state_dict(), "opt": topt.state_dict()}, tmp_path)
    ck = load(path)
    em = nn.Linear(3, 2).double()
    em.load_state_dict(ck["model"])
    eopt = optim.Adam(em.parameters(), lr=0.1)
    eopt.load_state_dict(ck["opt"])
    ex, ey = ember.tensor(x.numpy()), ember.tensor(y.numpy())
    for _ in range(3):
        tstep()
        eopt.zero_grad()
        ((em(ex) - ey) ** 2).mean().backward()
        eopt.step()
    for (n, tp), ep in zip(tm.named_parameters(), em.parameters()):
        np.testing.assert_allclose(ep.detach().numpy(), tp.detach().numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=n)


def test_whole_torch_module_is_refused(tmp_path):
    path = _torch_file(torch.nn.Linear(2, 2), tmp_path, "module.pt")
    with pytest.raises(pickle.UnpicklingError,
                       match="'.*module.pt' refers to the global 'torch.nn.modules.linear.Linear'"):
        load(path)


def test_legacy_torch_format_is_a_clear_error(tmp_path):
    path = _torch_file({"w": torch.ones(2)}, tmp_path, "legacy.pt",
                       _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="'.*legacy.pt' is not a valid checkpoint"):
        load(path)


def test_map_location_on_torch_checkpoint(tmp_path):
    path = _torch_file({"w": torch.ones(2)}, tmp_path)
    assert load(path, map_location="cpu")["w"].tolist() == [1., 1.]
    assert load(path, map_location=lambda t, loc: t + 1)["w"].tolist() == [2., 2.]
