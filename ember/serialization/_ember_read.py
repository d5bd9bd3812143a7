"""Reading ember's own format (versions 1 and 2, see ``_ember_write``), checking every record.

Each record is checked against the arrays it names before anything is allocated: a
``.npy`` header must describe exactly the bytes its member holds, a tensor must lie inside
its storage, an array serves either one ``ndarray`` record or tensors of its own dtype, and
records of one tensor (a tensor saved twice) must agree.
"""
import base64
import dataclasses
import enum
import json
from collections import Counter, OrderedDict

import numpy as np

from .._tensor import Tensor
from ..backend.dtypes import from_name
from ..device import device
from ..nn.parameter import Parameter

from ._archive import to_native
from ._ember_write import FORMAT, STRUCTURE, stored_dtype
from ._errors import LoadError, unsupported_global
from ._safe_globals import user_allowed_globals
from ._map_location import relocate
from ._views import view_of_storage

READS_VERSIONS = (1, 2)
_NPY_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0,
                       (2, 0): np.lib.format.read_array_header_2_0}


def load_ember(archive, map_location):
    try:
        header = json.loads(archive.read_bytes(STRUCTURE).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        archive.corrupt(f"{STRUCTURE} is not valid JSON ({e})")
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        archive.corrupt(f"{STRUCTURE} is not an ember header")
    if header.get("version") not in READS_VERSIONS:
        raise LoadError(f"ember.load: {archive.name} has format version "
                        f"{header.get('version')!r}; this ember reads versions "
                        f"{', '.join(map(str, READS_VERSIONS))}")
    return _Decoder(archive, header, map_location).decode(header.get("object"))


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class _Decoder:
    def __init__(self, archive, header, map_location):
        self.Tensor, self.Parameter = Tensor, Parameter
        self.archive, self.fail = archive, archive.corrupt
        self.map_location, self.version = map_location, header["version"]
        self.num_arrays = header.get("num_arrays")
        if not _is_int(self.num_arrays):
            self.fail(f"num_arrays {self.num_arrays!r} is not an integer")
        self.array_users = {}  # array number -> "ndarray" or "tensor"
        self.storages = {}     # array number -> the 1-D array its tensors are views of
        self.tensors = {}      # tensor id -> (its record, the loaded tensor)

    # ---- arrays -------------------------------------------------------------------------------
    def claim(self, index, user):
        """Record that a record of kind ``user`` ("ndarray" or "tensor") reads array ``index``:
        tensors may share an array (views of one storage), an ndarray record may not."""
        if not _is_int(index) or not 0 <= index < self.num_arrays:
            self.fail(f"bad array number {index!r}")
        previous = self.array_users.get(index)
        if previous == "ndarray" or previous is not None and user == "ndarray":
            self.fail(f"array {index}.npy is used by more than one record")
        self.array_users[index] = user

    def read_array(self, index, dtype, shape=None):
        """Array ``index`` after checking its header: its dtype must be ``dtype`` (any byte
        order) and its shape ``shape`` (any 1-D shape when ``shape`` is None)."""
        member = f"{index}.npy"
        info = self.archive.info(member, f"array {member}")
        dtype = np.dtype(dtype)
        stored = stored_dtype(dtype)
        with self.archive.open(info) as fh:
            found_dtype, found_shape, fortran = self.read_header(fh, member)
            if found_dtype.kind not in "biufc" or found_dtype.newbyteorder("=") != \
                    stored.newbyteorder("="):
                self.fail(f"array {member} has dtype {found_dtype}, expected {stored}")
            if shape is None and len(found_shape) != 1 or \
                    shape is not None and list(found_shape) != list(shape):
                expected = "a 1-D storage" if shape is None else list(shape)
                self.fail(f"array {member} has shape {list(found_shape)}, expected {expected}")
            count = int(np.prod(found_shape, dtype=object)) if found_shape else 1
            held = info.file_size - fh.tell()
            if count * found_dtype.itemsize != held:
                self.fail(f"array {member} declares shape {list(found_shape)} "
                          f"({count * found_dtype.itemsize} bytes) but holds {held} bytes")
            out = self.archive.mapped(info, fh.tell(), count, found_dtype)
            if out is None:
                out = self.archive.allocate(count, found_dtype, f"array {member}")
                self.archive.fill(fh, out, member)
        out = out.reshape(found_shape[::-1]).T if fortran else out.reshape(found_shape)
        out = to_native(out)
        return out if stored == dtype else out.view(dtype)

    def read_header(self, fh, member):
        try:
            version = np.lib.format.read_magic(fh)
            read_header = _NPY_HEADER_READERS.get(version)
            if read_header is None:
                raise ValueError(f"unsupported .npy format version {version}")
            shape, fortran, dtype = read_header(fh)
        except Exception as e:  # NumPy's parser fails in many ways: all mean a bad header
            self.fail(f"array {member} has a bad .npy header ({type(e).__name__}: {e})")
        if dtype.hasobject:
            self.fail(f"array {member} can't be read without pickle (it holds Python objects)")
        if any(n < 0 for n in shape):
            self.fail(f"array {member} has a negative size in its shape {list(shape)}")
        return dtype, shape, fortran

    # ---- records ------------------------------------------------------------------------------
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
        if kind in ("dict", "odict", "counter"):
            return self.dict(node, kind)
        if kind in ("set", "frozenset"):
            items = [self.decode(v) for v in node["items"]]
            if any(isinstance(v, (list, dict, set)) for v in items):
                self.fail(f"an unhashable item in a {kind}")
            return set(items) if kind == "set" else frozenset(items)
        if kind == "npscalar":
            scalar_dtype = np.dtype(str(node["dtype"]))
            if scalar_dtype.kind not in "biuf":
                self.fail(f"bad NumPy scalar dtype {scalar_dtype}")
            return scalar_dtype.type(self.decode(node["value"]))
        if kind == "float":
            if node["value"] not in ("nan", "inf", "-inf"):
                self.fail(f"bad float {node['value']!r}")
            return float(node["value"])
        if kind == "ndarray":
            self.claim(node["array"], "ndarray")
            return self.read_array(node["array"], np.dtype(str(node["dtype"])), node["shape"])
        if kind == "bytes":
            return base64.b64decode(node["value"].encode("ascii"), validate=True)
        if kind == "dtype":
            return from_name(node["name"])
        if kind == "device":
            return device(node["name"])
        if kind == "object":
            return self.plain_object(node)
        self.fail(f"unknown node type {kind!r}")

    def plain_object(self, node):
        """An Enum member, ``argparse.Namespace`` or dataclass object, rebuilt only when its
        class is allowlisted (``add_safe_globals``); its ``__init__`` is not run (as pickle)."""
        path = node.get("class")
        cls = user_allowed_globals().get(path) if isinstance(path, str) else None
        if cls is None:
            raise unsupported_global(self.archive.name, path)
        if not isinstance(cls, type):
            self.fail(f"{path} is not a class")
        if "enum" in node:
            if not issubclass(cls, enum.Enum):
                self.fail(f"{path} is not an Enum")
            return cls(self.decode(node["enum"]))
        fields = self.decode(node.get("fields"))
        if not isinstance(fields, dict) or not all(isinstance(k, str) for k in fields):
            self.fail(f"the fields of a {path} must be a dict of names")
        obj = cls.__new__(cls)
        if dataclasses.is_dataclass(cls):
            for name, value in fields.items():
                object.__setattr__(obj, name, value)  # a frozen dataclass too
        else:
            obj.__dict__.update(fields)
        return obj

    def dict(self, node, kind):
        keys, values = node["keys"], node["values"]
        if not isinstance(keys, list) or not isinstance(values, list) or len(keys) != len(values):
            self.fail("dict with mismatched keys and values")
        out = (OrderedDict if kind == "odict" else Counter if kind == "counter" else dict)()
        for k, v in zip(keys, values):
            k = self.decode(k)
            if isinstance(k, list):
                self.fail("a list as dict key")
            out[k] = self.decode(v)
        if "metadata" in node and kind == "odict":
            out._metadata = self.decode(node["metadata"])
        return out

    def tensor(self, node):
        # version 1 numbered tensors by their array; version 2 gives each its own id
        key = node["array"] if self.version == 1 else node["id"]
        if not _is_int(key):
            self.fail(f"bad tensor id {key!r}")
        seen = self.tensors.get(key)
        if seen is not None:
            if seen[0] != node:
                self.fail(f"two records of tensor {key} differ (dtype, shape or other fields)")
            return seen[1]
        try:
            dt = from_name(node["dtype"])
        except (KeyError, TypeError):
            self.fail(f"unknown dtype {node['dtype']!r}")
        data = self.tensor_data(node, dt.np)
        location = node.get("device", "cpu")
        requires_grad, parameter = node.get("requires_grad", False), node.get("parameter", False)
        if not isinstance(location, str) or not isinstance(requires_grad, bool) or \
                not isinstance(parameter, bool):
            self.fail(f"tensor {key} has a bad device, requires_grad or parameter field")
        t = relocate(self.Tensor._make(data), location, self.map_location, self.archive.name)
        if parameter:
            t = self.Parameter(t, requires_grad=requires_grad)
        elif requires_grad:
            t.requires_grad_(True)
        self.tensors[key] = (node, t)
        return t

    def tensor_data(self, node, np_dtype):
        index = node["array"]
        self.claim(index, "tensor")
        if self.version == 1:  # the array is the tensor
            return self.read_array(index, np_dtype, node["shape"])
        storage = self.storages.get(index)
        if storage is None:
            storage = self.storages[index] = self.read_array(index, np_dtype)
        elif storage.dtype != np_dtype:
            self.fail(f"array {index}.npy holds {storage.dtype} but a tensor record reads it "
                      f"as {np.dtype(np_dtype)}")
        return view_of_storage(storage, node["offset"], node["shape"], node["stride"], self.fail)
