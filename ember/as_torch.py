"""Run unmodified PyTorch programs on ember: ``import torch`` (and ``torch.nn``,
``from torch.utils.data import DataLoader``, ...) resolves to ember's modules.

From the shell, the program and its arguments follow the module::

    python -m ember.as_torch train.py --epochs 3

In Python (a notebook, a test), ``install()`` does the same for the rest of the process and
``uninstall()`` undoes it; nothing changes unless one of them is called. A ``torch``
imported before ``install()`` stays what it was (the real PyTorch, if any).

>>> import ember.as_torch
>>> with ember.as_torch.installed():
...     import torch
...     import torch.nn.functional as F
...     F.relu(torch.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import runpy
import sys

__all__ = ["install", "uninstall", "installed", "main"]


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch`` and ``torch.<name>``; loads them as ``ember`` and ``ember.<name>``
    (the module objects themselves: ``torch.nn is ember.nn``)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        name = "ember" + spec.name[len("torch"):]
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:  # a missing dependency inside ember's module
                raise
            raise ModuleNotFoundError(f"No module named {spec.name!r} (ember has no {name!r})",
                                      name=spec.name) from None

    def exec_module(self, module):
        pass  # ember's module is already executed


_ALIAS = _TorchAlias()


def _aliased_names():
    return [name for name, module in sys.modules.items()
            if (name == "torch" or name.startswith("torch."))
            and getattr(module, "__name__", "").startswith("ember")]


def install() -> None:
    """Makes ``import torch`` (and its submodules) import ember from now on.

    >>> import sys, ember.as_torch
    >>> ember.as_torch.install()
    >>> sys.meta_path[0]
    <ember.as_torch._TorchAlias object at ...>
    >>> ember.as_torch.uninstall()
    """
    if _ALIAS not in sys.meta_path:
        sys.meta_path.insert(0, _ALIAS)


def uninstall() -> None:
    """Undoes ``install()``: later ``import torch`` finds the real PyTorch again (modules
    already imported through the alias are forgotten).

    >>> import ember.as_torch
    >>> ember.as_torch.uninstall()
    """
    if _ALIAS in sys.meta_path:
        sys.meta_path.remove(_ALIAS)
    for name in _aliased_names():
        del sys.modules[name]


@contextlib.contextmanager
def installed():
    """``install()`` for the duration of a ``with`` block; the ``torch`` modules imported
    before it come back afterwards.

    >>> import ember.as_torch
    >>> with ember.as_torch.installed():
    ...     import torch
    ...     print(torch.__name__)
    ember
    """
    saved = {name: module for name, module in sys.modules.items()
             if name == "torch" or name.startswith("torch.")}
    for name in saved:
        del sys.modules[name]
    install()
    try:
        yield
    finally:
        uninstall()
        sys.modules.update(saved)


def main(argv: list[str] | None = None) -> None:
    """``python -m ember.as_torch program.py [args...]``: runs ``program.py`` as ``__main__``
    with ``torch`` meaning ember (``sys.argv`` as the program expects it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m ember.as_torch program.py [args...]\n\n"
              "Runs a PyTorch program on ember: its `import torch` imports ember.")
        raise SystemExit(0 if argv else 2)
    install()
    sys.argv = argv
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
