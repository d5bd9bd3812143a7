"""Checking an extension's name before anything is compiled or cached under it.

The name ends up in places that accept less than a Python identifier does:

* the module's init symbol: the loader looks for ``PyInit_<name>`` only when the name is ASCII
  (for any other name it looks for ``PyInitU_<punycode>``, which the compiler never emits), and
  builds that symbol's name from at most 200 characters of the module's name; a name breaking
  either rule compiles and then fails to import;
* the library's file name ``<name><EXT_SUFFIX>``, which must fit in one directory entry.

Python keywords are accepted, as PyTorch accepts them: the module is returned by ``load``, never
named in an ``import`` statement, and ``PyInit_class`` is an ordinary C symbol.
"""
import re

NAME_MAX = 255  # bytes in one file name (Linux and macOS file systems)
# CPython's loader builds the init symbol's name from at most this many characters of the
# module's name ("PyInit_%.200s"), so a longer name compiles and then never imports
MODULE_NAME_MAX = 200

_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _shown(name, limit=60):
    return repr(name) if len(name) <= limit else repr(name[:limit]) + "..."


def check_extension_name(name, suffix, *, dotted=False, file_prefix=""):
    """Raise unless ``name`` can name a compiled module whose library is
    ``<file_prefix><last part of name><suffix>``.

    ``dotted``: ``name`` is a dotted module path (``pkg.sub.mod``), each part checked; each part
    but the last also names a directory. Raises TypeError for a non-str, ValueError naming the
    problem otherwise.
    """
    if not isinstance(name, str):
        raise TypeError(f"extension name must be a str, not {type(name).__name__}")
    parts = name.split(".") if dotted else [name]
    for part in parts:
        if not _ASCII_IDENTIFIER.match(part):
            what = (f"extension name {_shown(name)}" if part == name
                    else f"extension name {_shown(name)}: the part {_shown(part)}")
            raise ValueError(
                f"{what} is not an ASCII Python identifier: use only the letters A-Z and a-z, "
                "digits and underscores, not starting with a digit (the name becomes the "
                "module's PyInit_ symbol and its library's file name)")
    for part in parts[:-1]:
        if len(part) > NAME_MAX:
            raise ValueError(f"extension name {_shown(name)} is too long: the package directory "
                             f"{_shown(part)} has {len(part)} characters, more than a file name "
                             f"can hold ({NAME_MAX})")
    module = file_prefix + parts[-1]
    reasons = []
    if len(module) > MODULE_NAME_MAX:
        reasons.append(f"Python reads at most {MODULE_NAME_MAX} characters of a compiled "
                       "module's name when it looks for its PyInit_ symbol")
    if len(module + suffix) > NAME_MAX:
        reasons.append(f"its library file '{file_prefix}<name>{suffix}' must fit in a "
                       f"{NAME_MAX}-byte file name")
    if reasons:
        longest = min(MODULE_NAME_MAX, NAME_MAX - len(suffix)) - len(file_prefix)
        which = "its last part" if dotted else "the name"
        raise ValueError(f"extension name {_shown(name)} is too long ({len(parts[-1])} "
                         f"characters; {which} can have at most {longest}): "
                         + " and ".join(reasons))
