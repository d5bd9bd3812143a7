"""The ``functions=`` bindings of load_inline: a generated PYBIND11_MODULE block."""
import re

_CPP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _cpp_string(text):
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def normalize_functions(functions):
    """A name, a list of names, or a dict name -> docstring, as a list of (name, docstring)."""
    if isinstance(functions, str):
        items = [(functions, functions)]
    elif isinstance(functions, dict):
        items = list(functions.items())
    else:
        items = [(f, f) for f in functions]
    for name, doc in items:
        if not isinstance(name, str) or not _CPP_NAME.match(name):
            raise ValueError(f"functions: {name!r} is not a C++ function name")
        if not isinstance(doc, str):
            raise TypeError(f"functions: the docstring of {name!r} must be a str, "
                            f"not {type(doc).__name__}")
    return items


def module_block(functions):
    """``PYBIND11_MODULE(EMBER_EXTENSION_NAME, m) { m.def("f", &f, "doc"); ... }``."""
    lines = ["", "PYBIND11_MODULE(EMBER_EXTENSION_NAME, m) {"]
    for name, doc in normalize_functions(functions):
        lines.append(f'  m.def("{name}", &{name}, {_cpp_string(doc)});')
    lines.append("}")
    return "\n".join(lines) + "\n"

