"""``python -m ember.utils.collect_env``: what to paste into a bug report.

Prints the ember, Python, OS and NumPy (with its BLAS) versions, ember's threading (its pool
size, whether its native pool helpers were built, NumPy's BLAS threads), what importing ember
changed in the process (ember/backend/process.py), the C and C++ compilers
that native extensions would use (or that none was found), the pybind11 and cffi versions,
the extension cache directory, and PyTorch's version when it is installed (the test oracle).

>>> from ember.utils.collect_env import get_env_info
>>> info = get_env_info()
>>> info["numpy_version"] == __import__("numpy").__version__
True
"""
import os
import platform
import shlex
import shutil
import subprocess
import sys
import sysconfig

from ..backend import parallel, process

__all__ = ["get_env_info", "get_pretty_env_info", "main"]

NOT_FOUND = "not found"


def _dist_version(name):
    """A distribution's version from its metadata (imports nothing), or None."""
    try:
        from importlib.metadata import PackageNotFoundError, version
        return version(name)
    except PackageNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - broken metadata is reported as unknown
        return None


def _module_version(name):
    try:
        module = __import__(name)
    except Exception:  # noqa: BLE001 - absent or broken: report it, do not crash
        return _dist_version(name)
    return getattr(module, "__version__", None) or _dist_version(name)


def _os_name():
    system = platform.system()
    if system == "Linux":
        try:
            with open("/etc/os-release") as f:
                fields = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
            name = fields.get("PRETTY_NAME", "").strip('"')
        except OSError:
            name = ""
        return f"{name or 'Linux'} ({platform.machine()})"
    if system == "Darwin":
        return f"macOS {platform.mac_ver()[0]} ({platform.machine()})"
    if system == "Windows":
        return f"Windows {platform.release()} {platform.version()} ({platform.machine()})"
    return f"{system} {platform.release()} ({platform.machine()})"


def _numpy_info():
    """(version, BLAS description, LAPACK description) from NumPy's build configuration."""
    try:
        import numpy as np
    except Exception:  # noqa: BLE001
        return None, None, None
    blas = lapack = None
    try:
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):  # old NumPy prints even with mode=
            config = np.show_config(mode="dicts")
        deps = config.get("Build Dependencies", {})
        blas, lapack = _describe_lib(deps.get("blas")), _describe_lib(deps.get("lapack"))
    except Exception:  # noqa: BLE001 - NumPy < 1.25: the old np.__config__ dictionaries
        blas, lapack = _old_numpy_lib("blas"), _old_numpy_lib("lapack")
    return np.__version__, blas, lapack


def _describe_lib(entry):
    if not entry:
        return None
    if entry.get("found") in (False, "false", "False"):
        return NOT_FOUND
    text = " ".join(str(entry[k]) for k in ("name", "version") if entry.get(k))
    extra = " ".join(str(entry.get("openblas configuration") or "").split())
    extra = extra.replace(f"OpenBLAS {entry.get('version')}", "").strip()
    if extra:
        text += f" ({extra})"
    return text or None


def _old_numpy_lib(kind):
    try:
        import numpy as np
        cfg = np.__config__
        for attr in (f"{kind}_opt_info", f"{kind}_ilp64_opt_info", "openblas_info"):
            info = getattr(cfg, attr, None)
            if info:
                libs = info.get("libraries") or []
                return ", ".join(libs) or attr
    except Exception:  # noqa: BLE001
        pass
    return None


def _c_compiler_command():
    """The C compiler cffi/setuptools would use: ``$CC``, else Python's configured CC."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shlex.split(cc)[:1] or ["cc"], "CC" in os.environ


def _cxx_compiler_command():
    """The C++ compiler ember.utils.cpp_extension uses: ``$CXX``, else c++, g++ or clang++."""
    if os.environ.get("CXX"):
        return shlex.split(os.environ["CXX"])[:1], True
    for candidate in ("c++", "g++", "clang++"):
        if shutil.which(candidate):
            return [candidate], False
    return ["c++"], False


def _compiler(cmd):
    """``path: first line of --version``, or 'not found (<name>)'."""
    path = shutil.which(cmd[0]) if cmd else None
    if not path:
        return f"{NOT_FOUND} ({cmd[0] if cmd else 'none'})"
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        lines = (out.stdout or out.stderr).strip().splitlines()
        version = lines[0] if lines else "version unknown"
    except (OSError, subprocess.SubprocessError) as exc:
        version = f"does not run: {exc}"
    return f"{path}: {version}"


def _extensions_dir():
    """The cpp_extension cache directory (its own answer when it can be imported)."""
    try:
        from .cpp_extension import get_default_build_root
        return get_default_build_root()
    except Exception:  # noqa: BLE001 - same rule as cpp_extension, stated here
        env = os.environ.get("EMBER_EXTENSIONS_DIR")
        if env:
            return os.path.abspath(os.path.expanduser(env))
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".cache")
        return os.path.join(base, "ember_extensions")


def _threads_info():
    """ember's pool threads, whether its native helpers are built, NumPy's BLAS threads."""
    blas = parallel.blas_threads()
    return {"ember_threads": parallel.get_num_threads(),
            "pool_helpers": "native" if parallel._native is not None
                            else "not built (Python locks)",
            "numpy_blas_threads": None if blas is None else blas,
            "process_tuning": _process_tuning()}


def _process_tuning():
    """What importing ember changed in this process (ember/backend/process.py), e.g.
    ``blas_threads, fork_hook, malloc_priming, warnings_filter``; ``none`` if nothing."""
    on = [name for name, took in process.applied().items() if took]
    return ", ".join(on) if on else "none"


def get_env_info():
    """The environment as a dict (strings, ints; None where a value could not be collected)."""
    import ember
    numpy_version, blas, lapack = _numpy_info()
    ext_dir = _extensions_dir()
    return {
        "ember_version": getattr(ember, "__version__", None) or _dist_version("ember"),
        "torch_version": _dist_version("torch"),
        "python_version": f"{sys.version.replace(chr(10), ' ')} "
                          f"({sys.maxsize.bit_length() + 1}-bit runtime)",
        "python_platform": platform.platform(),
        "os": _os_name(),
        "numpy_version": numpy_version,
        "numpy_blas": blas,
        "numpy_lapack": lapack,
        **_threads_info(),
        "c_compiler": _compiler(_c_compiler_command()[0]),
        "cxx_compiler": _compiler(_cxx_compiler_command()[0]),
        "pybind11_version": _module_version("pybind11"),
        "cffi_version": _module_version("cffi"),
        "extensions_dir": ext_dir,
        "extensions_dir_source": ("EMBER_EXTENSIONS_DIR" if os.environ.get("EMBER_EXTENSIONS_DIR")
                                  else "default"),
        "extensions_dir_exists": os.path.isdir(ext_dir),
    }


def get_pretty_env_info():
    """The report ``python -m ember.utils.collect_env`` prints."""
    info = get_env_info()

    def show(value, missing="could not collect"):
        return missing if value is None else value

    cache = (f"{info['extensions_dir']} ({info['extensions_dir_source']}"
             f"{'' if info['extensions_dir_exists'] else ', not created yet'})")
    rows = [
        ("ember version", show(info["ember_version"])),
        ("PyTorch version (oracle)", show(info["torch_version"], "not installed")),
        ("Python version", info["python_version"]),
        ("Python platform", info["python_platform"]),
        ("OS", info["os"]),
        ("NumPy version", show(info["numpy_version"], "not installed")),
        ("NumPy BLAS", show(info["numpy_blas"])),
        ("NumPy LAPACK", show(info["numpy_lapack"])),
        ("ember threads", f"{info['ember_threads']} (pool helpers: {info['pool_helpers']}; "
                          f"NumPy BLAS threads: {show(info['numpy_blas_threads'], 'unknown')})"),
        ("Process changes on import", f"{info['process_tuning']} "
                                      "(EMBER_PROCESS_TUNING picks them)"),
        ("C compiler", info["c_compiler"]),
        ("C++ compiler", info["cxx_compiler"]),
        ("pybind11 version", show(info["pybind11_version"], "not installed")),
        ("cffi version", show(info["cffi_version"], "not installed")),
        ("Extension cache directory", cache),
    ]
    return "\n".join(f"{name}: {value}" for name, value in rows)


def main():
    """Print the report."""
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
