"""Writing ember's own format: ``<n>.npy`` arrays plus ``structure.json``.

Version 2 (written now) stores tensors as PyTorch does: each ``tensor`` record names a 1-D
storage array plus an offset, shape and stride, and tensors whose memory overlaps share one
storage (see ``_views.plan_storages``). Version 1 (still read) stored one array per tensor.
"""
import argparse
import base64
import dataclasses
import enum
import json
import math
import zipfile
from collections import Counter, OrderedDict

import numpy as np

from ..backend import to_host

from .._tensor import Tensor
from ..backend.dtypes import dtype
from ..device import device
from ..nn.parameter import Parameter

from ._views import plan_storages

FORMAT = "ember"
VERSION = 2
STRUCTURE = "structure.json"


class Encoder:
    """Turns an object into the JSON structure, collecting the arrays it refers to."""

    def __init__(self):
        self.Tensor, self.Parameter, self.dtype, self.device = Tensor, Parameter, dtype, device
        self.arrays = []
        self.tensor_nodes, self.tensor_arrays = [], []
        self.memo = {}  # id(tensor) -> its node (a tensor saved twice is loaded as one object)
        self.keep = []  # keeps memoised objects alive so ids stay unique

    def array(self, a):
        self.arrays.append(a if a.flags.c_contiguous else a.copy(order="C"))
        return len(self.arrays) - 1

    def finish(self):
        """Adds the tensors' storages to ``arrays`` and their places to the tensor records."""
        storages, placements = plan_storages(self.tensor_arrays)
        first = len(self.arrays)
        self.arrays.extend(storages)
        for node, (storage, offset, stride) in zip(self.tensor_nodes, placements):
            node.update(array=first + storage, offset=offset, stride=list(stride))

    def tensor(self, t):
        node = self.memo.get(id(t))
        if node is None:
            node = {"$type": "tensor", "id": len(self.tensor_nodes), "dtype": t.dtype.name,
                    "shape": list(t.shape), "requires_grad": bool(t.requires_grad),
                    "parameter": isinstance(t, self.Parameter), "device": str(t.device)}
            self.tensor_nodes.append(node)
            data = t._data
            if type(data) is not np.ndarray and t.device.type not in ("cpu", "meta"):
                data = to_host(data)  # device memory is stored from a host copy
            self.tensor_arrays.append(data)
            self.memo[id(t)] = node
            self.keep.append(t)
        return node

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, self.Tensor):
            return self.tensor(obj)
        if isinstance(obj, (np.integer, np.floating, np.bool_)):  # kept NumPy scalars
            return {"$type": "npscalar", "dtype": obj.dtype.str, "value": self.encode(obj.item())}
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            obj = float(obj)
            return obj if math.isfinite(obj) else {"$type": "float", "value": repr(obj)}
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
            kind = "odict" if isinstance(obj, OrderedDict) else \
                "counter" if isinstance(obj, Counter) else "dict"
            node = {"$type": kind,
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
        if isinstance(obj, (set, frozenset)):
            return {"$type": "frozenset" if isinstance(obj, frozenset) else "set",
                    "items": [self.encode(v) for v in obj]}
        record = self.plain_object(obj)
        if record is not None:
            return record
        if callable(getattr(obj, "state_dict", None)):  # a Module, Optimizer, LRScheduler
            raise TypeError(
                f"ember.save can't store a whole {type(obj).__module__}."
                f"{type(obj).__qualname__} object: ember saves no pickle, so it stores "
                "tensors and plain containers only. Save its state_dict() instead "
                "(ember.save(obj.state_dict(), f)) and restore it with load_state_dict() "
                "on a freshly built object")
        raise TypeError(
            f"ember.save can't store an object of type {type(obj).__module__}."
            f"{type(obj).__qualname__}: it stores tensors, NumPy arrays and scalars, None, bools, "
            "ints, floats, strings, bytes, dtypes, devices, lists, tuples, sets and dicts of "
            "these, and "
            "Enum members, argparse.Namespace and dataclass objects holding them (no pickle)")

    def plain_object(self, obj):
        """A record of a plain-data object (an Enum member, an ``argparse.Namespace``, a
        dataclass instance) as its class's name and its value or fields; None for others.
        Loading rebuilds it only when the class is allowlisted (``add_safe_globals``)."""
        cls = type(obj)
        if isinstance(obj, enum.Enum):
            return {"$type": "object", "class": class_path(cls), "enum": self.encode(obj.value)}
        if isinstance(obj, argparse.Namespace):
            fields = dict(vars(obj))
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        else:
            return None
        return {"$type": "object", "class": class_path(cls), "fields": self.encode(fields)}


def class_path(cls):
    """``module.qualname``: how the allowlist (``add_safe_globals``) names a class."""
    return f"{cls.__module__}.{cls.__qualname__}"


def encode(obj):
    """``(structure.json text, arrays)`` for ``obj``; TypeError for what can't be stored."""
    enc = Encoder()
    structure = enc.encode(obj)
    enc.finish()
    meta = json.dumps({"format": FORMAT, "version": VERSION, "byteorder": "little",
                       "num_arrays": len(enc.arrays), "object": structure},
                      allow_nan=False, separators=(",", ":"))
    return meta, enc.arrays


def stored_dtype(np_dtype):
    """The dtype an array is written to .npy as: bfloat16 and the float8 types, which .npy
    cannot name, as the uint16 or uint8 of their bits (the tensor record names the dtype)."""
    if np_dtype.name == "bfloat16":
        return np.dtype(np.uint16)
    return np.dtype(np.uint8) if np_dtype.name.startswith("float8_") else np_dtype


def write_zip(fh, meta, arrays):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(STRUCTURE, meta)
        for i, a in enumerate(arrays):
            if a.dtype.byteorder == ">":
                a = a.astype(a.dtype.newbyteorder("<"))
            a = a.view(stored_dtype(a.dtype))  # bfloat16: its bits, as .npy has no such type
            with zf.open(f"{i}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, a, allow_pickle=False)
