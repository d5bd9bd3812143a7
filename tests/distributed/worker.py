"""What each rank runs in the distributed tests (``mpiexec -n N python worker.py CASE``).

Every case checks its results itself against definitions computed on the rank (NumPy,
or a single-process run of the same training) and raises on a mismatch, so a failing
rank aborts the job; the test reads ``ok <case> rank <r>`` lines from the output.
"""
import datetime
import os
import sys
import time

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.parallel import DistributedDataParallel as DDP


def rank_values(r, shape, dtype, seed=0):
    """Rank ``r``'s input: the same on every rank that computes it (for the expectations)."""
    rng = np.random.default_rng(seed + 100 * r)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(0.5, 2.0, shape).astype(dtype)
    return rng.integers(-5, 6, shape).astype(dtype)


def check(name, got, want, rtol=1e-6):
    got = np.asarray(got)
    if got.dtype != np.asarray(want).dtype or got.shape != np.asarray(want).shape:
        raise AssertionError(f"{name}: dtype/shape {got.dtype}{got.shape} != "
                             f"{np.asarray(want).dtype}{np.asarray(want).shape}")
    if not np.allclose(got, want, rtol=rtol, atol=0):
        raise AssertionError(f"{name}: {got} != {want}")


def case_collectives(rank, size):
    shape = (3, 4)
    reductions = {dist.ReduceOp.SUM: np.sum, dist.ReduceOp.PRODUCT: np.prod,
                  dist.ReduceOp.MAX: np.max, dist.ReduceOp.MIN: np.min}
    for dtype in (np.float32, np.float64, np.int64):
        everyone = np.stack([rank_values(r, shape, dtype) for r in range(size)])
        mine = everyone[rank]
        ops = dict(reductions)
        if dtype != np.int64:
            ops[dist.ReduceOp.AVG] = lambda a, axis: np.sum(a, axis=axis) / size
        for op, fn in ops.items():
            want = fn(everyone, axis=0).astype(dtype)
            t = ember.tensor(mine)
            dist.all_reduce(t, op=op)
            check(f"all_reduce {op!r} {dtype.__name__}", t.numpy(), want)
            # non-contiguous, asynchronous
            t = ember.tensor(np.ascontiguousarray(mine.T)).t()
            work = dist.all_reduce(t, op=op, async_op=True)
            work.wait()
            assert work.is_completed()
            check(f"all_reduce async non-contiguous {op!r}", t.numpy(), want)
            # reduce into rank size-1
            t = ember.tensor(mine)
            dist.reduce(t, dst=size - 1, op=op)
            check(f"reduce {op!r}", t.numpy(), want if rank == size - 1 else mine)
        if dtype == np.int64:
            t = ember.tensor(mine)
            try:
                dist.all_reduce(t, op=dist.ReduceOp.AVG)
                raise AssertionError("AVG on int64 did not raise")
            except RuntimeError as e:
                assert str(e) == ("result type Float can't be cast to the desired output "
                                  "type Long"), e
        # broadcast from the last rank
        t = ember.tensor(mine)
        dist.broadcast(t, src=size - 1)
        check("broadcast", t.numpy(), everyone[size - 1])
        # all_gather and all_gather_into_tensor
        outs = [ember.zeros(shape, dtype=t.dtype) for _ in range(size)]
        dist.all_gather(outs, ember.tensor(mine))
        for r in range(size):
            check("all_gather", outs[r].numpy(), everyone[r])
        out = ember.zeros((size * shape[0], shape[1]), dtype=t.dtype)
        dist.all_gather_into_tensor(out, ember.tensor(mine))
        check("all_gather_into_tensor", out.numpy(), everyone.reshape(-1, shape[1]))
        # reduce_scatter: rank r gets the sum over ranks of their r-th chunk
        chunks = np.stack([rank_values(r, (size,) + shape, dtype, seed=7) for r in range(size)])
        out = ember.zeros(shape, dtype=t.dtype)
        dist.reduce_scatter(out, [ember.tensor(c) for c in chunks[rank]])
        check("reduce_scatter", out.numpy(), chunks[:, rank].sum(axis=0).astype(dtype))
        out = ember.zeros(shape, dtype=t.dtype)
        dist.reduce_scatter_tensor(out, ember.tensor(chunks[rank].reshape(-1, shape[1])),
                                   op=dist.ReduceOp.MAX)
        check("reduce_scatter_tensor", out.numpy(), chunks[:, rank].max(axis=0))
        # gather to rank 0, scatter from rank 0
        gathered = [ember.zeros(shape, dtype=t.dtype) for _ in range(size)] if rank == 0 else None
        dist.gather(ember.tensor(mine), gathered, dst=0)
        if rank == 0:
            for r in range(size):
                check("gather", gathered[r].numpy(), everyone[r])
        t = ember.zeros(shape, dtype=t.dtype)
        dist.scatter(t, [ember.tensor(e) for e in everyone] if rank == 0 else None, src=0)
        check("scatter", t.numpy(), everyone[rank])
        # point to point: a ring, blocking and non-blocking
        nxt, prev = (rank + 1) % size, (rank - 1) % size
        box = ember.zeros(shape, dtype=t.dtype)
        recv_work = dist.irecv(box, src=prev)
        send_work = dist.isend(ember.tensor(mine), dst=nxt)
        send_work.wait()
        recv_work.wait()
        check("isend/irecv", box.numpy(), everyone[prev])
        if rank == 0:
            dist.send(ember.tensor(mine), dst=1)
        elif rank == 1:
            box = ember.zeros(shape, dtype=t.dtype)
            assert dist.recv(box) == 0
            check("send/recv", box.numpy(), everyone[0])
    # float16 and bfloat16 reduce in float32, rounded once
    for dtype in (ember.float16, ember.bfloat16):
        everyone = [rank_values(r, (5,), np.float32) for r in range(size)]
        t = ember.tensor(everyone[rank]).to(dtype)
        dist.all_reduce(t)
        want = ember.tensor(sum(ember.tensor(e).to(dtype).to(ember.float32).numpy()
                                for e in everyone)).to(dtype)
        assert t.dtype == dtype and bool((t == want).all()), (t, want)
    # bool reduces as logical or / and
    flags = ember.tensor([rank == 0, True, False])
    dist.all_reduce(flags)
    check("bool all_reduce", flags.numpy(), np.array([True, True, False]))
    dist.barrier()
    # a sub-group of the even ranks
    evens = list(range(0, size, 2))
    g = dist.new_group(evens)
    if rank in evens:
        t = ember.tensor([float(rank)])
        dist.all_reduce(t, group=g)
        check("new_group all_reduce", t.numpy(), np.array([float(sum(evens))], np.float32))
        assert dist.get_world_size(g) == len(evens)
    else:
        assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
    assert dist.get_backend() == "mpi"


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        return self.fc(self.pool(F.relu(self.conv(x))).flatten(1))


def batch(seed=1, n=8):
    rng = np.random.default_rng(seed)
    x = ember.tensor(rng.standard_normal((n, 1, 8, 8)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 3, n))
    return x, y


def train(model, steps, shard):
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        x, y = batch(seed=step)
        x, y = x[shard], y[shard]
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()


def case_ddp(rank, size):
    """DDP on a shard of each batch == one process on the whole batch."""
    ember.manual_seed(rank)  # different on each rank: DDP must broadcast rank 0's
    model = DDP(TinyCNN(), bucket_cap_mb=0.0005)  # several buckets for the small model
    assert len(model.reducer.buckets) > 1
    n = 8 // size
    train(model, 3, slice(rank * n, (rank + 1) * n))
    ember.manual_seed(0)
    reference = TinyCNN()
    train(reference, 3, slice(None))
    for (name, p), q in zip(model.module.named_parameters(), reference.parameters()):
        diff = float((p - q).abs().max())
        if diff > 1e-6:
            raise AssertionError(f"{name} differs from the single process by {diff}")
    assert list(model.state_dict())[0] == "module.conv.weight"
    # every bucket's all-reduce started while backward still ran
    assert model.reducer.started_in_backward == len(model.reducer.buckets)
    expect_error(ValueError, "device_ids and output_device arguments only work",
                 lambda: DDP(TinyCNN(), device_ids=[0]))
    expect_error(RuntimeError, "DistributedDataParallel is not needed when a module doesn't "
                 "have any parameter", lambda: DDP(nn.ReLU()))
    expect_error(NotImplementedError, "static_graph=True", lambda: DDP(TinyCNN(),
                                                                       static_graph=True))


def case_buffers(rank, size):
    """broadcast_buffers: rank 0's buffers reach every rank before each forward."""
    bn = nn.BatchNorm1d(3)
    model = DDP(nn.Sequential(nn.Linear(2, 3), bn))
    bn.running_mean.fill_(float(rank))  # let the ranks drift apart
    model.eval()
    with ember.no_grad():
        model(ember.ones(4, 2))
    check("running_mean", bn.running_mean.numpy(), np.zeros(3, np.float32))
    plain = DDP(nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)), broadcast_buffers=False)
    plain.module[1].running_mean.fill_(float(rank))
    plain.eval()
    with ember.no_grad():
        plain(ember.ones(4, 2))
    check("running_mean kept", plain.module[1].running_mean.numpy(),
          np.full(3, float(rank), np.float32))


def expect_error(kind, text, fn):
    try:
        fn()
    except kind as e:
        assert text in str(e), e
    else:
        raise AssertionError(f"no {kind.__name__}: {text}")


def case_no_sync(rank, size):
    """Gradients accumulated under no_sync stay local; the next synchronised backward
    averages the accumulated sums."""
    lin = nn.Linear(2, 1, bias=False)
    model = DDP(lin)
    w0 = lin.weight.detach().numpy().copy()
    xs = [np.full((1, 2), float(r + 1 + 10 * k), np.float32) for k in range(2)
          for r in range(size)]
    with model.no_sync():
        model(ember.tensor(xs[rank])).sum().backward()
    local = lin.weight.grad.numpy().copy()
    check("no_sync keeps the local gradient", local, xs[rank])
    model(ember.tensor(xs[size + rank])).sum().backward()
    total = sum(xs[r] + xs[size + r] for r in range(size)) / size
    check("sync after no_sync", lin.weight.grad.numpy(), total.astype(np.float32))
    check("weights untouched", lin.weight.detach().numpy(), w0)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 1)
        self.b = nn.Linear(2, 1)
        self.never = nn.Linear(2, 1)

    def forward(self, x, use_b):
        return self.a(x) + (self.b(x) if use_b else 0)


class Chain(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x, skip):
        h = self.l1(x)
        return self.l3(h if skip else self.l2(h))


def case_unused(rank, size):
    """find_unused_parameters: a head only rank 0 uses counts as zero elsewhere, a head
    no rank uses keeps grad None; without the flag the next forward raises."""
    model = DDP(TwoHeads(), find_unused_parameters=True)
    x = ember.ones(1, 2) * (rank + 1)
    model(x, use_b=rank == 0).sum().backward()
    mean = sum(r + 1 for r in range(size)) / size
    check("used everywhere", model.module.a.weight.grad.numpy(),
          np.full((1, 2), mean, np.float32))
    check("used on rank 0 only", model.module.b.weight.grad.numpy(),
          np.full((1, 2), 1.0 / size, np.float32))
    assert model.module.never.weight.grad is None
    # one bucket per parameter, rank 1 skipping a middle layer: the ranks fill different
    # buckets during backward, yet their all-reduces must pair up
    ember.manual_seed(0)
    chain = Chain()
    state = {k: v.clone() for k, v in chain.state_dict().items()}
    model = DDP(chain, find_unused_parameters=True, bucket_cap_mb=1e-5)
    assert len(model.reducer.buckets) == 6
    for step in range(2):
        chain.zero_grad()
        model(ember.ones(1, 2) * (rank + 1), skip=rank == 1).sum().backward()
    want = {n: np.zeros(p.shape, np.float32) for n, p in chain.named_parameters()}
    for r in range(size):
        ref = Chain()
        ref.load_state_dict(state)
        ref(ember.ones(1, 2) * (r + 1), skip=r == 1).sum().backward()
        for n, p in ref.named_parameters():
            if p.grad is not None:
                want[n] += p.grad.numpy() / size
    for n, p in chain.named_parameters():
        check(f"chain {n}", p.grad.numpy(), want[n], rtol=1e-5)
    strict = DDP(TwoHeads())
    strict(x, use_b=True).sum().backward()
    try:
        strict(x, use_b=True)
    except RuntimeError as e:
        assert "Expected to have finished reduction in the prior iteration" in str(e), e
        assert f"did not receive grad for rank {rank}: 4 5" in str(e), e
    else:
        raise AssertionError("no error for parameters without a gradient")


def case_raise(rank, size):
    """Rank 1 raises while the others wait in a collective: the job must end."""
    if rank == 1:
        raise ValueError("boom on purpose")
    dist.all_reduce(ember.ones(3))


def case_timeout(rank, size):
    """Rank 1 never joins the collective: rank 0's wait ends at the group's timeout."""
    if rank == 1:
        time.sleep(60)
    dist.all_reduce(ember.ones(3))


def check_init_errors():
    """Before the real init: arguments and env:// variables that disagree with MPI."""
    try:
        dist.get_rank()
    except ValueError as e:
        assert "Default process group has not been initialized" in str(e)
    else:
        raise AssertionError("get_rank before init did not raise")
    for kwargs in (dict(world_size=99), dict(rank=99)):
        try:
            dist.init_process_group("mpi", **kwargs)
        except ValueError as e:
            assert "does not match MPI's" in str(e), e
        else:
            raise AssertionError(f"init_process_group({kwargs}) did not raise")
    os.environ["WORLD_SIZE"] = "99"
    try:
        dist.init_process_group("mpi", init_method="env://")
    except ValueError as e:
        assert "WORLD_SIZE variable" in str(e), e
    else:
        raise AssertionError("a wrong WORLD_SIZE did not raise")
    del os.environ["WORLD_SIZE"]
    assert not dist.is_initialized()


def main():
    case = sys.argv[1]
    check_init_errors()
    timeout = datetime.timedelta(seconds=3) if case == "timeout" else None
    dist.init_process_group("mpi", timeout=timeout)
    assert dist.is_initialized()
    rank, size = dist.get_rank(), dist.get_world_size()
    globals()[f"case_{case}"](rank, size)
    dist.barrier()
    print(f"ok {case} rank {rank}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
