"""ember.func vs torch.func side by side: the Jacobian (jacrev) of a 100->100 MLP.

    python benchmarks/bench_func.py [--rounds N] [--min-round SECONDS]

The MLP is ``tanh(x W1^T + b1) W2^T + b2`` with 100 inputs, 100 hidden units and 100 outputs
(float32, the same weights in both libraries, ``torch.set_num_threads(2)``); the timed call is
``jacrev(mlp)(x)``, a 100x100 Jacobian. Timing is benchmarks/run.py's: a warm-up, then
alternating rounds (ember, torch, torch, ember, ...), medians per call and the ratio
ember/torch (lower is better). Both libraries batch the 100 vector-Jacobian products into
one vmapped backward pass.
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
import ember.func  # noqa: E402,F401

try:
    import torch
    import torch.func  # noqa: F401
except ImportError:
    torch = None

WIDTH = 100


def make_case(lib, arrays):
    w1, b1, w2, b2, x = (lib.tensor(a) for a in arrays)

    def mlp(x):
        return lib.tanh(x @ w1.T + b1) @ w2.T + b2

    jac = lib.func.jacrev(mlp)
    return lambda: jac(x)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min-round", type=float, default=0.2, metavar="SECONDS")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    scale = 1 / np.sqrt(WIDTH)
    arrays = [(rng.standard_normal(s) * scale).astype(np.float32)
              for s in ((WIDTH, WIDTH), (WIDTH,), (WIDTH, WIDTH), (WIDTH,), (WIDTH,))]
    cases = {"ember": make_case(ember, arrays)}
    if torch is not None:
        torch.set_num_threads(2)
        cases["torch"] = make_case(torch, arrays)
        np.testing.assert_allclose(cases["ember"]().numpy(), cases["torch"]().numpy(),
                                   rtol=1e-4, atol=1e-5)
    medians = bench(cases, args.rounds, args.min_round)
    print(f"{'workload':<34} {'ember':>10} {'torch':>10} {'ember/torch':>12}")
    t = medians.get("torch")
    print(f"{'jacrev MLP 100-100-100 tanh f32':<34} {fmt_time(medians['ember']):>10} "
          f"{fmt_time(t):>10} {fmt_ratio(medians['ember'], t):>12}")


if __name__ == "__main__":
    main()
