"""Storages (untyped_storage, storage, UntypedStorage, TypedStorage), set_, is_set_to and
resize_'s storage semantics."""
import struct
import warnings

import pytest

import ember
from ember._ops.storage import UntypedStorage, TypedStorage, is_storage


def _typed(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.storage()


def test_untyped_storage_is_the_whole_memory():
    x = ember.arange(6, dtype=ember.float32)
    v = x[2:].view(2, 2)
    s = v.untyped_storage()
    assert isinstance(s, UntypedStorage) and is_storage(s) and not is_storage(x)
    assert s.size() == s.nbytes() == len(s) == 24 and s.element_size() == 1
    assert s.data_ptr() == x.data_ptr() == x.untyped_storage().data_ptr()
    assert s.device == ember.device("cpu") and not s.is_cuda
    assert s.tolist() == list(struct.pack("<6f", 0, 1, 2, 3, 4, 5))
    assert s[-1] == 64 and s[4:8].tolist() == list(struct.pack("<f", 1.0))
    assert s.type() == "torch.storage.UntypedStorage" and s.untyped() is s
    with pytest.raises(IndexError, match="index 24 out of range for storage of size 24"):
        s[24]
    with pytest.raises(TypeError, match="can't index a torch.UntypedStorage with float"):
        s[1.5]


def test_untyped_storage_writes_through():
    x = ember.zeros(2)
    s = x.untyped_storage()
    for i, b in enumerate(struct.pack("<f", 2.0)):
        s[4 + i] = b
    assert x.tolist() == [0.0, 2.0]
    s[0] = 256 + 1  # the low byte, as PyTorch keeps it
    assert s[0] == 1
    s.fill_(0)
    assert x.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="fill_ expects int, but got float"):
        s.fill_(1.5)
    s.copy_(ember.tensor([3.0, 4.0]).untyped_storage())
    assert x.tolist() == [3.0, 4.0]
    with pytest.raises(RuntimeError, match="size does not match, self was 8 bytes but src was "
                                           "4 bytes"):
        s.copy_(UntypedStorage(4))


def test_typed_storage():
    x = ember.arange(6, dtype=ember.float32)
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        ts = x[2:].storage()
    assert isinstance(ts, TypedStorage) and ts.dtype is ember.float32
    assert ts.size() == len(ts) == 6 and ts.nbytes() == 24 and ts.element_size() == 4
    assert ts.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and ts[-1] == 5.0
    assert ts.data_ptr() == x.data_ptr() and ts.untyped().nbytes() == 24
    assert ts.type() == "torch.FloatStorage" and ts.pickle_storage_type() == "FloatStorage"
    ts[0] = 100.0
    ts[1:3] = 7.0
    assert x.tolist() == [100.0, 7.0, 7.0, 3.0, 4.0, 5.0]
    ts.fill_(1.5)
    assert x.tolist() == [1.5] * 6
    assert ts.int().tolist() == [1] * 6 and ts.double().dtype is ember.float64
    assert ts.float() is ts
    c = ts.clone()
    c[0] = 9.0
    assert x[0].item() == 1.5 and c.data_ptr() != ts.data_ptr()
    with pytest.raises(RuntimeError, match="slices are only supported in "
                                           "UntypedStorage.__getitem__"):
        ts[1:3]
    with pytest.raises(IndexError, match="index 6 out of range for storage of size 6"):
        ts[6]


def test_storage_constructors_and_repr():
    assert UntypedStorage(3).tolist() == [0, 0, 0]
    assert UntypedStorage([1, 2, 300]).tolist() == [1, 2, 44]
    assert UntypedStorage().nbytes() == 0
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        ts = TypedStorage([1.5, 2])
    assert ts.dtype is ember.float32 and ts.tolist() == [1.5, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert TypedStorage(2, dtype=ember.int64).tolist() == [0, 0]
    assert repr(UntypedStorage([1, 2])) == " 1\n 2\n[ember.UntypedStorage(device=cpu) of size 2]"
    assert repr(ts) == " 1.5\n 2.0\n[ember.TypedStorage(dtype=ember.float32, device=cpu) of " \
                       "size 2]"
    meta = ember.zeros(3, device="meta").untyped_storage()
    assert repr(meta) == "...\n[ember.UntypedStorage(device=meta) of size 12]"


def test_storage_resize():
    s = UntypedStorage([1, 2])
    s.resize_(4)
    assert s.tolist() == [1, 2, 0, 0]
    s.resize_(1)
    assert s.tolist() == [1]
    # a tensor's memory cannot move under its NumPy views
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        ember.zeros(2).untyped_storage().resize_(16)


def test_tensor_resize_keeps_storage_order():
    x = ember.arange(6).view(2, 3).t()
    assert x.resize_(6).tolist() == [0, 1, 2, 3, 4, 5]  # storage order, not x's order
    x = ember.arange(6)
    x.resize_(2)
    assert x.resize_(6).tolist() == [0, 1, 2, 3, 4, 5]  # the memory was kept
    x = ember.arange(6.0)
    y = x[2:]
    y.resize_(2)
    assert y.storage_offset() == 2 and y.tolist() == [2.0, 3.0]
    y[0] = 100.0
    assert x[2].item() == 100.0  # still the same memory
    y.resize_(10)  # past the storage: new memory holding the old storage's bytes
    assert y.storage_offset() == 2 and y[:4].tolist() == [100.0, 3.0, 4.0, 5.0]
    assert y.untyped_storage().nbytes() == 48
    assert ember.arange(6.0).resize_(2, 2).stride() == (2, 1)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ember.zeros(2, requires_grad=True).resize_(3)
    with pytest.raises(NotImplementedError, match="channels_last"):
        ember.zeros(2).resize_(1, 2, 1, 1, memory_format=ember.channels_last)
    m = ember.zeros(2, device="meta").resize_(3, 4)
    assert m.is_meta and m.shape == (3, 4)


def test_set_and_is_set_to():
    x, y = ember.zeros(2), ember.arange(6.0)
    x.set_(y.untyped_storage(), 1, (2, 2), (2, 1))
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]] and x.storage_offset() == 1
    x[0, 0] = 9.0
    assert y[1].item() == 9.0
    assert x.set_(y.untyped_storage(), 4).tolist() == [4.0, 5.0]
    z = ember.zeros(3)
    z.set_(y)
    assert z.is_set_to(y) and y.is_set_to(z) and not y.is_set_to(y[1:])
    assert y.is_set_to(y.view(6))
    assert ember.zeros(2).set_(y, 1, (2,)).tolist() == [9.0, 2.0]
    assert ember.zeros(2).set_(_typed(y)).tolist() == y.tolist()
    assert ember.zeros(2).set_().shape == (0,)
    with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor "
                                           "of type float"):
        ember.zeros(2).set_(ember.arange(3))
    with pytest.raises(RuntimeError, match="Expected a Storage of type float or an "
                                           "UntypedStorage, but got type Long"):
        ember.zeros(2).set_(_typed(ember.arange(3)))
    with pytest.raises(RuntimeError, match="unequal size length \\(1\\) and stride length "
                                           "\\(2\\)"):
        ember.zeros(2).set_(y.untyped_storage(), 0, (2,), (1, 1))
    with pytest.raises(RuntimeError, match="Tensor: invalid storage offset -1"):
        ember.zeros(2).set_(y.untyped_storage(), -1, (2,))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ember.zeros(2, requires_grad=True).set_(ember.zeros(3))
