"""Runs the code examples of the seed documents (../shared/seeds/) on ember.

Each example is kept verbatim as source text (only the indentation that the
saved web pages lost is restored) and executed with the imports changed to
ember: ``import ember as torch``, ``from ember.autograd import Function,
Variable, gradcheck``, ``import ember.nn as nn``. Seed 004 writes ``t`` for
torch, so its snippets get ``import ember as t``.

Expected values come from math / NumPy; where torch is installed the same
source also runs on torch and the two are compared. Seed bugs (004's undefined
``x``/``y``/``args``, 000's gradcheck with a missing ``weight``, 003/004's
``extra_repr``, 000's Module without ``super().__init__()``) must fail exactly
as they do on PyTorch.
"""
import contextlib
import io
import re

import pytest

try:
    import torch as torch_or_none
except ImportError:  # pragma: no cover - torch is the oracle, optional
    torch_or_none = None

EMBER_PRELUDE = ("import ember as torch\n"
                 "from ember.autograd import Function, Variable, gradcheck\n")
TORCH_PRELUDE = ("import torch\n"
                 "from torch.autograd import Function, Variable, gradcheck\n")


def run_seed(*sources, lib="ember", main=False, extra=None, prelude=None):
    """Execute seed sources in one fresh namespace; return (namespace, stdout)."""
    if prelude is None:
        prelude = EMBER_PRELUDE if lib == "ember" else TORCH_PRELUDE
    ns = {"__name__": "__main__" if main else "seed"}
    if extra:
        ns.update(extra)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(prelude, "<prelude>", "exec"), ns)
        for i, src in enumerate(sources):
            if lib == "ember":
                src = port_imports(src)
            exec(compile(src, f"<seed {lib} {i}>", "exec"), ns)
    return ns, out.getvalue()


def port_imports(src):
    """The only change a seed gets: its own ``from torch.x import y`` lines name ember."""
    return re.sub(r"^(\s*)from torch(\.| )", r"\1from ember\2", src, flags=re.M)


needs_torch = pytest.mark.skipif(torch_or_none is None, reason="torch not installed")


def np_linear(x, w, b=None):
    """The seeds' Linear in NumPy: x @ w.T (+ b)."""
    out = x @ w.T
    return out if b is None else out + b
