"""``ember.ops``: operators by namespace, as ``torch.ops``.

``ember.ops.<ns>`` is the submodule ``ember.ops.<ns>`` where there is one (``aten``), else
the namespace of the operators defined with ``ember.library``; ``ember.ops.<ns>.<name>``
is callable and holds its overloads (``.default``).

>>> import ember
>>> ember.library.define("opsdoc::half", "(Tensor x) -> Tensor")
>>> ember.library.impl("opsdoc::half", "cpu", lambda x: x / 2)
>>> ember.ops.opsdoc.half(ember.ones(1)), ember.ops.opsdoc.half.default
(tensor([0.5000]), <OpOverload(op='opsdoc.half', overload='default')>)
"""
import importlib

from ..library._dispatch import OpNamespace
# shared libraries whose TORCH_LIBRARY blocks register operators (torch.ops.load_library)
from ..utils._oplib import load_library, loaded_libraries  # noqa: F401

_namespaces = {}


def __getattr__(ns):
    if ns.startswith("__"):
        raise AttributeError(f"module 'ember.ops' has no attribute '{ns}'")
    try:
        return importlib.import_module(f"{__name__}.{ns}")
    except ModuleNotFoundError as err:
        if err.name != f"{__name__}.{ns}":
            raise  # the submodule exists but an import inside it failed
    namespace = _namespaces.get(ns)
    if namespace is None:
        namespace = _namespaces[ns] = OpNamespace(ns)
    return namespace
