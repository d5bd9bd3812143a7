"""Build ahead of time: ``python setup.py build_ext --inplace`` (or ``pip install .``).

The extension is compiled once, at install time, by setuptools with ember's CppExtension and
BuildExtension; importing the package then needs no compiler.
"""
from setuptools import setup

from ember.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="ember_aot_example",
    version="0.1.0",
    packages=["ember_aot_example"],
    ext_modules=[CppExtension("ember_aot_example._C", ["ember_aot_example/csrc/axpby.cpp"])],
    cmdclass={"build_ext": BuildExtension},
)
