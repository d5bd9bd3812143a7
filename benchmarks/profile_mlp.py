"""MLP training step, ember vs PyTorch, for profiling and quick ratios.

784-512-512-10 with ReLU, batch 128, float32, SGD(lr=0.01, momentum=0.9),
cross-entropy; one step = zero_grad + forward + loss + backward + step.

    python benchmarks/profile_mlp.py [--rounds N] [--inner K]   # median times + ratio
    python benchmarks/profile_mlp.py --only ember --steps 300   # one library alone (profilers;
                                                                # best round filters a busy machine)
    python benchmarks/profile_mlp.py --memory ember|torch       # max RSS after 200 steps (MiB)
    python benchmarks/profile_mlp.py --threads 1 --cpu   # one BLAS thread, CPU time (busy machine)
"""
import argparse
import os
import resource
import statistics
import sys
import time

if "--threads" in sys.argv:  # BLAS threads must be fixed before NumPy loads
    _n = sys.argv[sys.argv.index("--threads") + 1]
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = _n

import numpy as np  # noqa: E402


def make_step(lib, weights, x, y):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.from_numpy(w))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    tx, ty = lib.from_numpy(x), lib.from_numpy(y)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(tx), ty)
        loss.backward()
        opt.step()
        return loss
    return step


def data(seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(512, 784), (512,), (512, 512), (512,), (10, 512), (10,)]
    weights = [(rng.standard_normal(s) * 0.03).astype(np.float32) for s in shapes]
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128).astype(np.int64)
    return weights, x, y


def load(name):
    if name == "torch":
        import torch
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", 2)))
        return torch
    import ember
    return ember


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--inner", type=int, default=20)
    ap.add_argument("--only", choices=["ember", "torch"])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--memory", choices=["ember", "torch"])
    ap.add_argument("--threads", type=int, default=2, help="BLAS/torch threads (default 2)")
    ap.add_argument("--cpu", action="store_true",
                    help="time by process CPU time (steadier on a shared machine)")
    args = ap.parse_args()
    weights, x, y = data()
    if args.memory:
        step = make_step(load(args.memory), weights, x, y)
        for _ in range(200):
            step()
        max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{args.memory} max RSS: {max_rss:.1f} MiB")
        return
    if args.only:
        step = make_step(load(args.only), weights, x, y)
        rounds = []
        for _ in range(max(1, args.steps // 5)):  # rounds of 5 steps: min and median
            t0 = time.perf_counter()
            for _ in range(5):
                step()
            rounds.append((time.perf_counter() - t0) / 5)
        print(f"{args.only}: median {statistics.median(rounds) * 1e3:.3f} ms/step, "
              f"best round {min(rounds) * 1e3:.3f} ms/step")
        return
    steps = {name: make_step(load(name), weights, x, y) for name in ("ember", "torch")}
    for fn in steps.values():
        for _ in range(5):
            fn()
    clock = time.process_time if args.cpu else time.perf_counter
    times = {name: [] for name in steps}
    for _ in range(args.rounds):
        for name, fn in steps.items():
            t0 = clock()
            for _ in range(args.inner):
                fn()
            times[name].append((clock() - t0) / args.inner)
    e, t = statistics.median(times["ember"]), statistics.median(times["torch"])
    print(f"ember {e * 1e3:.3f} ms  torch {t * 1e3:.3f} ms  ratio {e / t:.3f}")


if __name__ == "__main__":
    main()
