"""Schema strings: parsing, printing back, PyTorch's errors, argument binding."""
import pytest

import ember
from ember.library._schema import parse_schema


@pytest.mark.parametrize("text", [
    "muladd(Tensor a, Tensor b, float c) -> Tensor",
    "foo(Tensor a, *, Tensor b, Tensor c) -> Tensor",
    'foo(Tensor[] a, int[3] b, float? c=None, bool d=False, str e="hi", int g=-1) -> Tensor[]',
    "foo(Tensor(a) self) -> Tensor(a)",
    "foo(Tensor(a -> *) self) -> Tensor",
    "foo(Tensor a) -> (Tensor, int)",
    "foo(Tensor a) -> ()",
    "foo() -> ()",
    "foo.bar(Tensor a) -> Tensor",
    "foo(Tensor a) -> (Tensor a, Tensor b)",
    "mylib::foo(Tensor(a!) x, Tensor? y, SymInt[] s=[1, 2], Scalar k=1) -> Tensor(a!)",
    "foo(Tensor(b!) a, Tensor(b!) c) -> ()",
    "foo(Tensor a, int? b=3) -> Tensor",
])
def test_round_trip(text):
    assert str(parse_schema(text)) == text


def test_fields():
    s = parse_schema("ns::f.out(Tensor(a!) x, int[] k=[1, 2], *, str m='x') -> Tensor(a!)")
    assert (s.name, s.overload_name) == ("ns::f", "out")
    x, k, m = s.arguments
    assert x.is_write and x.alias_info.before_set == "a" and not k.is_write
    assert (k.default, k.kwarg_only, m.default, m.kwarg_only) == ([1, 2], False, "x", True)
    assert str(s) == 'ns::f.out(Tensor(a!) x, int[] k=[1, 2], *, str m="x") -> Tensor(a!)'
    assert s.is_mutable()


# Each message is what torch._C.parse_schema raised for the same text.
@pytest.mark.parametrize("text, message", [
    ("foo(Tensor a) -> ", "expected ident but found 'eof' here:\nfoo(Tensor a) -> "),
    ("(Tensor a) -> Tensor",
     "expected ident but found '(' here:\n(Tensor a) -> Tensor\n~ <--- HERE\n"),
    ("foo(Tensor a -> Tensor",
     "expected ) but found 'arrow' here:\nfoo(Tensor a -> Tensor\n             ~~ <--- HERE\n"),
    ("foo(Tensorx a) -> Tensor",
     "\nunknown type specifier. Common valid schema types include Tensor, SymInt, int, float, "
     "bool, Scalar; for a full list, please see https://github.com/pytorch/pytorch/blob/main/"
     "aten/src/ATen/native/README.md#func :\nfoo(Tensorx a) -> Tensor\n    ~~~~~~~ <--- HERE\n"),
    ("foo(Tensor a, int b=) -> Tensor",
     "expected number but found ')' here:\nfoo(Tensor a, int b=) -> Tensor\n"
     "                    ~ <--- HERE\n"),
    ("baz Tensor", "expected eof but found 'ident' here:\nbaz Tensor\n    ~~~~~~ <--- HERE\n"),
    ("foo(Tensor a=1) -> Tensor",
     "expected None but found 'number' here:\nfoo(Tensor a=1) -> Tensor\n"
     "             ~ <--- HERE\n"),
    ("foo(Tensor a) - Tensor",
     "expected arrow but found '-' here:\nfoo(Tensor a) - Tensor\n              ~ <--- HERE\n"),
    ("foo(Tensor a", "expected ) but found 'eof' here:\nfoo(Tensor a"),
    ("foo(int[] a=1) -> Tensor",
     "expected [ but found 'number' here:\nfoo(int[] a=1) -> Tensor\n            ~ <--- HERE\n"),
    ("foo(Tensor a, bool b=true) -> Tensor",
     "\ninvalid numeric default value:\nfoo(Tensor a, bool b=true) -> Tensor\n"
     "                         ~ <--- HERE\n"),
])
def test_parse_errors(text, message):
    with pytest.raises(RuntimeError) as info:
        parse_schema(text)
    assert str(info.value) == message


def test_non_default_after_default():
    with pytest.raises(RuntimeError, match="Non-default positional argument follows default "
                                           "argument. Parameter c in"):
        parse_schema("foo(Tensor a, Tensor? b=None, Tensor c) -> Tensor")


def test_call_binding_errors(ns, make_lib):
    lib = make_lib(ns, "DEF")
    lib.define("muladd(Tensor a, Tensor b, float c=1.5, *, int[] d=[1,2], str e='x') -> Tensor")
    seen = []
    lib.impl("muladd", lambda *a, **k: seen.append((a, k)) or a[0], "CPU")
    op = getattr(ember.ops, ns).muladd
    x = ember.ones(1)
    decl = (f'{ns}::muladd(Tensor a, Tensor b, float c=1.5, *, int[] d=[1, 2], str e="x") '
            "-> Tensor")
    with pytest.raises(RuntimeError) as info:
        op(x)
    assert str(info.value) == f"{ns}::muladd() is missing value for argument 'b'. " \
                              f"Declaration: {decl}"
    with pytest.raises(RuntimeError) as info:
        op(x, x, 1.0, [1], "s")
    assert str(info.value) == f"{ns}::muladd() takes 3 positional argument(s) but 5 " \
                              f"was/were given.  Declaration: {decl}"
    with pytest.raises(RuntimeError) as info:
        op(x, x, f=3)
    assert str(info.value) == f"Unknown keyword argument 'f' for operator '{ns}::muladd'. " \
                              f"Schema: {decl}"
    with pytest.raises(RuntimeError, match=f"{ns}::muladd\\(\\) Expected a value of type "
                                           "'Tensor' for argument 'b' but instead found type "
                                           "'int'.\nPosition: 1\nValue: 3\n"):
        op(x, 3)
    # kernels get what PyTorch passes: arguments at their defaults are left out
    op(x, x)
    op(x, x, 2.0, d=[3])
    assert [(len(a), k) for a, k in seen] == [(2, {}), (3, {"d": [3]})]
