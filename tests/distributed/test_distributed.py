"""ember.distributed on real MPI jobs: each test starts ``worker.py`` on 2 or 4 ranks
through the launcher (``python -m ember.distributed.run``) with a bounded subprocess
timeout; the worker checks its case on every rank and prints ``ok <case> rank <r>``.
Skipped without mpi4py or an mpiexec."""
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")
from ember.distributed.run import find_mpiexec, launch_command  # noqa: E402

if find_mpiexec() is None:
    pytest.skip("no mpiexec (pip install mpich)", allow_module_level=True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKER = pathlib.Path(__file__).with_name("worker.py")


def run_job(ranks, case, timeout=180):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    for name in ("RANK", "WORLD_SIZE"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "ember.distributed.run", "-n", str(ranks),
                           str(WORKER), case], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def assert_all_ok(result, ranks, case):
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for r in range(ranks):
        assert f"ok {case} rank {r}" in result.stdout, out


@pytest.mark.parametrize("ranks", [2, 4])
def test_collectives_match_their_definitions(ranks):
    assert_all_ok(run_job(ranks, "collectives"), ranks, "collectives")


@pytest.mark.parametrize("ranks", [2, 4])
def test_ddp_training_equals_one_process_on_the_full_batch(ranks):
    assert_all_ok(run_job(ranks, "ddp"), ranks, "ddp")


def test_broadcast_buffers():
    assert_all_ok(run_job(2, "buffers"), 2, "buffers")


def test_no_sync_accumulates_locally():
    assert_all_ok(run_job(2, "no_sync"), 2, "no_sync")


def test_find_unused_parameters_and_the_error_without_it():
    assert_all_ok(run_job(2, "unused"), 2, "unused")


def test_a_raising_rank_fails_the_job_naming_it():
    result = run_job(2, "raise", timeout=60)
    assert result.returncode != 0
    assert "rank 1 raised ValueError: boom on purpose; aborting the job" in result.stderr
    assert "ok raise" not in result.stdout


def test_a_missing_rank_times_the_collective_out():
    result = run_job(2, "timeout", timeout=60)
    assert result.returncode != 0
    assert "all_reduce on rank 0 timed out after 3000 ms" in result.stderr


def test_ddp_digits_example_trains():
    pytest.importorskip("sklearn")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-m", "ember.distributed.run", "-n", "2",
                             str(ROOT / "examples" / "ddp_digits.py"), "--epochs", "1"],
                            env=env, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "epoch 1: mean loss" in result.stdout and "2 ranks, 1 epochs" in result.stdout


def test_launch_command():
    cmd = launch_command(["-n", "3", "--hostfile", "hosts", "train.py", "--lr", "0.1"], "MPX")
    shim = [sys.executable, "-m", "ember.distributed._launched"]
    assert cmd == ["MPX", "-n", "3", "-f", "hosts"] + shim + ["train.py", "--lr", "0.1"]
    assert launch_command(["-m", "pkg.train"], "MPX") == ["MPX", "-n", "1"] + shim + [
        "-m", "pkg.train"]


def test_ranks_get_torchruns_variables(tmp_path):
    script = tmp_path / "show_env.py"
    # one write per line: the ranks share mpiexec's stdout, and print()'s separate writes of
    # each argument could interleave with the other rank's
    script.write_text("import os, sys\n"
                      "line = ' '.join([str(sys.argv[1:]), __name__] + [os.environ[k] for k in "
                      "('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE')])\n"
                      "sys.stdout.write(line + '\\n')\n"
                      "sys.stdout.flush()\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        env.pop(name, None)
    result = subprocess.run([sys.executable, "-m", "ember.distributed.run", "-n", "2",
                             str(script), "--x", "1"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["['--x', '1'] __main__ 0 2 0 2",
                                                  "['--x', '1'] __main__ 1 2 1 2"]
