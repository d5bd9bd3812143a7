"""The digits CNN trained with DistributedDataParallel, one process per rank.

    python -m ember.distributed.run -n 2 examples/ddp_digits.py --epochs 3

Each rank loads its share of every epoch (DistributedSampler), DDP averages the gradients,
so every rank holds the same model; rank 0 reports the loss and the test accuracy.
"""
import argparse
import time

import ember as torch
import ember.distributed as dist
import ember.nn.functional as F
from ember.examples.digits import load_digits, make_model
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32, help="per rank")
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = load_digits(args.seed)
    data = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(data, seed=args.seed)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler)
    model = DDP(make_model())
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        model.train()
        total = torch.zeros(2)  # summed loss, batches
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += torch.stack([loss.detach(), torch.tensor(1.0)])
        dist.all_reduce(total)  # every rank's losses
        if rank == 0:
            print(f"epoch {epoch}: mean loss {float(total[0] / total[1]):.4f} "
                  f"over {int(total[1])} batches of {world} ranks")
    model.eval()
    with torch.no_grad():
        acc = float((model(x_test).argmax(1) == y_test).float().mean())
    if rank == 0:
        print(f"{world} ranks, {args.epochs} epochs in {time.perf_counter() - start:.1f} s; "
              f"test accuracy {acc:.2%}")
    dist.destroy_process_group()
    return acc


if __name__ == "__main__":
    main()
