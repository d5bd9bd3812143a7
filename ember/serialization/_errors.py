"""The errors ``ember.load`` raises: every problem with a file is a ``LoadError``, a
RuntimeError whose message names the file and says what is wrong with it."""
import os
import pickle


class LoadError(RuntimeError):
    """A file ``ember.load`` can't read: corrupt, truncated, foreign or too big for memory."""


class RefusedError(LoadError, pickle.UnpicklingError):
    """A torch checkpoint asking for something a weights-only loader doesn't do (a global
    outside the allowlist, pickle's BUILD on an object other than a tensor or an OrderedDict).
    Also an ``UnpicklingError``: the class PyTorch's ``weights_only`` loader raises."""


def unsupported_global(name, path):
    """The error for a file that names a class outside the allowlist: PyTorch's
    weights-only wording, with why ember refuses it."""
    return RefusedError(
        f"Weights only load failed for {name}: ember.load never executes code from "
        "a file (whatever weights_only says), so it rebuilds only tensors, plain "
        "containers and the globals allowlisted by the user.\n\tWeightsUnpickler "
        f"error: Unsupported global: GLOBAL {path} was not an allowed global by "
        f"default. Please use `torch.serialization.add_safe_globals([{path}])` or the "
        f"`torch.serialization.safe_globals([{path}])` context manager to allowlist "
        "this global if you trust this class/function.")


class CallerError(Exception):
    """Carries an exception raised by the caller's ``map_location`` (or the device it names)
    out of the loader, which re-raises it unchanged: it is no fault of the file."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


def file_label(f):
    """How messages name the file ``f`` (a path or a file object)."""
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"<{type(f).__name__}>"
