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
that affects the result: the sources, every header they include from the source tree and the
include paths, the flags, the compiler (path, mtime, size), the Python ABI, ember's version and
headers, and pybind11's version. An unchanged extension loads from the cache without running the
compiler. Concurrent builds of one extension take turns on a file lock; the finished library is
moved into place atomically, so a failed or killed build never leaves a library that looks valid.

C++ sources include ``<ember/extension.h>`` (``ember::Tensor`` and friends) or
``<torch/extension.h>`` (PyTorch's names for the same things); load_inline includes both.
"""
import importlib.util
import os
import sys
import sysconfig
import tempfile
import threading

from ._bindings import module_block, normalize_functions
from ._cache import (BuildLock, cache_key, extensions_root, find_included_headers, install,
                     python_abi, remove_stale_builds, tree_digest)
from ._compiler import (EMBER_INCLUDE, ExtensionBuildError, build_shared_library,
                        compiler_fingerprint, default_include_dirs, find_compiler,
                        python_include_dirs)
from ._setuptools import BuildExtension, CppExtension, include_paths

__all__ = ["load", "load_inline", "CppExtension", "BuildExtension", "include_paths",
           "ExtensionBuildError", "get_default_build_root", "verify_ninja_availability",
           "is_ninja_available"]

_INLINE_PRELUDE = "#include <ember/extension.h>\n#include <torch/extension.h>\n\n"

_loaded = {}
_loaded_lock = threading.Lock()


def get_default_build_root():
    """The directory extensions are cached in (``$EMBER_EXTENSIONS_DIR`` or the default)."""
    return extensions_root()


def is_ninja_available():
    """Always False: ember calls the compiler directly and never needs ninja."""
    return False


def verify_ninja_availability():
    """A no-op kept for PyTorch compatibility: ember does not need ninja."""
    return None


def load(name, sources, extra_cflags=None, extra_ldflags=None, extra_include_paths=None,
         build_directory=None, verbose=False):
    """Compile C++ source files into a Python module named ``name`` and import it.

    ``sources`` is a path or a list of paths; the sources define their own bindings with
    ``PYBIND11_MODULE(EMBER_EXTENSION_NAME, m)`` (``TORCH_EXTENSION_NAME`` is the same name).
    Returns the module; raises ExtensionBuildError when compilation fails.
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    files = []
    for s in sources:
        path = os.path.abspath(os.fspath(s))
        try:
            with open(path, "rb") as f:
                files.append((path, f.read()))
        except OSError as e:
            raise FileNotFoundError(f"extension {name!r}: cannot read source {path}: {e.strerror}")
    return _load(name, files, None, extra_cflags, extra_ldflags, extra_include_paths,
                 build_directory, verbose)


def load_inline(name, cpp_sources, functions=None, extra_cflags=None, extra_ldflags=None,
                extra_include_paths=None, build_directory=None, verbose=False):
    """Compile C++ source given as a string (or a list of strings) into a module and import it.

    ``<ember/extension.h>`` and ``<torch/extension.h>`` are included first. ``functions`` (a
    name, a list of names, or a dict name -> docstring) generates the bindings; without it the
    source writes its own ``PYBIND11_MODULE(EMBER_EXTENSION_NAME, m)``.
    """
    if isinstance(cpp_sources, str):
        cpp_sources = [cpp_sources]
    text = _INLINE_PRELUDE + "\n".join(cpp_sources)
    if functions is not None:
        normalize_functions(functions)  # validate before compiling
        text += module_block(functions)
    return _load(name, None, text, extra_cflags, extra_ldflags, extra_include_paths,
                 build_directory, verbose)


def _say(verbose, msg):
    if verbose:
        print(f"ember.utils.cpp_extension: {msg}", flush=True)


def _load(name, files, inline_text, extra_cflags, extra_ldflags, extra_include_paths,
          build_directory, verbose):
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"extension name must be a Python identifier, got {name!r}")
    extra_cflags = [str(f) for f in (extra_cflags or [])]
    extra_ldflags = [str(f) for f in (extra_ldflags or [])]
    user_incs = [os.path.abspath(os.fspath(p)) for p in (extra_include_paths or [])]
    cxx = find_compiler()
    if cxx is None:
        want = os.environ.get("CXX")
        raise ExtensionBuildError(
            f"Error building extension '{name}': no C++ compiler found "
            + (f"($CXX is {want!r}, which is not an executable)" if want
               else "(looked for c++, g++ and clang++ on PATH; set CXX to choose one)"))
    include_dirs = user_incs + default_include_dirs() + python_include_dirs()

    root = os.path.abspath(build_directory) if build_directory else os.path.join(
        extensions_root(), name)
    if inline_text is not None:
        scanned = [(os.path.join(root, "main.cpp"), inline_text.encode())]
    else:
        scanned = files
    headers = find_included_headers(scanned, user_incs)

    import ember
    import pybind11
    parts = [("name", name)]
    if inline_text is not None:
        parts.append(("inline", inline_text))
    else:
        for path, data in files:
            parts += [("source", path), ("data", data)]
    for path, data in headers:
        parts += [("header", path), ("data", data)]
    parts += [("cflags", "\0".join(extra_cflags)), ("ldflags", "\0".join(extra_ldflags)),
              ("includes", "\0".join(user_incs)),
              ("compiler", compiler_fingerprint(cxx)), ("python", python_abi()),
              ("ember", getattr(ember, "__version__", "")), ("ember-headers", tree_digest(EMBER_INCLUDE)),
              ("pybind11", pybind11.__version__), ("format", "1")]
    key = cache_key(parts)[:32]
    key_dir = os.path.join(root, key)
    library = os.path.join(key_dir, name + sysconfig.get_config_var("EXT_SUFFIX"))

    if os.path.isfile(library):
        _say(verbose, f"loading '{name}' from the cache: {library}")
        return _import(name, library)

    os.makedirs(root, exist_ok=True)
    with BuildLock(os.path.join(root, key + ".lock")):
        if os.path.isfile(library):  # another process built it while we waited
            _say(verbose, f"loading '{name}' (built by another process): {library}")
            return _import(name, library)
        remove_stale_builds(root, key)
        os.makedirs(key_dir, exist_ok=True)
        if inline_text is not None:
            src = os.path.join(key_dir, "main.cpp")
            tmp_src = src + f".{os.getpid()}.tmp"
            with open(tmp_src, "w") as f:
                f.write(inline_text)
            os.replace(tmp_src, src)
            sources = [src]
        else:
            sources = [path for path, _ in files]
        work = tempfile.mkdtemp(prefix=f".build-{key}-{os.getpid()}-", dir=root)
        try:
            _say(verbose, f"building '{name}' in {key_dir}")
            built = os.path.join(work, os.path.basename(library))
            build_shared_library(cxx, sources, built, name=name, include_dirs=include_dirs,
                                 extra_cflags=extra_cflags, extra_ldflags=extra_ldflags,
                                 work_dir=work, verbose=verbose,
                                 log_path=os.path.join(key_dir, "build.log"))
            install(built, library)
        finally:
            import shutil
            shutil.rmtree(work, ignore_errors=True)
    return _import(name, library)


def _import(name, path):
    """Import the library at path as module ``name`` (once per path and process).

    pybind11 (3.x) caches modules by import name for the life of the interpreter, so a rebuilt
    extension loaded into a process that already holds an older build of the same name is
    imported under a unique dotted name ending in ``name`` (PyInit_<name> is what the loader
    looks for); ``sys.modules[name]`` then points at the newest build.
    """
    with _loaded_lock:
        module = _loaded.get(path)
        if module is None:
            spec_name = name
            if any(m.__name__.rsplit(".", 1)[-1] == name for m in _loaded.values()):
                key = os.path.basename(os.path.dirname(path))
                spec_name = f"_ember_extension_{key}.{name}"
            spec = importlib.util.spec_from_file_location(spec_name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            _loaded[path] = module
            sys.modules[spec_name] = module
        sys.modules[name] = module
        return module
