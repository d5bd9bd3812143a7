"""Finding the C++ compiler, building the command, running it, and readable build errors."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import threading
from concurrent.futures import ThreadPoolExecutor

_HERE = os.path.dirname(os.path.abspath(__file__))
EMBER_INCLUDE = os.path.normpath(os.path.join(_HERE, "..", "..", "include"))

MAX_ERRORS = 3          # compiler errors quoted in an ExtensionBuildError
MAX_SNIPPET_LINES = 6   # source/caret lines kept under each quoted error


class ExtensionBuildError(RuntimeError):
    """A C++ extension failed to build.

    The message shows the compiler command and the compiler's first errors
    (``file:line:col: error: ...``); ``.command``, ``.output`` (everything the compiler
    printed), ``.returncode`` and ``.log_path`` (where that output is saved) are attributes.
    """

    def __init__(self, message, command=None, output="", returncode=None, log_path=None):
        super().__init__(message)
        self.command = command
        self.output = output
        self.returncode = returncode
        self.log_path = log_path


def find_compiler():
    """The C++ compiler command as a list (``$CXX`` if set, else c++, g++ or clang++), or None."""
    cxx = os.environ.get("CXX")
    if cxx:
        cmd = shlex.split(cxx)
        if cmd and shutil.which(cmd[0]):
            return cmd
        return None
    for candidate in ("c++", "g++", "clang++"):
        if shutil.which(candidate):
            return [candidate]
    return None


def compiler_fingerprint(cmd):
    """Identify the compiler without running it: resolved path, mtime and size (and $CXX's
    words)."""
    path = shutil.which(cmd[0])
    real = os.path.realpath(path)
    st = os.stat(real)
    return f"{' '.join(cmd)}|{path}|{real}|{st.st_mtime_ns}|{st.st_size}"


def compiler_version(cmd):
    """The compiler's first ``--version`` line (runs it; for diagnostics, not the cache key)."""
    try:
        out = subprocess.run(cmd + ["--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else None


def python_include_dirs():
    paths = sysconfig.get_paths()
    dirs = [paths["include"]]
    if paths.get("platinclude") and paths["platinclude"] not in dirs:
        dirs.append(paths["platinclude"])
    return dirs


def default_include_dirs():
    """ember's headers, pybind11's headers (``<torch/extension.h>`` too)."""
    import pybind11
    return [EMBER_INCLUDE, pybind11.get_include()]


def base_cflags(name):
    flags = ["-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-fdiagnostics-color=never",
             f"-DEMBER_EXTENSION_NAME={name}", f"-DTORCH_EXTENSION_NAME={name}"]
    return flags


def base_ldflags():
    flags = ["-shared"]
    if sys.platform == "darwin":
        flags += ["-undefined", "dynamic_lookup"]
    return flags


def _run(cmd, verbose, cwd):
    """Run cmd, returning (returncode, output); with verbose, stream the output as it comes."""
    if verbose:
        print(shlex.join(cmd), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd,
                            text=True, errors="replace")
    chunks = []
    for line in proc.stdout:
        chunks.append(line)
        if verbose:
            sys.stdout.write(line)
            sys.stdout.flush()
    proc.stdout.close()
    return proc.wait(), "".join(chunks)


def build_shared_library(cxx, sources, output, *, name, include_dirs, extra_cflags,
                         extra_ldflags, work_dir, verbose=False, log_path=None, cuda=None,
                         extra_cuda_cflags=()):
    """Compile ``sources`` into the shared library ``output``; raise ExtensionBuildError on failure.

    Each source is compiled (in parallel) to an object file in ``work_dir``, then they are
    linked with the link flags only: the compile flags at the link step would let GCC (before
    13) add crtfastmath.o for ``-ffast-math``/``-Ofast``, whose constructor turns on
    flush-to-zero and denormals-are-zero for the process that loads the library (PyTorch's
    builds link without them too). Returns every file the compiler read (sources and the
    headers it included, however it found them: ``-I``, ``-isystem``, ``-include``, ...) as
    reported by the compiler itself (``-MD``), in absolute paths.

    With ``cuda`` (a ``_cuda.CudaToolkit``), ``.cu`` sources are compiled by its nvcc (with
    ``extra_cuda_cflags``), every source sees its headers, and the CUDA runtime is linked.
    """
    if cuda is not None:
        include_dirs = list(include_dirs) + [cuda.include]
    incs = [f"-I{d}" for d in include_dirs]
    cflags = base_cflags(name) + incs + list(extra_cflags)
    dep_files = []

    def dependency_flags(i):
        # after the user's flags, so that a -MF of theirs cannot take the file we read back
        dep_files.append(os.path.join(work_dir, f"{i}.d"))
        return ["-MD", "-MF", dep_files[-1]]
    ldflags = base_ldflags() + list(extra_ldflags) + (cuda.link_flags() if cuda else [])
    log = []

    def run(cmd):
        rc, out = _run(cmd, verbose, work_dir)
        with _log_lock:
            log.append(f"$ {shlex.join(cmd)}\n{out}")
        return rc, out

    def fail(cmd, rc, out):
        _write_log(log_path, log)
        raise ExtensionBuildError(format_build_error(name, cmd, rc, out, log_path), command=cmd,
                                  output=out, returncode=rc, log_path=log_path)

    objects, cmds = [], []
    for i, src in enumerate(sources):
        obj = os.path.join(work_dir, f"{i}_{os.path.splitext(os.path.basename(src))[0]}.o")
        objects.append(obj)
        if src.endswith(".cu"):
            cmds.append(cuda.nvcc + cuda.compile_flags(name, include_dirs, extra_cuda_cflags)
                        + dependency_flags(i) + ["-c", src, "-o", obj])
        else:
            cmds.append(cxx + cflags + dependency_flags(i) + ["-c", src, "-o", obj])
    if len(cmds) == 1:
        results = [run(cmds[0])]
    else:
        with ThreadPoolExecutor(max_workers=max(1, min(len(cmds), os.cpu_count() or 1))) as pool:
            results = list(pool.map(run, cmds))
    for cmd, (rc, out) in zip(cmds, results):
        if rc != 0:
            fail(cmd, rc, out)
    cmd = cxx + objects + ["-o", output] + ldflags
    rc, out = run(cmd)
    if rc != 0:
        fail(cmd, rc, out)
    _write_log(log_path, log)
    deps = set()
    for path in dep_files:
        try:
            deps.update(read_dependency_file(path, work_dir))
        except OSError as e:
            raise ExtensionBuildError(
                f"Error building extension '{name}': the compiler wrote no dependency file "
                f"({path}: {e.strerror}); ember needs one (-MD -MF, as gcc and clang write) to "
                "know which headers the build read", log_path=log_path) from None
    return sorted(deps)


def read_dependency_file(path, cwd):
    """The prerequisites listed in a make-style dependency file (``-MD`` output), absolute.

    The compiler escapes a space in a path as ``\\ ``, ``#`` as ``\\#`` and ``$`` as ``$$``,
    and continues long lines with a backslash; relative paths are relative to the directory it
    ran in. Phony targets (``-MP``) are skipped. Raises OSError when the file cannot be read.
    """
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read().replace("$$", "$")
    words, word, i = [], [], 0
    while i < len(text):
        ch, nxt = text[i], text[i + 1:i + 2]
        if ch == "\\" and nxt == "\n":  # a line continuation: a separator
            ch, i = " ", i + 1
        elif ch == "\\" and nxt in (" ", "#"):  # an escaped character of a path
            word.append(nxt)
            i += 2
            continue
        if ch.isspace():
            if word:
                words.append("".join(word))
                word = []
        else:
            word.append(ch)
        i += 1
    if word:
        words.append("".join(word))
    # "target: prerequisite ...": targets are the words ending in ':'
    prerequisites, after_target = [], False
    for w in words:
        if w.endswith(":"):
            after_target = True
        elif after_target:
            prerequisites.append(os.path.join(cwd, w))
    return prerequisites


_log_lock = threading.Lock()


def _write_log(path, log):
    if path:
        try:
            with open(path, "w") as f:
                f.write("\n".join(log))
        except OSError:
            pass


_DIAG = re.compile(r"^(?P<loc>\S.*?:\d+(?::\d+)?): (?P<kind>fatal error|error|warning|note)"
                   r"(?: ?\[[^\]]*\])?: ")
_CONTEXT = re.compile(r"^\S.*: (In (member |static |constructor |destructor )?function"
                      r"|In instantiation of|In lambda function)")
_SNIPPET = re.compile(r"^(\s+\d+ \||\s+\||\s)")


def summarize_errors(output, max_errors=MAX_ERRORS):
    """(the first compiler errors with their source lines, how many errors there were)."""
    lines = output.splitlines()
    error_at = [i for i, ln in enumerate(lines)
                if (m := _DIAG.match(ln)) and m.group("kind") in ("error", "fatal error")]
    if not error_at:
        # linker errors and the like: keep the lines that say what went wrong
        keep = [ln for ln in lines if re.search(r"error|undefined reference|not found|cannot",
                                               ln, re.IGNORECASE)]
        return (keep[:15] or lines[-20:]), len(keep)
    out = []
    for i in error_at[:max_errors]:
        if i > 0 and _CONTEXT.match(lines[i - 1]) and lines[i - 1] not in out:
            out.append(lines[i - 1])
        out.append(lines[i])
        for ln in lines[i + 1:i + 1 + MAX_SNIPPET_LINES]:
            if not _SNIPPET.match(ln) or _DIAG.match(ln):
                break
            out.append(ln)
    return out, len(error_at)


def format_build_error(name, cmd, returncode, output, log_path):
    """The ExtensionBuildError message: command, then the compiler's first errors."""
    shown, total = summarize_errors(output)
    how = (f"killed by signal {-returncode}" if returncode is not None and returncode < 0
           else f"exit status {returncode}")
    msg = [f"Error building extension '{name}': the compiler failed ({how}).",
           "Command:", "  " + shlex.join(cmd)]
    n_shown = sum(1 for ln in shown if (m := _DIAG.match(ln)) and "error" in m.group("kind"))
    parts = []
    if total > n_shown > 0:
        parts.append(f"first {n_shown} of {total} errors")
    elif len(shown) < len(output.splitlines()):
        parts.append("trimmed")
    if log_path:
        parts.append(f"full log: {log_path}")
    msg.append("Compiler output" + (f" ({'; '.join(parts)})" if parts else "") + ":")
    msg += shown if shown else ["  (no output)"]
    return "\n".join(msg)
