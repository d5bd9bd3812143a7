"""ember.utils.data without torch: datasets, samplers, collation, DataLoader (incl. workers)."""
import multiprocessing
import os
import time
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import ember
from ember.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                              IterableDataset, RandomSampler, SequentialSampler, StackDataset,
                              Subset, SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                              default_collate, default_convert, get_worker_info, random_split)


# ---- datasets used below (module level so worker processes can use them) ------------------------
class Squares(Dataset):
    def __init__(self, n=10):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i


class FailsAt(Dataset):
    def __init__(self, bad, n=8, exc=ValueError):
        self.bad, self.n, self.exc = bad, n, exc

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise self.exc(f"sample {i} is broken")
        return i


class WorkerReport(Dataset):
    """Each sample says which worker made it, that worker's seed, and a random draw there."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "worker": -1 if info is None else info.id,
                "seed": -1 if info is None else info.seed,
                "draw": float(ember.rand(1).item()), "pid": os.getpid()}


class Stream(IterableDataset):
    """0..n-1, split between workers by get_worker_info()."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


class DiesInWorker(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if get_worker_info() is not None:
            os._exit(3)
        return i


def _children():
    # processes still running that a DataLoader started
    return [p for p in multiprocessing.active_children() if p.is_alive()]


def _wait_no_children(timeout=5.0):
    end = time.time() + timeout
    while _children() and time.time() < end:
        time.sleep(0.05)
    return _children()


# ---- datasets ----------------------------------------------------------------------------
def test_tensor_dataset():
    x, y = ember.arange(12.).reshape(4, 3), ember.tensor([1, 0, 1, 1])
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert a.tolist() == [6.0, 7.0, 8.0] and b.item() == 1
    assert [t.tolist() for t in ds[1:3]] == [[[3., 4., 5.], [6., 7., 8.]], [0, 1]]


def test_tensor_dataset_size_mismatch():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(ember.zeros(3), ember.zeros(4))


def test_dataset_add_concat_and_negative_index():
    ds = Squares(3) + Squares(2)
    assert isinstance(ds, ConcatDataset)
    assert len(ds) == 5 and [ds[i] for i in range(5)] == [0, 1, 4, 0, 1]
    assert ds[-1] == 1 and ds[-5] == 0
    assert ds.cumulative_sizes == [3, 5]
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        ds[-6]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Stream(2)])


def test_chain_and_stack_dataset():
    assert list(Stream(2) + Stream(3)) == [0, 1, 0, 1, 2]
    assert isinstance(Stream(1) + Stream(1), ChainDataset)
    st = StackDataset(Squares(3), Squares(3))
    assert st[2] == (4, 4) and len(st) == 3
    assert StackDataset(a=Squares(2), b=Squares(2))[1] == {"a": 1, "b": 1}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(Squares(2), Squares(3))


def test_base_dataset_getitem_not_implemented():
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        Dataset()[0]


def test_subset():
    sub = Subset(Squares(10), [9, 2, 5])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [81, 4, 25]
    assert sub.__getitems__([0, 2]) == [81, 25]


def test_random_split_lengths_cover_everything():
    parts = random_split(Squares(10), [3, 7], generator=ember.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [3, 7]
    idx = parts[0].indices + parts[1].indices
    assert sorted(idx) == list(range(10))
    again = random_split(Squares(10), [3, 7], generator=ember.Generator().manual_seed(1))
    assert again[0].indices == parts[0].indices  # same generator seed, same split
    other = random_split(Squares(10), [3, 7], generator=ember.Generator().manual_seed(2))
    assert other[0].indices + other[1].indices != idx


def test_random_split_fractions_and_default_generator():
    # floor(10*0.3)=3, floor(10*0.3)=3, floor(10*0.4)=4 -> no remainder
    assert [len(p) for p in random_split(range(10), [0.3, 0.3, 0.4])] == [3, 3, 4]
    # floor(11*0.5)=5 twice, remainder 1 goes to the first split
    assert [len(p) for p in random_split(range(11), [0.5, 0.5])] == [6, 5]
    ember.manual_seed(5)
    a = random_split(range(6), [0.5, 0.5])[0].indices
    ember.manual_seed(5)
    assert random_split(range(6), [0.5, 0.5])[0].indices == a
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(range(10), [1.5, -0.5])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(2), [1.0, 0.0])


# ---- samplers ------------------------------------------------------------------------------------
def test_sequential_sampler():
    s = SequentialSampler(range(4))
    assert list(s) == [0, 1, 2, 3] and len(s) == 4


def test_random_sampler_permutation_and_generator():
    g = ember.Generator().manual_seed(3)
    s = RandomSampler(range(20), generator=g)
    first, second = list(s), list(s)
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert first != second  # a generator moves on between epochs
    assert list(RandomSampler(range(20), generator=ember.Generator().manual_seed(3))) == first
    ember.manual_seed(0)
    a = list(RandomSampler(range(20)))
    ember.manual_seed(0)
    assert list(RandomSampler(range(20))) == a  # without generator= the default one decides


def test_random_sampler_num_samples_and_replacement():
    s = RandomSampler(range(5), num_samples=12, generator=ember.Generator().manual_seed(0))
    out = list(s)
    assert len(out) == 12 == len(s)
    assert sorted(out[:5]) == list(range(5)) and sorted(out[5:10]) == list(range(5))
    r = RandomSampler(range(3), replacement=True, num_samples=70,
                      generator=ember.Generator().manual_seed(0))
    drawn = list(r)
    assert len(drawn) == 70 and set(drawn) == {0, 1, 2}
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got "
                                        "replacement=1"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but "
                                         "got num_samples=0"):
        RandomSampler(range(3), num_samples=0)


def test_subset_random_sampler():
    s = SubsetRandomSampler([10, 20, 30, 40], generator=ember.Generator().manual_seed(0))
    out = list(s)
    assert sorted(out) == [10, 20, 30, 40] and len(s) == 4


def test_weighted_random_sampler():
    g = ember.Generator().manual_seed(0)
    out = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 400, generator=g))
    assert set(out) == {1, 3}
    assert 0.65 < out.count(3) / 400 < 0.85  # expected 0.75
    out = list(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=g))
    assert sorted(out) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0, 2.0]], 2)


def test_batch_sampler():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got "
                                         "batch_size=0"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got "
                                         "drop_last=1"):
        BatchSampler(range(3), 2, 1)


# ---- collation -----------------------------------------------------------------------------------
def test_collate_tensors_stacked():
    out = default_collate([ember.tensor([1., 2.]), ember.tensor([3., 4.])])
    assert out.shape == (2, 2) and out.tolist() == [[1., 2.], [3., 4.]]
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([ember.zeros(2), ember.zeros(3)])


def test_collate_numbers_get_torch_dtypes():
    assert default_collate([1, 2]).dtype == ember.int64
    assert default_collate([1.5, 2.0]).dtype == ember.float64
    b = default_collate([True, False])
    assert b.dtype == ember.bool and b.tolist() == [True, False]
    a = default_collate([np.float32(1.0), np.float32(2.0)])
    assert a.dtype == ember.float32 and a.tolist() == [1.0, 2.0]
    arr = default_collate([np.zeros((2, 2), np.int32), np.ones((2, 2), np.int32)])
    assert arr.dtype == ember.int32 and arr.shape == (2, 2, 2)


def test_collate_structures():
    out = default_collate([(ember.zeros(2), 1, "a"), (ember.ones(2), 2, "b")])
    assert isinstance(out, list) and len(out) == 3
    assert out[0].tolist() == [[0., 0.], [1., 1.]] and out[1].tolist() == [1, 2]
    assert out[2] == ("a", "b")  # the transposed tuple, as PyTorch gives it
    assert default_collate(["a", "b"]) == ["a", "b"]
    d = default_collate([{"x": 1.0, "y": [1, 2]}, {"x": 2.0, "y": [3, 4]}])
    assert list(d) == ["x", "y"] and d["x"].tolist() == [1.0, 2.0]
    assert [t.tolist() for t in d["y"]] == [[1, 3], [2, 4]]
    od = default_collate([OrderedDict(b=1, a=2), OrderedDict(b=3, a=4)])
    assert isinstance(od, OrderedDict) and list(od) == ["b", "a"]
    P = namedtuple("P", "x y")
    p = default_collate([P(1, 2.0), P(3, 4.0)])
    assert isinstance(p, P) and p.x.tolist() == [1, 3] and p.y.dtype == ember.float64


def test_collate_errors():
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy "
                                        "arrays, numbers, dicts or lists; found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal "
                                           "size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert():
    out = default_convert((np.arange(3), {"a": np.float32(2)}, "s"))
    assert isinstance(out, list) and out[0].dtype == ember.int64 and out[2] == "s"
    assert out[1]["a"].dtype == ember.float32


# ---- DataLoader (main process) -------------------------------------------------------------------
def test_loader_batches_and_len():
    ds = TensorDataset(ember.arange(10.), ember.arange(10))
    dl = DataLoader(ds, batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 == len(batches)
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].dtype == ember.float32
    dl = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dl) == 2 and [b[1].tolist() for b in dl] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [b.tolist() for b in DataLoader(Squares(3))] == [[0], [1], [4]]


def test_loader_shuffle_reproducible_and_changes_per_epoch():
    ds = Squares(12)
    ember.manual_seed(0)
    dl = DataLoader(ds, batch_size=5, shuffle=True)
    e1 = [v for b in dl for v in b.tolist()]
    e2 = [v for b in dl for v in b.tolist()]
    assert sorted(e1) == sorted(i * i for i in range(12)) and e1 != e2
    ember.manual_seed(0)
    assert [v for b in DataLoader(ds, batch_size=5, shuffle=True) for v in b.tolist()] == e1
    g1 = [v for b in DataLoader(ds, 5, shuffle=True, generator=ember.Generator().manual_seed(7))
          for v in b.tolist()]
    g2 = [v for b in DataLoader(ds, 5, shuffle=True, generator=ember.Generator().manual_seed(7))
          for v in b.tolist()]
    assert g1 == g2


def test_loader_batch_size_none_and_collate_fn_and_batch_sampler():
    out = list(DataLoader(Squares(3), batch_size=None))
    assert out == [0, 1, 4]
    out = list(DataLoader(Squares(4), batch_size=2, collate_fn=lambda b: sum(b)))
    assert out == [1, 13]
    bs = [[3, 0], [1]]
    assert [b.tolist() for b in DataLoader(Squares(4), batch_sampler=bs)] == [[9, 0], [1]]
    s = DataLoader(Squares(4), sampler=[3, 2], batch_size=1)
    assert [b.tolist() for b in s] == [[9], [4]]


def test_loader_argument_errors():
    ds = Squares(4)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive with "
                                         "batch_size, shuffle, sampler, and drop_last"):
        DataLoader(ds, batch_size=2, batch_sampler=[[0]])
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, shuffle=True, sampler=[0])
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="batch_size=None option disables auto-batching"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got "
                                         "shuffle=True"):
        DataLoader(Stream(3), shuffle=True)
    dl = DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        dl.batch_size = 3


def test_loader_iterable_dataset():
    dl = DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(dl) == 3
    assert len(DataLoader(Stream(7), batch_size=3, drop_last=True)) == 2
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == \
        [[0, 1, 2], [3, 4, 5]]
    assert list(DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]


def test_exception_in_main_process_is_plain():
    with pytest.raises(ValueError, match="^sample 3 is broken$"):
        list(DataLoader(FailsAt(3), batch_size=2))


# ---- worker processes ---------------------------------------------------------------------------
def test_workers_same_order_as_main_process():
    ds = TensorDataset(ember.arange(23.), ember.arange(23))
    ember.manual_seed(11)
    ref = [y.tolist() for _, y in DataLoader(ds, batch_size=3, shuffle=True)]
    ember.manual_seed(11)
    got = [y.tolist() for _, y in DataLoader(ds, batch_size=3, shuffle=True, num_workers=3)]
    assert got == ref
    dl = DataLoader(ds, batch_size=3, num_workers=2, drop_last=True)
    assert [y.tolist() for _, y in dl] == [list(range(i, i + 3)) for i in range(0, 21, 3)]
    assert _wait_no_children() == []


def test_workers_distinct_seeds_and_worker_info():
    assert get_worker_info() is None
    batches = list(DataLoader(WorkerReport(), batch_size=2, num_workers=2))
    samples = [(i, w, s, d, p) for b in batches
               for i, w, s, d, p in zip(b["i"].tolist(), b["worker"].tolist(),
                                        b["seed"].tolist(), b["draw"].tolist(), b["pid"].tolist())]
    assert [s[0] for s in samples] == list(range(8))
    # batches go round-robin: batch k made by worker k % 2
    assert [s[1] for s in samples] == [0, 0, 1, 1, 0, 0, 1, 1]
    seeds = {w: s for _, w, s, _, _ in samples}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker_id
    pids = {w: p for _, w, _, _, p in samples}
    assert pids[0] != pids[1] and os.getpid() not in pids.values()
    draws = [s[3] for s in samples]
    assert len(set(draws)) == 8  # workers draw different random numbers
    # the first draw of each worker is that of ember seeded with the worker's seed
    for w in (0, 1):
        first = next(s[3] for s in samples if s[1] == w)
        ember.manual_seed(seeds[w])
        assert first == float(ember.rand(1).item())


def test_worker_init_fn_runs_in_each_worker(tmp_path):
    def init(worker_id):
        (tmp_path / f"w{worker_id}").write_text(str(get_worker_info().num_workers))

    list(DataLoader(Squares(4), batch_size=1, num_workers=2, worker_init_fn=init))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w0", "w1"]
    assert (tmp_path / "w1").read_text() == "2"


def test_worker_exception_reraised_with_traceback():
    with pytest.raises(ValueError) as info:
        for _ in DataLoader(FailsAt(5), batch_size=2, num_workers=2):
            pass
    msg = str(info.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.\n"
                          "Original Traceback (most recent call last):\n")
    assert "in __getitem__" in msg and "ValueError: sample 5 is broken" in msg
    del info
    assert _wait_no_children() == []


def test_worker_key_error_and_init_fn_error():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        list(DataLoader(FailsAt(3, exc=KeyError), batch_size=2, num_workers=2))

    def bad_init(worker_id):
        raise RuntimeError("init failed")

    with pytest.raises(RuntimeError, match="(?s)Caught RuntimeError in DataLoader worker process "
                                           "0.*init failed"):
        list(DataLoader(Squares(4), num_workers=1, worker_init_fn=bad_init))
    assert _wait_no_children() == []


def test_workers_stop_when_iterator_dropped():
    it = iter(DataLoader(Squares(50), batch_size=1, num_workers=2))
    assert next(it).tolist() == [0]
    assert len(_children()) == 2
    del it
    assert _wait_no_children() == []


def test_dead_worker_is_reported():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+.*\) exited "
                                           "unexpectedly"):
        list(DataLoader(DiesInWorker(), batch_size=1, num_workers=2))
    assert _wait_no_children() == []


def test_iterable_dataset_with_workers():
    # each worker streams its share; batches alternate between workers
    got = [b.tolist() for b in DataLoader(Stream(10), batch_size=2, num_workers=2)]
    assert got == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]
    assert _wait_no_children() == []


def test_persistent_workers_reused_across_epochs():
    dl = DataLoader(WorkerReport(), batch_size=4, num_workers=2, persistent_workers=True)
    e1 = list(dl)
    it = dl._iterator
    e2 = list(dl)
    assert dl._iterator is it
    assert set(e1[0]["pid"].tolist() + e1[1]["pid"].tolist()) == \
        set(e2[0]["pid"].tolist() + e2[1]["pid"].tolist())
    assert [b["i"].tolist() for b in e2] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert e1[0]["draw"].tolist() != e2[0]["draw"].tolist()  # the workers' streams go on
    # an unfinished epoch followed by a new one
    it = iter(dl)
    next(it)
    assert [b["i"].tolist() for b in dl] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    del dl, it, e1, e2
    import gc
    gc.collect()
    assert _wait_no_children() == []


def test_timeout_error():
    class Slow(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(0.8)
            return i

    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.1 seconds"):
        list(DataLoader(Slow(), num_workers=1, timeout=0.1))
    assert _wait_no_children(timeout=10) == []


class _Ints(Dataset[int]):
    def __getitem__(self, i):
        return i

    def __len__(self):
        return 5


def test_dataset_sampler_loader_are_generic():
    # type annotations as PyTorch code writes them: Dataset[Tensor], Sampler[int], ...
    from ember.utils.data import IterableDataset, Sampler
    assert Dataset[ember.Tensor].__origin__ is Dataset
    assert Sampler[int].__origin__ is Sampler and IterableDataset[int].__origin__
    assert DataLoader[int].__origin__ is DataLoader
    batches = DataLoader(_Ints(), batch_size=2, num_workers=1)
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3], [4]]


# ---- the TensorDataset batch path: one gather per tensor instead of a stack of samples ------
class _SampleByIndex(TensorDataset):
    """A subclass: the loader takes the general path (sample by sample, then collate)."""


def _batches(dataset, **kw):
    return list(DataLoader(dataset, **kw))


def test_tensor_dataset_batches_equal_the_collated_samples():
    g = ember.Generator().manual_seed(0)
    x = ember.randn(23, 3, 4, generator=g)
    y = ember.arange(23)
    z = ember.randn(23, generator=g) > 0
    fast = _batches(TensorDataset(x, y, z), batch_size=5, shuffle=True,
                    generator=ember.Generator().manual_seed(3))
    slow = _batches(_SampleByIndex(x, y, z), batch_size=5, shuffle=True,
                    generator=ember.Generator().manual_seed(3))
    assert len(fast) == len(slow) == 5
    for a, b in zip(fast, slow):
        assert type(a) is list and type(b) is list and len(a) == 3
        for ta, tb in zip(a, b):
            assert ta.dtype == tb.dtype and ta.shape == tb.shape
            assert ember.equal(ta, tb)


def test_tensor_dataset_batch_path_keeps_negative_indices_and_errors():
    x = ember.arange(10.0).reshape(5, 2)
    batches = _batches(TensorDataset(x), batch_sampler=[[-1, 0], [4, -5]])
    assert batches[0][0].tolist() == [[8.0, 9.0], [0.0, 1.0]]
    assert batches[1][0].tolist() == [[8.0, 9.0], [0.0, 1.0]]
    # out of range: the general path's error (the sample's own indexing)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 5"):
        _batches(TensorDataset(x), batch_sampler=[[0, 5]])


def test_tensor_dataset_requiring_grad_takes_the_sample_path():
    x = ember.randn(4, 2, requires_grad=True)
    (batch,) = _batches(TensorDataset(x), batch_size=4)[0]
    assert batch.grad_fn is not None  # the stacked samples, differentiable back to x
    (batch * ember.arange(4.0)[:, None]).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
