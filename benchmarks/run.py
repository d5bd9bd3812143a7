"""ember's benchmarks: ember vs PyTorch side by side, one table.

    python benchmarks/run.py [--rounds N] [--quick] [--only NAME[,NAME...]]

Sections (``--only`` takes any of these names, comma-separated):

* ``matmul``   one 1024x1024 float32 matrix product;
* ``mlp``      one training step of a 784-512-512-10 ReLU MLP, batch 128, SGD(lr=0.01,
               momentum=0.9), cross-entropy (zero_grad + forward + loss + backward + step);
* ``cnn``      one training step of the small CNN (conv3x3 1->32, relu, maxpool2, conv3x3
               32->64, relu, maxpool2, flatten, linear 3136->128, relu, linear 128->10), batch
               64 of 1x28x28, same optimizer and loss;
* ``function`` the seeds' custom Function: ``MulConstant.apply(x, 2.0).sum().backward()`` on 16
               elements;
* ``chain``    benchmarks/overhead.py's 200-op element-wise chain, forward + backward, 16
               elements (also reported per op);
* ``lstm``     one training step of a word language model: embedding (10,000 words) ->
               2-layer LSTM (hidden 256) -> linear decoder, seq 35 x batch 20, same optimizer
               and loss;
* ``transformer`` one training step of a 2-layer TransformerEncoder (d_model 256, 4 heads,
               feed-forward 1024, dropout 0, batch first) with a 10-class head on the mean
               over the sequence, batch 16 x seq 64;
* ``lltm``     the LLTM cell of PyTorch's C++-extension tutorial through its C++ extension,
               forward + backward (``(new_h.sum() + new_cell.sum()).backward()``), batch 16,
               32 features, state 128, float32: examples/extensions/lltm/lltm.cpp built by
               ember's cpp_extension (lltm.py's LLTMFunction) and the same file by torch's
               ``torch.utils.cpp_extension.load`` (an equivalent torch Function; built once
               into ~/.cache/ember_benchmarks, about a minute); skipped without a C++ compiler;
* ``memory``   peak RSS of 200 MLP steps, 50 CNN steps, 20 LSTM and 20 Transformer steps,
               each library in its own fresh subprocess (``memory-mlp``, ``memory-cnn``,
               ``memory-lstm``, ``memory-transformer`` for one of them);
* ``import``   ``python -X importtime -c "import LIB"`` in fresh subprocesses, 5 each, with the
               bytecode cache written first (a set PYTHONDONTWRITEBYTECODE is dropped for
               them: it makes every import compile every module, ~3x slower);
* ``scaling``  MLP step time vs hidden width and vs batch, CNN step time vs channels
               (``scaling-width``, ``scaling-batch``, ``scaling-cnn`` for one of them).

Method: both libraries run in this one process (float32, the same initial weights copied from
torch into ember through state_dict/NumPy, the same data, ``torch.set_num_threads(2)``); each
workload is warmed up, then timed in alternating rounds (ember, torch, torch, ember, ...), a
round being enough back-to-back calls to last ``--min-round`` seconds; the table shows the median
per-call time of each library, the ratio ember/torch (lower is better) and the target.
A short sleep (``--settle``) precedes each round, so the worker threads of the library that ran
last (OpenBLAS's spin for ~0.1 s after a call, libgomp's briefly) do not steal the cores from the
next round -- without it torch's matmul measured ~20-40% slower right after an ember round.

The machine is shared: the header prints the load and how busy the CPUs are; re-run when they
are busy (``--wait-quiet 300`` waits for a quiet moment). On a busy machine the 2-thread wall
times swing by several x; ``--threads 1 --clock cpu`` (one thread each, process CPU time) then
measures each library's work steadily -- not the target setting, but a good development gauge.
``--json PATH`` also writes every measurement (per-round times included).

``--device cuda`` runs matmul, mlp, cnn, lstm and transformer with models and data on the GPU
(ember through CuPy, torch when it has CUDA; each call waits for the GPU's work to end), with
a target of 1.5 for each; the CPU-only sections are left out.
"""
import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _workloads as W  # noqa: E402

import numpy as np  # noqa: E402

import ember  # noqa: E402

try:
    import torch
except ImportError:  # ember alone: the torch column stays empty
    torch = None

MAIN = ("matmul", "mlp", "cnn", "function", "chain", "lstm", "transformer", "lltm")
MEMORY = ("memory-mlp", "memory-cnn", "memory-lstm", "memory-transformer")
SCALING = ("scaling-width", "scaling-batch", "scaling-cnn")
GROUPS = {"memory": MEMORY, "scaling": SCALING}
IMPORT = ("import",)
ALL = MAIN + MEMORY + SCALING + IMPORT

TITLES = {
    "matmul": "matmul 1024x1024 f32",
    "mlp": "MLP step 784-512-512-10 b128",
    "cnn": "CNN step C=32 b64 1x28x28",
    "function": "MulConstant fwd+bwd+sum, 16 el.",
    "chain": "200-op chain fwd+bwd, 16 el.",
    "lstm": "LSTM LM step 2x256 seq35 b20",
    "transformer": "TransformerEncoder step d256 h4 s64 b16",
    "lltm": "LLTM C++ ext fwd+bwd b16 f32 s128",
}

MEM_STEPS = {"mlp": 200, "cnn": 50, "lstm": 20, "transformer": 20}


#: workloads that run on a GPU with --device cuda, and their targets there (ember/torch on
#: the same GPU)
DEVICE_MAIN = ("matmul", "mlp", "cnn", "lstm", "transformer")
DEVICE_TARGETS = {"matmul": 1.5, "mlp": 1.5, "cnn": 1.5, "lstm": 1.5, "transformer": 1.5}

DEVICE = None  # --device: where the main table's workloads run (None: the CPU)


def libs():
    out = {"ember": ember}
    if torch is not None and (DEVICE is None or torch.cuda.is_available()):
        out["torch"] = torch  # on a GPU only when this torch has CUDA: else ember alone
    return out


def target_of(name):
    return DEVICE_TARGETS[name] if DEVICE is not None else W.TARGETS[name]


# ---------------------------------------------------------------------------------------------
# timing

CLOCK = time.perf_counter  # --clock cpu: time.process_time (all threads of this process)


RECORD = {}  # --json: every measurement, machine-readable
SETTLE = 0.15  # --settle: seconds slept before each timed round


def bench(cases, rounds, min_round, warmup=3, samples=None):
    """Median seconds per call of each case ({name: fn}), alternating cases every round.

    ``samples``, a dict, receives each case's per-round times (for paired ratios)."""
    names = list(cases)
    per_call = {}
    for name in names:  # warm-up, and an estimate of one call
        fn = cases[name]
        t0 = CLOCK()
        n = 0
        while n < warmup or (CLOCK() - t0 < 0.05 and n < 1000):
            fn()
            n += 1
        per_call[name] = (CLOCK() - t0) / n
    inner = {name: max(1, int(round(min_round / max(per_call[name], 1e-9))))
             for name in names}
    times = {name: [] for name in names}
    gc.collect()
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            fn, k = cases[name], inner[name]
            if SETTLE:
                time.sleep(SETTLE)  # let the other library's idle threads stop spinning
            t0 = CLOCK()
            for _ in range(k):
                fn()
            times[name].append((CLOCK() - t0) / k)
    if samples is not None:
        samples.update(times)
    return {name: statistics.median(v) for name, v in times.items()}


def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.3f} s"


def fmt_ratio(e, t):
    return "-" if t is None or e is None else f"{e / t:.2f}"


class Others:
    """How much of the CPUs other processes used between construction and ``share()``:
    all CPUs' busy time (/proc/stat) minus this process's own CPU time (children included)."""

    def __init__(self):
        self.start = self._snap()

    @staticmethod
    def _snap():
        try:
            with open("/proc/stat") as f:
                v = [int(x) for x in f.readline().split()[1:]]
        except OSError:
            return None
        t = os.times()
        hz = os.sysconf("SC_CLK_TCK")
        own = (t.user + t.system + t.children_user + t.children_system) * hz
        return sum(v), sum(v) - v[3] - v[4], own  # total, busy, own (in clock ticks)

    def share(self):
        end = self._snap()
        if end is None or self.start is None:
            return None
        total, busy, own = (e - s for e, s in zip(end, self.start))
        return max(0.0, (busy - own) / max(total, 1))

    def fmt(self):
        x = self.share()
        return "-" if x is None else f"{x:.0%}"


def paired_ratio(samples):
    """Median over rounds of ember's time / torch's time in the same round: neighbours in
    time, so it cancels load that drifts slower than a round (shown next to the ratio of
    medians; on a quiet machine the two agree)."""
    if "torch" not in samples:
        return "-"
    return f"{statistics.median(e / t for e, t in zip(samples['ember'], samples['torch'])):.2f}"


def verdict(e, t, target):
    if t is None or e is None or target is None:
        return "-"
    return "PASS" if e / t <= target else "FAIL"


def table(header, rows):
    """A Markdown table (readable in a terminal, pasteable into RESULTS.md)."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))
    print(flush=True)


# ---------------------------------------------------------------------------------------------
# main table

def run_main(names, args):
    L = libs()
    rows = []
    for name in names:
        if name == "matmul":
            cases = {n: W.make_matmul(lib, device=DEVICE) for n, lib in L.items()}
        elif name == "mlp":
            cases = W.make_mlp_steps(L, device=DEVICE)
        elif name == "cnn":
            cases = W.make_cnn_steps(L, device=DEVICE)
        elif name == "function":
            cases = {n: W.make_function(lib) for n, lib in L.items()}
        elif name == "chain":
            cases = {n: W.make_chain(lib) for n, lib in L.items()}
        elif name == "lstm":
            cases = W.make_lstm_steps(L, device=DEVICE)
        elif name == "transformer":
            cases = W.make_transformer_steps(L, device=DEVICE)
        elif name == "lltm":
            try:
                cases = W.make_lltm_steps(L)
            except W.LLTMUnavailable as e:
                print(f"  {TITLES[name]}: skipped ({e})", file=sys.stderr, flush=True)
                rows.append([TITLES[name], "-", "-", "-", "-", f"<= {W.TARGETS[name]}",
                             f"skipped: {e}", "-"])
                continue
        samples = {}
        others = Others()
        med = bench(cases, args.rounds, args.min_round, samples=samples)
        busy = others.fmt()
        e, t = med["ember"], med.get("torch")
        target = target_of(name)
        title = TITLES[name] + ("" if DEVICE is None else f" ({DEVICE})")
        RECORD.setdefault("time", {})[name] = {"ember_s": e, "torch_s": t, "target": target,
                                               "others": others.share(), "rounds": samples}
        rows.append([title, fmt_time(e), fmt_time(t), fmt_ratio(e, t), paired_ratio(samples),
                     f"<= {target}", verdict(e, t, target), busy])
        if name == "chain":
            per_op = lambda s: None if s is None else s / W.CHAIN_OPS
            rows.append(["  per op (/200)", fmt_time(per_op(e)), fmt_time(per_op(t)),
                         "", "", "", "", ""])
        print(f"  {title}: ember {fmt_time(e)}, torch {fmt_time(t)}", file=sys.stderr, flush=True)
        del cases
        gc.collect()
    print(f"### Time per call (median of {args.rounds} alternating rounds)\n")
    print("ember/torch = ratio of the medians (what the target applies to); paired = median of "
          "the per-round ratios; others = share of the CPUs other processes used meanwhile "
          "(over ~10% the times are suspect).\n")
    table(["workload", "ember", "torch", "ember/torch", "paired", "target", "result", "others"],
          rows)


# ---------------------------------------------------------------------------------------------
# peak memory, one fresh subprocess per library and workload

def run_child(libname, workload, steps):
    cmd = [sys.executable, os.path.join(HERE, "_memchild.py"), libname, workload, str(steps)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_memory(names, args):
    rows = []
    target = W.TARGETS["memory"]
    for name in names:
        workload = name.split("-", 1)[1]
        steps = MEM_STEPS[workload] if not args.quick else max(5, MEM_STEPS[workload] // 10)
        res = {lib: run_child(lib, workload, steps) for lib in libs()}
        mib = lambda k: k / 1024
        RECORD.setdefault("memory", {})[workload] = dict(res, steps=steps)
        e, t = res["ember"], res.get("torch")
        inc = lambda r: None if r is None else mib(r["peak_kib"] - r["base_peak_kib"])
        ei, ti = inc(e), inc(t)
        rows.append([f"{steps} {workload.upper()} steps",
                     f"{mib(e['peak_kib']):.1f}", "-" if t is None else f"{mib(t['peak_kib']):.1f}",
                     f"{mib(e['base_peak_kib']):.1f}",
                     "-" if t is None else f"{mib(t['base_peak_kib']):.1f}",
                     f"{ei:.1f}", "-" if t is None else f"{ti:.1f}",
                     "-" if t is None else f"{ei / max(ti, 1e-9):.2f}",
                     "-" if t is None else f"{mib(e['peak_kib']) / mib(t['peak_kib']):.2f}",
                     f"<= {target}",
                     "-" if t is None else ("PASS" if ei / max(ti, 1e-9) <= target else "FAIL")])
        print(f"  memory {workload}: ember {ei:.1f} MiB, torch "
              f"{'-' if ti is None else f'{ti:.1f}'} MiB over baseline",
              file=sys.stderr, flush=True)
    print("### Peak memory (max RSS, MiB; each library in a fresh subprocess)\n")
    print("baseline = peak RSS after importing the library and building model, data and "
          "optimizer; training = peak after the steps minus that baseline.\n")
    table(["workload", "ember peak", "torch peak", "ember base", "torch base",
           "ember training", "torch training", "ratio (training)", "ratio (raw peak)",
           "target", "result"], rows)


# ---------------------------------------------------------------------------------------------
# import time

IMPORT_TARGET_S = 0.3


def import_seconds(libname):
    """Seconds ``import libname`` takes in a fresh interpreter (``-X importtime``'s total)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {libname}"],
                         capture_output=True, text=True, env=env, check=True)
    last = [ln for ln in out.stderr.splitlines() if ln.startswith("import time:")][-1]
    return int(last.split("|")[1]) / 1e6


def run_import(repeats=5):
    times = {}
    for name in libs():
        import_seconds(name)  # writes the bytecode cache where it is missing
        times[name] = statistics.median(import_seconds(name) for _ in range(repeats))
        RECORD.setdefault("import", {})[name] = times[name]
    e, t = times["ember"], times.get("torch")
    print(f"### Import time (median of {repeats} fresh interpreters, bytecode cached)\n")
    table(["library", "import", "target", "result"],
          [["ember", f"{e * 1e3:.0f} ms", f"<= {IMPORT_TARGET_S * 1e3:.0f} ms",
            "PASS" if e <= IMPORT_TARGET_S else "FAIL"]]
          + ([] if t is None else [["torch", f"{t * 1e3:.0f} ms", "", ""]]))
    print()


# ---------------------------------------------------------------------------------------------
# scaling

def scaling_sizes(quick):
    widths = [256, 512, 1024, 2048, 4096]
    batches = [32, 128, 512, 1024]
    channels = [16, 32, 64, 128]
    if quick:
        widths, batches, channels = widths[:-2], batches[:-1], channels[:-1]
    return {"scaling-width": widths, "scaling-batch": batches, "scaling-cnn": channels}


def run_scaling(names, args):
    sizes = scaling_sizes(args.quick)
    L = libs()
    rounds = args.scaling_rounds
    for name in names:
        rows = []
        for size in sizes[name]:
            if name == "scaling-width":
                cases, label = W.make_mlp_steps(L, hidden=size, batch=128), f"hidden {size}"
            elif name == "scaling-batch":
                cases, label = W.make_mlp_steps(L, hidden=512, batch=size), f"batch {size}"
            else:
                cases, label = W.make_cnn_steps(L, channels=size), f"C={size}, 2C={2 * size}"
            samples = {}
            others = Others()
            med = bench(cases, rounds, args.min_round, warmup=2, samples=samples)
            busy = others.fmt()
            e, t = med["ember"], med.get("torch")
            RECORD.setdefault(name, {})[size] = {"ember_s": e, "torch_s": t, "rounds": samples,
                                                 "others": others.share()}
            rows.append([label, fmt_time(e), fmt_time(t), fmt_ratio(e, t), paired_ratio(samples),
                         busy])
            print(f"  {name} {label}: ember {fmt_time(e)}, torch {fmt_time(t)}",
                  file=sys.stderr, flush=True)
            del cases
            gc.collect()
        title = {"scaling-width": "MLP step vs hidden width (784-H-H-10, batch 128)",
                 "scaling-batch": "MLP step vs batch (784-512-512-10)",
                 "scaling-cnn": "CNN step vs channels (conv 1->C, C->2C; batch 64 of 1x28x28)"}
        print(f"### Scaling: {title[name]}, median of {rounds} rounds\n")
        table(["size", "ember", "torch", "ember/torch", "paired", "others"], rows)


# ---------------------------------------------------------------------------------------------

def machine():
    """One paragraph describing the machine, for the header and RESULTS.md."""
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        for line in info.splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        flags = set(next((ln.split(":", 1)[1].split() for ln in info.splitlines()
                          if ln.startswith("flags")), []))
        isa = [f for f in ("avx2", "fma", "avx512f") if f in flags]
        if isa:
            cpu += " (" + ", ".join(isa) + ")"
    except OSError:
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # older NumPy
        blas = "?"
    try:
        from threadpoolctl import threadpool_info
        blas += " (" + ", ".join(f"{p['internal_api']} {p.get('architecture', '')} kernels, "
                                 f"{p['num_threads']} threads"
                                 for p in threadpool_info() if p["user_api"] == "blas") + ")"
    except Exception:
        pass
    forced = [f"{v}={os.environ[v]}" for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
              if os.environ.get(v)]
    if forced:  # a kernel set chosen by the environment, not by OpenBLAS for this CPU
        blas += " [set by the environment: " + ", ".join(forced) + "]"
    try:
        load = "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "?"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    tv = (f"torch {torch.__version__} ({torch.get_num_threads()} threads, "
          f"{torch.__config__.parallel_info().splitlines()[-1].split(':')[-1].strip()})"
          if torch is not None else "torch absent")
    return [f"CPU: {cpu}, {cores} cores usable ({os.cpu_count()} online)",
            f"Python {platform.python_version()}, NumPy {np.__version__} (BLAS: {blas}), {tv}, "
            f"ember {ember.get_num_threads()} threads",
            f"load average (1/5/15 min) at start: {load}"]


def cpu_busy(interval=2.0):
    """Fraction of all CPUs busy over ``interval`` seconds (from /proc/stat; None elsewhere).
    This process sleeps meanwhile, so it measures the others."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # total, idle + iowait
    try:
        t0, i0 = snap()
        time.sleep(interval)
        t1, i1 = snap()
    except OSError:
        return None
    return 1.0 - (i1 - i0) / max(t1 - t0, 1)


def wait_quiet(limit, level):
    """Sleep until other processes use less than ``level`` of the CPUs (sampled over 2 s), or
    ``limit`` seconds have passed."""
    t0 = time.time()
    while time.time() - t0 < limit:
        busy = cpu_busy()
        if busy is None or busy < level:
            return
        print(f"  CPUs {busy:.0%} busy with other work: waiting", file=sys.stderr, flush=True)
        time.sleep(5)


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=None,
                   help="timed rounds per workload in the main table (default 21, --quick 5)")
    p.add_argument("--scaling-rounds", type=int, default=None,
                   help="timed rounds per size in the scaling tables (default 7, --quick 3)")
    p.add_argument("--min-round", type=float, default=None,
                   help="seconds a round lasts at least (default 0.1, --quick 0.03)")
    p.add_argument("--quick", action="store_true",
                   help="fewer rounds, fewer memory steps, no largest scaling sizes")
    p.add_argument("--wait-quiet", type=float, default=0, metavar="SECONDS",
                   help="first wait up to SECONDS until other processes keep less than "
                        "--quiet-level of the CPUs busy (the machine is shared)")
    p.add_argument("--quiet-level", type=float, default=0.15)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="wall: time.perf_counter (default); cpu: time.process_time, CPU "
                        "seconds of all this process's threads -- steadier on a busy machine "
                        "for the single-threaded workloads (function, chain), but it counts "
                        "BLAS/OpenMP threads' spinning and not their parallelism")
    p.add_argument("--settle", type=float, default=0.15, metavar="SECONDS",
                   help="sleep before each timed round (default 0.15), so that the other "
                        "library's BLAS/OpenMP worker threads, which spin for a while after "
                        "their last job, do not steal the cores from this round")
    p.add_argument("--json", metavar="PATH", help="also write every measurement to PATH")
    p.add_argument("--threads", type=int, default=2,
                   help="torch.set_num_threads and ember.set_num_threads (default 2); "
                        "--threads 1 --clock cpu measures each library's work, steady even "
                        "on a busy machine (but not the target setting)")
    p.add_argument("--numpy-blas-threads", type=int, default=None, metavar="N",
                   help="NumPy's OpenBLAS threads (default: as ember sets them, 1, its own "
                        "threads splitting the work). ember's thread pool only runs while "
                        "they are 1 (OpenBLAS's idle threads busy-wait after each call): "
                        "--numpy-blas-threads 2 measures OpenBLAS's threads instead")
    p.add_argument("--no-pin-threads", action="store_true",
                   help="leave ember's pool threads unpinned (pinning is on by default: the "
                        "'pin_threads' entry of EMBER_PROCESS_TUNING)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="cuda: the main table's " + ", ".join(DEVICE_MAIN) + " on the GPU "
                        "(ember through CuPy; torch too when it has CUDA), timed to the end of "
                        "the GPU's work; the other sections are CPU-only and left out")
    p.add_argument("--only", default=None,
                   help="comma-separated sections: "
                   + ", ".join(MAIN + ("memory", "scaling", "import") + MEMORY + SCALING))
    args = p.parse_args(argv)
    if args.rounds is None:
        args.rounds = 5 if args.quick else 21
    if args.scaling_rounds is None:
        args.scaling_rounds = 3 if args.quick else 7
    if args.min_round is None:
        args.min_round = 0.03 if args.quick else 0.1
    if args.only:
        chosen = []
        for n in args.only.split(","):
            n = n.strip()
            if n in GROUPS:
                chosen.extend(GROUPS[n])
            elif n in ALL:
                chosen.append(n)
            else:
                p.error(f"unknown section {n!r}; choose from "
                        + ", ".join(MAIN + tuple(GROUPS) + MEMORY + SCALING))
        args.sections = [n for n in ALL if n in chosen]
    else:
        args.sections = list(ALL)
    if args.device != "cpu":
        args.sections = [n for n in args.sections if n in DEVICE_MAIN]
    return args


def main(argv=None):
    global CLOCK, SETTLE, DEVICE
    args = parse(argv)
    SETTLE = args.settle
    if args.device != "cpu":
        if not ember.cuda.is_available():
            raise SystemExit(f"--device {args.device}: ember sees no GPU (it needs CuPy and a "
                             "CUDA device: pip install 'ember[cuda]')")
        DEVICE = args.device
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    if torch is not None:
        torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)  # ember's own thread pool (its large NumPy passes)
    if args.no_pin_threads:
        from ember.backend import parallel
        parallel.PIN_THREADS = False
    # NumPy's OpenBLAS (ember's matmuls): ember runs it on one thread and splits the work on
    # its own threads (ember.backend.parallel.adopt_blas), unless told otherwise here
    if args.numpy_blas_threads is not None:
        try:
            from threadpoolctl import ThreadpoolController
            ctl = ThreadpoolController().select(internal_api="openblas")
            args.numpy_blas_limits = ctl.limit(limits=args.numpy_blas_threads)  # kept alive
        except ImportError:
            print("threadpoolctl absent: NumPy's BLAS threads left as they are", file=sys.stderr)
    if args.wait_quiet > 0:
        wait_quiet(args.wait_quiet, args.quiet_level)
    cmd = "python benchmarks/run.py" + ("" if argv is None and len(sys.argv) < 2
                                        else " " + " ".join(sys.argv[1:] if argv is None else argv))
    print(f"## ember vs PyTorch: `{cmd}`\n")
    for line in machine():
        print(f"- {line}")
    if DEVICE is not None:
        print(f"- GPU: ember on {ember.cuda.get_device_name()}; torch "
              + (f"on {torch.cuda.get_device_name()}" if "torch" in libs() else
                 "absent or without CUDA (ember alone)"))
    busy = cpu_busy(1.0)
    if busy is not None:
        print(f"- other processes kept {busy:.0%} of the CPUs busy at start (sampled 1 s)")
    if args.clock == "cpu":
        print("- clock: process CPU time (time.process_time), not wall time")
    print()
    t0 = time.perf_counter()
    main_names = [n for n in args.sections if n in MAIN]
    if main_names:
        run_main(main_names, args)
    mem_names = [n for n in args.sections if n in MEMORY]
    if mem_names:
        run_memory(mem_names, args)
    scal_names = [n for n in args.sections if n in SCALING]
    if scal_names:
        run_scaling(scal_names, args)
    if "import" in args.sections:
        run_import()
    try:
        load = "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "?"
    print(f"(took {time.perf_counter() - t0:.0f} s; load average at the end: {load})")
    if args.json:
        RECORD.update(command=cmd, machine=machine(), clock=args.clock, threads=args.threads)
        with open(args.json, "w") as f:
            json.dump(RECORD, f, indent=1)


if __name__ == "__main__":
    main()
