"""Smoke run of benchmarks/run.py's workloads: tiny sizes, one call each (not a benchmark).

Runs on ember alone, and on torch too where it is installed; checks that every workload
executes, gives finite numbers, and (with torch) the same numbers on both libraries.
"""
import importlib
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import ember

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(REPO, "benchmarks")
sys.path.insert(0, BENCH)
W = importlib.import_module("_workloads")
run = importlib.import_module("run")

try:
    import torch
except ImportError:
    torch = None


def _libs():
    return {"ember": ember, **({"torch": torch} if torch is not None else {})}


def _cases(name):
    L = _libs()
    make = {
        "matmul": lambda: {n: W.make_matmul(lib, n=8) for n, lib in L.items()},
        "mlp": lambda: W.make_mlp_steps(L, hidden=16, batch=4, in_features=20),
        "cnn": lambda: W.make_cnn_steps(L, channels=2, batch=2, hw=8),
        "function": lambda: {n: W.make_function(lib, n=16) for n, lib in L.items()},
        "chain": lambda: {n: W.make_chain(lib, n=16, ops=8) for n, lib in L.items()},
        "lstm": lambda: W.make_lstm_steps(L, vocab=50, seq=5, batch=3),
        "transformer": lambda: W.make_transformer_steps(L, seq=5, batch=2),
        "lltm": lambda: W.make_lltm_steps(L, batch=3, features=4, state=5),
    }
    return make[name]()


@pytest.mark.parametrize("name", ["matmul", "mlp", "cnn", "function", "chain", "lstm",
                                  "transformer", "lltm"])
def test_workload_runs_finite_and_agrees(name):
    try:
        cases = _cases(name)
    except W.LLTMUnavailable as e:  # lltm without a C++ compiler
        pytest.skip(str(e))
    values = {}
    for lib, fn in cases.items():
        values[lib] = [W.to_float(fn()) for _ in range(2)]
        assert all(math.isfinite(v) for v in values[lib]), (lib, values[lib])
    if "torch" in values:  # same weights and data: same numbers
        np.testing.assert_allclose(values["ember"], values["torch"], rtol=1e-4, atol=1e-5)


def test_training_step_updates_parameters():
    model = W.mlp_model(ember, hidden=8, in_features=6)
    before = [p.detach().numpy().copy() for p in model.parameters()]
    step = W.make_train_step(ember, model, W.batches((4, 6)))
    loss = step()
    assert loss.shape == () and math.isfinite(loss.item())
    assert any(not np.array_equal(b, p.detach().numpy())
               for b, p in zip(before, model.parameters()))


def test_bench_gives_positive_medians(monkeypatch):
    monkeypatch.setattr(run, "SETTLE", 0.0)
    med = run.bench(_cases("function"), rounds=1, min_round=0.0, warmup=1)
    assert set(med) == set(_libs()) and all(v > 0 for v in med.values())


def test_parse_only_expands_groups_and_rejects_unknown():
    args = run.parse(["--quick", "--only", "cnn,memory"])
    assert args.sections == ["cnn", "memory-mlp", "memory-cnn", "memory-lstm",
                             "memory-transformer"] and args.rounds == 5
    assert run.parse(["--only", "scaling-cnn,matmul"]).sections == ["matmul", "scaling-cnn"]
    with pytest.raises(SystemExit):
        run.parse(["--only", "nosuch"])


def test_memory_child_reports_peaks():
    out = subprocess.run([sys.executable, os.path.join(BENCH, "_memchild.py"), "ember", "mlp",
                          "2"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    import json
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["peak_kib"] >= res["base_peak_kib"] > 0 and math.isfinite(res["loss"])


def test_others_share_is_a_fraction():
    meter = run.Others()
    sum(i * i for i in range(20000))  # some CPU time of our own, which it must not count
    share = meter.share()
    assert share is None or 0.0 <= share <= 1.0


def test_device_option_runs_the_training_steps_on_the_device(fake_cuda, capsys):
    # the stand-in cuda module (tests/backend/fake_cuda.py): ember's side only, as torch here
    # has no CUDA; every parameter and batch lives on the device, and the step waits for it
    cases = W.make_mlp_steps({"ember": ember}, hidden=16, batch=4, in_features=20,
                             device="cuda")
    loss = cases["ember"]()
    assert loss.device.type == "cuda" and math.isfinite(loss.item())
    cpu = W.make_mlp_steps({"ember": ember}, hidden=16, batch=4, in_features=20)
    assert loss.item() == pytest.approx(cpu["ember"]().item(), rel=1e-6)
    product = W.make_matmul(ember, n=8, device="cuda")()
    assert product.device.type == "cuda"
    old = run.DEVICE
    try:
        run.main(["--device", "cuda", "--only", "mlp,function", "--rounds", "1",
                  "--min-round", "0.001", "--settle", "0"])
    finally:
        run.DEVICE = old
    out = capsys.readouterr().out
    assert "MLP step 784-512-512-10 b128 (cuda)" in out and "<= 1.5" in out
    assert "MulConstant" not in out  # CPU-only workloads are left out on a device


def test_thread_scaling_counts_and_table(monkeypatch, capsys):
    """bench_threads.py: which counts it runs, and its table from run.py's measurements (a
    stand-in for run.py here: the real one takes minutes)."""
    threads = importlib.import_module("bench_threads")
    assert threads._counts(None, usable=16) == [1, 2, 16]
    assert threads._counts(None, usable=1) == [1]
    assert threads._counts("1,2,4", usable=2) == [1, 2]
    fake = {1: {"mlp": (0.004, 0.005), "cnn": (0.02, 0.02)},
            2: {"mlp": (0.002, 0.004), "cnn": (0.01, 0.01)}}
    monkeypatch.setattr(threads, "_usable_cpus", lambda: 2)
    monkeypatch.setattr(threads, "_run", lambda t, only, rounds, extra: (fake[t], ["CPU: x"]))
    threads.main(["--only", "mlp,cnn"])
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert table[1].split(" | ") == ["| mlp", "4.000", "5.000", "0.80", "2.000", "4.000",
                                     "0.50", "2.00x", "1.25x |"]
    assert table[2].startswith("| cnn | 20.000 | 20.000 | 1.00 |")
