"""The parity programs (tests/parity/programs/) scaled up, run by PyTorch and by ember.

    python benchmarks/bench_programs.py [--rounds N] [--only dcgan,idioms,resnet_seq2seq]

Each program is copied to a temporary directory with more steps and larger batches, one
thread (``torch.set_num_threads(1)`` at its top, which both libraries take) and
``time.process_time()`` around its training loops; it then runs unmodified as
``python X.py`` (PyTorch) and ``python -m ember.as_torch X.py`` (this checkout's ember), in
fresh processes, alternating, ``--rounds`` times. Printed: each loop's median CPU seconds
and the ratio ember/torch (lower is better). The programs' output is not checked here
(tests/parity/test_as_torch_programs.py does that).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAMS = os.path.join(ROOT, "tests", "parity", "programs")
START = "import time\n_t0 = time.process_time()\n"


def _stop(name):
    return f"print('TIME {name}', time.process_time() - _t0)\n"


# per program: (old, new) replacements, each of which must apply once
SCALING = {
    "dcgan": [
        ("for i in range(5):", START + "for i in range(60):"),
        ("rs.rand(4, 1, 16, 16)", "rs.rand(32, 1, 16, 16)"),
        ("torch.full((4,)", "torch.full((32,)"),
        ("rs.randn(4, nz, 1, 1).astype(\"float32\"))\n    fake",
         "rs.randn(32, nz, 1, 1).astype(\"float32\"))\n    fake"),
        ("with torch.no_grad():\n    print(netG",
         _stop("train") + "with torch.no_grad():\n    print(netG"),
    ],
    "idioms": [
        ("for step in range(3):", START + "for step in range(40):"),
        ("# 2. REINFORCE", _stop("lstm") + "# 2. REINFORCE"),
    ],
    "resnet_seq2seq": [
        ("total_steps=8)", "total_steps=30)"),
        ("for step in range(8):", START + "for step in range(30):"),
        ("rs.randn(8, 3, 8, 8)", "rs.randn(32, 3, 8, 8)"),
        ("size=(8,)))", "size=(32,)))"),
        ("x[micro * 4:(micro + 1) * 4]", "x[micro * 16:(micro + 1) * 16]"),
        ("y[micro * 4:(micro + 1) * 4]", "y[micro * 16:(micro + 1) * 16]"),
        ("net.eval()", _stop("resnet") + "net.eval()"),
        ("size=(3, 6)))", "size=(16, 12)))"),
        ("size=(3, 5)))", "size=(16, 10)))"),
        ("for step in range(4):\n    opt.zero_grad()",
         "_t0 = time.process_time()\nfor step in range(30):\n    opt.zero_grad()"),
    ],
}
APPEND = {"resnet_seq2seq": _stop("seq2seq")}


def scaled_copy(name, folder):
    with open(os.path.join(PROGRAMS, name + ".py")) as f:
        text = f.read()
    for old, new in SCALING[name]:
        if text.count(old) != 1:
            raise SystemExit(f"{name}.py changed: cannot scale it at {old!r}")
        text = text.replace(old, new)
    text = text.replace("import torch\n", "import torch\ntorch.set_num_threads(1)\n", 1)
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(text + APPEND.get(name, ""))
    return path


def run(cmd):
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    return {k: float(v) for k, v in re.findall(r"^TIME (\w+) ([0-9.e-]+)$", out.stdout, re.M)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", default=",".join(SCALING))
    args = p.parse_args()
    names = args.only.split(",")
    folder = tempfile.mkdtemp(prefix="ember_programs_")
    try:
        shutil.copy(os.path.join(PROGRAMS, "common_init.py"), folder)
        paths = {n: scaled_copy(n, folder) for n in names}
        times = {}
        for _ in range(args.rounds):
            for n in names:
                for lib, cmd in (("torch", [sys.executable, paths[n]]),
                                 ("ember", [sys.executable, "-m", "ember.as_torch", paths[n]])):
                    for loop, t in run(cmd).items():
                        times.setdefault((n, loop), {}).setdefault(lib, []).append(t)
    finally:
        shutil.rmtree(folder)
    print(f"{'program / loop (CPU s, 1 thread)':<34} {'ember':>8} {'torch':>8} {'ember/torch':>12}")
    for (n, loop), by_lib in times.items():
        e, t = statistics.median(by_lib["ember"]), statistics.median(by_lib["torch"])
        print(f"{n + ' / ' + loop:<34} {e:>8.3f} {t:>8.3f} {e / t:>12.2f}")


if __name__ == "__main__":
    main()
