"""F.embedding_bag (forward + backward) side by side with PyTorch, per reduction mode.

    python benchmarks/bench_embedding_bag.py [--rounds N] [--min-round SECONDS]

A recommender-style lookup: 20000 indices into a (1000, 64) float32 table, cut into 512 bags
of random lengths by offsets; each timed call runs ``embedding_bag(...)`` and the backward of
its sum into the table's gradient. Timing is benchmarks/run.py's: a warm-up, then
alternating rounds, medians per call and the ratio ember/torch (lower is better).
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))  # this checkout's ember before an installed one
from run import bench, fmt_ratio, fmt_time  # noqa: E402

import ember  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

MODES = ("sum", "mean", "max")


def make_case(lib, arrays, mode):
    indices, offsets, table = arrays
    weight = lib.tensor(table, requires_grad=True)
    indices, offsets = lib.tensor(indices), lib.tensor(offsets)

    def step():
        weight.grad = None
        out = lib.nn.functional.embedding_bag(indices, weight, offsets, mode=mode)
        out.sum().backward()
        return out, weight.grad
    return step


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min-round", type=float, default=0.2, metavar="SECONDS")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    indices = rng.integers(0, 1000, size=20000)
    cuts = np.sort(rng.choice(np.arange(1, 20000), 511, replace=False))
    arrays = (indices, np.concatenate([[0], cuts]),
              rng.standard_normal((1000, 64)).astype(np.float32))
    print(f"{'embedding_bag 20000 -> 512 bags':<34} {'ember':>10} {'torch':>10} "
          f"{'ember/torch':>12}")
    if torch is not None:
        torch.set_num_threads(2)
    for mode in MODES:
        cases = {"ember": make_case(ember, arrays, mode)}
        if torch is not None:
            cases["torch"] = make_case(torch, arrays, mode)
            for a, b in zip(cases["ember"](), cases["torch"]()):
                np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4,
                                           atol=1e-4)
        medians = bench(cases, args.rounds, args.min_round)
        t = medians.get("torch")
        print(f"{'mode=' + mode:<34} {fmt_time(medians['ember']):>10} {fmt_time(t):>10} "
              f"{fmt_ratio(medians['ember'], t):>12}")


if __name__ == "__main__":
    main()
