"""DataLoader throughput with worker processes: ember vs torch side by side.

    python benchmarks/bench_dataloader.py [--workers 2] [--samples 20000] [--batch 64]
                                          [--rounds 5]

Workload: one epoch over a TensorDataset of ``--samples`` float32 images (3x32x32) with
int64 labels, batch 64, shuffle=True, ``num_workers`` worker processes (fork), each batch
touched (its sum taken) by the main process. Both libraries iterate the same data in
alternating rounds (a round = one full epoch, a fresh iterator, so worker start-up is
included, as a training loop pays it every epoch); the table shows the median samples per
second of each and the ratio ember/torch (higher is better here: the target is >= 1).
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402
from ember.utils.data import DataLoader, TensorDataset  # noqa: E402

try:
    import torch
    import torch.utils.data as tdata
except ImportError:  # the benchmark compares with torch
    torch = None


def epoch(loader):
    """Iterate one epoch, touching every batch; returns the number of samples seen."""
    seen = 0
    for x, y in loader:
        x.sum()
        seen += y.shape[0]
    return seen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if torch is None:
        print("torch is not installed: nothing to compare with")
        return
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((args.samples, 3, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, args.samples)
    loaders = {
        "ember": DataLoader(TensorDataset(ember.tensor(images), ember.tensor(labels)),
                            batch_size=args.batch, shuffle=True, num_workers=args.workers),
        "torch": tdata.DataLoader(tdata.TensorDataset(torch.tensor(images),
                                                      torch.tensor(labels)),
                                  batch_size=args.batch, shuffle=True,
                                  num_workers=args.workers),
    }
    rates = {name: [] for name in loaders}
    for name, loader in loaders.items():  # warm-up epoch each
        assert epoch(loader) == args.samples
    for r in range(args.rounds):
        order = list(loaders) if r % 2 == 0 else list(reversed(list(loaders)))
        for name in order:
            t0 = time.perf_counter()
            seen = epoch(loaders[name])
            rates[name].append(seen / (time.perf_counter() - t0))
    med = {name: statistics.median(v) for name, v in rates.items()}
    print(f"DataLoader epoch, TensorDataset {args.samples} x (3x32x32 float32, int64), "
          f"batch {args.batch}, {args.workers} workers, shuffle (median of {args.rounds} "
          f"alternating epochs)")
    print("| ember samples/s | torch samples/s | ember/torch (>= 1 target) |")
    print("|---|---|---|")
    print(f"| {med['ember']:.0f} | {med['torch']:.0f} | {med['ember'] / med['torch']:.2f} |")


if __name__ == "__main__":
    main()
