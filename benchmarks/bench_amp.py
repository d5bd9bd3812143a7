"""Mixed-precision training steps: ember.autocast vs torch.autocast, side by side.

    python benchmarks/bench_amp.py [--dtype bfloat16|float16] [--device cpu|cuda]
                                   [--only mlp,cnn,transformer] [--rounds N] [--min-round S]

Each workload is run.py's training step (same models, weights, data, SGD momentum 0.9,
cross-entropy) with forward and loss inside ``autocast(device, dtype)`` and the loss scaled by
a ``GradScaler``, as PyTorch's AMP recipe; the float32 step of each library is timed in the same
rounds, so the table also shows what autocast costs or gains in each. Timing is run.py's
``bench`` (warm-up, alternating rounds, medians); ratios are ember/torch, lower is better.
Before timing, the first step's losses of the two libraries are checked to agree.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402
from benchmarks import _workloads as W  # noqa: E402
from benchmarks.run import bench, fmt_ratio, fmt_time  # noqa: E402

try:
    import torch
except ImportError:  # the benchmark compares with torch; without it there is nothing to do
    torch = None

MAKERS = {"mlp": W.make_mlp_steps, "cnn": W.make_cnn_steps,
          "transformer": W.make_transformer_steps}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16"))
    parser.add_argument("--device", default=None)
    parser.add_argument("--only", default=",".join(MAKERS))
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--min-round", type=float, default=0.1)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    if torch is None:
        print("torch is not installed: nothing to compare with")
        return 0
    torch.set_num_threads(args.threads)
    libs = {"ember": ember, "torch": torch}
    print(f"autocast dtype {args.dtype}, device {args.device or 'cpu'}, "
          f"{args.rounds} rounds; ratio = ember / torch")
    print(f"{'workload':<13}{'ember amp':>11}{'torch amp':>11}{'ratio':>8}"
          f"{'ember f32':>11}{'torch f32':>11}{'ratio':>8}")
    for name in args.only.split(","):
        amp = MAKERS[name](libs, device=args.device, amp_dtype=args.dtype)
        full = MAKERS[name](libs, device=args.device)
        first = {lib: float(step().detach()) for lib, step in amp.items()}
        if abs(first["ember"] - first["torch"]) > 0.05 * abs(first["torch"]) + 0.05:
            raise SystemExit(f"{name}: first losses differ: {first}")
        cases = {f"{lib} amp": step for lib, step in amp.items()}
        cases.update({f"{lib} f32": step for lib, step in full.items()})
        t = bench(cases, args.rounds, args.min_round)
        print(f"{name:<13}{fmt_time(t['ember amp']):>11}{fmt_time(t['torch amp']):>11}"
              f"{fmt_ratio(t['ember amp'], t['torch amp']):>8}"
              f"{fmt_time(t['ember f32']):>11}{fmt_time(t['torch f32']):>11}"
              f"{fmt_ratio(t['ember f32'], t['torch f32']):>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
