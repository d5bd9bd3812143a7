"""The small-CNN training step, ember vs PyTorch side by side, with an optional profile.

conv3x3 1->32 pad 1, relu, maxpool2, conv3x3 32->64 pad 1, relu, maxpool2, flatten,
linear 3136->128, relu, linear 128->10; batch 64 of 1x28x28 float32; SGD momentum;
cross-entropy. Prints the medians (alternating rounds in one process) and the ratio
ember/torch, plus per-stage ember times (forward layers, backward) with ``--stages``.

    python benchmarks/profile_cnn.py [--rounds N] [--profile] [--stages] [--threads T] [--cpu]
"""
import argparse
import statistics
import time

import numpy as np

import ember

try:
    import torch
except ImportError:
    raise SystemExit("benchmarks/profile_cnn.py needs torch (pip install torch==2.13.0)")


def build(lib, x, y):
    nn = lib.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    xt, yt = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        opt.step()
    return step, model, loss_fn, xt, yt


def measure(cases, rounds, inner, clock=time.perf_counter):
    times = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            t0 = clock()
            for _ in range(inner):
                fn()
            times[name].append((clock() - t0) / inner)
    return {name: statistics.median(v) for name, v in times.items()}


def stages(model, loss_fn, xt, yt, reps=20, clock=time.perf_counter):
    """Median ember time of each layer's forward and of the whole backward."""
    fwd = {i: [] for i in range(len(model))}
    bwd = []
    for _ in range(reps):
        h = xt
        for i, layer in enumerate(model):
            t0 = clock()
            h = layer(h)
            fwd[i].append(clock() - t0)
        loss = loss_fn(h, yt)
        t0 = clock()
        loss.backward()
        bwd.append(clock() - t0)
    for i, layer in enumerate(model):
        print(f"  fwd {i:2d} {type(layer).__name__:<10} {statistics.median(fwd[i]) * 1e3:7.3f} ms")
    print(f"  backward      {statistics.median(bwd) * 1e3:7.3f} ms")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--stages", action="store_true")
    parser.add_argument("--threads", type=int, default=2,
                        help="torch and ember threads and (through threadpoolctl, if installed) "
                             "BLAS threads")
    parser.add_argument("--cpu", action="store_true",
                        help="one thread each and CPU time of this thread (time.thread_time): "
                             "the work done, insensitive to other processes on a busy machine")
    args = parser.parse_args()
    clock = time.perf_counter
    if args.cpu:
        args.threads = 1
        clock = time.thread_time
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.threads, user_api="blas")
    except ImportError:
        pass
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    e_step, model, loss_fn, xt, yt = build(ember, x, y)
    t_step = build(torch, x, y)[0]
    cases = {"ember": e_step, "torch": t_step}
    for fn in cases.values():
        fn()
        fn()
    if args.profile:
        from pyinstrument import Profiler
        prof = Profiler(interval=0.0005)
        prof.start()
        for _ in range(40):
            e_step()
        prof.stop()
        print(prof.output_text(unicode=False, color=False, show_all=False))
        return
    if args.stages:
        stages(model, loss_fn, xt, yt, clock=clock)
    med = measure(cases, args.rounds, inner=3, clock=clock)
    print(f"CNN step ({'CPU time, 1 thread' if args.cpu else f'{args.threads} threads'})"
          f"  ember {med['ember'] * 1e3:8.3f} ms   torch {med['torch'] * 1e3:8.3f} ms"
          f"   ratio {med['ember'] / med['torch']:5.2f}")


if __name__ == "__main__":
    main()
