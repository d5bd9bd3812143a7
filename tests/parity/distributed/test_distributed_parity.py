"""ember.distributed and DDP against torch.distributed (gloo) in the same MPI job: every
rank runs both and compares collectives' values, error messages, DDP gradients (unused
parameters, no_sync) and DDP training (worker.py). Skipped without mpi4py/mpiexec."""
import os
import pathlib
import socket
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")
from ember.distributed.run import find_mpiexec  # noqa: E402

if find_mpiexec() is None:
    pytest.skip("no mpiexec (pip install mpich)", allow_module_level=True)

ROOT = pathlib.Path(__file__).resolve().parents[3]
WORKER = pathlib.Path(__file__).with_name("worker.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("ranks", [2, 3])
def test_ember_distributed_matches_torch_distributed(ranks):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    result = subprocess.run([find_mpiexec(), "-n", str(ranks), sys.executable, str(WORKER),
                             str(free_port())], env=env, cwd=ROOT, capture_output=True,
                            text=True, timeout=240)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-5000:]
    for r in range(ranks):
        assert f"ok parity rank {r}" in result.stdout, out[-5000:]
