"""Each rank runs the same operations on torch.distributed (gloo) and ember.distributed
(MPI) and compares values, gradients and error messages (``mpiexec -n N python worker.py
PORT``). Prints ``ok parity rank <r>``; any mismatch raises, which aborts the job."""
import os
import sys

import numpy as np
import torch
import torch.distributed as td
import torch.nn as tnn

import ember
import ember.distributed as dist
import ember.nn as enn


def same(name, ours, theirs, rtol=1e-6, atol=0.0):
    a, b = np.asarray(ours), np.asarray(theirs)
    if a.dtype != b.dtype or a.shape != b.shape:
        raise AssertionError(f"{name}: {a.dtype}{a.shape} vs torch {b.dtype}{b.shape}")
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=name)


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (any class: it is compared)
        return type(e).__name__, str(e)
    return None


def same_error(name, ours, theirs, prefix_only=False):
    a, b = error_of(ours), error_of(theirs)
    if a is None or b is None:
        raise AssertionError(f"{name}: ember {a}, torch {b}")
    if prefix_only:
        b = (b[0], b[1][:len(a[1])])
    if a != b:
        raise AssertionError(f"{name}:\n ember {a}\n torch {b}")


def values(rank, shape, dtype, seed=0):
    rng = np.random.default_rng(seed + 31 * rank)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(0.5, 1.5, shape).astype(dtype)
    return rng.integers(1, 7, shape).astype(dtype)


def collectives(rank, size):
    shape = (2, 3)
    for dtype in (np.float32, np.float64, np.int64):
        ops = ["SUM", "PRODUCT", "MIN", "MAX"] + (["BAND", "BOR", "BXOR"]
                                                   if dtype == np.int64 else [])
        for op in ops:
            a = values(rank, shape, dtype)
            t, e = torch.tensor(a), ember.tensor(a)
            td.all_reduce(t, op=getattr(td.ReduceOp, op))
            dist.all_reduce(e, op=getattr(dist.ReduceOp, op))
            same(f"all_reduce {op} {dtype.__name__}", e.numpy(), t.numpy())
            t, e = torch.tensor(a), ember.tensor(a)
            td.reduce(t, dst=size - 1, op=getattr(td.ReduceOp, op))
            dist.reduce(e, dst=size - 1, op=getattr(dist.ReduceOp, op))
            if rank == size - 1:
                same(f"reduce {op}", e.numpy(), t.numpy())
        a = values(rank, shape, dtype, seed=5)
        t, e = torch.tensor(a), ember.tensor(a)
        td.broadcast(t, src=1)
        dist.broadcast(e, src=1)
        same("broadcast", e.numpy(), t.numpy())
        tl = [torch.zeros(shape, dtype=t.dtype) for _ in range(size)]
        el = [ember.zeros(shape, dtype=e.dtype) for _ in range(size)]
        td.all_gather(tl, torch.tensor(a))
        dist.all_gather(el, ember.tensor(a))
        for i in range(size):
            same("all_gather", el[i].numpy(), tl[i].numpy())
        t = torch.zeros((size * shape[0], shape[1]), dtype=t.dtype)
        e = ember.zeros((size * shape[0], shape[1]), dtype=e.dtype)
        td.all_gather_into_tensor(t, torch.tensor(a))
        dist.all_gather_into_tensor(e, ember.tensor(a))
        same("all_gather_into_tensor", e.numpy(), t.numpy())
        tl = [torch.zeros(shape, dtype=t.dtype) for _ in range(size)] if rank == 0 else None
        el = [ember.zeros(shape, dtype=e.dtype) for _ in range(size)] if rank == 0 else None
        td.gather(torch.tensor(a), tl)
        dist.gather(ember.tensor(a), el)
        if rank == 0:
            for i in range(size):
                same("gather", el[i].numpy(), tl[i].numpy())
        parts = [values(i, shape, dtype, seed=9) for i in range(size)]
        t, e = torch.zeros(shape, dtype=t.dtype), ember.zeros(shape, dtype=e.dtype)
        td.scatter(t, [torch.tensor(p) for p in parts] if rank == 0 else None)
        dist.scatter(e, [ember.tensor(p) for p in parts] if rank == 0 else None)
        same("scatter", e.numpy(), t.numpy())


def errors(rank, size):
    other = (rank + 1) % size
    same_error("gather_list on the wrong rank",
               lambda: dist.gather(ember.ones(1), [ember.ones(1)] * size if rank else None),
               lambda: td.gather(torch.ones(1), [torch.ones(1)] * size if rank else None))
    same_error("scatter_list missing at the source",
               lambda: dist.scatter(ember.ones(1), None, src=rank),
               lambda: td.scatter(torch.ones(1), None, src=rank))
    same_error("send to self", lambda: dist.send(ember.ones(1), dst=rank),
               lambda: td.send(torch.ones(1), dst=rank))
    same_error("broadcast without src", lambda: dist.broadcast(ember.ones(1)),
               lambda: td.broadcast(torch.ones(1)))
    same_error("both src and group_src",
               lambda: dist.broadcast(ember.ones(1), src=other, group_src=other),
               lambda: td.broadcast(torch.ones(1), src=other, group_src=other))
    same_error("AVG of integers",
               lambda: dist.all_reduce(ember.ones(2, dtype=ember.int64), op=dist.ReduceOp.AVG),
               lambda: td.all_reduce(torch.ones(2, dtype=torch.int64), op=td.ReduceOp.AVG))
    same_error("a list for a tensor", lambda: dist.all_reduce([ember.ones(1)]),
               lambda: td.all_reduce([torch.ones(1)]))


def heads(lib):
    class TwoHeads(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(3, 2)
            self.b = lib.nn.Linear(3, 2)
            self.never = lib.nn.Linear(3, 2)

        def forward(self, x, use_b):
            return self.a(x) + (self.b(x) if use_b else 0)
    return TwoHeads()


def pair(make_torch, make_ember):
    t, e = make_torch(), make_ember()
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, e


def grads_equal(name, e_model, t_model):
    for (n, ep), tp in zip(e_model.named_parameters(), t_model.parameters()):
        if (ep.grad is None) != (tp.grad is None):
            raise AssertionError(f"{name} {n}: ember grad {ep.grad}, torch grad {tp.grad}")
        if ep.grad is not None:
            same(f"{name} {n}", ep.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-7)


def ddp(rank, size):
    torch.manual_seed(rank)  # different weights per rank: DDP broadcasts rank 0's
    t_model, e_model = pair(lambda: heads(torch), lambda: heads(ember))
    t_ddp = tnn.parallel.DistributedDataParallel(t_model, find_unused_parameters=True)
    e_ddp = enn.parallel.DistributedDataParallel(e_model, find_unused_parameters=True)
    x = values(rank, (4, 3), np.float32)
    for step in range(2):  # b used on rank 0 only, then on all ranks
        use_b = rank == 0 or step == 1
        t_ddp(torch.tensor(x), use_b).square().sum().backward()
        e_ddp(ember.tensor(x), use_b).square().sum().backward()
        grads_equal(f"find_unused step {step}", e_model, t_model)
    with t_ddp.no_sync():
        t_ddp(torch.tensor(x), True).sum().backward()
    with e_ddp.no_sync():
        e_ddp(ember.tensor(x), True).sum().backward()
    grads_equal("no_sync", e_model, t_model)
    t_ddp(torch.tensor(x), True).sum().backward()
    e_ddp(ember.tensor(x), True).sum().backward()
    grads_equal("after no_sync", e_model, t_model)
    # without find_unused_parameters: the error at the next forward
    t_model, e_model = pair(lambda: heads(torch), lambda: heads(ember))
    t_ddp = tnn.parallel.DistributedDataParallel(t_model)
    e_ddp = enn.parallel.DistributedDataParallel(e_model)
    t_ddp(torch.tensor(x), True).sum().backward()
    e_ddp(ember.tensor(x), True).sum().backward()
    grads_equal("strict, used", e_model, t_model)
    same_error("unused without find_unused_parameters",
               lambda: e_ddp(ember.tensor(x), True), lambda: t_ddp(torch.tensor(x), True),
               prefix_only=True)


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(3 * 4 * 4, 4))


def training(rank, size):
    torch.manual_seed(rank)
    t_model, e_model = pair(lambda: cnn(torch), lambda: cnn(ember))
    t_ddp = tnn.parallel.DistributedDataParallel(t_model, bucket_cap_mb=0.0002)
    e_ddp = enn.parallel.DistributedDataParallel(e_model, bucket_cap_mb=0.0002)
    t_opt = torch.optim.SGD(t_ddp.parameters(), lr=0.1, momentum=0.9)
    e_opt = ember.optim.SGD(e_ddp.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        x = values(rank, (4, 1, 8, 8), np.float32, seed=step)
        y = np.random.default_rng(step + rank).integers(0, 4, 4)
        for lib, model, opt in ((torch, t_ddp, t_opt), (ember, e_ddp, e_opt)):
            opt.zero_grad()
            lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y)).backward()
            opt.step()
    for (n, ep), tp in zip(e_model.named_parameters(), t_model.parameters()):
        same(f"DDP training {n}", ep.detach().numpy(), tp.detach().numpy(), rtol=1e-5,
             atol=1e-6)


def main():
    port = int(sys.argv[1])
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    td.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                          world_size=size)
    collectives(rank, size)
    errors(rank, size)
    ddp(rank, size)
    training(rank, size)
    dist.barrier()
    print(f"ok parity rank {rank}", flush=True)
    td.barrier()  # both ranks done with gloo before either tears it down
    td.destroy_process_group()
    dist.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    # skip interpreter teardown: torch's gloo threads can abort ("terminate called without
    # an active exception") while C++ statics are destroyed, after every check has passed
    os._exit(0)


if __name__ == "__main__":
    main()
