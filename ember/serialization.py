"""``ember.save`` / ``ember.load`` without pickle: loading a file never runs code.

An ember file is a NumPy ``.npz`` (a zip): one ``<n>.npy`` member per tensor (written and
read with ``allow_pickle=False``) and ``structure.json``, a JSON description of the saved
object that points at the arrays by number. It stores tensors (and Parameters), NumPy
arrays, ``None``, bools, ints, floats (nan/inf too), strings, bytes, dtypes, devices and
lists/tuples/dicts/OrderedDicts of these (dict keys of any of these types, order kept; a
state_dict's ``_metadata`` too). Anything else raises TypeError when saving: there is no
pickle fallback.

``ember.load`` also reads checkpoints written by ``torch.save`` (the zip format with
``data.pkl``) through a restricted unpickler: the only globals it resolves are
``collections.OrderedDict``, torch's tensor/parameter rebuild functions and its storage
types, all mapped to ember's own code; anything else is refused before it can run.

>>> import ember, io
>>> from ember.serialization import save, load   # also ember.save / ember.load
>>> buf = io.BytesIO()
>>> save({"w": ember.ones(2), "step": 3}, buf)
>>> _ = buf.seek(0)
>>> load(buf)
{'w': tensor([1., 1.]), 'step': 3}
"""
import base64
import io
import json
import math
import os
import pickle
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

__all__ = ["save", "load"]

_FORMAT = "ember"
_VERSION = 1
_STRUCTURE = "structure.json"


def _name(f):
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"<{type(f).__name__}>"


# ---- save -------------------------------------------------------------------------------------
class _Encoder:
    def __init__(self):
        from ._tensor import Tensor
        from .backend.dtypes import dtype
        from .device import device
        from .nn.parameter import Parameter
        self.Tensor, self.Parameter, self.dtype, self.device = Tensor, Parameter, dtype, device
        self.arrays = []
        self.memo = {}  # id(tensor) -> its node (a tensor saved twice is loaded as one object)
        self.keep = []  # keeps memoised objects alive so ids stay unique

    def array(self, a):
        self.arrays.append(a if a.flags.c_contiguous else a.copy(order="C"))
        return len(self.arrays) - 1

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, self.Tensor):
            node = self.memo.get(id(obj))
            if node is None:
                node = {"$type": "tensor", "array": self.array(obj._data),
                        "dtype": obj.dtype.name, "shape": list(obj.shape),
                        "requires_grad": bool(obj.requires_grad),
                        "parameter": isinstance(obj, self.Parameter),
                        "device": str(obj.device)}
                self.memo[id(obj)] = node
                self.keep.append(obj)
            return node
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            obj = float(obj)
            return obj if math.isfinite(obj) else {"$type": "float", "value": repr(obj)}
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind not in "biuf":
                raise TypeError(f"ember.save can't store NumPy arrays of dtype {obj.dtype} "
                                "(only bool, integer and floating point arrays)")
            return {"$type": "ndarray", "array": self.array(obj), "dtype": obj.dtype.str,
                    "shape": list(obj.shape)}
        if isinstance(obj, (bytes, bytearray)):
            return {"$type": "bytes", "value": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, self.dtype):
            return {"$type": "dtype", "name": obj.name}
        if isinstance(obj, self.device):
            return {"$type": "device", "name": str(obj)}
        if isinstance(obj, dict):
            node = {"$type": "odict" if isinstance(obj, OrderedDict) else "dict",
                    "keys": [self.encode(k) for k in obj.keys()],
                    "values": [self.encode(v) for v in obj.values()]}
            metadata = getattr(obj, "_metadata", None)
            if metadata is not None:
                node["metadata"] = self.encode(metadata)
            return node
        if isinstance(obj, tuple):
            return {"$type": "tuple", "items": [self.encode(v) for v in obj]}
        if isinstance(obj, list):
            return {"$type": "list", "items": [self.encode(v) for v in obj]}
        raise TypeError(
            f"ember.save can't store an object of type {type(obj).__module__}."
            f"{type(obj).__qualname__}: it stores tensors, NumPy arrays, None, bools, ints, "
            "floats, strings, bytes, dtypes, devices and lists, tuples and dicts of these "
            "(no pickle)")


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` (tensors, state_dicts, optimizer state, nested containers of tensors,
    numbers, strings and None) to ``f``, a path or a writable binary file object.

    The file is a zip of ``.npy`` arrays plus ``structure.json``; see the module docstring.
    ``pickle_module`` and the other PyTorch-only arguments are accepted and ignored.
    """
    enc = _Encoder()
    structure = enc.encode(obj)
    meta = json.dumps({"format": _FORMAT, "version": _VERSION, "byteorder": "little",
                       "num_arrays": len(enc.arrays), "object": structure},
                      allow_nan=False, separators=(",", ":"))
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write_zip(fh, meta, enc.arrays)
    else:
        _write_zip(f, meta, enc.arrays)


def _write_zip(fh, meta, arrays):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(_STRUCTURE, meta)
        for i, a in enumerate(arrays):
            if a.dtype.byteorder == ">":
                a = a.astype(a.dtype.newbyteorder("<"))
            with zf.open(f"{i}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, a, allow_pickle=False)


# ---- load -------------------------------------------------------------------------------------
class _LoadError(RuntimeError):
    pass


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object saved by :func:`save` (or a ``torch.save`` checkpoint of tensors,
    state_dicts and plain containers) from ``f``, a path or a readable binary file object.

    Nothing in the file is executed, whatever ``weights_only`` says. Tensors come back with
    their dtype, shape and ``requires_grad``; Parameters come back as ``nn.Parameter``.
    ``map_location`` may be a device or string ('cpu'), a dict mapping saved locations to
    new ones, or a callable ``(tensor, location) -> tensor or None``. A corrupt, truncated or
    foreign file raises RuntimeError naming the file; a torch checkpoint that needs any
    other global raises ``pickle.UnpicklingError``.
    """
    name = _name(f)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_stream(fh, name, map_location)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load_stream(f, name, map_location)


def _load_stream(fh, name, map_location):
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as e:
        raise RuntimeError(f"ember.load: {name} is not a valid checkpoint (corrupt or truncated, "
                           f"or not a file written by ember.save / torch.save): {e}") from None
    with zf:
        names = zf.namelist()
        try:
            if _STRUCTURE in names:
                return _load_ember(zf, name, map_location)
            pkl = [n for n in names if n.endswith("data.pkl")]
            if pkl:
                return _load_torch(zf, min(pkl, key=len), name, map_location)
        except _LoadError:
            raise
        except pickle.UnpicklingError as e:
            if str(e).startswith("ember.load:"):
                raise
            raise RuntimeError(f"ember.load: {name} is corrupt or truncated: "
                               f"UnpicklingError: {e}") from None
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError, TypeError,
                IndexError, AttributeError, RecursionError, UnicodeDecodeError,
                zlib.error) as e:
            raise RuntimeError(f"ember.load: {name} is corrupt or truncated: "
                               f"{type(e).__name__}: {e}") from None
        raise RuntimeError(f"ember.load: {name} is a zip file but neither an ember file "
                           f"(no {_STRUCTURE}) nor a torch.save checkpoint (no data.pkl)")


def _relocate(t, location, map_location):
    from .device import device
    if map_location is None:
        target = location
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif isinstance(map_location, (str, device)):
        target = map_location
    elif callable(map_location):
        out = map_location(t, location)
        return t if out is None else out
    else:
        raise TypeError(f"map_location should be a str, device, dict or callable, "
                        f"got {type(map_location).__name__}")
    target = str(device(str(target)))
    return t if target == "cpu" else t.to(target)


class _Decoder:
    def __init__(self, zf, name, header, map_location):
        from ._tensor import Tensor
        from .nn.parameter import Parameter
        self.Tensor, self.Parameter = Tensor, Parameter
        self.zf, self.name, self.map_location = zf, name, map_location
        self.num_arrays = header.get("num_arrays")
        self.tensors = {}  # array number -> loaded tensor (identity kept)

    def fail(self, msg):
        raise _LoadError(f"ember.load: {self.name} is corrupt: {msg}")

    def read_array(self, index, dtype, shape):
        if not isinstance(index, int) or isinstance(index, bool) or not (
                0 <= index < (self.num_arrays or 0)):
            self.fail(f"bad array number {index!r}")
        member = f"{index}.npy"
        try:
            with self.zf.open(member) as fh:
                a = np.lib.format.read_array(fh, allow_pickle=False)
        except KeyError:
            self.fail(f"array {member} is missing")
        except ValueError as e:  # object arrays land here: pickle is never used
            self.fail(f"array {member} can't be read without pickle ({e})")
        if a.dtype.kind not in "biuf" or a.dtype != dtype:
            self.fail(f"array {member} has dtype {a.dtype}, expected {dtype}")
        if list(a.shape) != list(shape):
            self.fail(f"array {member} has shape {list(a.shape)}, expected {list(shape)}")
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        return a

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            self.fail("untagged list in the structure")
        if not isinstance(node, dict) or "$type" not in node:
            self.fail(f"unexpected node {str(node)[:80]}")
        kind = node["$type"]
        if kind == "tensor":
            return self.tensor(node)
        if kind in ("list", "tuple"):
            items = [self.decode(v) for v in node["items"]]
            return items if kind == "list" else tuple(items)
        if kind in ("dict", "odict"):
            keys, values = node["keys"], node["values"]
            if not isinstance(keys, list) or not isinstance(values, list) or \
                    len(keys) != len(values):
                self.fail("dict with mismatched keys and values")
            out = (OrderedDict if kind == "odict" else dict)()
            for k, v in zip(keys, values):
                k = self.decode(k)
                if isinstance(k, list):
                    self.fail("a list as dict key")
                out[k] = self.decode(v)
            if "metadata" in node:
                if kind == "odict":
                    out._metadata = self.decode(node["metadata"])
            return out
        if kind == "float":
            if node["value"] not in ("nan", "inf", "-inf"):
                self.fail(f"bad float {node['value']!r}")
            return float(node["value"])
        if kind == "ndarray":
            return self.read_array(node["array"], np.dtype(str(node["dtype"])), node["shape"])
        if kind == "bytes":
            return base64.b64decode(node["value"].encode("ascii"), validate=True)
        if kind == "dtype":
            from .backend.dtypes import from_name
            return from_name(node["name"])
        if kind == "device":
            from .device import device
            return device(node["name"])
        self.fail(f"unknown node type {kind!r}")

    def tensor(self, node):
        from .backend.dtypes import from_name
        index = node["array"]
        if index in self.tensors:
            return self.tensors[index]
        try:
            dt = from_name(node["dtype"])
        except KeyError:
            self.fail(f"unknown dtype {node['dtype']!r}")
        a = self.read_array(index, dt.np, node["shape"])
        t = self.Tensor._make(a)
        t = _relocate(t, node.get("device", "cpu"), self.map_location)
        requires_grad = bool(node.get("requires_grad", False))
        if node.get("parameter"):
            t = self.Parameter(t, requires_grad=requires_grad)
        elif requires_grad:
            t.requires_grad_(True)
        self.tensors[index] = t
        return t


def _load_ember(zf, name, map_location):
    try:
        header = json.loads(zf.read(_STRUCTURE).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise _LoadError(f"ember.load: {name} is corrupt: {_STRUCTURE} is not valid JSON "
                         f"({e})") from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        raise _LoadError(f"ember.load: {name} is corrupt: {_STRUCTURE} is not an ember header")
    if header.get("version") != _VERSION:
        raise _LoadError(f"ember.load: {name} has format version {header.get('version')!r}; "
                         f"this ember reads version {_VERSION}")
    return _Decoder(zf, name, header, map_location).decode(header.get("object"))


# ---- torch.save checkpoints, read without running their pickle's code --------------------------
_TORCH_STORAGES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
    "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
}
_TORCH_DTYPES = {"float32": np.float32, "float": np.float32, "float64": np.float64,
                 "double": np.float64, "float16": np.float16, "half": np.float16,
                 "int64": np.int64, "long": np.int64, "int32": np.int32, "int": np.int32,
                 "int16": np.int16, "short": np.int16, "int8": np.int8, "uint8": np.uint8,
                 "bool": np.bool_}


class _StorageType:
    def __init__(self, np_dtype):
        self.np = np.dtype(np_dtype)


class _TorchDtype:
    def __init__(self, np_dtype):
        self.np = np.dtype(np_dtype)


class _TorchUnpickler(pickle.Unpickler):
    def __init__(self, fh, zf, prefix, name, map_location, big_endian):
        super().__init__(fh)
        self.zf, self.prefix, self.name = zf, prefix, name
        self.map_location, self.big_endian = map_location, big_endian
        self.storages = {}

    def find_class(self, module, qualname):
        if (module, qualname) == ("collections", "OrderedDict"):
            return OrderedDict
        if module == "torch._utils":
            fn = {"_rebuild_tensor_v2": self.rebuild_tensor,
                  "_rebuild_tensor": self.rebuild_tensor,
                  "_rebuild_parameter": self.rebuild_parameter,
                  "_rebuild_parameter_with_state": self.rebuild_parameter}.get(qualname)
            if fn is not None:
                return fn
        if module == "torch" and qualname in _TORCH_STORAGES:
            return _StorageType(_TORCH_STORAGES[qualname])
        if module == "torch" and qualname in _TORCH_DTYPES:
            return _TorchDtype(_TORCH_DTYPES[qualname])
        if (module, qualname) == ("_codecs", "encode"):
            return _latin1_encode
        raise pickle.UnpicklingError(
            f"ember.load: {self.name} refers to the global '{module}.{qualname}', which is "
            "not allowed: only tensors, Parameters and plain containers are read from "
            "torch.save checkpoints (nothing in a file is ever executed)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"ember.load: {self.name}: unsupported persistent id "
                                         f"{str(pid)[:80]}")
        _, storage_type, key, location, numel = pid
        if isinstance(storage_type, _TorchDtype):  # UntypedStorage with a dtype
            storage_type = _StorageType(storage_type.np)
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"ember.load: {self.name}: unsupported storage type")
        key = str(key)
        if key not in self.storages:
            raw = self.zf.read(f"{self.prefix}data/{key}")
            dt = storage_type.np.newbyteorder(">" if self.big_endian else "<")
            if len(raw) < numel * dt.itemsize:
                raise _LoadError(f"ember.load: {self.name} is corrupt: storage {key} holds "
                                 f"{len(raw)} bytes, expected {numel * dt.itemsize}")
            arr = np.frombuffer(raw, dtype=dt, count=numel).astype(storage_type.np)
            self.storages[key] = (arr, str(location))
        return self.storages[key]

    def rebuild_tensor(self, storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
        from ._tensor import Tensor
        arr, location = storage
        size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
        if len(size) != len(stride):
            raise _LoadError(f"ember.load: {self.name} is corrupt: size {size} and stride "
                             f"{stride} differ in length")
        if any(s < 0 for s in size) or any(s < 0 for s in stride) or storage_offset < 0:
            raise _LoadError(f"ember.load: {self.name} is corrupt: negative size or stride")
        if all(size):
            last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
            if last >= arr.size:
                raise _LoadError(f"ember.load: {self.name} is corrupt: a tensor reaches past "
                                 "the end of its storage")
        item = arr.itemsize
        view = np.lib.stride_tricks.as_strided(arr[storage_offset:], shape=size,
                                               strides=tuple(s * item for s in stride))
        t = Tensor._make(np.array(view))
        t = _relocate(t, _torch_location(location), self.map_location)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def rebuild_parameter(self, data, requires_grad, backward_hooks=None, state=None):
        from .nn.parameter import Parameter
        return Parameter(data, requires_grad=bool(requires_grad))


def _latin1_encode(s, encoding="latin1"):
    if not isinstance(s, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("ember.load: unexpected bytes encoding in a checkpoint")
    return s.encode("latin1")


def _torch_location(location):
    return "cpu" if location.startswith("cpu") else location


def _load_torch(zf, pkl_name, name, map_location):
    prefix = pkl_name[:-len("data.pkl")]
    names = set(zf.namelist())
    big = False
    if prefix + "byteorder" in names:
        big = zf.read(prefix + "byteorder").strip() == b"big"
    data = zf.read(pkl_name)
    up = _TorchUnpickler(io.BytesIO(data), zf, prefix, name, map_location, big)
    obj = up.load()
    return obj
