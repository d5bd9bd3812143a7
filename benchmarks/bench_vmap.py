"""Per-sample gradients with vmap: ember.vmap over ember.autograd.grad vs torch.func.

    python benchmarks/bench_vmap.py [--rounds N] [--min-round S] [--batch B]
                                    [--threads T] [--clock {wall,cpu}]

Workload: the gradient of each sample's cross-entropy loss with respect to every weight of a
2-conv CNN (conv3x3 1->8, relu, conv3x3 stride 2 8->16, relu, flatten, linear 16*14*14->10,
inputs 1x28x28), for a batch of 64, computed in one vmapped call: ember runs
``vmap(per_sample_grad)`` where ``per_sample_grad`` calls ``ember.autograd.grad``; torch runs
``torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))``. Both libraries start from
the same weights and data (float32, ``torch.set_num_threads(2)``); the timing is run.py's
(``bench``: warm-up, alternating rounds, medians), and the ratio is ember/torch (lower is
better). Both results are checked against each other before timing.

On the shared machine torch's 2-thread wall times swing by several x; ``--threads 1 --clock
cpu`` (one thread each, process CPU time, as in run.py) gives a steady ratio of the work.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402
import ember.nn.functional as EF  # noqa: E402
from benchmarks import run  # noqa: E402
from benchmarks.run import bench, fmt_ratio, fmt_time, paired_ratio  # noqa: E402

try:
    import torch
    import torch.func
except ImportError:  # the benchmark compares with torch; without it there is nothing to do
    torch = None


def weights(seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(8, 1, 3, 3), (8,), (16, 8, 3, 3), (16,), (10, 16 * 14 * 14), (10,)]
    return [(rng.standard_normal(s) * 0.1).astype(np.float32) for s in shapes]


def net(F, x, k1, b1, k2, b2, w, b):
    h = F.relu(F.conv2d(x.unsqueeze(0), k1, b1, padding=1))
    h = F.relu(F.conv2d(h, k2, b2, stride=2, padding=1))
    return F.linear(h.flatten(1), w, b)


def ember_case(arrays, x, t):
    params = [ember.tensor(a, requires_grad=True) for a in arrays]
    xs, ts = ember.tensor(x), ember.tensor(t)

    def per_sample_grad(xi, ti):
        loss = EF.cross_entropy(net(EF, xi, *params), ti.unsqueeze(0))
        return ember.autograd.grad(loss, params)
    return lambda: ember.vmap(per_sample_grad)(xs, ts)


def torch_case(arrays, x, t):
    params = [torch.tensor(a) for a in arrays]
    xs, ts = torch.tensor(x), torch.tensor(t)
    F = torch.nn.functional

    def loss(ps, xi, ti):
        return F.cross_entropy(net(F, xi, *ps), ti.unsqueeze(0))
    fn = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: fn(params, xs, ts)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-round", type=float, default=0.5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2,
                        help="torch.set_num_threads and ember.set_num_threads (default 2)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall: time.perf_counter (default); cpu: time.process_time, the "
                             "CPU seconds of all this process's threads (steady with "
                             "--threads 1 on a busy machine)")
    args = parser.parse_args()
    if torch is None:
        print("torch is not installed: nothing to compare with")
        return
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    if args.clock == "cpu":
        run.CLOCK = time.process_time  # bench reads run.CLOCK at each call
    rng = np.random.default_rng(1)
    x = rng.standard_normal((args.batch, 1, 28, 28)).astype(np.float32)
    t = rng.integers(0, 10, args.batch)
    arrays = weights()
    cases = {"ember": ember_case(arrays, x, t), "torch": torch_case(arrays, x, t)}
    for got, want in zip(cases["ember"](), cases["torch"]()):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-3, atol=1e-4)
    samples = {}
    med = bench(cases, args.rounds, args.min_round, samples=samples)
    print(f"per-sample gradients, 2-conv CNN, batch {args.batch} "
          f"(median of {args.rounds} alternating rounds, {args.threads} thread(s), "
          f"{args.clock} clock)")
    print("| ember | torch | ember/torch | paired |")
    print("|---|---|---|---|")
    print(f"| {fmt_time(med['ember'])} | {fmt_time(med['torch'])} | "
          f"{fmt_ratio(med['ember'], med['torch'])} | {paired_ratio(samples)} |")


if __name__ == "__main__":
    main()
