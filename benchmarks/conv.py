"""Conv2d forward + backward, ember vs PyTorch side by side (the training demo's sizes).

Runs both libraries in one process, alternating rounds, and prints the median
time of each and the ratio ember/torch (lower is better; 1.0 = parity):

* conv1: Conv2d(1, 16, 3, padding=1) on a (64, 1, 8, 8) float32 batch;
* conv2: Conv2d(16, 32, 3, padding=1) on a (64, 16, 8, 8) float32 batch;

each as forward + sum + backward (input, weight and bias gradients).

    python benchmarks/conv.py [--rounds N] [--cpu] [--big]
"""
import argparse
import statistics
import time

import numpy as np

import ember

try:
    import torch
except ImportError:  # the benchmark needs the oracle
    raise SystemExit("benchmarks/conv.py needs torch (pip install torch==2.13.0)")


def make_case(lib, x, cin, cout):
    conv = lib.nn.Conv2d(cin, cout, 3, padding=1)
    data = lib.tensor(x)

    def run():
        xt = data.detach().requires_grad_()
        conv(xt).sum().backward()
    return run


def measure(cases, rounds, inner, clock=time.perf_counter):
    times = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():  # alternate libraries every round
            t0 = clock()
            for _ in range(inner):
                fn()
            times[name].append((clock() - t0) / inner)
    return {name: statistics.median(v) for name, v in times.items()}


def report(title, med):
    ratio = med["ember"] / med["torch"]
    print(f"{title:<40} ember {med['ember'] * 1e3:8.3f} ms   torch {med['torch'] * 1e3:8.3f} ms"
          f"   ratio {ratio:5.2f}")
    return ratio


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cpu", action="store_true",
                        help="one thread each (BLAS through threadpoolctl) and this thread's CPU "
                             "time: the work done, insensitive to other processes")
    parser.add_argument("--big", action="store_true",
                        help="also the CNN's layers: 64x1x28x28 -> 32 and 64x32x14x14 -> 64")
    args = parser.parse_args()
    clock = time.perf_counter
    torch.set_num_threads(2)
    if args.cpu:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1, user_api="blas")
        torch.set_num_threads(1)
        ember.set_num_threads(1)
        clock = time.thread_time
    rng = np.random.default_rng(0)
    shapes = [(1, 16, 8), (16, 32, 8)]
    if args.big:
        shapes += [(1, 32, 28), (32, 64, 14)]
    for cin, cout, size in shapes:
        x = rng.standard_normal((64, cin, size, size)).astype(np.float32)
        cases = {"ember": make_case(ember, x, cin, cout), "torch": make_case(torch, x, cin, cout)}
        for fn in cases.values():
            fn()  # warm up
        med = measure(cases, args.rounds, inner=10 if size < 16 else 2, clock=clock)
        report(f"Conv2d({cin}, {cout}, 3, pad 1) 64x{cin}x{size}x{size} f+b", med)


if __name__ == "__main__":
    main()
