"""The CUDA toolkit for extensions with CUDA sources: where nvcc is, its flags, the runtime.

PyTorch builds ``cuda_sources`` (and ``.cu`` files) with nvcc and links the CUDA runtime;
ember does the same, for CUDA tensors whose memory CuPy holds (kernels get device addresses
from ``data_ptr()``, see ``<ember/cuda.h>``). The toolkit is found as PyTorch finds it:
``$CUDA_HOME`` (or ``$CUDA_PATH``), else the folder above the ``nvcc`` on PATH, else
``/usr/local/cuda``.

>>> toolkit = find_toolkit()
>>> toolkit is None or os.path.basename(toolkit.nvcc[0]) == "nvcc"
True
"""
import os
import shutil

#: PyTorch's words when no toolkit is found
NO_CUDA_HOME = ("CUDA_HOME environment variable is not set. Please set it to your CUDA "
                "install root.")

#: what load_inline puts before cuda_sources (PyTorch's three headers)
CUDA_PRELUDE = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n\n"


class CudaToolkit:
    """A CUDA toolkit: ``home``, the ``nvcc`` command (a list), its include and library
    folders."""

    def __init__(self, home):
        self.home = home
        self.nvcc = [os.path.join(home, "bin", "nvcc")]
        self.include = os.path.join(home, "include")
        lib64 = os.path.join(home, "lib64")
        self.lib = lib64 if os.path.isdir(lib64) else os.path.join(home, "lib")

    def compile_flags(self, name, include_dirs, extra_cuda_cflags):
        """nvcc's flags for one ``.cu`` file (before ``-c src -o obj``)."""
        return (["-std=c++17", "-O2", "--expt-relaxed-constexpr",
                 "-Xcompiler", "-fPIC", "-Xcompiler", "-fvisibility=hidden",
                 f"-DEMBER_EXTENSION_NAME={name}", f"-DTORCH_EXTENSION_NAME={name}"]
                + [f"-I{d}" for d in include_dirs] + list(extra_cuda_cflags))

    def link_flags(self):
        """The CUDA runtime, found at run time where it was at build time."""
        return [f"-L{self.lib}", "-lcudart", f"-Wl,-rpath,{self.lib}"]


def find_cuda_home():
    """The CUDA toolkit's folder, or None: ``$CUDA_HOME`` or ``$CUDA_PATH`` as given; else the
    first folder holding ``bin/nvcc`` and ``include/cuda_runtime.h`` among the one above the
    ``nvcc`` on PATH, the one above what that ``nvcc`` links to, and ``/usr/local/cuda`` (an
    ``nvcc`` on PATH may be a wrapper script outside the toolkit)."""
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(variable)
        if home:
            return home
    candidates = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates += [os.path.dirname(os.path.dirname(nvcc)),
                       os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))]
    candidates.append("/usr/local/cuda")
    for home in candidates:
        if os.path.isfile(os.path.join(home, "include", "cuda_runtime.h")) and \
                os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
            return home
    return None


def find_toolkit():
    """The CUDA toolkit whose nvcc can run, or None."""
    home = find_cuda_home()
    if home is None:
        return None
    toolkit = CudaToolkit(home)
    return toolkit if os.access(toolkit.nvcc[0], os.X_OK) else None
