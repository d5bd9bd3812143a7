"""examples/extensions/muladd (extension-cpp's layout) imported once per process, for tests.

The package registers the namespace ``extension_cpp`` with ember, which a process can do only
once, so every test that needs it shares this import. Its library is built into a private
cache directory (removed at exit), never the user's.
"""
import atexit
import importlib.util
import os
import shutil
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "extensions", "muladd", "extension_cpp")
SOURCE = os.path.join(EXAMPLE, "csrc", "muladd.cpp")
OPS = os.path.join(EXAMPLE, "ops.py")


def import_example():
    """The example's ``extension_cpp`` package (built and imported on the first call)."""
    module = sys.modules.get("extension_cpp")
    if module is not None and getattr(module, "__file__", "").startswith(EXAMPLE):
        return module
    cache = tempfile.mkdtemp(prefix="ember-extension-cpp-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    previous = os.environ.get("EMBER_EXTENSIONS_DIR")
    os.environ["EMBER_EXTENSIONS_DIR"] = cache
    try:
        spec = importlib.util.spec_from_file_location(
            "extension_cpp", os.path.join(EXAMPLE, "__init__.py"),
            submodule_search_locations=[EXAMPLE])
        module = importlib.util.module_from_spec(spec)
        sys.modules["extension_cpp"] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules["extension_cpp"]
            raise
    finally:
        if previous is None:
            del os.environ["EMBER_EXTENSIONS_DIR"]
        else:
            os.environ["EMBER_EXTENSIONS_DIR"] = previous
    return module
