"""The extension cache: where builds live, their keys, the build lock, atomic install.

Layout (``root`` is ``$EMBER_EXTENSIONS_DIR`` or ``~/.cache/ember_extensions``)::

    root/<name>/<key>/                        one per source key (sources, flags, compiler, ...)
    root/<name>/<key>/dependencies.json       the files the last build of <key> read (headers)
    root/<name>/<key>/<deps>/<name><SUFFIX>   the module built from the dependencies' contents
                                              <deps>; it exists only when complete
    root/<name>/<key>/main.cpp                load_inline's source; build.log: the last build's log
    root/<name>/<key>.lock                    flock'ed while one process builds that key
    root/<name>/.build-<key>-<pid>-*/         a build in progress (removed afterwards)

The source key covers what is known before compiling; which headers a build reads is known only
after it (the compiler lists them, however it found them), so the second level is keyed by the
contents of the files the previous build read: editing, adding or removing a header it read
changes that key and so triggers a rebuild, while an unchanged extension is found without running
the compiler. A build writes into its own temporary directory and moves the finished library into
place with ``os.replace``, so a library that exists is complete; a failed or killed build leaves
at most a temporary directory, which the next build of that key removes. The lock is an
``fcntl.flock``: the kernel drops it when its holder exits, however it exits, so a leftover lock
file never blocks anyone.
"""
import errno
import hashlib
import json
import os
import shutil
import sys
import sysconfig
import time

LOCK_TIMEOUT = 600.0  # seconds; $EMBER_EXTENSIONS_LOCK_TIMEOUT overrides


def extensions_root():
    """The per-user cache directory for built extensions."""
    env = os.environ.get("EMBER_EXTENSIONS_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember_extensions")


_tree_digests = {}


def tree_digest(root, suffixes=(".h", ".hpp")):
    """sha256 of every header under root (names and contents); computed once per process."""
    if root not in _tree_digests:
        h = hashlib.sha256()
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for fn in sorted(filenames):
                if fn.endswith(suffixes):
                    path = os.path.join(dirpath, fn)
                    h.update(os.path.relpath(path, root).encode() + b"\0")
                    with open(path, "rb") as f:
                        h.update(f.read() + b"\0")
        _tree_digests[root] = h.hexdigest()
    return _tree_digests[root]


def python_abi():
    return "|".join([sys.implementation.cache_tag or "",
                     sysconfig.get_config_var("EXT_SUFFIX") or "",
                     sys.version, sys.platform])


def cache_key(parts):
    """sha256 over a list of (label, str-or-bytes) parts."""
    h = hashlib.sha256()
    for label, value in parts:
        if isinstance(value, str):
            value = value.encode()
        h.update(label.encode() + b"\0" + len(value).to_bytes(8, "little") + value)
    return h.hexdigest()


class BuildLock:
    """An exclusive ``flock`` on ``path``, waited for up to ``timeout`` seconds.

    Raises TimeoutError naming the lock file (and the pid recorded by its holder).
    """

    def __init__(self, path, timeout=None):
        self.path = path
        if timeout is None:
            timeout = float(os.environ.get("EMBER_EXTENSIONS_LOCK_TIMEOUT", LOCK_TIMEOUT))
        self.timeout = timeout
        self.fd = None

    def __enter__(self):
        import fcntl
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        delay = 0.01
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    os.close(fd)
                    raise
            if time.monotonic() >= deadline:
                holder = ""
                try:
                    with open(self.path) as f:
                        pid = f.read().strip()
                    if pid:
                        holder = f" (held by process {pid})"
                except OSError:
                    pass
                os.close(fd)
                raise TimeoutError(
                    f"timed out after {self.timeout:g} s waiting for the build lock {self.path}"
                    f"{holder}: another process is building the same extension. Wait for it, "
                    "or stop it; the lock is released automatically when that process exits "
                    "(set EMBER_EXTENSIONS_LOCK_TIMEOUT to wait longer).")
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self.fd = fd
        return self

    def __exit__(self, *exc):
        import fcntl
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            pass
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None


def remove_stale_builds(parent, key):
    """Delete temporary build dirs of ``key`` left by killed builds (call with the lock held)."""
    prefix = f".build-{key}-"
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for n in names:
        if n.startswith(prefix):
            shutil.rmtree(os.path.join(parent, n), ignore_errors=True)


DEPENDENCIES_FILE = "dependencies.json"


def dependency_digest(paths):
    """sha256 over the files' names and contents (a missing file counts as missing)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(path.encode("utf-8", "surrogateescape") + b"\0")
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            h.update(b"\1missing\0")
            continue
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def library_path(key_dir, dependencies, filename):
    """Where the module built from key_dir's sources with these dependencies, as they are now,
    lives."""
    return os.path.join(key_dir, dependency_digest(dependencies)[:32], filename)


def recorded_dependencies(key_dir):
    """The files the last build in key_dir read, or None when there is no (readable) record."""
    try:
        with open(os.path.join(key_dir, DEPENDENCIES_FILE), encoding="utf-8",
                  errors="surrogateescape") as f:
            paths = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return None
    return paths


def record_dependencies(key_dir, paths):
    """Save the list of files a build read, atomically (call with the build lock held)."""
    final = os.path.join(key_dir, DEPENDENCIES_FILE)
    tmp = f"{final}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
        json.dump(list(paths), f, indent=0)
    os.replace(tmp, final)


def install(built, final):
    """Move a finished library into place atomically (same filesystem: built in a sibling dir)."""
    os.makedirs(os.path.dirname(final), exist_ok=True)
    os.replace(built, final)
