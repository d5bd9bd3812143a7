"""ember's dtypes and PyTorch's type-promotion rules.

A ``dtype`` wraps a NumPy dtype. Promotion follows PyTorch, not NumPy:

* operands fall in categories bool < integer < floating;
* tensors with dimensions decide the dtype; zero-dim tensors count only when
  their category is higher; Python scalars count only by category, and then
  give the *default* dtype of that category (``int_tensor * 1.5`` is float32);
* across categories the higher one wins outright (float16 + int64 -> float16).

>>> import ember
>>> (ember.ones(2, dtype=ember.int64) * 1.5).dtype
ember.float32
"""
import builtins
import threading

import numpy as np

try:  # bfloat16 arrays: NumPy has no such type; ml_dtypes adds it (optional)
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is a declared dependency
    _ml_dtypes = None

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type; compare with ``is`` or ``==`` (``ember.float32``).

    Besides its name, each dtype carries the other names PyTorch prints for it (see the
    table below): ``scalar_name`` (``Float``: ``FloatTensor``, ``FloatStorage``, "expected
    scalar type Float") and ``cpp_name`` (``float``, ``long int``: the C++ type in messages
    of PyTorch's kernels).
    """
    __slots__ = ("name", "np", "category", "itemsize", "is_floating_point", "is_signed",
                 "scalar_name", "cpp_name", "alias")

    def __init__(self, name, np_dtype, category, scalar_name, cpp_name, alias):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == _FLOAT
        self.is_signed = self.np.kind in "ifc" or category == _FLOAT  # bfloat16's kind: "V"
        self.scalar_name = scalar_name
        self.cpp_name = cpp_name
        self.alias = alias

    @property
    def is_complex(self):
        return self.category == _COMPLEX

    def to_real(self):
        """The dtype of the real and imaginary parts (float32 for complex64); self if real."""
        return _REAL_OF.get(self.name, self)

    def to_complex(self):
        """The complex dtype with parts of this dtype (complex64 for float32)."""
        if self.category == _COMPLEX:
            return self
        if self.category != _FLOAT or self.itemsize == 1:  # float8 has no complex type
            raise RuntimeError(f"Unknown Complex ScalarType for {self.scalar_name}")
        return complex128 if self.name == "float64" else complex64

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return (from_name, (self.name,))


# Every name of every dtype, one row each. scalar_name: PyTorch's ScalarType;
# cpp_name: how PyTorch's C++ messages print the element type; alias: the second
# name of ``torch.float`` and the like (None where there is none).
#                name       NumPy       category scalar_name  cpp_name         alias
float16 = dtype("float16", np.float16, _FLOAT, "Half", "c10::Half", "half")
float32 = dtype("float32", np.float32, _FLOAT, "Float", "float", "float")
float64 = dtype("float64", np.float64, _FLOAT, "Double", "double", "double")
int8 = dtype("int8", np.int8, _INT, "Char", "signed char", None)
int16 = dtype("int16", np.int16, _INT, "Short", "short int", "short")
int32 = dtype("int32", np.int32, _INT, "Int", "int", "int")
int64 = dtype("int64", np.int64, _INT, "Long", "long int", "long")
uint8 = dtype("uint8", np.uint8, _INT, "Byte", "unsigned char", None)
# PyTorch's "limited support" unsigned types: creation, casts, equality, bitwise ops and a few
# reductions; they promote with nothing but floats and themselves (promote_types)
uint16 = dtype("uint16", np.uint16, _INT, "UInt16", "short unsigned int", None)
uint32 = dtype("uint32", np.uint32, _INT, "UInt32", "unsigned int", None)
uint64 = dtype("uint64", np.uint64, _INT, "UInt64", "long unsigned int", None)
bool_ = dtype("bool", np.bool_, _BOOL, "Bool", "bool", None)
complex64 = dtype("complex64", np.complex64, _COMPLEX, "ComplexFloat", "c10::complex<float>",
                  "cfloat")
complex128 = dtype("complex128", np.complex128, _COMPLEX, "ComplexDouble",
                   "c10::complex<double>", "cdouble")
half, float, double = float16, float32, float64  # the aliases above, as Python names
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128
_REAL_OF = {"complex64": float32, "complex128": float64}


class _MissingDtype(dtype):
    """A dtype whose array type is not installed: every use names the package to install."""
    __slots__ = ("_package",)

    def __init__(self, name, category, scalar_name, cpp_name, package):
        self.name, self.category, self._package = name, category, package
        self.is_floating_point = category == _FLOAT
        self.is_signed = True
        self.scalar_name, self.cpp_name, self.alias = scalar_name, cpp_name, None

    def __getattr__(self, attr):  # np, itemsize: what any array of this dtype needs
        raise RuntimeError(f"ember.{self.name} needs the {self._package} package "
                           f"(pip install {self._package})")


if _ml_dtypes is not None:
    bfloat16 = dtype("bfloat16", _ml_dtypes.bfloat16, _FLOAT, "BFloat16", "c10::BFloat16", None)
else:  # pragma: no cover
    bfloat16 = _MissingDtype("bfloat16", _FLOAT, "BFloat16", "c10::BFloat16", "ml_dtypes")

# PyTorch's float8 types (ml_dtypes' arrays): creation, casts, views, copies and a few kernels;
# they promote with nothing but themselves, and most kernels refuse them (refuse_float8)
_FLOAT8_NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                 "float8_e8m0fnu")


def _float8(name):
    scalar = "F" + name[1:]
    if _ml_dtypes is None:  # pragma: no cover
        return _MissingDtype(name, _FLOAT, scalar, "c10::" + scalar, "ml_dtypes")
    d = dtype(name, getattr(_ml_dtypes, name), _FLOAT, scalar, "c10::" + scalar, None)
    d.is_signed = name != "float8_e8m0fnu"  # e8m0: an exponent only, no sign bit
    return d


float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu = \
    (_float8(n) for n in _FLOAT8_NAMES)
FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_, complex64,
       complex128) + \
    ((bfloat16,) if _ml_dtypes is not None else ()) + (uint16, uint32, uint64) + \
    (FLOAT8 if _ml_dtypes is not None else ())
#: the unsigned types wider than a byte (PyTorch has no legacy tensor types of them)
LIMITED_UNSIGNED = (uint16, uint32, uint64)


def refuse_limited_unsigned(np_dtype, kernel):
    """PyTorch's NotImplementedError for one of its kernels that has no uint16/32/64 form,
    where ``np_dtype`` (a NumPy dtype) is one of them; the float8 types are refused too,
    but for the few of these kernels they have (``_FLOAT8_KERNELS``).

    >>> import numpy as np
    >>> refuse_limited_unsigned(np.dtype("uint32"), "max_all")
    Traceback (most recent call last):
        ...
    NotImplementedError: "max_all" not implemented for 'UInt32'
    """
    if np_dtype.kind == "u" and np_dtype.itemsize > 1:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_BY_NUMPY[np_dtype].scalar_name}'")
    if np_dtype.itemsize == 1 and np_dtype in FLOAT8_NP and (
            kernel not in _FLOAT8_KERNELS or kernel == "index_put" and np_dtype.name ==
            "float8_e8m0fnu"):
        refuse_float8(np_dtype, kernel)  # most kernels PyTorch lacks for both
_BY_NUMPY = {d.np: d for d in ALL}
_BFLOAT16_NP = bfloat16.np if _ml_dtypes is not None else None
#: the NumPy dtypes of the float8 types (ml_dtypes'; float8_e5m2's kind is "f", the others' "V")
FLOAT8_NP = frozenset(d.np for d in FLOAT8) if _ml_dtypes is not None else frozenset()


def refuse_float8(np_dtype, kernel):
    """PyTorch's NotImplementedError for one of its kernels that has no float8 form, where
    ``np_dtype`` (a NumPy dtype) is one of the float8 types.

    >>> import ember
    >>> refuse_float8(ember.float8_e4m3fn.np, "add_stub")
    Traceback (most recent call last):
        ...
    NotImplementedError: "add_stub" not implemented for 'Float8_e4m3fn'
    """
    if np_dtype.itemsize == 1 and np_dtype in FLOAT8_NP:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_BY_NUMPY[np_dtype].scalar_name}'")


#: kernels PyTorch has for float8 but not for uint16/32/64 (refuse_limited_unsigned's names)
_FLOAT8_KERNELS = frozenset(("index_select", "masked_select", "index_put"))


def is_float_np(np_dtype):
    """Whether a NumPy dtype is a real floating type, as PyTorch counts them: NumPy's own
    floats (kind "f") and ml_dtypes' bfloat16 and float8 types (kind "V", which
    ``kind == "f"`` misses; float8_e5m2's kind is "f").

    >>> import numpy as np, ember
    >>> is_float_np(ember.bfloat16.np), is_float_np(np.dtype("f2")), is_float_np(np.dtype("i8"))
    (True, True, False)
    """
    kind = np_dtype.kind
    return kind == "f" or (kind == "V" and (np_dtype == _BFLOAT16_NP or np_dtype in FLOAT8_NP))
_BY_NAME = {d.name: d for d in ALL}


class QuantizedDtype(dtype):
    """A quantized tensor's element type (``ember.quint8``, ``qint8``, ``qint32``, the packed
    ``quint4x2``/``quint2x4``), made only by ``quantize_per_tensor`` and the like (see
    ember/_quantized): ``repr_np`` is the NumPy type of its integer representation, and
    ``np`` raises PyTorch's error, so a dense tensor is never made of one (``zeros(2,
    dtype=quint8)``); it maps to no NumPy dtype (``_BY_NUMPY`` keeps uint8 as uint8)."""
    __slots__ = ("repr_np",)

    def __init__(self, name, np_dtype, scalar_name):
        self.name, self.repr_np, self.category = name, np.dtype(np_dtype), _INT
        self.itemsize, self.is_floating_point = self.repr_np.itemsize, False
        self.scalar_name, self.cpp_name, self.alias = scalar_name, "c10::" + name, None

    @property
    def np(self):
        raise RuntimeError("empty_strided not supported on quantized tensors yet see "
                           "https://github.com/pytorch/pytorch/issues/74540")

    @property
    def is_signed(self):
        raise RuntimeError("isSignedType not supported for quantized types")


quint8 = QuantizedDtype("quint8", np.uint8, "QUInt8")
qint8 = QuantizedDtype("qint8", np.int8, "QInt8")
qint32 = QuantizedDtype("qint32", np.int32, "QInt32")
quint4x2 = QuantizedDtype("quint4x2", np.uint8, "QUInt4x2")
quint2x4 = QuantizedDtype("quint2x4", np.uint8, "QUInt2x4")
QUANTIZED = (quint8, qint8, qint32, quint4x2, quint2x4)
_BY_NAME.update((d.name, d) for d in QUANTIZED)
SCALAR_NAMES = {d.name: d.scalar_name for d in ALL}  # {"float32": "Float", ...}


def legacy_type_name(d):
    """``FloatTensor`` for float32: PyTorch's legacy tensor type name of a dtype."""
    return d.scalar_name + "Tensor"


#: {"FloatTensor": float32, ...}
LEGACY_TENSOR_TYPES = {legacy_type_name(d): d for d in ALL
                       if d not in LIMITED_UNSIGNED and d not in FLOAT8}


def from_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype):
    """The ember dtype of a NumPy dtype; TypeError for ones ember lacks."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The only "
            "supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint64, uint32, uint16, uint8, and bool."
        ) from None


def to_numpy_dtype(d):
    if isinstance(d, dtype):
        return d.np
    return np.dtype(d)


class _DefaultDtype(threading.local):
    value = float32


_default = _DefaultDtype()


def get_default_dtype():
    """The dtype of float tensors made without ``dtype=`` (float32 unless changed)."""
    return _default.value


def set_default_dtype(d):
    """Set the default floating dtype (float16, float32 or float64).

    >>> import ember
    >>> ember.set_default_dtype(ember.float64); ember.tensor([1.5]).dtype
    ember.float64
    >>> ember.set_default_dtype(ember.float32)
    """
    if d in FLOAT8:  # PyTorch looks for a storage type it does not have
        raise TypeError(f"couldn't find storage object {d.scalar_name}Storage")
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default.value = d


def scalar_dtype(value):
    """The dtype a Python scalar gets as a tensor on its own."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return bool_
    if isinstance(value, (builtins.int, np.integer)):
        return int64
    if isinstance(value, (builtins.complex, np.complexfloating)):
        return _default.value.to_complex()
    return _default.value


def _category_default(category):
    if category == _COMPLEX:
        return _default.value.to_complex()
    return (bool_, int64, _default.value)[category]


def _combine(higher, lower):
    """``higher``'s dtype when it decides; a complex ``lower`` over a float ``higher``
    keeps the float's precision (PyTorch: float64 with a complex scalar is complex128)."""
    if higher.category == _FLOAT and lower.category == _COMPLEX:
        return higher.to_complex()
    return lower


def promote_types(a, b):
    """Promote two dtypes the way PyTorch does (higher category wins outright)."""
    if a is b:
        return a
    if a.itemsize == 1 and a in FLOAT8 or b.itemsize == 1 and b in FLOAT8:
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to "
                           f"promote {a.scalar_name} and {b.scalar_name}")
    if (a in LIMITED_UNSIGNED or b in LIMITED_UNSIGNED) and a.category <= _INT \
            and b.category <= _INT:
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {a.scalar_name} and {b.scalar_name}")
    if a.category != b.category:
        high, low = (a, b) if a.category > b.category else (b, a)
        if high.category == _COMPLEX and low.category == _FLOAT and low.itemsize > 4:
            return complex128  # complex64 with float64: complex128
        return high
    if {a.name, b.name} == {"bfloat16", "float16"}:  # no common NumPy type: PyTorch's float32
        return float32
    return _BY_NUMPY[np.promote_types(a.np, b.np)]


def result_type(*operands):
    """Result dtype of an op on tensors and Python scalars (PyTorch's rules)."""
    dim_dt = zero_dt = None
    wrapped_cat = -1
    for x in operands:
        d = None if isinstance(x, np.generic) else getattr(x, "dtype", None)
        if isinstance(d, np.dtype):  # a NumPy array operand counts as a tensor of its dtype
            d = from_numpy_dtype(d)
        if d is None:  # Python and NumPy scalars are "wrapped numbers", as in PyTorch
            if x is None:
                continue
            wrapped_cat = builtins.max(wrapped_cat, scalar_dtype(x).category)
        elif x.ndim:
            dim_dt = d if dim_dt is None else promote_types(dim_dt, d)
        else:
            zero_dt = d if zero_dt is None else promote_types(zero_dt, d)
    result = dim_dt
    if zero_dt is not None and (result is None or zero_dt.category > result.category):
        result = zero_dt if result is None else _combine(result, zero_dt)
    if wrapped_cat >= 0 and (result is None or wrapped_cat > result.category):
        wrapped = _category_default(wrapped_cat)
        result = wrapped if result is None else _combine(result, wrapped)
    return result


# ---- finfo / iinfo ----------------------------------------------------------------------------
class finfo:
    """Machine limits of a floating dtype (the default dtype when none is given).

    >>> import ember
    >>> ember.finfo(ember.float16).max, ember.finfo().eps
    (65504.0, 1.1920928955078125e-07)
    """
    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):
        if type is None:
            type = get_default_dtype()
        if not isinstance(type, dtype):
            raise TypeError(f"finfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{builtins.type(type).__name__}")
        if type.is_complex:
            type = type.to_real()  # a complex dtype's limits are its parts' (as PyTorch)
        if not type.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        if type in FLOAT8:
            self._float8(type)
            return
        info = _np_finfo(type.np)
        self.bits = type.itemsize * 8
        self.eps, self.max, self.min = builtins.float(info.eps), builtins.float(info.max), \
            builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision  # PyTorch's: a power of ten, exactly
        self.dtype = type.name

    def _float8(self, type):
        # PyTorch's numeric_limits of its float8 types (ml_dtypes' eps of float8_e5m2fnuz
        # differs, and e8m0's lowest is its smallest value); resolution 10 ** -0
        eps, top, tiny = _FLOAT8_LIMITS[type.name]
        self.bits, self.eps, self.max, self.resolution = 8, eps, top, 1.0
        self.min = tiny if type.name == "float8_e8m0fnu" else -top
        self.tiny = self.smallest_normal = tiny
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


#: name: (eps, max, smallest normal), as PyTorch's finfo gives them
_FLOAT8_LIMITS = {"float8_e4m3fn": (0.125, 448.0, 2.0 ** -6),
                  "float8_e5m2": (0.25, 57344.0, 2.0 ** -14),
                  "float8_e4m3fnuz": (0.125, 240.0, 2.0 ** -7),
                  "float8_e5m2fnuz": (0.125, 57344.0, 2.0 ** -15),
                  "float8_e8m0fnu": (1.0, 2.0 ** 127, 2.0 ** -127)}


def _np_finfo(np_dtype):
    if np_dtype.kind != "f":  # bfloat16: NumPy's finfo does not know ml_dtypes' types
        return _ml_dtypes.finfo(np_dtype)
    return np.finfo(np_dtype)


class iinfo:
    """Limits of an integer dtype.

    >>> import ember
    >>> ember.iinfo(ember.int8)
    iinfo(min=-128, max=127, dtype=int8)
    """
    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):
        if not isinstance(type, dtype):
            raise TypeError(f"iinfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{builtins.type(type).__name__}")
        if type is bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.category != _INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits, self.max, self.min = info.bits, builtins.int(info.max), builtins.int(info.min)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# ---- memory formats -------------------------------------------------------------------------
class memory_format:
    """A tensor memory layout (``ember.contiguous_format``, ``channels_last``...): strides
    of the tensor's array (``backend/memory_layout.py``); a function that cannot lay its
    result out so raises NotImplementedError."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_memory_format_named, (self.name,))


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
_MEMORY_FORMATS = {f.name: f for f in (preserve_format, contiguous_format, channels_last,
                                        channels_last_3d)}


def _memory_format_named(name):
    return _MEMORY_FORMATS[name]


def check_memory_format(fmt, name):
    """``fmt`` as ``name`` accepts it where only row-major results are made: None,
    preserve_format and contiguous_format; NotImplementedError for the channels-last
    layouts (functions that honour them check with ``memory_layout.checked_format``)."""
    if fmt is None or fmt is preserve_format or fmt is contiguous_format:
        return
    if isinstance(fmt, memory_format):
        raise NotImplementedError(f"{name}(): memory_format={fmt!r} is not supported: this "
                                  f"function makes row-major (contiguous_format) tensors only")
    raise TypeError(f"{name}(): argument 'memory_format' must be torch.memory_format, not "
                    f"{builtins.type(fmt).__name__}")
