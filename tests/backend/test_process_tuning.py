"""What importing ember changes in the process: one module (ember/backend/process.py),
one environment variable (EMBER_PROCESS_TUNING) to choose."""
import os
import subprocess
import sys

import pytest

from ember.backend import parallel, process

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_REPORT = r"""
import json, os, sys, warnings
import numpy as np
import ember
from ember.backend import parallel, process
with warnings.catch_warnings(record=True) as caught:
    ember.tensor([1e38], dtype=ember.float32) * 1e10   # overflow inside ember's code
pid = os.fork()
if pid == 0:  # the child: the pool's threads are not the parent's
    out = np.empty(400_000)
    parallel._CHECK_BLAS = False
    ember.set_num_threads(2)
    parallel.parallel_for(out.size, lambda lo, hi: out.__setitem__(slice(lo, hi), 1.0), 1 << 30)
    os._exit(0 if out.sum() == out.size else 3)
_, status = os.waitpid(pid, 0)
print(json.dumps({"applied": process.applied(), "blas": parallel.blas_threads(),
                  "pin": parallel.PIN_THREADS, "warned": len(caught),
                  "child_ok": os.waitstatus_to_exitcode(status) == 0}))
"""


def _report(spec):
    env = {k: v for k, v in os.environ.items() if k not in parallel.BLAS_ENV}
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    if spec is None:
        env.pop(process.ENV_VAR, None)
    else:
        env[process.ENV_VAR] = spec
    done = subprocess.run([sys.executable, "-c", _REPORT], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    import json
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_default_changes():
    report = _report(None)
    applied = report["applied"]
    assert applied["warnings_filter"] and applied["fork_hook"]
    # pinning is on where the native helpers are built
    assert applied["pin_threads"] == report["pin"] == (parallel._native is not None)
    assert report["warned"] == 0  # ember's own overflow is silent, as in PyTorch
    assert report["child_ok"]
    if report["blas"] is not None:
        assert applied["blas_threads"] and report["blas"] == 1


def test_none_changes_nothing():
    report = _report("none")
    assert not any(report["applied"].values())
    assert report["warned"] == 1  # NumPy's overflow warning is not filtered
    assert report["child_ok"]  # no fork hook: the child runs the pass on its own thread


def test_each_change_can_be_turned_off_alone():
    for name in sorted(process.DEFAULT):
        report = _report(f"default,-{name}")
        assert report["applied"][name] is False, name
        others = [n for n in process.DEFAULT - {name} if n != "blas_threads"]
        assert all(report["applied"][n] for n in others if n != "malloc_priming"), name


@pytest.mark.skipif(parallel._native is None, reason="pinning needs ember.backend._pool")
def test_pinning_can_be_turned_off():
    report = _report("default,-pin_threads")
    assert report["applied"]["pin_threads"] is False and report["pin"] is False
    report = _report("none,pin_threads")
    assert report["applied"]["pin_threads"] and report["pin"] is True


def test_requested_reads_left_to_right():
    assert process.requested("") == set()
    assert process.requested("default") == set(process.DEFAULT)
    assert process.requested("none,fork_hook") == {"fork_hook"}
    assert process.requested("default,none") == set()
    assert process.requested("blas_threads,-blas_threads") == set()
    with pytest.warns(RuntimeWarning, match="unknown entry 'nope'"):
        assert process.requested("nope,fork_hook") == {"fork_hook"}


def test_applied_lists_every_change():
    assert set(process.applied()) == set(process.ALL)
