"""``ember.save`` / ``ember.load`` without pickle: loading a file never runs code.

An ember file is a NumPy ``.npz`` (a zip): ``<n>.npy`` members (written and read with
``allow_pickle=False``) and ``structure.json``, a JSON description of the saved object that
points at the arrays by number. It stores tensors (and Parameters), NumPy arrays, ``None``,
bools, ints, floats (nan/inf too), strings, bytes, dtypes, devices and lists/tuples/dicts/
OrderedDicts of these (dict keys of any of these types, order kept; a state_dict's
``_metadata`` too). Anything else raises TypeError when saving: there is no pickle fallback.
Tensors are stored as PyTorch stores them, as views of 1-D storages: tensors whose memory
overlaps (views of one tensor) are written once and share memory again after loading, and an
expanded tensor takes the room of the tensor it expands.

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
import io
import os
import zipfile

from ._atomic import write_file_atomically
from ._archive import Archive
from ._ember_read import load_ember
from ._ember_write import STRUCTURE, encode, write_zip
from ._errors import CallerError, LoadError, file_label
from ._map_location import check_map_location
from ._torch_read import load_torch

__all__ = ["save", "load"]


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` (tensors, state_dicts, optimizer state, nested containers of tensors,
    numbers, strings and None) to ``f``, a path or a writable binary file object.

    The file is a zip of ``.npy`` arrays plus ``structure.json``; see the module docstring.
    A path is written through a temporary file beside it that replaces it once complete, so
    a save that fails part-way leaves an existing file as it was. ``pickle_module`` and the
    other PyTorch-only arguments are accepted and ignored.
    """
    meta, arrays = encode(obj)
    if isinstance(f, (str, os.PathLike)):
        write_file_atomically(f, lambda fh: write_zip(fh, meta, arrays))
    else:
        write_zip(f, meta, arrays)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object saved by :func:`save` (or a ``torch.save`` checkpoint of tensors,
    state_dicts and plain containers) from ``f``, a path or a readable binary file object.

    Nothing in the file is executed, whatever ``weights_only`` says. Tensors come back with
    their dtype, shape and ``requires_grad``; Parameters come back as ``nn.Parameter``;
    tensors saved as views of one storage share memory. ``map_location`` may be a device or
    string ('cpu'), a dict mapping saved locations to new ones, or a callable
    ``(tensor, location) -> tensor or None``. Whatever is wrong with a file -- corrupt,
    truncated, foreign, declaring more data than it holds, too big for memory -- raises a
    RuntimeError naming the file; a torch checkpoint that needs any other global, or builds
    anything but tensors and plain containers, raises one that is also a
    ``pickle.UnpicklingError``.
    """
    check_map_location(map_location)
    name = file_label(f)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_stream(fh, name, map_location)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load_stream(f, name, map_location)


def _load_stream(fh, name, map_location):
    try:
        return _load_checkpoint(fh, name, map_location)
    except LoadError:
        raise
    except CallerError as e:
        raise e.error from None
    except MemoryError:
        raise LoadError(f"ember.load: not enough memory to load {name}") from None
    except Exception as e:  # whatever a malformed file makes the readers trip over
        raise LoadError(f"ember.load: {name} is corrupt or truncated: "
                        f"{type(e).__name__}: {e}") from None


def _load_checkpoint(fh, name, map_location):
    start = fh.tell()
    file_size = fh.seek(0, os.SEEK_END)
    fh.seek(start)
    try:
        zf = zipfile.ZipFile(fh)
    except Exception as e:
        raise LoadError(f"ember.load: {name} is not a valid checkpoint (corrupt or truncated, "
                        f"or not a file written by ember.save / torch.save): {e}") from None
    with zf:
        archive = Archive(zf, name, file_size)
        names = zf.namelist()
        if STRUCTURE in names:
            return load_ember(archive, map_location)
        pkl = [n for n in names if n.endswith("data.pkl")]
        if pkl:
            return load_torch(archive, min(pkl, key=len), map_location)
    raise LoadError(f"ember.load: {name} is a zip file but neither an ember file "
                    f"(no {STRUCTURE}) nor a torch.save checkpoint (no data.pkl)")
