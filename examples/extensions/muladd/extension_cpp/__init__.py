"""extension-cpp's ``muladd`` operators on ember.

The first import compiles ``csrc/muladd.cpp`` (seconds; later imports load the cached
library) and loads it, which registers ``ember.ops.extension_cpp.mymuladd``, ``mymul`` and
``myadd_out``; ``ops`` adds their fake implementations and autograd.
"""
import os

from ember.utils.cpp_extension import load

_HERE = os.path.dirname(os.path.abspath(__file__))
library_path = load("extension_cpp", [os.path.join(_HERE, "csrc", "muladd.cpp")],
                    extra_cflags=["-O2"], is_python_module=False)

from . import ops  # noqa: E402  (after the library: ops registers onto its operators)
