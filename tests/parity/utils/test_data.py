"""ember.utils.data against torch.utils.data: collation, batching, lengths, errors, workers."""
from collections import OrderedDict, namedtuple

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import ember
import ember.utils.data as eud

P = namedtuple("P", "x y")


def _norm(obj):
    """A library-neutral picture of a (nested) batch: tensors become (dtype, shape, values)."""
    if isinstance(obj, (torch.Tensor, ember.Tensor)):
        return ("T", str(obj.dtype).split(".")[-1], tuple(obj.shape), obj.tolist())
    if isinstance(obj, dict):
        return (type(obj).__name__, [(k, _norm(v)) for k, v in obj.items()])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_norm(v) for v in obj])
    return (type(obj).__name__, obj)


def _batches(lib):
    t = lib.tensor
    return [
        [t([1., 2.]), t([3., 4.])],
        [t([[1, 2]], dtype=lib.int32), t([[3, 4]], dtype=lib.int32)],
        [1, 2, 3],
        [1.5, 2.5],
        [True, False],
        ["a", "b"],
        [np.float32(1.0), np.float32(2.5)],
        [np.int16(3), np.int16(4)],
        [np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.uint8)],
        [np.zeros((2, 2), dtype=np.float16), np.ones((2, 2), dtype=np.float16)],
        [(t([1.]), 1, "x"), (t([2.]), 2, "y")],
        [[t([1.]), 2.0], [t([3.]), 4.0]],
        [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
        [OrderedDict(z=t([1]), y=True), OrderedDict(z=t([2]), y=False)],
    ]


@pytest.mark.parametrize("k", range(len(_batches(torch))))
def test_default_collate_matches_torch(k):
    expected = _norm(tud.default_collate(_batches(torch)[k]))
    got = _norm(eud.default_collate(_batches(ember)[k]))
    assert got == expected


def test_collate_namedtuple_matches_torch():
    tp = tud.default_collate([P(1, 2.0), P(3, 4.0)])
    ep = eud.default_collate([P(1, 2.0), P(3, 4.0)])
    assert type(ep) is type(tp) is P
    assert _norm(list(ep)) == _norm(list(tp))


@pytest.mark.parametrize("data", [(np.arange(3), {"a": np.float32(2)}, "s", [np.int8(1)]),
                                  np.arange(4.0).reshape(2, 2)])
def test_default_convert_matches_torch(data):
    assert _norm(eud.default_convert(data)) == _norm(tud.default_convert(data))


@pytest.mark.parametrize("batch", [[object(), object()], [[1, 2], [3]],
                                   [np.array(["a"]), np.array(["b"])]])
def test_collate_errors_match_torch(batch):
    with pytest.raises(Exception) as t_err:
        tud.default_collate(batch)
    with pytest.raises(Exception) as e_err:
        eud.default_collate(batch)
    assert type(e_err.value) is type(t_err.value)
    assert str(e_err.value) == str(t_err.value)


def test_stack_error_matches_torch():
    with pytest.raises(RuntimeError) as t_err:
        tud.default_collate([torch.zeros(2), torch.zeros(3)])
    with pytest.raises(RuntimeError) as e_err:
        eud.default_collate([ember.zeros(2), ember.zeros(3)])
    assert str(e_err.value) == str(t_err.value)


class _Sq:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * i


def _make_iterable(mod):
    class Stream(mod.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            info = mod.get_worker_info()
            if info is None:
                return iter(range(self.n))
            return iter(range(info.id, self.n, info.num_workers))

        def __len__(self):
            return self.n
    return Stream


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, False), (1, 4, False),
                                       (7, 1, True), (0, 2, False)])
def test_sequential_batches_and_len_match_torch(n, bs, drop):
    t = tud.DataLoader(_Sq(n), batch_size=bs, drop_last=drop)
    e = eud.DataLoader(_Sq(n), batch_size=bs, drop_last=drop)
    assert len(e) == len(t)
    assert [_norm(b) for b in e] == [_norm(b) for b in t]
    ti = tud.DataLoader(_make_iterable(tud)(n), batch_size=bs, drop_last=drop)
    ei = eud.DataLoader(_make_iterable(eud)(n), batch_size=bs, drop_last=drop)
    assert len(ei) == len(ti)
    assert [_norm(b) for b in ei] == [_norm(b) for b in ti]


def test_batch_size_none_matches_torch():
    t = [_norm(b) for b in tud.DataLoader(_Sq(3), batch_size=None)]
    assert [_norm(b) for b in eud.DataLoader(_Sq(3), batch_size=None)] == t


@pytest.mark.parametrize("kwargs", [
    dict(batch_size=2, batch_sampler=[[0]]),
    dict(shuffle=True, sampler=[0]),
    dict(num_workers=-1),
    dict(persistent_workers=True),
    dict(batch_size=None, drop_last=True),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(num_workers=1, prefetch_factor=-1),
    dict(multiprocessing_context="fork"),
    dict(num_workers=1, multiprocessing_context="nope"),
])
def test_loader_argument_errors_match_torch(kwargs):
    with pytest.raises(Exception) as t_err:
        tud.DataLoader(_Sq(4), **kwargs)
    with pytest.raises(Exception) as e_err:
        eud.DataLoader(_Sq(4), **kwargs)
    assert type(e_err.value) is type(t_err.value)
    assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(sampler=[0]),
                                    dict(batch_sampler=[[0]])])
def test_iterable_dataset_argument_errors_match_torch(kwargs):
    with pytest.raises(ValueError) as t_err:
        tud.DataLoader(_make_iterable(tud)(3), **kwargs)
    with pytest.raises(ValueError) as e_err:
        eud.DataLoader(_make_iterable(eud)(3), **kwargs)
    # the sampler's repr is part of the message; compare the words before it
    assert str(e_err.value).split("=")[0] == str(t_err.value).split("=")[0]


@pytest.mark.parametrize("args", [(range(7), 3, False), (range(7), 3, True), (range(6), 2, True),
                                  (range(3), 0, False), (range(3), 2, 1), (range(3), True, False)])
def test_batch_sampler_matches_torch(args):
    try:
        expected = (list(tud.BatchSampler(*args)), len(tud.BatchSampler(*args)))
    except ValueError as t_err:
        with pytest.raises(ValueError) as e_err:
            eud.BatchSampler(*args)
        assert str(e_err.value) == str(t_err)
        return
    e = eud.BatchSampler(*args)
    assert (list(e), len(e)) == expected


@pytest.mark.parametrize("n,lengths", [(10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]), (7, [0.1, 0.9]),
                                       (10, [3, 7]), (5, [1.0])])
def test_random_split_lengths_match_torch(n, lengths):
    t = [len(s) for s in tud.random_split(range(n), lengths)]
    e = [len(s) for s in eud.random_split(range(n), lengths)]
    assert e == t


def test_random_sampler_errors_match_torch():
    for kwargs in [dict(replacement=1), dict(num_samples=0), dict(num_samples=2.5)]:
        with pytest.raises(Exception) as t_err:
            tud.RandomSampler(range(3), **kwargs)
        with pytest.raises(Exception) as e_err:
            eud.RandomSampler(range(3), **kwargs)
        assert type(e_err.value) is type(t_err.value) and str(e_err.value) == str(t_err.value)


def test_tensor_dataset_matches_torch():
    x = np.arange(12.0).reshape(4, 3)
    t = tud.TensorDataset(torch.tensor(x), torch.arange(4))
    e = eud.TensorDataset(ember.tensor(x), ember.arange(4))
    assert len(e) == len(t) and _norm(e[2]) == _norm(t[2])
    with pytest.raises(AssertionError) as t_err:
        tud.TensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(AssertionError) as e_err:
        eud.TensorDataset(ember.zeros(3), ember.zeros(4))
    assert str(e_err.value) == str(t_err.value)


def test_iterable_workers_order_matches_torch():
    t = [_norm(b) for b in tud.DataLoader(_make_iterable(tud)(9), batch_size=2, num_workers=2)]
    e = [_norm(b) for b in eud.DataLoader(_make_iterable(eud)(9), batch_size=2, num_workers=2)]
    assert e == t


class _Fails:
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise ValueError("broken sample")
        return i


def test_worker_error_message_matches_torch():
    msgs = []
    for mod in (tud, eud):
        with pytest.raises(ValueError) as err:
            list(mod.DataLoader(_Fails(), batch_size=2, num_workers=2))
        msgs.append(str(err.value))
    t, e = msgs
    assert e.splitlines()[:2] == t.splitlines()[:2]
    assert e.rstrip().splitlines()[-1] == t.rstrip().splitlines()[-1] == "ValueError: broken sample"
