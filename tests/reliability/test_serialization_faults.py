"""ember.save / ember.load fed crafted, corrupt and huge-by-declaration files, and failing saves.

Loading must validate every record (nothing in a file may set a tensor's internals), keep
views of one storage as views (no allocation beyond what the file holds), report every
problem with a file as one error class naming the file, and a failed save must leave the
previous file intact.
"""
import errno
import io
import json
import os
import pickle
import subprocess
import sys
import textwrap
import tracemalloc
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHILD_ENV = dict(os.environ, PYTHONPATH=ROOT)


# ---- torch-style checkpoints crafted without torch -------------------------------------------
# Stand-ins pickled by reference; their GLOBAL lines are then renamed to torch's names, so the
# files read like torch.save's (and torch itself can load them, where it is installed).
def _rebuild_tensor_v2(*args):
    raise AssertionError("a stand-in, never called")


def _rebuild_parameter(*args):
    raise AssertionError("a stand-in, never called")


class FloatStorage:
    pass


class IntStorage:
    pass


_TORCH_NAMES = {"_rebuild_tensor_v2": "torch._utils", "_rebuild_parameter": "torch._utils",
                "FloatStorage": "torch", "IntStorage": "torch"}


class _Reduce:
    """Pickles as ``func(*args)``, then pickle's BUILD step with ``state`` if given."""

    def __init__(self, func, args, state=None):
        self.func, self.args, self.state = func, args, state

    def __reduce__(self):
        return (self.func, self.args) + (() if self.state is None else (self.state,))


class _StorageRef:
    def __init__(self, key, numel, storage_type=FloatStorage):
        self.key, self.numel, self.storage_type = key, numel, storage_type


class _TorchStylePickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", obj.storage_type, obj.key, "cpu", obj.numel)
        return None


def _torch_style_file(path, obj, storages):
    buf = io.BytesIO()
    _TorchStylePickler(buf, protocol=2).dump(obj)
    data = buf.getvalue()
    for name, module in _TORCH_NAMES.items():
        data = data.replace(f"c{__name__}\n{name}\n".encode(), f"c{module}\n{name}\n".encode())
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", data)
        zf.writestr("archive/byteorder", "little")
        for key, array in storages.items():
            zf.writestr(f"archive/data/{key}", np.ascontiguousarray(array).tobytes())
        zf.writestr("archive/version", "3\n")
    return path


def _tensor(storage, offset, size, stride, requires_grad=False, **kw):
    return _Reduce(_rebuild_tensor_v2,
                   (storage, offset, size, stride, requires_grad, OrderedDict()), **kw)


STORAGE4 = {"0": np.arange(4, dtype=np.float32)}


def _refused(path):
    """load(path) must refuse the file: one error that is a RuntimeError naming the file and
    (as PyTorch's weights-only loader raises) an UnpicklingError."""
    with pytest.raises(RuntimeError, match=f"'.*{path.name}'") as info:
        ember.load(path)
    assert isinstance(info.value, pickle.UnpicklingError)
    return str(info.value)


# ---- records are validated (BUILD, duplicate records) ----------------------------------------
@pytest.mark.parametrize("state", [{"_data": "evil"}, (None, {"_data": "evil"}),
                                   {"_grad_fn": 7, "_base": 1}])
def test_build_cannot_set_tensor_internals(tmp_path, state):
    path = _torch_style_file(tmp_path / "build.pt",
                             _tensor(_StorageRef("0", 4), 0, (4,), (1,), state=state), STORAGE4)
    assert "state a tensor is built with must be (storage, storage_offset, size, stride)" in \
        _refused(path)


def _raw_pickle_file(path, data):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", data)
    return path


def test_build_only_on_tensors_and_ordered_dicts(tmp_path):
    # BUILD with state {"np": 1} on a plain dict, and on the storage type object the file named
    set_np = b"}X\x02\x00\x00\x00npK\x01sb."
    path = _raw_pickle_file(tmp_path / "build_dict.pt", b"\x80\x02}" + set_np)
    assert "can only build Tensor, Parameter, OrderedDict or types allowlisted via " \
           "`add_safe_globals`, but got builtins.dict" in _refused(path)
    path = _raw_pickle_file(tmp_path / "build_type.pt", b"\x80\x02ctorch\nFloatStorage\n" + set_np)
    assert "can only build Tensor, Parameter, OrderedDict or types allowlisted" in \
        _refused(path)
    # an OrderedDict's attributes come from a dict of names (a state_dict's _metadata)
    path = _torch_style_file(tmp_path / "odict_slots.pt",
                             _Reduce(OrderedDict, (), (None, {"x": 1})), {})
    assert "state of an OrderedDict must be a dict" in _refused(path)
    path = _torch_style_file(tmp_path / "odict.pt",
                             _Reduce(OrderedDict, (), {"_metadata": {"": {"version": 1}}}), {})
    assert ember.load(path)._metadata == {"": {"version": 1}}


def test_items_are_only_set_on_dicts(tmp_path):
    class SetItem:  # pickles as: tensor; SETITEM(0 -> 5.0) on it
        def __reduce__(self):
            return (_rebuild_tensor_v2, (_StorageRef("0", 4), 0, (4,), (1,), False,
                                         OrderedDict()), None, None, iter([(0, 5.0)]))
    path = _torch_style_file(tmp_path / "setitem.pt", SetItem(), STORAGE4)
    assert "can only SETITEM for dicts, but got ember._tensor.Tensor" in _refused(path)


def test_legacy_set_state_is_accepted_and_checked(tmp_path):
    ref = _StorageRef("0", 4)
    path = _torch_style_file(tmp_path / "set.pt",
                             _tensor(ref, 0, (4,), (1,), state=(ref, 1, (2,), (1,))), STORAGE4)
    assert ember.load(path).tolist() == [1.0, 2.0]
    path = _torch_style_file(tmp_path / "set_oob.pt",
                             _tensor(ref, 0, (4,), (1,), state=(ref, 3, (2,), (1,))), STORAGE4)
    with pytest.raises(RuntimeError, match="'.*set_oob.pt' is corrupt: .*reaches past the end"):
        ember.load(path)


def test_torch_refuses_build_with_arbitrary_state_too(tmp_path):
    torch = pytest.importorskip("torch")
    path = _torch_style_file(tmp_path / "build.pt",
                             _tensor(_StorageRef("0", 4), 0, (4,), (1,), state={"x": 1}),
                             STORAGE4)
    with pytest.raises(Exception):
        torch.load(path, weights_only=True)
    ref = _StorageRef("0", 4)
    path = _torch_style_file(tmp_path / "set.pt",
                             _tensor(ref, 0, (4,), (1,), state=(ref, 1, (2,), (1,))), STORAGE4)
    assert ember.load(path).tolist() == torch.load(path, weights_only=True).tolist()


def test_one_storage_read_as_two_dtypes_is_corrupt(tmp_path):
    path = _torch_style_file(tmp_path / "two_dtypes.pt",
                             [_tensor(_StorageRef("0", 4), 0, (4,), (1,)),
                              _tensor(_StorageRef("0", 4, IntStorage), 0, (4,), (1,))], STORAGE4)
    with pytest.raises(RuntimeError, match="'.*two_dtypes.pt' is corrupt: storage 0 is "
                                           "recorded as 4 x float32 and as 4 x int32"):
        ember.load(path)


def test_requires_grad_must_be_a_bool(tmp_path):
    path = _torch_style_file(tmp_path / "rg.pt",
                             _tensor(_StorageRef("0", 4), 0, (4,), (1,), "yes"), STORAGE4)
    with pytest.raises(RuntimeError, match="'.*rg.pt' is corrupt: requires_grad must be a bool"):
        ember.load(path)


def _write_v1(path, obj_node, arrays):
    """A file as the first ember format wrote it: one array per tensor, version 1."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("structure.json", json.dumps(
            {"format": "ember", "version": 1, "byteorder": "little", "num_arrays": len(arrays),
             "object": obj_node}))
        for i, a in enumerate(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, a, allow_pickle=False)
            zf.writestr(f"{i}.npy", buf.getvalue())
    return path


def _v1_tensor(array, dtype, shape, **kw):
    return dict({"$type": "tensor", "array": array, "dtype": dtype, "shape": shape,
                 "requires_grad": False, "parameter": False, "device": "cpu"}, **kw)


def test_records_of_one_array_must_agree(tmp_path):
    a = np.arange(6, dtype=np.float32)
    node = {"$type": "list", "items": [_v1_tensor(0, "float32", [6]),
                                       _v1_tensor(0, "int32", [6])]}
    path = _write_v1(tmp_path / "dtype.pt", node, [a])
    with pytest.raises(RuntimeError, match="'.*dtype.pt' is corrupt: two records of tensor 0 "
                                           "differ"):
        ember.load(path)
    node["items"][1] = _v1_tensor(0, "float32", [2, 3])
    path = _write_v1(tmp_path / "shape.pt", node, [a])
    with pytest.raises(RuntimeError, match="'.*shape.pt' is corrupt: two records of tensor 0"):
        ember.load(path)
    # an ndarray record may not reuse a tensor's array (nor another ndarray's)
    node["items"][1] = {"$type": "ndarray", "array": 0, "dtype": "<f4", "shape": [6]}
    path = _write_v1(tmp_path / "shared.pt", node, [a])
    with pytest.raises(RuntimeError, match="'.*shared.pt' is corrupt: array 0.npy is used by "
                                           "more than one record"):
        ember.load(path)


def test_old_format_files_still_load(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = _v1_tensor(0, "float32", [2, 3], requires_grad=True, parameter=True)
    node = {"$type": "dict", "keys": ["p", "again", "n"],
            "values": [t, t, {"$type": "ndarray", "array": 1, "dtype": "<i8", "shape": [3]}]}
    out = ember.load(_write_v1(tmp_path / "v1.pt", node, [a, np.arange(3)]))
    assert type(out["p"]) is nn.Parameter and out["p"].requires_grad
    assert out["p"] is out["again"] and out["p"].tolist() == a.tolist()
    assert out["n"].tolist() == [0, 1, 2]


# ---- views stay views: memory bounded by the file ---------------------------------------------
def _peak_bytes(fn):
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_torch_expanded_view_loads_as_a_view(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "expanded.pt"
    torch.save(torch.zeros(1).expand(3000, 3000), path)  # 36 MB if materialised
    t, peak = _peak_bytes(lambda: ember.load(path))
    assert peak < 1 << 20
    ref = torch.load(path)
    assert t.shape == tuple(ref.shape) and t.stride() == ref.stride() == (0, 0)
    assert float(t.sum()) == 0.0


def test_torch_views_of_one_storage_share_memory(tmp_path):
    torch = pytest.importorskip("torch")
    base = torch.arange(20000.)
    views = [base[i:] for i in range(300)]  # 12 MB if each view were copied
    obj = {"views": views, "param": torch.nn.Parameter(base[:10].clone()),
           "grad_view": base.view(100, 200).t().requires_grad_()}
    path = tmp_path / "views.pt"
    torch.save(obj, path)
    out, peak = _peak_bytes(lambda: ember.load(path))
    assert peak < 2 << 20
    ref = torch.load(path)
    assert out["views"][7].storage_offset() == ref["views"][7].storage_offset() == 7
    assert out["grad_view"].stride() == ref["grad_view"].stride()
    # requires_grad and Parameter-ness are per tensor, as before
    assert out["grad_view"].requires_grad and out["grad_view"].is_leaf
    assert not out["views"][0].requires_grad and type(out["param"]) is nn.Parameter
    # an in-place change through one view shows through the others, as in PyTorch
    with torch.no_grad():
        ref["views"][0].mul_(2)
    with ember.no_grad():
        out["views"][0].mul_(2)
    for k in (1, 299):
        np.testing.assert_array_equal(out["views"][k].numpy(), ref["views"][k].numpy())
    np.testing.assert_array_equal(out["grad_view"].detach().numpy(),
                                  ref["grad_view"].detach().numpy())


def test_torch_negative_view_keeps_its_values(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "neg.pt"
    torch.save(torch.arange(4.)._neg_view(), path)
    assert ember.load(path).tolist() == torch.load(path).tolist() == [-0.0, -1.0, -2.0, -3.0]


def test_declared_storage_larger_than_the_file_is_refused_before_allocating(tmp_path):
    path = _torch_style_file(tmp_path / "huge.pt", _tensor(_StorageRef("0", 10 ** 10), 0, (4,),
                                                           (1,)), STORAGE4)
    with pytest.raises(RuntimeError, match=r"'.*huge.pt' is corrupt: archive/data/0 holds 16 "
                                           r"bytes; its tensors' storage needs 40000000000"):
        _peak_bytes(lambda: ember.load(path))
    path = _torch_style_file(tmp_path / "oob.pt", _tensor(_StorageRef("0", 4), 1, (4,), (1,)),
                             STORAGE4)
    with pytest.raises(RuntimeError, match="'.*oob.pt' is corrupt: a tensor of size .* reaches "
                                           "past the end of its storage of 4 elements"):
        ember.load(path)


def test_ember_expanded_view_saves_and_loads_small(tmp_path):
    path = tmp_path / "expanded.pt"
    t = ember.zeros(1).expand(3000, 3000)
    _, peak = _peak_bytes(lambda: ember.save(t, path))
    assert peak < 1 << 20 and path.stat().st_size < 4096
    out, peak = _peak_bytes(lambda: ember.load(path))
    assert peak < 1 << 20
    assert out.shape == (3000, 3000) and out.stride() == (0, 0) and float(out.sum()) == 0.0


def test_ember_views_of_one_tensor_are_saved_once_and_share_memory(tmp_path):
    base = ember.arange(10000.)
    obj = {"views": [base[i:] for i in range(100)], "t": base.view(100, 100).t(),
           "param": nn.Parameter(base[:5])}
    path = tmp_path / "views.pt"
    ember.save(obj, path)
    assert path.stat().st_size < 2 * 10000 * 4
    out = ember.load(path)
    assert out["t"].stride() == (1, 100) and out["t"].tolist() == obj["t"].tolist()
    assert type(out["param"]) is nn.Parameter and out["param"].requires_grad
    assert not out["views"][3].requires_grad
    with ember.no_grad():
        out["views"][0].add_(1)
    assert out["views"][50][0].item() == 51.0 and out["t"][0, 1].item() == 101.0
    assert out["param"].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_ember_slice_of_a_big_tensor_is_saved_alone(tmp_path):
    big = ember.zeros(1000, 1000)
    path = tmp_path / "column.pt"
    ember.save({"col": big[:, 3], "row": big[5]}, path)
    assert path.stat().st_size < 20000  # not the 4 MB matrix the column spans
    out = ember.load(path)
    assert out["col"].shape == (1000,) and out["row"].shape == (1000,)


def test_ember_storage_records_are_checked(tmp_path):
    path = tmp_path / "ok.pt"
    base = ember.arange(4.)
    ember.save([base, base[1:]], path)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    head = json.loads(members["structure.json"])

    def crafted(label, change):
        h = json.loads(json.dumps(head))
        change(h["object"]["items"])
        p = tmp_path / f"{label}.pt"
        with zipfile.ZipFile(p, "w") as zf:
            for n, data in members.items():
                zf.writestr(n, json.dumps(h) if n == "structure.json" else data)
        return p

    cases = {"offset": (lambda items: items[1].update(offset=2), "reaches past the end"),
             "stride": (lambda items: items[1].update(stride=[-1]), "negative size"),
             "dtype": (lambda items: items[1].update(dtype="int32"), "holds float32 but a "
                                                                     "tensor record reads it"),
             "same_id": (lambda items: items[1].update(id=0), "two records of tensor 0"),
             "size": (lambda items: items[0].update(shape=[2 ** 40], stride=[0]), None)}
    for label, (change, match) in cases.items():
        path = crafted(label, change)
        if match is None:  # an expanded view of a real storage is legitimate
            assert ember.load(path)[0].shape == (2 ** 40,)
            continue
        with pytest.raises(RuntimeError, match=f"'.*{label}.pt' is corrupt: .*{match}"):
            ember.load(path)


# ---- one error class for every broken file ----------------------------------------------------
def _npy_with_header(header):
    dict_text = header.encode("latin1")
    dict_text += b" " * (-(len(dict_text) + 11) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(dict_text).to_bytes(2, "little") + dict_text + b"\0" * 24


@pytest.mark.parametrize("header,shape,match", [
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (6,", [6], "bad .npy header"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (10**12,), }", [6], "bad .npy header"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }", [100000000000],
     r"declares shape \[100000000000\] \(400000000000 bytes\) but holds 24 bytes"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (-6,), }", [-6], "negative size"),
    ("{'descr': 'V8', 'fortran_order': False, 'shape': (3,), }", [3], "has dtype"),
])
def test_corrupt_npy_header_names_the_file(tmp_path, header, shape, match):
    node = {"$type": "ndarray", "array": 0, "dtype": "<f4", "shape": shape}
    path = tmp_path / "header.pt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("structure.json", json.dumps({"format": "ember", "version": 1,
                                                  "num_arrays": 1, "object": node}))
        zf.writestr("0.npy", _npy_with_header(header))
    with pytest.raises(RuntimeError, match=f"'.*header.pt' is corrupt: .*{match}"):
        ember.load(path)


def test_map_location_errors_reach_the_caller_unchanged(tmp_path):
    path = tmp_path / "m.pt"
    ember.save(ember.ones(2), path)

    def broken(tensor, location):
        raise ValueError("my map_location broke")

    with pytest.raises(ValueError, match="my map_location broke"):
        ember.load(path, map_location=broken)
    with pytest.raises(TypeError, match="map_location should be"):
        ember.load(path, map_location=3)


_FUZZ = textwrap.dedent(r"""
    import io, json, os, re, resource, sys, tracemalloc, zipfile
    import ember

    # A giant allocation fails (and shows as a MemoryError) instead of swapping: address
    # space is capped at what the process has now plus 512 MiB.
    try:
        with open("/proc/self/status") as status:
            vm_kib = int(next(l for l in status if l.startswith("VmSize:")).split()[1])
    except (OSError, StopIteration, ValueError):
        vm_kib = None
    if vm_kib is not None:
        cap = vm_kib * 1024 + (512 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    class Named(io.BytesIO):
        name = "fuzzed-file.pt"

    def rezip(members, name, content):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as zf:
            for n, data in members.items():
                zf.writestr(n, content if n == name else data)
        return out.getvalue()

    def flipped(data, i):
        for value in (0xFF, 0x39):
            yield data[:i] + bytes([value]) + data[i + 1:]

    def variants(blob):
        for cut in range(0, len(blob), max(1, len(blob) // 60)):
            yield blob[:cut]
        # the zip's own records: the first local header, the central directory and its end
        for i in [*range(min(60, len(blob))), *range(max(0, len(blob) - 250), len(blob))]:
            yield from flipped(blob, i)
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            members = {n: zf.read(n) for n in zf.namelist()}
        for name, data in members.items():
            # headers: a .npy's first 128 bytes, the pickle's opcodes, the JSON's start
            for i in range(min(len(data), 200 if name.endswith(".pkl") else 130)):
                if i % 2 == 0:
                    yield rezip(members, name, data[:i])
                for changed in flipped(data, i):
                    yield rezip(members, name, changed)
            text = data.decode("latin1")
            numbers = re.finditer(r"-?\d+", text if name.endswith(".json") else text[:130])
            for m in numbers:  # every declared size, stride, offset, index: huge or negative
                for big in ("-1", "99999999999", "4611686018427387904"):
                    yield rezip(members, name,
                                (text[:m.start()] + big + text[m.end():]).encode("latin1"))

    bad, loads, errors = [], 0, 0
    tracemalloc.start()
    for path in sys.argv[1:]:
        for blob in variants(open(path, "rb").read()):
            loads += 1
            try:
                ember.load(Named(blob))
            except RuntimeError as e:
                errors += 1
                if "fuzzed-file.pt" not in str(e) or "memory" in str(e):
                    bad.append((os.path.basename(path), type(e).__name__, str(e)[:200]))
            except BaseException as e:
                bad.append((os.path.basename(path), type(e).__name__, str(e)[:200]))
    print(json.dumps({"loads": loads, "errors": errors, "bad": bad[:10],
                      "peak": tracemalloc.get_traced_memory()[1]}))
""")


def test_fuzzed_files_fail_with_one_error_class_naming_the_file(tmp_path):
    if sys.platform == "win32":
        pytest.skip("RLIMIT_AS is POSIX")
    files = [tmp_path / "ember.pt", tmp_path / "v1.pt"]
    ember.save({"w": ember.arange(6.).reshape(2, 3), "v": ember.ones(4).expand(2, 4),
                "n": np.arange(3, dtype=np.int16)}, files[0])
    _write_v1(files[1], {"$type": "list", "items": [_v1_tensor(0, "float32", [2, 3])]},
              [np.zeros((2, 3), np.float32)])
    try:
        import torch
    except ImportError:
        pass
    else:
        files.append(tmp_path / "torch.pt")
        b = torch.arange(6.)
        torch.save({"w": b.view(2, 3), "p": torch.nn.Parameter(b[1:3])}, files[-1])
    proc = subprocess.run([sys.executable, "-c", _FUZZ, *map(str, files)], env=CHILD_ENV,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["bad"] == [], report["bad"]
    assert report["errors"] > report["loads"] // 2  # the fuzz did break files
    assert report["peak"] < 64 << 20


# ---- a failed save leaves the old file ---------------------------------------------------------
def test_failed_save_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(3)}, path)
    old = path.read_bytes()
    real_write_array = np.lib.format.write_array
    calls = []

    def disk_full_on_second_array(*args, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write_array(*args, **kw)

    monkeypatch.setattr(np.lib.format, "write_array", disk_full_on_second_array)
    with pytest.raises(OSError, match="No space left"):
        ember.save({"a": ember.zeros(100), "b": np.arange(100)}, path)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["ckpt.pt"]
    monkeypatch.undo()
    ember.save({"a": ember.zeros(2)}, path)  # and a save that works replaces it
    assert ember.load(path)["a"].tolist() == [0.0, 0.0] and os.listdir(tmp_path) == ["ckpt.pt"]


_FILE_SIZE_LIMIT = textwrap.dedent("""
    import resource, signal, sys
    import ember
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
    try:
        ember.save({"w": ember.zeros(1_000_000)}, sys.argv[1])
    except OSError as e:
        print("OSError", e.errno)
""")


def test_save_hitting_the_file_size_limit_keeps_the_old_file(tmp_path):
    if not hasattr(os, "fork"):
        pytest.skip("RLIMIT_FSIZE is POSIX")
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.arange(10.)}, path)
    old = path.read_bytes()
    proc = subprocess.run([sys.executable, "-c", _FILE_SIZE_LIMIT, str(path)], env=CHILD_ENV,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["OSError", str(errno.EFBIG)], proc.stderr[-2000:]
    assert path.read_bytes() == old and os.listdir(tmp_path) == ["ckpt.pt"]


def test_save_through_a_symlink_keeps_the_link_and_the_mode(tmp_path):
    if not hasattr(os, "symlink") or sys.platform == "win32":
        pytest.skip("POSIX links and modes")
    target = tmp_path / "real.pt"
    ember.save(ember.ones(1), target)
    os.chmod(target, 0o640)
    link = tmp_path / "link.pt"
    link.symlink_to(target)
    ember.save(ember.zeros(2), link)
    assert link.is_symlink() and ember.load(target).tolist() == [0.0, 0.0]
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["link.pt", "real.pt"]
