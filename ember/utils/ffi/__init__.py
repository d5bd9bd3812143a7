"""``ember.utils.ffi``: C extensions built with cffi, taking ember tensors (the old
``torch.utils.ffi``).

Write C against ``<ember/ffi/EmberTensor.h>`` (``EmberFloatTensor``, ``EmberDoubleTensor``, ...
with TH-style helpers: ``isSameSizeAs``, ``resizeAs``, ``fill``, ``cadd``, ``data``,
``nElement``), declare the functions in a header, and build::

    # build.py
    from ember.utils.ffi import create_extension
    ffi = create_extension('_ext.my_lib', headers=['src/my_lib.h'], sources=['src/my_lib.c'],
                           relative_to=__file__)
    ffi.build()   # writes _ext/my_lib/ next to build.py

    # anywhere next to build.py
    from _ext import my_lib
    my_lib.my_lib_add_forward(a, b, out)   # ember float32 tensors in, C sees EmberFloatTensor*

Each tensor argument reaches C without a copy when it is C-contiguous (a non-contiguous one is
copied in and, if the C code wrote to it, copied back). The argument's dtype must match the
struct (``EmberFloatTensor`` = ``ember.float32``, ``EmberDoubleTensor`` = ``ember.float64``,
``EmberLongTensor`` = ``ember.int64``, ``EmberIntTensor`` = ``ember.int32``); otherwise the call
raises ``TypeError`` naming the argument. ``resizeAs``/``resizeNd`` in C reallocate the ember
tensor's storage through a callback into Python.
"""
from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from ..cpp_extension._names import check_extension_name
from . import _build
from ._build import FFIBuildError, INCLUDE_DIR
from ._wrap import CDEF as _CDEF
from ._wrap import wrap_module as _wrap_module  # noqa: F401 - the generated modules call it

if TYPE_CHECKING:
    import cffi

__all__ = ["create_extension", "FFIBuildError", "include_dir"]


def include_dir() -> str:
    """The directory to add to the include path for ``#include <ember/ffi/EmberTensor.h>``.

    >>> import os
    >>> os.path.isfile(os.path.join(include_dir(), "ember", "ffi", "EmberTensor.h"))
    True
    """
    return INCLUDE_DIR


class FFIExtension:
    """What ``create_extension`` returns: ``build()`` compiles and installs the extension.

    ``ffi`` is the underlying ``cffi.FFI`` (``set_source`` and ``cdef`` already done);
    ``module_dir`` is where ``build()`` puts the importable package.

    >>> ffi = create_extension("_ext.my_lib", headers=["src/my_lib.h"],
    ...                        sources=["src/my_lib.c"], relative_to=__file__)  # doctest: +SKIP
    >>> ffi.module_dir                                                 # doctest: +SKIP
    '/path/to/project/_ext/my_lib'
    >>> ffi.build()                                                    # doctest: +SKIP
    '/path/to/project/_ext/my_lib/_my_lib.cpython-311-x86_64-linux-gnu.so'
    """

    def __init__(self, ffi: cffi.FFI, name: str, cffi_name: str, base_path: str,
                 arg_names: dict[str, list[Optional[str]]], verbose: bool) -> None:
        self.ffi, self.name, self.cffi_name = ffi, name, cffi_name
        self.base_path, self.verbose = base_path, verbose
        self.module_dir = os.path.join(base_path, *name.split("."))
        self._arg_names = arg_names

    def build(self) -> str:
        """Compile (``ffi.compile``), check the library loads, and install it and its Python
        wrapper under ``relative_to``; returns the path of the installed library.

        Raises ``FFIBuildError`` (with the compiler's error lines) when compiling fails.
        A module already imported in this process is not reloaded: rebuild, then start a new
        process (or build under a new name).
        """
        target_dir = _build.make_module_dir(self.base_path, self.name)
        leaf = self.cffi_name.rpartition(".")[2]
        library = _build.compile_extension(self.ffi, self.name, self.cffi_name, target_dir,
                                           self.verbose)
        _build.write_wrapper(target_dir, self.name, leaf, self._arg_names)
        return library

    # the rest of the cffi.FFI interface, as torch.utils.ffi
    def __getattr__(self, name: str) -> Any:
        ffi = self.__dict__.get("ffi")
        if ffi is None:
            raise AttributeError(name)
        return getattr(ffi, name)

    def __repr__(self) -> str:
        return f"FFIExtension({self.name!r}, module_dir={self.module_dir!r})"


def create_extension(name: str, headers: Union[str, Sequence[str]],
                     sources: Union[str, Sequence[str]], verbose: bool = True,
                     with_cuda: bool = False, package: bool = False,
                     relative_to: Union[str, os.PathLike[str]] = ".",
                     extra_compile_args: Optional[Sequence[str]] = None,
                     include_dirs: Optional[Sequence[str]] = None,
                     libraries: Optional[Sequence[str]] = None,
                     define_macros: Optional[Sequence[tuple[str, Optional[str]]]] = None,
                     **kwargs: Any) -> FFIExtension:
    """Describe a C extension built with cffi; call ``.build()`` on the result to compile it.

    Args:
        name: dotted module name, e.g. ``'_ext.my_lib'``; the built package lands at
            ``<relative_to>/_ext/my_lib/`` and imports as ``_ext.my_lib``. Each part must be an
            ASCII identifier, and the last short enough for its library's file name
            (ValueError otherwise, before anything is built).
        headers: header file(s) declaring the functions to export (C declarations cffi can
            parse; an include guard, ``#include`` and ``#pragma once`` lines are fine).
        sources: C files to compile with it.
        verbose: print the compiler commands and output.
        with_cuda: must be False: ember has no CUDA backend.
        package: build the cffi module under its fully qualified name (for a module that is
            part of an installed package).
        relative_to: a file (``__file__`` of the build script) or directory that ``headers``,
            ``sources`` and the output are relative to.
        extra_compile_args, include_dirs, libraries, define_macros, **kwargs: passed to
            ``ffi.set_source`` (setuptools ``Extension`` arguments).

    >>> ffi = create_extension('_ext.my_lib', headers=['src/my_lib.h'],
    ...                        sources=['src/my_lib.c'], relative_to=__file__)  # doctest: +SKIP
    >>> ffi.build()  # doctest: +SKIP
    """
    if with_cuda:
        raise RuntimeError("ember.utils.ffi.create_extension: with_cuda=True is not supported "
                           "because ember has no CUDA backend; build with with_cuda=False")
    # the leaf is built as the module _<leaf>; checked before anything is written or compiled
    check_extension_name(name, EXTENSION_SUFFIXES[0], dotted=True, file_prefix="_")
    import cffi
    base_path = _build.base_path_of(relative_to)
    leaf = name.rpartition(".")[2]
    cffi_name = f"{name}._{leaf}" if package else f"_{leaf}"

    headers = [headers] if isinstance(headers, str) else list(headers)
    sources = [sources] if isinstance(sources, str) else list(sources)
    header_text = ""
    for header in headers:
        path = os.path.join(base_path, header)
        try:
            with open(path) as f:
                header_text += f.read() + "\n\n"
        except OSError as exc:
            raise FileNotFoundError(f"ember.utils.ffi: cannot read header {path!r}: "
                                    f"{exc.strerror}") from None
    for src in sources:
        if not os.path.isfile(os.path.join(base_path, src)):
            raise FileNotFoundError(f"ember.utils.ffi: source file "
                                    f"{os.path.join(base_path, src)!r} does not exist")

    ffi = cffi.FFI()
    try:
        ffi.cdef(_CDEF + _build.cdef_text(header_text))
    except cffi.CDefError as exc:
        raise FFIBuildError(f"ember.utils.ffi: cannot parse the declarations in "
                            f"{', '.join(headers)} (cffi accepts plain C declarations, "
                            f"#define NAME value and no other preprocessor lines): "
                            f"{exc}") from None
    ffi.set_source(cffi_name, "#include <ember/ffi/EmberTensor.h>\n" + header_text,
                   sources=[os.path.join(base_path, s) for s in sources],
                   include_dirs=[INCLUDE_DIR] + list(include_dirs or []),
                   extra_compile_args=list(extra_compile_args or []),
                   libraries=list(libraries or []),
                   define_macros=list(define_macros or []), **kwargs)
    return FFIExtension(ffi, name, cffi_name, base_path, _build.parameter_names(header_text),
                        verbose)
