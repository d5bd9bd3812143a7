"""Conv2d forward + backward, ember vs PyTorch side by side (the training demo's sizes).

Runs both libraries in one process, alternating rounds, and prints the median
time of each and the ratio ember/torch (lower is better; 1.0 = parity):

* conv1: Conv2d(1, 16, 3, padding=1) on a (64, 1, 8, 8) float32 batch;
* conv2: Conv2d(16, 32, 3, padding=1) on a (64, 16, 8, 8) float32 batch;

each as forward + sum + backward (input, weight and bias gradients).

    python benchmarks/conv.py [--rounds N]
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


def measure(cases, rounds, inner):
    times = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():  # alternate libraries every round
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            times[name].append((time.perf_counter() - t0) / inner)
    return {name: statistics.median(v) for name, v in times.items()}


def report(title, med):
    ratio = med["ember"] / med["torch"]
    print(f"{title:<40} ember {med['ember'] * 1e3:8.3f} ms   torch {med['torch'] * 1e3:8.3f} ms"
          f"   ratio {ratio:5.2f}")
    return ratio


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(2)
    rng = np.random.default_rng(0)
    for cin, cout in ((1, 16), (16, 32)):
        x = rng.standard_normal((64, cin, 8, 8)).astype(np.float32)
        cases = {"ember": make_case(ember, x, cin, cout), "torch": make_case(torch, x, cin, cout)}
        for fn in cases.values():
            fn()  # warm up
        med = measure(cases, args.rounds, inner=10)
        report(f"Conv2d({cin}, {cout}, 3, pad 1) 64x{cin}x8x8 f+b", med)


if __name__ == "__main__":
    main()
