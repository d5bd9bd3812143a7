"""Operator schemas: the text ``"ns::name.overload(Tensor a, float c=1.) -> Tensor"``
parsed into a ``FunctionSchema`` (the same grammar and error texts as PyTorch's
``torch._C.parse_schema``), and the binding of a call's arguments to it.

>>> from ember.library._schema import parse_schema
>>> s = parse_schema("mylib::muladd(Tensor a, Tensor b, float c=1.5) -> Tensor")
>>> s.name, [a.name for a in s.arguments], s.arguments[2].default
('mylib::muladd', ['a', 'b', 'c'], 1.5)
"""
import re

from .._tensor import Tensor

# The base types a schema may name (PyTorch's schema type parser knows these).
BASE_TYPES = frozenset({
    "Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Device",
    "Layout", "MemoryFormat", "Generator", "Dimname", "Storage", "Stream", "Any", "complex",
    "QScheme", "ConstQuantizerPtr", "t", "t1", "t2", "GraphModule", "SymBool", "SymFloat",
    "AnyEnumType", "DeviceIndex", "str?",
})

_UNKNOWN_TYPE = ("\nunknown type specifier. Common valid schema types include Tensor, SymInt, "
                 "int, float, bool, Scalar; for a full list, please see "
                 "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md"
                 "#func :\n")

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<arrow>->)
  | (?P<scope>::)
  | (?P<number>-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?))
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<char>.)
""", re.VERBOSE | re.DOTALL)


class _Token:
    __slots__ = ("kind", "text", "start")

    def __init__(self, kind, text, start):
        self.kind, self.text, self.start = kind, text, start

    def shown(self):
        """How PyTorch's lexer names the token in 'found ... here'."""
        return self.text if self.kind == "char" else self.kind


def _tokenize(text):
    tokens = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind != "space":
            tokens.append(_Token(kind, m.group(), m.start()))
    tokens.append(_Token("eof", "", len(text)))
    return tokens


class _Alias:
    """An alias annotation: ``Tensor(a!)`` (set ``a``, written) or ``Tensor(a -> *)``."""

    def __init__(self, before, is_write, after=None):
        self.before_set, self.is_write, self.after = before, is_write, after

    def __str__(self):
        text = self.before_set + ("!" if self.is_write else "")
        return f"({text} -> {self.after})" if self.after else f"({text})"


class Argument:
    """One argument (or return) of a schema: its name, type text, default, alias."""

    def __init__(self, name, type_text, default=None, has_default=False, kwarg_only=False,
                 alias_info=None, default_text=None):
        self.name, self.type, self.kwarg_only = name, type_text, kwarg_only
        self.default_value, self.has_default = default, has_default
        self.alias_info = alias_info
        self._default_text = default_text

    @property
    def default(self):
        return self.default_value

    @property
    def is_write(self):
        return self.alias_info is not None and self.alias_info.is_write

    @property
    def is_tensor(self):
        return self.type.startswith("Tensor") and "[" not in self.type

    @property
    def is_tensor_list(self):
        return self.type.startswith("Tensor") and "[" in self.type

    def type_text(self):
        """The type as written back (alias annotation after ``Tensor``)."""
        if self.alias_info is None:
            return self.type
        return self.type.replace("Tensor", "Tensor" + str(self.alias_info), 1)

    def __str__(self):
        text = self.type_text()
        if self.name:
            text += " " + self.name
        if self.has_default:
            text += "=" + self._default_text
        return text

    def __repr__(self):
        return f"Argument({self})"


class FunctionSchema:
    """A parsed schema; ``str(schema)`` writes it back in PyTorch's spelling."""

    def __init__(self, name, overload_name, arguments, returns):
        self.name, self.overload_name = name, overload_name
        self.arguments, self.returns = arguments, returns

    @property
    def qualified_name(self):
        return self.name + (f".{self.overload_name}" if self.overload_name else "")

    def is_mutable(self):
        return any(a.is_write for a in self.arguments)

    def __str__(self):
        args, seen_kwarg = [], False
        for a in self.arguments:
            if a.kwarg_only and not seen_kwarg:
                args.append("*")
                seen_kwarg = True
            args.append(str(a))
        if len(self.returns) == 1 and not self.returns[0].name:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{self.qualified_name}({', '.join(args)}) -> {rets}"

    def __repr__(self):
        return str(self)


class _Parser:
    def __init__(self, text):
        self.text, self.tokens, self.pos = text, _tokenize(text), 0

    @property
    def cur(self):
        return self.tokens[self.pos]

    def error(self, message, token=None):
        token = token or self.cur
        if token.kind == "eof":
            return RuntimeError(f"{message} here:\n{self.text}")
        return RuntimeError(f"{message} here:\n{self.text}\n{self._caret(token)}")

    def _caret(self, token):
        return " " * token.start + "~" * max(len(token.text), 1) + " <--- HERE\n"

    def expect(self, kind):
        token = self.cur
        if token.kind == kind or (token.kind == "char" and token.text == kind):
            self.pos += 1
            return token
        raise self.error(f"expected {kind} but found '{token.shown()}'")

    def next_is(self, kind):
        token = self.cur
        return token.kind == kind or (token.kind == "char" and token.text == kind)

    def parse(self, allow_anonymous=False):
        name, overload = "", ""
        if not (allow_anonymous and self.next_is("(")):
            name = self.expect("ident").text
            if self.next_is("scope"):
                self.pos += 1
                name += "::" + self.expect("ident").text
            if self.next_is("."):
                self.pos += 1
                overload = self.expect("ident").text
        if not self.next_is("(") and not self.next_is("eof"):
            self.expect("eof")  # a bare operator name ends here (PyTorch's message)
        arguments = self.arguments()
        self.expect("arrow")
        returns = self.returns()
        self.expect("eof")
        schema = FunctionSchema(name, overload, arguments, returns)
        _check_defaults_order(schema)
        return schema

    def sequence(self, open_, close, element):
        """``open elem, elem, ... close`` (PyTorch's parseList): after an element comes a
        comma or the closing token."""
        self.expect(open_)
        items = []
        if not self.next_is(close):
            while True:
                items.append(element())
                if not self.next_is(","):
                    break
                self.pos += 1
        self.expect(close)
        return items

    def arguments(self):
        kwarg_only = [False]

        def element():
            if self.next_is("*"):
                self.pos += 1
                kwarg_only[0] = True
                return None
            return self.argument(kwarg_only[0])
        return [a for a in self.sequence("(", ")", element) if a is not None]

    def argument(self, kwarg_only, is_return=False):
        type_text, alias = self.type()
        name = ""
        if self.next_is("ident"):
            name = self.cur.text
            self.pos += 1
        elif not is_return:
            name = self.expect("ident").text
        arg = Argument(name, type_text, kwarg_only=kwarg_only, alias_info=alias)
        if not is_return and self.next_is("="):
            self.pos += 1
            start = self.cur
            arg.default_value = self.default(type_text)
            arg.has_default = True
            arg._default_text = _default_text(arg.default_value, start, self)
        return arg

    def type(self):
        token = self.expect("ident")
        if token.text not in BASE_TYPES:
            raise RuntimeError(f"{_UNKNOWN_TYPE}{self.text}\n{self._caret(token)}")
        text, alias = token.text, None
        if self.next_is("("):
            alias = self.alias()
        while True:
            if self.next_is("["):
                self.pos += 1
                if self.next_is("number"):
                    text += "[" + self.cur.text + "]"
                    self.pos += 1
                else:
                    text += "[]"
                self.expect("]")
            elif self.next_is("?"):
                self.pos += 1
                text += "?"
            else:
                return text, alias

    def alias(self):
        self.expect("(")
        before = self.expect("ident").text
        is_write = False
        if self.next_is("!"):
            self.pos += 1
            is_write = True
        after = None
        if self.next_is("arrow"):
            self.pos += 1
            if self.next_is("*"):
                self.pos += 1
                after = "*"
            else:
                after = self.expect("ident").text
        self.expect(")")
        return _Alias(before, is_write, after)

    def default(self, type_text):
        token = self.cur
        if token.kind == "ident" and token.text == "None":
            self.pos += 1
            return None
        base = type_text.rstrip("?")
        if base.endswith("]"):
            return self.list_default(base)
        if base.startswith("Tensor"):
            raise self.error("expected None but found '{}'".format(token.shown()))
        if base == "str":
            if token.kind != "string":
                raise self.error(f"expected string but found '{token.shown()}'")
            self.pos += 1
            return token.text[1:-1]
        return self.scalar_default(base)

    def scalar_default(self, base):
        token = self.cur
        if base in ("bool", "SymBool") or token.kind == "ident":
            if token.kind == "ident":
                self.pos += 1
                if token.text in ("True", "False"):
                    return token.text == "True"
                if base in ("ScalarType", "Layout", "MemoryFormat", "Device"):
                    return token.text
                raise RuntimeError(f"\ninvalid numeric default value:\n{self.text}\n"
                                   f"{self._caret(self.cur)}")
        number = self.expect("number").text
        if base in ("bool", "SymBool"):
            return bool(float(number))
        if re.fullmatch(r"-?\d+", number):
            return int(number)
        return float(number)

    def list_default(self, base):
        if self.next_is("number") or self.next_is("ident"):
            if self.cur.kind == "ident":
                raise self.error(f"expected [ but found '{self.cur.shown()}'")
            if base.endswith("[]"):
                raise self.error(f"expected [ but found '{self.cur.shown()}'")
            value = self.scalar_default(base[:base.index("[")])
            return value  # int[2] k=1 broadcasts one value to every element
        element = base[:base.index("[")]
        return self.sequence("[", "]", lambda: self.scalar_default(element))

    def returns(self):
        if self.next_is("("):
            return self.sequence("(", ")", lambda: self.argument(False, is_return=True))
        return [self.argument(False, is_return=True)]


def _default_text(value, token, parser):
    """The default as PyTorch prints it back (strings in double quotes)."""
    if isinstance(value, str) and token.kind == "string":
        return '"' + value + '"'
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    end = parser.tokens[parser.pos].start
    return "".join(parser.text[token.start:end].split())


def _check_defaults_order(schema):
    seen_default = False
    for arg in schema.arguments:
        if arg.has_default:
            seen_default = True
        elif seen_default and not arg.kwarg_only:
            raise RuntimeError(
                "Non-default positional argument follows default argument. Parameter "
                f"{arg.name} in {schema}")


def parse_schema(text, allow_anonymous=False):
    """Parse a schema string as ``torch._C.parse_schema`` does (RuntimeError with the
    position marked on a bad one)."""
    return _Parser(text).parse(allow_anonymous)


# ---- calls ----------------------------------------------------------------------------------
_PY_TYPE_NAMES = {Tensor: "Tensor", int: "int", float: "float", bool: "bool", str: "str"}


def _type_of(value):
    if isinstance(value, Tensor):
        return "Tensor"
    return type(value).__name__


def _accepts(type_text, value):
    """Whether ``value`` fits the schema type (the checks PyTorch's argument parser makes
    for the common types; the rest pass)."""
    optional = type_text.endswith("?")
    base = type_text[:-1] if optional else type_text
    if value is None:
        return optional or base in ("Tensor", "Any")
    if base.endswith("]"):
        if isinstance(value, (Tensor, str)) or not hasattr(value, "__iter__"):
            return base[:base.index("[")] in ("int", "SymInt") and isinstance(value, int) \
                and not base.endswith("[]")
        element = base[:base.index("[")]
        return all(_accepts(element, v) for v in value)
    if base == "Tensor":
        return isinstance(value, Tensor)
    if base in ("int", "SymInt"):
        return isinstance(value, int) or (isinstance(value, Tensor) and value.ndim == 0
                                          and not value.is_floating_point())
    if base in ("float", "SymFloat"):
        return isinstance(value, (int, float)) and not isinstance(value, bool) or \
            isinstance(value, Tensor) and value.ndim == 0
    if base in ("bool", "SymBool"):
        return isinstance(value, bool)
    if base == "str":
        return isinstance(value, str)
    if base == "Scalar":
        return isinstance(value, (int, float, complex)) or (isinstance(value, Tensor)
                                                            and value.ndim == 0)
    return True


def bind(schema, args, kwargs):
    """The values of a call in schema order (defaults filled in), with PyTorch's errors
    for a missing, unknown or mistyped argument."""
    qual = schema.name
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional) and len(positional) == len(schema.arguments):
        raise RuntimeError(
            f"{qual}() expected at most {len(positional)} argument(s) but received {len(args)} "
            f"argument(s). Declaration: {schema}")
    if len(args) > len(positional):
        raise RuntimeError(
            f"{qual}() takes {len(positional)} positional argument(s) but {len(args)} was/were "
            f"given.  Declaration: {schema}")
    names = {a.name for a in schema.arguments}
    for key in kwargs:
        if key not in names:
            raise RuntimeError(f"Unknown keyword argument '{key}' for operator '{qual}'. "
                               f"Schema: {schema}")
    values = []
    for i, arg in enumerate(schema.arguments):
        if i < len(args):
            value = args[i]
        elif arg.name in kwargs:
            value = kwargs[arg.name]
        elif arg.has_default:
            value = arg.default_value
            if isinstance(value, list):
                value = list(value)
            values.append(value)
            continue
        else:
            raise RuntimeError(f"{qual}() is missing value for argument '{arg.name}'. "
                               f"Declaration: {schema}")
        if not _accepts(arg.type, value):
            raise RuntimeError(
                f"{qual}() Expected a value of type '{arg.type}' for argument '{arg.name}' "
                f"but instead found type '{_type_of(value)}'.\nPosition: {i}\n"
                f"Value: {value!r}\nDeclaration: {schema}\n"
                f"Cast error details: Unable to cast {value!r} to {arg.type}")
        values.append(value)
    return values


def kernel_arguments(schema, values):
    """(args, kwargs) a Python kernel receives, as PyTorch passes them: positional
    arguments up to the last one that differs from its default, keyword-only ones as
    keywords unless they hold their default."""
    positional, keywords = [], {}
    for arg, value in zip(schema.arguments, values):
        if arg.kwarg_only:
            if not (arg.has_default and _same(value, arg.default_value)):
                keywords[arg.name] = value
        else:
            positional.append((arg, value))
    while positional and positional[-1][0].has_default and \
            _same(positional[-1][1], positional[-1][0].default_value):
        positional.pop()
    return [v for _, v in positional], keywords


def _same(value, default):
    if isinstance(value, Tensor) or isinstance(default, Tensor):
        return value is default
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return list(value) == list(default)
    return type(value) is type(default) and value == default
