"""Checkpoints written by real torch.save, read by ember.load (restricted unpickler, no code)."""
import argparse
import collections
import dataclasses
import enum
import io
import os
import pickle
import zipfile

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
                       match="(?s)'.*module.pt'.*GLOBAL torch.nn.modules.linear.Linear was not an "
                             "allowed global"):
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


# ---- allowlisted globals (safe_globals), as torch.load(weights_only=True) ---------------------
@dataclasses.dataclass
class RunConfig:
    lr: float
    depth: int
    tags: list


class Phase(enum.Enum):
    TRAIN = 1
    EVAL = 2


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a=None, b=None):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Slotted and (self.a, self.b) == (other.a, other.b)


def _checkpoint(tmp_path):
    obj = {"cfg": RunConfig(0.1, 3, ["a"]), "phase": Phase.EVAL,
           "args": argparse.Namespace(epochs=2, name="x"), "slots": Slotted(1, "two"),
           "w": torch.arange(3.)}
    return _torch_file(obj, tmp_path, "ckpt.pt")


ALLOWLIST = [RunConfig, Phase, argparse.Namespace, Slotted]


def test_allowlisted_globals_load_as_in_torch(tmp_path):
    path = _checkpoint(tmp_path)
    with torch.serialization.safe_globals(ALLOWLIST):
        expected = torch.load(path, weights_only=True)
    with ember.serialization.safe_globals(ALLOWLIST):
        got = load(path, weights_only=True)
    assert ember.serialization.get_safe_globals() == []
    assert got["w"].tolist() == expected["w"].tolist()
    for key in ("cfg", "phase", "args", "slots"):
        assert got[key] == expected[key], key
    assert got["phase"] is Phase.EVAL


def test_unknown_global_is_refused_like_torch(tmp_path):
    path = _checkpoint(tmp_path)
    with pytest.raises(pickle.UnpicklingError) as t_err:
        torch.load(path, weights_only=True)
    with pytest.raises(pickle.UnpicklingError) as e_err:
        load(path)
    path_name = f"{__name__}.RunConfig"
    for msg in (str(t_err.value), str(e_err.value)):
        assert "Weights only load failed" in msg
        assert f"Unsupported global: GLOBAL {path_name} was not an allowed global by default" \
            in msg
        assert f"add_safe_globals([{path_name}])" in msg
    # ember never executes pickle: weights_only=False reads with the same rules
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL " + path_name):
        load(path, weights_only=False)


def test_add_get_clear_safe_globals_match_torch(tmp_path):
    path = _checkpoint(tmp_path)
    try:
        for ser in (torch.serialization, ember.serialization):
            ser.add_safe_globals(ALLOWLIST[:2])
            ser.add_safe_globals([(argparse.Namespace, "argparse.Namespace"), Slotted])
        assert set(ember.serialization.get_safe_globals()) >= \
            {RunConfig, Phase, Slotted, (argparse.Namespace, "argparse.Namespace")}
        assert load(path)["args"] == torch.load(path)["args"]
        ember.serialization.clear_safe_globals()
        assert ember.serialization.get_safe_globals() == []
        with pytest.raises(pickle.UnpicklingError, match="RunConfig"):
            load(path)
    finally:
        torch.serialization.clear_safe_globals()
        ember.serialization.clear_safe_globals()


@pytest.mark.parametrize("entry, error", [((RunConfig, "a", "b"), ValueError),
                                          ((RunConfig, 3), TypeError)])
def test_malformed_allowlist_entries_raise_as_in_torch(tmp_path, entry, error):
    path = _checkpoint(tmp_path)
    for ser, loader in ((torch.serialization, torch.load), (ember.serialization, load)):
        with ser.safe_globals([entry]):
            with pytest.raises(error) as err:
                loader(path)
        if ser is torch.serialization:
            expected = str(err.value)
        else:
            assert str(err.value) == expected


def test_default_globals_load_as_in_torch(tmp_path):
    obj = {"set": {1, 2}, "complex": 1 + 2j, "bytes": b"xy", "bytearray": bytearray(b"ab"),
           "counter": collections.Counter(a=2), "size": torch.Size([2, 3]),
           "device": torch.device("cpu"), "dtype": torch.float64}
    path = _torch_file(obj, tmp_path)
    expected, got = torch.load(path), load(path)
    for key in ("set", "complex", "bytes", "bytearray", "counter"):
        assert got[key] == expected[key] and type(got[key]) is type(expected[key]), key
    assert got["size"] == ember.Size([2, 3]) and isinstance(got["size"], ember.Size)
    assert got["device"] == ember.device("cpu") and got["dtype"] is ember.float64


def test_blocked_modules_stay_refused_when_allowlisted(tmp_path):
    path = tmp_path / "os.pt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", b"\x80\x02cos\ngetcwd\n)R.")
    with ember.serialization.safe_globals([os.getcwd, (os.getcwd, "os.getcwd")]):
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL os.getcwd whose module os is "
                                                         "blocked"):
            load(path)


def test_mmap_reads_torch_and_ember_files(tmp_path):
    t = torch.arange(12.).view(3, 4)[:, 1:]
    path = _torch_file({"w": t}, tmp_path)
    got = load(path, mmap=True)["w"]
    np.testing.assert_array_equal(got.numpy(), torch.load(path, mmap=True)["w"].numpy())
    got.add_(1)  # copy-on-write: the file keeps its values
    np.testing.assert_array_equal(load(path)["w"].numpy(), t.numpy())
    with open(path, "rb") as fh, pytest.raises(ValueError, match="f must be a file path"):
        load(fh, mmap=True)
    legacy = _torch_file({"w": t}, tmp_path, "legacy.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        load(legacy, mmap=True)


def test_get_unsafe_globals_in_checkpoint_as_torch(tmp_path):
    path = _checkpoint(tmp_path)
    assert set(ember.serialization.get_unsafe_globals_in_checkpoint(path)) == \
        set(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    with ember.serialization.safe_globals([RunConfig]), \
            torch.serialization.safe_globals([RunConfig]):
        with open(path, "rb") as fh:
            got = set(ember.serialization.get_unsafe_globals_in_checkpoint(fh))
        assert got == set(torch.serialization.get_unsafe_globals_in_checkpoint(path))
        assert f"{__name__}.RunConfig" not in got and f"{__name__}.Phase" in got
