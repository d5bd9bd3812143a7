"""``ember.utils.cpp_extension``: C++ extensions compiled at run time (or ahead of time).

>>> from ember.utils.cpp_extension import load_inline
>>> m = load_inline("twice", '''
... ember::Tensor twice(ember::Tensor x) { return x * 2; }
... ''', functions="twice")                                         # doctest: +SKIP
>>> m.twice(ember.ones(3))                                          # doctest: +SKIP
tensor([2., 2., 2.])

``load``/``load_inline`` compile with the system C++ compiler (``$CXX``, else c++, g++ or
clang++; no ninja) and pybind11, then import the module. Builds are cached per user
(``$EMBER_EXTENSIONS_DIR``, default ``~/.cache/ember_extensions``) under a sha256 of everything
that affects the result: the sources, the flags, the include paths, the compiler (path, mtime,
size), the Python ABI, ember's version and headers, pybind11's version, and the contents of every
header the last build read, as the compiler lists them (``-MD``), wherever it found them
(``-I``/``-isystem`` in ``extra_cflags``, ``extra_include_paths``, next to a source, ...). An
unchanged extension loads from the cache without running the compiler. Concurrent builds of one
extension take turns on a file lock; the finished library is moved into place atomically, so a
failed or killed build never leaves a library that looks valid, and a library that fails to
import is removed. The name must be an ASCII identifier of at most 200 characters (what
Python's loader can find the module's init function for); another raises ValueError before
anything is compiled.

C++ sources include ``<ember/extension.h>`` (``ember::Tensor`` and friends) or
``<torch/extension.h>`` (PyTorch's names for the same things); load_inline includes both.
Operators registered with ``TORCH_LIBRARY`` (``<torch/library.h>``, ``<ember/library.h>``) are
loaded with ``is_python_module=False``: the library is built as a plain shared object, loaded
with ``ember.ops.load_library`` and its path returned, as PyTorch does.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import sys
import sysconfig
import tempfile
import threading
import types
from typing import Mapping, Optional, Sequence, Union

from ._bindings import module_block, normalize_functions
from ._cache import (BuildLock, cache_key, extensions_root, install, library_path, python_abi,
                     record_dependencies, recorded_dependencies, remove_stale_builds, tree_digest)
from ._compiler import (EMBER_INCLUDE, ExtensionBuildError, build_shared_library,
                        compiler_fingerprint, default_include_dirs, find_compiler,
                        python_include_dirs)
from ._cuda import CUDA_PRELUDE, NO_CUDA_HOME, find_toolkit
from ._names import check_extension_name
from .._oplib import load_library, raising_registration_failures
from ...backend import device_module
from ._setuptools import BuildExtension, CppExtension, CUDAExtension, include_paths, library_paths

__all__ = ["load", "load_inline", "CppExtension", "CUDAExtension", "BuildExtension",
           "include_paths", "library_paths",
           "ExtensionBuildError", "get_default_build_root", "verify_ninja_availability",
           "is_ninja_available"]

_INLINE_PRELUDE = "#include <ember/extension.h>\n#include <torch/extension.h>\n\n"

_LIBRARY_SUFFIX = ".so"

_loaded: dict[str, types.ModuleType] = {}
_loaded_lock = threading.Lock()

#: a file system path, as ``open`` takes it
_Path = Union[str, "os.PathLike[str]"]


def get_default_build_root() -> str:
    """The directory extensions are cached in (``$EMBER_EXTENSIONS_DIR`` or the default).

    >>> import os
    >>> os.path.isabs(get_default_build_root())
    True
    """
    return extensions_root()


def is_ninja_available() -> bool:
    """Always False: ember calls the compiler directly and never needs ninja.

    >>> is_ninja_available()
    False
    """
    return False


def verify_ninja_availability() -> None:
    """A no-op kept for PyTorch compatibility: ember does not need ninja.

    >>> verify_ninja_availability()  # never raises
    """
    return None


def load(name: str, sources: Union[_Path, Sequence[_Path]],
         extra_cflags: Optional[Sequence[str]] = None,
         extra_ldflags: Optional[Sequence[str]] = None,
         extra_include_paths: Optional[Sequence[_Path]] = None,
         build_directory: Optional[_Path] = None, verbose: bool = False,
         is_python_module: bool = True, extra_cuda_cflags: Optional[Sequence[str]] = None,
         with_cuda: Optional[bool] = None) -> Union[types.ModuleType, str]:
    """Compile C++ source files into a Python module named ``name`` and import it.

    ``sources`` is a path or a list of paths; the sources define their own bindings with
    ``PYBIND11_MODULE(EMBER_EXTENSION_NAME, m)`` (``TORCH_EXTENSION_NAME`` is the same name).
    Returns the module; raises ExtensionBuildError when compilation fails.

    With ``is_python_module=False`` the sources need no bindings: they register operators with
    ``TORCH_LIBRARY`` blocks, the library (``<name>.so``) is loaded with
    ``ember.ops.load_library`` and its path is returned; a block that fails raises RuntimeError.

    With ``scale.cpp`` holding::

        #include <ember/extension.h>
        ember::Tensor scale(ember::Tensor x, double k) { return x * k; }
        PYBIND11_MODULE(EMBER_EXTENSION_NAME, m) { m.def("scale", &scale); }

    the first ``load`` compiles it (seconds), later ones load the cached library:

    >>> import ember
    >>> ext = load("scale_ext", ["scale.cpp"], extra_cflags=["-O2"])  # doctest: +SKIP
    >>> ext.scale(ember.ones(2), 3.0)                                 # doctest: +SKIP
    tensor([3., 3.])

    ``.cu`` sources are compiled by nvcc (with ``extra_cuda_cflags``) and the CUDA runtime is
    linked (also with ``with_cuda=True``), on a machine where ember has CUDA (CuPy and a GPU):
    see ``load_inline``.
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    has_cu = any(os.fspath(s).endswith(".cu") for s in sources)
    cuda = _cuda_toolkit(name, has_cu if with_cuda is None else with_cuda)
    files = []
    for s in sources:
        path = os.path.abspath(os.fspath(s))
        try:
            with open(path, "rb") as f:
                files.append((path, f.read()))
        except OSError as e:
            raise FileNotFoundError(f"extension {name!r}: cannot read source {path}: {e.strerror}")
    return _load(name, files, None, extra_cflags, extra_ldflags, extra_include_paths,
                 build_directory, verbose, is_python_module, cuda=cuda,
                 extra_cuda_cflags=extra_cuda_cflags)


def load_inline(name: str, cpp_sources: Union[str, Sequence[str]],
                functions: Union[str, Sequence[str], Mapping[str, str], None] = None,
                extra_cflags: Optional[Sequence[str]] = None,
                extra_ldflags: Optional[Sequence[str]] = None,
                extra_include_paths: Optional[Sequence[_Path]] = None,
                build_directory: Optional[_Path] = None,
                verbose: bool = False,
                is_python_module: bool = True,
                cuda_sources: Union[str, Sequence[str], None] = None,
                with_cuda: Optional[bool] = None,
                extra_cuda_cflags: Optional[Sequence[str]] = None) -> Union[types.ModuleType, str]:
    """Compile C++ source given as a string (or a list of strings) into a module and import it.

    ``<ember/extension.h>`` and ``<torch/extension.h>`` are included first. ``functions`` (a
    name, a list of names, or a dict name -> docstring) generates the bindings; without it the
    source writes its own ``PYBIND11_MODULE(EMBER_EXTENSION_NAME, m)``. With
    ``is_python_module=False`` the source registers operators with ``TORCH_LIBRARY`` instead
    and the loaded library's path is returned (see ``load``).

    >>> import ember
    >>> source = "ember::Tensor relu_sq(ember::Tensor x) { return x.relu() * x.relu(); }"
    >>> ext = load_inline("relu_sq_ext", source,
    ...                   functions={"relu_sq": "max(x, 0) squared"})  # doctest: +SKIP
    >>> ext.relu_sq(ember.tensor([-1.0, 2.0]))                        # doctest: +SKIP
    tensor([0., 4.])

    ``cuda_sources`` (kernels and the host functions that launch them) are compiled by nvcc
    as ``cuda.cu``, after ``<torch/types.h>``, ``<cuda.h>`` and ``<cuda_runtime.h>``, with
    ``extra_cuda_cflags``, and linked with the CUDA runtime, as PyTorch does; the functions
    they define are declared in ``cpp_sources`` to be bound. This needs ember's CUDA (CuPy and
    a GPU: CUDA tensors' ``data_ptr()`` are device addresses, ``at::cuda::
    getCurrentCUDAStream()`` is CuPy's stream) and a CUDA toolkit (``$CUDA_HOME``, else
    ``nvcc`` on PATH, else /usr/local/cuda; OSError as PyTorch's without one).
    """
    if isinstance(cuda_sources, str):
        cuda_sources = [cuda_sources]
    wanted = bool(cuda_sources) if with_cuda is None else with_cuda
    cuda = _cuda_toolkit(name, wanted)
    if isinstance(cpp_sources, str):
        cpp_sources = [cpp_sources]
    text = _INLINE_PRELUDE + "\n".join(cpp_sources)
    if functions is not None:
        normalize_functions(functions)  # validate before compiling
        text += module_block(functions)
    cuda_text = CUDA_PRELUDE + "\n".join(cuda_sources) if cuda_sources else None
    return _load(name, None, text, extra_cflags, extra_ldflags, extra_include_paths,
                 build_directory, verbose, is_python_module, cuda=cuda, cuda_text=cuda_text,
                 extra_cuda_cflags=extra_cuda_cflags)


def _cuda_toolkit(name, wanted):
    """The CUDA toolkit for a build that has CUDA sources (or ``with_cuda``), else None;
    RuntimeError where ember has no CUDA device, OSError (PyTorch's) where nvcc is missing."""
    if not wanted:
        return None
    if device_module("cuda") is None:
        raise RuntimeError(
            f"Error building extension '{name}': CUDA sources need CUDA, and this ember has "
            "none (it runs CUDA through CuPy: pip install 'ember[cuda]' on a machine with an "
            "NVIDIA GPU)")
    toolkit = find_toolkit()
    if toolkit is None:
        raise OSError(NO_CUDA_HOME)
    return toolkit


def _say(verbose, msg):
    if verbose:
        print(f"ember.utils.cpp_extension: {msg}", flush=True)


def _load(name, files, inline_text, extra_cflags, extra_ldflags, extra_include_paths,
          build_directory, verbose, is_python_module=True, cuda=None, cuda_text=None,
          extra_cuda_cflags=None):
    # a plain library is <name>.so, as PyTorch names it; a module gets Python's suffix
    suffix = sysconfig.get_config_var("EXT_SUFFIX") if is_python_module else _LIBRARY_SUFFIX
    check_extension_name(name, suffix)  # before anything is compiled or written under it
    filename = name + suffix
    extra_cflags = [str(f) for f in (extra_cflags or [])]
    extra_ldflags = [str(f) for f in (extra_ldflags or [])]
    extra_cuda_cflags = [str(f) for f in (extra_cuda_cflags or [])]
    user_incs = [os.path.abspath(os.fspath(p)) for p in (extra_include_paths or [])]
    cxx = find_compiler()
    if cxx is None:
        want = os.environ.get("CXX")
        raise ExtensionBuildError(
            f"Error building extension '{name}': no C++ compiler found "
            + (f"($CXX is {want!r}, which is not an executable)" if want
               else "(looked for c++, g++ and clang++ on PATH; set CXX to choose one)"))

    root = os.path.abspath(build_directory) if build_directory else os.path.join(
        extensions_root(), name)
    key = _source_key(name, files, inline_text, extra_cflags, extra_ldflags, user_incs, cxx,
                      is_python_module, cuda, cuda_text, extra_cuda_cflags)
    key_dir = os.path.join(root, key)

    library = _cached_library(key_dir, filename)
    if library is not None:
        _say(verbose, f"loading '{name}' from the cache: {library}")
        return _load_or_discard(name, library, is_python_module)

    os.makedirs(root, exist_ok=True)
    with BuildLock(os.path.join(root, key + ".lock")):
        library = _cached_library(key_dir, filename)
        if library is not None:  # another process built it while we waited
            _say(verbose, f"loading '{name}' (built by another process): {library}")
        else:
            remove_stale_builds(root, key)
            include_dirs = user_incs + default_include_dirs() + python_include_dirs()
            library = _build(name, root, key, files, inline_text, cxx, filename,
                             include_dirs=include_dirs, extra_cflags=extra_cflags,
                             extra_ldflags=extra_ldflags, verbose=verbose, cuda=cuda,
                             cuda_text=cuda_text, extra_cuda_cflags=extra_cuda_cflags)
    return _load_or_discard(name, library, is_python_module)


def _source_key(name, files, inline_text, extra_cflags, extra_ldflags, user_incs, cxx,
                is_python_module=True, cuda=None, cuda_text=None, extra_cuda_cflags=()):
    """The part of the cache key known before compiling: sources, flags, toolchain, versions.

    The headers the sources include are keyed separately, from what the compiler read.
    """
    import ember
    import pybind11
    parts = [("name", name)]
    if inline_text is not None:
        parts.append(("inline", inline_text))
    else:
        for path, data in files:
            parts += [("source", path), ("data", data)]
    parts += [("cflags", "\0".join(extra_cflags)), ("ldflags", "\0".join(extra_ldflags)),
              ("includes", "\0".join(user_incs)),
              ("compiler", compiler_fingerprint(cxx)), ("python", python_abi()),
              ("ember", getattr(ember, "__version__", "")),
              ("ember-headers", tree_digest(EMBER_INCLUDE)),
              # format 3: linked without the compile flags (no crtfastmath.o from
              # -ffast-math): older cached builds are rebuilt
              ("pybind11", pybind11.__version__), ("format", "3")]
    if not is_python_module:  # (only then, so that the modules' keys stay what they were)
        parts.append(("kind", "library"))
    if cuda is not None:  # (likewise)
        parts += [("nvcc", compiler_fingerprint(cuda.nvcc)), ("cuda-home", cuda.home),
                  ("cuda-flags", "\0".join(extra_cuda_cflags)), ("cuda-inline", cuda_text or "")]
    return cache_key(parts)[:32]


def _cached_library(key_dir, filename):
    """The library built from key_dir's sources and the headers as they are now, or None.

    None when no build of these sources finished, or when a file the last build read has changed
    or gone since.
    """
    dependencies = recorded_dependencies(key_dir)
    if dependencies is None:
        return None
    library = library_path(key_dir, dependencies, filename)
    return library if os.path.isfile(library) else None


def _build(name, root, key, files, inline_text, cxx, filename, *, include_dirs, extra_cflags,
           extra_ldflags, verbose, cuda=None, cuda_text=None, extra_cuda_cflags=()):
    """Compile into a temporary directory, install the library atomically, record what it read.

    Call with the build lock of ``key`` held. Returns the installed library's path.
    """
    key_dir = os.path.join(root, key)
    os.makedirs(key_dir, exist_ok=True)
    if inline_text is not None:
        sources = [_write_source(key_dir, "main.cpp", inline_text)]
        if cuda_text is not None:
            sources.append(_write_source(key_dir, "cuda.cu", cuda_text))
    else:
        sources = [path for path, _ in files]
    work = tempfile.mkdtemp(prefix=f".build-{key}-{os.getpid()}-", dir=root)
    try:
        _say(verbose, f"building '{name}' in {key_dir}")
        built = os.path.join(work, filename)
        read = build_shared_library(cxx, sources, built, name=name, include_dirs=include_dirs,
                                    extra_cflags=extra_cflags, extra_ldflags=extra_ldflags,
                                    work_dir=work, verbose=verbose,
                                    log_path=os.path.join(key_dir, "build.log"), cuda=cuda,
                                    extra_cuda_cflags=extra_cuda_cflags)
        # the sources are in the source key already
        dependencies = [path for path in read if path not in sources]
        library = library_path(key_dir, dependencies, filename)
        install(built, library)
        record_dependencies(key_dir, dependencies)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return library


def _write_source(key_dir, filename, text):
    """``text`` as ``key_dir/filename`` (written whole: a concurrent reader never sees a part)."""
    src = os.path.join(key_dir, filename)
    tmp_src = src + f".{os.getpid()}.tmp"
    with open(tmp_src, "w") as f:
        f.write(text)
    os.replace(tmp_src, src)
    return src


def _load_or_discard(name, path, is_python_module):
    """Import the module (or load the plain library and return its path); if it cannot be
    loaded, remove it from the cache first, so that the next load builds it again instead of
    failing on the same file. Failed TORCH_LIBRARY blocks raise RuntimeError either way."""
    try:
        if not is_python_module:
            load_library(path)
            return path
        with raising_registration_failures(path):
            return _import(name, path)
    except (ImportError, OSError):
        with contextlib.suppress(OSError):
            os.remove(path)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(path))
        raise


def _import(name, path):
    """Import the library at path as module ``name`` (once per path and process).

    pybind11 (3.x) caches modules by import name for the life of the interpreter, so a rebuilt
    extension loaded into a process that already holds an older build of the same name is
    imported under a unique dotted name ending in ``name`` (PyInit_<name> is what the loader
    looks for); ``sys.modules[name]`` then points at the newest build, unless ``name`` is
    taken by a module that is not an extension.
    """
    with _loaded_lock:
        module = _loaded.get(path)
        if module is None:
            spec_name = name
            if any(m.__name__.rsplit(".", 1)[-1] == name for m in _loaded.values()):
                # the library is <key>/<deps>/<file>: the two keys name this build
                key_dir, deps_dir = os.path.split(os.path.dirname(path))
                spec_name = f"_ember_extension_{os.path.basename(key_dir)}_{deps_dir}.{name}"
            spec = importlib.util.spec_from_file_location(spec_name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            _loaded[path] = module
            if spec_name != name:
                sys.modules[spec_name] = module
        # Register the name (so pickle finds the extension's classes), but never over a
        # module that is not one of these extensions: an extension named like a standard
        # module ('math', 'json') must not replace it for the rest of the process.
        current = sys.modules.get(name)
        if current is None or any(current is m for m in _loaded.values()):
            sys.modules[name] = module
        return module
