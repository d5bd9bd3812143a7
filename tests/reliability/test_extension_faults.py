"""ember.utils.cpp_extension (and utils.ffi) under faults: headers edited between loads, bad
extension names, libraries that build but do not import.

The extensions here use Python's C API directly (no pybind11), so each build takes a fraction of
a second. A $CXX wrapper logs every compiler invocation, telling a cache hit from a rebuild.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

from ember.utils.cpp_extension import load

REAL_CXX = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
pytestmark = pytest.mark.skipif(REAL_CXX is None,
                                reason="no C++ compiler found (looked for g++, c++, clang++)")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAST = ["-O0", "-g0"]

LOGGING_CXX = """#!/bin/sh
echo "$*" >> "{log}"
exec "{cxx}" "$@"
"""

# a module with one int attribute, `value`, computed from what the headers define
MODULE_TEMPLATE = r"""
#include <Python.h>
%(includes)s
#define EXT_CAT2(a, b) a##b
#define EXT_CAT(a, b) EXT_CAT2(a, b)
#define EXT_STR2(x) #x
#define EXT_STR(x) EXT_STR2(x)
static struct PyModuleDef ext_def = {PyModuleDef_HEAD_INIT, EXT_STR(EMBER_EXTENSION_NAME),
                                     NULL, -1, NULL};
PyMODINIT_FUNC EXT_CAT(PyInit_, EMBER_EXTENSION_NAME)(void) {
  PyObject* m = PyModule_Create(&ext_def);
  if (m != NULL && PyModule_AddIntConstant(m, "value", %(value)s) != 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A private extension cache and a logging $CXX for the whole module."""
    d = tmp_path_factory.mktemp("extfaults")
    log = d / "cxx.log"
    log.write_text("")
    wrapper = d / "cxx-wrapper"
    wrapper.write_text(LOGGING_CXX.format(log=log, cxx=REAL_CXX))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EMBER_EXTENSIONS_DIR", str(d / "cache"))
        mp.setenv("CXX", str(wrapper))
        yield type("Env", (), {"dir": d, "log": log, "cache": d / "cache"})


def _compiles(env, name):
    """How many times the compiler ran for extension ``name``."""
    return sum(f"-DEMBER_EXTENSION_NAME={name} " in line
               for line in env.log.read_text().splitlines())


def _define(path, macro, value):
    path.write_text(f"#pragma once\n#define {macro} {value}\n")


# ---- headers found through -I, -isystem and extra_include_paths --------------------------------

def test_edited_headers_rebuild_wherever_the_compiler_found_them(env, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    system = tmp_path / "sys dir #1"  # a space and a '#': escaped in the dependency file
    listed = tmp_path / "listed"
    for d in (first, second, system, listed):
        d.mkdir()
    _define(first / "myhdr.h", "A", 1)
    _define(second / "myhdr.h", "A", 9)  # shadowed by first/ until that one is deleted
    (system / "outer.h").write_text("#pragma once\n#include <inner.h>\n")
    _define(system / "inner.h", "B", 2)
    _define(listed / "listed.h", "C", 3)
    src = tmp_path / "headers.cpp"
    src.write_text(MODULE_TEMPLATE % {
        "includes": '#include "myhdr.h"\n#include <outer.h>\n#include <listed.h>',
        "value": "A * 100 + B * 10 + C"})
    name = "ember_rel_headers"
    args = dict(extra_cflags=FAST + [f"-I{first}", f"-I{second}", "-isystem", str(system)],
                extra_include_paths=[str(listed)])

    def value():
        return load(name, [str(src)], **args).value

    assert value() == 123 and _compiles(env, name) == 1
    assert value() == 123 and _compiles(env, name) == 1  # unchanged: cached

    # a new process loads the unchanged extension without running the compiler
    script = textwrap.dedent(f"""
        from ember.utils.cpp_extension import load
        print(load({name!r}, [{str(src)!r}], **{args!r}).value)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, PYTHONPATH=REPO))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["123"] and _compiles(env, name) == 1

    _define(first / "myhdr.h", "A", 4)  # found through -I in extra_cflags
    assert value() == 423 and _compiles(env, name) == 2
    _define(system / "inner.h", "B", 5)  # included by a header found through -isystem
    assert value() == 453 and _compiles(env, name) == 3
    _define(listed / "listed.h", "C", 6)  # found through extra_include_paths
    assert value() == 456 and _compiles(env, name) == 4
    (first / "myhdr.h").unlink()  # a header read by the last build is gone: second/ is used
    assert value() == 956 and _compiles(env, name) == 5
    assert value() == 956 and _compiles(env, name) == 5


def test_header_of_the_second_of_two_sources_is_tracked(env, tmp_path):
    # several sources compile one by one: each compile's dependency list counts
    (tmp_path / "inc").mkdir()
    _define(tmp_path / "inc" / "part.h", "PART", 5)
    main = tmp_path / "main.cpp"
    main.write_text('extern "C" int part(void);\n'
                    + MODULE_TEMPLATE % {"includes": "", "value": "part()"})
    second = tmp_path / "part.cpp"
    second.write_text('#include <part.h>\nextern "C" int part(void) { return PART; }\n')
    name = "ember_rel_two_sources"
    args = dict(extra_cflags=FAST + [f"-I{tmp_path / 'inc'}"])
    assert load(name, [str(main), str(second)], **args).value == 5
    n = _compiles(env, name)
    assert load(name, [str(main), str(second)], **args).value == 5
    assert _compiles(env, name) == n
    _define(tmp_path / "inc" / "part.h", "PART", 8)
    assert load(name, [str(main), str(second)], **args).value == 8
    assert _compiles(env, name) > n


# ---- extension names ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad, problem", [
    ("my-ext", "not an ASCII Python identifier"),
    ("ünï", "not an ASCII Python identifier"),
    ("1abc", "not an ASCII Python identifier"),
    ("", "not an ASCII Python identifier"),
    ("a" * 201, r"too long \(201 characters; the name can have at most 200\)"),
    ("a" * 300, r"too long \(300 characters; the name can have at most 200\).*255-byte file"),
], ids=["dash", "non-ascii", "digit-first", "empty", "201-chars", "300-chars"])
def test_bad_names_are_refused_before_compiling(env, tmp_path, monkeypatch, bad, problem):
    src = tmp_path / "ext.cpp"
    src.write_text(MODULE_TEMPLATE % {"includes": "", "value": "1"})
    cache, build_dir = tmp_path / "cache", tmp_path / "build"
    monkeypatch.setenv("EMBER_EXTENSIONS_DIR", str(cache))
    before = env.log.read_text()
    with pytest.raises(ValueError, match=f"^extension name .*{problem}"):
        load(bad, [str(src)], extra_cflags=FAST)
    with pytest.raises(ValueError, match=f"^extension name .*{problem}"):
        load(bad, [str(src)], extra_cflags=FAST, build_directory=str(build_dir))
    assert env.log.read_text() == before  # no compiler ran
    assert not cache.exists() and not build_dir.exists()  # and nothing was cached


def test_bad_ffi_names_are_refused_before_building(tmp_path):
    pytest.importorskip("cffi")
    from ember.utils.ffi import create_extension
    (tmp_path / "lib.h").write_text("int one(void);\n")
    (tmp_path / "lib.c").write_text("int one(void) { return 1; }\n")
    for bad in ["_ext.ünï", "_ext.my-lib", "_ext." + "a" * 240, "a" * 300 + ".lib"]:
        with pytest.raises(ValueError, match="^extension name "):
            create_extension(bad, headers=["lib.h"], sources=["lib.c"], relative_to=tmp_path,
                             verbose=False)
    assert sorted(os.listdir(tmp_path)) == ["lib.c", "lib.h"]


def test_longest_name_and_keyword_names_load(env, tmp_path):
    # PyTorch loads an extension named after a Python keyword; 200 characters is the longest
    # name Python's loader finds PyInit_<name> for
    src = tmp_path / "ext.cpp"
    src.write_text(MODULE_TEMPLATE % {"includes": "", "value": "7"})
    for name in ["class", "b" * 200]:
        assert load(name, [str(src)], extra_cflags=FAST).value == 7


# ---- a library that builds but does not import -------------------------------------------------

def test_library_that_fails_to_import_is_not_cached(env, tmp_path):
    src = tmp_path / "unlinked.cpp"
    src.write_text('extern "C" int defined_nowhere(void);\n'
                   + MODULE_TEMPLATE % {"includes": "", "value": "defined_nowhere()"})
    name = "ember_rel_unlinked"
    for attempt in (1, 2):
        with pytest.raises(ImportError, match="defined_nowhere"):
            load(name, [str(src)], extra_cflags=FAST)
        # the second load builds again instead of reusing a library known not to import
        assert _compiles(env, name) == attempt
        assert not [p for p in (env.cache / name).rglob("*") if p.suffix == ".so"]
    state = json.loads(next((env.cache / name).rglob("dependencies.json")).read_text())
    assert any(p.endswith("Python.h") for p in state)  # headers recorded for the next load
