"""ember.func vs torch.func side by side: Jacobians (jacrev, jacfwd) of a 100->100 MLP.

    python benchmarks/bench_func.py [--rounds N] [--min-round SECONDS]

The MLP is ``tanh(x W1^T + b1) W2^T + b2`` with 100 inputs, 100 hidden units and 100 outputs
(float32, the same weights in both libraries, ``torch.set_num_threads(2)``); the timed calls are
``jacrev(mlp)(x)`` and ``jacfwd(mlp)(x)``, a 100x100 Jacobian, and ``hessian`` of
``mlp(x).sum()`` (jacfwd over jacrev). Timing is benchmarks/run.py's: a warm-up, then
alternating rounds (ember, torch, torch, ember, ...), medians per call and the ratio
ember/torch (lower is better). Both libraries batch jacrev's 100 vector-Jacobian products into
one vmapped backward pass; ember's jacfwd runs one forward-mode pass per input element,
torch's one vmapped pass.
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


WORKLOADS = {
    "jacrev MLP 100-100-100 tanh f32": lambda F, mlp: F.jacrev(mlp),
    "jacfwd MLP 100-100-100 tanh f32": lambda F, mlp: F.jacfwd(mlp),
    "hessian MLP sum 100-100-100 f32": lambda F, mlp: F.hessian(lambda x: mlp(x).sum()),
}


def make_case(lib, arrays, workload):
    w1, b1, w2, b2, x = (lib.tensor(a) for a in arrays)

    def mlp(x):
        return lib.tanh(x @ w1.T + b1) @ w2.T + b2

    transformed = WORKLOADS[workload](lib.func, mlp)
    return lambda: transformed(x)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min-round", type=float, default=0.2, metavar="SECONDS")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    scale = 1 / np.sqrt(WIDTH)
    arrays = [(rng.standard_normal(s) * scale).astype(np.float32)
              for s in ((WIDTH, WIDTH), (WIDTH,), (WIDTH, WIDTH), (WIDTH,), (WIDTH,))]
    print(f"{'workload':<34} {'ember':>10} {'torch':>10} {'ember/torch':>12}")
    if torch is not None:
        torch.set_num_threads(2)
    for workload in WORKLOADS:
        cases = {"ember": make_case(ember, arrays, workload)}
        if torch is not None:
            cases["torch"] = make_case(torch, arrays, workload)
            np.testing.assert_allclose(cases["ember"]().numpy(), cases["torch"]().numpy(),
                                       rtol=1e-4, atol=1e-5)
        medians = bench(cases, args.rounds, args.min_round)
        t = medians.get("torch")
        print(f"{workload:<34} {fmt_time(medians['ember']):>10} {fmt_time(t):>10} "
              f"{fmt_ratio(medians['ember'], t):>12}")

if __name__ == "__main__":
    main()
