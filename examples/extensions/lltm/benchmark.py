"""LLTM forward + backward: the C++ extension against the same cell in pure ember.

    python examples/extensions/lltm/benchmark.py [--batch 16 --features 32 --state 128 -r 200]

Both run in this process, alternating, on the same weights and inputs; prints the median time
per call of each and the ratio pure-ember / C++ (> 1: the extension is faster).
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ember  # noqa: E402
from lltm import LLTM, LLTMPython, extension  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--features", type=int, default=32)
    p.add_argument("--state", type=int, default=128)
    p.add_argument("-r", "--repeats", type=int, default=200)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    args = p.parse_args(argv)
    dtype = getattr(ember, args.dtype)

    extension()  # build (or load from the cache) before timing
    ember.manual_seed(0)
    cpp = LLTM(args.features, args.state, dtype=dtype)
    py = LLTMPython(args.features, args.state, dtype=dtype)
    py.load_state_dict(cpp.state_dict())
    x = ember.randn(args.batch, args.features, dtype=dtype)
    h = ember.randn(args.batch, args.state, dtype=dtype)
    c = ember.randn(args.batch, args.state, dtype=dtype)

    def forward(model):
        return lambda: model(x, (h, c))

    def step(model):
        def run():
            new_h, new_c = model(x, (h, c))
            (new_h.sum() + new_c.sum()).backward()
        return run

    # same numbers first
    a, b = cpp(x, (h, c)), py(x, (h, c))
    err = max(float((u - v).abs().max()) for u, v in zip(a, b))

    rows = []
    for label, make in (("forward", forward), ("forward + backward", step)):
        fns = {"C++": make(cpp), "ember": make(py)}
        times = {k: [] for k in fns}
        for fn in fns.values():  # warm up
            fn()
        for _ in range(args.repeats):
            for k, fn in fns.items():
                t0 = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append((label, med["C++"], med["ember"], med["ember"] / med["C++"]))

    print(f"LLTM batch={args.batch} features={args.features} state={args.state} {args.dtype}, "
          f"median of {args.repeats} (max |C++ - ember| = {err:.2g})")
    print(f"{'':20s} {'C++ ext':>12s} {'pure ember':>12s} {'ember/C++':>10s}")
    for label, t_cpp, t_py, ratio in rows:
        print(f"{label:20s} {t_cpp * 1e6:10.1f}us {t_py * 1e6:10.1f}us {ratio:9.2f}x")
    return rows


if __name__ == "__main__":
    main()
