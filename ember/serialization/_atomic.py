"""Replacing a file only once its new contents are completely written.

``ember.save`` to a path writes a temporary file next to it, flushes it to disk and renames
it over the destination, so a save that fails part-way (disk full, file size limit, an
exception, a signal) leaves the old checkpoint as it was and no temporary file behind.
"""
import os
import stat


def write_file_atomically(path, write):
    """Call ``write(fh)`` on a binary file that becomes ``path`` only if ``write`` returns.

    A symlink is written through (its target is replaced), like ``open(path, 'wb')``. Where
    no file can be put beside the destination (a read-only directory holding a writable file)
    or the destination is not a regular file (``/dev/null``, a FIFO), it is written in place,
    as ``open`` would.
    """
    target = os.path.realpath(path)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        _write_in_place(path, write)
        return
    directory = os.path.dirname(target)
    try:
        fd, tmp = _create_beside(target)
    except (PermissionError, FileNotFoundError):
        # a missing directory: open() raises the error naming the path the caller gave
        _write_in_place(path, write)
        return
    try:
        if old is not None:  # the new file keeps the permissions of the one it replaces
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _sync_directory(directory)


def _write_in_place(path, write):
    with open(path, "wb") as fh:
        write(fh)


def _create_beside(target):
    """A new, empty file in ``target``'s directory, with the permissions ``open`` would give."""
    directory, base = os.path.split(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(directory, f".{base}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


def _sync_directory(directory):
    """Make the rename itself durable; not every platform or file system can."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
