"""Reading ``torch.save`` checkpoints (the zip format with ``data.pkl``) without running code.

The pickle is read by a restricted unpickler, on the rules of PyTorch's ``weights_only``
loader: the only globals resolved are torch's tensor and parameter rebuild functions, its
storage types, dtypes, ``torch.Size`` and ``torch.device`` (all mapped to ember's own code),
``OrderedDict``, ``Counter``, ``set``, ``complex``, ``bytearray``, and the globals the user
allowlisted with ``add_safe_globals`` / ``safe_globals`` (never from ``os`` or ``sys``).
pickle's BUILD step only sets attributes of an OrderedDict (a state_dict's ``_metadata``) or
of an instance of an allowlisted class, or gives a tensor the (storage, offset, size, stride)
that ``Tensor.set_`` takes; items are only set on dicts and appended to lists. Anything else
is refused before it can run.

Tensors are views of their storage, each storage read once: views that share a storage in
the checkpoint share memory after loading, as in PyTorch, and an expanded tensor costs the
memory of its storage, not of its shape.
"""
import _compat_pickle
import io
import pickle
import pickletools
from collections import Counter, OrderedDict

import numpy as np

from .._tensor import Size, Tensor
from ..backend import dtypes
from ..device import device
from ..nn.parameter import Parameter
from ._errors import RefusedError, unsupported_global
from ._map_location import relocate
from ._safe_globals import BLOCKED_MODULES
from ._views import view_of_storage

# torch's storage types and dtypes a checkpoint may name: torch.FloatStorage, torch.float32
# (or its alias torch.float), ..., read as the NumPy dtype
_TORCH_STORAGES = {d.scalar_name + "Storage": d.np for d in dtypes.ALL}
_TORCH_DTYPES = {name: d for d in dtypes.ALL for name in (d.name, d.alias) if name}
_DICTS = (dict, OrderedDict, Counter)


class _StorageType:
    def __init__(self, np_dtype):
        self.np = np.dtype(np_dtype)


class _Storage:
    """A storage read from the checkpoint: a 1-D array and the device it was saved on."""

    def __init__(self, key, array, numel, location):
        self.key, self.array, self.numel, self.location = key, array, numel, location


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


# The pure-Python unpickler, because the C one can't restrict single opcodes (BUILD, SETITEM,
# APPEND): they are replaced in its dispatch table. A checkpoint's data.pkl holds structure
# only (the tensor data is in separate members), so its speed doesn't matter.
class _TorchUnpickler(pickle._Unpickler):
    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, data, archive, prefix, options, big_endian):
        super().__init__(io.BytesIO(data), encoding=options.encoding, errors=options.errors,
                         fix_imports=options.fix_imports)
        self.archive, self.prefix, self.name = archive, prefix, archive.name
        self.map_location, self.big_endian = options.map_location, big_endian
        self.user_globals = options.user_globals
        self.storages = {}

    def refuse(self, msg):
        raise RefusedError(f"ember.load: {self.name}: {msg}")

    def find_class(self, module, qualname):
        module, qualname = _python3_name(module, qualname)
        path = f"{module}.{qualname}"
        if module in BLOCKED_MODULES:
            self.refuse(f"Trying to load unsupported GLOBAL {path} whose module {module} is "
                        "blocked.")
        if module == "torch._utils":
            fn = {"_rebuild_tensor_v2": self.rebuild_tensor,
                  "_rebuild_tensor": self.rebuild_tensor,
                  "_rebuild_parameter": self.rebuild_parameter,
                  "_rebuild_parameter_with_state": self.rebuild_parameter,
                  "_rebuild_tensor_v3": self.rebuild_tensor_v3}.get(qualname)
            if fn is not None:
                return fn
        if module == "torch" and qualname in _TORCH_STORAGES:
            return _StorageType(_TORCH_STORAGES[qualname])
        if path == "torch.storage.UntypedStorage":  # bytes (what _rebuild_tensor_v3 reads)
            return _StorageType(np.uint8)
        if module == "torch" and qualname in _TORCH_DTYPES:
            return _TORCH_DTYPES[qualname]
        found = _DEFAULT_GLOBALS.get(path)
        if found is None:
            found = self.user_globals.get(path)
        if found is None:
            if path.startswith("builtins."):
                path = path[len("builtins."):]
            raise unsupported_global(self.name, path)
        return found

    def is_allowlisted_type(self, cls):
        return any(cls is g for g in self.user_globals.values())

    # ---- restricted opcodes -------------------------------------------------------------------
    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is OrderedDict:
            if not (isinstance(state, dict) and all(isinstance(k, str) for k in state)):
                self.refuse("the state of an OrderedDict must be a dict of attributes")
            inst.__dict__.update(state)
        elif type(inst) in (Tensor, Parameter):
            self.set_tensor_state(inst, state)
        elif self.is_allowlisted_type(type(inst)):
            _set_state(inst, state)
        else:
            self.refuse(f"can only build Tensor, Parameter, OrderedDict or types allowlisted "
                        f"via `add_safe_globals`, but got "
                        f"{type(inst).__module__}.{type(inst).__qualname__}")
    dispatch[pickle.BUILD[0]] = load_build

    def check_item_target(self, target, opcode, types, what):
        if type(target) not in types:
            self.refuse(f"can only {opcode} for {what}, but got "
                        f"{type(target).__module__}.{type(target).__qualname__}")

    def load_setitem(self):
        self.check_item_target(self.stack[-3], "SETITEM", _DICTS, "dicts")
        pickle._Unpickler.load_setitem(self)
    dispatch[pickle.SETITEM[0]] = load_setitem

    def load_setitems(self):
        self.check_item_target(self.metastack[-1][-1], "SETITEMS", _DICTS, "dicts")
        pickle._Unpickler.load_setitems(self)
    dispatch[pickle.SETITEMS[0]] = load_setitems

    def load_append(self):
        self.check_item_target(self.stack[-2], "APPEND", (list,), "lists")
        pickle._Unpickler.load_append(self)
    dispatch[pickle.APPEND[0]] = load_append

    def load_appends(self):
        self.check_item_target(self.metastack[-1][-1], "APPENDS", (list,), "lists")
        pickle._Unpickler.load_appends(self)
    dispatch[pickle.APPENDS[0]] = load_appends

    # ---- storages and tensors -----------------------------------------------------------------
    def persistent_load(self, pid):
        fail = self.archive.corrupt
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            fail(f"unsupported persistent id {str(pid)[:80]}")
        _, storage_type, key, location, numel = pid
        if isinstance(storage_type, dtypes.dtype):  # UntypedStorage with a dtype
            storage_type = _StorageType(storage_type.np)
        if not isinstance(storage_type, _StorageType):
            fail(f"unsupported storage type {str(storage_type)[:80]}")
        if not isinstance(key, str) or not isinstance(location, str) or not _is_int(numel) \
                or numel < 0:
            fail(f"bad storage record {str(pid[2:])[:80]}")
        dtype = storage_type.np
        storage = self.storages.get(key)
        if storage is None:
            member = f"{self.prefix}data/{key}"
            array = self.archive.read_storage(
                member, dtype.newbyteorder(">" if self.big_endian else "<"), numel)
            storage = self.storages[key] = _Storage(key, array, numel, location)
        elif storage.array.dtype != dtype or storage.numel != numel:
            fail(f"storage {key} is recorded as {storage.numel} x {storage.array.dtype} and "
                 f"as {numel} x {dtype}")
        return storage

    def tensor_data(self, storage, storage_offset, size, stride):
        if not isinstance(storage, _Storage):
            self.refuse(f"a tensor's storage must come from the checkpoint, not "
                        f"{type(storage).__qualname__}")
        return view_of_storage(storage.array, storage_offset, size, stride,
                               self.archive.corrupt)

    def rebuild_tensor(self, storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
        if not isinstance(requires_grad, bool):
            self.archive.corrupt("requires_grad must be a bool")
        data = self.tensor_data(storage, storage_offset, size, stride)
        if metadata:
            data = self.apply_metadata(data, metadata)
        t = Tensor._make(data)
        t = relocate(t, _torch_location(storage.location), self.map_location, self.name)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def rebuild_tensor_v3(self, storage, storage_offset, size, stride, requires_grad,
                          backward_hooks, dtype, metadata=None):
        """PyTorch's record of a tensor over an UntypedStorage (bytes) with its dtype apart:
        how it saves the dtypes with no typed storage of their own (uint16/32/64)."""
        if not isinstance(dtype, dtypes.dtype):
            self.archive.corrupt("_rebuild_tensor_v3 needs a dtype")
        if isinstance(storage, _Storage) and storage.array.dtype != dtype.np:
            if storage.array.dtype != np.uint8 or storage.numel % dtype.itemsize:
                self.archive.corrupt(f"storage {storage.key} holds no whole {dtype} elements")
            typed = self.storages.get((storage.key, dtype.name))
            if typed is None:
                array = storage.array.view(dtype.np.newbyteorder(
                    ">" if self.big_endian else "<"))
                typed = self.storages[(storage.key, dtype.name)] = _Storage(
                    storage.key, array, storage.numel // dtype.itemsize, storage.location)
            storage = typed
        return self.rebuild_tensor(storage, storage_offset, size, stride, requires_grad,
                                   backward_hooks, metadata)

    def apply_metadata(self, data, metadata):
        """Honours the one metadata flag a real tensor can carry: a negative view's 'neg' bit
        (ember has no such bit, so the values are negated in a copy)."""
        if not isinstance(metadata, dict) or set(metadata) - {"neg", "conj"} or \
                metadata.get("conj"):
            self.archive.corrupt(f"unsupported tensor metadata {str(metadata)[:80]}")
        return np.negative(data) if metadata.get("neg") else data

    def rebuild_parameter(self, data, requires_grad, backward_hooks=None, state=None):
        if not isinstance(data, Tensor) or not isinstance(requires_grad, bool):
            self.archive.corrupt("a Parameter needs a tensor and a bool requires_grad")
        return Parameter(data, requires_grad=requires_grad)

    def set_tensor_state(self, t, state):
        """BUILD on a tensor: a legacy ``set_`` state (storage, offset, size, stride) or, for a
        Parameter, ``(requires_grad, _, backward_hooks)``, as PyTorch accepts there."""
        if isinstance(state, tuple) and len(state) == 4:
            data = self.tensor_data(*state)
            if data.dtype != t._data.dtype:
                self.archive.corrupt(f"set_ of a {t.dtype} tensor to a {data.dtype} storage")
            t._data = data
        elif type(t) is Parameter and isinstance(state, tuple) and len(state) == 3 and \
                isinstance(state[0], bool) and (state[2] is None or state[2] == {}):
            t.requires_grad_(state[0])
        else:
            self.refuse("the state a tensor is built with must be (storage, storage_offset, "
                        f"size, stride), not {str(state)[:80]}")


def _python3_name(module, qualname):
    """The Python 3 name of a global a protocol-2 pickle may name in Python 2's terms."""
    if (module, qualname) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, qualname)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), qualname


_REBUILD_FUNCTIONS = ("_rebuild_tensor_v2", "_rebuild_tensor", "_rebuild_parameter",
                      "_rebuild_parameter_with_state", "_rebuild_tensor_v3")


def _is_allowed(module, qualname, user_globals):
    path = f"{module}.{qualname}"
    if module in BLOCKED_MODULES:
        return False
    return (module == "torch._utils" and qualname in _REBUILD_FUNCTIONS
            or module == "torch" and (qualname in _TORCH_STORAGES or qualname in _TORCH_DTYPES)
            or path == "torch.storage.UntypedStorage"
            or path in _DEFAULT_GLOBALS or path in user_globals)


def unsafe_globals(pickle_bytes, user_globals):
    """The ``module.qualname`` of each global the pickle names that the loader would refuse,
    in order of first appearance (read with pickletools: nothing is built)."""
    found, strings = [], []
    for opcode, arg, _ in pickletools.genops(pickle_bytes):
        if opcode.name == "GLOBAL":
            module, qualname = arg.split(" ", 1)
        elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
            module, qualname = strings[-2], strings[-1]
        else:
            if isinstance(arg, str) and "UNICODE" in opcode.name:
                strings.append(arg)
            continue
        module, qualname = _python3_name(module, qualname)
        path = f"{module}.{qualname}"
        if not _is_allowed(module, qualname, user_globals) and path not in found:
            found.append(path)
    return found


def _set_state(inst, state):
    """pickle's BUILD on an instance of an allowlisted class."""
    setstate = getattr(inst, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slotstate = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slotstate = state
    if state:
        inst.__dict__.update(state)
    if slotstate:
        for k, v in slotstate.items():
            setattr(inst, k, v)


def _latin1_encode(s, encoding="latin1"):
    if not isinstance(s, str) or encoding not in ("latin1", "latin-1"):
        raise ValueError("unexpected bytes encoding in a checkpoint")
    return s.encode("latin1")


# globals PyTorch's weights-only loader resolves by default besides tensors and storages
_DEFAULT_GLOBALS = {"collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
                    "builtins.set": set, "builtins.complex": complex,
                    "builtins.bytearray": bytearray, "torch.Size": Size, "torch.device": device,
                    "_codecs.encode": _latin1_encode}


def _torch_location(location):
    return "cpu" if location.startswith("cpu") else location


def load_torch(archive, pkl_name, options):
    prefix = pkl_name[:-len("data.pkl")]
    big_endian = False
    if prefix + "byteorder" in archive.names():
        order = archive.read_bytes(prefix + "byteorder").strip()
        if order not in (b"little", b"big"):
            archive.corrupt(f"byteorder is {order[:20]!r}, not 'little' or 'big'")
        big_endian = order == b"big"
    data = archive.read_bytes(pkl_name)
    return _TorchUnpickler(data, archive, prefix, options, big_endian).load()
