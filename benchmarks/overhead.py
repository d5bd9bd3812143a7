"""Per-op overhead and big-matmul throughput, ember vs PyTorch side by side.

Runs both libraries in one process, alternating rounds, and prints the median
time of each and the ratio ember/torch (lower is better; 1.0 = parity):

* chain: 200 element-wise ops on 16-element float32 tensors, forward + backward;
* matmul: one 1024x1024 float32 matrix product (forward only).

    python benchmarks/overhead.py [--rounds N]
"""
import argparse
import statistics
import time

import numpy as np

import ember
from _workloads import chain  # the same 200-op chain that run.py times

try:
    import torch
except ImportError:  # the benchmark needs the oracle
    raise SystemExit("benchmarks/overhead.py needs torch (pip install torch==2.13.0)")


def make_chain_case(lib, data, wdata):
    def run():
        x0 = lib.tensor(data, requires_grad=True)
        w = lib.tensor(wdata, requires_grad=True)
        chain(lib, x0, w)
    return run


def make_matmul_case(lib, a, b):
    ta, tb = lib.from_numpy(a), lib.from_numpy(b)

    def run():
        ta @ tb
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


def report(title, med, target):
    ratio = med["ember"] / med["torch"]
    print(f"{title:<34} ember {med['ember'] * 1e3:9.3f} ms   torch {med['torch'] * 1e3:9.3f} ms"
          f"   ratio {ratio:5.2f}  (target <= {target})")
    return ratio


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(2)
    rng = np.random.default_rng(0)

    data = rng.standard_normal(16).astype(np.float32)
    wdata = rng.standard_normal(16).astype(np.float32)
    chain_cases = {"ember": make_chain_case(ember, data, wdata),
                   "torch": make_chain_case(torch, data, wdata)}
    for fn in chain_cases.values():
        fn()  # warm up
    med = measure(chain_cases, args.rounds, inner=5)
    report("chain 200 ops x16 fwd+bwd", med, 2.0)

    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)
    mm_cases = {"ember": make_matmul_case(ember, a, b), "torch": make_matmul_case(torch, a, b)}
    for fn in mm_cases.values():
        fn()
    med = measure(mm_cases, args.rounds, inner=3)
    report("matmul 1024x1024 float32", med, 1.1)


if __name__ == "__main__":
    main()
