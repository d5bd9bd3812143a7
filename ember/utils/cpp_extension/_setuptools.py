"""Ahead-of-time builds: ``CppExtension``, ``CUDAExtension`` and ``BuildExtension`` for a
package's setup.py.

A ``setup.py`` building one extension (``pip install .`` compiles it)::

    from setuptools import setup
    from ember.utils.cpp_extension import BuildExtension, CppExtension

    setup(name="scale_ext",
          ext_modules=[CppExtension("scale_ext", ["scale.cpp"])],
          cmdclass={"build_ext": BuildExtension})
"""
from __future__ import annotations

from typing import Any

import setuptools
from setuptools.command.build_ext import build_ext

from ._compiler import default_include_dirs
from ._cuda import NO_CUDA_HOME, find_toolkit


def _toolkit():
    toolkit = find_toolkit()
    if toolkit is None:
        raise OSError(NO_CUDA_HOME)
    return toolkit


def include_paths(cuda: bool = False) -> list[str]:
    """The include directories an ember C++ extension needs (ember's and pybind11's headers;
    with ``cuda``, the CUDA toolkit's too: OSError as PyTorch's without one).

    >>> import os
    >>> dirs = include_paths()
    >>> os.path.isfile(os.path.join(dirs[0], "ember", "extension.h"))
    True
    """
    dirs = default_include_dirs()
    if cuda:
        dirs.append(_toolkit().include)
    return dirs


def library_paths(cuda: bool = False) -> list[str]:
    """The library directories to link with: none for C++ (symbols come from the Python
    process), the CUDA toolkit's for ``cuda``.

    >>> library_paths()
    []
    """
    return [_toolkit().lib] if cuda else []


def CppExtension(name: str, sources: list[str], *args: Any,
                 **kwargs: Any) -> setuptools.Extension:
    """A ``setuptools.Extension`` for C++ code using ``<ember/extension.h>``.

    Adds ember's and pybind11's include directories and marks the language C++ (linked with
    the C++ compiler); BuildExtension adds ``-std=c++17`` and the extension-name macros.
    Other arguments go to ``setuptools.Extension``.

    >>> ext = CppExtension("pkg.scale_ext", ["scale.cpp"], extra_compile_args=["-O3"])
    >>> ext.name, ext.language, ext.include_dirs == include_paths()
    ('pkg.scale_ext', 'c++', True)
    """
    kwargs["include_dirs"] = list(kwargs.get("include_dirs") or []) + include_paths()
    kwargs["language"] = "c++"
    return setuptools.Extension(name, sources, *args, **kwargs)


def CUDAExtension(name: str, sources: list[str], *args: Any,
                  **kwargs: Any) -> setuptools.Extension:
    """A ``setuptools.Extension`` for C++ and CUDA (``.cu``) sources: CppExtension's settings
    plus the CUDA toolkit's headers, library folder and runtime (``cudart``). BuildExtension
    compiles the ``.cu`` files with nvcc, with ``extra_compile_args["nvcc"]``.

    >>> ext = CUDAExtension("k", ["k.cpp", "k_kernel.cu"])  # doctest: +SKIP
    >>> ext.libraries                                       # doctest: +SKIP
    ['cudart']
    """
    toolkit = _toolkit()
    kwargs["library_dirs"] = list(kwargs.get("library_dirs") or []) + [toolkit.lib]
    kwargs["runtime_library_dirs"] = list(kwargs.get("runtime_library_dirs") or []) + [
        toolkit.lib]
    kwargs["libraries"] = list(kwargs.get("libraries") or []) + ["cudart"]
    kwargs["include_dirs"] = list(kwargs.get("include_dirs") or []) + [toolkit.include]
    return CppExtension(name, sources, *args, **kwargs)


def _has_flag(args: list[str], prefix: str) -> bool:
    return any(a.startswith(prefix) for a in args)


class BuildExtension(build_ext):
    """``build_ext`` for CppExtension: defines ``EMBER_EXTENSION_NAME``/``TORCH_EXTENSION_NAME``
    as each extension's module name and compiles as C++17 with hidden symbols; ``.cu`` sources
    (CUDAExtension) go to the CUDA toolkit's nvcc.

    ``extra_compile_args`` may be a list or, as in PyTorch, a dict: its ``"cxx"`` entry for the
    C++ compiler, its ``"nvcc"`` entry for nvcc.
    Give it to ``setup(cmdclass={"build_ext": BuildExtension})`` (see the module's docstring).

    >>> from setuptools import Distribution
    >>> dist = Distribution({"ext_modules": [CppExtension("scale_ext", ["scale.cpp"])]})
    >>> cmd = BuildExtension(dist)
    >>> cmd.get_ext_filename("scale_ext").startswith("scale_ext.")
    True
    """

    @classmethod
    def with_options(cls, **options: Any) -> type[BuildExtension]:
        """A BuildExtension subclass whose constructor gets ``options`` (PyTorch's API).

        >>> from setuptools import Distribution
        >>> build = BuildExtension.with_options(no_python_abi_suffix=True)
        >>> build(Distribution()).get_ext_filename("scale_ext")
        'scale_ext.so'
        """
        class cls_with_options(cls):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                kwargs.update(options)
                super().__init__(*args, **kwargs)
        return cls_with_options

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.no_python_abi_suffix = kwargs.pop("no_python_abi_suffix", False)
        # accepted for PyTorch compatibility; the compiler runs directly
        kwargs.pop("use_ninja", None)
        super().__init__(*args, **kwargs)

    def build_extensions(self) -> None:
        so = getattr(self.compiler, "compiler_so", None)
        if so and "-Wstrict-prototypes" in so:  # a C-only flag from Python's own build
            so.remove("-Wstrict-prototypes")
        nvcc_args = {}
        for ext in self.extensions:
            args = ext.extra_compile_args
            if isinstance(args, dict):
                nvcc_args[ext.name] = list(args.get("nvcc", []))
                args = list(args.get("cxx", []))
            else:
                args = list(args or [])
            short = ext.name.split(".")[-1]
            for macro in ("EMBER_EXTENSION_NAME", "TORCH_EXTENSION_NAME"):
                if not _has_flag(args, f"-D{macro}="):
                    args.append(f"-D{macro}={short}")
            if not _has_flag(args, "-std="):
                args.append("-std=c++17")
            if not _has_flag(args, "-fvisibility"):
                args.append("-fvisibility=hidden")
            ext.extra_compile_args = args
        self._nvcc_args = nvcc_args
        if any(src.endswith(".cu") for ext in self.extensions for src in ext.sources):
            self._compile_cu_with_nvcc()
        super().build_extensions()

    def build_extension(self, ext: setuptools.Extension) -> None:
        self._current = ext  # the nvcc hook reads its nvcc flags and name
        super().build_extension(ext)

    def _compile_cu_with_nvcc(self) -> None:
        """Route the compiler's ``.cu`` files to nvcc (the C++ ones stay where they were)."""
        toolkit = _toolkit()
        compiler = self.compiler
        if ".cu" not in compiler.src_extensions:
            compiler.src_extensions.append(".cu")
        original = compiler._compile

        def compile_one(obj, src, ext, cc_args, extra_postargs, pp_opts):
            if not src.endswith(".cu"):
                return original(obj, src, ext, cc_args, extra_postargs, pp_opts)
            current = self._current
            short = current.name.split(".")[-1]
            flags = toolkit.compile_flags(short, [], self._nvcc_args.get(current.name, []))
            compiler.spawn(toolkit.nvcc + pp_opts + flags + ["-c", src, "-o", obj])
        compiler._compile = compile_one

    def get_ext_filename(self, ext_name: str) -> str:
        name = super().get_ext_filename(ext_name)
        if self.no_python_abi_suffix:
            import os
            import sysconfig
            suffix = sysconfig.get_config_var("EXT_SUFFIX")
            if suffix and name.endswith(suffix):
                name = name[: -len(suffix)] + os.path.splitext(suffix)[1]
        return name
