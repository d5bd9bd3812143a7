"""Reading the members of a checkpoint zip without trusting the sizes it declares.

A zip's directory says how big each member is; a crafted one can say anything. Before a
member is read into memory its declared size is checked against what the file can actually
back (a stored member holds its bytes verbatim; deflate expands at most ~1032-fold), so a
small file can't make ``ember.load`` allocate gigabytes, and a member that turns out shorter
than declared is an error naming the file.
"""
import struct
import zipfile

import numpy as np

from ._errors import LoadError

_CHUNK = 1 << 20
# Deflate's densest code spends at least 2 bits on a 258-byte match: 1032 bytes per input byte.
_DEFLATE_MAX_RATIO = 1032


class Archive:
    """An open checkpoint zip, ``name`` (the file's label for messages) and its size."""

    def __init__(self, zf, name, file_size, mmap_path=None):
        self.zf, self.name, self.file_size = zf, name, file_size
        self.mmap_path = mmap_path  # set by load(mmap=True): stored members are mapped

    def mapped(self, info, pos, count, dtype):
        """``count`` elements of ``dtype`` at byte ``pos`` of stored member ``info``, mapped
        copy-on-write from the file (writes to the array never reach it); None when the file
        is not to be mapped or the member is compressed."""
        if self.mmap_path is None or info.compress_type != zipfile.ZIP_STORED or count == 0:
            return None
        with open(self.mmap_path, "rb") as fh:
            fh.seek(info.header_offset)
            local = fh.read(30)  # the member's local header: its name and extra field follow
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            self.corrupt(f"{info.filename} has no valid local header")
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        start = info.header_offset + 30 + name_len + extra_len + pos
        if start + count * dtype.itemsize > self.file_size:
            self.corrupt(f"{info.filename} runs past the end of the file")
        return np.memmap(self.mmap_path, dtype=dtype, mode="c", offset=start,
                         shape=(count,)).view(np.ndarray)

    def corrupt(self, msg):
        raise LoadError(f"ember.load: {self.name} is corrupt: {msg}")

    def names(self):
        return self.zf.namelist()

    def info(self, member, what=None):
        """The ZipInfo of ``member`` (called ``what`` in messages), after checking that the
        file can hold what it declares."""
        what = what or member
        try:
            info = self.zf.getinfo(member)
        except KeyError:
            self.corrupt(f"{what} is missing")
        if info.compress_type == zipfile.ZIP_STORED:
            backed = info.compress_size
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            backed = info.compress_size * _DEFLATE_MAX_RATIO
        else:
            self.corrupt(f"{what} uses zip compression method {info.compress_type}; "
                         "ember.load reads stored or deflated members")
        if info.header_offset + info.compress_size > self.file_size or info.file_size > backed:
            self.corrupt(f"{what} declares {info.file_size} bytes, more than the file holds")
        return info

    def read_bytes(self, member):
        return self.zf.read(self.info(member))

    def open(self, info):
        return self.zf.open(info)

    def allocate(self, count, dtype, what):
        try:
            return np.empty(count, dtype)
        except MemoryError:
            raise LoadError(f"ember.load: not enough memory to load {self.name}: {what} needs "
                            f"{count * np.dtype(dtype).itemsize} bytes") from None

    def fill(self, fh, out, member):
        """Read ``out.nbytes`` bytes of ``member`` from ``fh`` into the fresh array ``out``;
        the member must end there (which also makes zipfile check its CRC)."""
        dest = out.reshape(-1).view(np.uint8)
        pos, total = 0, dest.size
        while pos < total:
            chunk = fh.read(min(_CHUNK, total - pos))
            if not chunk:
                self.corrupt(f"{member} ends after {pos} of its {total} bytes of data")
            dest[pos:pos + len(chunk)] = np.frombuffer(chunk, np.uint8)
            pos += len(chunk)
        if fh.read(1):
            self.corrupt(f"{member} holds more than its {total} bytes of data")

    def read_storage(self, member, dtype, count):
        """A 1-D native-order array of ``count`` elements of ``dtype`` (with the file's byte
        order) read from ``member``, which must hold exactly that many bytes."""
        info = self.info(member)
        expected = count * dtype.itemsize
        if info.file_size != expected:
            self.corrupt(f"{member} holds {info.file_size} bytes; its tensors' storage needs "
                         f"{expected} ({count} elements of {dtype.newbyteorder('=')})")
        out = self.mapped(info, 0, count, dtype)
        if out is None:
            out = self.allocate(count, dtype, member)
            with self.open(info) as fh:
                self.fill(fh, out, member)
        return to_native(out)


def to_native(a):
    """``a`` in native byte order, swapped in place (``a`` is a fresh array)."""
    if a.dtype.isnative:
        return a
    a.byteswap(inplace=True)
    return a.view(a.dtype.newbyteorder("="))
