"""python -m ember.utils.collect_env: the fields of the report and its exit status."""
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(**env):
    full = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    full.update(env)
    r = subprocess.run([sys.executable, "-m", "ember.utils.collect_env"], env=full,
                       capture_output=True, text=True, timeout=120)
    fields = dict(line.split(": ", 1) for line in r.stdout.splitlines() if ": " in line)
    return r, fields


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    cache = tmp_path_factory.mktemp("ext_cache")
    return _run(EMBER_EXTENSIONS_DIR=str(cache)), str(cache)


def test_runs_and_prints_every_field(report):
    (r, fields), cache = report
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Collecting environment information...\n")
    for name in ("ember version", "PyTorch version (oracle)", "Python version",
                 "Python platform", "OS", "NumPy version", "NumPy BLAS", "NumPy LAPACK",
                 "C compiler", "C++ compiler", "pybind11 version", "cffi version",
                 "Extension cache directory"):
        assert name in fields, name
    assert len(r.stdout.splitlines()) < 20  # short: no pages of NumPy configuration
    assert fields["Python version"].startswith(
        f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}")
    assert fields["NumPy version"] == np.__version__
    assert fields["ember version"] == "0.1.0"


def test_versions_match_the_installed_packages(report):
    (_, fields), _ = report
    import cffi
    import pybind11
    assert fields["cffi version"] == cffi.__version__
    assert fields["pybind11 version"] == pybind11.__version__
    try:
        torch_version = version("torch")
    except PackageNotFoundError:
        torch_version = "not installed"
    assert fields["PyTorch version (oracle)"] == torch_version


def test_blas_is_described(report):
    (_, fields), _ = report
    blas = fields["NumPy BLAS"]
    assert blas and blas != "could not collect"
    config = np.show_config(mode="dicts") if np.lib.NumpyVersion(np.__version__) >= "1.25.0" \
        else None
    if config is not None:
        assert config["Build Dependencies"]["blas"]["name"] in blas


def test_compilers_and_cache_dir(report):
    (_, fields), cache = report
    assert fields["Extension cache directory"].startswith(cache + " (EMBER_EXTENSIONS_DIR")
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc on this machine")
    for name in ("C compiler", "C++ compiler"):
        value = fields[name]
        assert re.match(r"/\S+: .*\d+\.\d+", value), value  # path: first --version line


def test_missing_compiler_and_default_cache(tmp_path):
    env = {"CC": str(tmp_path / "no-such-cc"), "CXX": "no-such-c++-compiler",
           "EMBER_EXTENSIONS_DIR": "", "XDG_CACHE_HOME": str(tmp_path)}
    r, fields = _run(**env)
    assert r.returncode == 0, r.stderr
    assert fields["C compiler"] == f"not found ({tmp_path / 'no-such-cc'})"
    assert fields["C++ compiler"] == "not found (no-such-c++-compiler)"
    assert fields["Extension cache directory"] == \
        f"{tmp_path / 'ember_extensions'} (default, not created yet)"


def test_get_env_info_in_process():
    from ember.utils.collect_env import get_env_info, get_pretty_env_info
    info = get_env_info()
    assert info["numpy_version"] == np.__version__
    text = get_pretty_env_info()
    assert f"NumPy version: {np.__version__}" in text.splitlines()
    import ember
    from ember.backend import parallel
    assert info["ember_threads"] == ember.get_num_threads()
    assert info["numpy_blas_threads"] == parallel.blas_threads()
    assert info["pool_helpers"] == ("native" if parallel._native is not None
                                    else "not built (Python locks)")
    assert any(line.startswith(f"ember threads: {ember.get_num_threads()} (pool helpers: ")
               for line in text.splitlines())
