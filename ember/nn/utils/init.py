"""``skip_init``: build a module without running its parameter initialization."""
import inspect


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with uninitialized parameters and buffers (the class
    must take a ``device`` argument): built on the 'meta' device, so its initialization
    runs on no data, then moved to ``device`` with ``to_empty``.

    >>> import ember
    >>> layer = ember.nn.utils.skip_init(ember.nn.Linear, 2, 3)
    >>> layer.weight.shape
    ember.Size([3, 2])
    """
    if not _is_module_class(module_cls):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    # built on 'meta', where initialization draws and writes nothing, then given memory
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)


def _is_module_class(cls):
    # found by name, not imported: ember.nn.modules imports this package (for rnn)
    return isinstance(cls, type) and any(
        base.__name__ == "Module" and base.__module__ == "ember.nn.modules.module"
        for base in cls.__mro__)
