"""Build the C extension: ``python build.py`` writes the importable package ``_ext/my_lib/``.

The extension-ffi example with ember's type names (``THFloatTensor`` -> ``EmberFloatTensor``).
ember has no CUDA backend, so the original's ``if torch.cuda.is_available(): ...`` branch
(``src/my_lib_cuda.c``, ``with_cuda=True``) is left out.
"""
from ember.utils.ffi import create_extension

sources = ['src/my_lib.c']
headers = ['src/my_lib.h']
defines = []
with_cuda = False

ffi = create_extension(
    '_ext.my_lib',
    headers=headers,
    sources=sources,
    define_macros=defines,
    relative_to=__file__,
    with_cuda=with_cuda
)

if __name__ == '__main__':
    ffi.build()
