"""Ahead-of-time builds: ``CppExtension`` and ``BuildExtension`` for a package's setup.py.

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


def include_paths(cuda: bool = False) -> list[str]:
    """The include directories an ember C++ extension needs (ember's and pybind11's headers).

    >>> import os
    >>> dirs = include_paths()
    >>> os.path.isfile(os.path.join(dirs[0], "ember", "extension.h"))
    True
    """
    if cuda:
        raise ValueError("ember has no CUDA backend: include_paths(cuda=True) is not available")
    return default_include_dirs()


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


def _has_flag(args: list[str], prefix: str) -> bool:
    return any(a.startswith(prefix) for a in args)


class BuildExtension(build_ext):
    """``build_ext`` for CppExtension: defines ``EMBER_EXTENSION_NAME``/``TORCH_EXTENSION_NAME``
    as each extension's module name and compiles as C++17 with hidden symbols.

    ``extra_compile_args`` may be a list or, as in PyTorch, a dict whose ``"cxx"`` entry is used.
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
        for ext in self.extensions:
            args = ext.extra_compile_args
            args = list(args.get("cxx", [])) if isinstance(args, dict) else list(args or [])
            short = ext.name.split(".")[-1]
            for macro in ("EMBER_EXTENSION_NAME", "TORCH_EXTENSION_NAME"):
                if not _has_flag(args, f"-D{macro}="):
                    args.append(f"-D{macro}={short}")
            if not _has_flag(args, "-std="):
                args.append("-std=c++17")
            if not _has_flag(args, "-fvisibility"):
                args.append("-fvisibility=hidden")
            ext.extra_compile_args = args
        super().build_extensions()

    def get_ext_filename(self, ext_name: str) -> str:
        name = super().get_ext_filename(ext_name)
        if self.no_python_abi_suffix:
            import os
            import sysconfig
            suffix = sysconfig.get_config_var("EXT_SUFFIX")
            if suffix and name.endswith(suffix):
                name = name[: -len(suffix)] + os.path.splitext(suffix)[1]
        return name
