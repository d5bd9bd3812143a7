"""Thread scaling: the main workloads of run.py at 1, 2, ... threads, ember beside torch.

    python benchmarks/bench_threads.py [--threads 1,2,16] [--only mlp,cnn,...] [--rounds N]

For each thread count, ``run.py --threads T`` runs in a fresh process (both libraries set to
T threads: ``torch.set_num_threads`` / ``ember.set_num_threads``), and this script prints one
table: each library's time per step at each count, its speed-up over one thread, and the
ratio ember/torch. The default counts are 1, 2 and every CPU this process may use (when more
than 2). A count above the usable CPUs is skipped (both libraries would time-slice).

>>> _counts("1,2,4", usable=2)
[1, 2]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ONLY = "matmul,mlp,cnn,lstm,transformer"


def _usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _counts(spec, usable):
    """The thread counts asked for (``spec``: "1,2,16"; None: 1, 2 and ``usable``), those
    above ``usable`` dropped."""
    if spec is None:
        wanted = sorted({1, 2, usable})
    else:
        wanted = sorted({int(t) for t in spec.split(",") if t.strip()})
    return [t for t in wanted if 1 <= t <= usable]


def _run(threads, only, rounds, extra):
    """run.py's measurements at ``threads`` threads: {workload: (ember s, torch s)}."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.json")
        cmd = [sys.executable, os.path.join(HERE, "run.py"), "--threads", str(threads),
               "--only", only, "--rounds", str(rounds), "--json", path] + extra
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"run.py --threads {threads} failed:\n{done.stderr[-2000:]}")
        with open(path) as f:
            record = json.load(f)
    return {name: (m["ember_s"], m["torch_s"]) for name, m in record["time"].items()
            if "ember_s" in m and "torch_s" in m}, record.get("machine", [])


def _ms(seconds):
    return f"{seconds * 1e3:.3f}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", default=None,
                   help="comma-separated thread counts (default: 1, 2 and all usable CPUs)")
    p.add_argument("--only", default=DEFAULT_ONLY,
                   help=f"run.py workloads (default {DEFAULT_ONLY})")
    p.add_argument("--rounds", type=int, default=7, help="rounds per workload (default 7)")
    args, extra = p.parse_known_args(argv)
    usable = _usable_cpus()
    counts = _counts(args.threads, usable)
    results, machine = {}, []
    for t in counts:
        print(f"... {t} thread(s)", file=sys.stderr, flush=True)
        results[t], machine = _run(t, args.only, args.rounds, extra)
    command = " ".join(["python benchmarks/bench_threads.py"] + list(argv or sys.argv[1:]))
    print(f"## Thread scaling: `{command}`\n")
    for line in machine[:1]:
        print(f"- {line}")
    print(f"- {usable} usable CPUs; each count in a fresh run.py process, "
          f"{args.rounds} alternating rounds\n")
    head = ["workload"]
    for t in counts:
        head += [f"ember {t}T ms", f"torch {t}T ms", f"ratio {t}T"]
    head += [f"ember speed-up {counts[-1]}T", f"torch speed-up {counts[-1]}T"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    workloads = sorted({w for r in results.values() for w in r},
                       key=lambda w: args.only.split(",").index(w)
                       if w in args.only.split(",") else 99)
    for w in workloads:
        row = [w]
        for t in counts:
            e, tt = results[t].get(w, (None, None))
            row += ["-", "-", "-"] if e is None else [_ms(e), _ms(tt), f"{e / tt:.2f}"]
        first, last = results[counts[0]].get(w), results[counts[-1]].get(w)
        if first and last:
            row += [f"{first[0] / last[0]:.2f}x", f"{first[1] / last[1]:.2f}x"]
        else:
            row += ["-", "-"]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
