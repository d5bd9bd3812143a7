"""``ember.save`` / ``ember.load`` without pickle: loading a file never runs code.

An ember file is a NumPy ``.npz`` (a zip): ``<n>.npy`` members (written and read with
``allow_pickle=False``) and ``structure.json``, a JSON description of the saved object that
points at the arrays by number. It stores tensors (and Parameters), NumPy arrays and scalars
(loaded back as NumPy scalars), ``None``, bools, ints, floats (nan/inf too), strings, bytes,
dtypes, devices and lists/tuples/sets/frozensets/dicts/OrderedDicts/Counters of these (dict
keys of any of these types, order kept; a state_dict's
``_metadata`` too), and plain-data objects holding these: Enum members, ``argparse.Namespace``
and dataclass objects, recorded as their class's name plus their value or fields and rebuilt
(without running ``__init__``) only when the class is allowlisted with :func:`add_safe_globals`
or :class:`safe_globals`, as for torch checkpoints. Anything else raises TypeError when saving:
there is no pickle fallback.
Tensors are stored as PyTorch stores them, as views of 1-D storages: tensors whose memory
overlaps (views of one tensor) are written once and share memory again after loading, and an
expanded tensor takes the room of the tensor it expands.

``ember.load`` also reads checkpoints written by ``torch.save`` (the zip format with
``data.pkl``) through a restricted unpickler with the rules of ``torch.load(weights_only=True)``:
it resolves torch's tensor/parameter rebuild functions, storage types, dtypes, ``Size`` and
``device`` (all mapped to ember's own code), ``OrderedDict``, ``Counter``, ``set``,
``complex``, ``bytearray`` and the globals allowlisted with :func:`add_safe_globals` or the
:class:`safe_globals` context manager (a user dataclass, an Enum, ``argparse.Namespace``);
anything else is refused before it can run, with PyTorch's "Weights only load failed" error.

>>> import ember, io
>>> from ember.serialization import save, load   # also ember.save / ember.load
>>> buf = io.BytesIO()
>>> save({"w": ember.ones(2), "step": 3}, buf)
>>> _ = buf.seek(0)
>>> load(buf)
{'w': tensor([1., 1.]), 'step': 3}
"""
import io
import os
import pickle
import zipfile

from ._atomic import write_file_atomically
from ._archive import Archive
from ._ember_read import load_ember
from ._ember_write import STRUCTURE, encode, write_zip
from ._errors import CallerError, LoadError, file_label
from ._map_location import check_map_location
from ._safe_globals import (add_safe_globals, clear_safe_globals, get_safe_globals,
                            safe_globals, user_allowed_globals)
from ._torch_read import load_torch, unsafe_globals

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint"]

_PICKLE_LOAD_ARGS = ("encoding", "errors", "fix_imports")


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` (tensors, state_dicts, optimizer state, nested containers of tensors,
    numbers, strings and None) to ``f``, a path or a writable binary file object.

    The file is a zip of ``.npy`` arrays plus ``structure.json``; see the module docstring.
    A path is written through a temporary file beside it that replaces it once complete, so
    a save that fails part-way leaves an existing file as it was. No pickle is written, so
    ``pickle_module`` may only be the standard ``pickle`` module and ``pickle_protocol``
    (any protocol pickle knows) changes nothing; the byte order is always recorded;
    ``_use_new_zipfile_serialization=False`` (PyTorch's legacy format) raises
    NotImplementedError. A whole ``nn.Module`` or optimizer raises TypeError: save its
    ``state_dict()``.

    >>> import ember, io
    >>> ember.save(ember.nn.Linear(2, 2).state_dict(), io.BytesIO())
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("ember.save writes no pickle, so it takes no pickle_module "
                                  "other than the standard pickle module")
    if pickle_protocol is not None and not (
            isinstance(pickle_protocol, int) and 0 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL):
        raise ValueError(f"pickle protocol must be <= {pickle.HIGHEST_PROTOCOL}")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("ember.save writes only the zip format: "
                                  "_use_new_zipfile_serialization=False is not supported")
    meta, arrays = encode(obj)
    if isinstance(f, (str, os.PathLike)):
        write_file_atomically(f, lambda fh: write_zip(fh, meta, arrays))
    else:
        write_zip(f, meta, arrays)


class _LoadOptions:
    """What ``load`` was asked for, handed to the readers."""

    def __init__(self, map_location, user_globals, pickle_load_args):
        self.map_location, self.user_globals = map_location, user_globals
        self.encoding = pickle_load_args.get("encoding", "ASCII")
        self.errors = pickle_load_args.get("errors", "strict")
        self.fix_imports = pickle_load_args.get("fix_imports", True)
        self.mmap_path = None


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved by :func:`save` (or a ``torch.save`` checkpoint of tensors,
    state_dicts, plain containers and allowlisted classes) from ``f``, a path or a readable
    binary file object.

    Nothing in the file is executed, whatever ``weights_only`` says: ``weights_only=False``
    (PyTorch's full pickle) reads with the same weights-only rules, so a checkpoint needing a
    class outside them loads once the class is allowlisted (:func:`add_safe_globals`).
    Tensors come back with their dtype, shape and ``requires_grad``; Parameters come back as
    ``nn.Parameter``; tensors saved as views of one storage share memory. ``map_location``
    may be a device or string ('cpu'), a dict mapping saved locations to new ones, or a
    callable ``(tensor, location) -> tensor or None`` (PyTorch hands it a storage; ember, whose
    tensors have no separate storage object, a tensor). ``mmap=True`` (``f`` must be a path)
    maps the tensor data of the file copy-on-write instead of reading it, as PyTorch does.
    ``pickle_module`` may only be the standard ``pickle``; of the pickle arguments,
    ``encoding`` (for Python 2 strings), ``errors`` and ``fix_imports`` are taken.
    Whatever is wrong with a file -- corrupt, truncated, foreign, declaring more data than it
    holds, too big for memory -- raises a RuntimeError naming the file; a torch checkpoint
    that needs a global outside the rules raises one that is also a
    ``pickle.UnpicklingError`` ("Weights only load failed ...", naming the global).

    >>> import ember, io
    >>> buf = io.BytesIO()
    >>> ember.save([ember.zeros(2)], buf)
    >>> _ = buf.seek(0)
    >>> ember.load(buf, map_location="cpu", weights_only=True)
    [tensor([0., 0.])]
    """
    check_map_location(map_location)
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("ember.load never runs pickle code, so it takes no "
                                  "pickle_module other than the standard pickle module")
    for key in pickle_load_args:
        if key not in _PICKLE_LOAD_ARGS:
            raise TypeError(f"load() got an unexpected keyword argument '{key}'")
    options = _LoadOptions(map_location, user_allowed_globals(), pickle_load_args)
    name = file_label(f)
    if mmap:
        if not isinstance(f, (str, os.PathLike)):
            raise ValueError("f must be a file path in order to use the mmap argument")
        options.mmap_path = os.fspath(f)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_stream(fh, name, options)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load_stream(f, name, options)


def _load_stream(fh, name, options):
    try:
        return _load_checkpoint(fh, name, options)
    except LoadError:
        raise
    except CallerError as e:
        raise e.error from None
    except MemoryError:
        raise LoadError(f"ember.load: not enough memory to load {name}") from None
    except Exception as e:  # whatever a malformed file makes the readers trip over
        raise LoadError(f"ember.load: {name} is corrupt or truncated: "
                        f"{type(e).__name__}: {e}") from None


def _load_checkpoint(fh, name, options):
    start = fh.tell()
    file_size = fh.seek(0, os.SEEK_END)
    fh.seek(start)
    try:
        zf = zipfile.ZipFile(fh)
    except Exception as e:
        if options.mmap_path is not None:
            raise LoadError(
                f"ember.load: mmap can only be used with files saved with `torch.save({name}, "
                "_use_new_zipfile_serialization=True)` or ember.save (zip files)") from None
        raise LoadError(f"ember.load: {name} is not a valid checkpoint (corrupt or truncated, "
                        f"or not a file written by ember.save / torch.save): {e}") from None
    with zf:
        archive = Archive(zf, name, file_size, options.mmap_path)
        names = zf.namelist()
        if STRUCTURE in names:
            return load_ember(archive, options.map_location)
        pkl = [n for n in names if n.endswith("data.pkl")]
        if pkl:
            return load_torch(archive, min(pkl, key=len), options)
    raise LoadError(f"ember.load: {name} is a zip file but neither an ember file "
                    f"(no {STRUCTURE}) nor a torch.save checkpoint (no data.pkl)")


def get_unsafe_globals_in_checkpoint(f):
    """The globals (``"module.qualname"`` strings) a ``torch.save`` checkpoint names that
    :func:`load` would refuse: neither built in nor marked by :func:`add_safe_globals`.
    Nothing in the file is run; an ember file names no globals (``[]``).

    >>> import ember, io
    >>> buf = io.BytesIO()
    >>> ember.save({"w": ember.ones(1)}, buf)
    >>> _ = buf.seek(0)
    >>> ember.serialization.get_unsafe_globals_in_checkpoint(buf)
    []
    """
    user_globals = user_allowed_globals()
    name = file_label(f)
    with (open(f, "rb") if isinstance(f, (str, os.PathLike)) else _borrowed(f)) as fh:
        try:
            zf = zipfile.ZipFile(fh)
        except Exception as e:
            raise LoadError(f"ember.load: {name} is not a valid checkpoint: {e}") from None
        with zf:
            pkl = [n for n in zf.namelist() if n.endswith("data.pkl")]
            if STRUCTURE in zf.namelist() or not pkl:
                return []
            data = Archive(zf, name, fh.seek(0, os.SEEK_END)).read_bytes(min(pkl, key=len))
    return unsafe_globals(data, user_globals)


class _borrowed:
    """A caller's file object as a context manager that leaves it open."""

    def __init__(self, f):
        self.f = f if hasattr(f, "seekable") and f.seekable() else io.BytesIO(f.read())

    def __enter__(self):
        return self.f

    def __exit__(self, *exc):
        return False
