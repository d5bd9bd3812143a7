"""ember.serialization.save/load without torch: round trips, file kinds, corrupt and malicious
files (loading must never execute code)."""
import io
import json
import math
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember import nn
from ember import optim
from ember.serialization import load, save

DTYPES = [ember.float16, ember.float32, ember.float64, ember.int8, ember.int16, ember.int32,
          ember.int64, ember.uint8, ember.bool]


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, **kw)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
def test_tensor_dtypes_roundtrip_exactly(dt):
    rs = np.random.default_rng(0)
    if dt is ember.bool:
        a = rs.random((3, 4)) > 0.5
    elif dt.is_floating_point:
        a = (rs.standard_normal((3, 4)) * 1e3).astype(dt.np)
        a[0, :3] = [np.inf, -np.inf, np.nan]
    else:
        info = np.iinfo(dt.np)
        a = rs.integers(info.min, info.max, (3, 4), dtype=dt.np, endpoint=True)
    t = ember.from_numpy(a)
    out = _roundtrip(t)
    assert type(out) is ember.Tensor and out.dtype is dt and out.shape == (3, 4)
    np.testing.assert_array_equal(out.numpy(), a)  # nan == nan here, bits otherwise
    assert out.numpy().tobytes() == a.tobytes()


def test_shapes_views_and_scalars():
    base = ember.arange(24.).reshape(4, 6)
    view = base[1:, ::2].t()  # non-contiguous view with an offset
    out = _roundtrip({"v": view, "s": ember.tensor(3.5), "e": ember.zeros(0, 3)})
    assert out["v"].tolist() == view.tolist() and out["v"].shape == (3, 3)
    assert out["s"].shape == () and out["s"].item() == 3.5
    assert out["e"].shape == (0, 3)


def test_parameter_and_requires_grad():
    p = nn.Parameter(ember.ones(2))
    frozen = nn.Parameter(ember.zeros(2), requires_grad=False)
    t = ember.ones(3, requires_grad=True)
    out = _roundtrip([p, frozen, t, ember.ones(1)])
    assert type(out[0]) is nn.Parameter and out[0].requires_grad and out[0].is_leaf
    assert type(out[1]) is nn.Parameter and not out[1].requires_grad
    assert type(out[2]) is ember.Tensor and out[2].requires_grad and out[2].is_leaf
    assert not out[3].requires_grad
    # a non-leaf tensor comes back as a leaf that requires grad (as PyTorch does)
    y = _roundtrip(t * 2)
    assert y.is_leaf and y.requires_grad and y.grad_fn is None


def test_nested_plain_values():
    obj = {"none": None, "t": True, "f": False, "i": -(2 ** 70), "x": 1.0, "y": 0.1,
           "nan": float("nan"), "inf": float("inf"), "ninf": -math.inf, "s": "héllo \"q\"",
           "b": b"\x00\xff", "l": [1, [2, (3, "4")]], "tup": (), 7: "int key",
           (1, "a"): "tuple key", None: 0, 2.5: "float key", "dt": ember.float16,
           "dev": ember.device("cpu"), "np": np.arange(6, dtype=np.int16).reshape(2, 3)}
    out = _roundtrip(obj)
    assert list(out) == list(obj)
    for k in obj:
        if k in ("nan", "np"):
            continue
        assert out[k] == obj[k] and type(out[k]) is type(obj[k]), k
    assert type(out["i"]) is int and type(out["x"]) is float and out["x"] == 1.0
    assert math.isnan(out["nan"])
    assert out["dt"] is ember.float16
    assert out["np"].dtype == np.int16 and out["np"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert out["l"][1][1] == (3, "4") and isinstance(out["l"][1][1], tuple)


def test_numpy_scalars_keep_their_type():  # as torch.load(weights_only=False) gives them
    out = _roundtrip([np.float32(1.5), np.int64(3), np.bool_(True), 2.5, 4])
    assert out == [1.5, 3, True, 2.5, 4]
    assert [type(v) for v in out] == [np.float32, np.int64, np.bool_, float, int]


def test_ordered_dict_order_and_metadata_kept():
    od = OrderedDict([("z", ember.ones(1)), ("a", 1), ("m", 2)])
    od._metadata = OrderedDict([("", {"version": 1})])
    out = _roundtrip(od)
    assert type(out) is OrderedDict and list(out) == ["z", "a", "m"]
    assert out._metadata == {"": {"version": 1}}
    plain = _roundtrip({"b": 1, "a": 2})
    assert type(plain) is dict and list(plain) == ["b", "a"]


def test_shared_tensor_loaded_as_one_object():
    t = ember.arange(3.)
    out = _roundtrip({"a": t, "b": [t]})
    assert out["a"] is out["b"][0]


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))


def test_state_dict_roundtrip_into_fresh_model(tmp_path):
    m = _model()
    path = tmp_path / "m.pt"
    save(m.state_dict(), path)
    sd = load(path)
    assert type(sd) is OrderedDict and list(sd) == list(m.state_dict())
    ember.manual_seed(1)
    fresh = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
    x = ember.randn(3, 4)
    assert not np.allclose(fresh(x).detach().numpy(), m(x).detach().numpy())
    fresh.load_state_dict(sd)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), m(x).detach().numpy())


def test_optimizer_state_roundtrip_resumes_identically():
    x, y = ember.randn(8, 4), ember.randn(8, 2)

    def step(model, opt):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()

    ref = _model()
    ref_opt = optim.Adam(ref.parameters(), lr=0.05, amsgrad=True)
    for _ in range(3):
        step(ref, ref_opt)
    blob = _roundtrip({"model": ref.state_dict(), "opt": ref_opt.state_dict()})
    assert blob["opt"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert list(blob["opt"]["state"]) == [0, 1, 2, 3]  # int keys survive
    m = _model()
    opt = optim.Adam(m.parameters(), lr=0.05, amsgrad=True)
    m.load_state_dict(blob["model"])
    opt.load_state_dict(blob["opt"])
    for _ in range(2):
        step(ref, ref_opt)
        step(m, opt)
    for a, b in zip(ref.parameters(), m.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_file_kinds(tmp_path):
    t = ember.arange(5)
    save(t, str(tmp_path / "a.pt"))
    assert load(str(tmp_path / "a.pt")).tolist() == [0, 1, 2, 3, 4]
    with open(tmp_path / "b.pt", "wb") as fh:
        save(t, fh)
    with open(tmp_path / "b.pt", "rb") as fh:
        assert load(fh).tolist() == [0, 1, 2, 3, 4]

    class Stream(io.RawIOBase):  # not seekable
        def __init__(self, data):
            self.data = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self.data.readinto(b)

    assert load(Stream((tmp_path / "b.pt").read_bytes())).tolist() == [0, 1, 2, 3, 4]
    # the file is a NumPy .npz: arrays readable by NumPy, the structure is JSON
    with np.load(tmp_path / "a.pt") as npz:
        assert npz["0"].tolist() == [0, 1, 2, 3, 4]
    with zipfile.ZipFile(tmp_path / "a.pt") as zf:
        head = json.loads(zf.read("structure.json"))
    assert head["format"] == "ember" and head["object"]["$type"] == "tensor"


def test_unsupported_type_raises_and_writes_nothing(tmp_path):
    with pytest.raises(TypeError, match="ember.save can't store an object of type "
                                        "builtins.object.*no pickle"):
        save({"a": object()}, tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists()
    with pytest.raises(TypeError, match="function"):
        save([lambda: 0], io.BytesIO())
    with pytest.raises(TypeError, match="dtype <U1"):
        save(np.array(["a"]), io.BytesIO())


def test_map_location():
    t = ember.ones(2)
    assert _roundtrip(t, map_location="cpu").tolist() == [1., 1.]
    assert _roundtrip(t, map_location=ember.device("cpu")).tolist() == [1., 1.]
    assert _roundtrip(t, map_location={"cuda:0": "cpu"}).tolist() == [1., 1.]
    seen = []
    out = _roundtrip(t, map_location=lambda tensor, loc: seen.append(loc) or tensor * 3)
    assert seen == ["cpu"] and out.tolist() == [3., 3.]
    with pytest.raises(Exception, match="(?i)cuda"):
        _roundtrip(t, map_location="cuda")


# ---- corrupt files -----------------------------------------------------------------------------
def _saved_bytes(obj):
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


@pytest.mark.parametrize("cut", [0, 10, 0.5, -1])
def test_truncated_file_names_the_file(tmp_path, cut):
    data = _saved_bytes({"w": ember.randn(50)})
    n = cut if isinstance(cut, int) and cut >= 0 else (len(data) + cut if isinstance(cut, int)
                                                       else int(len(data) * cut))
    path = tmp_path / "broken.pt"
    path.write_bytes(data[:n])
    with pytest.raises(RuntimeError, match="ember.load: '.*broken.pt' is (not a valid|corrupt)"):
        load(path)


def test_flipped_byte_in_array_data_is_detected(tmp_path):
    data = bytearray(_saved_bytes(ember.arange(100.)))
    pos = data.index(b"\x00\x00\x80\x3f")  # 1.0f: inside the array payload
    data[pos + 2] ^= 0xFF
    path = tmp_path / "flip.pt"
    path.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match="'.*flip.pt' is corrupt.*CRC"):
        load(path)


def test_random_bytes_and_other_zips(tmp_path):
    (tmp_path / "junk.pt").write_bytes(os.urandom(200))
    with pytest.raises(RuntimeError, match="'.*junk.pt' is not a valid checkpoint"):
        load(tmp_path / "junk.pt")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as zf:
        zf.writestr("hello.txt", "hi")
    with pytest.raises(RuntimeError, match="'.*other.zip' is a zip file but neither"):
        load(tmp_path / "other.zip")


def _craft(path, structure, members=()):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("structure.json", structure if isinstance(structure, str)
                    else json.dumps(structure))
        for name, data in members:
            zf.writestr(name, data)


def _npy(a):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, allow_pickle=True)
    return buf.getvalue()


HEADER = {"format": "ember", "version": 1, "num_arrays": 1}


@pytest.mark.parametrize("case,match", [
    ("not json", "not valid JSON"),
    ({"format": "other"}, "not an ember header"),
    (dict(HEADER, version=99), "format version 99"),
    (dict(HEADER, object={"$type": "tensor", "array": 0, "dtype": "float32", "shape": [3]}),
     "array 0.npy is missing"),
    (dict(HEADER, object={"$type": "tensor", "array": 5, "dtype": "float32", "shape": [3]}),
     "bad array number 5"),
    (dict(HEADER, object={"$type": "tensor", "array": 0, "dtype": "complex", "shape": [3]}),
     "unknown dtype 'complex'"),
    (dict(HEADER, object={"$type": "evil", "code": "import os"}), "unknown node type 'evil'"),
    (dict(HEADER, object=[1, 2]), "untagged list"),
    (dict(HEADER, object={"$type": "dict", "keys": [1], "values": []}), "mismatched keys"),
])
def test_crafted_structures_rejected(tmp_path, case, match):
    path = tmp_path / "crafted.pt"
    _craft(path, case)
    with pytest.raises(RuntimeError, match=f"'.*crafted.pt'.*{match}"):
        load(path)


def test_array_dtype_and_shape_must_match_structure(tmp_path):
    node = {"$type": "tensor", "array": 0, "dtype": "float32", "shape": [3]}
    path = tmp_path / "m.pt"
    _craft(path, dict(HEADER, object=node), [("0.npy", _npy(np.zeros(3, np.float64)))])
    with pytest.raises(RuntimeError, match="has dtype float64, expected float32"):
        load(path)
    _craft(path, dict(HEADER, object=node), [("0.npy", _npy(np.zeros(4, np.float32)))])
    with pytest.raises(RuntimeError, match=r"has shape \[4\], expected \[3\]"):
        load(path)


class _Payload:
    """Unpickling this runs code: it creates the marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("weights_only", [True, False])
def test_pickle_payload_in_object_array_is_not_run(tmp_path, weights_only):
    marker = tmp_path / "pwned"
    payload = np.empty(1, dtype=object)
    payload[0] = _Payload(str(marker))
    blob = _npy(payload)
    assert b"pwned" in blob  # the .npy really carries a pickle
    # sanity: NumPy with allow_pickle=True would run it
    node = {"$type": "tensor", "array": 0, "dtype": "float32", "shape": [1]}
    path = tmp_path / "evil.pt"
    _craft(path, dict(HEADER, object=node), [("0.npy", blob)])
    with pytest.raises(RuntimeError, match="'.*evil.pt' is corrupt.*without pickle"):
        load(path, weights_only=weights_only)
    nd = {"$type": "ndarray", "array": 0, "dtype": "|O", "shape": [1]}
    _craft(path, dict(HEADER, object=nd), [("0.npy", blob)])
    with pytest.raises(RuntimeError, match="'.*evil.pt' is corrupt"):
        load(path, weights_only=weights_only)
    assert not marker.exists()


def test_torch_style_pickle_payload_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil_torch.pt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", pickle.dumps({"w": _Payload(str(marker))}, protocol=2))
        zf.writestr("archive/version", "3\n")
    with pytest.raises(pickle.UnpicklingError,
                       match="(?s)Weights only load failed for '.*evil_torch.pt'.*Unsupported "
                             "global: GLOBAL io.open was not an allowed global"):
        load(path)
    # os.system through the GLOBAL/REDUCE opcodes
    evil = b"\x80\x02cos\nsystem\nq\x00X\x0c\x00\x00\x00touch /tmp/xq\x01\x85q\x02Rq\x03."
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", evil)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL os.system whose module os is blocked"):
        load(path, weights_only=False)
    assert not marker.exists()


def test_truncated_torch_pickle_names_the_file(tmp_path):
    path = tmp_path / "t.pt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", pickle.dumps({"a": 1}, protocol=2)[:-3])
    with pytest.raises(RuntimeError, match="'.*t.pt' is corrupt or truncated"):
        load(path)


def test_whole_module_or_optimizer_points_to_state_dict():
    model = ember.nn.Linear(2, 2)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    for obj, name in ((model, "ember.nn.modules.linear.Linear"), (opt, "ember.optim.sgd.SGD"),
                      ({"model": model}, "ember.nn.modules.linear.Linear")):
        with pytest.raises(TypeError, match=rf"can't store a whole {name} object.*state_dict\(\)"):
            save(obj, io.BytesIO())


def test_save_arguments():
    buf = io.BytesIO()
    save(ember.ones(1), buf, pickle_module=pickle, pickle_protocol=4,
         _disable_byteorder_record=True)
    assert _roundtrip_bytes(buf).tolist() == [1.0]
    with pytest.raises(NotImplementedError, match="pickle_module"):
        save(ember.ones(1), io.BytesIO(), pickle_module=json)
    with pytest.raises(NotImplementedError, match="_use_new_zipfile_serialization"):
        save(ember.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match="pickle protocol"):
        save(ember.ones(1), io.BytesIO(), pickle_protocol=99)


def test_load_arguments(tmp_path):
    path = tmp_path / "t.pt"
    save({"w": ember.arange(3.)}, path)
    for kw in ({"weights_only": False}, {"weights_only": None}, {"pickle_module": pickle},
               {"encoding": "latin1"}, {"mmap": True}, {"mmap": False}):
        assert load(path, **kw)["w"].tolist() == [0., 1., 2.], kw
    with pytest.raises(NotImplementedError, match="pickle_module"):
        load(path, pickle_module=json)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        load(path, foo=1)


def _roundtrip_bytes(buf):
    buf.seek(0)
    return load(buf)
